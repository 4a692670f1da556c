/*
 * mt_hwbp.h - hardware watchpoints for Lua handlers (mt_hwbp.c): stap's
 * kernel.data(ADDRESS)[.length(N)].write|.rw and kernel.data("SYMBOL").
 *
 * A script binds a handler to "hwbp:ACCESS:LEN:TARGET" (translator/kdata.c)
 * as to a catalogue marker; mt_hwbp_get makes that marker, whose hits are
 * the accesses to the watched bytes on any CPU.  The host (mt_lua_host.c)
 * arms and frees it as any other, plus the calls below, all under
 * mt_lock; its hits go through mt_kmarker_fire (mt_dispatch.c) as any
 * other's.  Binding one is root's.
 */
#ifndef MT_HWBP_H
#define MT_HWBP_H

#include <linux/string.h>
#include <linux/types.h>

struct mt_kmarker;

#define MT_HWBP_PREFIX "hwbp:"

static inline bool mt_hwbp_named(const char *name)
{
	return !strncmp(name, MT_HWBP_PREFIX, sizeof(MT_HWBP_PREFIX) - 1);
}

/* The marker of binding name, its watchpoint registered disabled on
 * every CPU (a debug register taken on each); NULL and why in err. */
struct mt_kmarker *mt_hwbp_get(const char *name, char *err, size_t errlen);
bool mt_hwbp_owns(const struct mt_kmarker *m);
/* Enabled once m is armed (its target set); disabled before m is
 * disarmed: the caller then waits for running handlers (mt_hooks_sync). */
int mt_hwbp_arm(struct mt_kmarker *m);
void mt_hwbp_disarm(struct mt_kmarker *m);
/* Unregistered (the debug registers given back) and freed. */
void mt_hwbp_put(struct mt_kmarker *m);

#endif
