/*
 * mt_src_kernel.c - the seed's kernel/ markers (005 patch), x86 traps and
 * kthreads (010/011), exec (003) and semaphores (008), on 6.1.
 *
 * Where 6.1 has a tracepoint at the seed's place we use it (sched_switch
 * is the seed's context_switch marker, irq_handler_entry its
 * handle_IRQ_event one...); else a kprobe on the function the seed
 * patched.  Probe arguments follow the tracepoint's TP_PROTO, after the
 * data pointer (our struct mt_hook).  kprobe arguments are read from the
 * x86_64 calling convention registers: di, si, dx, cx, r8, r9.
 */
#include <linux/kernel.h>
#include <linux/binfmts.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/semaphore.h>
#include <linux/time.h>
#include <linux/timekeeping.h>
#include <linux/jiffies.h>
#include "mt_kmod.h"

/* ---- interrupts ---------------------------------------------------- */

/*
 * kernel_mode: did the interrupt come from the kernel?  The seed read
 * get_irq_regs(); the per-CPU irq_regs it reads is not exported, so we
 * find it by name (0 if not: then we say kernel mode, as the seed did
 * when regs were NULL).
 */
static unsigned long mt_irq_regs;

static unsigned irq_kernel_mode(void)
{
	struct pt_regs *regs = NULL;

	if (mt_irq_regs)
		regs = *this_cpu_ptr((struct pt_regs * __percpu *)mt_irq_regs);
	return regs ? !user_mode(regs) : 1;
}

static void probe_irq_entry(void *data, int irq, struct irqaction *action)
{
	mt_kmarker_fire(&mt_m_kernel_irq_entry, (unsigned)irq, irq_kernel_mode());
}

static void probe_irq_exit(void *data, int irq, struct irqaction *action, int ret)
{
	mt_kmarker_fire(&mt_m_kernel_irq_exit);
}

/* The seed also marked the APIC vectors (timer, IPIs) with their vector. */
static void probe_vector_entry(void *data, int vector)
{
	mt_kmarker_fire(&mt_m_kernel_irq_entry, (unsigned)vector, irq_kernel_mode());
}

static void probe_vector_exit(void *data, int vector)
{
	mt_kmarker_fire(&mt_m_kernel_irq_exit);
}

static MT_TP_HOOK(h_irq_handler_entry, "irq_handler_entry", probe_irq_entry, NULL);
static MT_TP_HOOK(h_irq_handler_exit, "irq_handler_exit", probe_irq_exit, NULL);
/*
 * The APIC vectors are opt-in (irq_vectors=1): registering a probe
 * patches the tracepoint site with a breakpoint, and under qemu's software
 * emulation a CPU taking the local timer or an IPI on that site while it
 * is patched loops on the breakpoint for ever (seen in
 * __sysvec_apic_timer_interrupt and sysvec_call_function_single).  The
 * patching itself waits for the call-function IPIs, so those two are never
 * probed.  Device interrupts (irq_handler_entry) are always marked.
 */
static int mt_irq_vectors;
module_param_named(irq_vectors, mt_irq_vectors, int, 0444);
MODULE_PARM_DESC(irq_vectors, "also mark APIC vectors (local timer, IPIs) as kernel_irq_entry/exit");

#define VECTOR(v) \
	static struct mt_hook h_##v##_entry = { .name = #v "_entry", .kind = MT_HOOK_TRACEPOINT, \
		.tp_probe = (void *)probe_vector_entry, .enable = &mt_irq_vectors }; \
	static struct mt_hook h_##v##_exit = { .name = #v "_exit", .kind = MT_HOOK_TRACEPOINT, \
		.tp_probe = (void *)probe_vector_exit, .enable = &mt_irq_vectors };
VECTOR(local_timer)
VECTOR(reschedule)
VECTOR(irq_work)
VECTOR(spurious_apic)
VECTOR(error_apic)
VECTOR(x86_platform_ipi)
VECTOR(thermal_apic)
VECTOR(threshold_apic)
VECTOR(deferred_error_apic)
#undef VECTOR

