/*
 * tstate.h - what each thread and each CPU was doing over time, worked
 * out from the kernel markers of a trace (LTTV's state module), for
 * `marktrace timeline` and `marktrace export`.
 *
 * Events go in one at a time in time order (ts_feed, from ctf_merge_*);
 * what comes out is, per row (a thread or a CPU), a sequence of intervals
 * [start, end) of one state each, handed to the caller's callback when
 * each interval ends.  Nothing is kept per event: memory grows with the
 * number of threads and CPUs only.
 *
 * State comes from the markers of markers.tsv that `marktrace record
 * --kernel` writes, in traces whose env says domain = "kernel":
 *
 *   kernel_sched_schedule       prev_pid next_pid prev_state  running <-> runnable/blocked
 *   kernel_sched_try_wakeup     pid state                     blocked -> runnable
 *   kernel_sched_wakeup_new_task pid                          new -> runnable
 *   kernel_process_fork         parent_pid child_pid child_tgid
 *   kernel_process_exit/free    pid                           zombie, gone
 *   fs_exec                     filename                      (new name: procname)
 *   kernel_arch_syscall_entry/exit, kernel_arch_trap_entry/exit,
 *   mm_handle_fault_entry/exit                                 mode of the current thread
 *   kernel_irq_entry/exit, kernel_softirq_entry/exit           mode of the CPU
 *   statedump_process_state     pid parent_pid tgid name     threads alive at the start
 *
 * Any other kernel event says its context thread runs on its CPU now;
 * user-space events only name their thread (a row with ticks, no state).
 */
#ifndef TSTATE_H
#define TSTATE_H

#include <stdint.h>
#include "ctf_read.h"

enum ts_state {
	TS_NONE = 0,            /* not alive / not known at all: nothing drawn */
	TS_UNKNOWN,             /* alive, state not known (before its first event) */
	TS_USER,                /* running in user mode */
	TS_SYSCALL,             /* running in a system call */
	TS_TRAP,                /* running in a trap or page fault */
	TS_IRQ,                 /* its CPU serves an interrupt */
	TS_SOFTIRQ,             /* its CPU runs a softirq */
	TS_RUNNABLE,            /* waits for a CPU */
	TS_BLOCKED,             /* waits for something else */
	TS_ZOMBIE,              /* exited, not yet reaped */
	TS_IDLE,                /* a CPU running its idle task */
	TS_NSTATES
};

extern const char *const ts_state_name[TS_NSTATES];

#define TS_MODE_DEPTH 8         /* syscall > trap > ... nesting kept per thread/CPU */

struct ts_mode {
	unsigned char state;
	int32_t aux;
};

/*
 * A row: a thread (tid >= 0) or a CPU.  The open interval is
 * [since, now) in (state, aux); aux says more: the syscall, irq or
 * softirq number, the CPU a running thread is on, the thread a CPU runs.
 */
struct ts_row {
	int is_cpu;
	int64_t id;             /* tid, or CPU number */
	int32_t pid, ppid;      /* thread group and parent, -1 unknown */
	char name[17];          /* last name seen (procname, state dump) */
	char first_name[17];    /* the first one: differs after an exec */
	uint64_t since;
	unsigned char state;
	int32_t aux;
	uint64_t events;        /* events in its context (or on the CPU) */
	uint64_t busy_ns;       /* time in a running state */
	void *user;             /* the caller's (lanes of the timeline) */
	int mark;               /* the caller's */

	/* a thread */
	unsigned char base;     /* off CPU: UNKNOWN, RUNNABLE, BLOCKED, ZOMBIE */
	unsigned char exiting;
	int64_t on_cpu;         /* CPU number while running, else -1 */
	struct ts_mode mode[TS_MODE_DEPTH];  /* syscall/trap nesting */
	unsigned depth;

	/* a CPU */
	int64_t current;        /* tid it runs, 0 idle, -1 not known */
	struct ts_mode irq[TS_MODE_DEPTH];   /* irq/softirq nesting */
	unsigned irq_depth;
};

/* Called as each interval of a row ends (state != TS_NONE). */
typedef void (*ts_interval_fn)(void *ctx, struct ts_row *row, uint64_t start, uint64_t end,
			       unsigned state, int32_t aux);

struct ts {
	ts_interval_fn interval;
	void *ctx;
	struct ts_row **threads;  /* open-addressing hash by tid */
	unsigned nthreads, thread_slots;
	uint64_t hash_mul;        /* random per run: a trace cannot pick
				     tids that all collide (see hash_tid) */
	unsigned dropped_threads; /* past TS_MAX_THREADS: not followed */
	struct ts_row **cpus;     /* in the order first seen */
	unsigned ncpus;
	struct ts_row **cpu_by_id; /* by CPU number + 1 (-1: not known) */
	unsigned cpu_ids;
	uint64_t t0, now;         /* first and latest time fed */
	int started;
	int kernel_state;         /* a kernel trace with scheduler events was seen */
	int kernel_events;        /* a kernel trace's events were seen */
	uint64_t lost;            /* events lost: states may be wrong after */
};

#define TS_MAX_THREADS (1u << 20)
/* CPU numbers a trace may use (Linux's NR_CPUS is at most 8192); others
 * are taken for "not known" (-1): a trace's cpu_id is any 64-bit value */
#define TS_MAX_CPUS (1 << 16)

void ts_init(struct ts *ts, ts_interval_fn interval, void *ctx);
/*
 * Feed one item of the merge (an event or a lost notice).  1 if the event
 * is a kernel marker of the families the state comes from (scheduler,
 * processes, system calls, interrupts, state dump), 0 for the others
 * (user-space events, fs_open...): those a picture shows as ticks.
 */
int ts_feed(struct ts *ts, const struct ctf_stream *s);
/* Close every open interval at the last time fed. */
void ts_finish(struct ts *ts);
void ts_free(struct ts *ts);
/* Free what ts_feed bound to the event classes (cls->state), before ctf_close. */
void ts_unbind(struct ctf_set *set);

/* The thread row of tid (created), or NULL past TS_MAX_THREADS. */
struct ts_row *ts_thread(struct ts *ts, int64_t tid);
/* The same without creating it: for interval callbacks, which may run
 * while ts_finish walks the table. */
struct ts_row *ts_find_thread(const struct ts *ts, int64_t tid);

/* The row of a CPU (created); numbers outside 0..TS_MAX_CPUS-1 are -1's. */
struct ts_row *ts_cpu(struct ts *ts, int64_t cpu);

/* The rows, for output: threads (not tid 0) sorted by pid then tid. */
struct ts_row **ts_sorted_threads(struct ts *ts, unsigned *n);

/* The name of x86_64 system call nr ("read"), NULL if not known; the
 * numbers are 0..ts_syscall_count()-1. */
const char *ts_syscall_name(int64_t nr);
unsigned ts_syscall_count(void);

/* Is this trace a kernel trace (env domain = "kernel")? */
int ts_trace_is_kernel(const struct ctf_trace *t);

#endif
