/*
 * mt_lua_run.c - running Lua in a CPU's state: who may enter it, a hit's
 * run (mt_lua_fire), a run's errors, and the overload guard.
 *
 * The dispatcher (mt_dispatch.c) calls mt_lua_fire for a hit of a marker
 * bound to a script, preemption off, once per script that bound it (the
 * marker's targets name the script: several run side by side, each in its
 * own states); the host (mt_lua_host.c) arms the script and enters the
 * states for the consumer's calls.
 *
 * Each CPU's state is entered by whoever wins its busy flag (a cmpxchg):
 * the handler of a hit, or the consumer's CALL (process context,
 * interrupts and preemption on).  A hit that finds the state taken waits
 * for it at most stap's MAXTRYLOCK time (1 ms), and not at all when it
 * came on top of the holder (an interrupt, a nested marker) or after
 * another hit gave up on the same hold; then it is skipped and counted.
 *
 * A run is bounded by its budget and time (mt_lua_cpu.c).  A CPU whose
 * handlers of one script take more than STP_OVERLOAD_THRESHOLD of an
 * interval end that script's session, as stap's overload guard ends its
 * module.
 */
#include <linux/atomic.h>
#include <linux/hardirq.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_event.h"
/* Lua's headers last: they take the kernel's `current` away (mt_lua_kernel.h) */
#include "lua.h"
#include "lauxlib.h"
#include "mt_klua.h"
#include "mt_klua_int.h"

#define current get_current()   /* lua.h took the kernel's away (mt_lua_kernel.h) */

/* a CPU state's busy flag: who is in it */
enum { BUSY_FREE, BUSY_HIT, BUSY_CONSUMER };

/* --- a run's errors */

static int tostring_protected(lua_State *L)
{
	luaL_tolstring(L, 1, NULL);
	return 1;
}

void mt_lua_report(struct mt_lua_script *sc, struct mt_lua_cpu *pc, lua_State *L)
{
	const char *msg = NULL, *bound = pc->timed_out ? pc->bound_msg : NULL;
	char line[400], arena[96];
	int n;

	if (lua_type(L, -1) == LUA_TSTRING) {
		msg = lua_tostring(L, -1);
	} else if (lua_type(L, -1) == LUA_TTABLE) {
		/* an error object (mt_krt.lua): its __tostring, protected
		 * and on a small budget of its own (the run's may be spent) */
		mt_lua_set_call_bound(pc, 64);
		lua_pushcfunction(L, tostring_protected);
		lua_insert(L, -2);
		if (lua_pcall(L, 1, 1, 0) == LUA_OK)
			msg = lua_tostring(L, -1);
	}
	if (!msg)
		msg = "(error object is not a string)";
	if (!bound || !strstr(msg, "MAXACTION exceeded"))
		bound = "";
	if (strstr(msg, "not enough memory")) {
		/* the state's arena is full: say which limit to raise */
		scnprintf(arena, sizeof(arena), " (the Lua arena of %u KiB per CPU is full: "
			  "MAXARENAKB)", sc->arena_kib);
		bound = arena;
	}
	n = scnprintf(line, sizeof(line), "ERROR: %s%s\n", msg, bound);
	mt_lua_out(pc, line, n);
	pc->errors++;
	/* stap's MAXERRORS: the session ends at the error past it (0: the first) */
	if ((u32)atomic_inc_return(&sc->nerrors) > sc->maxerrors)
		WRITE_ONCE(sc->stopping, 1);
}

/* --- a hit's run */

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
	*ns = mt_lua_clock() - pc->start;
	if (*ns > pc->max_run_clk)
		pc->max_run_clk = *ns;
	if (rc != LUA_OK) {
		mt_lua_report(sc, pc, L);
		lua_settop(L, 0);
	}
	return rc;
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

/*
 * A hit's run on its state's own stack, whatever stack the marker fired
 * on (mt_lua_on_stack): the arguments pushed, the handler called, its
 * error reported.  The C stack Lua may use is measured there (luaconf.h).
 */
struct hit_run {
	struct mt_lua_script *sc;
	struct mt_lua_cpu *pc;
	const struct mt_kmarker *m;
	const struct mt_args *a;
	unsigned binding;
	int nargs;
	u64 ns;
};

void mt_lua_run_hit(void *arg)
{
	struct hit_run *h = arg;

	push_args(h->pc->L, h->pc->sref[h->binding], h->m, h->a, h->nargs);
	run(h->sc, h->pc, h->nargs, &h->ns);
}

/* CPUs inside a handler: a hit there is nested (an interrupt, a marker
 * in the handler's path) and must not wait for any state */
static DEFINE_PER_CPU(int, mt_lua_holding);

/*
 * stap's overload guard, per script and CPU (sc->overload): the handlers'
 * time in the current interval (a run counted at most its time bound:
 * under emulation a vCPU descheduled in a handler would count the other's
 * time too).  Written by the hits of one CPU only, preemption off.
 */
