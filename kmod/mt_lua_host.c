/*
 * mt_lua_host.c - Lua scripts in marktap.ko: load, arm, run at the hit.
 *
 * See mt_lua.h for the model.  Life of a script, all under mt_lock except
 * the hits:
 *
 *   MT_IOC_LUA_LOAD   source copied in; per possible CPU: an arena, a Lua
 *                     state, our library (mt_lua_lib.c), the chunk run
 *                     once (it calls probe(marker, fn)); the bindings of
 *                     CPU 0's run are checked against the catalogue
 *   MT_IOC_LUA_START  bound markers armed (id MT_LUA_ID_BASE + binding)
 *   hits              mt_lua_fire on the hit's CPU, preemption off
 *   MT_IOC_LUA_CALL   a global function run in every state (end probes,
 *                     pulling values), hits on that CPU skipped meanwhile
 *   MT_IOC_LUA_OUTPUT a CPU's output drained
 *   MT_IOC_LUA_STOP / close   disarmed; close frees everything
 *
 * Each CPU's state is entered by whoever wins its busy flag (a cmpxchg):
 * the handler of a hit, or the consumer's CALL (process context,
 * interrupts and preemption on).  A hit that finds the state taken waits
 * for it at most stap's MAXTRYLOCK time (1 ms), and not at all when it
 * came on top of the holder (an interrupt, a nested marker) or after
 * another hit gave up on the same hold; then it is skipped and counted.
 *
 * Every run, a hit's or a call's, is bounded twice: by MAXACTION's budget
 * (lvm.c's function entries and backward jumps, the libraries' work in
 * bytes and elements, the allocator's bytes: patches/03-05) and by a time
 * bound, looked at each time a slice of the budget is spent.  A CPU whose
 * handlers take more than STP_OVERLOAD_THRESHOLD of an interval ends the
 * session, as stap's overload guard.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/math64.h>
#include <linux/vmalloc.h>
#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_ioctl.h"
#include "mt_kprobe.h"
/* Lua's headers last: they take the kernel's `current` away (mt_lua_kernel.h) */
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "mt_lua.h"
#include "mt_lua_int.h"

#define current get_current()   /* lua.h took the kernel's away (mt_lua_kernel.h) */

/*
 * C-stack depth (LUAI_MAXCCALLS) while compiling, and in a handler.  Kernel
 * stacks are 16 KiB; frames measured with -fstack-usage (Lua 5.4.4, gcc 12):
 * a nested statement costs the parser ~500 bytes, a callback from C into
 * Lua (string.gsub with a function: 1000 bytes of its own) ~1.3 KiB.  So
 * at most ~10 KiB while loading in an ioctl, ~7 KiB at a hit.
 */
#define CCALLS_LOAD 20
#define CCALLS_HIT 6

static struct mt_lua_script *mt_lua_live;   /* the armed script, for hits */

/* a CPU state's busy flag: who is in it */
enum { BUSY_FREE, BUSY_HIT, BUSY_CONSUMER };
static const struct mt_lua_script default_limits = { .maxaction = 1000 };

struct mt_lua_extra *mt_lua_extra(lua_State *L)
{
	/* the struct lives in the bytes Lua keeps before each state */
	BUILD_BUG_ON(sizeof(struct mt_lua_extra) > LUA_EXTRASPACE);
	return lua_getextraspace(L);
}

/* --- output: a byte ring per CPU, one writer (the busy flag's owner), one reader */

void mt_lua_out(struct mt_lua_cpu *pc, const char *s, size_t n)
{
	u64 tail = smp_load_acquire(&pc->tail);

	if (n > MT_LUA_OUT_SIZE - (pc->head - tail)) {
		pc->lost += n;   /* whole pieces only: lines stay whole */
		return;
	}
	while (n) {
		size_t at = pc->head & (MT_LUA_OUT_SIZE - 1);
		size_t k = min(n, MT_LUA_OUT_SIZE - at);

		memcpy(pc->out + at, s, k);
		s += k;
		n -= k;
		/* release: the bytes before the head that says they are there */
		smp_store_release(&pc->head, pc->head + k);
	}
}

static long drain(struct mt_lua_cpu *pc, char __user *buf, size_t size)
{
	u64 head = smp_load_acquire(&pc->head);
	size_t n = min_t(u64, size, head - pc->tail), done = 0;

	while (done < n) {
		size_t at = (pc->tail + done) & (MT_LUA_OUT_SIZE - 1);
		size_t k = min(n - done, MT_LUA_OUT_SIZE - at);

		if (copy_to_user(buf + done, pc->out + at, k))
			return -EFAULT;
		done += k;
	}
	smp_store_release(&pc->tail, pc->tail + n);
	return (long)n;
}

/* --- running Lua: handlers and calls */

/*
 * MAXACTION's bound on any Lua: the run budget of our lvm.c patch (one
 * unit per function entry and backward jump, the libraries' and the
 * allocator's charges; "MAXACTION exceeded" when spent), and the run's
 * time bound.  Translated scripts count stap's actions themselves and stop
 * first; this stops any other Lua.  The budget is handed out in slices of
 * MT_LUA_SLICE units: the check that finds one spent (luai_budgetspent)
 * looks at the clock, so no run outlives its bound by more than a slice,
 * whatever the charges miss.  A count hook did the budget's work at
 * twice the cost of a handler: every instruction trapped.
 */
