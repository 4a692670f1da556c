/*
 * mt_netfilter.h - netfilter hooks for Lua handlers (mt_netfilter.c):
 * stap's netfilter.hook("H").pf("PF")[.priority("N")].
 *
 * A script binds a handler to "netfilter:HOOK:PF:PRIORITY" (numbers) as
 * to a catalogue marker; mt_netfilter_get makes that marker, whose hits
 * are the packets passing the hook in the initial network namespace.
 * The host (mt_lua_host.c) arms and frees it as any other, plus the
 * calls below, all under mt_lock; its hits go through mt_kmarker_fire
 * (mt_dispatch.c) as any other's.  Binding one is root's.
 */
#ifndef MT_NETFILTER_H
#define MT_NETFILTER_H

#include <linux/string.h>
#include <linux/types.h>

struct mt_kmarker;

#define MT_NETFILTER_PREFIX "netfilter:"
/* The handler's values, in this order (translator/elab_point.c):
 * $verdict is the sixth, what guru mode's store writes (mt_kregs.c) */
#define MT_NETFILTER_FORMAT "hooknum %ld skb %ld in %ld out %ld okfn %ld verdict %ld " \
	"pf %ld indev_name %s outdev_name %s length %ld"
#define MT_NETFILTER_VERDICT_ARG 6

static inline bool mt_netfilter_named(const char *name)
{
	return !strncmp(name, MT_NETFILTER_PREFIX, sizeof(MT_NETFILTER_PREFIX) - 1);
}

/* The marker of binding name (not yet registered); NULL and why in err. */
struct mt_kmarker *mt_netfilter_get(const char *name, char *err, size_t errlen);
bool mt_netfilter_owns(const struct mt_kmarker *m);
/* The hook registered once m is armed (its target set); unregistered
 * before m is disarmed: the caller then waits for the hooks running
 * (mt_hooks_sync: netfilter runs its hooks under rcu_read_lock). */
int mt_netfilter_arm(struct mt_kmarker *m);
void mt_netfilter_disarm(struct mt_kmarker *m);
/* Unregistered if still registered, the hooks waited for, freed. */
void mt_netfilter_put(struct mt_kmarker *m);

#endif
