/*
 * ufunc-return.cc - what .return probes must survive (tests/script/ufunc-return.t):
 *   ufunc-return throw N       thrower() throws out of every third call,
 *                              through middle() and its cleanup, to main
 *   ufunc-return catch N       caught inside the probed function itself
 *   ufunc-return values N      returns in xmm0, st(0), rax:rdx and rax
 *   ufunc-return cancel        a thread cancelled inside a probed call
 *   ufunc-return exit          a thread that ends inside a probed call
 *   ufunc-return threads T N   T threads call leaf() N times each
 * Each prints what it computed; the status is 3.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdexcept>

#define NOIPA __attribute__((noinline, noipa))

NOIPA long thrower(long x)
{
	if (x % 3 == 0)
		throw std::runtime_error("three");
	return x * 2;
}

struct guard {
	long *count;
	~guard() { ++*count; }   /* a cleanup the unwinder must run */
};

static long cleanups;

NOIPA long middle(long x)
{
	guard g{ &cleanups };
	return thrower(x) + 1;
}

NOIPA long catcher(long x)
{
	try {
		return thrower(x);
	} catch (const std::exception &) {
		return -1;
	}
}

struct pair { long a, b; };
NOIPA double half(long x) { return (double)x / 2; }
NOIPA long double third(long x) { return (long double)x / 3; }
NOIPA struct pair two(long x) { return pair{ x, -x }; }
NOIPA long leaf(long x) { return x * 3 + 1; }

NOIPA long blocker(long x)
{
	for (;;) {
		pthread_testcancel();
		usleep(1000);
	}
	return x;
}

NOIPA long ender(long x)
{
	pthread_exit((void *)x);
}

static void *run_blocker(void *arg) { return (void *)blocker((long)arg); }
static void *run_ender(void *arg) { return (void *)(ender((long)arg) + 1); }

static long per_thread;
static void *run_leaves(void *arg)
{
	long s = 0;
	for (long i = 0; i < per_thread; i++)
		s += leaf(i);
	*(long *)arg = s;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 10;

	if (!strcmp(mode, "throw") || !strcmp(mode, "catch")) {
		long sum = 0, caught = 0;
		for (long i = 0; i < n; i++) {
			try {
				sum += mode[0] == 't' ? middle(i) : catcher(i);
			} catch (const std::exception &) {
				caught++;
			}
		}
		printf("sum %ld caught %ld cleanups %ld\n", sum, caught, cleanups);
	} else if (!strcmp(mode, "values")) {
		double h = 0;
		long double t = 0;
		long a = 0, b = 0;
		for (long i = 0; i < n; i++) {
			struct pair p = two(i);
			h += half(i);
			t += third(i);
			a += p.a;
			b += p.b;
		}
		printf("%.1f %.6Lf %ld %ld\n", h, t, a, b);
	} else if (!strcmp(mode, "cancel") || !strcmp(mode, "exit")) {
		pthread_t th;
		void *ret;
		pthread_create(&th, NULL, mode[0] == 'c' ? run_blocker : run_ender, (void *)7);
		if (mode[0] == 'c') {
			usleep(20000);
			pthread_cancel(th);
		}
		pthread_join(th, &ret);
		printf("%s %s\n", mode, ret == PTHREAD_CANCELED ? "cancelled" : ret == (void *)7 ? "7" : "wrong");
	} else if (!strcmp(mode, "threads")) {
		int t = (int)n;
		pthread_t th[16];
		long sums[16], total = 0;
		per_thread = argc > 3 ? atol(argv[3]) : 1000;
		for (int i = 0; i < t && i < 16; i++)
			pthread_create(&th[i], NULL, run_leaves, &sums[i]);
		for (int i = 0; i < t && i < 16; i++) {
			pthread_join(th[i], NULL);
			total += sums[i];
		}
		printf("threads %d sum %ld\n", t, total);
	} else {
		fprintf(stderr, "usage: ufunc-return throw|catch|values|cancel|exit|threads ...\n");
		return 2;
	}
	return 3;
}
