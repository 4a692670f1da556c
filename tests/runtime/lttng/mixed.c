/*
 * mixed: one thread fires an LTTng-UST tracepoint and a marktap marker in
 * turn, a millisecond apart (tests/runtime/lttng-clock.t):
 *
 *   mtlt:ints i=0, mix_step i=0, mtlt:ints i=1, mix_step i=1, ...
 *
 * Recorded by lttng and marktrace at once, the two traces must merge in
 * that order in babeltrace2.  Usage: mixed N
 */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "mtlt_tp.h"
#include <stdlib.h>
#include <time.h>
#include <marktap/marker.h>

static void pause_ms(void)
{
	struct timespec ms = { 0, 1000 * 1000 };

	nanosleep(&ms, NULL);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, i;

	for (i = 0; i < n; i++) {
		tracepoint(mtlt, ints, i);
		pause_ms();
		trace_mark(mix_step, "i %d", i);
		pause_ms();
	}
	return 0;
}
