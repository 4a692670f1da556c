/*
 * mt_tracepoint.c - kernel.trace probes: one tracepoint probe per binding.
 *
 * What crosses from the translator (translator/btf.c) is a marker name:
 *
 *	tracepoint:NAME:NARGS
 *
 * bound with probe(name, fn) as a catalogue marker is.  NAME is a
 * tracepoint of the kernel proper (for_each_kernel_tracepoint), NARGS
 * how many of its parameters the handler gets: the translator reads the
 * prototype from the kernel's BTF (btf_trace_NAME, a pointer to
 * void (void *data, TP_PROTO...)), and stops before the first parameter
 * that is no integer or pointer.  The marker's format is fixed, integers
 * as the kernel passed them:
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
 * (found through kallsyms, mt_ksym.c).  Without that table (no BPF
 * events, no kallsyms) only a loader with CAP_SYS_ADMIN is believed.
 *
 * The probe is registered when the binding is armed and unregistered
 * when it is disarmed; the host then waits for the probes running
 * (mt_hooks_sync: the tracepoint SRCU and RCU), and freeing waits again
 * if it had to unregister.  A hit fires the marker as the hooks fire
 * theirs (mt_kmarker_fire, mt_dispatch.c), so the Lua runs with the same
 * budget, time bound, busy flag and skips as a kernel.mark handler.
 */
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include "mt_kmod.h"
#include "mt_tracepoint.h"
#include "mt_kregs.h"

#define NAME_MAX_LEN 128

struct mt_tracepoint {
	struct mt_kmarker m;            /* the host's view; first */
	char name[sizeof(MT_TRACEPOINT_PREFIX) + NAME_MAX_LEN + 8];   /* the binding */
	char tp_name[NAME_MAX_LEN];
	char format[MT_TRACEPOINT_ARGS * 12];
	unsigned nargs;
	struct tracepoint *tp;
	bool registered;
};

static const char mt_tracepoint_source[] = "tracepoint";

/*
 * The probe, one per number of parameters marktap reads (0 to 5), each
 * declared with exactly that many after data, all in registers.  Why this
 * is sound on x86_64 (and refused elsewhere, and with kCFI):
 *
 *   - the tracepoint's iterator calls each probe through a pointer cast
 *     to void (*)(void *data, TP_PROTO): by the SysV ABI data goes in
 *     rdi, the first five parameters in rsi, rdx, rcx, r8, r9; a
 *     parameter that is an integer or a pointer takes exactly one
 *     register, whatever its width (a narrower one's upper bits are
 *     undefined: the translator cuts the value to its type), as long as
 *     none before is a struct by value, where the translator stops NARGS;
 *   - a probe that declares fewer parameters than the tracepoint passes
 *     ignores the rest: it never declares one passed on the stack, whose
 *     slots belong to the caller (a callee may write its incoming stack
 *     arguments, and a tracepoint passing fewer has no such slots at all);
 *   - kCFI (CONFIG_CFI_CLANG) checks at each indirect call that the
 *     callee's type is the pointer's: these probes' are not, so the kernel
 *     would stop at the first hit.  Without it nothing checks the type.
 */
static void hit(struct mt_tracepoint *p, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4)
{
	struct mt_kregs k;

	/* no registers to write here, even inside a kprobe's hit (mt_kregs.c) */
	mt_kregs_enter(&k, NULL, false);
	/* the format takes p->nargs values: the rest are zeros, not read */
	mt_kmarker_fire(&p->m, a0, a1, a2, a3, a4);
	mt_kregs_leave(&k);
}

static void on_hit0(void *data) { hit(data, 0, 0, 0, 0, 0); }
static void on_hit1(void *data, u64 a0) { hit(data, a0, 0, 0, 0, 0); }
static void on_hit2(void *data, u64 a0, u64 a1) { hit(data, a0, a1, 0, 0, 0); }
static void on_hit3(void *data, u64 a0, u64 a1, u64 a2) { hit(data, a0, a1, a2, 0, 0); }
static void on_hit4(void *data, u64 a0, u64 a1, u64 a2, u64 a3) { hit(data, a0, a1, a2, a3, 0); }
static void on_hit5(void *data, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4)
{
	hit(data, a0, a1, a2, a3, a4);
}