#define VECTORS(end) &h_local_timer_##end, &h_reschedule_##end, \
	&h_irq_work_##end, &h_spurious_apic_##end, \
	&h_error_apic_##end, &h_x86_platform_ipi_##end, &h_thermal_apic_##end, \
	&h_threshold_apic_##end, &h_deferred_error_apic_##end
MT_KMARKER(kernel_irq_entry, "tracepoint irq:irq_handler_entry (+ irq_vectors:*_entry with irq_vectors=1)",
	   &h_irq_handler_entry, VECTORS(entry));
MT_KMARKER(kernel_irq_exit, "tracepoint irq:irq_handler_exit (+ irq_vectors:*_exit with irq_vectors=1)",
	   &h_irq_handler_exit, VECTORS(exit));

/* ---- softirqs and tasklets ------------------------------------------ */

/* The softirq running on this CPU: tells a tasklet's high or low queue. */
static DEFINE_PER_CPU(unsigned, mt_softirq_vec);

static void probe_softirq_entry(void *data, unsigned int vec)
{
	this_cpu_write(mt_softirq_vec, vec);
	mt_kmarker_fire(&mt_m_kernel_softirq_entry, (unsigned long)vec);
}

static void probe_softirq_exit(void *data, unsigned int vec)
{
	mt_kmarker_fire(&mt_m_kernel_softirq_exit, (unsigned long)vec);
}

static void probe_softirq_raise(void *data, unsigned int vec)
{
	mt_kmarker_fire(&mt_m_kernel_softirq_raise, vec);
}

static unsigned long tasklet_data(struct tasklet_struct *t)
{
	/* 6.1's callback tasklets have no data: they get the tasklet itself */
	return t->use_callback ? (unsigned long)t : t->data;
}

static void probe_tasklet_entry(void *data, struct tasklet_struct *t, void *func)
{
	if (this_cpu_read(mt_softirq_vec) == HI_SOFTIRQ)
		mt_kmarker_fire(&mt_m_kernel_tasklet_high_entry, func, tasklet_data(t));
	else
		mt_kmarker_fire(&mt_m_kernel_tasklet_low_entry, func, tasklet_data(t));
}

static void probe_tasklet_exit(void *data, struct tasklet_struct *t, void *func)
{
	if (this_cpu_read(mt_softirq_vec) == HI_SOFTIRQ)
		mt_kmarker_fire(&mt_m_kernel_tasklet_high_exit, func, tasklet_data(t));
	else
		mt_kmarker_fire(&mt_m_kernel_tasklet_low_exit, func, tasklet_data(t));
}

static MT_TP_HOOK(h_softirq_entry, "softirq_entry", probe_softirq_entry, NULL);
static MT_TP_HOOK(h_softirq_exit, "softirq_exit", probe_softirq_exit, NULL);
static MT_TP_HOOK(h_softirq_raise, "softirq_raise", probe_softirq_raise, NULL);
static MT_TP_HOOK(h_tasklet_entry, "tasklet_entry", probe_tasklet_entry, NULL);
static MT_TP_HOOK(h_tasklet_exit, "tasklet_exit", probe_tasklet_exit, NULL);
MT_KMARKER(kernel_softirq_entry, "tracepoint irq:softirq_entry", &h_softirq_entry);
MT_KMARKER(kernel_softirq_exit, "tracepoint irq:softirq_exit", &h_softirq_exit);
MT_KMARKER(kernel_softirq_raise, "tracepoint irq:softirq_raise", &h_softirq_raise);
#define TASKLET "tracepoint irq:tasklet_entry in HI_SOFTIRQ (softirq_entry tells)"
MT_KMARKER(kernel_tasklet_high_entry, TASKLET, &h_tasklet_entry, &h_softirq_entry);
MT_KMARKER(kernel_tasklet_high_exit, "tracepoint irq:tasklet_exit in HI_SOFTIRQ",
	   &h_tasklet_exit, &h_softirq_entry);
MT_KMARKER(kernel_tasklet_low_entry, "tracepoint irq:tasklet_entry in TASKLET_SOFTIRQ",
	   &h_tasklet_entry, &h_softirq_entry);
