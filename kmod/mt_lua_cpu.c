/*
 * mt_lua_cpu.c - what a CPU's Lua state has besides Lua: its extra space,
 * its output ring, and the bounds of the run in it (the run clock and
 * MAXACTION's budget).
 *
 * Lua's core (luai_budgetspent in lua/mt_lua_one.c) and our library
 * (mt_lua_lib.c) call back into these; the host (mt_lua_host.c) and the
 * hit's run (mt_lua_run.c) set them up.  Nothing here calls Lua.
 *
 * Every run, a hit's or a call's, is bounded twice: by MAXACTION's budget
 * (lvm.c's function entries and backward jumps, the libraries' work in
 * bytes and elements, the allocator's bytes: patches/03-05) and by a time
 * bound, looked at each time a slice of the budget is spent.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/stddef.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif
/* Lua's headers last: they take the kernel's `current` away (mt_lua_kernel.h) */
#include "lua.h"
#include "mt_klua.h"
#include "mt_klua_int.h"

struct mt_lua_extra *mt_lua_extra(lua_State *L)
{
	/* the struct lives in the bytes Lua keeps before each state, where
	 * luaconf.h's LUAI_MAXCCALLS and luai_budget read two of its fields */
	BUILD_BUG_ON(sizeof(struct mt_lua_extra) > LUA_EXTRASPACE);
	BUILD_BUG_ON(offsetof(struct mt_lua_extra, cstack_limit) != 0);
	BUILD_BUG_ON(offsetof(struct mt_lua_extra, budget) != sizeof(unsigned long));
	return lua_getextraspace(L);
}

void mt_lua_task_stack(struct mt_lua_cpu *pc)
{
	/* an ioctl runs on its task's stack, which grows down to
	 * task_stack_page; interrupts on top of it switch to their own */
	pc->extra->cstack_limit = (unsigned long)task_stack_page(get_current()) +
				  MT_LUA_TASK_STACK_RESERVE;
}

/* --- output: a byte ring per CPU, one writer (the busy flag's owner), one reader */

void mt_lua_out(struct mt_lua_cpu *pc, const char *s, size_t n)
{
	u64 tail = smp_load_acquire(&pc->tail);
	size_t size = pc->script->out_size;

	if (n > size - (pc->head - tail)) {
		pc->lost += n;   /* whole pieces only: lines stay whole */
		return;
	}
	while (n) {
		size_t at = pc->head & (size - 1);
		size_t k = min(n, size - at);

		memcpy(pc->out + at, s, k);
		s += k;
		n -= k;
		/* release: the bytes before the head that says they are there */
		smp_store_release(&pc->head, pc->head + k);
	}
}

long mt_lua_out_drain(struct mt_lua_cpu *pc, char __user *buf, size_t size)
{
	u64 head = smp_load_acquire(&pc->head);
	size_t n = min_t(u64, size, head - pc->tail), done = 0, ring = pc->script->out_size;

	while (done < n) {
		size_t at = (pc->tail + done) & (ring - 1);
		size_t k = min(n - done, ring - at);

		if (copy_to_user(buf + done, pc->out + at, k))
			return -EFAULT;
		done += k;
	}
	smp_store_release(&pc->tail, pc->tail + n);
	return (long)n;
}

/* --- the run clock (mt_klua_int.h) */

bool mt_lua_tsc;

void mt_lua_clock_init(void)
{
#ifdef CONFIG_X86
	mt_lua_tsc = boot_cpu_has(X86_FEATURE_TSC) && tsc_khz;
#endif
}

u64 mt_lua_ns_to_clock(u64 ns)
{
#ifdef CONFIG_X86
	if (mt_lua_tsc)
		return mul_u64_u32_div(ns, tsc_khz, NSEC_PER_MSEC);
#endif
	return ns;
}

u64 mt_lua_clock_to_ns(u64 c)
{
#ifdef CONFIG_X86
	if (mt_lua_tsc)
		return mul_u64_u32_div(c, NSEC_PER_MSEC, tsc_khz);
#endif
	return c;
}

/* --- the run's budget and time bound */

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

void mt_lua_set_bound(struct mt_lua_cpu *pc, s64 budget, u64 bound, const char *msg)
{
	int slice = (int)min_t(s64, budget, MT_LUA_SLICE);

	pc->extra->budget = slice;
	pc->left = budget - slice;
	pc->bound = bound;
	pc->bound_msg = msg;
	pc->timed_out = false;
	pc->start = pc->may_sleep ? local_clock() : mt_lua_clock();
}

void mt_lua_set_call_bound(struct mt_lua_cpu *pc, s64 budget)
{
	const struct mt_lua_script *sc = pc->script;

	if (pc->may_sleep)
		mt_lua_set_bound(pc, budget, MT_LUA_LOAD_NS, " (the load ran past its time bound, 10 s)");
	else
		mt_lua_set_bound(pc, budget, sc->call_clk, sc->call_msg);
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
	 * would be charged, and fail again while it is being made.
	 * mt_lua_report says which bound it was. */
	x->budget = 0;
	pc->left = -1;
	if ((pc->may_sleep ? local_clock() : mt_lua_clock()) - pc->start > pc->bound)
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
