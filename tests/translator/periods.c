/*
 * periods.c - requests of known length for the period analyses
 * (analyses-period.t).
 *   periods N
 * N times: req_start for ids 2i and 2i+1, a 10 ms sleep, req_done for
 * 2i, another 10 ms sleep, req_done for 2i+1; a tick marker between
 * them.  Keyed by id, the periods last 10 and 20 ms, N of each; matched
 * in order without a key, N periods of 10 ms (the second start restarts
 * the open one, the second done finds none open).
 */
#include <stdlib.h>
#include <time.h>
#include <marktap/marker.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;

	for (int i = 0; i < n; i++) {
		trace_mark(req_start, "id %d", 2 * i);
		trace_mark(req_start, "id %d", 2 * i + 1);
		sleep_ms(10);
		trace_mark(req_done, "id %d status %s", 2 * i, "ok");
		trace_mark(tick, "n %d", i);
		sleep_ms(10);
		trace_mark(req_done, "id %d status %s", 2 * i + 1, "late");
	}
	return 0;
}
