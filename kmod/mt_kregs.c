/*
 * mt_kregs.c - the registers of the kernel function probe hit whose
 * handler runs on this CPU, for guru mode's stores (mt_kregs.h).
 *
 * mt_kprobe.c brackets each hit's handlers with mt_kregs_enter/leave; the
 * Lua library's kernel_store (mt_lua_lib.c) writes through mt_kregs_store.
 * Kprobe handlers run with preemption off, so a CPU's pointer is only
 * ever changed by that CPU: a hit in an interrupt while a handler runs
 * pushes its own and pops it before the interrupted handler resumes.
 *
 * A write takes effect because the kernel restores the registers from
 * the pt_regs its handlers saw: at a function's entry (int3, or ftrace's
 * regs trampoline for a kprobe on the entry) the function then runs with
 * the new argument registers; at the return (the kretprobe trampoline)
 * the caller gets the new ax.  Loading such a script is root's
 * (kernel function probes need CAP_SYS_ADMIN: mt_lua_host.c).
 */
#include <linux/errno.h>
#include <linux/netfilter.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <asm/syscall.h>
#include "mt_kregs.h"
#include "mt_netfilter.h"

static DEFINE_PER_CPU(struct mt_kregs *, mt_kregs_cur);

void mt_kregs_enter(struct mt_kregs *k, struct pt_regs *regs, bool ret)
{
	k->regs = regs;
	k->ret = ret;
	k->addr = 0;
	k->verdict = NULL;
	k->watch = false;
	k->sysregs = NULL;
	k->prev = this_cpu_read(mt_kregs_cur);
	this_cpu_write(mt_kregs_cur, k);
}

void mt_kregs_enter_syscall(struct mt_kregs *k, struct pt_regs *regs)
{
	mt_kregs_enter(k, NULL, false);
	k->sysregs = regs;
}

/*
 * The system call's handler reads its arguments from these registers
 * after the sys_enter tracepoint (x86_64's syscall wrappers take the
 * pt_regs), so a write here is what the call sees, as a ptrace or seccomp
 * tracer's change of them is.
 */
int mt_kregs_syscall_store(int n, long v)
{
	struct mt_kregs *k = this_cpu_read(mt_kregs_cur);

	if (!k || !k->sysregs)
		return -ENOENT;
	if (n < 0 || n > 5)
		return -EINVAL;
#ifdef CONFIG_X86_64
	if (in_ia32_syscall()) {   /* ebx, ecx, edx, esi, edi, ebp */
		unsigned long *r[] = { &k->sysregs->bx, &k->sysregs->cx, &k->sysregs->dx,
				       &k->sysregs->si, &k->sysregs->di, &k->sysregs->bp };
		*r[n] = (u32)v;
		return 0;
	}
	switch (n) {   /* the x86_64 system call convention's argument registers */
	case 0: k->sysregs->di = (unsigned long)v; break;
	case 1: k->sysregs->si = (unsigned long)v; break;
	case 2: k->sysregs->dx = (unsigned long)v; break;
	case 3: k->sysregs->r10 = (unsigned long)v; break;
	case 4: k->sysregs->r8 = (unsigned long)v; break;
	default: k->sysregs->r9 = (unsigned long)v; break;
	}
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

void mt_kregs_leave(struct mt_kregs *k)
{
	this_cpu_write(mt_kregs_cur, k->prev);
}

struct pt_regs *mt_kregs_regs(unsigned long *addr)
{
	struct mt_kregs *k = this_cpu_read(mt_kregs_cur);

	*addr = k ? k->addr : 0;
	return k ? k->regs : NULL;
}

int mt_kregs_store(int n, long v)
{
	struct mt_kregs *k = this_cpu_read(mt_kregs_cur);

	if (k && k->verdict) {
		if (n != MT_NETFILTER_VERDICT_ARG)
			return -EPERM;
		if (v != NF_DROP && v != NF_ACCEPT)
			return -ERANGE;
		*k->verdict = (unsigned int)v;
		return 0;
	}
	/* none, a tracepoint's hit (no registers), or a watchpoint's (the
	 * registers of whatever code made the access: none to write) */
	if (!k || !k->regs || k->watch)
		return -ENOENT;
	if (n == 7) {
		if (!k->ret)
			return -EINVAL;
		regs_set_return_value(k->regs, (unsigned long)v);
		return 0;
	}
	if (k->ret || n < 1 || n > 6)
		return -EINVAL;   /* at the return, the call's registers are gone */
#ifdef CONFIG_X86_64
	switch (n) {   /* the x86_64 calling convention's argument registers */
	case 1: k->regs->di = (unsigned long)v; break;
	case 2: k->regs->si = (unsigned long)v; break;
	case 3: k->regs->dx = (unsigned long)v; break;
	case 4: k->regs->cx = (unsigned long)v; break;
	case 5: k->regs->r8 = (unsigned long)v; break;
	default: k->regs->r9 = (unsigned long)v; break;
	}
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}
