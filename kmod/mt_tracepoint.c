/*
 * mt_tracepoint.c - kernel.trace probes: one tracepoint probe per binding.
 *
 * What crosses from the translator (translator/btf.c) is a marker name:
 *
 *	tracepoint:[MODULE:]NAME:NARGS
 *
 * bound with probe(name, fn) as a catalogue marker is.  NAME is a
 * tracepoint of the kernel proper (for_each_kernel_tracepoint), or with
 * MODULE one that module defines; NARGS how many of its parameters the
 * handler gets: the translator reads the prototype from the kernel's
 * BTF (btf_trace_NAME, a pointer to void (void *data, TP_PROTO...), in
 * the module's BTF for a module's), and stops before the first
 * parameter that is no integer or pointer.  The marker's format is
 * fixed, integers as the kernel passed them:
 *
 *	arg1 %ld ... argNARGS %ld
 *
 * Types, names and member offsets stay in the translator: the handler's
 * Lua reads what it needs with kernel_read (mt_lua_lib.c), root's only.
 * Every value may be a kernel address: for a script whose loader may
 * not see those, each is hashed as a pointer field is (mt_kaddr.c).
 *
 * NARGS is the script's word, and the script may be the device group's:
 * reading more parameters than the tracepoint passes would read past its
 * arguments on the caller's stack.  So NARGS is checked against the
 * kernel's own count, the num_args of the tracepoint's entry in the
 * bpf_raw_event_map table that the kernel keeps for BPF raw tracepoints
 * (vmlinux's found through kallsyms, mt_ksym.c; a module's in its struct
 * module).  Up to MT_TRACEPOINT_ARGS_IN_REGS, the parameters passed in
 * registers, NARGS may be fewer than the kernel's count; past them it
 * must be that count exactly, and without the kernel's count it is
 * refused to everyone (the probe's declaration is then a claim on the
 * caller's stack nobody checked).  Up to MT_TRACEPOINT_ARGS_IN_REGS and
 * without the table, only a loader with CAP_SYS_ADMIN is believed.
 *
 * A module's tracepoint is found through the kernel's tracepoint module
 * notifier (register_tracepoint_module_notifier): it tells of every
 * module with tracepoints loaded when it is registered, then of each
 * that comes or goes, its tracepoints in mod->tracepoints_ptrs.  A
 * binding whose module is loaded is checked at the script's load, as
 * the kernel's; one whose module is not loaded waits, as stap's module
 * probes do: the module's coming attaches it (probed if the script is
 * armed by then; a count the module contradicts is a warning in the
 * kernel's log, and the probe stays off), its going unregisters the probe
 * before the module's memory goes, and its next load attaches it again.
 *
 * The probe is registered when the binding is armed (and its tracepoint
 * there) and unregistered when it is disarmed; the host then waits for
 * the probes running (mt_hooks_sync: the tracepoint SRCU and RCU), and
 * freeing waits again if the probe was ever unregistered without the
 * host's wait (a module's going).  A hit fires the marker as the hooks
 * fire theirs (mt_kmarker_fire, mt_dispatch.c), so the Lua runs with the
 * same budget, time bound, busy flag and skips as a kernel.mark handler.
 */
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include "mt_kmod.h"
#include "mt_tracepoint.h"
#include "mt_kregs.h"

#define NAME_MAX_LEN 128

struct mt_tracepoint {
	struct mt_kmarker m;            /* the host's view; first */
	char name[sizeof(MT_TRACEPOINT_PREFIX) + MODULE_NAME_LEN + NAME_MAX_LEN + 8];   /* the binding */
	char module[MODULE_NAME_LEN];   /* "": the kernel's */
	char tp_name[NAME_MAX_LEN];
	char format[MT_TRACEPOINT_ARGS * 12];
	unsigned nargs;
	bool privileged;                /* the loader's CAP_SYS_ADMIN (find's check) */
	/* under mt_tracepoint_mutex: tp and mod, NULL while a module's
	 * tracepoint is not loaded; want: armed */
	struct tracepoint *tp;
	struct module *mod;
	bool registered, want;
	bool unsynced;                  /* unregistered at its module's going */
	struct list_head module_node;   /* a module's: in mt_tracepoint_modules */
};

static const char mt_tracepoint_source[] = "tracepoint";

/* The bindings of modules' tracepoints, and the modules with tracepoints
 * loaded now (as the notifier told), each under mt_tracepoint_mutex: a
 * module on the list has not gone yet, so its memory is there. */