MT_KMARKER(kernel_tasklet_low_exit, "tracepoint irq:tasklet_exit in TASKLET_SOFTIRQ",
	   &h_tasklet_exit, &h_softirq_entry);

/* ---- timers --------------------------------------------------------- */

static void probe_itimer_expire(void *data, int which, struct pid *pid, unsigned long long now)
{
	if (which == ITIMER_REAL)  /* the seed's it_real_fn */
		mt_kmarker_fire(&mt_m_kernel_timer_itimer_expired, pid_nr(pid));
}

static void probe_itimer_state(void *data, int which, const struct itimerspec64 *const v,
			       unsigned long long expires)
{
	mt_kmarker_fire(&mt_m_kernel_timer_itimer_set, which,
			(long)v->it_interval.tv_sec, (long)(v->it_interval.tv_nsec / NSEC_PER_USEC),
			(long)v->it_value.tv_sec, (long)(v->it_value.tv_nsec / NSEC_PER_USEC));
}

static void probe_timer_start(void *data, struct timer_list *timer, unsigned long expires,
			      unsigned int flags)
{
	/* timers lost their data word in 4.15: the timer itself stands for it */
	mt_kmarker_fire(&mt_m_kernel_timer_set, expires, timer->function, (unsigned long)timer);
}

/* The seed's do_timer marker: 6.1 updates the wall time once per tick here. */
static int pre_update_wall_time(struct kprobe *p, struct pt_regs *regs)
{
	struct timespec64 xtime, mono, wtm;

	if (!mt_kmarker_armed(&mt_m_kernel_timer_update_time))
		return 0;
	ktime_get_coarse_real_ts64(&xtime);
	ktime_get_coarse_ts64(&mono);
	wtm = timespec64_sub(mono, xtime);
	mt_kmarker_fire(&mt_m_kernel_timer_update_time, (unsigned long long)get_jiffies_64(),
			(long)xtime.tv_sec, (long)xtime.tv_nsec, (long)wtm.tv_sec, (long)wtm.tv_nsec);
	return 0;
}

/* kernel/time/timer.c's private struct process_timer, as 6.1 lays it out. */
struct mt_process_timer {
	struct timer_list timer;
	struct task_struct *task;
};

static int pre_process_timeout(struct kprobe *p, struct pt_regs *regs)
{
	struct mt_process_timer *t = container_of((struct timer_list *)regs->di,
						  struct mt_process_timer, timer);

	mt_kmarker_fire(&mt_m_kernel_timer_timeout, t->task->pid);
	return 0;
}

static MT_TP_HOOK(h_itimer_expire, "itimer_expire", probe_itimer_expire, NULL);
static MT_TP_HOOK(h_itimer_state, "itimer_state", probe_itimer_state, NULL);
static MT_TP_HOOK(h_timer_start, "timer_start", probe_timer_start, NULL);
static MT_KPROBE_HOOK(h_update_wall_time, "update_wall_time", pre_update_wall_time, NULL);
static MT_KPROBE_HOOK(h_process_timeout, "process_timeout", pre_process_timeout, NULL);
MT_KMARKER(kernel_timer_itimer_expired, "tracepoint timer:itimer_expire (ITIMER_REAL)", &h_itimer_expire);
MT_KMARKER(kernel_timer_itimer_set, "tracepoint timer:itimer_state", &h_itimer_state);
MT_KMARKER(kernel_timer_set, "tracepoint timer:timer_start (data: the timer)", &h_timer_start);
MT_KMARKER(kernel_timer_update_time, "kprobe update_wall_time", &h_update_wall_time);
MT_KMARKER(kernel_timer_timeout, "kprobe process_timeout", &h_process_timeout);

/* ---- kthreads ------------------------------------------------------- */

static void probe_kthread_stop(void *data, struct task_struct *t)
{
	mt_kmarker_fire(&mt_m_kernel_kthread_stop, t->pid);
}