void mt_lua_overload_reset(struct mt_lua_script *sc)
{
	unsigned i;

	for_each_possible_cpu(i)
		memset(per_cpu_ptr(sc->overload, i), 0, sizeof(struct mt_lua_overload));
}

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
		now = mt_lua_clock();
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
			  "STP_OVERLOAD_INTERVAL %llu ns)\n", mt_lua_clock_to_ns(o->sum) / NSEC_PER_MSEC,
			  mt_lua_clock_to_ns(now - o->base) / NSEC_PER_MSEC, raw_smp_processor_id(),
			  mt_lua_clock_to_ns(sc->overload_threshold_clk),
			  mt_lua_clock_to_ns(sc->overload_interval_clk));

	mt_lua_out(pc, line, n);
	pc->errors++;
	atomic_inc(&sc->nerrors);
	WRITE_ONCE(sc->stopping, 1);
}

static void account(struct mt_lua_script *sc, struct mt_lua_cpu *pc, u64 ns)
{
	struct mt_lua_overload *o = this_cpu_ptr(sc->overload);
	u64 now = pc->start + ns;

	if (now - o->base > sc->overload_interval_clk) {
		o->base = now;
		o->sum = 0;
	}
	o->sum += min(ns, sc->run_clk);
	if (o->sum > sc->overload_threshold_clk && !sc->no_overload)
		overload(sc, pc, o, now);
}

void mt_lua_fire(struct mt_kmarker *m, struct mt_lua_script *sc, unsigned binding, bool values,
		 struct mt_args *a)
{
	struct mt_lua_cpu *pc;
	lua_State *L;

	/* sc outlives the hit: it is freed after its targets were taken out
	 * and the hits in flight waited for (mt_lua_host.c's disarm) */
	if (binding >= sc->nprobes || READ_ONCE(sc->stopping))
		return;
	/* native plans and the Lua of handlers that only add or share
	 * nothing (percpu) in this CPU's state, lock-free; any other in the
	 * shared state */
	pc = sc->cpu[sc->nat[binding] || sc->percpu[binding] ? smp_processor_id() : sc->first];
	if (!pc || !take(sc, pc))
		return;
	L = pc->L;
	pc->may_sleep = false;
	mt_lua_set_bound(pc, (s64)sc->maxaction * MT_LUA_INSNS_PER_ACTION, sc->run_clk, sc->run_msg);
	if (values && mt_kmarker_has_kaddr(m) && sc->hide_kaddr)
		mt_hide_kaddr(m, a);
	if (sc->nat[binding] && mt_lua_nat_run(sc, pc, sc->nat[binding], m, a)) {
		give(pc);
		return;
	}
	if (mt_lua_push_handler(L, pc->ref[binding], (int)m->fmt.nfields + 4)) {
		struct hit_run h = { .sc = sc, .pc = pc, .m = m, .a = a, .binding = binding,
				     .nargs = (int)m->fmt.nfields + 2 };

		if (sc->nparams[binding] >= 0 && sc->nparams[binding] < h.nargs)
			h.nargs = sc->nparams[binding];
		/* stap's nesting starts at 0 at each hit (an error caught by
		 * try/catch may have left it higher) */
		pc->extra->depth = 0;
		pc->extra->cstack_limit = (unsigned long)pc->stack + MT_LUA_STACK_RESERVE;
		/* the unwinder does not cross into the state's stack: here */
		pc->kstack_n = sc->wants_kstack ? mt_kstack_save(pc->kstack, MT_KSTACK_MAX) : 0;
		mt_lua_on_stack(&h, (char *)pc->stack + MT_LUA_STACK_SIZE);
		pc->runs++;
		if (sc->percpu[binding])
			pc->own_runs++;
		account(sc, pc, h.ns);
	}
	give(pc);
}

/* --- the consumer's entry */

/*
 * Own pc from process context (an ioctl): wait out the holder, a handler
 * (bounded by its time) or nothing else (the consumer's calls are
 * serialised by mt_lock), rescheduling meanwhile.  While the consumer
 * runs Lua interrupts stay on (a hit on top of it does not wait: take)
 * and preemption is off, as in a handler: no other task runs on its CPU
 * while hits elsewhere wait for the state, and the call's time bound
 * (MT_LUA_CALL_RUNS handlers') bounds the hold.
 */
void mt_lua_enter(struct mt_lua_cpu *pc)
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

/*
 * Own pc while the script is disarmed (before its start, after its stop):
 * no hit can take it, so nothing waits and the call may run preemptible
 * and reschedule (pc->may_sleep: the load's clock and bound).  Only
 * another call could hold it, and the file's lock serialises those.
 */
void mt_lua_enter_idle(struct mt_lua_cpu *pc)
{
	while (atomic_cmpxchg(&pc->busy, BUSY_FREE, BUSY_CONSUMER) != BUSY_FREE)
		cond_resched();
	WRITE_ONCE(pc->holder, current);
	pc->may_sleep = true;
}

void mt_lua_leave(struct mt_lua_cpu *pc, bool idle)
{
	release(pc);
	if (!idle)
		preempt_enable();
}
