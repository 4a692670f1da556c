/*
 * mixed: one thread fires an LTTng-UST tracepoint and a marktap marker in
 * turn, US microseconds apart (default 1000; tests/runtime/lttng-clock.t):
 *
 *   mtlt:ints i=0, mix_step i=0, mtlt:ints i=1, mix_step i=1, ...
 *
 * Recorded by lttng and marktrace at once, the two traces must merge in
 * that order in babeltrace2: the two clocks may disagree by less than the
 * pause.  Usage: mixed N [US]
 */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "mtlt_tp.h"
#include <stdlib.h>
#include <time.h>
#include <marktap/marker.h>

static void pause_us(long us)
{
	struct timespec t = { us / 1000000, us % 1000000 * 1000 };

	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, i;
	long us = argc > 2 ? atol(argv[2]) : 1000;

	for (i = 0; i < n; i++) {
		tracepoint(mtlt, ints, i);
		pause_us(us);
		trace_mark(mix_step, "i %d", i);
		pause_us(us);
	}
	return 0;
}
