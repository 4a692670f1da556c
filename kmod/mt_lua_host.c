/*
 * mt_lua_host.c - Lua scripts in marktap.ko: load, bind, arm, and the
 * consumer's calls.
 *
 * See mt_klua.h for the model.  Life of a script, all under its file's
 * lock (mt_main.c; mt_lock inside for arming and the group's counts)
 * except the hits; scripts of other files live side by side:
 *
 *   MT_IOC_LUA_LOAD   source copied in; per possible CPU: an arena, a Lua
 *                     state, our library (mt_lua_lib.c), the chunk run
 *                     once (it calls probe(marker, fn)); the bindings of
 *                     CPU 0's run are checked against the catalogue
 *   MT_IOC_LUA_START  bound markers armed (a target naming the script and
 *                     the binding added to each, mt_kmod.h)
 *   hits              mt_kmarker_fire (mt_dispatch.c) calls mt_lua_fire
 *                     (mt_lua_run.c) on the hit's CPU, preemption off
 *   MT_IOC_LUA_CALL   a global function run in every state (end probes,
 *                     pulling values), hits on that CPU skipped meanwhile
 *   MT_IOC_LUA_OUTPUT a CPU's output drained
 *   MT_IOC_LUA_STOP / close   disarmed; close frees everything
 *
 * Who may be in a CPU's state at a time (its busy flag), a hit's run and
 * the overload guard: mt_lua_run.c.  The budget and time bound of every
 * run, a hit's, a call's or the load's: mt_lua_cpu.c.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_ioctl.h"
#include "mt_hwbp.h"
#include "mt_kprobe.h"
#include "mt_netfilter.h"
#include "mt_tracepoint.h"
/* Lua's headers last: they take the kernel's `current` away (mt_lua_kernel.h) */
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "mt_klua.h"
#include "mt_klua_int.h"

#define current get_current()   /* lua.h took the kernel's away (mt_lua_kernel.h) */

static const struct mt_lua_script default_limits = { .maxaction = 1000 };

/*
 * The arenas of the scripts loaded without CAP_SYS_ADMIN (the device's
 * group, CAP_PERFMON), all together: pinned kernel memory, so at most
 * group_arena_kib, which the admin sets (0: a sixteenth of RAM, at least
 * 64 MiB).  Root's scripts are bounded one by one (MT_LUA_ARENAS_MAX_KIB).
 * Counted under mt_lock, at the load and when the script is freed.
 */
static unsigned long mt_group_arena_kib;
module_param_named(group_arena_kib, mt_group_arena_kib, ulong, 0644);
MODULE_PARM_DESC(group_arena_kib, "KiB of Lua arenas the scripts of loaders without "
		 "CAP_SYS_ADMIN may hold together (0: a sixteenth of RAM, at least 64 MiB)");
static u64 mt_group_arenas_kib;   /* what they hold now */

/* And how many such scripts may be loaded at once: each also holds an
 * output ring, a stack and a state's bookkeeping per CPU, and marker
 * hits run every script bound to them in turn.  Root's are not counted. */
static unsigned mt_group_scripts_max = 8;
module_param_named(group_scripts, mt_group_scripts_max, uint, 0644);
MODULE_PARM_DESC(group_scripts, "Lua scripts loaders without CAP_SYS_ADMIN may have loaded at once "
		 "(root's are not counted)");
static unsigned mt_group_scripts;   /* loaded now (under mt_lock) */

static u64 group_arena_limit_kib(void)
{
	unsigned long set = READ_ONCE(mt_group_arena_kib);
	u64 ram_kib = (u64)totalram_pages() << (PAGE_SHIFT - 10);

	return set ? set : max_t(u64, 64 * 1024, ram_kib / 16);
}

/* A load without CAP_SYS_ADMIN (under mt_lock): the script and its
 * arenas counted with the others', or -E2BIG with the reason in ld->error. */
static int charge_group(struct mt_lua_script *sc, struct mt_ioc_lua_load *ld)
{
	u64 want = (u64)(ld->arena_kib + ld->out_kib) * num_possible_cpus(), limit = group_arena_limit_kib();
	unsigned max = READ_ONCE(mt_group_scripts_max);

	if (mt_group_scripts >= max) {
		scnprintf(ld->error, sizeof(ld->error), "%u scripts loaded without CAP_SYS_ADMIN "
			  "run already, marktap.ko's group_scripts (root's scripts are not counted)",
			  mt_group_scripts);
		return -E2BIG;
	}
	if (mt_group_arenas_kib + want > limit) {
		scnprintf(ld->error, sizeof(ld->error), "arenas and output rings of %u KiB per CPU for %u CPUs: "
			  "scripts loaded without CAP_SYS_ADMIN would hold %llu KiB, more than "
			  "marktap.ko's group_arena_kib (%llu KiB)", ld->arena_kib + ld->out_kib,
			  num_possible_cpus(), mt_group_arenas_kib + want, limit);
		return -E2BIG;
	}
	mt_group_scripts++;
	mt_group_arenas_kib += want;
	sc->group_arena_kib = want;
	sc->group = true;
	return 0;
}