#define MT_LUA_SLICE 1024

/*
 * The clock of runs: the TSC where the kernel knows its rate (a hit's or
 * a call's run starts and ends on one CPU, preemption off: rdtsc's cost,
 * not local_clock's, twice a hit), else local_clock; a load, which may
 * move between CPUs, reads local_clock.  Bounds are kept in its units.
 */
static bool mt_lua_tsc;

static void clock_init(void)
{
#ifdef CONFIG_X86
	mt_lua_tsc = boot_cpu_has(X86_FEATURE_TSC) && tsc_khz;
#endif
}

static u64 run_clock(void)
{
	return mt_lua_tsc ? (u64)get_cycles() : local_clock();
}

static u64 ns_to_clock(u64 ns)
{
#ifdef CONFIG_X86
	if (mt_lua_tsc)
		return mul_u64_u32_div(ns, tsc_khz, NSEC_PER_MSEC);
#endif
	return ns;
}

static u64 clock_to_ns(u64 c)
{
#ifdef CONFIG_X86
	if (mt_lua_tsc)
		return mul_u64_u32_div(c, NSEC_PER_MSEC, tsc_khz);
#endif
	return c;
}

static void set_budget_bound(struct mt_lua_cpu *pc, s64 budget, u64 bound, const char *msg)
{
	int slice = (int)min_t(s64, budget, MT_LUA_SLICE);

	pc->extra->budget = slice;
	pc->left = budget - slice;
	pc->bound = bound;
	pc->bound_msg = msg;
	pc->timed_out = false;
	pc->start = pc->may_sleep ? local_clock() : run_clock();
}

/* A call's: the consumer's, or the load's (preemptible, rescheduling at
 * each slice, before any hit can need the state: MT_LUA_LOAD_NS). */
static void set_budget(struct mt_lua_cpu *pc, s64 budget)
{
	const struct mt_lua_script *sc = pc->script;

	if (pc->may_sleep)
		set_budget_bound(pc, budget, MT_LUA_LOAD_NS, " (the load ran past its time bound, 10 s)");
	else
		set_budget_bound(pc, budget, sc->call_clk, sc->call_msg);
}

const char *mt_lua_budget_refill(lua_State *L)
{
	struct mt_lua_extra *x = mt_lua_extra(L);
	struct mt_lua_cpu *pc = x->cpu;
	s64 left = pc->left + x->budget;   /* budget < 0: the slice overdrawn */
	int slice;

	/* spent stays spent: every later check fails too, a pcall of the
	 * script's own catches nothing it could go on with.  The message
	 * stays short, below LUAI_MAXSHORTLEN with its place: a long string
	 * would be charged, and fail again while it is being made.  report()
	 * says which bound it was. */
	x->budget = 0;
	pc->left = -1;
	if ((pc->may_sleep ? local_clock() : run_clock()) - pc->start > pc->bound)
		pc->timed_out = true;
	if (pc->timed_out || left < 0)
		return "MAXACTION exceeded";
	if (pc->may_sleep)
		cond_resched();
	slice = (int)min_t(s64, left, MT_LUA_SLICE);
	x->budget = slice;
	pc->left = left - slice;
	return NULL;
}

static int tostring_protected(lua_State *L)
{
	luaL_tolstring(L, 1, NULL);
	return 1;
}

/* The error of a failed run as stap prints it; the session then stops. */
static void report(struct mt_lua_script *sc, struct mt_lua_cpu *pc, lua_State *L)
{
	const char *msg = NULL, *bound = pc->timed_out ? pc->bound_msg : NULL;
	char line[400];
	int n;

	if (lua_type(L, -1) == LUA_TSTRING) {
		msg = lua_tostring(L, -1);
	} else if (lua_type(L, -1) == LUA_TTABLE) {
		/* an error object (mt_lua_rt.lua): its __tostring, protected
		 * and on a small budget of its own (the run's may be spent) */
		set_budget(pc, 64);
		lua_pushcfunction(L, tostring_protected);
		lua_insert(L, -2);
		if (lua_pcall(L, 1, 1, 0) == LUA_OK)
			msg = lua_tostring(L, -1);
	}
	if (!msg)
		msg = "(error object is not a string)";
	if (!bound || !strstr(msg, "MAXACTION exceeded"))
		bound = "";
	n = scnprintf(line, sizeof(line), "ERROR: %s%s\n", msg, bound);
	mt_lua_out(pc, line, n);
	pc->errors++;
	/* stap's MAXERRORS: the session ends at the error past it (0: the first) */
	if ((u32)atomic_inc_return(&sc->nerrors) > sc->maxerrors)
		WRITE_ONCE(sc->stopping, 1);
}

/*
 * Call the handler under `nargs` arguments on L's stack, with the budget
 * and bound the caller gave before pushing them (a long string pushed
 * charges the budget: spent, it would raise an error outside any
 * protected call).  The caller owns pc (its busy flag).  The run's time
 * in *ns.
 */
static int run(struct mt_lua_script *sc, struct mt_lua_cpu *pc, int nargs, u64 *ns)
{
	lua_State *L = pc->L;
	int rc;

	rc = mt_lua_pcall_hit(L, nargs);
	*ns = run_clock() - pc->start;
	if (*ns > pc->max_run_clk)
		pc->max_run_clk = *ns;
	if (rc != LUA_OK) {
		report(sc, pc, L);
		lua_settop(L, 0);
	}
	return rc;
}

