/*
 * mt_hooks.c - the marker registry: which hooks fire which marker, and
 * registering a hook while (and only while) one of its markers is armed.
 *
 * Every function here runs under mt_lock (mt_main.c), so refs, the
 * registration state and the writers of each marker's list of targets
 * need no other protection; hits read the lists under RCU (mt_kmod.h).
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/inetdevice.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "mt_kmod.h"

#define MT_REF(n, f) &mt_m_##n,
struct mt_kmarker *const mt_catalog[] = {
	MT_CATALOG(MT_REF)
	MT_EXTRA(MT_REF)
};
#undef MT_REF
const unsigned mt_catalog_size = ARRAY_SIZE(mt_catalog);

static void find_tracepoint(struct tracepoint *tp, void *priv)
{
	struct mt_hook *h = priv;

	if (!h->tp && strcmp(tp->name, h->name) == 0)
		h->tp = tp;
}

/* A fresh kprobe/kretprobe: a struct kprobe keeps state from a past registration. */
static void prepare(struct mt_hook *h, int disabled)
{
	memset(&h->u, 0, sizeof(h->u));
	switch (h->kind) {
	case MT_HOOK_KPROBE:
		h->u.kp.symbol_name = h->name;
		h->u.kp.pre_handler = h->pre;
		h->u.kp.flags = disabled ? KPROBE_FLAG_DISABLED : 0;
		break;
	case MT_HOOK_KRETPROBE:
		h->u.krp.kp.symbol_name = h->name;
		h->u.krp.kp.flags = disabled ? KPROBE_FLAG_DISABLED : 0;
		h->u.krp.entry_handler = h->entry;
		h->u.krp.handler = h->ret;
		h->u.krp.data_size = h->data_size;
		/* functions that sleep (faults, semaphores) have many callers in flight */
		h->u.krp.maxactive = 64 + 4 * num_possible_cpus();
		break;
	case MT_HOOK_INETADDR:
		h->u.nb.notifier_call = h->notify;
		break;
	}
}

static int hook_register(struct mt_hook *h, int disabled)
{
	switch (h->kind) {
	case MT_HOOK_TRACEPOINT:
		return tracepoint_probe_register(h->tp, h->tp_probe, h);
	case MT_HOOK_KPROBE:
		prepare(h, disabled);
		return register_kprobe(&h->u.kp);
	case MT_HOOK_KRETPROBE:
		prepare(h, disabled);
		return register_kretprobe(&h->u.krp);
	case MT_HOOK_INETADDR:
		prepare(h, disabled);
		return register_inetaddr_notifier(&h->u.nb);
	}
	return -EINVAL;
}

static void hook_unregister(struct mt_hook *h)
{
	switch (h->kind) {
	case MT_HOOK_TRACEPOINT:
		tracepoint_probe_unregister(h->tp, h->tp_probe, h);
		break;
	case MT_HOOK_KPROBE:
		unregister_kprobe(&h->u.kp);
		break;
	case MT_HOOK_KRETPROBE:
		unregister_kretprobe(&h->u.krp);
		break;
	case MT_HOOK_INETADDR:
		unregister_inetaddr_notifier(&h->u.nb);
		break;
	}
}

/*
 * Is the hook usable on this kernel?  Tracepoints: present by name.
 * Probes: a trial registration, disabled so that nothing is armed (the
 * kernel refuses missing symbols and its blacklist; we learn which here,
 * once, instead of at the first start).
 */
static void hook_check(struct mt_hook *h)
{
	if (h->refs || h->error != 1)
		return;  /* seen already (hooks are shared): 1 means unchecked */
	h->error = 0;
	if (h->enable && !*h->enable) {
		h->error = -EPERM;
		return;
	}
	if (h->kind == MT_HOOK_TRACEPOINT) {
		for_each_kernel_tracepoint(find_tracepoint, h);
		if (!h->tp)
			h->error = -ENOENT;
		return;
	}
	if (h->kind == MT_HOOK_INETADDR)
		return;
	h->error = hook_register(h, 1);
	if (!h->error)
		hook_unregister(h);
}

int mt_hooks_init(void)
{
	unsigned i, k;

	for (i = 0; i < mt_catalog_size; i++) {
		struct mt_kmarker *m = mt_catalog[i];
		struct mt_fmt_error err;

		RCU_INIT_POINTER(m->targets, NULL);
		if (mt_fmt_parse(m->recorded, &m->fmt, &err)) {
			pr_err("marktap: marker %s: format \"%s\": offset %u: %s\n",
			       m->name, m->recorded, err.offset, err.message);
			return -EINVAL;
		}
		mt_kaddr_fields(m);
		for (k = 0; k < MT_KMARKER_HOOKS && m->hooks[k]; k++) {
			m->hooks[k]->error = 1;
			m->hooks[k]->refs = 0;
			m->hooks[k]->tp = NULL;
		}
	}
	for (i = 0; i < mt_catalog_size; i++)
		for (k = 0; k < MT_KMARKER_HOOKS && mt_catalog[i]->hooks[k]; k++)
			hook_check(mt_catalog[i]->hooks[k]);
	return 0;
}

