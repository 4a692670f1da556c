/*
 * mt_kregs.h - the registers of the kernel function probe hit whose
 * handler runs on this CPU (mt_kregs.c): what guru mode's stores to
 * $param and $return write (stap -g's `$count = 512`, `$return = -EPERM`),
 * or the verdict of the netfilter hook's packet (`$verdict = nf_drop`).
 */
#ifndef MT_KREGS_H
#define MT_KREGS_H

#include <linux/types.h>

struct pt_regs;

struct mt_kregs {
	struct pt_regs *regs;
	bool ret;                  /* at the return (a kretprobe) */
	unsigned long addr;        /* the probed function's address at the call (0: none) */
	unsigned int *verdict;     /* a netfilter hook's (mt_netfilter.c), else NULL */
	bool watch;                /* a watchpoint's (mt_hwbp.c): regs for backtraces only */
	struct pt_regs *sysregs;   /* a system call's entry (mt_src_syscall.c): its
				      user registers, regs NULL */
	struct mt_kregs *prev;     /* the hit this one interrupted */
};

/* Around a probe's handlers, with preemption off (kprobe handlers are). */
void mt_kregs_enter(struct mt_kregs *k, struct pt_regs *regs, bool ret);
void mt_kregs_leave(struct mt_kregs *k);
/* The registers of the hit on this CPU, NULL outside a function probe's;
 * *addr the probed address at a call (a kprobe's registers are past its
 * breakpoint there), else 0. */
struct pt_regs *mt_kregs_regs(unsigned long *addr);
/* Write parameter n (1..6, at the call) or the return value (n 7, at the
 * return): 0, -ENOENT (no function probe's hit here), -EINVAL (n does not
 * exist where the handler runs), -EOPNOTSUPP (not x86_64).  In a netfilter
 * hook's hit only the verdict (n MT_NETFILTER_VERDICT_ARG) is written,
 * NF_DROP or NF_ACCEPT: -EPERM for another n, -ERANGE for another value. */
int mt_kregs_store(int n, long v);
/* Around the markers of a system call's entry, before the call reads its
 * arguments from the user registers saved at the entry. */
void mt_kregs_enter_syscall(struct mt_kregs *k, struct pt_regs *regs);
/* Write the call's argument n (0..5) there: 0, -ENOENT (not at a system
 * call's entry), -EINVAL (n), -EOPNOTSUPP (not x86_64). */
int mt_kregs_syscall_store(int n, long v);

#endif