/* Loading, binding and marktap's calls (begin, timers, end, deltas): 16 hits' worth. */
static s64 call_budget(const struct mt_lua_script *sc)
{
	return (s64)sc->maxaction * MT_LUA_INSNS_PER_ACTION * 16;
}

/* The handler's first n arguments: the marker's name and format (made
 * once, at binding), then its values. */
static void push_args(lua_State *L, const int sref[2], const struct mt_kmarker *m,
		      const struct mt_args *a, int n)
{
	unsigned i;

	if (n <= 0)
		return;
	lua_rawgeti(L, LUA_REGISTRYINDEX, sref[0]);
	if (n == 1)
		return;
	lua_rawgeti(L, LUA_REGISTRYINDEX, sref[1]);
	for (i = 0; i < m->fmt.nfields && (int)i < n - 2; i++) {
		const struct mt_field *fld = &m->fmt.fields[i];

		if (fld->store == MT_ST_STRING)
			lua_pushlstring(L, a->v[i].str, strnlen(a->v[i].str, a->slen[i] ? a->slen[i] - 1 : 0));
		else
			lua_pushinteger(L, (lua_Integer)a->v[i].u);
	}
}

/* CPUs inside a handler: a hit there is nested (an interrupt, a marker
 * in the handler's path) and must not wait for any state */
static DEFINE_PER_CPU(int, mt_lua_holding);

/*
 * stap's overload guard, per CPU: the handlers' time in the current
 * interval (a run counted at most its time bound: under emulation a vCPU
 * descheduled in a handler would count the other's time too).
 */
struct mt_lua_overload {
	u64 base, sum;
};
static DEFINE_PER_CPU(struct mt_lua_overload, mt_lua_overload);

/*
 * Own pc for a hit.  Free: taken.  Held by another hit: waited for at
 * most sc->wait_clk (stap's MAXTRYLOCK); held by marktap's call (a pull
 * of the values, bounded by sc->call_clk), at most that: a hit is not
 * lost because marktap read the globals.  Either holder runs elsewhere
 * within its own bound.  Not waited for at all in an NMI, inside a
 * handler of this CPU (the holder may be waiting for ours), on top of the
 * holder (current is its task: it cannot go on while we wait), or after
 * a hit gave up on this hold.  Else skipped and counted.
 */
static bool take(struct mt_lua_script *sc, struct mt_lua_cpu *pc)
{
	u64 since = 0;

	for (;;) {
		u64 now;
		int owner = atomic_cmpxchg(&pc->busy, BUSY_FREE, BUSY_HIT);

		if (owner == BUSY_FREE) {
			__this_cpu_inc(mt_lua_holding);
			WRITE_ONCE(pc->holder, current);
			return true;
		}
		if (in_nmi() || (owner == BUSY_HIT && __this_cpu_read(mt_lua_holding)) ||
		    READ_ONCE(pc->holder) == current || READ_ONCE(pc->contended))
			break;
		now = run_clock();
		if (!since) {
			since = now;
		} else if (now - since > (owner == BUSY_CONSUMER ? sc->call_clk : sc->wait_clk)) {
			WRITE_ONCE(pc->contended, true);
			break;
		}
		cpu_relax();
	}
	atomic64_inc(&pc->skipped);
	return false;
}

static void release(struct mt_lua_cpu *pc)
{
	WRITE_ONCE(pc->holder, NULL);
	WRITE_ONCE(pc->contended, false);
	/* release: the state's changes before the flag that frees it (the
	 * next owner's cmpxchg acquires) */
	atomic_set_release(&pc->busy, BUSY_FREE);
}

static void give(struct mt_lua_cpu *pc)
{
	__this_cpu_dec(mt_lua_holding);
	release(pc);
}

/* stap's "probe overhead exceeded threshold": the session ends */
static void overload(struct mt_lua_script *sc, struct mt_lua_cpu *pc, const struct mt_lua_overload *o,
		     u64 now)
{
	char line[200];
	int n = scnprintf(line, sizeof(line), "ERROR: probe overhead exceeded threshold: handlers took "
			  "%llu ms of the last %llu ms on CPU %d (STP_OVERLOAD_THRESHOLD %llu ns per "
			  "STP_OVERLOAD_INTERVAL %llu ns)\n", clock_to_ns(o->sum) / NSEC_PER_MSEC,
			  clock_to_ns(now - o->base) / NSEC_PER_MSEC, raw_smp_processor_id(),
			  clock_to_ns(sc->overload_threshold_clk), clock_to_ns(sc->overload_interval_clk));

	mt_lua_out(pc, line, n);
	pc->errors++;
	atomic_inc(&sc->nerrors);
	WRITE_ONCE(sc->stopping, 1);
}

static void account(struct mt_lua_script *sc, struct mt_lua_cpu *pc, u64 ns)
{
	struct mt_lua_overload *o = this_cpu_ptr(&mt_lua_overload);
	u64 now = pc->start + ns;

	if (now - o->base > sc->overload_interval_clk) {
		o->base = now;
		o->sum = 0;
	}
	o->sum += min(ns, sc->run_clk);
	if (o->sum > sc->overload_threshold_clk && !sc->no_overload)
		overload(sc, pc, o, now);
}