/* Loading, binding and marktap's calls (begin, timers, end, deltas): 16 hits' worth. */
static s64 call_budget(const struct mt_lua_script *sc)
{
	return (s64)sc->maxaction * MT_LUA_INSNS_PER_ACTION * 16;
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
		mt_lua_set_bound(pc, (s64)(pc->script ? pc->script : &default_limits)->maxaction *
				 MT_LUA_INSNS_PER_ACTION, MT_LUA_RUN_US * NSEC_PER_USEC, "");
		mt_lua_task_stack(pc);
		lua_close(pc->L);
	}
	mt_arena_free(&pc->arena);
	vfree(pc->stack);
	vfree(pc->out);
	kvfree(pc);
}

static void free_script(struct mt_lua_script *sc)
{
	unsigned i;

	if (!sc)
		return;
	/* kernel function, watchpoint, tracepoint and netfilter probes first:
	 * unregistering waits for their handlers (a failed bind leaves some
	 * past nprobes) */
	mt_kprobe_put_many(sc->probes, MT_LUA_PROBES_MAX);
	for (i = 0; i < MT_LUA_PROBES_MAX; i++) {
		if (mt_hwbp_owns(sc->probes[i]))
			mt_hwbp_put(sc->probes[i]);
		else if (mt_tracepoint_owns(sc->probes[i]))
			mt_tracepoint_put(sc->probes[i]);
		else if (mt_netfilter_owns(sc->probes[i]))
			mt_netfilter_put(sc->probes[i]);
	}
	for (i = 0; sc->cpu && i < nr_cpu_ids; i++)   /* (a load may fail before them) */
		free_cpu(sc->cpu[i]);
	if (sc->group) {
		mutex_lock(&mt_lock);
		mt_group_scripts--;
		mt_group_arenas_kib -= sc->group_arena_kib;
		mutex_unlock(&mt_lock);
	}
	kfree(sc->cpu);
	free_percpu(sc->overload);
	mt_lua_nat_free(sc);
	kvfree(sc);
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
	struct mt_lua_cpu *pc = kvzalloc(sizeof(*pc), GFP_KERNEL);
	lua_State *L;
	int rc;

	if (!pc)
		return -ENOMEM;
	sc->cpu[cpu] = pc;
	pc->cpu = cpu;
	pc->out = vmalloc(sc->out_size);
	/* a hit's stack: vmalloc's guard page below it */
	pc->stack = vmalloc(MT_LUA_STACK_SIZE);
	if (!pc->out || !pc->stack || mt_arena_init(&pc->arena, (size_t)sc->arena_kib << 10))
		return -ENOMEM;
	L = lua_newstate(mt_arena_lua_alloc, &pc->arena);
	if (!L) {
		load_error(ld, cpu, "cannot create a Lua state: arena too small", NULL);
		return -ENOMEM;
	}
	pc->L = L;
	pc->extra = mt_lua_extra(L);
	memset(pc->extra, 0, sizeof(*pc->extra));
	mt_lua_task_stack(pc);   /* the load, binding: this ioctl */
	pc->extra->cpu = pc;
	pc->arena.charge = &pc->extra->budget;
	pc->script = sc;
	pc->may_sleep = true;   /* an ioctl under its file's lock (a mutex) */
	mt_lua_set_call_bound(pc, call_budget(sc));   /* the libraries' Lua runs too */
	if (mt_lua_open_libs(L) != LUA_OK) {
		load_error(ld, cpu, "cannot set up the Lua state: ", lua_tostring(L, -1));
		return -ENOMEM;
	}
	rc = luaL_loadbufferx(L, src, len, "=script", "t");
	if (rc != LUA_OK) {
		load_error(ld, cpu, "", lua_tostring(L, -1));
		return -EINVAL;
	}
	mt_lua_set_call_bound(pc, call_budget(sc));
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
	/* where each handler's Lua runs (mt_krt.lua's __mt_percpu; a
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
		scnprintf(ld->error, sizeof(ld->error),
			  "too many probed markers: %u, where a script may probe at most %d", n,
			  MT_LUA_PROBES_MAX);
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
		if (!m && mt_hwbp_named(name)) {
			/* kernel.data: any kernel address watched, root's */
			if (!sc->may_read_memory) {
				scnprintf(ld->error, sizeof(ld->error), "%s: hardware watchpoints need "
					  "CAP_SYS_ADMIN (the script was loaded without it)", name);
				return -EPERM;
			}
			m = mt_hwbp_get(name, ld->error, sizeof(ld->error));
			if (!m)
				return -ENOENT;
			sc->probes[i] = m;
			continue;
		}
		if (!m && mt_netfilter_named(name)) {
			/* netfilter hooks: every packet of the machine passes
			 * one, and guru mode's verdict drops them: root's, as
			 * kernel function probes */
			if (!sc->may_read_memory) {
				scnprintf(ld->error, sizeof(ld->error), "%s: netfilter hooks need "
					  "CAP_SYS_ADMIN (the script was loaded without it)", name);
				return -EPERM;
			}
			m = mt_netfilter_get(name, ld->error, sizeof(ld->error));
			if (!m)
				return -ENOENT;
			sc->probes[i] = m;
			continue;
		}
		if (!m && mt_tracepoint_named(name)) {
			/* kernel.trace: the group's, as kernel.mark (a tracepoint
			 * is a place the kernel offers; what its parameters
			 * point to is read with kernel_read, root's) */
			m = mt_tracepoint_get(name, sc->may_read_memory, ld->error, sizeof(ld->error));
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
		mt_lua_set_call_bound(pc, call_budget(sc));   /* and for the plans' lookups */
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
	mt_lua_clock_init();
	sc->run_clk = mt_lua_ns_to_clock((u64)run_us * NSEC_PER_USEC);
	sc->call_clk = sc->run_clk * MT_LUA_CALL_RUNS;
	sc->wait_clk = mt_lua_ns_to_clock((u64)wait_us * NSEC_PER_USEC);
	sc->overload_threshold_clk = mt_lua_ns_to_clock(min(threshold, interval));
	sc->overload_interval_clk = mt_lua_ns_to_clock(interval);
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
	if (ld->source_len == 0 || ld->source_len > MT_LUA_SOURCE_MAX)
		goto out;
	if (ld->out_kib == 0)
		ld->out_kib = MT_LUA_OUT_KIB;
	if (ld->out_kib < 64 || ld->out_kib > MT_LUA_OUT_MAX_KIB || (ld->out_kib & (ld->out_kib - 1)))
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
	sc = kvzalloc(sizeof(*sc), GFP_KERNEL);
	if (!src || !sc || !(sc->cpu = kcalloc(nr_cpu_ids, sizeof(*sc->cpu), GFP_KERNEL)) ||
	    !(sc->overload = alloc_percpu(struct mt_lua_overload)))
		goto out;
	rc = -EFAULT;
	if (copy_from_user(src, u64_to_user_ptr(ld->source), ld->source_len))
		goto out;
	sc->arena_kib = ld->arena_kib;
	sc->out_size = ld->out_kib << 10;
	/* the device's group sees every event; reading any kernel or user
	 * memory is root's (stap's stapusr cannot either): root's as the
	 * loader and as the device's opener, the way perf and BPF look at
	 * the file's credentials (a descriptor the group opened and handed
	 * to a root process does not get the right) */
	sc->may_read_memory = mt_is_root(file);
	sc->hide_kaddr = !mt_may_see_kaddr(file);
	sc->wants_kstack = strnstr(src, "kbacktrace(", ld->source_len) != NULL;
	if (!sc->may_read_memory) {
		mutex_lock(&mt_lock);
		rc = charge_group(sc, ld);
		mutex_unlock(&mt_lock);
		if (rc)
			goto out;
	}
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
	mutex_lock(&mt_lock);
	for (i = 0; i < sc->nprobes; i++) {
		if (mt_kprobe_owns(sc->probes[i]))
			mt_kprobe_disarm(sc->probes[i]);
		else if (mt_hwbp_owns(sc->probes[i]))
			mt_hwbp_disarm(sc->probes[i]);
		else if (mt_tracepoint_owns(sc->probes[i]))
			mt_tracepoint_disarm(sc->probes[i]);
		else if (mt_netfilter_owns(sc->probes[i]))
			mt_netfilter_disarm(sc->probes[i]);
		mt_kmarker_disarm(sc->probes[i], sc);
	}
	mutex_unlock(&mt_lock);
	mt_hooks_sync();   /* no handler of sc runs after this */
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
	/* no handler of sc runs: its overload guard starts afresh */
	mt_lua_overload_reset(sc);
	sc->armed = 1;
	mutex_lock(&mt_lock);
	for (i = 0; i < sc->nprobes; i++) {
		/* the values are fetched for a plan, or a handler that reads
		 * past the marker's name and format (nparams: -1 for all) */
		struct mt_ktarget t = { .owner = sc, .kind = MT_TARGET_LUA, .id = i,
			.values = sc->nat[i] || sc->nparams[i] < 0 || sc->nparams[i] > 2 };

		armed += mt_kmarker_arm(sc->probes[i], &t);
		if (mt_kprobe_owns(sc->probes[i]) && mt_kprobe_arm(sc->probes[i]))
			armed--;
		else if (mt_hwbp_owns(sc->probes[i]) && mt_hwbp_arm(sc->probes[i]))
			armed--;
		else if (mt_tracepoint_owns(sc->probes[i]) && mt_tracepoint_arm(sc->probes[i]))
			armed--;
		else if (mt_netfilter_owns(sc->probes[i]) && mt_netfilter_arm(sc->probes[i]))
			armed--;
	}
	mutex_unlock(&mt_lock);
	return armed;
}

