/*
 * stress.c - emit known sequences from several threads.
 *   stress THREADS EVENTS [kill | loop SECONDS | migrate]
 * Each thread t emits stress_ev(thread=t, seq=0..EVENTS-1).  "kill" ends
 * the process with SIGKILL once every event is committed; "loop" keeps
 * emitting (slowly) for SECONDS, for marktrace record -p; "migrate" moves
 * the threads from CPU to CPU (their affinity, from another thread, every
 * 20 us) while they emit, so that some move between the start and the
 * end of an event (per-CPU rings, mt_rseq.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <marktap/marker.h>

static unsigned long events;
static int running;

/* Move every thread to the next CPU, round and round, while they run. */
static void *mover(void *arg)
{
	pthread_t *tid = arg;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), k = 0, t;

	while (__atomic_load_n(&running, __ATOMIC_RELAXED)) {
		for (t = 0; tid[t]; t++) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((k + t) % ncpu, &set);
			pthread_setaffinity_np(tid[t], sizeof(set), &set);
		}
		k++;
		usleep(20);
	}
	return NULL;
}

static void *run(void *arg)
{
	int t = (int)(long)arg;
	unsigned long i;

	for (i = 0; i < events; i++)
		trace_mark(stress_ev, "thread %d seq %lu tag %s", t, i, "abc");
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2, t;
	pthread_t tid[65] = { 0 }, move;
	int migrate = argc > 3 && !strcmp(argv[3], "migrate");

	events = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
	if (argc > 4 && !strcmp(argv[3], "loop")) {
		int end = atoi(argv[4]) * 100, k;
		printf("ready\n");
		fflush(stdout);
		for (k = 0; k < end; k++) {
			trace_mark(tick, "n %d", k);
			usleep(10000);
		}
		return 0;
	}
	if (threads < 1 || threads > 64)
		return 2;
	running = 1;
	for (t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, run, (void *)(long)t);
	if (migrate)
		pthread_create(&move, NULL, mover, tid);
	for (t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	if (migrate) {
		__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
		pthread_join(move, NULL);
	}
	if (argc > 3 && !strcmp(argv[3], "kill"))
		raise(SIGKILL);
	return 0;
}