void mt_lua_fire(struct mt_kmarker *m, int binding, struct mt_args *a)
{
	struct mt_lua_script *sc = smp_load_acquire(&mt_lua_live);
	struct mt_lua_cpu *pc;
	lua_State *L;

	if (!sc || (unsigned)binding >= sc->nprobes || READ_ONCE(sc->stopping))
		return;
	/* native plans and the Lua of handlers that only add (percpu) in
	 * this CPU's state, lock-free; any other in the shared state */
	pc = sc->cpu[sc->nat[binding] || sc->percpu[binding] ? smp_processor_id() : sc->first];
	if (!pc || !take(sc, pc))
		return;
	L = pc->L;
	pc->extra->maxccalls = CCALLS_HIT;
	pc->may_sleep = false;
	set_budget_bound(pc, (s64)sc->maxaction * MT_LUA_INSNS_PER_ACTION, sc->run_clk, sc->run_msg);
	if (m->lua_values && mt_kmarker_has_kaddr(m) && sc->hide_kaddr)
		mt_hide_kaddr(m, a);
	if (sc->nat[binding] && mt_lua_nat_run(sc, pc, sc->nat[binding], m, a)) {
		give(pc);
		return;
	}
	if (mt_lua_push_handler(L, pc->ref[binding], (int)m->fmt.nfields + 4)) {
		int n = (int)m->fmt.nfields + 2;
		u64 ns;

		if (sc->nparams[binding] >= 0 && sc->nparams[binding] < n)
			n = sc->nparams[binding];
		/* stap's nesting starts at 0 at each hit (an error caught by
		 * try/catch may have left it higher) */
		pc->extra->depth = 0;
		push_args(L, pc->sref[binding], m, a, n);
		run(sc, pc, n, &ns);
		pc->runs++;
		account(sc, pc, ns);
	}
	give(pc);
}

/*
 * Own pc from process context (an ioctl): wait out the holder, a handler
 * (bounded by its time) or nothing else (the consumer's calls are
 * serialised by mt_lock), rescheduling meanwhile.  While the consumer
 * runs Lua interrupts stay on (a hit on top of it does not wait: take)
 * and preemption is off, as in a handler: no other task runs on its CPU
 * while hits elsewhere wait for the state, and the call's time bound
 * (MT_LUA_CALL_RUNS handlers') bounds the hold.
 */
static void enter(struct mt_lua_cpu *pc)
{
	for (;;) {
		preempt_disable();
		if (atomic_cmpxchg(&pc->busy, BUSY_FREE, BUSY_CONSUMER) == BUSY_FREE)
			break;
		preempt_enable();
		cond_resched();
	}
	WRITE_ONCE(pc->holder, current);
	pc->may_sleep = false;
}

static void leave(struct mt_lua_cpu *pc)
{
	release(pc);
	preempt_enable();
}

/* --- loading */

static void free_cpu(struct mt_lua_cpu *pc)
{
	if (!pc)
		return;
	if (pc->L) {
		/* lua_close runs the script's __gc finalizers: bounded too
		 * (process context: the load's clock) */
		pc->may_sleep = true;
		set_budget_bound(pc, (s64)(pc->script ? pc->script : &default_limits)->maxaction *
				 MT_LUA_INSNS_PER_ACTION, MT_LUA_RUN_US * NSEC_PER_USEC, "");
		pc->extra->maxccalls = CCALLS_HIT;
		lua_close(pc->L);
	}
	mt_arena_free(&pc->arena);
	vfree(pc->out);
	kfree(pc);
}

static void free_script(struct mt_lua_script *sc)
{
	unsigned i;

	if (!sc)
		return;
	/* kernel function probes first: unregistering waits for their
	 * handlers (a failed bind leaves some past nprobes) */
	for (i = 0; i < MT_LUA_PROBES_MAX; i++)
		if (mt_kprobe_owns(sc->probes[i]))
			mt_kprobe_put(sc->probes[i]);
	for (i = 0; i < nr_cpu_ids; i++)
		free_cpu(sc->cpu[i]);
	kfree(sc->cpu);
	mt_lua_nat_free(sc);
	kfree(sc);
}

/* The message of a failed load, prefixed with the CPU when it is not the first. */
static void load_error(struct mt_ioc_lua_load *ld, unsigned cpu, const char *what, const char *msg)
{
	scnprintf(ld->error, sizeof(ld->error), "%s%s%s", what, msg ? msg : "", cpu ? " (on a later CPU)" : "");
}

/* A state for one CPU, its chunk run: bindings in the registry table "probes". */
static int load_cpu(struct mt_lua_script *sc, unsigned cpu, const char *src, size_t len,
		    struct mt_ioc_lua_load *ld)
{
	struct mt_lua_cpu *pc = kzalloc(sizeof(*pc), GFP_KERNEL);
	lua_State *L;
	int rc;

