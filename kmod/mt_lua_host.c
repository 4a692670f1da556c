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
 * the handler of a hit, or the consumer's CALL.  A hit that finds a
 * handler there is skipped and counted, never waits: it may come from an
 * interrupt on top of that handler.  A hit that finds the consumer waits:
 * the consumer holds a state briefly, with interrupts off.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_ioctl.h"
/* Lua's headers last: they take the kernel's `current` away (mt_lua_kernel.h) */
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "mt_lua.h"
#include "mt_lua_int.h"

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
static struct mt_lua_script default_limits = { .maxaction = 1000 };

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
 * unit per function entry and backward jump; "MAXACTION exceeded" when
 * spent), set before each run.  Translated scripts count stap's actions
 * themselves and stop first; this stops any other Lua.  A count hook did
 * the same at twice the cost of a handler: every instruction trapped.
 */
static void set_budget(struct mt_lua_cpu *pc, int budget)
{
	pc->extra->budget = budget;
}

static int tostring_protected(lua_State *L)
{
	luaL_tolstring(L, 1, NULL);
	return 1;
}

/* The error of a failed run as stap prints it; the session then stops. */
static void report(struct mt_lua_script *sc, struct mt_lua_cpu *pc, lua_State *L)
{
	const char *msg = NULL;
	char line[300];
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
	n = scnprintf(line, sizeof(line), "ERROR: %s\n", msg);
	mt_lua_out(pc, line, n);
	pc->errors++;
	/* stap's MAXERRORS: the session ends at the error past it (0: the first) */
	if ((u32)atomic_inc_return(&sc->nerrors) > sc->maxerrors)
		WRITE_ONCE(sc->stopping, 1);
}

/*
 * Call the function under `nargs` arguments on L's stack with a fresh
 * MAXACTION budget.  The caller owns pc (its busy flag).
 */
static int run(struct mt_lua_script *sc, struct mt_lua_cpu *pc, int nargs, int budget)
{
	lua_State *L = pc->L;
	int rc;

	set_budget(pc, budget);
	rc = mt_lua_pcall_hit(L, nargs);
	if (rc != LUA_OK) {
		report(sc, pc, L);
		lua_settop(L, 0);
	}
	return rc;
}

static int action_budget(const struct mt_lua_script *sc)
{
	return (int)min_t(u64, (u64)sc->maxaction * MT_LUA_INSNS_PER_ACTION, INT_MAX);
}

