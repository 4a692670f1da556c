/*
 * func-target.c - a program without markers for function probes
 * (tests/script/function.t builds it with -g -O0 and with -g -O2).
 *
 *	func-target calls N        add(i, 10 i), weigh(), helper_one/two(),
 *	                           unused_first(), read_global(), checked() N times
 *	func-target fact N         fact(N), recursive
 *	func-target longjmp N      jumper() longjmps out of N / 2 of its N calls
 *	func-target threads T N    T threads call add() and read_global() N times each
 *	func-target fork N         parent and child each call add(), read_global() N times
 *	func-target signals N      add() N times, and from a timer's signal handler
 *	func-target slow N         "ready", then add() every 10 ms N times, then
 *	                           the first bytes of add() and weigh() (marktap
 *	                           -x must leave them as they were)
 *
 * noipa keeps each function whole at -O2 (no inlining, no clones with
 * other signatures), so that its probes fire once per call.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOIPA __attribute__((noipa))

struct item {
	int id;
	long weight;
	const char *name;
	struct item *next;
};

NOIPA int add(int a, int b)
{
	int c = a + b;
	return c;
}

NOIPA long weigh(struct item *it, int factors[3], unsigned char k)
{
	return it->weight * factors[1] + it->next->id + k;
}

NOIPA int fact(int n)
{
	if (n <= 1)
		return 1;
	return n * fact(n - 1);
}

NOIPA int unused_first(int ignored, int used)
{
	return used * 2;
}

/* its first instruction reads a global relative to RIP: it cannot run
 * out of line, and the probe steps over it in place */
int counter = 5;

NOIPA int read_global(int x)
{
	return counter + x;
}

/* -O2 -freorder-blocks-and-partition puts its unlikely part in
 * checked.cold: DWARF describes it with DW_AT_ranges, not low_pc */
NOIPA __attribute__((hot)) int checked(int x)
{
	if (x < 0) {
		for (int i = 0; i < 3; i++)
			fprintf(stderr, "negative %d\n", x);
		abort();
	}
	return x * 3;
}

NOIPA int helper_one(int x) { return x + 1; }
NOIPA int helper_two(int x) { return x + 2; }

static jmp_buf env;

NOIPA void jumper(int v)
{
	if (v & 1)
		longjmp(env, v);
}

static volatile long in_signal;

static void on_alarm(int sig)
{
	(void)sig;
	in_signal += add(1, 2);   /* a probed function called from a signal handler */
}

static long per_thread = 0;

static void *thread_main(void *arg)
{
	long s = 0;
	for (long i = 0; i < per_thread; i++)
		s += add((int)i, 1) + read_global(0);
	*(long *)arg = s;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";
	int n = argc > 2 ? atoi(argv[2]) : 3;
	long sum = 0;

	if (!strcmp(mode, "calls")) {
		struct item next = { 7, 0, "next", NULL };
		struct item it = { 1, 100, "item", &next };
		int factors[3] = { 2, 3, 4 };
		for (int i = 0; i < n; i++) {
			sum += add(i, 10 * i);
			it.weight = 100 + i;
			sum += weigh(&it, factors, (unsigned char)(200 + i));
			sum += helper_one(i) + helper_two(i) + unused_first(i, i) + read_global(i) + checked(i);
		}
	} else if (!strcmp(mode, "fact")) {
		sum = fact(n);
	} else if (!strcmp(mode, "longjmp")) {
		for (volatile int i = 0; i < n; i++) {
			int v = setjmp(env);
			if (!v)
				jumper(i);
			else
				sum += v;
		}
	} else if (!strcmp(mode, "threads") && argc > 3) {
		int t = n;
		pthread_t th[16];
		long res[16];
		per_thread = atol(argv[3]);
		for (int i = 0; i < t && i < 16; i++)
			pthread_create(&th[i], NULL, thread_main, &res[i]);
		for (int i = 0; i < t && i < 16; i++) {
			pthread_join(th[i], NULL);
			sum += res[i];
		}
	} else if (!strcmp(mode, "fork")) {
		/* the child calls add() and read_global() n times, then the parent */
		pid_t child = fork();
		for (int i = 0; i < n; i++)
			sum += add(i, 1) + read_global(i);
		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
	} else if (!strcmp(mode, "signals")) {
		/* a timer signal every 100 us calls add() too, also while add()
		 * is being probed and hooked in the main flow */
		struct itimerval it = { { 0, 100 }, { 0, 100 } };
		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &it, NULL);
		for (int i = 0; i < n; i++)
			sum += add(i, 1);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
	} else if (!strcmp(mode, "slow")) {
		printf("ready\n");
		fflush(stdout);
		for (int i = 0; i < n; i++) {
			sum += add(i, 2 * i);
			usleep(10000);
		}
		for (int i = 0; i < 8; i++)
			printf("%02x", ((const unsigned char *)(void *)add)[i]);
		printf(" ");
		for (int i = 0; i < 8; i++)
			printf("%02x", ((const unsigned char *)(void *)weigh)[i]);
		printf("\n");
	} else {
		fprintf(stderr, "usage: func-target calls|fact|longjmp|threads|slow ...\n");
		return 2;
	}
	printf("sum %ld\n", sum);
	return (int)(sum % 7);
}