void mt_hooks_exit(void)
{
	unsigned i;

	for (i = 0; i < mt_catalog_size; i++)
		mt_kmarker_disarm(mt_catalog[i], NULL);
	mt_hooks_sync();
	rcu_barrier();   /* the lists kfree_rcu frees, before the module's text goes */
}

int mt_kmarker_available(const struct mt_kmarker *m)
{
	unsigned k;

	if (m->unavailable)
		return 0;
	if (!m->hooks[0])
		return 1;  /* fired by the module itself (state dump) */
	for (k = 0; k < MT_KMARKER_HOOKS && m->hooks[k]; k++)
		if (!m->hooks[k]->error)
			return 1;
	return 0;
}

void mt_kmarker_why(const struct mt_kmarker *m, char *buf, size_t len)
{
	const struct mt_hook *h = m->hooks[0];
	static const char *const kinds[] = { "tracepoint", "kprobe", "kretprobe", "notifier" };

	if (m->unavailable) {
		strscpy(buf, m->unavailable, len);
		return;
	}
	if (!h) {
		strscpy(buf, "no hook", len);
		return;
	}
	snprintf(buf, len, "%s %s: %s (%d)%s%s", kinds[h->kind], h->name,
		 h->error == -ENOENT ? "not in this kernel" :
		 h->error == -EINVAL ? "refused (blacklisted or not probeable)" :
		 h->error == -EPERM ? "disabled by a module parameter" :
		 "cannot register", h->error, h->hint ? "; " : "", h->hint ? h->hint : "");
}

/* Register m's usable hooks (each once, shared by its markers): how many. */
static int hooks_get(struct mt_kmarker *m)
{
	unsigned k;
	int armed = 0;

	for (k = 0; k < MT_KMARKER_HOOKS && m->hooks[k]; k++) {
		struct mt_hook *h = m->hooks[k];
		int rc;

		if (h->error)
			continue;
		if (h->refs == 0) {
			rc = hook_register(h, 0);
			if (rc) {
				pr_warn("marktap: %s: cannot register %s: %d\n", m->name, h->name, rc);
				continue;
			}
		}
		h->refs++;
		armed++;
	}
	return armed;
}

/* Take m's references back; hooks left without a marker are unregistered. */
static void hooks_put(struct mt_kmarker *m)
{
	unsigned k;

	for (k = 0; k < MT_KMARKER_HOOKS && m->hooks[k]; k++) {
		struct mt_hook *h = m->hooks[k];

		if (h->error || h->refs == 0)
			continue;
		if (--h->refs == 0)
			hook_unregister(h);
	}
}

/* m's list of targets: only changed under mt_lock, where this runs */
static struct mt_ktargets *targets_of(struct mt_kmarker *m)
{
	return rcu_dereference_protected(m->targets, true);
}

int mt_kmarker_arm(struct mt_kmarker *m, const struct mt_ktarget *t)
{
	struct mt_ktargets *old = targets_of(m), *new;
	unsigned n = old ? old->n : 0;

	if (!mt_kmarker_available(m))
		return 0;
	new = kmalloc(struct_size(new, t, n + 1), GFP_KERNEL);
	if (!new)
		return 0;
	if (n)
		memcpy(new->t, old->t, n * sizeof(new->t[0]));
	new->t[n] = *t;
	new->n = n + 1;
	/*
	 * The list first: the hooks' first hits must find the marker armed.
	 * rcu_assign_pointer orders the list's contents before the pointer
	 * that hits read (rcu_dereference_sched in mt_dispatch.c).
	 */
	rcu_assign_pointer(m->targets, new);
	if (old) {
		kfree_rcu(old, rcu);   /* hits walking it finish first */
		return 1;
	}
	if (!m->hooks[0] || hooks_get(m))
		return 1;
	/* no hook registered: no hit can have seen the list */
	RCU_INIT_POINTER(m->targets, NULL);
	kfree_rcu(new, rcu);
	return 0;
}

void mt_kmarker_disarm(struct mt_kmarker *m, const void *owner)
{
	struct mt_ktargets *old = targets_of(m), *new = NULL;
	unsigned i, keep = 0;

	if (!old)
		return;
	for (i = 0; i < old->n; i++)
		keep += owner && old->t[i].owner != owner;
	if (keep == old->n)
		return;
	if (keep) {
		/* (GFP_NOFAIL: a closing file must be able to take its targets out) */
		new = kmalloc(struct_size(new, t, keep), GFP_KERNEL | __GFP_NOFAIL);
		new->n = 0;
		for (i = 0; i < old->n; i++)
			if (old->t[i].owner != owner)
				new->t[new->n++] = old->t[i];
	}
	rcu_assign_pointer(m->targets, new);
	if (!new && m->hooks[0])
		hooks_put(m);
	kfree_rcu(old, rcu);
}

/*
 * Wait until no probe of ours runs: tracepoint probes (RCU-sched and the
 * tracepoint SRCU), kprobe handlers (preemption disabled), and the hits
 * they dispatch, to the writer or to Lua (preemption disabled in
 * mt_kmarker_fire).
 */
void mt_hooks_sync(void)
{
	tracepoint_synchronize_unregister();
	synchronize_rcu();
}
