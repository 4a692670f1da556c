/*
 * ufunc-target.c - T threads call work() N times each; prints the ns per
 * call of the slowest thread (bench/script/ufunc.sh probes work()).
 *   ufunc-target T N
 *   ufunc-target deep N    one thread, each call of work() 10 frames deep
 *                          (a backtrace from it has 10 frames of ours)
 *   ufunc-target plt N     one thread calls libc's strlen() N times through
 *                          the program's PLT (bench/script/plt.sh)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long n;
static int deep, plt;
static const char *volatile word = "plt";   /* a real call, not folded */

/* Its first instruction is a 5-byte lea: marktap's jump fast path can
 * take it (the trap path with MARKTAP_UFUNC_JUMP=0). */
__attribute__((noinline, noipa)) long work(long x)
{
	return x * 3 + 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* depth nested calls, then work() */
__attribute__((noinline, noipa)) long nest(long depth, long x)
{
	return depth ? nest(depth - 1, x) + 1 : work(x);
}

static void *run(void *arg)
{
	double t0 = now();
	long s = 0;

	for (long i = 0; i < n; i++)
		s += plt ? (long)strlen(word) : deep ? nest(8, i) : work(i);
	*(double *)arg = (now() - t0) / (double)n;
	return (void *)s;
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 1;

	deep = argc > 1 && !strcmp(argv[1], "deep");
	plt = argc > 1 && !strcmp(argv[1], "plt");
	pthread_t th[16];
	double ns[16], worst = 0;

	n = argc > 2 ? atol(argv[2]) : 1000000;
	if (t < 1 || t > 16)
		t = 1;
	for (int i = 0; i < t; i++)
		pthread_create(&th[i], NULL, run, &ns[i]);
	for (int i = 0; i < t; i++) {
		pthread_join(th[i], NULL);
		if (ns[i] > worst)
			worst = ns[i];
	}
	printf("%.1f\n", worst);
	return 0;
}
