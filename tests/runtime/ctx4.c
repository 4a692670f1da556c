/*
 * ctx4.c - four named threads for marktrace record --context (record-context.t).
 *   ctx4 EVENTS
 * Prints "pid PID" and, for each thread t, "thread t tid TID name ctx-t
 * site ADDR" (ADDR: the function that holds the marker), then each thread
 * emits ctx_ev(thread=t, seq=0..EVENTS-1) under its name; the main thread
 * ends with one ctx_end from another site.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <marktap/marker.h>

#define THREADS 4

static unsigned long events;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void *run(void *arg)
{
	int t = (int)(long)arg;
	unsigned long i;
	char name[16];

	snprintf(name, sizeof(name), "ctx-%d", t);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&print_lock);
	printf("thread %d tid %d name %s site %lu\n", t, (int)gettid(), name,
	       (unsigned long)(void *)run);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	for (i = 0; i < events; i++)
		trace_mark(ctx_ev, "thread %d seq %lu", t, i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[THREADS];
	long t;

	events = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (t = 0; t < THREADS; t++)
		pthread_create(&tid[t], NULL, run, (void *)t);
	for (t = 0; t < THREADS; t++)
		pthread_join(tid[t], NULL);
	trace_mark(ctx_end, "threads %d", THREADS);
	return 0;
}