struct loaded_module {
	struct list_head node;
	struct module *mod;
};
static DEFINE_MUTEX(mt_tracepoint_mutex);
static LIST_HEAD(mt_tracepoint_modules);
static LIST_HEAD(mt_tracepoint_loaded);
/* the notifier, registered at the first module's binding (never under
 * mt_tracepoint_mutex: its registration calls it for every module) */
static DEFINE_MUTEX(mt_tracepoint_notifier_mutex);
static bool mt_tracepoint_notifying;

/*
 * The probe, one per number of parameters marktap reads (0 to 12), each
 * declared with exactly that many after data.  Why this is sound on
 * x86_64 (and refused elsewhere, and with kCFI):
 *
 *   - the tracepoint's iterator calls each probe through a pointer cast
 *     to void (*)(void *data, TP_PROTO): by the SysV ABI data goes in
 *     rdi, the first five parameters in rsi, rdx, rcx, r8, r9, the rest
 *     in the caller's stack slots above the return address, one 8-byte
 *     slot each; a parameter that is an integer or a pointer takes
 *     exactly one register or slot, whatever its width (a narrower one's
 *     upper bits are undefined: the translator cuts the value to its
 *     type), as long as none before is a struct by value, where the
 *     translator stops NARGS;
 *   - a probe that declares fewer parameters than the tracepoint passes
 *     ignores the rest.  It may declare only parameters the caller
 *     passes: a callee may write its incoming stack arguments, and a
 *     tracepoint passing fewer has no such slots at all (they are the
 *     caller's locals, or its return address).  So a probe with stack
 *     parameters (NARGS past the registers) is only registered on a
 *     tracepoint whose kernel's count is exactly NARGS (find, check);
 *   - kCFI (CONFIG_CFI_CLANG) checks at each indirect call that the
 *     callee's type is the pointer's: these probes' are not, so the kernel
 *     would stop at the first hit.  Without it nothing checks the type.
 */
static void hit(struct mt_tracepoint *p, const u64 *a)
{
	struct mt_kregs k;

	/* no registers to write here, even inside a kprobe's hit (mt_kregs.c) */
	mt_kregs_enter(&k, NULL, false);
	/* the format takes p->nargs values: the rest are zeros, not read */
	mt_kmarker_fire(&p->m, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
	mt_kregs_leave(&k);
}

static void on_hit0(void *data)
{
	u64 a[MT_TRACEPOINT_ARGS] = { 0 };

	hit(data, a);
}

static void on_hit1(void *data, u64 a0)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0 };

	hit(data, a);
}

static void on_hit2(void *data, u64 a0, u64 a1)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1 };

	hit(data, a);
}

static void on_hit3(void *data, u64 a0, u64 a1, u64 a2)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2 };

	hit(data, a);
}

static void on_hit4(void *data, u64 a0, u64 a1, u64 a2, u64 a3)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3 };

	hit(data, a);
}

static void on_hit5(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4 };

	hit(data, a);
}

/* past here the parameters from a5 on are in the caller's stack slots */
static void on_hit6(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4, a5 };

	hit(data, a);
}

static void on_hit7(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5, u64 a6)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4, a5, a6 };

	hit(data, a);
}

static void on_hit8(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5, u64 a6, u64 a7)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4, a5, a6, a7 };

	hit(data, a);
}

static void on_hit9(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5, u64 a6, u64 a7,
		    u64 a8)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8 };

	hit(data, a);
}

static void on_hit10(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5, u64 a6, u64 a7,
		     u64 a8, u64 a9)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 };

	hit(data, a);
}

static void on_hit11(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5, u64 a6, u64 a7,
		     u64 a8, u64 a9, u64 a10)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 };

	hit(data, a);
}

static void on_hit12(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5, u64 a6, u64 a7,
		     u64 a8, u64 a9, u64 a10, u64 a11)
{
	u64 a[MT_TRACEPOINT_ARGS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11 };

	hit(data, a);
}

static void *const on_hits[MT_TRACEPOINT_ARGS + 1] = {
	on_hit0, on_hit1, on_hit2, on_hit3, on_hit4, on_hit5, on_hit6,
	on_hit7, on_hit8, on_hit9, on_hit10, on_hit11, on_hit12,
};

struct find {
	const char *name;
	struct tracepoint *tp;
};

static void find_tracepoint(struct tracepoint *tp, void *priv)
{
	struct find *f = priv;

	if (!f->tp && !strcmp(tp->name, f->name))
		f->tp = tp;
}

