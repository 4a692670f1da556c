/*
 * mt_kprobe.c - kernel function probes: a kprobe or kretprobe per binding.
 *
 * What crosses from the translator (translator/btf.c) is a marker name:
 *
 *	kprobe:[MODULE:]SYMBOL[:return[:MAXACTIVE]]
 *
 * bound with probe(name, fn) as a catalogue marker is.  SYMBOL is the
 * function's name in kallsyms (MODULE:SYMBOL one of a module's, as
 * register_kprobe's symbol_name takes it); ":return" a kretprobe, with
 * MAXACTIVE instances in flight (0 or none: 64 + 4 per CPU, as the hooks).
 * The marker's format is fixed, integers as the registers hold them:
 *
 *	arg1 %ld ... arg6 %ld             at the call
 *	arg1 %ld ... arg6 %ld return %ld  at the return: the call's arguments
 *	                                  (kept at entry in the instance's
 *	                                  data) and regs_return_value
 *
 * Types, names and member offsets stay in the translator: the handler's
 * Lua reads what it needs with kernel_read (mt_lua_lib.c).
 *
 * The probe is registered disabled at load, so that the kernel's refusal
 * (no such symbol, its kprobe blacklist, not a function entry) is a load
 * error naming the reason; enabled at start, disabled at stop (the host
 * then waits for the handlers: mt_hooks_sync), unregistered when the
 * script is freed.  A hit fires the marker as the hooks fire theirs
 * (mt_kmarker_fire, mt_dispatch.c), so the Lua runs with the same budget,
 * time bound, busy flag and skips as a kernel.mark handler.
 */
#include <linux/ctype.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_kprobe.h"
#include "mt_kregs.h"

#define FMT_ENTRY "arg1 %ld arg2 %ld arg3 %ld arg4 %ld arg5 %ld arg6 %ld"
#define FMT_RETURN FMT_ENTRY " return %ld"
#define NAME_MAX_LEN (sizeof(MT_KPROBE_PREFIX) + MODULE_NAME_LEN + KSYM_NAME_LEN + 32)

struct mt_kprobe {
	struct mt_kmarker m;            /* the host's view; first */
	char name[NAME_MAX_LEN];        /* the binding */
	char sym[MODULE_NAME_LEN + KSYM_NAME_LEN + 1];
	bool ret, enabled;
	union {
		struct kprobe kp;
		struct kretprobe krp;
	} u;
};

static const char mt_kprobe_source[] = "kprobe";

struct args {
	unsigned long v[MT_KPROBE_ARGS];
};

static void take_args(struct pt_regs *regs, struct args *a)
{
	unsigned i;

	for (i = 0; i < MT_KPROBE_ARGS; i++)
		a->v[i] = regs_get_kernel_argument(regs, i);
}

static int on_call(struct kprobe *kp, struct pt_regs *regs)
{
	struct mt_kprobe *p = container_of(kp, struct mt_kprobe, u.kp);
	struct args a;

	struct mt_kregs k;

	take_args(regs, &a);
	mt_kregs_enter(&k, regs, false);   /* guru mode's stores (mt_kregs.c) */
	mt_kmarker_fire(&p->m, a.v[0], a.v[1], a.v[2], a.v[3], a.v[4], a.v[5]);
	mt_kregs_leave(&k);
	return 0;
}

/* the entry of a return probe: the arguments, for the return's handler */
static int on_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	take_args(regs, (struct args *)ri->data);
	return 0;
}

static int on_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *krp = get_kretprobe(ri);
	struct mt_kprobe *p;
	const struct args *a = (const struct args *)ri->data;
	struct mt_kregs k;

	if (!krp)
		return 0;
	p = container_of(krp, struct mt_kprobe, u.krp);
	mt_kregs_enter(&k, regs, true);
	mt_kmarker_fire(&p->m, a->v[0], a->v[1], a->v[2], a->v[3], a->v[4], a->v[5],
			(long)regs_return_value(regs));
	mt_kregs_leave(&k);
	return 0;
}

/* "SYM[:return[:N]]" (after the prefix; SYM may be "MODULE:NAME") into p */
static int parse(struct mt_kprobe *p, const char *spec, int *maxactive)
{
	char buf[sizeof(p->sym) + 32];
	char *last, *ret;

	if (strscpy(buf, spec, sizeof(buf)) < 0 || !buf[0])
		return -EINVAL;
	*maxactive = 0;
	last = strrchr(buf, ':');
	if (last && isdigit(last[1])) {
		if (kstrtoint(last + 1, 10, maxactive) || *maxactive < 0 || *maxactive > 4096)
			return -EINVAL;
		*last = '\0';
		if (!(ret = strrchr(buf, ':')) || strcmp(ret, ":return"))
			return -EINVAL;   /* a maximum only for a return */
	}
	ret = strrchr(buf, ':');
	if (ret && !strcmp(ret, ":return")) {
		p->ret = true;
		*ret = '\0';
	}
	if (!buf[0] || strchr(buf, ':') != strrchr(buf, ':') || strscpy(p->sym, buf, sizeof(p->sym)) < 0)
		return -EINVAL;
	return 0;
}

