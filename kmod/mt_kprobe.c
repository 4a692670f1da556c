/*
 * mt_kprobe.c - kernel function probes: a kprobe or kretprobe per binding.
 *
 * What crosses from the translator (translator/btf.c) is a marker name:
 *
 *	kprobe:[MODULE:]SYMBOL[:return[:MAXACTIVE][:entry]]
 *
 * bound with probe(name, fn) as a catalogue marker is.  SYMBOL is the
 * function's name in kallsyms (MODULE:SYMBOL one of a module's, as
 * register_kprobe's symbol_name takes it), or 0xADDRESS (stap's
 * kprobe.statement(ADDR).absolute: the kernel checks that it is an
 * instruction of its text); ":return" a kretprobe, with
 * MAXACTIVE instances in flight (0 or none: 64 + 4 per CPU, as the hooks).
 * The marker's format is fixed, integers as the registers hold them:
 *
 *	arg1 %ld ... arg6 %ld             at the call
 *	arg1 %ld ... arg6 %ld return %ld  at the return: the call's arguments
 *	                                  (kept at entry in the instance's
 *	                                  data) and regs_return_value
 *	... return %ld cookie %ld entry %ld
 *	                                  with ":entry": the marker fires at
 *	                                  the call too (entry 1, return 0),
 *	                                  then at the return (entry 0), both
 *	                                  with the call's cookie, a number
 *	                                  no other call in flight has: what
 *	                                  stap's @entry(expr) evaluates at the
 *	                                  call, the handler keeps under it
 *
 * Types, names and member offsets stay in the translator: the handler's
 * Lua reads what it needs with kernel_read (mt_lua_lib.c).
 *
 * The probe is registered disabled at load, so that the kernel's refusal
 * (no such symbol, its kprobe blacklist, not a function entry) is a load
 * error naming the reason; enabled at start, disabled at stop (the host
 * then waits for the handlers: mt_hooks_sync), unregistered when the
 * script is freed.  A module's function whose module is not loaded (the
 * kernel does not know its symbol) waits, as stap's module probes do: a
 * module notifier registers it when the module comes (enabled if the
 * script is armed by then) and takes it back when the module goes, to
 * register it again at its next load.  A hit fires the marker as the hooks fire theirs
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
#define FMT_RETURN_ENTRY FMT_RETURN " cookie %ld entry %ld"
#define NAME_MAX_LEN (sizeof(MT_KPROBE_PREFIX) + MODULE_NAME_LEN + KSYM_NAME_LEN + 32)

struct mt_kprobe {
	struct mt_kmarker m;            /* the host's view; first */
	char name[NAME_MAX_LEN];        /* the binding */
	char sym[MODULE_NAME_LEN + KSYM_NAME_LEN + 1];
	bool ret, enabled;
	bool at_entry;                  /* ":entry": fired at the call too */
	/* a module's function ("" for the kernel's): registered while its
	 * module is loaded; these under mt_kprobe_mutex */
	char module[MODULE_NAME_LEN];
	int maxactive;
	bool registered, want;          /* want: armed, enabled when registered */
	struct list_head module_node;   /* in mt_kprobe_modules */
	union {
		struct kprobe kp;
		struct kretprobe krp;
	} u;
};

static const char mt_kprobe_source[] = "kprobe";

struct args {
	unsigned long v[MT_KPROBE_ARGS];
	u64 cookie;                     /* ":entry": this call's */
};

/* The probes of modules' functions, loaded or not, and their notifier
 * (registered at the first, unregistered at marktap.ko's exit) */
static DEFINE_MUTEX(mt_kprobe_mutex);
static LIST_HEAD(mt_kprobe_modules);
static bool mt_kprobe_notifying;

/* Cookies of ":entry" calls: unique among the calls in flight (a
 * 64-bit count does not come back round) */
static atomic64_t mt_kprobe_cookies = ATOMIC64_INIT(0);

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
	k.addr = (unsigned long)kp->addr;  /* backtraces start at the function */
	mt_kmarker_fire(&p->m, a.v[0], a.v[1], a.v[2], a.v[3], a.v[4], a.v[5]);
	mt_kregs_leave(&k);
	return 0;
}

/* the entry of a return probe: the arguments, for the return's handler;
 * with ":entry" the marker fires here too, for @entry's expressions */
