/*
 * corrupt.c - a traced program that writes into its recording session.
 *
 *   corrupt MODE LINGER_SECONDS
 *
 * It emits corrupt_tick events every millisecond until it finds the
 * session in its address space (/proc/self/maps: the memfd marktrace
 * created, mapped by libmarktap from MARKTAP_SHM_FD or when marktrace
 * record -p attaches), lets marktrace copy some packets, then damages the
 * session as MODE says and stays alive LINGER_SECONDS more.  Prints
 * "ready" (when it can be attached to) and "corrupted" on stdout.
 *
 * MODE: geometry   the header's CPU count, ring offsets and sizes
 *       ringhead   each ring's sub-buffer size, count and data offset
 *       behind     write positions behind the consumer's read positions
 *       ahead      write positions far ahead of them
 *       bigpacket  a "complete" sub-buffer claiming 1 TiB of data
 *       spin       a thread rewriting the write positions without pause
 *       flood      a thread completing empty sub-buffers, 2000 a second,
 *                  as a writer would, forever (the recording must still
 *                  end on SIGTERM)
 *       stall      every ring's open sub-buffer left incomplete forever (as
 *                  writers that died between reserve and commit would)
 *       clock      the TSC clock's sequence count odd forever (a reader
 *                  that waits for an even count waits forever)
 *       events     every event class slot but corrupt_tick's filled with
 *                  garbage, no NULs, and the class count out of range
 *       shrink     ftruncate and hole punching on the session descriptor
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <marktap/marker.h>
#include "mt_session.h"

static struct mt_session *find_session(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;
	struct mt_session *s = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:marktap-session") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			s = (struct mt_session *)lo;
			*len = hi - lo;
			break;
		}
	fclose(f);
	return s;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static struct mt_ring *ring(struct mt_session *s, unsigned cpu)
{
	return mt_session_ring(s, cpu);   /* from the header: still intact here */
}

static struct mt_session *target;
static unsigned target_ncpu;

/* Rewrite every ring's write position with junk, without pause. */
static void *spin(void *arg)
{
	unsigned long x = 88172645463325252ul;
	struct mt_ring *r[256];
	unsigned cpu, n = target_ncpu < 256 ? target_ncpu : 256;

	(void)arg;
	for (cpu = 0; cpu < n; cpu++)
		r[cpu] = ring(target, cpu);
	for (;;)
		for (cpu = 0; cpu < n; cpu++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			__atomic_store_n(&r[cpu]->write_pos, x, __ATOMIC_RELAXED);
		}
	return NULL;
}

/* Complete empty sub-buffers on ring 0 as a writer would, forever. */
static void *flood(void *arg)
{
	struct mt_ring *r = ring(target, 0);
	mt_u64 size = r->subbuf_size, num = r->num_subbuf;

	(void)arg;
	for (;;) {
		mt_u64 pos = __atomic_load_n(&r->read_pos, __ATOMIC_ACQUIRE);
		struct mt_ring_subbuf *sb = &r->subbuf[(pos / size) % num];
		sb->seq = pos / size;
		sb->data_size = 0;
		__atomic_store_n(&r->write_pos, pos + size, __ATOMIC_RELAXED);
		__atomic_store_n(&sb->commit, (pos / size / num + 1) * size, __ATOMIC_RELEASE);
		usleep(500);
	}
	return NULL;
}

static void *odd_clock(void *arg)
{
	(void)arg;
	for (;;) {
		target->clock.enabled = 1;
		__atomic_store_n(&target->clock.seq, 1u, __ATOMIC_RELAXED);
		usleep(100);
	}
	return NULL;
}

/* The session's descriptor, if this process holds it. */
static int session_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[300];
	int fd = -1;

	while (d && (e = readdir(d))) {
		ssize_t n;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', strstr(link, "memfd:marktap-session")))
			fd = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return fd;
}