static void why(const struct mt_kprobe *p, int rc, char *err, size_t len)
{
	scnprintf(err, len, "cannot probe kernel function %s: %s (%d)", p->sym,
		  rc == -ENOENT ? "no such symbol in kallsyms (inlined, renamed by the compiler, "
				  "or its module not loaded)" :
		  rc == -EINVAL ? "the kernel refuses to kprobe it (its kprobe blacklist: "
				  "NOKPROBE_SYMBOL, noinstr, __kprobes; or not a function entry)" :
		  rc == -EPERM ? "marktap.ko's own code" :
		  rc == -EBUSY ? "already probed in a way kprobes cannot share" :
		  rc == -EILSEQ ? "not at an instruction boundary" : "registration failed", rc);
}

static int register_disabled(struct mt_kprobe *p, int maxactive)
{
	struct kprobe *kp = p->ret ? &p->u.krp.kp : &p->u.kp;
	int rc;

	kp->symbol_name = p->sym;
	kp->flags = KPROBE_FLAG_DISABLED;
	if (!p->ret) {
		kp->pre_handler = on_call;
		rc = register_kprobe(kp);
	} else {
		p->u.krp.entry_handler = on_entry;
		p->u.krp.handler = on_return;
		p->u.krp.data_size = sizeof(struct args);
		p->u.krp.maxactive = maxactive ? maxactive : 64 + 4 * num_possible_cpus();
		rc = register_kretprobe(&p->u.krp);
	}
	if (rc)
		return rc;
	/* our own code: a hit there would run inside the handler it calls */
	if (within_module((unsigned long)kp->addr, THIS_MODULE)) {
		if (p->ret)
			unregister_kretprobe(&p->u.krp);
		else
			unregister_kprobe(kp);
		return -EPERM;
	}
	return 0;
}

struct mt_kmarker *mt_kprobe_get(const char *name, char *err, size_t errlen)
{
	struct mt_kprobe *p;
	struct mt_fmt_error ferr;
	int maxactive, rc;

	if (!mt_kprobe_named(name) || strlen(name) >= NAME_MAX_LEN) {
		scnprintf(err, errlen, "bad kernel function binding \"%s\"", name);
		return NULL;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		scnprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (parse(p, name + sizeof(MT_KPROBE_PREFIX) - 1, &maxactive)) {
		scnprintf(err, errlen, "bad kernel function binding \"%s\" (kprobe:[MODULE:]SYMBOL"
			  "[:return[:MAXACTIVE]])", name);
		kfree(p);
		return NULL;
	}
	strscpy(p->name, name, sizeof(p->name));
	p->m.name = p->name;
	p->m.format = p->m.recorded = p->ret ? FMT_RETURN : FMT_ENTRY;
	p->m.source = mt_kprobe_source;
	if (mt_fmt_parse(p->m.recorded, &p->m.fmt, &ferr)) {
		scnprintf(err, errlen, "kernel function format: %s", ferr.message);
		kfree(p);
		return NULL;
	}
	rc = register_disabled(p, maxactive);
	if (rc) {
		why(p, rc, err, errlen);
		kfree(p);
		return NULL;
	}
	return &p->m;
}

bool mt_kprobe_owns(const struct mt_kmarker *m)
{
	return m && m->source == mt_kprobe_source;
}

int mt_kprobe_arm(struct mt_kmarker *m)
{
	struct mt_kprobe *p = container_of(m, struct mt_kprobe, m);
	int rc;

	if (p->enabled)
		return 0;
	rc = p->ret ? enable_kretprobe(&p->u.krp) : enable_kprobe(&p->u.kp);
	if (rc)
		pr_warn("marktap: %s: cannot enable the probe: %d\n", p->name, rc);
	p->enabled = !rc;
	return rc;
}

void mt_kprobe_disarm(struct mt_kmarker *m)
{
	struct mt_kprobe *p = container_of(m, struct mt_kprobe, m);

	if (!p->enabled)
		return;
	if (p->ret)
		disable_kretprobe(&p->u.krp);
	else
		disable_kprobe(&p->u.kp);
	p->enabled = false;
}

void mt_kprobe_put(struct mt_kmarker *m)
{
	struct mt_kprobe *p = container_of(m, struct mt_kprobe, m);

	/* waits for the handlers running (and, for a kretprobe, frees the
	 * instances in flight: their returns no longer call us) */
	if (p->ret)
		unregister_kretprobe(&p->u.krp);
	else
		unregister_kprobe(&p->u.kp);
	kfree(p);
}