static void probe_kthread_stop_ret(void *data, int ret)
{
	mt_kmarker_fire(&mt_m_kernel_kthread_stop_ret, ret);
}

static int entry_kernel_thread(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned long *)ri->data = regs->di;  /* fn */
	return 0;
}

static int ret_kernel_thread(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_kernel_arch_kthread_create, (long)regs_return_value(regs),
			(void *)*(unsigned long *)ri->data);
	return 0;
}

static MT_TP_HOOK(h_kthread_stop, "sched_kthread_stop", probe_kthread_stop, NULL);
static MT_TP_HOOK(h_kthread_stop_ret, "sched_kthread_stop_ret", probe_kthread_stop_ret, NULL);
static MT_KRETPROBE_HOOK(h_kernel_thread, "kernel_thread", entry_kernel_thread, ret_kernel_thread,
			 sizeof(unsigned long), NULL);
MT_KMARKER(kernel_kthread_stop, "tracepoint sched:sched_kthread_stop", &h_kthread_stop);
MT_KMARKER(kernel_kthread_stop_ret, "tracepoint sched:sched_kthread_stop_ret", &h_kthread_stop_ret);
MT_KMARKER(kernel_arch_kthread_create, "kretprobe kernel_thread", &h_kernel_thread);

/* ---- lockdep -------------------------------------------------------- */

static void probe_irq_enable(void *data, unsigned long ip, unsigned long parent_ip)
{
	mt_kmarker_fire(&mt_m_locking_hardirqs_on, ip);
}

static void probe_irq_disable(void *data, unsigned long ip, unsigned long parent_ip)
{
	mt_kmarker_fire(&mt_m_locking_hardirqs_off, ip);
}

static int pre_softirqs_on(struct kprobe *p, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_locking_softirqs_on, regs->di);
	return 0;
}

static int pre_softirqs_off(struct kprobe *p, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_locking_softirqs_off, regs->di);
	return 0;
}

struct lockdep_map;
static void probe_lock_acquire(void *data, struct lockdep_map *lock, unsigned int subclass,
			       int trylock, int read, int check, struct lockdep_map *next_lock,
			       unsigned long ip)
{
	mt_kmarker_fire(&mt_m_locking_lock_acquire, ip, subclass, lock, trylock);
}

static void probe_lock_release(void *data, struct lockdep_map *lock, unsigned long ip)
{
	/* lock_release lost its nested argument in 5.x: always 0 */
	mt_kmarker_fire(&mt_m_locking_lock_release, ip, lock, 0);
}

#define NEEDS_IRQFLAGS "needs CONFIG_TRACE_IRQFLAGS (preemptirq tracepoints)"
#define NEEDS_LOCKDEP "needs CONFIG_LOCKDEP"
static MT_TP_HOOK(h_irq_enable, "irq_enable", probe_irq_enable, NEEDS_IRQFLAGS);
static MT_TP_HOOK(h_irq_disable, "irq_disable", probe_irq_disable, NEEDS_IRQFLAGS);
static MT_KPROBE_HOOK(h_softirqs_on, "lockdep_softirqs_on", pre_softirqs_on,
		      "needs CONFIG_TRACE_IRQFLAGS and CONFIG_LOCKDEP");
static MT_KPROBE_HOOK(h_softirqs_off, "lockdep_softirqs_off", pre_softirqs_off,
		      "needs CONFIG_TRACE_IRQFLAGS and CONFIG_LOCKDEP");
static MT_TP_HOOK(h_lock_acquire, "lock_acquire", probe_lock_acquire, NEEDS_LOCKDEP);
static MT_TP_HOOK(h_lock_release, "lock_release", probe_lock_release, NEEDS_LOCKDEP);
MT_KMARKER(locking_hardirqs_on, "tracepoint preemptirq:irq_enable", &h_irq_enable);
MT_KMARKER(locking_hardirqs_off, "tracepoint preemptirq:irq_disable", &h_irq_disable);
MT_KMARKER(locking_softirqs_on, "kprobe lockdep_softirqs_on", &h_softirqs_on);
MT_KMARKER(locking_softirqs_off, "kprobe lockdep_softirqs_off", &h_softirqs_off);
MT_KMARKER(locking_lock_acquire, "tracepoint lock:lock_acquire", &h_lock_acquire);
MT_KMARKER(locking_lock_release, "tracepoint lock:lock_release (nested: 0)", &h_lock_release);