static int corrupt(struct mt_session *s, const char *mode)
{
	unsigned cpu, ncpu = s->ncpu;
	pthread_t th;

	target = s;
	target_ncpu = ncpu;
	if (!strcmp(mode, "geometry")) {
		s->ncpu = 0x7fffffff;
		s->rings_offset = 1ull << 60;
		s->ring_bytes = 1ull << 59;
		s->total_bytes = 1;
	} else if (!strcmp(mode, "ringhead")) {
		for (cpu = 0; cpu < ncpu; cpu++) {
			struct mt_ring *r = ring(s, cpu);
			r->num_subbuf = 0x40000000;
			r->subbuf_size = 3;
			r->data_offset = 1ull << 62;
		}
	} else if (!strcmp(mode, "behind") || !strcmp(mode, "ahead")) {
		for (cpu = 0; cpu < ncpu; cpu++) {
			struct mt_ring *r = ring(s, cpu);
			mt_u64 rp = __atomic_load_n(&r->read_pos, __ATOMIC_RELAXED);
			r->write_pos = mode[0] == 'b' ? (rp ? rp - 1 : ~0ull >> 1) : rp + (1ull << 40);
			if (mode[0] == 'b' && !rp)   /* nothing read yet: behind means below 0 */
				r->read_pos = 1ull << 40;
		}
	} else if (!strcmp(mode, "stall")) {
		for (cpu = 0; cpu < ncpu; cpu++) {
			struct mt_ring *r = ring(s, cpu);
			mt_u64 rp = __atomic_load_n(&r->read_pos, __ATOMIC_RELAXED);
			/* back inside what was committed: the bytes never add up */
			__atomic_store_n(&r->write_pos, rp + 64, __ATOMIC_RELAXED);
		}
	} else if (!strcmp(mode, "bigpacket")) {
		for (cpu = 0; cpu < ncpu; cpu++) {
			struct mt_ring *r = ring(s, cpu);
			mt_u64 size = r->subbuf_size, num = r->num_subbuf;
			mt_u64 pos = __atomic_load_n(&r->read_pos, __ATOMIC_ACQUIRE);
			struct mt_ring_subbuf *sb = &r->subbuf[(pos / size) % num];
			sb->seq = pos / size;
			sb->data_size = 1ull << 40;
			r->write_pos = pos + size;
			__atomic_store_n(&sb->commit, (pos / size / num + 1) * size, __ATOMIC_RELEASE);
		}
	} else if (!strcmp(mode, "spin")) {
		return pthread_create(&th, NULL, spin, NULL);
	} else if (!strcmp(mode, "flood")) {
		return pthread_create(&th, NULL, flood, NULL);
	} else if (!strcmp(mode, "clock")) {
		return pthread_create(&th, NULL, odd_clock, NULL);
	} else if (!strcmp(mode, "events")) {
		unsigned i;
		/* corrupt_tick's slot stays: the ticks after are readable; the
		 * thread event's (marktrace's own, copied before we ran) goes
		 * with the others */
		for (i = 0; i < MT_EVENTS_MAX; i++) {
			if (!strcmp(s->events[i].name, "corrupt_tick"))
				continue;
			memset(s->events[i].name, 0xff, MT_EVENT_NAME_MAX);
			memset(s->events[i].format, '%', MT_EVENT_FORMAT_MAX);
			s->events[i].state = MT_EV_READY;
		}
		s->nevents = 0xffffffffu;
	} else if (!strcmp(mode, "shrink")) {
		int fd = session_fd();
		if (fd < 0) {
			printf("shrink: no session descriptor\n");
		} else {
			printf("ftruncate: %s\n", ftruncate(fd, 0) < 0 ? strerror(errno) : "done");
			printf("punch: %s\n", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						 0, 1 << 20) < 0 ? strerror(errno) : "done");
		}
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "geometry";
	int linger = argc > 2 ? atoi(argv[2]) : 5, i;
	struct mt_session *s = NULL;
	size_t len = 0;
	/* modes that leave the writers' own numbers broken stop emitting */
	int emit_after = !strcmp(mode, "events") || !strcmp(mode, "shrink") ||
			 !strcmp(mode, "flood");

	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < 20000 && !(s = find_session(&len)); i++) {
		trace_mark(corrupt_tick, "n %d", i);
		sleep_ms(1);
	}
	if (!s) {
		fprintf(stderr, "corrupt: no session found\n");
		return 3;
	}
	for (i = 0; i < 200; i++) {   /* some events that reach the trace */
		trace_mark(corrupt_tick, "n %d", i);
		sleep_ms(1);
	}
	if (corrupt(s, mode) < 0) {
		fprintf(stderr, "corrupt: unknown mode %s\n", mode);
		return 2;
	}
	printf("corrupted\n");
	fflush(stdout);
	for (i = 0; i < linger * 100; i++) {
		if (emit_after)
			trace_mark(corrupt_tick, "n %d", i);
		sleep_ms(10);
	}
	return 0;
}