	if (!pc)
		return -ENOMEM;
	sc->cpu[cpu] = pc;
	pc->cpu = cpu;
	pc->out = vmalloc(MT_LUA_OUT_SIZE);
	if (!pc->out || mt_arena_init(&pc->arena, (size_t)sc->arena_kib << 10))
		return -ENOMEM;
	L = lua_newstate(mt_arena_lua_alloc, &pc->arena);
	if (!L) {
		load_error(ld, cpu, "cannot create a Lua state: arena too small", NULL);
		return -ENOMEM;
	}
	pc->L = L;
	pc->extra = mt_lua_extra(L);
	memset(pc->extra, 0, sizeof(*pc->extra));
	pc->extra->maxccalls = CCALLS_LOAD;
	pc->extra->cpu = pc;
	pc->arena.charge = &pc->extra->budget;
	pc->script = sc;
	pc->may_sleep = true;   /* an ioctl under mt_lock (a mutex) */
	set_budget(pc, call_budget(sc));   /* the libraries' Lua runs too */
	if (mt_lua_open_libs(L) != LUA_OK) {
		load_error(ld, cpu, "cannot set up the Lua state: ", lua_tostring(L, -1));
		return -ENOMEM;
	}
	rc = luaL_loadbufferx(L, src, len, "=script", "t");
	if (rc != LUA_OK) {
		load_error(ld, cpu, "", lua_tostring(L, -1));
		return -EINVAL;
	}
	set_budget(pc, call_budget(sc));
	rc = lua_pcall(L, 0, 0, 0);
	pc->max_call_ns = local_clock() - pc->start;   /* ns: the load's clock */
	if (rc != LUA_OK) {
		load_error(ld, cpu, "", lua_tostring(L, -1));
		return -EINVAL;
	}
	lua_settop(L, 0);
	return 0;
}

/*
 * Under lua_pcall (a full arena is an error, not a panic): in the state of
 * pc, the registry references a hit uses.
 */
static int take_refs(lua_State *L)
{
	struct mt_lua_cpu *pc = lua_touserdata(L, 1);
	struct mt_lua_script *sc = pc->script;
	unsigned i;

	for (i = 0; i < sc->nprobes; i++) {
		pc->ref[i] = mt_lua_probe_ref(L, i);
		if (pc->ref[i] == LUA_NOREF)
			return luaL_error(L, "no handler for %s", sc->probes[i]->name);
		lua_pushstring(L, sc->probes[i]->name);
		pc->sref[i][0] = luaL_ref(L, LUA_REGISTRYINDEX);
		lua_pushstring(L, sc->probes[i]->format);
		pc->sref[i][1] = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	/* where each handler's Lua runs (mt_lua_rt.lua's __mt_percpu; a
	 * script loaded by klua has none: every handler in the shared state) */
	if (pc->cpu == sc->first && lua_getglobal(L, "__mt_percpu") == LUA_TTABLE)
		for (i = 0; i < sc->nprobes; i++) {
			lua_getfield(L, -1, sc->probes[i]->name);
			sc->percpu[i] = lua_toboolean(L, -1);
			lua_pop(L, 1);
		}
	/* the parameters each handler reads (__mt_params: a count, false
	 * for all; klua's scripts have no table: all) */
	if (pc->cpu == sc->first && lua_getglobal(L, "__mt_params") == LUA_TTABLE)
		for (i = 0; i < sc->nprobes; i++) {
			lua_getfield(L, -1, sc->probes[i]->name);
			if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0)
				sc->nparams[i] = (int)min_t(lua_Integer, lua_tointeger(L, -1),
							    2 + MT_FIELDS_MAX);
			lua_pop(L, 1);
		}
	return 0;
}

