/*
 * mt_klua.h - Lua in marktap.ko: kernel.mark handlers at the probe point.
 *
 * A script (struct mt_lua_script) is Lua source sent by a consumer through
 * /dev/marktap (MT_IOC_LUA_LOAD, mt_ioctl.h).  The module compiles it in
 * process context into one Lua state per possible CPU, each over its own
 * arena (mt_lua_alloc.c); running the chunk binds handler functions to
 * kernel markers (probe("fs_open", function(name, format, fd, filename) ...)).
 * Armed (MT_IOC_LUA_START), a hit of a bound marker runs its handler on the
 * hit's CPU, in the probe's context, with preemption off (mt_dispatch.c);
 * a hit arriving while the state it needs is held waits at most stap's
 * MAXTRYLOCK time (never on top of the holder), then is skipped and
 * counted.  Every run is bounded by a budget and in time (mt_lua_cpu.c).
 * Output and errors go to a per-CPU ring the consumer drains
 * (MT_IOC_LUA_OUTPUT).
 */
#ifndef MT_LUA_KMOD_H
#define MT_LUA_KMOD_H

#include <linux/types.h>
#include <linux/bitops.h>

/* mt_lua_alloc.c */
#define MT_ARENA_BINS 128
struct mt_arena {
	char *base;
	size_t size, top;        /* bytes; [top, size) never used yet */
	size_t last;             /* size of the block ending at top (0: none) */
	size_t used, peak;       /* in blocks, headers included */
	u64 failed;              /* allocations refused */
	int *charge;             /* the run budget the bytes are charged to (or NULL) */
	void *bins[MT_ARENA_BINS];
	unsigned long nonempty[BITS_TO_LONGS(MT_ARENA_BINS)];
};
#define MT_ARENA_BYTES_PER_UNIT_SHIFT 8   /* as luaconf.h's MT_LUA_BYTES_PER_UNIT_SHIFT */
int mt_arena_init(struct mt_arena *a, size_t bytes);
void mt_arena_free(struct mt_arena *a);
void *mt_arena_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

struct mt_kmarker;
struct mt_args;
struct mt_lua_script;

/* A script's bindings at most.  A marker armed for a script has a target
 * naming the script and the binding (mt_kmod.h), so the hit finds its
 * handler without a lookup. */
#define MT_LUA_PROBES_MAX 1024

/* What a Lua state keeps in its extra space (lua_getextraspace). */
struct mt_lua_cpu;
struct mt_lua_extra {
	unsigned long cstack_limit;   /* LUAI_MAXCCALLS of our luaconf.h: the lowest
				       * stack pointer a new C level of Lua starts at */
	int budget;               /* luai_budget: units left in the run's slice */
	int depth;                /* stap's function nesting (__mt_nest), 0 at each hit */
	struct mt_lua_cpu *cpu;   /* the state's CPU slot */
};

#ifdef MT_LUA
/* mt_lua_host.c: ioctls of the Lua interface (under mt_lock) */
long mt_lua_ioctl(struct mt_lua_script **sp, struct file *file, unsigned int cmd,
		  unsigned long arg);
/* the owner's file goes away: disarm and free */
void mt_lua_release(struct mt_lua_script **sp);
struct lua_State;
/* execname()'s last string in a state: the name's 16 bytes as read, its
 * Lua string (anchored at registry[ref]; ref 0 until the first miss) */
struct mt_lua_name {
	unsigned long long w[2];
	void *ts;
	int ref;
};
/* lua/mt_lua_one.c: push the string of a task name (16 bytes, NUL within):
 * the one c holds when the 16 bytes are the same, without Lua's interning
 * (its lookup calls strcmp through three calls), else made and kept; 1 */
int mt_lua_push_name(struct lua_State *L, struct mt_lua_name *c, const char *name);
/* lua/mt_lua_one.c: lua_pcall(L, nargs, 0, 0) in one frame, the stack
 * back below the function on success (the error object on top otherwise) */
int mt_lua_pcall_hit(struct lua_State *L, int nargs);
/* lua/mt_lua_one.c: lua_checkstack(L, room) and lua_rawgeti(L,
 * LUA_REGISTRYINDEX, ref) in one call: 0 (nothing pushed) when the stack
 * cannot grow */
int mt_lua_push_handler(struct lua_State *L, int ref, int room);
/* mt_lua_cpu.c: the run's budget slice is spent (luai_budgetspent in
 * lua/mt_lua_one.c): NULL with the next slice given, or the run's error */
const char *mt_lua_budget_refill(struct lua_State *L);
/* mt_lua_run.c: a hit of marker m, bound to script sc's binding
 * `binding`, with its values in a when `values` (mt_dispatch.c;
 * preemption disabled): the binding's native plan or its Lua handler runs */
void mt_lua_fire(struct mt_kmarker *m, struct mt_lua_script *sc, unsigned binding, bool values,
		 struct mt_args *a);
#endif

#endif
