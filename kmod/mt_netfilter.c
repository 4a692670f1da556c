/*
 * mt_netfilter.c - netfilter probes: one netfilter hook per binding.
 *
 * What crosses from the translator (translator/elab_point.c) is a marker
 * name:
 *
 *	netfilter:HOOK:PF:PRIORITY
 *
 * bound with probe(name, fn) as a catalogue marker is, all three numbers
 * (the translator knows stap's names, NF_INET_LOCAL_IN, NFPROTO_IPV4...).
 * The marker's format is fixed (MT_NETFILTER_FORMAT): the values of stap's
 * netfilter probes ($hooknum, $skb, $in, $out, $okfn, $verdict), then
 * what the handler would otherwise read from kernel memory: the protocol
 * family, the names of the input and output devices ("" for none) and the
 * packet's length.  What the packet holds (addresses, ports) is read by
 * the handler from $skb through the kernel's BTF (tapsets/netfilter.stp),
 * root's as every kernel read is.
 *
 * The hook is registered in the initial network namespace (the machine's
 * own interfaces, as stap's) when the binding is armed, and unregistered
 * when it is disarmed; the host then waits for the hooks running
 * (mt_hooks_sync: netfilter calls its hooks under rcu_read_lock), and
 * freeing waits again if it had to unregister.
 *
 * The verdict: a hit's handlers run with the packet accepted; guru mode's
 * `$verdict = nf_drop` stores through kernel_store into this hit's slot
 * (mt_kregs.c), which takes NF_DROP and NF_ACCEPT only (anything else is
 * a handler error and the packet passes).  A handler that is skipped (its
 * CPU's state busy, the overload guard) or fails before its store leaves
 * the packet accepted: a script never holds packets it did not decide on,
 * and the hook never returns NF_STOLEN, NF_QUEUE or NF_REPEAT, whose
 * contracts (the skb's owner, a queue handler) a script cannot keep.
 * Binding a hook at all is root's (mt_lua_host.c): every packet of the
 * machine passes it.
 */
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/preempt.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/net_namespace.h>
#include "mt_kmod.h"
#include "mt_netfilter.h"
#include "mt_kregs.h"

struct mt_netfilter {
	struct mt_kmarker m;            /* the host's view; first */
	char name[sizeof(MT_NETFILTER_PREFIX) + 40];   /* the binding */
	struct nf_hook_ops ops;
	bool registered;
};

static const char mt_netfilter_source[] = "netfilter";

static unsigned int on_packet(void *priv, struct sk_buff *skb, const struct nf_hook_state *state)
{
	struct mt_netfilter *p = priv;
	const struct net_device *in = state->in, *out = state->out;
	unsigned int verdict = NF_ACCEPT;
	struct mt_kregs k;

	/*
	 * The hit's slot is this CPU's (mt_kregs.c) from enter to leave, and
	 * its handlers run on this CPU's Lua state: no migration in between.
	 * Hooks may run in process context with preemption on (local_out),
	 * or in softirq.
	 */
	preempt_disable_notrace();
	mt_kregs_enter(&k, NULL, false);
	k.verdict = &verdict;
	mt_kmarker_fire(&p->m, (long)state->hook, (long)skb, (long)in, (long)out,
			(long)(unsigned long)state->okfn, (long)NF_ACCEPT, (long)state->pf,
			in ? in->name : "", out ? out->name : "", (long)skb->len);
	mt_kregs_leave(&k);
	preempt_enable_notrace();
	/* the slot only ever holds NF_DROP or NF_ACCEPT (mt_kregs_store) */
	return verdict == NF_DROP ? NF_DROP : NF_ACCEPT;
}

/* "HOOK:PF:PRIORITY" into p->ops, checked as netfilter would (it warns
 * on a hook number past its tables) */
