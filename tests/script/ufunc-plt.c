/*
 * ufunc-plt.c - calls through the procedure linkage table, for plt
 * probes (tests/script/ufunc-plt.t; the test builds it, with the
 * library ufunc-pltlib.c, in the PLT layouts it checks):
 *   ufunc-plt N          puts N times, strlen 2N times, getpid 3N times,
 *                        the library's pl_lib(N) (getppid N times, from
 *                        the library's own PLT); prints what they gave;
 *                        exits with status 3
 *   ufunc-plt wait A L   a thread makes those calls until stdin closes;
 *                        then whether the L bytes at file address A (hex:
 *                        the PLT) are as they were at the start
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long pl_lib(long n);
extern const unsigned char __executable_start[];   /* the load address (PIE) */

static const char *volatile word = "plt";   /* strlen called, not folded */
static volatile int stop;
static volatile long calls;

static __attribute__((noinline)) long run(long n, int quiet)
{
	long sum = 0;

	for (long i = 0; i < n; i++) {
		if (!quiet)
			puts("p");
		sum += (long)strlen(word) + (long)strlen(word);
		sum += getpid() > 0;
		sum += getpid() > 0;
		sum += getpid() > 0;
	}
	return sum + pl_lib(n);
}

static void *loop(void *arg)
{
	(void)arg;
	while (!stop) {
		run(100, 1);
		calls += 100;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "wait")) {
		const unsigned char *plt = __executable_start + strtoul(argv[2], NULL, 16);
		size_t len = strtoul(argv[3], NULL, 16);
		unsigned char *before = malloc(len);
		pthread_t th;
		memcpy(before, plt, len);
		pthread_create(&th, NULL, loop, NULL);
		printf("ready\n");
		fflush(stdout);
		while (getchar() != EOF)   /* until stdin closes: marktap -x meanwhile */
			;
		stop = 1;
		pthread_join(th, NULL);
		printf("calls %s\nplt %s\n", calls > 0 ? "made" : "none", memcmp(before, plt, len) ? "changed" : "as before");
		return 0;
	}
	long n = argc > 1 ? atol(argv[1]) : 3;
	printf("sum %ld\n", run(n, 0));
	return 3;
}
