/*
 * kmark.c - handlers of kernel markers, run by marktap.
 *
 * marktap.ko records the kernel markers a script probes into a kernel
 * session (the rings of marktrace record -k); marktap closes the open
 * sub-buffers every 100 ms (so that rare events do not wait for a full
 * one), drains them every 10 ms and runs the handlers on each event in
 * turn, CPU by CPU, with the
 * event's own context: pid(), tid(), execname() and cpu() are those of
 * the code that hit the marker.  Handlers thus run a little after the
 * hit, in marktap, not in the kernel: they see the marker's arguments as
 * recorded (strings copied at the hit), never kernel memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tr.h"
#include "mt_lua.h"
#include "kernel.h"
#include "mt_event.h"

struct kprobe {
	const char *marker;
	int handler;
};

struct tr_kmark {
	struct mt_kernel k;
	int started;
	struct mt_lua *mt;
	struct kprobe *probes;
	unsigned nprobes;
	struct mt_format *fmt[MT_EVENTS_MAX];   /* parsed on first sight */
	signed char state[MT_EVENTS_MAX];      /* 0 unseen, 1 handled, 2 no handler, -1 bad */
	/* the event whose handlers run: the context functions read it */
	const struct mt_event_context *cur;
	unsigned cur_cpu;
	mt_u64 bad;
	mt_u64 last_flush;                     /* CLOCK_MONOTONIC ns */
	struct mt_lua_host host;
};

static int64_t k_pid(void *ctx)
{
	struct tr_kmark *km = ctx;
	return km->cur ? km->cur->pid : mt_lua_self_pid();
}

static int64_t k_tid(void *ctx)
{
	struct tr_kmark *km = ctx;
	return km->cur ? km->cur->tid : mt_lua_self_tid();
}

static int64_t k_cpu(void *ctx)
{
	struct tr_kmark *km = ctx;
	return km->cur ? km->cur_cpu : mt_lua_self_cpu();
}

static void k_execname(void *ctx, char *buf, size_t size)
{
	struct tr_kmark *km = ctx;

	if (!km->cur) {
		mt_lua_self_execname(buf, size);
		return;
	}
	snprintf(buf, size, "%s", km->cur->procname);
}

static int k_read_mem(void *ctx, uint64_t addr, void *dst, size_t n)
{
	(void)ctx; (void)addr; (void)dst; (void)n;
	return -1;   /* kernel memory is not ours to read */
}

struct tr_kmark *tr_kmark_new(struct tr_session *s)
{
	struct tr_kmark *km = NULL;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			struct tr_resolved *r = p->resolved.items[k];
			if (r->kind != P_MARK_KERNEL)
				continue;
			if (!km) {
				km = tr_alloc(sizeof(*km));
				km->k.fd = -1;
			}
			km->probes = realloc(km->probes, (km->nprobes + 1) * sizeof(*km->probes));
			km->probes[km->nprobes].marker = r->marker;
			km->probes[km->nprobes++].handler = (int)p->id;   /* an id until start */
		}
	}
	if (km) {
		km->host.pid = k_pid;
		km->host.tid = k_tid;
		km->host.cpu = k_cpu;
		km->host.execname = k_execname;
		km->host.read_mem = k_read_mem;
		km->host.ctx = km;
	}
	return km;
}

const struct mt_lua_host *tr_kmark_host(struct tr_kmark *km)
{
	return &km->host;
}

int tr_kmark_start(struct tr_kmark *km, struct mt_lua *mt)
{
	size_t cap = 1, len = 0;
	char *patterns;
	int rc;

	km->mt = mt;
	for (unsigned i = 0; i < km->nprobes; i++) {
		char name[32];
		snprintf(name, sizeof(name), "probe_%d", km->probes[i].handler);
		km->probes[i].handler = mt_lua_handler(mt, name);
		cap += strlen(km->probes[i].marker) + 1;
	}
	patterns = tr_alloc(cap);
	for (unsigned i = 0; i < km->nprobes; i++)
		len += (size_t)sprintf(patterns + len, "%s%s", len ? "\n" : "", km->probes[i].marker);
	if ((rc = mt_kernel_open(&km->k)) < 0 ||
	    (rc = mt_kernel_configure(&km->k, 1u << 20, 4, MT_RING_DISCARD)) < 0 ||
	    (rc = mt_kernel_set_patterns(&km->k, patterns)) < 0 ||
	    (rc = mt_kernel_start(&km->k)) < 0) {
		fprintf(stderr, "ERROR: kernel markers: %s\n", mt_kernel_strerror(rc));
		free(patterns);
		return -1;
	}
	free(patterns);
	km->started = 1;
	return 0;
}

/* An event class on first sight: its format parsed (every class, so that
 * events of classes no probe wants can be stepped over), whether a probe
 * wants it.  1 handled, 2 not, -1 unusable (not published, bad format). */