/* --- the consumer's calls */

/*
 * name(cpu, in) in one state; its string result to the caller's out.
 *
 * While the script is armed the call holds the state as a hit would,
 * preemption off, within the call's bound (MT_LUA_CALL_RUNS handlers'
 * time, 16 hits' budget): hits that need the state wait for it.  With
 * MT_LUA_CALL_TRY the call holds it no longer than a handler may (a
 * pull the consumer can make later: hits wait no longer than for a
 * handler), and running out of that is no error of the script's:
 * -ETIME, the consumer tries later (a pull of large arrays).
 * Before the start and after the stop no hit can come (the script's
 * targets are out and mt_hooks_sync waited for the last hit): a call with
 * MT_LUA_CALL_LONG then runs preemptible, rescheduling, bounded by time
 * alone as a load is (10 s), so that the first values and the final pull
 * move arrays of any size; without the flag it keeps the call's bound.
 */
/* The bound of a call's run (see call_one) */
static void call_bound(struct mt_lua_script *sc, struct mt_lua_cpu *pc, s64 budget, bool try)
{
	if (try)
		mt_lua_set_bound(pc, budget, sc->run_clk, sc->run_msg);
	else
		mt_lua_set_call_bound(pc, budget);
}

static long call_one(struct mt_lua_script *sc, unsigned cpu, struct mt_ioc_lua_call *c,
		     const char *in, char *out)
{
	struct mt_lua_cpu *pc = sc->cpu[cpu];
	lua_State *L = pc->L;
	bool idle = !sc->armed && (c->flags & MT_LUA_CALL_LONG);
	bool try = !idle && (c->flags & MT_LUA_CALL_TRY);
	s64 budget = idle ? MT_LUA_IDLE_BUDGET : call_budget(sc);
	long rc = 0;
	u64 ns;

	if (idle)
		mt_lua_enter_idle(pc);
	else
		mt_lua_enter(pc);
	mt_lua_task_stack(pc);
	pc->committing = false;
	/* the native plans' adds into the globals first: what the call
	 * reads or sends (deltas, end) includes them */
	call_bound(sc, pc, budget, false);
	if (mt_lua_nat_fold(pc) != LUA_OK) {
		mt_lua_report(sc, pc, L);
		c->errors++;
	}
	lua_settop(L, 0);
	call_bound(sc, pc, budget, try);   /* before a long string is pushed: it charges */
	if (lua_getglobal(L, c->name) != LUA_TFUNCTION) {
		lua_settop(L, 0);
		mt_lua_leave(pc, idle);
		return -ENOENT;
	}
	lua_pushinteger(L, cpu);
	if (in)
		lua_pushlstring(L, in, c->in_len);
	else
		lua_pushnil(L);
	rc = lua_pcall(L, 2, 1, 0);
	ns = idle ? local_clock() - pc->start : mt_lua_clock_to_ns(mt_lua_clock() - pc->start);
	if (ns > pc->max_call_ns && !idle)
		pc->max_call_ns = ns;
	if (rc != LUA_OK && try && pc->left < 0 && !pc->committing) {
		rc = -ETIME;   /* out of budget or time, nothing changed: not the script's error */
	} else if (rc != LUA_OK) {
		rc = 0;
		mt_lua_report(sc, pc, L);
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
	mt_lua_leave(pc, idle);
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
	n = mt_lua_out_drain(sc->cpu[o.cpu], u64_to_user_ptr(o.buf), o.size);
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
		st.own_runs += READ_ONCE(pc->own_runs);
		st.skipped += atomic64_read(&pc->skipped);
		st.errors += READ_ONCE(pc->errors);
		st.lost_bytes += READ_ONCE(pc->lost);
		st.arena_peak = max_t(u64, st.arena_peak, READ_ONCE(pc->arena.peak));
		st.arena_failed += READ_ONCE(pc->arena.failed);
		st.pending_bytes += smp_load_acquire(&pc->head) - READ_ONCE(pc->tail);
	}
	st.ncpu = num_possible_cpus();
	for_each_possible_cpu(cpu) {
		st.max_run_ns = max_t(u64, st.max_run_ns, mt_lua_clock_to_ns(READ_ONCE(sc->cpu[cpu]->max_run_clk)));
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
