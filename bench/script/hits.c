/*
 * hits.c - the marker of the script benchmark.
 *   hits THREADS N     each thread hits ev(n) N times, then prints the
 *                      mean wall time per hit over all threads, in ns.
 * It waits for "go" on a semaphore-free path: the first argument's threads
 * start together after a barrier.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <marktap/marker.h>

static long per_thread;
static pthread_barrier_t barrier;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *run(void *arg)
{
	double *ns = arg, t0;

	pthread_barrier_wait(&barrier);
	t0 = now_ns();
	for (long i = 0; i < per_thread; i++)
		trace_mark(ev, "n %ld", i);
	*ns = now_ns() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	double ns[64], wall = 0;

	per_thread = argc > 2 ? atol(argv[2]) : 1000000;
	if (threads < 1 || threads > 64 || per_thread < 1)
		return 2;
	pthread_barrier_init(&barrier, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, &ns[i]);
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		if (ns[i] > wall)
			wall = ns[i];
	}
	/* wall time of the slowest thread per hit of one thread: the cost a
	 * hit adds to the program when the threads run side by side */
	printf("%.1f\n", wall / (double)per_thread);
	return 0;
}