static int on_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct args *a = (struct args *)ri->data;
	struct kretprobe *krp = get_kretprobe(ri);
	struct mt_kprobe *p;
	struct mt_kregs k;

	take_args(regs, a);
	if (!krp)
		return 0;
	p = container_of(krp, struct mt_kprobe, u.krp);
	if (!p->at_entry)
		return 0;
	a->cookie = (u64)atomic64_inc_return(&mt_kprobe_cookies);
	mt_kregs_enter(&k, regs, false);
	k.addr = (unsigned long)krp->kp.addr;
	mt_kmarker_fire(&p->m, a->v[0], a->v[1], a->v[2], a->v[3], a->v[4], a->v[5], 0L,
			(long)a->cookie, 1L);
	mt_kregs_leave(&k);
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
			(long)regs_return_value(regs), (long)a->cookie, 0L);
	mt_kregs_leave(&k);
	return 0;
}

/* "SYM[:return[:N][:entry]]" (after the prefix; SYM may be "MODULE:NAME") into p */
static int parse(struct mt_kprobe *p, const char *spec, int *maxactive)
{
	char buf[sizeof(p->sym) + 32];
	char *last, *ret;

	if (strscpy(buf, spec, sizeof(buf)) < 0 || !buf[0])
		return -EINVAL;
	*maxactive = 0;
	last = strrchr(buf, ':');
	if (last && !strcmp(last, ":entry")) {
		p->at_entry = true;   /* checked below: only after ":return" */
		*last = '\0';
		last = strrchr(buf, ':');
	}
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
	if (!buf[0] || strchr(buf, ':') != strrchr(buf, ':') || strscpy(p->sym, buf, sizeof(p->sym)) < 0 ||
	    (p->at_entry && !p->ret))
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

	if (!strncmp(p->sym, "0x", 2)) {   /* an absolute address (guru's .absolute) */
		unsigned long addr;
		if (kstrtoul(p->sym + 2, 16, &addr) || !addr)
			return -EINVAL;
		kp->addr = (kprobe_opcode_t *)addr;
	} else {
		kp->symbol_name = p->sym;
	}
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
	p->registered = true;
	/* our own code: a hit there would run inside the handler it calls */
	if (within_module((unsigned long)kp->addr, THIS_MODULE)) {
		if (p->ret)
			unregister_kretprobe(&p->u.krp);
		else
			unregister_kprobe(kp);
		p->registered = false;
		return -EPERM;
	}
	return 0;
}

static void unregister(struct mt_kprobe *p)
{
	if (!p->registered)
		return;
	/* waits for the handlers running (and, for a kretprobe, frees the
	 * instances in flight: their returns no longer call us) */
	if (p->ret)
		unregister_kretprobe(&p->u.krp);
	else
		unregister_kprobe(&p->u.kp);
	p->registered = false;
	p->enabled = false;
	/* a later registration starts from clean structures */
	memset(&p->u, 0, sizeof(p->u));
}

static int enable(struct mt_kprobe *p)
{
	int rc;

	if (p->enabled || !p->registered)
		return 0;
	rc = p->ret ? enable_kretprobe(&p->u.krp) : enable_kprobe(&p->u.kp);
	if (rc)
		pr_warn("marktap: %s: cannot enable the probe: %d\n", p->name, rc);
	p->enabled = !rc;
	return rc;
}

