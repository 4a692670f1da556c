/*
 * ring-bench.c - per-CPU vs per-thread buffers, on the ring core itself.
 *   ring-bench THREADS N
 * Each thread reserves, fills (50 bytes, as an event of bench/ust) and
 * commits N events, in overwrite mode so no consumer is needed:
 *   per-cpu:    one ring per CPU, the thread's current CPU (sched_getcpu);
 *               threads sharing a CPU contend on its ring's CAS
 *   per-thread: one ring per thread, no contention, but memory grows with
 *               the threads, and a trace has a stream per thread
 *   rseq:       one ring per CPU, written only from that CPU in restartable
 *               sequences (mt_rseq.h; what marktrace record uses by default)
 * Prints ns per event (slowest thread) for each ("-" for rseq where the
 * build or the kernel has none).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mt_ring.h"

#define SUBBUF (1u << 20)
#define NSUB 4

static long per_thread;
static int per_cpu_mode, ncpu;   /* per_cpu_mode 2: rseq */
static struct mt_ring **rings;
static pthread_barrier_t barrier;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct arg { int id; double ns; };

static void *run(void *p)
{
	struct arg *a = p;
	struct mt_ring_slot slot;
	double t0;

	pthread_barrier_wait(&barrier);
	t0 = now_ns();
#ifdef MT_HAVE_RSEQ
	if (per_cpu_mode == 2) {
		struct mt_rseq_ctx rq;
		rq.rs = mt_rseq_area();
		for (long i = 0; i < per_thread; i++) {
			struct mt_ring *r;
			int rc;
			do {
				rq.cpu = mt_load_relaxed(&rq.rs->cpu_id);
				r = rings[rq.cpu];
				rc = mt_ring_reserve_percpu(r, 50, 0, 0, &slot, &rq);
			} while (rc == -EAGAIN);
			if (rc == 0) {
				memset(mt_ring_slot_ptr(r, &slot), (int)i, 50);
				mt_ring_commit_percpu(r, &slot, &rq);
			}
		}
		a->ns = now_ns() - t0;
		return NULL;
	}
#endif
	for (long i = 0; i < per_thread; i++) {
		struct mt_ring *r = per_cpu_mode ? rings[sched_getcpu() % ncpu] : rings[a->id];
		if (mt_ring_reserve(r, 50, &slot) == 0) {
			memset(mt_ring_slot_ptr(r, &slot), (int)i, 50);
			mt_ring_commit(r, &slot);
		}
	}
	a->ns = now_ns() - t0;
	return NULL;
}

static double measure(int threads, int percpu)
{
	pthread_t t[64];
	struct arg a[64];
	int n = percpu ? ncpu : threads;   /* rseq: ncpu counts every CPU */
	double wall = 0;

	per_cpu_mode = percpu;
	rings = calloc((size_t)n, sizeof(*rings));
	for (int i = 0; i < n; i++) {
		rings[i] = aligned_alloc(4096, (size_t)mt_ring_bytes(SUBBUF, NSUB));
		mt_ring_init(rings[i], SUBBUF, NSUB, MT_RING_OVERWRITE, (u32)i);
	}
	pthread_barrier_init(&barrier, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		a[i].id = i;
		pthread_create(&t[i], NULL, run, &a[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		if (a[i].ns > wall)
			wall = a[i].ns;
	}
	pthread_barrier_destroy(&barrier);
	for (int i = 0; i < n; i++)
		free(rings[i]);
	free(rings);
	return wall / (double)per_thread;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;

	per_thread = argc > 2 ? atol(argv[2]) : 2000000;
	ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (threads < 1 || threads > 64 || ncpu < 1 || ncpu > 64)
		return 2;
	measure(threads, 1);   /* warm up */
	printf("%.1f %.1f", measure(threads, 1), measure(threads, 0));
#ifdef MT_HAVE_RSEQ
	if (mt_rseq_area())
		printf(" %.1f\n", measure(threads, 2));
	else
#endif
		printf(" -\n");
	return 0;
}