/* ---- printk ---------------------------------------------------------- */

#define MT_PRINTK_MAX 1024
static DEFINE_PER_CPU(char[MT_PRINTK_MAX], mt_printk_buf);

static unsigned long return_address(struct pt_regs *regs)
{
	/* at a function's first instruction the stack top is its return address */
	return regs_get_kernel_stack_nth(regs, 0);
}

static int pre_printk(struct kprobe *p, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_kernel_printk, (void *)return_address(regs));
	return 0;
}

/*
 * vprintk_emit(facility, level, dev_info, fmt, args): the seed marked the
 * formatted message without its "<N>" prefix and final newline.  We format
 * it ourselves into a per-CPU buffer: kprobe handlers do not nest on a CPU
 * (a nested hit is counted as missed), so the buffer has one user.
 */
static int pre_vprintk_emit(struct kprobe *p, struct pt_regs *regs)
{
	char *buf = *this_cpu_ptr(&mt_printk_buf);
	const char *fmt = (const char *)regs->cx, *text;
	int level = (int)regs->si, n;
	va_list ap;

	if (!mt_kmarker_armed(&mt_m_kernel_vprintk) || !fmt)
		return 0;
	/* va_list is an array of one struct on x86_64: args points at it */
	memcpy(ap, (void *)regs->r8, sizeof(ap));
	vscnprintf(buf, MT_PRINTK_MAX, fmt, ap);
	text = buf;
	while (printk_get_level(text)) {
		char c = printk_get_level(text);

		if (c >= '0' && c <= '7')
			level = c - '0';
		text = printk_skip_level(text);
	}
	if (level < 0)
		level = CONFIG_MESSAGE_LOGLEVEL_DEFAULT;
	n = strlen(text);
	if (n && text[n - 1] == '\n')
		buf[text - buf + n - 1] = '\0';
	mt_kmarker_fire(&mt_m_kernel_vprintk, level, text, (void *)return_address(regs));
	return 0;
}

static MT_KPROBE_HOOK(h_printk, "_printk", pre_printk, NULL);
static MT_KPROBE_HOOK(h_vprintk_emit, "vprintk_emit", pre_vprintk_emit, NULL);
MT_KMARKER(kernel_printk, "kprobe _printk", &h_printk);
MT_KMARKER(kernel_vprintk, "kprobe vprintk_emit", &h_vprintk_emit);

/* ---- scheduler, signals, processes, modules ------------------------- */

static void probe_wait_task(void *data, struct task_struct *p)
{
	mt_kmarker_fire(&mt_m_kernel_sched_wait_task, p->pid, (long)READ_ONCE(p->__state));
}

static void probe_waking(void *data, struct task_struct *p)
{
	mt_kmarker_fire(&mt_m_kernel_sched_try_wakeup, p->pid, (long)READ_ONCE(p->__state));
}

static void probe_wakeup_new(void *data, struct task_struct *p)
{
	mt_kmarker_fire(&mt_m_kernel_sched_wakeup_new_task, p->pid, (long)READ_ONCE(p->__state));
}

static void probe_switch(void *data, bool preempt, struct task_struct *prev,
			 struct task_struct *next, unsigned int prev_state)
{
	mt_kmarker_fire(&mt_m_kernel_sched_schedule, prev->pid, next->pid, (long)prev_state);
}

static void probe_migrate(void *data, struct task_struct *p, int dest_cpu)
{
	mt_kmarker_fire(&mt_m_kernel_sched_migrate_task, p->pid, (long)READ_ONCE(p->__state),
			dest_cpu);
}

static void probe_signal(void *data, int sig, struct kernel_siginfo *info,
			 struct task_struct *task, int group, int result)
{
	mt_kmarker_fire(&mt_m_kernel_send_signal, task->pid, sig);
}

