// SPDX-License-Identifier: GPL-2.0
/*
 * tapsets-kmod.c - mt_acts.ko, tapsets.t's module: its load and unload do
 * kernel things no user action reaches in the guest, and say on the
 * kernel log what they did (one "mt_acts: KEY VALUE..." line each):
 *
 *   load: a tasklet on each queue (TASKLET_SOFTIRQ and HI_SOFTIRQ) with
 *   known data; a kernel thread "mt_acts"; down() that sleeps until the
 *   thread's up(); down_interruptible() in the thread that sleeps until
 *   our up(), then one that a signal interrupts; printk from a known
 *   function.  unload: kthread_stop() of the thread, which returns 42.
 *
 * Every wait is bounded: when a sleeper does not show up within 5 s the
 * other side goes on anyway (the marker then does not fire, and the test
 * says so) instead of hanging the guest.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/semaphore.h>

#define LOW_DATA 0x5eed1UL
#define HIGH_DATA 0x5eed2UL
#define THREAD_RET 42

static struct semaphore sem_down, sem_intr, sem_fail;
static struct task_struct *thread;
static DECLARE_COMPLETION(thread_done);   /* its semaphore work is over */
static DECLARE_COMPLETION(low_ran);
static DECLARE_COMPLETION(high_ran);

static void low_fn(unsigned long data)
{
	complete(&low_ran);
}

static void high_fn(unsigned long data)
{
	complete(&high_ran);
}

static struct tasklet_struct low, high;

/* printk.call's ip is inside this function (the empty asm after the call
 * keeps the compiler from making it a tail call: the return address would
 * then be our caller's) */
static noinline void say_called(void)
{
	printk(KERN_INFO "mt_acts: say %lx\n", (unsigned long)say_called);
	asm volatile("" ::: "memory");
}

/* Wait until a task sleeps on s (its wait list is not empty): 5 s at most. */
static int sleeper_on(struct semaphore *s)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (!list_empty_careful(&s->wait_list))
			return 0;
		msleep(5);
	}
	return -ETIMEDOUT;
}

static int thread_fn(void *unused)
{
	allow_signal(SIGUSR1);
	sleeper_on(&sem_down);
	up(&sem_down);                         /* wakes the loader's down() */
	if (down_interruptible(&sem_intr) == 0)
		pr_info("mt_acts: down_interruptible ok\n");
	if (down_interruptible(&sem_fail) == -EINTR) {
		pr_info("mt_acts: down_interruptible interrupted\n");
		flush_signals(current);
	}
	complete(&thread_done);
	while (!kthread_should_stop())
		msleep(10);
	return THREAD_RET;
}

static int __init mt_acts_init(void)
{
	tasklet_init(&low, low_fn, LOW_DATA);
	tasklet_init(&high, high_fn, HIGH_DATA);
	pr_info("mt_acts: tasklets %lx %lx %lx %lx\n", (unsigned long)low_fn, LOW_DATA,
		(unsigned long)high_fn, HIGH_DATA);
	tasklet_schedule(&low);
	tasklet_hi_schedule(&high);
	if (!wait_for_completion_timeout(&low_ran, 5 * HZ) ||
	    !wait_for_completion_timeout(&high_ran, 5 * HZ))
		return -ETIMEDOUT;
	tasklet_kill(&low);
	tasklet_kill(&high);

	sema_init(&sem_down, 0);
	sema_init(&sem_intr, 0);
	sema_init(&sem_fail, 0);
	pr_info("mt_acts: sems %lx %lx %lx\n", (unsigned long)&sem_down,
		(unsigned long)&sem_intr, (unsigned long)&sem_fail);
	thread = kthread_run(thread_fn, NULL, "mt_acts");
	if (IS_ERR(thread))
		return PTR_ERR(thread);
	pr_info("mt_acts: thread %d\n", thread->pid);
	down(&sem_down);                       /* the thread ups it */
	sleeper_on(&sem_intr);
	up(&sem_intr);
	sleeper_on(&sem_fail);
	send_sig(SIGUSR1, thread, 1);
	if (!wait_for_completion_timeout(&thread_done, 5 * HZ)) {
		kthread_stop(thread);
		return -ETIMEDOUT;
	}
	say_called();
	return 0;
}

static void __exit mt_acts_exit(void)
{
	pr_info("mt_acts: stopped %d\n", kthread_stop(thread));
}

module_init(mt_acts_init);
module_exit(mt_acts_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("marktap test: kernel actions for tapsets.t");
