/*
 * compact.c - events that exercise the compact event layout
 * (runtime/core/mt_event.h), for record-compact.t.
 *   compact gap MS     gap_ev(k) k = 0..3, MS milliseconds apart: gaps past
 *                      the 24-bit timestamp's 16.7 ms (extended headers)
 *   compact rename     the main thread is "before", emits named_ev(0..2),
 *                      renames itself "after" (prctl), emits named_ev(3..5);
 *                      a worker "worker" emits worker_ev(0..2), is renamed
 *                      "worker-2" by main (pthread_setname_np), emits
 *                      worker_ev(3..5); the worker runs on one CPU before
 *                      the rename, on another after (when it may)
 *   compact comm N     the thread is "before-comm", emits comm_ev(0..N-1),
 *                      writes "after-comm" to /proc/thread-self/comm (no
 *                      wrapper sees that), emits comm_ev(N..2N-1)
 *   compact many       300 markers (many_100 .. many_399) hit once each,
 *                      then again: ids past 254 take extended headers
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <marktap/marker.h>

static pthread_barrier_t renamed;
static int cpu_a = -1, cpu_b = -1;   /* two CPUs we may run on, if any */

/* On cpu (if known): the worker's events before and after its rename then
 * go to two streams, and a reader that reads one stream ahead of the
 * other (the merge) must still name each event as it was named then. */
static void run_on(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void pick_cpus(void)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set)) {
			if (cpu_a < 0)
				cpu_a = i;
			else if (cpu_b < 0)
				cpu_b = i;
		}
	if (cpu_b < 0)
		cpu_a = -1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static void *worker(void *arg)
{
	long i;

	(void)arg;
	run_on(cpu_a);
	pthread_barrier_wait(&renamed);   /* main names us */
	for (i = 0; i < 3; i++)
		trace_mark(worker_ev, "i %ld", i);
	pthread_barrier_wait(&renamed);   /* main renames us */
	pthread_barrier_wait(&renamed);
	run_on(cpu_b);
	for (i = 3; i < 6; i++)
		trace_mark(worker_ev, "i %ld", i);
	return NULL;
}

static int rename_mode(void)
{
	pthread_t th;
	long i;

	pick_cpus();
	run_on(cpu_a);
	prctl(PR_SET_NAME, "before", 0, 0, 0);
	pthread_barrier_init(&renamed, NULL, 2);
	for (i = 0; i < 3; i++)
		trace_mark(named_ev, "i %ld", i);
	prctl(PR_SET_NAME, "after", 0, 0, 0);
	for (i = 3; i < 6; i++)
		trace_mark(named_ev, "i %ld", i);
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	pthread_setname_np(th, "worker");
	pthread_barrier_wait(&renamed);
	pthread_barrier_wait(&renamed);
	pthread_setname_np(th, "worker-2");
	pthread_barrier_wait(&renamed);
	return pthread_join(th, NULL) != 0;
}

#define M1(n)   trace_mark(many_##n, "k %d", k);
#define M10(n)  M1(n##0) M1(n##1) M1(n##2) M1(n##3) M1(n##4) \
		M1(n##5) M1(n##6) M1(n##7) M1(n##8) M1(n##9)
#define M100(n) M10(n##0) M10(n##1) M10(n##2) M10(n##3) M10(n##4) \
		M10(n##5) M10(n##6) M10(n##7) M10(n##8) M10(n##9)

static void many_mode(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		M100(1) M100(2) M100(3)
	}
}

/* A rename only the kernel knows of: a write to the thread's comm file. */
static int comm_mode(long n)
{
	FILE *f;
	long i;

	prctl(PR_SET_NAME, "before-comm", 0, 0, 0);
	for (i = 0; i < n; i++)
		trace_mark(comm_ev, "i %ld", i);
	f = fopen("/proc/thread-self/comm", "w");
	if (!f || fputs("after-comm", f) < 0 || fclose(f))
		return 1;
	for (i = n; i < 2 * n; i++)
		trace_mark(comm_ev, "i %ld", i);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int k;

	if (!strcmp(mode, "gap") && argc > 2) {
		long ms = atol(argv[2]);
		for (k = 0; k < 4; k++) {
			if (k)
				sleep_ms(ms);
			trace_mark(gap_ev, "k %d", k);
		}
		return 0;
	}
	if (!strcmp(mode, "rename"))
		return rename_mode();
	if (!strcmp(mode, "comm") && argc > 2)
		return comm_mode(atol(argv[2]));
	if (!strcmp(mode, "many")) {
		many_mode();
		return 0;
	}
	fprintf(stderr, "usage: compact gap MS | rename | comm N | many\n");
	return 2;
}
