/*
 * stress.c - emit known sequences from several threads.
 *   stress THREADS EVENTS [kill | loop SECONDS]
 * Each thread t emits stress_ev(thread=t, seq=0..EVENTS-1).  "kill" ends
 * the process with SIGKILL once every event is committed; "loop" keeps
 * emitting (slowly) for SECONDS, for marktrace record -p.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <marktap/marker.h>

static unsigned long events;

static void *run(void *arg)
{
	int t = (int)(long)arg;
	unsigned long i;

	for (i = 0; i < events; i++)
		trace_mark(stress_ev, "thread %d seq %lu tag %s", t, i, "abc");
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2, t;
	pthread_t tid[64];

	events = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
	if (argc > 4 && !strcmp(argv[3], "loop")) {
		int end = atoi(argv[4]) * 100, k;
		printf("ready\n");
		fflush(stdout);
		for (k = 0; k < end; k++) {
			trace_mark(tick, "n %d", k);
			usleep(10000);
		}
		return 0;
	}
	if (threads < 1 || threads > 64)
		return 2;
	for (t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, run, (void *)(long)t);
	for (t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	if (argc > 3 && !strcmp(argv[3], "kill"))
		raise(SIGKILL);
	return 0;
}