/* The bindings of CPU 0's state: markers found, handler references taken in every state. */
static int bind(struct mt_lua_script *sc, struct mt_ioc_lua_load *ld)
{
	unsigned i, cpu, n;
	lua_State *L0 = sc->cpu[sc->first]->L;

	n = mt_lua_probe_count(L0);
	if (n > MT_LUA_PROBES_MAX) {
		load_error(ld, 0, "too many probed markers", NULL);
		return -E2BIG;
	}
	for (i = 0; i < n; i++) {
		const char *name = mt_lua_probe_name(L0, i);
		struct mt_kmarker *m = NULL;
		unsigned k;

		for (k = 0; k < mt_catalog_size; k++)
			if (!strcmp(mt_catalog[k]->name, name))
				m = mt_catalog[k];
		if (!m && mt_kprobe_named(name)) {
			/* kernel.function and kprobe: probes anywhere, root's */
			if (!sc->may_read_memory) {
				scnprintf(ld->error, sizeof(ld->error), "%s: kernel function probes need "
					  "CAP_SYS_ADMIN (the script was loaded without it)", name);
				return -EPERM;
			}
			m = mt_kprobe_get(name, ld->error, sizeof(ld->error));
			if (!m)
				return -ENOENT;
			sc->probes[i] = m;
			continue;
		}
		if (!m) {
			scnprintf(ld->error, sizeof(ld->error), "no kernel marker \"%s\"", name);
			return -ENOENT;
		}
		if (!mt_kmarker_available(m)) {
			char why[200];

			mt_kmarker_why(m, why, sizeof(why));
			scnprintf(ld->error, sizeof(ld->error), "kernel marker %s is unavailable: %s", name, why);
			return -ENOENT;
		}
		sc->probes[i] = m;
	}
	sc->nprobes = n;
	for_each_possible_cpu(cpu) {
		struct mt_lua_cpu *pc = sc->cpu[cpu];

		if (mt_lua_probe_count(pc->L) != n)
			return -EINVAL;  /* the chunk bound differently on another CPU */
		set_budget(pc, call_budget(sc));   /* and for the plans' lookups */
		lua_settop(pc->L, 0);
		lua_pushcfunction(pc->L, take_refs);
		lua_pushlightuserdata(pc->L, pc);
		if (lua_pcall(pc->L, 1, 0, 0) != LUA_OK) {
			load_error(ld, cpu, "binding: ", lua_tostring(pc->L, -1));
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The time bounds asked for (0: the default).  Without CAP_SYS_ADMIN a
 * hit holds its CPU with preemption off for at most MT_LUA_RUN_US, waits
 * at most that for a state, and the overload guard stays, at most half a
 * CPU in intervals of at most a second.
 */
static void set_time_bounds(struct mt_lua_script *sc, const struct mt_ioc_lua_load *ld)
{
	u32 run_us = ld->max_run_us ? ld->max_run_us : MT_LUA_RUN_US;
	u32 wait_us = ld->wait_us ? ld->wait_us : MT_LUA_WAIT_US;
	u64 interval = ld->overload_interval_ns ? ld->overload_interval_ns : MT_LUA_OVERLOAD_INTERVAL_NS;
	u64 threshold = ld->overload_threshold_ns ? ld->overload_threshold_ns : MT_LUA_OVERLOAD_THRESHOLD_NS;

	run_us = min_t(u32, run_us, sc->may_read_memory ? MT_LUA_ROOT_RUN_US : MT_LUA_RUN_US);
	wait_us = min(wait_us, run_us);
	sc->no_overload = sc->may_read_memory && (ld->flags & MT_LUA_LOAD_NO_OVERLOAD);
	if (!sc->may_read_memory) {
		interval = min_t(u64, interval, MT_LUA_OVERLOAD_INTERVAL_NS);
		threshold = min(threshold, interval / 2);
	}
	clock_init();
	sc->run_clk = ns_to_clock((u64)run_us * NSEC_PER_USEC);
	sc->call_clk = sc->run_clk * MT_LUA_CALL_RUNS;
	sc->wait_clk = ns_to_clock((u64)wait_us * NSEC_PER_USEC);
	sc->overload_threshold_clk = ns_to_clock(min(threshold, interval));
	sc->overload_interval_clk = ns_to_clock(interval);
	scnprintf(sc->run_msg, sizeof(sc->run_msg), " (the handler ran past its time bound, "
		  "%u us: MAXACTION_US)", run_us);
	scnprintf(sc->call_msg, sizeof(sc->call_msg), " (the call ran past its time bound, "
		  "%llu ms: %d x MAXACTION_US)", (u64)run_us * MT_LUA_CALL_RUNS / USEC_PER_MSEC,
		  MT_LUA_CALL_RUNS);
}

static long lua_load_ioctl(struct mt_lua_script **sp, struct file *file,
			   struct mt_ioc_lua_load __user *arg)
{
	struct mt_ioc_lua_load *ld;
	struct mt_lua_script *sc = NULL;
	char *src = NULL;
	unsigned cpu, i;
	long rc;

	if (*sp)
		return -EBUSY;
	ld = kzalloc(sizeof(*ld), GFP_KERNEL);
	if (!ld)
		return -ENOMEM;
	rc = -EFAULT;
	if (copy_from_user(ld, arg, sizeof(*ld)))
		goto out;
	memset(ld->error, 0, sizeof(ld->error));
	rc = -EINVAL;
	if (ld->source_len == 0 || ld->source_len > MT_LUA_SOURCE_MAX || ld->reserved)
		goto out;
	if (ld->overload_threshold_ns > ld->overload_interval_ns && ld->overload_interval_ns)
		goto out;
	if (ld->arena_kib == 0)
		ld->arena_kib = 4096;
	if (ld->arena_kib < 64 || ld->arena_kib > MT_LUA_ARENA_MAX_KIB)
		goto out;
	if ((u64)ld->arena_kib * num_possible_cpus() > MT_LUA_ARENAS_MAX_KIB) {
		scnprintf(ld->error, sizeof(ld->error), "%u KiB per CPU for %u CPUs: more than %u MiB",
			  ld->arena_kib, num_possible_cpus(), MT_LUA_ARENAS_MAX_KIB >> 10);
		rc = -E2BIG;
		goto out;
	}
	rc = -ENOMEM;
	src = kvmalloc(ld->source_len, GFP_KERNEL);
	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (!src || !sc || !(sc->cpu = kcalloc(nr_cpu_ids, sizeof(*sc->cpu), GFP_KERNEL)))
		goto out;
	rc = -EFAULT;
	if (copy_from_user(src, u64_to_user_ptr(ld->source), ld->source_len))
		goto out;
	sc->arena_kib = ld->arena_kib;
	/* the device's group sees every event; reading any kernel or user
	 * memory is root's (stap's stapusr cannot either): root's as the
	 * loader and as the device's opener, the way perf and BPF look at
	 * the file's credentials (a descriptor the group opened and handed
	 * to a root process does not get the right) */
	sc->may_read_memory = capable(CAP_SYS_ADMIN) &&
			      file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN);
	sc->hide_kaddr = !mt_may_see_kaddr(file);
	sc->maxaction = ld->maxaction ? ld->maxaction : 1000;
	/* a hit runs with preemption off: the device's group may not ask
	 * for runs longer than MT_LUA_GROUP_MAXACTION allows (root may) */
	if (!sc->may_read_memory)
		sc->maxaction = min_t(u32, sc->maxaction, MT_LUA_GROUP_MAXACTION);
	sc->maxerrors = ld->maxerrors;
	rc = -EINVAL;
	if (ld->reserved2 || ld->flags & ~MT_LUA_LOAD_NO_OVERLOAD)
		goto out;
	set_time_bounds(sc, ld);
	sc->maxstringlen = clamp_t(u32, ld->maxstringlen ? ld->maxstringlen : 512, 16, MT_LUA_STRING_MAX);
	sc->first = cpumask_first(cpu_possible_mask);
	for (i = 0; i < MT_LUA_PROBES_MAX; i++)
		sc->nparams[i] = -1;   /* all, unless the runtime says fewer */
	for_each_possible_cpu(cpu) {
		rc = load_cpu(sc, cpu, src, ld->source_len, ld);
		if (rc)
			goto out;
	}
	rc = bind(sc, ld);
	if (!rc && (rc = mt_lua_nat_load(sc)) != 0)
		load_error(ld, 0, "no room for the native plans' tables in the arena", NULL);
	if (rc)
		goto out;
	ld->ncpu = num_possible_cpus();
	ld->nprobes = sc->nprobes;
	*sp = sc;
	sc = NULL;
	rc = 0;
out:
	if (rc && !ld->error[0])
		scnprintf(ld->error, sizeof(ld->error), "%s", rc == -ENOMEM ?
			  "out of memory (arena or module allocation)" : "bad request");
	if (copy_to_user(arg, ld, sizeof(*ld)) && !rc)
		rc = -EFAULT;
	free_script(sc);
	kvfree(src);
	kfree(ld);
	return rc;
}

/* --- arming */

static void disarm(struct mt_lua_script *sc)
{
	unsigned i;

	if (!sc->armed)
		return;
	for (i = 0; i < sc->nprobes; i++) {
		if (mt_kprobe_owns(sc->probes[i]))
			mt_kprobe_disarm(sc->probes[i]);
		mt_kmarker_disarm(sc->probes[i]);
	}
	mt_hooks_sync();   /* no handler runs after this */
	smp_store_release(&mt_lua_live, NULL);
	sc->armed = 0;
}

static long lua_start(struct mt_lua_script *sc)
{
	unsigned i;
	long armed = 0;

	if (!sc)
		return -ENXIO;
	if (sc->armed || READ_ONCE(sc->stopping))
		return -EBUSY;
	/* no handler runs (no script is live): the overload guard starts afresh */
	for_each_possible_cpu(i)
		memset(per_cpu_ptr(&mt_lua_overload, i), 0, sizeof(struct mt_lua_overload));
	smp_store_release(&mt_lua_live, sc);
	sc->armed = 1;
	for (i = 0; i < sc->nprobes; i++) {
		/* the values are fetched for a plan, or a handler that reads
		 * past the marker's name and format (nparams: -1 for all) */
		sc->probes[i]->lua_values = sc->nat[i] || sc->nparams[i] < 0 || sc->nparams[i] > 2;
		armed += mt_kmarker_arm(sc->probes[i], MT_LUA_ID_BASE + (int)i);
		if (mt_kprobe_owns(sc->probes[i]) && mt_kprobe_arm(sc->probes[i]))
			armed--;
	}
	return armed;
}

/* --- the consumer's calls */

/* name(cpu, in) in one state; its string result to the caller's out */
static long call_one(struct mt_lua_script *sc, unsigned cpu, struct mt_ioc_lua_call *c,
		     const char *in, char *out)
{
	struct mt_lua_cpu *pc = sc->cpu[cpu];
	lua_State *L = pc->L;
	long rc = 0;
	u64 ns;

	enter(pc);
	pc->extra->maxccalls = CCALLS_LOAD;
	/* the native plans' adds into the globals first: what the call
	 * reads or sends (deltas, end) includes them */
	set_budget(pc, call_budget(sc));
	if (mt_lua_nat_fold(pc) != LUA_OK) {
		report(sc, pc, L);
		c->errors++;
	}
	lua_settop(L, 0);
	set_budget(pc, call_budget(sc));   /* before a long string is pushed: it charges */
	if (lua_getglobal(L, c->name) != LUA_TFUNCTION) {
		lua_settop(L, 0);
		leave(pc);
		return -ENOENT;
	}
	lua_pushinteger(L, cpu);
	if (in)
		lua_pushlstring(L, in, c->in_len);
	else
		lua_pushnil(L);
	rc = lua_pcall(L, 2, 1, 0);
	ns = clock_to_ns(run_clock() - pc->start);
	if (ns > pc->max_call_ns)
		pc->max_call_ns = ns;
	if (rc != LUA_OK) {
		rc = 0;
		report(sc, pc, L);
		c->errors++;
	} else if (lua_type(L, -1) == LUA_TSTRING) {
		size_t n;
		const char *s = lua_tolstring(L, -1, &n);

		c->out_len = (u32)min_t(size_t, n, U32_MAX);
		if (n > c->out_size || !out)
			rc = -ENOSPC;
		else
			memcpy(out, s, n);
	}
	lua_settop(L, 0);
	leave(pc);
	return rc;
}

static long call_ioctl(struct mt_lua_script *sc, struct mt_ioc_lua_call __user *arg)
{
	struct mt_ioc_lua_call c;
	char *in = NULL, *out = NULL;
	unsigned cpu;
	long rc = 0, called = 0;

	if (!sc)
		return -ENXIO;
	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	c.name[sizeof(c.name) - 1] = '\0';
	c.out_len = c.errors = 0;
	if (c.in_len > MT_LUA_SOURCE_MAX || c.out_size > MT_LUA_SOURCE_MAX)
		return -E2BIG;
	if ((c.flags & MT_LUA_CALL_CPU) && (c.cpu >= nr_cpu_ids || !sc->cpu[c.cpu]))
		return -EINVAL;
	if (c.in) {
		in = kvmalloc(c.in_len + 1, GFP_KERNEL);
		if (!in)
			return -ENOMEM;
		if (copy_from_user(in, u64_to_user_ptr(c.in), c.in_len)) {
			kvfree(in);
			return -EFAULT;
		}
	}
	if (c.out && c.out_size) {
		out = kvmalloc(c.out_size, GFP_KERNEL);
		if (!out) {
			kvfree(in);
			return -ENOMEM;
		}
	}
	for_each_possible_cpu(cpu) {
		long r;

		if ((c.flags & MT_LUA_CALL_FIRST) && cpu != sc->first)
			continue;
		if ((c.flags & MT_LUA_CALL_CPU) && cpu != c.cpu)
			continue;
		r = call_one(sc, cpu, &c, in, out);
		if (r == -ENOENT)
			continue;
		called++;
		if (r)
			rc = r;
	}
	if (!rc && out && c.out_len && copy_to_user(u64_to_user_ptr(c.out), out, c.out_len))
		rc = -EFAULT;
	if (copy_to_user(arg, &c, sizeof(c)))
		rc = -EFAULT;
	kvfree(in);
	kvfree(out);
	return rc ? rc : called;
}

static long lua_output(struct mt_lua_script *sc, struct mt_ioc_lua_output __user *arg)
{
	struct mt_ioc_lua_output o;
	long n;

	if (!sc)
		return -ENXIO;
	if (copy_from_user(&o, arg, sizeof(o)))
		return -EFAULT;
	if (o.cpu >= nr_cpu_ids || !sc->cpu[o.cpu])
		return -EINVAL;
	n = drain(sc->cpu[o.cpu], u64_to_user_ptr(o.buf), o.size);
	return n;
}

static long lua_stats(struct mt_lua_script *sc, struct mt_ioc_lua_stats __user *arg)
{
	struct mt_ioc_lua_stats st;
	unsigned cpu;

	if (!sc)
		return -ENXIO;
	memset(&st, 0, sizeof(st));
	for_each_possible_cpu(cpu) {
		struct mt_lua_cpu *pc = sc->cpu[cpu];

		st.runs += READ_ONCE(pc->runs) + READ_ONCE(pc->nat_runs);
		st.native_runs += READ_ONCE(pc->nat_runs);
		st.skipped += atomic64_read(&pc->skipped);
		st.errors += READ_ONCE(pc->errors);
		st.lost_bytes += READ_ONCE(pc->lost);
		st.arena_peak = max_t(u64, st.arena_peak, READ_ONCE(pc->arena.peak));
		st.arena_failed += READ_ONCE(pc->arena.failed);
		st.pending_bytes += smp_load_acquire(&pc->head) - READ_ONCE(pc->tail);
	}
	st.ncpu = num_possible_cpus();
	for_each_possible_cpu(cpu) {
		st.max_run_ns = max_t(u64, st.max_run_ns, clock_to_ns(READ_ONCE(sc->cpu[cpu]->max_run_clk)));
		st.max_call_ns = max_t(u64, st.max_call_ns, READ_ONCE(sc->cpu[cpu]->max_call_ns));
	}
	st.stopping = READ_ONCE(sc->stopping);
	st.exit = READ_ONCE(sc->exit);
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

long mt_lua_ioctl(struct mt_lua_script **sp, struct file *file, unsigned int cmd,
		  unsigned long arg)
{
	switch (cmd) {
	case MT_IOC_LUA_LOAD:
		return lua_load_ioctl(sp, file, (struct mt_ioc_lua_load __user *)arg);
	case MT_IOC_LUA_START:
		return lua_start(*sp);
	case MT_IOC_LUA_STOP:
		if (!*sp)
			return -ENXIO;
		disarm(*sp);
		return 0;
	case MT_IOC_LUA_CALL:
		return call_ioctl(*sp, (struct mt_ioc_lua_call __user *)arg);
	case MT_IOC_LUA_OUTPUT:
		return lua_output(*sp, (struct mt_ioc_lua_output __user *)arg);
	case MT_IOC_LUA_STATS:
		return lua_stats(*sp, (struct mt_ioc_lua_stats __user *)arg);
	}
	return -ENOTTY;
}

void mt_lua_release(struct mt_lua_script **sp)
{
	if (!*sp)
		return;
	disarm(*sp);
	free_script(*sp);
	*sp = NULL;
}
