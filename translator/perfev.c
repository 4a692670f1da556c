/*
 * perfev.c - sampled perf events, for timer.profile and perf.type(T)...
 *
 * stap turns timer.profile into a perf cpu-clock event sampled every
 * 1 000 000 ns on every CPU, and perf.type(T).config(C).sample(N) into the
 * event T/C sampled every N; marktap opens the same events with
 * perf_event_open (root, or perf_event_paranoid allowing it) and runs the
 * handler in marktap for each sample, in the context the sample names
 * (pid, tid, CPU, instruction pointer).  Each event has a ring of pages
 * the kernel fills (data_head) and marktap empties (data_tail); samples the
 * kernel could not store come as PERF_RECORD_LOST and are counted.
 */
#define _GNU_SOURCE
#include "tr_run.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { RING_PAGES = 8 };        /* data pages per event, a power of 2 */

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	char *data;
	size_t size;                    /* data bytes */
};

struct tr_perfev {
	struct ring *rings;
	unsigned n;
};

static int open_event(const struct tr_resolved *r, int pid, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	if (r->kind == P_PROFILE) {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = 1000000;
	} else {
		a.type = (uint32_t)r->perf_type;
		a.config = (uint64_t)r->perf_config;
		a.sample_period = (uint64_t)r->perf_sample;
	}
	/* the callchain: backtrace() and ubacktrace() of the sample (the
	 * user half from frame pointers, as perf's default) */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
	a.sample_max_stack = 2 * TR_PERF_STACK;
	a.inherit = pid > 0;            /* a process: its children too */
	return (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int map_ring(struct ring *g)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page * (RING_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);

	if (m == MAP_FAILED)
		return -1;
	g->meta = m;
	g->data = (char *)m + page;
	g->size = (size_t)page * RING_PAGES;
	return 0;
}

/* Every CPU (pid -1), or the process pid and its children on any CPU. */
struct tr_perfev *tr_perfev_open(const struct tr_resolved *r, long pid, char *why, size_t n)
{
	long ncpu = pid > 0 ? 1 : sysconf(_SC_NPROCESSORS_CONF);
	struct tr_perfev *pe = calloc(1, sizeof(*pe));

	if (!pe || ncpu < 1 || !(pe->rings = calloc((size_t)ncpu, sizeof(*pe->rings)))) {
		snprintf(why, n, "out of memory");
		free(pe);
		return NULL;
	}
	for (long c = 0; c < ncpu; c++) {
		struct ring *g = &pe->rings[pe->n];
		g->fd = open_event(r, pid > 0 ? (int)pid : -1, pid > 0 ? -1 : (int)c);
		if (g->fd < 0 && errno == ENODEV)
			continue;               /* a CPU that is not there */
		if (g->fd < 0 || map_ring(g) < 0) {
			snprintf(why, n, "perf_event_open: %s%s", strerror(errno),
				 errno == EACCES || errno == EPERM ? " (root, or kernel.perf_event_paranoid)" : "");
			if (g->fd >= 0)
				close(g->fd);
			tr_perfev_close(pe);
			return NULL;
		}
		pe->n++;
	}
	return pe;
}

/* Copy len bytes at offset off of the ring (it wraps). */
static void ring_copy(const struct ring *g, uint64_t off, void *dst, size_t len)
{
	size_t at = (size_t)(off & (g->size - 1)), first = g->size - at < len ? g->size - at : len;

	memcpy(dst, g->data + at, first);
	memcpy((char *)dst + first, g->data, len - first);
}

/* The samples now in the rings, at most max; *lost adds what the kernel
 * could not store. */
/* A sample's callchain (nr addresses at off, room bytes of the record
 * left): PERF_CONTEXT_KERNEL and _USER say which half the addresses after
 * them are in; the chain's first address is the sample's ip. */
static void callchain(struct ring *g, uint64_t off, size_t room, uint64_t nr, struct tr_perf_sample *o)
{
	uint64_t *half = NULL;
	uint32_t *n = NULL;

	if (nr > room / 8)
		nr = room / 8;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip;
		ring_copy(g, off + 8 * i, &ip, sizeof(ip));
		if (ip == (uint64_t)PERF_CONTEXT_KERNEL) {
			half = o->kernel, n = &o->nkernel;
		} else if (ip == (uint64_t)PERF_CONTEXT_USER) {
			half = o->user, n = &o->nuser;
		} else if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			half = NULL;   /* a guest's or another context's */
		} else if (half && *n < TR_PERF_STACK) {
			half[(*n)++] = ip;
		}
	}
}

int tr_perfev_read(struct tr_perfev *pe, struct tr_perf_sample *out, int max, uint64_t *lost)
{
	int got = 0;

	for (unsigned i = 0; pe && i < pe->n; i++) {
		struct ring *g = &pe->rings[i];
		/* head: the kernel's; read it before the data it covers */
		uint64_t head = __atomic_load_n(&g->meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = g->meta->data_tail;
		while (tail < head && got < max) {
			struct perf_event_header h;
			ring_copy(g, tail, &h, sizeof(h));
			if (h.size < sizeof(h) || h.size > g->size)
				break;                  /* damaged: drop the rest */
			if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 32) {
				struct { uint64_t ip; uint32_t pid, tid, cpu, res; uint64_t nr; } s;
				struct tr_perf_sample *o = &out[got++];
				ring_copy(g, tail + sizeof(h), &s, sizeof(s));
				*o = (struct tr_perf_sample){ s.ip, s.pid, s.tid, s.cpu, 0, 0, {0}, {0} };
				callchain(g, tail + sizeof(h) + sizeof(s), h.size - sizeof(h) - sizeof(s), s.nr, o);
			} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
				uint64_t v[2];
				ring_copy(g, tail + sizeof(h), v, sizeof(v));
				*lost += v[1];
			}
			tail += h.size;
		}
		if (tail > head)
			tail = head;
		/* tail: ours; the records are read before the kernel reuses them */
		__atomic_store_n(&g->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	return got;
}

void tr_perfev_close(struct tr_perfev *pe)
{
	long page = sysconf(_SC_PAGESIZE);

	for (unsigned i = 0; pe && i < pe->n; i++) {
		munmap(pe->rings[i].meta, (size_t)page * (RING_PAGES + 1));
		close(pe->rings[i].fd);
	}
	if (pe)
		free(pe->rings);
	free(pe);
}
