/*
 * mt_dispatch.c - the kernel's hit path: where a hit of a marker goes.
 *
 * Every hook calls mt_kmarker_fire with the values of its marker's format:
 * the tracepoint probes and kprobes of mt_src_*.c, the kernel function
 * probes of mt_kprobe.c, the watchpoints of mt_hwbp.c (from the debug
 * exception, an NMI to the kernel), the state dump (mt_statedump.c).
 * The marker's list of targets (mt_kmod.h), read once, says where the
 * hit goes; each target, in turn, gets the values from the start of the
 * argument list:
 *
 *   no list           nowhere: the call returns at once
 *   a recording       mt_write_hit (mt_write.c) records the values into
 *                     that recording's ring of this CPU
 *   a script          mt_lua_fire (mt_lua_run.c) runs the binding's
 *                     native plan (mt_lua_nat.c) or, when it has none or
 *                     the plan leaves the hit to Lua, its Lua handler
 *
 * Preemption is off from the read of the list to the end of the hit: the
 * recorder reserves and commits on one CPU's ring, a Lua handler runs on
 * the CPU whose state it took; and every hit is an RCU read-side section,
 * which kfree_rcu of a replaced list and mt_hooks_sync() (when a session
 * or a script stops) wait for.  Each target keeps its own state (its
 * recording, its script) and none calls another: a slow handler of one
 * script delays the next target of the same hit by at most its own time
 * bound.
 */
#include <linux/compiler.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_session.h"
#include "mt_klua.h"

#ifdef MT_LUA
static void fire_lua(struct mt_kmarker *m, const struct mt_ktarget *t, va_list ap)
{
	struct mt_args args;

	/* a handler that reads no value (c[execname()]++) needs none */
	if (t->values)
		mt_event_fetch(&m->fmt, ap, &args);
	mt_lua_fire(m, t->owner, t->id, t->values, &args);   /* hides addresses itself */
}
#else
/* without Lua in the module nothing arms a marker for Lua */
static void fire_lua(struct mt_kmarker *m, const struct mt_ktarget *t, va_list ap)
{
}
#endif

/* Each of m's targets (owner's only, if set), the values taken from ap
 * afresh for each: a target may change its copy (mt_hide_kaddr). */
static void dispatch(struct mt_kmarker *m, const void *owner, va_list ap)
{
	const struct mt_ktargets *ts = rcu_dereference_sched(m->targets);
	unsigned i;

	for (i = 0; ts && i < ts->n; i++) {
		const struct mt_ktarget *t = &ts->t[i];
		va_list aq;

		if (owner && t->owner != owner)
			continue;
		va_copy(aq, ap);
		if (t->kind == MT_TARGET_LUA)
			fire_lua(m, t, aq);
		else
			mt_write_hit(t->owner, m, t->id, aq);
		va_end(aq);
	}
}

void mt_kmarker_fire(struct mt_kmarker *m, ...)
{
	va_list ap;

	if (!rcu_access_pointer(m->targets))
		return;
	preempt_disable_notrace();
	va_start(ap, m);
	dispatch(m, NULL, ap);
	va_end(ap);
	preempt_enable_notrace();
}

void mt_kmarker_fire_to(const void *owner, struct mt_kmarker *m, ...)
{
	va_list ap;

	if (!rcu_access_pointer(m->targets))
		return;
	preempt_disable_notrace();
	va_start(ap, m);
	dispatch(m, owner, ap);
	va_end(ap);
	preempt_enable_notrace();
}