static int parse(struct mt_netfilter *p, const char *spec)
{
	char buf[40], *pf, *prio;
	unsigned hook, family;
	int priority;

	if (strscpy(buf, spec, sizeof(buf)) < 0 || !(pf = strchr(buf, ':')))
		return -EINVAL;
	*pf++ = '\0';
	if (!(prio = strchr(pf, ':')))
		return -EINVAL;
	*prio++ = '\0';
	if (kstrtouint(buf, 10, &hook) || kstrtouint(pf, 10, &family) || kstrtoint(prio, 10, &priority))
		return -EINVAL;
	switch (family) {
	case NFPROTO_IPV4:
	case NFPROTO_IPV6:
	case NFPROTO_BRIDGE:
		if (hook >= NF_INET_NUMHOOKS)
			return -ERANGE;
		break;
	case NFPROTO_ARP:
		if (hook >= NF_ARP_NUMHOOKS)
			return -ERANGE;
		break;
	default:
		return -EAFNOSUPPORT;   /* netdev and inet hooks need a device */
	}
	p->ops.hook = on_packet;
	p->ops.priv = p;
	p->ops.pf = (u8)family;
	p->ops.hooknum = hook;
	p->ops.priority = priority;
	return 0;
}

struct mt_kmarker *mt_netfilter_get(const char *name, char *err, size_t errlen)
{
	struct mt_netfilter *p;
	struct mt_fmt_error ferr;
	int rc;

	if (!mt_netfilter_named(name) || strlen(name) >= sizeof(p->name)) {
		scnprintf(err, errlen, "bad netfilter binding \"%s\"", name);
		return NULL;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		scnprintf(err, errlen, "out of memory");
		return NULL;
	}
	rc = parse(p, name + sizeof(MT_NETFILTER_PREFIX) - 1);
	if (rc) {
		scnprintf(err, errlen, rc == -EINVAL ? "bad netfilter binding \"%s\" (netfilter:HOOK:PF:PRIORITY)" :
			  rc == -ERANGE ? "%s: no such hook in that protocol family" :
			  "%s: marktap hooks the ipv4, ipv6, arp and bridge families only", name);
		kfree(p);
		return NULL;
	}
	strscpy(p->name, name, sizeof(p->name));
	p->m.name = p->name;
	p->m.format = p->m.recorded = MT_NETFILTER_FORMAT;
	p->m.source = mt_netfilter_source;
	if (mt_fmt_parse(p->m.recorded, &p->m.fmt, &ferr)) {
		scnprintf(err, errlen, "netfilter format: %s", ferr.message);
		kfree(p);
		return NULL;
	}
	/* skb, in, out, okfn: kernel addresses (hashed for a loader who may
	 * not see them: mt_lua_fire) */
	p->m.kaddr_mask = 0x1e;
	return &p->m;
}

bool mt_netfilter_owns(const struct mt_kmarker *m)
{
	return m && m->source == mt_netfilter_source;
}

int mt_netfilter_arm(struct mt_kmarker *m)
{
	struct mt_netfilter *p = container_of(m, struct mt_netfilter, m);
	int rc;

	if (p->registered)
		return 0;
	rc = nf_register_net_hook(&init_net, &p->ops);
	if (rc)
		pr_warn("marktap: %s: cannot register the netfilter hook: %d\n", p->name, rc);
	p->registered = !rc;
	return rc;
}

void mt_netfilter_disarm(struct mt_kmarker *m)
{
	struct mt_netfilter *p = container_of(m, struct mt_netfilter, m);

	if (!p->registered)
		return;
	/* packets already in the hook finish it: the caller waits for them */
	nf_unregister_net_hook(&init_net, &p->ops);
	p->registered = false;
}

void mt_netfilter_put(struct mt_kmarker *m)
{
	struct mt_netfilter *p = container_of(m, struct mt_netfilter, m);

	if (p->registered) {
		mt_netfilter_disarm(m);
		/* no packet may still be in on_packet with p, nor an old
		 * table of hooks point at p->ops */
		synchronize_net();
	}
	kfree(p);
}