static void probe_process_free(void *data, struct task_struct *p)
{
	mt_kmarker_fire(&mt_m_kernel_process_free, p->pid);
}

static void probe_process_exit(void *data, struct task_struct *p)
{
	mt_kmarker_fire(&mt_m_kernel_process_exit, p->pid);
}

static void probe_process_wait(void *data, struct pid *pid)
{
	/* the pid waited for; 0 for "any child" (the seed had -1) */
	mt_kmarker_fire(&mt_m_kernel_process_wait, pid_nr(pid));
}

static void probe_process_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	mt_kmarker_fire(&mt_m_kernel_process_fork, parent->pid, child->pid, child->tgid);
}

static void probe_exec(void *data, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	mt_kmarker_fire(&mt_m_fs_exec, bprm->filename);
}

static void probe_module_load(void *data, struct module *mod)
{
	mt_kmarker_fire(&mt_m_kernel_module_load, mod->name);
}

static void probe_module_free(void *data, struct module *mod)
{
	mt_kmarker_fire(&mt_m_kernel_module_free, mod->name);
}

static MT_TP_HOOK(h_sched_wait_task, "sched_wait_task", probe_wait_task, NULL);
static MT_TP_HOOK(h_sched_waking, "sched_waking", probe_waking, NULL);
static MT_TP_HOOK(h_sched_wakeup_new, "sched_wakeup_new", probe_wakeup_new, NULL);
static MT_TP_HOOK(h_sched_switch, "sched_switch", probe_switch, NULL);
static MT_TP_HOOK(h_sched_migrate_task, "sched_migrate_task", probe_migrate, NULL);
static MT_TP_HOOK(h_signal_generate, "signal_generate", probe_signal, NULL);
static MT_TP_HOOK(h_process_free, "sched_process_free", probe_process_free, NULL);
static MT_TP_HOOK(h_process_exit, "sched_process_exit", probe_process_exit, NULL);
static MT_TP_HOOK(h_process_wait, "sched_process_wait", probe_process_wait, NULL);
static MT_TP_HOOK(h_process_fork, "sched_process_fork", probe_process_fork, NULL);
static MT_TP_HOOK(h_process_exec, "sched_process_exec", probe_exec, NULL);
static MT_TP_HOOK(h_module_load, "module_load", probe_module_load, NULL);
static MT_TP_HOOK(h_module_free, "module_free", probe_module_free, NULL);
MT_KMARKER(kernel_sched_wait_task, "tracepoint sched:sched_wait_task", &h_sched_wait_task);
MT_KMARKER(kernel_sched_try_wakeup, "tracepoint sched:sched_waking", &h_sched_waking);
MT_KMARKER(kernel_sched_wakeup_new_task, "tracepoint sched:sched_wakeup_new", &h_sched_wakeup_new);
MT_KMARKER(kernel_sched_schedule, "tracepoint sched:sched_switch", &h_sched_switch);
MT_KMARKER(kernel_sched_migrate_task, "tracepoint sched:sched_migrate_task", &h_sched_migrate_task);
MT_KMARKER(kernel_send_signal, "tracepoint signal:signal_generate", &h_signal_generate);
MT_KMARKER(kernel_process_free, "tracepoint sched:sched_process_free", &h_process_free);
MT_KMARKER(kernel_process_exit, "tracepoint sched:sched_process_exit", &h_process_exit);
MT_KMARKER(kernel_process_wait, "tracepoint sched:sched_process_wait", &h_process_wait);
MT_KMARKER(kernel_process_fork, "tracepoint sched:sched_process_fork", &h_process_fork);
MT_KMARKER(fs_exec, "tracepoint sched:sched_process_exec", &h_process_exec);
MT_KMARKER(kernel_module_load, "tracepoint module:module_load", &h_module_load);
MT_KMARKER(kernel_module_free, "tracepoint module:module_free", &h_module_free);

/* ---- x86 traps ------------------------------------------------------ */

