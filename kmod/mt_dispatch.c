/*
 * mt_dispatch.c - the kernel's hit path: where a hit of a marker goes.
 *
 * Every hook calls mt_kmarker_fire with the values of its marker's format:
 * the tracepoint probes and kprobes of mt_src_*.c, the kernel function
 * probes of mt_kprobe.c, the state dump (mt_statedump.c).  The marker's
 * target (mt_kmod.h), read once, says where the hit goes:
 *
 *   disarmed          nowhere: the call returns at once
 *   an event id       the recorder: mt_write_hit (mt_write.c) records the
 *                     values into the live session's ring
 *   Lua binding n     the Lua host: mt_lua_fire (mt_lua_run.c) runs
 *                     binding n's native plan (mt_lua_nat.c) or, when it
 *                     has none or the plan leaves the hit to Lua, its Lua
 *                     handler
 *
 * Preemption is off from the read of the target to the end of the hit:
 * the recorder reserves and commits on one CPU's ring, a Lua handler runs
 * on the CPU whose state it took; and every hit is an RCU-sched read-side
 * section, which mt_hooks_sync() waits for when a session or a script
 * stops.  Each side keeps its own state (the live session, the live
 * script) and reads it with acquire; neither calls the other.
 */
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/preempt.h>
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_session.h"
#include "mt_klua.h"

#ifdef MT_LUA
static void fire_lua(struct mt_kmarker *m, unsigned binding, va_list ap)
{
	struct mt_args args;

	/* a handler that reads no value (c[execname()]++) needs none */
	if (m->lua_values)
		mt_event_fetch(&m->fmt, ap, &args);
	mt_lua_fire(m, binding, &args);   /* hides addresses itself */
}
#else
/* without Lua in the module nothing arms a marker for Lua */
static void fire_lua(struct mt_kmarker *m, unsigned binding, va_list ap)
{
}
#endif

void mt_kmarker_fire(struct mt_kmarker *m, ...)
{
	va_list ap;
	int target = READ_ONCE(m->target);

	/* an event id and a Lua target never meet */
	BUILD_BUG_ON(MT_EVENTS_MAX > MT_TARGET_LUA);
	if (!mt_target_armed(target))
		return;
	preempt_disable_notrace();
	va_start(ap, m);
	if (mt_target_is_lua(target))
		fire_lua(m, mt_target_binding(target), ap);
	else
		mt_write_hit(m, mt_target_event_id(target), ap);
	va_end(ap);
	preempt_enable_notrace();
}