static int class_state(struct tr_kmark *km, u16 id)
{
	struct mt_session *s = km->k.session;
	struct mt_fmt_error err;

	if (km->state[id])
		return km->state[id];
	if (mt_load_acquire(&s->events[id].state) != MT_EV_READY)
		return -1;   /* not published yet: look again next time */
	km->fmt[id] = tr_alloc(sizeof(struct mt_format));
	if (mt_fmt_parse(s->events[id].format, km->fmt[id], &err))
		return km->state[id] = -1;
	km->state[id] = 2;
	for (unsigned i = 0; i < km->nprobes; i++)
		if (!strcmp(km->probes[i].marker, s->events[id].name))
			km->state[id] = 1;
	return km->state[id];
}

static void run_event(struct tr_kmark *km, u16 id, const struct mt_args *a)
{
	const struct mt_session_event *ev = &km->k.session->events[id];
	const struct mt_format *f = km->fmt[id];
	lua_State *L = mt_lua_state(km->mt);

	for (unsigned i = 0; i < km->nprobes && !mt_lua_stopping(km->mt); i++) {
		if (km->probes[i].handler < 0 || strcmp(km->probes[i].marker, ev->name))
			continue;
		if (!lua_checkstack(L, (int)f->nfields + 4))
			return;
		lua_pushstring(L, ev->name);
		lua_pushstring(L, ev->format);
		mt_lua_push_args(L, f, a);
		mt_lua_run(km->mt, km->probes[i].handler, (int)f->nfields + 2);
	}
}

static void run_packet(struct tr_kmark *km, unsigned cpu, const struct mt_ring_packet *pkt)
{
	const char *d = pkt->data;
	size_t left = pkt->data_size;

	while (left > 0 && !mt_lua_stopping(km->mt)) {
		struct mt_event_context ctx;
		struct mt_args a;
		mt_u64 ts;
		u16 id;
		long n;
		int state;

		if (mt_event_read_prefix(d, left, &id, &ts, &ctx) < 0 || id >= MT_EVENTS_MAX)
			break;
		d += MT_EVENT_PREFIX_SIZE;
		left -= MT_EVENT_PREFIX_SIZE;
		state = class_state(km, id);
		if (state < 0 || (n = mt_event_read_payload(km->fmt[id], d, left, &a)) < 0)
			break;
		if (state == 1) {
			km->cur = &ctx;
			km->cur_cpu = cpu;
			run_event(km, id, &a);
			km->cur = NULL;
		}
		d += n;
		left -= (size_t)n;
	}
	if (left > 0 && !mt_lua_stopping(km->mt))
		km->bad++;
}

void tr_kmark_poll(struct tr_kmark *km)
{
	struct mt_session *s;
	struct timespec ts;
	mt_u64 now;

	if (!km || !km->started)
		return;
	s = km->k.session;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (mt_u64)ts.tv_sec * 1000000000ull + (mt_u64)ts.tv_nsec;
	if (now - km->last_flush >= 100000000ull) {
		mt_kernel_flush(&km->k);   /* safe while the kernel writes */
		km->last_flush = now;
	}
	for (unsigned cpu = 0; cpu < s->ncpu && !mt_lua_stopping(km->mt); cpu++) {
		struct mt_ring *r = mt_session_ring(s, cpu);
		struct mt_ring_packet pkt;
		while (!mt_lua_stopping(km->mt) && mt_ring_get_packet(r, &pkt) == 0) {
			run_packet(km, cpu, &pkt);
			mt_ring_put_packet(r);
		}
	}
}

/* Stop the markers, run the handlers of what they recorded, close. */
void tr_kmark_stop(struct tr_kmark *km)
{
	mt_u64 lost = 0;

	if (!km || !km->started)
		return;
	mt_kernel_stop(&km->k);
	mt_kernel_flush(&km->k);
	tr_kmark_poll(km);
	for (unsigned cpu = 0; cpu < km->k.session->ncpu; cpu++)
		lost += mt_load_relaxed(&mt_session_ring(km->k.session, cpu)->lost);
	if (lost)
		fprintf(stderr, "WARNING: %llu kernel marker event%s lost: the handlers ran "
			"slower than the markers fired\n", (unsigned long long)lost, lost == 1 ? "" : "s");
	if (km->bad)
		fprintf(stderr, "WARNING: %llu damaged kernel packet%s skipped\n",
			(unsigned long long)km->bad, km->bad == 1 ? "" : "s");
	mt_kernel_close(&km->k);
	km->started = 0;
}

void tr_kmark_free(struct tr_kmark *km)
{
	if (!km)
		return;
	tr_kmark_stop(km);
	for (unsigned i = 0; i < MT_EVENTS_MAX; i++)
		free(km->fmt[i]);
	free(km->probes);
	free(km);
}