/* tp's count of parameters in the BPF raw tracepoint table [map, end):
 * -1 no table, -2 the table without it (no parameters known) */
static int table_nargs(const struct bpf_raw_event_map *map, const struct bpf_raw_event_map *end,
		       const struct tracepoint *tp)
{
	if (!map || !end || end <= map)
		return -1;
	for (; map < end; map++)
		if (map->tp == tp)
			return (int)map->num_args;
	return -2;
}

/* The kernel's count of tp's parameters (mod's, NULL: vmlinux's), or < 0 */
static int kernel_nargs(const struct tracepoint *tp, const struct module *mod)
{
#ifdef CONFIG_BPF_EVENTS
	if (mod)
		return table_nargs(mod->bpf_raw_events, mod->bpf_raw_events + mod->num_bpf_raw_events, tp);
	return table_nargs((const void *)mt_ksym("__start__bpf_raw_tp"),
			   (const void *)mt_ksym("__stop__bpf_raw_tp"), tp);
#else
	return -1;
#endif
}

/* p's NARGS against the kernel's count nargs (< 0: unknown): 0, or an
 * error in err */
static int check_nargs(const struct mt_tracepoint *p, int nargs, char *err, size_t errlen)
{
	if (nargs >= 0 && p->nargs > MT_TRACEPOINT_ARGS_IN_REGS && p->nargs != (unsigned)nargs) {
		scnprintf(err, errlen, "tracepoint %s has %d parameters, not %u (a probe reading "
			  "past the %d in registers takes exactly the tracepoint's: the others are "
			  "its caller's stack)", p->tp_name, nargs, p->nargs, MT_TRACEPOINT_ARGS_IN_REGS);
		return -EINVAL;
	}
	if (nargs >= 0 && p->nargs > (unsigned)nargs) {
		scnprintf(err, errlen, "tracepoint %s has %d parameters, not %u (a translator for "
			  "another kernel?)", p->tp_name, nargs, p->nargs);
		return -EINVAL;
	}
	if (nargs < 0 && p->nargs > MT_TRACEPOINT_ARGS_IN_REGS) {
		scnprintf(err, errlen, "tracepoint %s: the kernel's count of its parameters cannot be "
			  "read (no BPF raw tracepoint table): marktap.ko reads none past the %d in "
			  "registers without it, not %u", p->tp_name, MT_TRACEPOINT_ARGS_IN_REGS, p->nargs);
		return -EPERM;
	}
	if (nargs < 0 && p->nargs && !p->privileged) {
		scnprintf(err, errlen, "tracepoint %s: the kernel's count of its parameters cannot be "
			  "read (no BPF raw tracepoint table in kallsyms): its parameters are root's",
			  p->tp_name);
		return -EPERM;
	}
	return 0;
}

/* "[MODULE:]NAME:NARGS" into p */
static int parse(struct mt_tracepoint *p, const char *spec)
{
	const char *colon = strrchr(spec, ':'), *name = spec, *first = strchr(spec, ':');
	unsigned n;

	if (first && first != colon) {   /* MODULE: */
		if (first == spec || (size_t)(first - spec) >= sizeof(p->module))
			return -EINVAL;
		memcpy(p->module, spec, (size_t)(first - spec));
		p->module[first - spec] = '\0';
		name = first + 1;
	}
	if (!colon || colon == name || (size_t)(colon - name) >= sizeof(p->tp_name) ||
	    kstrtouint(colon + 1, 10, &n) || n > MT_TRACEPOINT_ARGS)
		return -EINVAL;
	memcpy(p->tp_name, name, (size_t)(colon - name));
	p->tp_name[colon - name] = '\0';
	if (strchr(p->tp_name, ':'))
		return -EINVAL;
	p->nargs = n;
	return 0;
}

static void make_format(struct mt_tracepoint *p)
{
	size_t len = 0;
	unsigned i;

	p->format[0] = ' ';   /* no fields: as MARK_NOARGS */
	p->format[1] = '\0';
	for (i = 0; i < p->nargs; i++)
		len += scnprintf(p->format + len, sizeof(p->format) - len, "%sarg%u %%ld", i ? " " : "", i + 1);
}