static void *const on_hits[MT_TRACEPOINT_ARGS + 1] = {
	on_hit0, on_hit1, on_hit2, on_hit3, on_hit4, on_hit5,
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

/* The kernel's count of tp's parameters (BPF's table), or -1: no table */
static int kernel_nargs(const struct tracepoint *tp)
{
#ifdef CONFIG_BPF_EVENTS
	const struct bpf_raw_event_map *map = (const void *)mt_ksym("__start__bpf_raw_tp");
	const struct bpf_raw_event_map *end = (const void *)mt_ksym("__stop__bpf_raw_tp");

	if (!map || !end || end < map)
		return -1;
	for (; map < end; map++)
		if (map->tp == tp)
			return (int)map->num_args;
	return -2;   /* the table without it: no parameters known */
#else
	return -1;
#endif
}

/* "NAME:NARGS" into p */
static int parse(struct mt_tracepoint *p, const char *spec)
{
	const char *colon = strrchr(spec, ':');
	unsigned n;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(p->tp_name) ||
	    kstrtouint(colon + 1, 10, &n) || n > MT_TRACEPOINT_ARGS)
		return -EINVAL;
	memcpy(p->tp_name, spec, (size_t)(colon - spec));
	p->tp_name[colon - spec] = '\0';
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

/* The tracepoint found and its count checked: 0, or an error in err */
static int find(struct mt_tracepoint *p, bool privileged, char *err, size_t errlen)
{
	struct find f = { .name = p->tp_name };
	int nargs;

	for_each_kernel_tracepoint(find_tracepoint, &f);
	if (!f.tp) {
		scnprintf(err, errlen, "no tracepoint %s in this kernel (a module's tracepoint, or "
			  "an event the kernel makes from another, as syscalls:sys_enter_*)", p->tp_name);
		return -ENOENT;
	}
	p->tp = f.tp;
	nargs = kernel_nargs(f.tp);
	if (nargs >= 0 && p->nargs > (unsigned)nargs) {
		scnprintf(err, errlen, "tracepoint %s has %d parameters, not %u (a translator for "
			  "another kernel?)", p->tp_name, nargs, p->nargs);
		return -EINVAL;
	}
	if (nargs < 0 && p->nargs && !privileged) {
		scnprintf(err, errlen, "tracepoint %s: the kernel's count of its parameters cannot be "
			  "read (no BPF raw tracepoint table in kallsyms): its parameters are root's",
			  p->tp_name);
		return -EPERM;
	}
	return 0;
}

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
		scnprintf(err, errlen, "bad tracepoint binding \"%s\" (tracepoint:NAME:NARGS, "
			  "NARGS at most %d)", name, MT_TRACEPOINT_ARGS);
		kfree(p);
		return NULL;
	}
	if (find(p, privileged, err, errlen)) {
		kfree(p);
		return NULL;
	}
	strscpy(p->name, name, sizeof(p->name));
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
	 * not see them: mt_lua_fire) */
	p->m.kaddr_mask = p->nargs ? (u32)((1ull << p->nargs) - 1) : 0;
	return &p->m;
}

bool mt_tracepoint_owns(const struct mt_kmarker *m)
{
	return m && m->source == mt_tracepoint_source;
}

int mt_tracepoint_arm(struct mt_kmarker *m)
{
	struct mt_tracepoint *p = container_of(m, struct mt_tracepoint, m);
	int rc;

	if (p->registered)
		return 0;
	rc = tracepoint_probe_register(p->tp, on_hits[p->nargs], p);
	if (rc)
		pr_warn("marktap: %s: cannot register the probe: %d\n", p->name, rc);
	p->registered = !rc;
	return rc;
}

void mt_tracepoint_disarm(struct mt_kmarker *m)
{
	struct mt_tracepoint *p = container_of(m, struct mt_tracepoint, m);

	if (!p->registered)
		return;
	tracepoint_probe_unregister(p->tp, on_hits[p->nargs], p);
	p->registered = false;
}

void mt_tracepoint_put(struct mt_kmarker *m)
{
	struct mt_tracepoint *p = container_of(m, struct mt_tracepoint, m);

	if (p->registered) {
		mt_tracepoint_disarm(m);
		/* no iterator may still hold p */
		tracepoint_synchronize_unregister();
	}
	kfree(p);
}
