/*
 * patched.c - markers at patched sites (MARKTAP_PATCHED_SITES).
 *
 *   patched sites               each site: "NAME off|jump|other"
 *   patched count N             N patched_ev events (seq, tag), one thread
 *   patched threads T N         T threads of N events each
 *   patched loop SECONDS        patched_ev slowly (1 per ms) for SECONDS,
 *                               for marktrace record -p
 *   patched watch MS            prints "ready PID GATE", then the state of
 *                               patched_ev's site each time it changes,
 *                               for MS milliseconds (an outside tool
 *                               raises its semaphore meanwhile)
 *   patched reuse FILE          raises patched_ev's semaphore, waits for
 *                               the jump; closes every descriptor, opens
 *                               FILE, lowers it, waits for "off"
 *   patched flip T SECONDS      T threads run the sites while the main
 *                               thread raises and lowers the semaphores
 *                               itself (as an outside tool would) for
 *                               SECONDS; prints the hits the threads saw
 *                               through the SDT path and the site's
 *                               changes seen
 * GATE: the address of patched_ev's semaphore (for a writer of
 * /proc/PID/mem, as SystemTap raises one).
 */
#define MARKTAP_PATCHED_SITES
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <marktap/marker.h>

static unsigned long events;
static volatile int running = 1;

static void emit(unsigned long i)
{
	trace_mark(patched_ev, "seq %lu tag %s", i, "abc");
}

static void tick(void)
{
	trace_mark(patched_tick, MARK_NOARGS);
}

/* "off" (test $rel32, %eax), "jump" (jmp rel32), "other" */
static const char *state(const struct mt_marker_site *s)
{
	const unsigned char *p = (const unsigned char *)s->site;

	if (p[0] == 0xa9)
		return "off";
	if (p[0] == 0xe9)
		return "jump";
	return "other";
}

static const struct mt_marker_site *site_of(const char *name)
{
	const struct mt_marker_site *s;

	for (s = __start___mt_sites; s < __stop___mt_sites; s++)
		if (!strcmp(s->marker->name, name))
			return s;
	return NULL;
}

static void *run(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; i < events; i++)
		emit(i);
	return NULL;
}

static void *spin(void *arg)
{
	unsigned long n = 0;

	while (running) {
		emit(n++);
		tick();
	}
	*(unsigned long *)arg = n;
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sites";
	const struct mt_marker_site *s;

	emit(0);   /* the sites exist in the code even before a first use */
	tick();
	if (!strcmp(mode, "sites")) {
		for (s = __start___mt_sites; s < __stop___mt_sites; s++)
			printf("%s %s\n", s->marker->name, state(s));
		s = site_of("patched_ev");
		printf("gate %#lx\n", s ? (unsigned long)&s->marker->gate->enabled : 0UL);
	} else if (!strcmp(mode, "count") && argc > 2) {
		events = strtoul(argv[2], NULL, 10);
		run(NULL);
	} else if (!strcmp(mode, "threads") && argc > 3) {
		int t, n = atoi(argv[2]);
		pthread_t tid[64];

		events = strtoul(argv[3], NULL, 10);
		for (t = 0; t < n && t < 64; t++)
			pthread_create(&tid[t], NULL, run, NULL);
		for (t = 0; t < n && t < 64; t++)
			pthread_join(tid[t], NULL);
	} else if (!strcmp(mode, "loop") && argc > 2) {
		double end = now_ms() + atof(argv[2]) * 1e3;
		unsigned long i = 0;

		while (now_ms() < end) {
			emit(i++);
			usleep(1000);
		}
		printf("emitted %lu\n", i);
	} else if (!strcmp(mode, "watch") && argc > 2) {
		double end = now_ms() + atof(argv[2]);
		const char *last = "", *cur;

		s = site_of("patched_ev");
		printf("ready %d %#lx\n", (int)getpid(), (unsigned long)&s->marker->gate->enabled);
		fflush(stdout);
		while (now_ms() < end) {
			cur = state(s);
			if (strcmp(cur, last)) {
				printf("%s\n", cur);
				fflush(stdout);
				last = cur;
			}
			usleep(2000);
		}
	} else if (!strcmp(mode, "flip") && argc > 3) {
		int t, n = atoi(argv[2]), up;
		pthread_t tid[64];
		unsigned long hits[64], total = 0, rounds = 0, late = 0;
		double end = now_ms() + atof(argv[3]) * 1e3, give_up;
		unsigned short *gate;

		s = site_of("patched_ev");
		gate = &s->marker->gate->enabled;
		for (t = 0; t < n && t < 64; t++)
			pthread_create(&tid[t], NULL, spin, &hits[t]);
		while (now_ms() < end) {
			for (up = 1; up >= 0; up--) {
				if (up)
					__atomic_add_fetch(gate, 1, __ATOMIC_RELEASE);
				else
					__atomic_sub_fetch(gate, 1, __ATOMIC_RELEASE);
				give_up = now_ms() + 5000;
				while (strcmp(state(s), up ? "jump" : "off") && now_ms() < give_up)
					usleep(200);
				if (strcmp(state(s), up ? "jump" : "off"))
					late++;
			}
			rounds++;
		}
		running = 0;
		for (t = 0; t < n && t < 64; t++) {
			pthread_join(tid[t], NULL);
			total += hits[t];
		}
		printf("rounds %lu late %lu hits %s\n", rounds, late, total > rounds ? "many" : "few");
	} else if (!strcmp(mode, "reuse") && argc > 2) {
		unsigned short *gate;
		int fd = -1, up;

		s = site_of("patched_ev");
		gate = &s->marker->gate->enabled;
		for (up = 1; up >= 0; up--) {
			double give_up = now_ms() + 5000;

			if (up) {
				__atomic_add_fetch(gate, 1, __ATOMIC_RELEASE);
			} else {
				/* a daemon closes what it inherited; its next file
				 * takes the number of libmarktap's /proc/self/mem */
				for (fd = 3; fd < 1024; fd++)
					close(fd);
				fd = open(argv[2], O_RDWR);
				__atomic_sub_fetch(gate, 1, __ATOMIC_RELEASE);
			}
			while (strcmp(state(s), up ? "jump" : "off") && now_ms() < give_up)
				usleep(1000);
			printf("%s\n", state(s));
		}
		printf("fd %d\n", fd);
	} else {
		fprintf(stderr, "usage: patched sites|count N|threads T N|loop S|watch MS|flip T S\n");
		return 2;
	}
	return 0;
}
