/*
 * emit.c - the emitter of bench/ust, built twice: with -DUSE_UST (an
 * LTTng-UST tracepoint) and without (a marktap marker); same payload.
 *
 *   emit hot THREADS N      N events per thread as fast as possible;
 *                           prints ns per event (slowest thread's wall
 *                           time over N)
 *   emit idle N             N iterations of: an empty loop, then the
 *                           loop with the (disabled) probe site, then the
 *                           loop with a 5-byte nop (what a site patched
 *                           in and out of the code, a "jump label", would
 *                           cost when off); prints "EMPTY_NS PROBE_NS
 *                           NOP_NS" per iteration
 *   emit rate RATE SECONDS  one thread paced at RATE events/s; prints
 *                           the events emitted and the rate achieved
 *                           (below RATE when the emitter itself cannot
 *                           keep up)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef USE_UST
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ust_tp.h"
#define HIT(i) lttng_ust_tracepoint(bench_ust, ev, (int)(i), (long)(i) * 3, "abc")
#else
#include <marktap/marker.h>
#define HIT(i) trace_mark(bench_ev, "a %d b %ld s %s", (int)(i), (long)(i) * 3, "abc")
#endif

#define BARRIER() __asm__ __volatile__("" ::: "memory")

static long per_thread;
static pthread_barrier_t barrier;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *hot(void *arg)
{
	double *ns = arg, t0;

	pthread_barrier_wait(&barrier);
	t0 = now_ns();
	for (long i = 0; i < per_thread; i++)
		HIT(i);
	*ns = now_ns() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "hot";

	if (!strcmp(mode, "hot") && argc > 3) {
		int threads = atoi(argv[2]);
		pthread_t t[64];
		double ns[64], wall = 0;
		per_thread = atol(argv[3]);
		if (threads < 1 || threads > 64)
			return 2;
		pthread_barrier_init(&barrier, NULL, (unsigned)threads);
		for (int i = 0; i < threads; i++)
			pthread_create(&t[i], NULL, hot, &ns[i]);
		for (int i = 0; i < threads; i++) {
			pthread_join(t[i], NULL);
			if (ns[i] > wall)
				wall = ns[i];
		}
		printf("%.1f\n", wall / (double)per_thread);
	} else if (!strcmp(mode, "idle") && argc > 2) {
		long n = atol(argv[2]);
		double t0, empty, probe, nop;
		for (int round = 0; round < 2; round++) {   /* the first warms up */
			t0 = now_ns();
			for (long i = 0; i < n; i++)
				BARRIER();
			empty = now_ns() - t0;
			t0 = now_ns();
			for (long i = 0; i < n; i++) {
				BARRIER();
				HIT(i);
			}
			probe = now_ns() - t0;
			t0 = now_ns();
			for (long i = 0; i < n; i++) {
				BARRIER();
				__asm__ __volatile__(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00");
			}
			nop = now_ns() - t0;
		}
		printf("%.3f %.3f %.3f\n", empty / n, probe / n, nop / n);
	} else if (!strcmp(mode, "rate") && argc > 3) {
		double rate = atof(argv[2]), secs = atof(argv[3]);
		double t0 = now_ns(), period = 1e9 / rate;
		long total = (long)(rate * secs);
		for (long i = 0; i < total; i++) {
			while (now_ns() - t0 < i * period)
				;
			HIT(i);
		}
		printf("%ld %.0f\n", total, total / ((now_ns() - t0) / 1e9));
	} else {
		fprintf(stderr, "usage: emit hot THREADS N | idle N | rate RATE SECONDS\n");
		return 2;
	}
	return 0;
}
