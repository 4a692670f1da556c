/*
 * mt_kprobe.h - kernel function probes for Lua handlers (mt_kprobe.c).
 *
 * A script binds a handler to "kprobe:[MODULE:]SYMBOL[:return[:MAXACTIVE]]"
 * as to a catalogue marker; mt_kprobe_get makes that marker, whose hits
 * are the function's calls (or returns).  The host (mt_lua_host.c) arms
 * and frees it as any other, plus the calls below, all under mt_lock; its
 * hits go through mt_kmarker_fire (mt_dispatch.c) as any other's.
 */
#ifndef MT_KPROBE_H
#define MT_KPROBE_H

#include <linux/types.h>

struct mt_kmarker;

#define MT_KPROBE_PREFIX "kprobe:"
#define MT_KPROBE_ARGS 6        /* the register arguments a handler gets */

static inline bool mt_kprobe_named(const char *name)
{
	return !strncmp(name, MT_KPROBE_PREFIX, sizeof(MT_KPROBE_PREFIX) - 1);
}

/* The marker of binding name, its probe registered disabled; NULL and
 * why (the kernel's refusal) in err. */
struct mt_kmarker *mt_kprobe_get(const char *name, char *err, size_t errlen);
bool mt_kprobe_owns(const struct mt_kmarker *m);
/* Enabled once m is armed (its id set); disabled before m is disarmed:
 * the caller then waits for running handlers (mt_hooks_sync). */
int mt_kprobe_arm(struct mt_kmarker *m);
void mt_kprobe_disarm(struct mt_kmarker *m);
/* Unregistered and freed; _many: those of ms[0..n) that are kernel
 * function probes, waiting once for all, their slots set to NULL (the
 * others are left alone). */
void mt_kprobe_put(struct mt_kmarker *m);
void mt_kprobe_put_many(struct mt_kmarker **ms, unsigned n);
/* At marktap.ko's exit, after every script is freed. */
void mt_kprobe_exit(void);

#endif