/*
 * do_trap is on the kprobe blacklist and exc_* are noinstr; do_error_trap
 * (divide error, overflow, bounds, invalid op, segment faults...) and
 * math_error (x87, SIMD) can be probed.  Page faults have their own pair,
 * mm_handle_fault_entry/exit.
 */
static int entry_error_trap(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct pt_regs *trap_regs = (struct pt_regs *)regs->di;

	mt_kmarker_fire(&mt_m_kernel_arch_trap_entry, (int)regs->cx,
			(long)instruction_pointer(trap_regs));
	return 0;
}

static int entry_math_error(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct pt_regs *trap_regs = (struct pt_regs *)regs->di;

	mt_kmarker_fire(&mt_m_kernel_arch_trap_entry, (int)regs->si,
			(long)instruction_pointer(trap_regs));
	return 0;
}

static int ret_trap(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_kernel_arch_trap_exit);
	return 0;
}

static MT_KRETPROBE_HOOK(h_do_error_trap, "do_error_trap", entry_error_trap, ret_trap, 0, NULL);
static MT_KRETPROBE_HOOK(h_math_error, "math_error", entry_math_error, ret_trap, 0, NULL);
MT_KMARKER(kernel_arch_trap_entry, "kretprobe do_error_trap, math_error (entry)",
	   &h_do_error_trap, &h_math_error);
MT_KMARKER(kernel_arch_trap_exit, "kretprobe do_error_trap, math_error (return)",
	   &h_do_error_trap, &h_math_error);

/* ---- semaphores (lib/semaphore-sleepers.c in the seed) -------------- */

static int pre_up(struct kprobe *p, struct pt_regs *regs)
{
	struct semaphore *sem = (struct semaphore *)regs->di;

	/* the seed's __up ran only with sleepers: the slow path of up() */
	if (!list_empty(&sem->wait_list))
		mt_kmarker_fire(&mt_m_sem_up, sem);
	return 0;
}

static int entry_down(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned long *)ri->data = regs->di;
	mt_kmarker_fire(&mt_m_sem_down, (void *)regs->di);
	return 0;
}

static int ret_down(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_sem_down_resume, (void *)*(unsigned long *)ri->data);
	return 0;
}

static int entry_down_intr(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned long *)ri->data = regs->di;
	mt_kmarker_fire(&mt_m_sem_down_intr, (void *)regs->di);
	return 0;
}

static int ret_down_intr(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	void *sem = (void *)*(unsigned long *)ri->data;

	if (regs_return_value(regs))
		mt_kmarker_fire(&mt_m_sem_down_intr_fail, sem);
	else
		mt_kmarker_fire(&mt_m_sem_down_intr_resume, sem);
	return 0;
}

static MT_KPROBE_HOOK(h_up, "up", pre_up, NULL);
static MT_KRETPROBE_HOOK(h_down, "__down", entry_down, ret_down, sizeof(unsigned long), NULL);
static MT_KRETPROBE_HOOK(h_down_intr, "__down_interruptible", entry_down_intr, ret_down_intr,
			 sizeof(unsigned long), NULL);
MT_KMARKER(sem_up, "kprobe up (with waiters)", &h_up);
MT_KMARKER(sem_down, "kretprobe __down (entry)", &h_down);
MT_KMARKER(sem_down_resume, "kretprobe __down (return)", &h_down);
MT_KMARKER(sem_down_intr, "kretprobe __down_interruptible (entry)", &h_down_intr);
MT_KMARKER(sem_down_intr_resume, "kretprobe __down_interruptible (return 0)", &h_down_intr);
MT_KMARKER(sem_down_intr_fail, "kretprobe __down_interruptible (return -EINTR)", &h_down_intr);
#define NO_SEM_SCHED "6.1 has no probe point before each sleep: the wait loop " \
	"(___down_common) is inlined and lock:contention_begin does not tell the down variant"
MT_KMARKER_NONE(sem_down_sched, NO_SEM_SCHED);
MT_KMARKER_NONE(sem_down_intr_sched, NO_SEM_SCHED);

int mt_src_kernel_init(void)
{
	mt_irq_regs = mt_ksym("irq_regs");
	return 0;
}
