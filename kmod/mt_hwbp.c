/*
 * mt_hwbp.c - hardware watchpoints: a wide hardware breakpoint per binding.
 *
 * What crosses from the translator (translator/kdata.c) is a marker name:
 *
 *	hwbp:ACCESS:LEN:TARGET
 *
 * ACCESS "w" (stap's .write: HW_BREAKPOINT_W) or "rw" (.rw: reads and
 * writes, HW_BREAKPOINT_RW; x86 watches no read alone), LEN the bytes
 * watched (1, 2, 4 or 8), TARGET "0x" and the address in hex, or a
 * symbol's name, looked up here in kallsyms (mt_ksym.c) so that the
 * address is this boot's.  The marker has no values (MARK_NOARGS): stap
 * gives a watchpoint's handler none; its context functions (pp(),
 * execname(), pid(), backtraces from the registers of the access) are
 * the Lua library's.
 *
 * The breakpoint is registered disabled on every online CPU at load
 * (register_wide_hw_breakpoint: a debug register reserved on each), so
 * that the kernel's refusal (all four of x86's taken, an address it will
 * not watch) is a load error naming the reason; enabled at start,
 * disabled at stop (perf_event_enable/disable on each CPU's event; the
 * host then waits for the handlers: mt_hooks_sync), unregistered when
 * the script is freed.  CPUs that come online later are not watched, as
 * with any wide breakpoint.
 *
 * A hit runs in the debug exception, which the kernel treats as an NMI
 * (exc_debug_kernel: irqentry_nmi_enter) with the debug registers off
 * until it returns, so a handler's own reads do not trap again; the
 * Lua host never waits in an NMI (mt_lua_run.c: a busy state is a
 * skipped hit).  The trap comes after the access: the registers are
 * those of the instruction that follows it, which is where backtraces
 * start.
 */
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_hwbp.h"
#include "mt_kregs.h"

#define NAME_MAX_LEN (sizeof(MT_HWBP_PREFIX) + 8 + KSYM_NAME_LEN)

struct mt_hwbp {
	struct mt_kmarker m;            /* the host's view; first */
	char name[NAME_MAX_LEN];        /* the binding */
	char sym[KSYM_NAME_LEN];        /* "": an address */
	unsigned long addr;
	int len, type;
	struct perf_event *__percpu *bp;   /* NULL: not registered */
	bool enabled;
};

static const char mt_hwbp_source[] = "hwbp";

static void on_hit(struct perf_event *bp, struct perf_sample_data *data, struct pt_regs *regs)
{
	struct mt_hwbp *p = bp->overflow_handler_context;
	struct mt_kregs k;

	/* the access's registers: for backtraces, none for stores */
	mt_kregs_enter(&k, regs, false);
	k.watch = true;
	mt_kmarker_fire(&p->m);
	mt_kregs_leave(&k);
}

/* "ACCESS:LEN:TARGET" (after the prefix) into p */
static int parse(struct mt_hwbp *p, const char *spec)
{
	char buf[NAME_MAX_LEN];
	char *access = buf, *len, *target;

	if (strscpy(buf, spec, sizeof(buf)) < 0 || !(len = strchr(buf, ':')))
		return -EINVAL;
	*len++ = '\0';
	if (!(target = strchr(len, ':')))
		return -EINVAL;
	*target++ = '\0';
	if (!strcmp(access, "w"))
		p->type = HW_BREAKPOINT_W;
	else if (!strcmp(access, "rw"))
		p->type = HW_BREAKPOINT_RW;
	else
		return -EINVAL;
	if (kstrtoint(len, 10, &p->len) || (p->len != 1 && p->len != 2 && p->len != 4 && p->len != 8))
		return -EINVAL;
	if (!strncmp(target, "0x", 2))
		return kstrtoul(target + 2, 16, &p->addr) || !p->addr ? -EINVAL : 0;
	if (!target[0] || strscpy(p->sym, target, sizeof(p->sym)) < 0)
		return -EINVAL;
	for (; *target; target++)
		if (!isalnum(*target) && *target != '_' && *target != '.')
			return -EINVAL;
	return 0;
}