/* Loading, binding and marktap's calls (begin, timers, end, deltas): 16 hits' worth. */
static int call_budget(const struct mt_lua_script *sc)
{
	return (int)min_t(u64, (u64)sc->maxaction * MT_LUA_INSNS_PER_ACTION * 16, INT_MAX);
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

/* Spins for a state another CPU's handler holds, at most (stap's
 * MAXTRYLOCK): past it the hit is skipped and counted. */
#define MT_LUA_MAXTRY 1000000

/*
 * Own pc for a hit.  Free: taken.  The consumer (process context, another
 * CPU or interrupts off on this one): waited for, except in an NMI, which
 * may have interrupted it.  Another CPU's handler: waited for (bounded by
 * its MAXACTION, and MT_LUA_MAXTRY), unless this CPU is itself inside a
 * handler, whose state the other may be waiting for.  Else skipped.
 */
static bool take(struct mt_lua_cpu *pc)
{
	unsigned long tries = 0;

	for (;;) {
		int owner = atomic_cmpxchg(&pc->busy, BUSY_FREE, BUSY_HIT);

		if (owner == BUSY_FREE) {
			__this_cpu_inc(mt_lua_holding);
			return true;
		}
		if (in_nmi() || (owner == BUSY_HIT && __this_cpu_read(mt_lua_holding)) ||
		    ++tries > MT_LUA_MAXTRY) {
			atomic64_inc(&pc->skipped);
			return false;
		}
		cpu_relax();
	}
}

static void give(struct mt_lua_cpu *pc)
{
	__this_cpu_dec(mt_lua_holding);
	atomic_set_release(&pc->busy, BUSY_FREE);
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
	if (!pc || !take(pc))
		return;
	L = pc->L;
	pc->extra->maxccalls = CCALLS_HIT;
	if (m->lua_values && mt_kmarker_has_kaddr(m) && sc->hide_kaddr)
		mt_hide_kaddr(m, a);
	if (sc->nat[binding] && mt_lua_nat_run(sc, pc, sc->nat[binding], m, a)) {
		give(pc);
		return;
	}
	if (mt_lua_push_handler(L, pc->ref[binding], (int)m->fmt.nfields + 4)) {
		int n = (int)m->fmt.nfields + 2;

		if (sc->nparams[binding] >= 0 && sc->nparams[binding] < n)
			n = sc->nparams[binding];
		/* stap's nesting starts at 0 at each hit (an error caught by
		 * try/catch may have left it higher) */
		pc->extra->depth = 0;
		push_args(L, pc->sref[binding], m, a, n);
		run(sc, pc, n, action_budget(sc));
		pc->runs++;
	}
	give(pc);
}

/*
 * Own pc from process context: spin out a running handler (bounded by
 * MAXACTION), interrupts off meanwhile so that no hit on this CPU waits
 * for us while we cannot run.  Hits on pc's CPU wait for us (the hold is
 * as bounded), they are not skipped.
 */
static unsigned long enter(struct mt_lua_cpu *pc)
{
	unsigned long flags;

	/* interrupts are off only once pc is ours: while another CPU's
	 * handler runs out its budget this CPU takes interrupts and may
	 * reschedule (an ioctl, process context) */
	for (;;) {
		local_irq_save(flags);
		if (atomic_cmpxchg(&pc->busy, BUSY_FREE, BUSY_CONSUMER) == BUSY_FREE)
			return flags;
		local_irq_restore(flags);
		cpu_relax();
		cond_resched();
	}
}

static void leave(struct mt_lua_cpu *pc, unsigned long flags)
{
	atomic_set_release(&pc->busy, BUSY_FREE);
	local_irq_restore(flags);
}

/* --- loading */

static void free_cpu(struct mt_lua_cpu *pc)
{
	if (!pc)
		return;
	if (pc->L) {
		/* lua_close runs the script's __gc finalizers: bounded too */
		set_budget(pc, action_budget(pc->script ? pc->script : &default_limits));
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
	pc->script = sc;
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
	for (i = 0; i < sc->nprobes; i++)
		mt_kmarker_disarm(sc->probes[i]);
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
	smp_store_release(&mt_lua_live, sc);
	sc->armed = 1;
	for (i = 0; i < sc->nprobes; i++) {
		/* the values are fetched for a plan, or a handler that reads
		 * past the marker's name and format (nparams: -1 for all) */
		sc->probes[i]->lua_values = sc->nat[i] || sc->nparams[i] < 0 || sc->nparams[i] > 2;
		armed += mt_kmarker_arm(sc->probes[i], MT_LUA_ID_BASE + (int)i);
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
	unsigned long flags;

	flags = enter(pc);
	pc->extra->maxccalls = CCALLS_LOAD;
	/* the native plans' adds into the globals first: what the call
	 * reads or sends (deltas, end) includes them */
	set_budget(pc, call_budget(sc));
	if (mt_lua_nat_fold(pc) != LUA_OK) {
		report(sc, pc, L);
		c->errors++;
	}
	lua_settop(L, 0);
	if (lua_getglobal(L, c->name) != LUA_TFUNCTION) {
		lua_settop(L, 0);
		leave(pc, flags);
		return -ENOENT;
	}
	lua_pushinteger(L, cpu);
	if (in)
		lua_pushlstring(L, in, c->in_len);
	else
		lua_pushnil(L);
	set_budget(pc, call_budget(sc));
	if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
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
	leave(pc, flags);
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
