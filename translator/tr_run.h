/*
 * tr_run.h - passes 4 and 5: the module file (-p4, module.c), and the
 * run, live (run.c: begin, timers, process events; marker handlers in the
 * traced processes, procs.c, and in marktap.ko, kmark.c) or over a
 * stored trace (trace.c).
 */
#ifndef TR_RUN_H
#define TR_RUN_H

#include "tr_points.h"

struct mt_lua;
struct mt_lua_host;
struct mt_lua_options;

/* Pass 4: the module file (module.c); one read back: its probes and
 * options into s, its chunk into *chunk (0, or 1 after an error). */
int tr_module_write(struct tr_session *s, const char *path, const char *lua);
int tr_module_read(struct tr_session *s, const char *path, struct tr_buf *chunk);

/* Pass 5 on the running system (run.c) or, with --trace DIR, over a
 * stored trace (trace.c): the exit code. */
int tr_run_live(struct tr_session *s, const char *lua, size_t len);
int tr_trace_run(struct tr_session *s, const char *lua, size_t len);
/* flight.c: -F without -o, stap's in-memory flight recorder.  In the
 * session before its setup, the recorder started: the descriptor the
 * output goes to (-1 after an error, said); keep is a descriptor the
 * recorder closes.  The reconnect hint; `marktap -A PID`: exit code. */
int tr_flight_open(size_t cap, int keep);
void tr_flight_hint(long pid);
int tr_flight_attach(const char *pid);
/* run_probes.c, for both: the points the run cannot serve, each said
 * (procev_why, perf_why, procfs_why: why process events, perf samples
 * or the procfs files are not there, or NULL): their number; begin, end
 * or error probes, by priority. */
int tr_run_check(struct tr_session *s, const char *procev_why, const char *perf_why,
		 const char *procfs_why);
void tr_run_probes(struct mt_lua *mt, struct tr_session *s, enum tr_pkind kind);
/* kread.c: rt.kernel_read and rt.kernel_string, read by marktap.ko for
 * root (begin, end, timer probes), into the runtime table on L's top. */
struct lua_State;
void tr_kread_add(struct lua_State *L);
/* --begin, --end and --tid (trace_window.c): 0, or -1 and *errmsg; a
 * time's trace time given the first event's (none if it has none). */
int tr_trace_time_parse(const char *option, const char *text, struct tr_trace_time *out, char **errmsg);
uint64_t tr_trace_time_at(const struct tr_trace_time *t, uint64_t first, uint64_t none);
int tr_trace_tids_parse(const char *text, struct tr_vec *tids, char **errmsg);
/* The analyses of scripts/ (scripts.c): their directory; NAME's file,
 * or NULL and *errmsg; the listing, one line each (0, or 1). */
const char *tr_script_dir(const struct tr_session *s);
const char *tr_script_find(const struct tr_session *s, const char *name, char **errmsg);
int tr_script_list(const struct tr_session *s, FILE *out);
/* The -D limits into the Lua runtime's options (define.c). */
void tr_define_lua_limits(struct tr_session *s, struct mt_lua_options *o);

/* procev.c: the kernel's process events (fork 'b', exec 'x', exit 'e'),
 * for process.begin/.end without -c or -x. */
struct tr_procev {
	int kind, pid, tgid;
	int parent;     /* a fork's parent process */
};
int tr_procev_open(char *why, size_t n);        /* a socket, or -1 and why */
int tr_procev_read(int fd, struct tr_procev *ev, int max);  /* -1: events lost */
void tr_procev_close(int fd);

/* perfev.c: sampled perf events (timer.profile, perf.type(T)...). */
#define TR_PERF_STACK 32   /* frames kept of each half of a sample's callchain */
struct tr_perf_sample {
	uint64_t ip;
	uint32_t pid, tid, cpu;
	uint32_t nkernel, nuser;        /* the callchain: the kernel's frames, then the user's */
	uint64_t kernel[TR_PERF_STACK], user[TR_PERF_STACK];
};
struct tr_perfev;
struct tr_perfev *tr_perfev_open(const struct tr_resolved *r, long pid, char *why, size_t n);
int tr_perfev_read(struct tr_perfev *pe, struct tr_perf_sample *out, int max, uint64_t *lost);
void tr_perfev_close(struct tr_perfev *pe);

/* procfs.c: the script's procfs files, served by marktap.ko, their
 * probes run here.  NULL when it has none (procfs("__stdin").write is
 * marktap's input); else *why, when the files cannot be made, says why
 * (tr_run_check refuses the points with it). */
struct tr_procfs;
struct tr_procs;
struct tr_kmark;
struct tr_procfs *tr_procfs_open(struct tr_session *s, const char **why);
int tr_procfs_fd(const struct tr_procfs *pf);   /* POLLIN: requests wait; -1: none */
/* The waiting reads and writes answered, their handlers run here with
 * the globals of ss's processes and km's kernel handlers around them. */
void tr_procfs_serve(struct tr_procfs *pf, struct mt_lua *mt, struct tr_procs *ss, struct tr_kmark *km);
void tr_procfs_close(struct tr_procfs *pf);   /* the files go */

/* Handlers of kernel markers (kmark.c): NULL when the script has none. */
struct tr_kmark;
struct tr_kmark *tr_kmark_new(struct tr_session *s);
const struct mt_lua_host *tr_kmark_host(struct tr_kmark *km);
int tr_kmark_start(struct tr_kmark *km, struct mt_lua *mt);
void tr_kmark_poll(struct tr_kmark *km);
/* interrupted (SIGINT, SIGTERM): the last events' handlers run half a
 * second at most, the rest counted in a warning (else 10 s). */
void tr_kmark_stop(struct tr_kmark *km, bool interrupted);
void tr_kmark_free(struct tr_kmark *km);
/* Let the handlers run in marktap.ko (a module with Lua, unless
 * MARKTAP_KERNEL_LUA=0): the chunk goes to the module at start. */
void tr_kmark_in_kernel(struct tr_kmark *km, const char *lua, size_t len, FILE *out);
int tr_kmark_pull(struct tr_kmark *km);    /* the kernel states' changes, here: 1 if any there */
void tr_kmark_push(struct tr_kmark *km);   /* this state's changes, there */
int64_t tr_kmark_in_kernel_errors(struct tr_kmark *km);   /* ERROR lines from there */
bool tr_kmark_failed(struct tr_kmark *km);   /* its errors went past MAXERRORS */
int tr_kmark_begun(struct tr_kmark *km, long target);   /* after begin: handlers in the kernel armed */

/* procs.c: the traced processes that run the marker handlers. */
struct tr_procs;
struct tr_procs *tr_procs_new(struct tr_session *s, struct mt_lua *mt, const char *lua, size_t len,
			    int out_fd);
void tr_procs_set_target(struct tr_procs *ss, long pid);
bool tr_procs_wants_processes(struct tr_procs *ss);
int tr_procs_listen(struct tr_procs *ss);
int tr_procs_attach(struct tr_procs *ss, int pid);
void tr_procs_poll(struct tr_procs *ss, int timeout_ms);
void tr_procs_pull(struct tr_procs *ss);
void tr_procs_push(struct tr_procs *ss);
void tr_procs_quit(struct tr_procs *ss);
int tr_procs_stop_reason(struct tr_procs *ss);
int64_t tr_procs_errors(struct tr_procs *ss);
int64_t tr_procs_skips(struct tr_procs *ss);
/* processes that ended without handing their last results (killed) */
unsigned tr_procs_lost(struct tr_procs *ss);
void tr_procs_free(struct tr_procs *ss);

#endif