static void why(const struct mt_hwbp *p, int rc, char *err, size_t len)
{
	scnprintf(err, len, "cannot watch kernel data %s%s0x%lx: %s (%d)", p->sym, p->sym[0] ? " at " : "",
		  p->addr,
		  rc == -ENOSPC ? "no debug register free (x86 has 4 for all watchpoints: the "
				  "script's others, another script's or a debugger's hold them)" :
		  rc == -EINVAL ? "the kernel refuses to watch it (not a multiple of its length, "
				  "or in the memory the debug exception itself uses)" :
		  rc == -ENODEV || rc == -EOPNOTSUPP ? "this machine has no hardware breakpoints" :
		  rc == -EPERM ? "not permitted" : "registration failed", rc);
}

static int register_disabled(struct mt_hwbp *p)
{
	struct perf_event_attr attr;
	struct perf_event *__percpu *bp;

	hw_breakpoint_init(&attr);
	attr.bp_addr = p->addr;
	attr.bp_len = p->len;
	attr.bp_type = p->type;
	attr.disabled = 1;
	bp = register_wide_hw_breakpoint(&attr, on_hit, p);
	if (IS_ERR_OR_NULL(bp))   /* NULL: no CONFIG_HAVE_HW_BREAKPOINT */
		return bp ? PTR_ERR(bp) : -ENODEV;
	p->bp = bp;
	return 0;
}

struct mt_kmarker *mt_hwbp_get(const char *name, char *err, size_t errlen)
{
	struct mt_hwbp *p;
	struct mt_fmt_error ferr;
	int rc;

	if (!mt_hwbp_named(name) || strlen(name) >= NAME_MAX_LEN) {
		scnprintf(err, errlen, "bad watchpoint binding \"%s\"", name);
		return NULL;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		scnprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (parse(p, name + sizeof(MT_HWBP_PREFIX) - 1)) {
		scnprintf(err, errlen, "bad watchpoint binding \"%s\" (hwbp:w|rw:1|2|4|8:0xADDRESS|SYMBOL)",
			  name);
		kfree(p);
		return NULL;
	}
	strscpy(p->name, name, sizeof(p->name));
	p->m.name = p->name;
	p->m.format = p->m.recorded = " ";   /* MARK_NOARGS */
	p->m.source = mt_hwbp_source;
	if (mt_fmt_parse(p->m.recorded, &p->m.fmt, &ferr)) {
		scnprintf(err, errlen, "watchpoint format: %s", ferr.message);
		kfree(p);
		return NULL;
	}
	if (p->sym[0] && !(p->addr = mt_ksym(p->sym))) {
		scnprintf(err, errlen, "cannot watch kernel data %s: no such symbol in kallsyms (or "
			  "kallsyms cannot be read: the kernel lacks CONFIG_KALLSYMS_ALL)", p->sym);
		kfree(p);
		return NULL;
	}
	rc = register_disabled(p);
	if (rc) {
		why(p, rc, err, errlen);
		kfree(p);
		return NULL;
	}
	return &p->m;
}

bool mt_hwbp_owns(const struct mt_kmarker *m)
{
	return m && m->source == mt_hwbp_source;
}

int mt_hwbp_arm(struct mt_kmarker *m)
{
	struct mt_hwbp *p = container_of(m, struct mt_hwbp, m);
	int cpu;

	if (p->enabled || !p->bp)
		return 0;
	/* the CPUs register_wide_hw_breakpoint took: those online then */
	for_each_possible_cpu(cpu) {
		struct perf_event *bp = per_cpu(*p->bp, cpu);

		if (bp)
			perf_event_enable(bp);
	}
	p->enabled = true;
	return 0;
}

void mt_hwbp_disarm(struct mt_kmarker *m)
{
	struct mt_hwbp *p = container_of(m, struct mt_hwbp, m);
	int cpu;

	if (!p->enabled)
		return;
	/* returns once the event is off on that CPU: a cross call, which
	 * that CPU takes with interrupts on, so never inside a hit (the
	 * debug exception runs with them off); mt_hooks_sync then waits
	 * for the rest of the dispatch as for any marker */
	for_each_possible_cpu(cpu) {
		struct perf_event *bp = per_cpu(*p->bp, cpu);

		if (bp)
			perf_event_disable(bp);
	}
	p->enabled = false;
}

void mt_hwbp_put(struct mt_kmarker *m)
{
	struct mt_hwbp *p = container_of(m, struct mt_hwbp, m);

	/* disarmed before (mt_lua_host.c): no hit runs, none comes */
	if (p->bp)
		unregister_wide_hw_breakpoint(p->bp);
	kfree(p);
}
