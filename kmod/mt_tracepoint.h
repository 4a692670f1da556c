/*
 * mt_tracepoint.h - the kernel's tracepoints for Lua handlers
 * (mt_tracepoint.c): kernel.trace("NAME").
 *
 * A script binds a handler to "tracepoint:[MODULE:]NAME:NARGS" as to a catalogue
 * marker; mt_tracepoint_get makes that marker, whose hits are the
 * tracepoint's.  The host (mt_lua_host.c) arms and frees it as any
 * other, plus the calls below, all under mt_lock; its hits go through
 * mt_kmarker_fire (mt_dispatch.c) as any other's.
 */
#ifndef MT_TRACEPOINT_H
#define MT_TRACEPOINT_H

#include <linux/string.h>
#include <linux/types.h>

struct mt_kmarker;

#define MT_TRACEPOINT_PREFIX "tracepoint:"
/* the parameters read: those in registers after data, and past them (a
 * tracepoint's whole count only) those on the stack, up to the most any
 * tracepoint of Linux 6.1 has */
#define MT_TRACEPOINT_ARGS_IN_REGS 5
#define MT_TRACEPOINT_ARGS 12

static inline bool mt_tracepoint_named(const char *name)
{
	return !strncmp(name, MT_TRACEPOINT_PREFIX, sizeof(MT_TRACEPOINT_PREFIX) - 1);
}

/* The marker of binding name, its tracepoint found (not yet probed);
 * NULL and why in err.  privileged: the loader has CAP_SYS_ADMIN (its
 * word on the parameters' count is taken when the kernel's is not). */
struct mt_kmarker *mt_tracepoint_get(const char *name, bool privileged, char *err, size_t errlen);
bool mt_tracepoint_owns(const struct mt_kmarker *m);
/* The probe registered once m is armed (its target set); unregistered
 * before m is disarmed: the caller then waits for running probes
 * (mt_hooks_sync). */
int mt_tracepoint_arm(struct mt_kmarker *m);
void mt_tracepoint_disarm(struct mt_kmarker *m);
/* Unregistered if still registered, the probes waited for, freed. */
void mt_tracepoint_put(struct mt_kmarker *m);
/* At marktap.ko's exit, every script gone: the modules' notifier. */
void mt_tracepoint_exit(void);

#endif