/* A module came or goes: its pending probes registered, its probes taken back. */
static int on_module(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;
	struct mt_kprobe *p;

	/* COMING: the module's code is in place, its init not run yet, so
	 * that a probe on what the init calls sees those calls (as stap's) */
	if (state != MODULE_STATE_COMING && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&mt_kprobe_mutex);
	list_for_each_entry(p, &mt_kprobe_modules, module_node) {
		if (strcmp(p->module, mod->name))
			continue;
		if (state == MODULE_STATE_COMING && !p->registered) {
			int rc = register_disabled(p, p->maxactive);
			if (rc) {
				char why_text[160];
				why(p, rc, why_text, sizeof(why_text));
				pr_warn("marktap: %s\n", why_text);
			} else if (p->want) {
				enable(p);
			}
		} else if (state == MODULE_STATE_GOING) {
			unregister(p);
		}
	}
	mutex_unlock(&mt_kprobe_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block mt_kprobe_nb = { .notifier_call = on_module };

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
			  "[:return[:MAXACTIVE][:entry]])", name);
		kfree(p);
		return NULL;
	}
	strscpy(p->name, name, sizeof(p->name));
	p->m.name = p->name;
	p->m.format = p->m.recorded = p->at_entry ? FMT_RETURN_ENTRY : p->ret ? FMT_RETURN : FMT_ENTRY;
	p->m.source = mt_kprobe_source;
	if (mt_fmt_parse(p->m.recorded, &p->m.fmt, &ferr)) {
		scnprintf(err, errlen, "kernel function format: %s", ferr.message);
		kfree(p);
		return NULL;
	}
	p->maxactive = maxactive;
	if (strchr(p->sym, ':'))
		strscpy(p->module, p->sym, min(sizeof(p->module), (size_t)(strchr(p->sym, ':') - p->sym + 1)));
	mutex_lock(&mt_kprobe_mutex);
	rc = register_disabled(p, maxactive);
	if (rc == -ENOENT && p->module[0])
		rc = 0;   /* MODULE:NAME of a module not loaded: registered when it comes */
	if (!rc && p->module[0] && !mt_kprobe_notifying) {
		rc = register_module_notifier(&mt_kprobe_nb);
		mt_kprobe_notifying = !rc;
		if (rc)
			unregister(p);
	}
	if (!rc && p->module[0])
		list_add_tail(&p->module_node, &mt_kprobe_modules);
	mutex_unlock(&mt_kprobe_mutex);
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

	mutex_lock(&mt_kprobe_mutex);
	p->want = true;   /* a module's probe not registered yet: when it is */
	rc = enable(p);
	mutex_unlock(&mt_kprobe_mutex);
	return rc;
}

void mt_kprobe_disarm(struct mt_kmarker *m)
{
	struct mt_kprobe *p = container_of(m, struct mt_kprobe, m);

	mutex_lock(&mt_kprobe_mutex);
	p->want = false;
	if (p->enabled) {
		if (p->ret)
			disable_kretprobe(&p->u.krp);
		else
			disable_kprobe(&p->u.kp);
		p->enabled = false;
	}
	mutex_unlock(&mt_kprobe_mutex);
}

void mt_kprobe_put(struct mt_kmarker *m)
{
	struct mt_kprobe *p = container_of(m, struct mt_kprobe, m);

	mutex_lock(&mt_kprobe_mutex);
	unregister(p);
	if (p->module[0])
		list_del(&p->module_node);
	mutex_unlock(&mt_kprobe_mutex);
	kfree(p);
}

/*
 * Many at once: unregister_kprobes() waits for the handlers once for the
 * whole batch (a grace period), where a put each waits once per probe:
 * a script over a file's 400 functions would spend seconds there.
 */
void mt_kprobe_put_many(struct mt_kmarker **ms, unsigned n)
{
	struct kprobe **kps = kvmalloc_array(n, sizeof(*kps), GFP_KERNEL);
	struct kretprobe **krps = kvmalloc_array(n, sizeof(*krps), GFP_KERNEL);
	unsigned i, nk = 0, nr = 0;

	if (!kps || !krps) {   /* the slow way still frees them all */
		for (i = 0; i < n; i++)
			if (mt_kprobe_owns(ms[i])) {
				mt_kprobe_put(ms[i]);
				ms[i] = NULL;
			}
		goto out;
	}
	mutex_lock(&mt_kprobe_mutex);
	for (i = 0; i < n; i++) {
		struct mt_kprobe *p;
		if (!mt_kprobe_owns(ms[i]))
			continue;
		p = container_of(ms[i], struct mt_kprobe, m);
		if (!p->registered)
			continue;
		if (p->ret)
			krps[nr++] = &p->u.krp;
		else
			kps[nk++] = &p->u.kp;
	}
	if (nk)
		unregister_kprobes(kps, (int)nk);
	if (nr)
		unregister_kretprobes(krps, (int)nr);
	for (i = 0; i < n; i++) {
		struct mt_kprobe *p;
		if (!mt_kprobe_owns(ms[i]))
			continue;
		p = container_of(ms[i], struct mt_kprobe, m);
		p->registered = false;
		if (p->module[0])
			list_del(&p->module_node);
		kfree(p);
		ms[i] = NULL;
	}
	mutex_unlock(&mt_kprobe_mutex);
out:
	kvfree(kps);
	kvfree(krps);
}

void mt_kprobe_exit(void)
{
	/* every script is gone: no probe left on the list, no callback to come */
	if (mt_kprobe_notifying)
		unregister_module_notifier(&mt_kprobe_nb);
	mt_kprobe_notifying = false;
}
