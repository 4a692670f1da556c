/*
 * requests.c - begin and end markers for timeline-markers.t and
 * export-pairs.t: a main thread and two workers serving "requests".
 *   requests N   the main thread fires main_tick 5*N times; worker k
 *                (k = 1, 2) fires op_end(-1) (an end before any begin),
 *                serves N/k requests:
 *                  req_start(id, url)  op_start(step)  op_end(step)  req_done(id, status),
 *                1 ms apart
 *                then once: db_entry, tx_begin, db_exit, tx_end (crossing
 *                pairs) and lone_start (no lone_end in the program).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <marktap/marker.h>

static int requests;

/* A request's events 1 ms apart: whatever the load stretches the
 * recording to, each keeps a tick of its own at the default resolution
 * (8192 cells across the trace) */
static void pause_ms(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	int k = (int)(long)arg, i;
	char name[16], url[32];

	snprintf(name, sizeof(name), "worker%d", k);
	prctl(PR_SET_NAME, name);
	trace_mark(op_end, "step %d", -1);
	for (i = 0; i < requests / k; i++) {
		snprintf(url, sizeof(url), "/item/%d", i);
		pause_ms();
		trace_mark(req_start, "id %d url %s", i, url);
		pause_ms();
		trace_mark(op_start, "step %d", i);
		pause_ms();
		trace_mark(op_end, "step %d", i);
		pause_ms();
		trace_mark(req_done, "id %d status %d", i, 200 + k);
	}
	trace_mark(db_entry, "q %d", k);
	trace_mark(tx_begin, "t %d", k);
	trace_mark(db_exit, "q %d", k);
	trace_mark(tx_end, "t %d", k);
	trace_mark(lone_start, "y %d", k);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long k;
	int i;

	requests = argc > 1 ? atoi(argv[1]) : 10;
	prctl(PR_SET_NAME, "reqmain");
	for (i = 0; i < 5 * requests; i++)
		trace_mark(main_tick, "i %d", i);
	for (k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, worker, (void *)(k + 1));
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	return 0;
}