/* The kernel's tracepoint found and its count checked: 0, or an error in err */
static int find(struct mt_tracepoint *p, char *err, size_t errlen)
{
	struct find f = { .name = p->tp_name };

	for_each_kernel_tracepoint(find_tracepoint, &f);
	if (!f.tp) {
		scnprintf(err, errlen, "no tracepoint %s in this kernel (a module's tracepoint, or "
			  "an event the kernel makes from another, as syscalls:sys_enter_*)", p->tp_name);
		return -ENOENT;
	}
	p->tp = f.tp;
	return check_nargs(p, kernel_nargs(f.tp, NULL), err, errlen);
}

/* ---- modules' tracepoints -------------------------------------------------- */

static int probe_register(struct mt_tracepoint *p)
{
	int rc = tracepoint_probe_register(p->tp, on_hits[p->nargs], p);

	if (rc)
		pr_warn("marktap: %s: cannot register the probe: %d\n", p->name, rc);
	p->registered = !rc;
	return rc;
}

static void probe_unregister(struct mt_tracepoint *p)
{
	if (!p->registered)
		return;
	tracepoint_probe_unregister(p->tp, on_hits[p->nargs], p);
	p->registered = false;
}

/* p's tracepoint in mod, loaded (under mt_tracepoint_mutex): attached
 * and its count checked (0, or an error in err), probed if armed */
static int attach(struct mt_tracepoint *p, struct module *mod, char *err, size_t errlen)
{
	struct tracepoint *tp = NULL;
	unsigned i;
	int rc;

	for (i = 0; i < mod->num_tracepoints && !tp; i++) {
		struct tracepoint *t = tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);
		if (!strcmp(t->name, p->tp_name))
			tp = t;
	}
	if (!tp) {
		scnprintf(err, errlen, "module %s has no tracepoint %s", p->module, p->tp_name);
		return -ENOENT;
	}
	p->tp = tp;
	rc = check_nargs(p, kernel_nargs(tp, mod), err, errlen);
	if (rc) {
		p->tp = NULL;
		return rc;
	}
	p->mod = mod;
	return p->want ? probe_register(p) : 0;
}

/* p's module goes (under mt_tracepoint_mutex): its probe unregistered
 * before the tracepoint's memory goes (the kernel warns of a going
 * module's tracepoint still probed) */
static void detach(struct mt_tracepoint *p)
{
	if (p->registered) {
		probe_unregister(p);
		p->unsynced = true;   /* a probe may still run: put waits */
	}
	p->tp = NULL;
	p->mod = NULL;
}

static int on_module(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = ((struct tp_module *)data)->mod;
	struct loaded_module *l, *next;
	struct mt_tracepoint *p;
	char err[160];

	if (state != MODULE_STATE_COMING && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&mt_tracepoint_mutex);
	if (state == MODULE_STATE_COMING) {
		l = kmalloc(sizeof(*l), GFP_KERNEL);
		if (l) {
			l->mod = mod;
			list_add_tail(&l->node, &mt_tracepoint_loaded);
		}
		/* COMING: the module's init not run yet, so that its
		 * tracepoints' hits there are seen (as stap's) */
		list_for_each_entry(p, &mt_tracepoint_modules, module_node)
			if (!p->tp && !strcmp(p->module, mod->name) && attach(p, mod, err, sizeof(err)))
				pr_warn("marktap: %s: %s\n", p->name, err);
	} else {
		list_for_each_entry(p, &mt_tracepoint_modules, module_node)
			if (p->mod == mod)
				detach(p);
		list_for_each_entry_safe(l, next, &mt_tracepoint_loaded, node)
			if (l->mod == mod) {
				list_del(&l->node);
				kfree(l);
			}
	}
	mutex_unlock(&mt_tracepoint_mutex);
	return NOTIFY_OK;
}

static struct notifier_block mt_tracepoint_nb = { .notifier_call = on_module };

/* A module's binding: on the list, attached if its module is loaded (a
 * count contradicted then is an error); 0, or an error in err */
static int find_in_module(struct mt_tracepoint *p, char *err, size_t errlen)
{
	struct loaded_module *l;
	int rc = 0;

	mutex_lock(&mt_tracepoint_notifier_mutex);
	if (!mt_tracepoint_notifying) {
		rc = register_tracepoint_module_notifier(&mt_tracepoint_nb);
		mt_tracepoint_notifying = !rc;
	}
	mutex_unlock(&mt_tracepoint_notifier_mutex);
	if (rc) {
		scnprintf(err, errlen, "%s: cannot follow the modules' tracepoints (%d)", p->name, rc);
		return rc;
	}
	mutex_lock(&mt_tracepoint_mutex);
	list_for_each_entry(l, &mt_tracepoint_loaded, node)
		if (!strcmp(l->mod->name, p->module)) {
			rc = attach(p, l->mod, err, errlen);
			break;
		}
	if (!rc)
		list_add_tail(&p->module_node, &mt_tracepoint_modules);
	mutex_unlock(&mt_tracepoint_mutex);
	return rc;
}

/* ---- the host's calls ------------------------------------------------------ */

struct mt_kmarker *mt_tracepoint_get(const char *name, bool privileged, char *err, size_t errlen)
{
	struct mt_tracepoint *p;
	struct mt_fmt_error ferr;

#if !defined(CONFIG_X86_64) || defined(CONFIG_CFI_CLANG)
	scnprintf(err, errlen, "%s: kernel.trace probes run on x86_64 kernels without kCFI "
		  "(CONFIG_CFI_CLANG) only: marktap.ko's one probe for every prototype", name);
	return NULL;
#endif
	if (!mt_tracepoint_named(name) || strlen(name) >= sizeof(p->name)) {
		scnprintf(err, errlen, "bad tracepoint binding \"%s\"", name);
		return NULL;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		scnprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (parse(p, name + sizeof(MT_TRACEPOINT_PREFIX) - 1)) {
		scnprintf(err, errlen, "bad tracepoint binding \"%s\" (tracepoint:[MODULE:]NAME:NARGS, "
			  "NARGS at most %d)", name, MT_TRACEPOINT_ARGS);
		kfree(p);
		return NULL;
	}
	strscpy(p->name, name, sizeof(p->name));
	p->privileged = privileged;
	make_format(p);
	p->m.name = p->name;
	p->m.format = p->m.recorded = p->format;
	p->m.source = mt_tracepoint_source;
	if (mt_fmt_parse(p->m.recorded, &p->m.fmt, &ferr)) {
		scnprintf(err, errlen, "tracepoint format: %s", ferr.message);
		kfree(p);
		return NULL;
	}
	/* any parameter may be a kernel address (hashed for those who may
	 * not see them: mt_lua_fire); the mask has a bit for each */
	BUILD_BUG_ON(MT_TRACEPOINT_ARGS > sizeof(p->m.kaddr_mask) * 8 || MT_TRACEPOINT_ARGS > MT_FIELDS_MAX);
	p->m.kaddr_mask = (u32)((1ull << p->nargs) - 1);
	if (p->module[0] ? find_in_module(p, err, errlen) : find(p, err, errlen)) {
		kfree(p);
		return NULL;
	}
	return &p->m;
}

bool mt_tracepoint_owns(const struct mt_kmarker *m)
{
	return m && m->source == mt_tracepoint_source;
}

int mt_tracepoint_arm(struct mt_kmarker *m)
{
	struct mt_tracepoint *p = container_of(m, struct mt_tracepoint, m);
	int rc = 0;

	mutex_lock(&mt_tracepoint_mutex);
	p->want = true;   /* a module's not loaded: probed when it comes */
	if (p->tp && !p->registered)
		rc = probe_register(p);
	mutex_unlock(&mt_tracepoint_mutex);
	return rc;
}

void mt_tracepoint_disarm(struct mt_kmarker *m)
{
	struct mt_tracepoint *p = container_of(m, struct mt_tracepoint, m);

	mutex_lock(&mt_tracepoint_mutex);
	p->want = false;
	probe_unregister(p);
	mutex_unlock(&mt_tracepoint_mutex);
}

void mt_tracepoint_put(struct mt_kmarker *m)
{
	struct mt_tracepoint *p = container_of(m, struct mt_tracepoint, m);
	bool wait;

	mutex_lock(&mt_tracepoint_mutex);
	wait = p->registered || p->unsynced;
	probe_unregister(p);
	if (p->module[0])
		list_del(&p->module_node);
	mutex_unlock(&mt_tracepoint_mutex);
	/* no iterator may still hold p */
	if (wait)
		tracepoint_synchronize_unregister();
	kfree(p);
}

void mt_tracepoint_exit(void)
{
	struct loaded_module *l, *next;

	/* every script is gone: no binding on the list */
	if (mt_tracepoint_notifying)
		unregister_tracepoint_module_notifier(&mt_tracepoint_nb);
	mt_tracepoint_notifying = false;
	list_for_each_entry_safe(l, next, &mt_tracepoint_loaded, node) {
		list_del(&l->node);
		kfree(l);
	}
}
