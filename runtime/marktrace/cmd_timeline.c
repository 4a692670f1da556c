/*
 * cmd_timeline.c - `marktrace timeline DIR -o FILE.html|FILE.svg`: LTTV's
 * pictures of a trace in one self-contained file.
 *
 *   resource view   a row per CPU: idle, user, syscall, trap, irq, softirq,
 *                   and which thread ran (tstate.c)
 *   control flow    a row per thread: running (user/syscall/trap/irq/softirq),
 *                   runnable, blocked, zombie; events that carry no state
 *                   (user-space markers...) as ticks, a colour per marker
 *                   name (marker_color), with their fields in the tooltip
 *                   and the number of events where ticks merge
 *
 * The trace is read once, streaming; rows keep a bounded number of points
 * (tlane.c), so the file's size depends on the resolution and the number
 * of rows, not on the number of events.  HTML draws on a canvas with the
 * inline viewer (timeline.js: wheel, drag, buttons, keys); SVG is the
 * whole trace at a fixed width.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctf_read.h"
#include "marktrace.h"
#include "tlane.h"
#include "tout.h"
#include "tstate.h"
#include "vbuf.h"
#include "timeline_js.h"

/* Colours of the states (tstate.h order); the test looks for them in a
 * screenshot, so they are distinct and drawn without blending. */
static const char *const state_color[TS_NSTATES] = {
	"#ffffff", "#c8c8c8", "#00b000", "#ff8c00", "#d62728", "#1f5fff", "#b040ff",
	"#e8d800", "#8b1a1a", "#606060", "#dde4ee",
};
#define TICK_COLOR "#003c78"   /* not a grey: text never draws it */

/*
 * Ticks: a colour per marker name, from its hash, so a marker keeps its
 * colour from one picture to the next; two names of one picture that
 * hash alike take the next free colour (in name order).  None is a
 * state's colour or a grey.
 */
static const char *const marker_palette[] = {
	"#003c78", "#e6194b", "#2e8b57", "#4363d8", "#f58231", "#911eb4", "#0099b0", "#d81b9c",
	"#9a6324", "#469990", "#800000", "#6b8e23", "#000075", "#c9a000", "#5d3fd3", "#ff5a5f",
};
#define NPALETTE (sizeof(marker_palette) / sizeof(marker_palette[0]))
#define COUNT_COLOR "#333333"   /* the number of events of merged ticks */

/* Layout shared with timeline.js (ROW, GAP, LW, AXIS, SEC, RM). */
enum { ROW = 16, GAP = 2, LW = 230, AXIS = 34, SEC = 22, RM = 10 };

struct timeline {
	const char *dir, *out_path;
	int svg;
	unsigned resolution, max_rows, width;
	double from_s, to_s;
	int have_from, have_to;
	int recursive;          /* -r: every trace under dir */
	int started;
	uint64_t v0, v1;        /* the window drawn, ns since the epoch */
	uint64_t end;           /* the last time read (within the window) */
	struct ts ts;
	/* tick names: event classes by name */
	const struct ctf_event_class **name_cls;
	unsigned *name_of_cls, nname_cls;
	const char **names;
	unsigned nnames;
	const struct ctf_event_class *last_cls;
	unsigned last_name;
	unsigned *color;        /* per name: its index in marker_palette */
	uint64_t ticks;
	uint64_t first;         /* the first event's time (of the whole trace) */
	int cut;                /* reading stopped at --to: end is not the trace's */
	const char *damage;     /* the reader's error, if the trace is damaged */
	unsigned quiet_threads; /* alive (state dump) but never seen running */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: marktrace timeline [OPTIONS] DIR -o FILE.html|FILE.svg\n\n"
		"Draw the traces under DIR: a row per CPU (what ran, in which mode) and a row\n"
		"per thread (running, in a syscall, trap or interrupt, runnable, blocked), from\n"
		"the kernel markers of `marktrace record --kernel`; events without state\n"
		"(user-space markers) are ticks on their thread's row.  HTML zooms (wheel,\n"
		"drag, buttons, + - 0 and arrow keys) and opens offline; SVG is a still.\n\n"
		"  -o, --output FILE     the picture (required; - for standard output):\n"
		"                        FILE.svg gives SVG, FILE.html, FILE.htm or a name\n"
		"                        without an extension HTML; any other is an error\n"
		"      --format FMT      html or svg, whatever FILE's name says\n"
		"      --resolution N    cells across the trace a row keeps (default 8192):\n"
		"                        shorter intervals are merged\n"
		"      --max-rows N      at most N thread rows, the busiest (default 500):\n"
		"                        most running time, or most events without a kernel trace\n"
		"      --from S, --to S  only seconds S.. of the trace (from its first event);\n"
		"                        past its end is an error\n"
		"      --width PX        SVG width (default 1600)\n"
		"  -r, --recursive       every trace under DIR, even of several recordings\n"
		"  -h, --help            this text\n");
}

/* ---- reading --------------------------------------------------------- */

static struct tl_lane *lane_of(struct ts_row *r)
{
	if (!r->user) {
		r->user = calloc(1, sizeof(struct tl_lane));
		if (!r->user)
			abort();
	}
	return r->user;
}

static void on_interval(void *ctx, struct ts_row *r, uint64_t start, uint64_t end,
			unsigned state, int32_t aux)
{
	struct timeline *tl = ctx;

	if (start < tl->v0)
		start = tl->v0;
	if (end > tl->v1)
		end = tl->v1;
	if (start >= end)
		return;
	tl_add(lane_of(r), tl->v0, start, end, state, aux, tl->resolution);
}

static unsigned name_index(struct timeline *tl, const struct ctf_event_class *c)
{
	unsigned i;

	if (c == tl->last_cls)
		return tl->last_name;
	for (i = 0; i < tl->nname_cls && tl->name_cls[i] != c; i++)
		;
	if (i == tl->nname_cls) {
		unsigned k;
		for (k = 0; k < tl->nnames && strcmp(tl->names[k], c->name); k++)
			;
		if (k == tl->nnames) {
			tl->names = realloc(tl->names, (tl->nnames + 1) * sizeof(*tl->names));
			if (!tl->names)
				abort();
			tl->names[tl->nnames++] = c->name;
		}
		tl->name_cls = realloc(tl->name_cls, (i + 1) * sizeof(*tl->name_cls));
		tl->name_of_cls = realloc(tl->name_of_cls, (i + 1) * sizeof(*tl->name_of_cls));
		if (!tl->name_cls || !tl->name_of_cls)
			abort();
		tl->name_cls[i] = c;
		tl->name_of_cls[i] = k;
		tl->nname_cls++;
	}
	tl->last_cls = c;
	tl->last_name = tl->name_of_cls[i];
	return tl->last_name;
}

/* ---- an event's fields as text, for its tick's tooltip ---- */

struct text {
	char *p, *end;          /* end: room for a NUL after it */
};

static void text_put(struct text *t, const char *s, size_t n)
{
	if (n > (size_t)(t->end - t->p))
		n = (size_t)(t->end - t->p);
	memcpy(t->p, s, n);
	t->p += n;
}

static void text_u64(struct text *t, uint64_t v, int neg, int hex)
{
	char digits[24], *q = digits + sizeof(digits);

	do {
		*--q = "0123456789abcdef"[hex ? v % 16 : v % 10];
		v = hex ? v / 16 : v / 10;
	} while (v);
	if (hex) {
		*--q = 'x';
		*--q = '0';
	}
	if (neg)
		*--q = '-';
	text_put(t, q, (size_t)(digits + sizeof(digits) - q));
}

/* A string field: quoted, at most 60 bytes of it (tout escapes the rest). */
static void text_string(struct text *t, const char *s)
{
	size_t n = strnlen(s, 61);

	text_put(t, "\"", 1);
	text_put(t, s, n > 60 ? 57 : n);
	if (n > 60)
		text_put(t, "...", 3);
	text_put(t, "\"", 1);
}

static void text_fields(struct text *t, const struct ctf_event *ev)
{
	const struct ctf_event_class *c = ev->cls;
	char num[40];

	for (unsigned i = 0; i < c->nfields && t->p < t->end; i++) {
		const struct ctf_field *f = &c->fields[i];
		if (i)
			text_put(t, " ", 1);
		text_put(t, f->name, f->name_len);
		text_put(t, "=", 1);
		if (f->kind == CTF_STRING || f->kind == CTF_TEXT) {
			text_string(t, ctf_field_string(ev, i));
		} else if (f->kind == CTF_FLOAT) {
			snprintf(num, sizeof(num), "%g", ctf_field_float(ev, i));
			text_put(t, num, strlen(num));
		} else if (f->enum_type && ctf_field_label(ev, i)) {
			text_string(t, ctf_field_label(ev, i));
		} else if (f->base == 16 || f->base == 8 || f->base == 2) {
			text_u64(t, ctf_field_uint(ev, i), 0, 1);
		} else if (f->is_signed && ctf_field_int(ev, i) < 0) {
			text_u64(t, -(uint64_t)ctf_field_int(ev, i), 1, 0);
		} else {
			text_u64(t, ctf_field_uint(ev, i), 0, 0);
		}
	}
}

/* "id=3 url=\"/item/3\" {ctx ip=0x401136}", cut at TL_TEXT_MAX - 1 bytes */
static void event_text(const struct ctf_event *ev, char *buf)
{
	struct text t = { buf, buf + TL_TEXT_MAX - 1 };

	text_fields(&t, ev);
	if (ev->ctx) {
		text_put(&t, ev->cls->nfields ? " {ctx " : "{ctx ", ev->cls->nfields ? 6 : 5);
		text_fields(&t, ev->ctx);
		text_put(&t, "}", 1);
	}
	*t.p = '\0';
}

static void tick(struct timeline *tl, const struct ctf_stream *s)
{
	struct ts_row *r;
	struct tl_lane *l;
	int merges;

	if (s->ev.tid > 0)
		r = ts_thread(&tl->ts, s->ev.tid);
	else
		r = ts_cpu(&tl->ts, s->cpu);
	if (!r)
		return;
	l = lane_of(r);
	/* the last grid's cells are no smaller than those of the span read so
	 * far, and nest: an event in the previous tick's cell of that grid
	 * will merge with it, its fields need no text */
	merges = l->nticks && (l->tick[l->nticks - 1].t - tl->v0) / tl_quantum(s->time - tl->v0, tl->resolution) ==
			      (s->time - tl->v0) / tl_quantum(s->time - tl->v0, tl->resolution);
	tl_tick(l, tl->v0, s->time, name_index(tl, s->ev.cls), tl->resolution);
	tl->ticks++;
	/* a tick of its own: its fields for the tooltip */
	if (!merges && l->tick[l->nticks - 1].count == 1 && (s->ev.cls->nfields || s->ev.ctx)) {
		char text[TL_TEXT_MAX];
		event_text(&s->ev, text);
		tl_tick_text(l, text);
	}
}

static uint64_t seconds_ns(double s)
{
	return s <= 0 ? 0 : s >= 1.8e10 ? UINT64_MAX / 2 : (uint64_t)(s * 1e9 + 0.5);
}

static int read_trace(struct timeline *tl, struct ctf_set *set)
{
	struct ctf_stream *s;

	ctf_merge_start(set);
	while ((s = ctf_merge_peek(set)) != NULL) {
		if (s->item == CTF_ITEM_ERROR) {
			tl->damage = s->error;
			return -1;
		}
		if (!tl->started) {
			tl->started = 1;
			tl->first = s->time;
			tl->v0 = s->time + (tl->have_from ? seconds_ns(tl->from_s) : 0);
			tl->v1 = tl->have_to ? s->time + seconds_ns(tl->to_s) : UINT64_MAX;
		}
		if (s->time > tl->v1) {
			tl->cut = 1;
			tl->end = s->time;   /* the trace goes on past the window */
			break;          /* past the window: nothing more to draw */
		}
		/* no tick for the state dump: the recorder's, as view hides it */
		if (!ts_feed(&tl->ts, s) && s->item == CTF_ITEM_EVENT && s->time >= tl->v0 &&
		    !mt_is_statedump(s->ev.cls->name))
			tick(tl, s);
		if (s->time > tl->end)
			tl->end = s->time;
		ctf_merge_advance(set);
	}
	return 0;
}

/* ---- marker colours -------------------------------------------------- */

struct named {
	const char *name;
	unsigned index;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static void assign_colors(struct timeline *tl)
{
	struct named *order = malloc((tl->nnames + 1) * sizeof(*order));
	unsigned char used[NPALETTE] = { 0 };
	unsigned i, nused = 0;

	tl->color = calloc(tl->nnames + 1, sizeof(*tl->color));
	if (!order || !tl->color)
		abort();
	for (i = 0; i < tl->nnames; i++) {
		order[i].name = tl->names[i];
		order[i].index = i;
	}
	qsort(order, tl->nnames, sizeof(*order), by_name);
	for (i = 0; i < tl->nnames; i++) {
		uint32_t h = 2166136261u;       /* FNV-1a */
		for (const unsigned char *c = (const unsigned char *)order[i].name; *c; c++)
			h = (h ^ *c) * 16777619u;
		h %= NPALETTE;
		while (nused < NPALETTE && used[h])
			h = (h + 1) % NPALETTE;
		nused += !used[h];
		used[h] = 1;
		tl->color[order[i].index] = h;
	}
	free(order);
}

/* ---- rows to draw ---------------------------------------------------- */

/* Something to show: ticks, or a state other than "alive, not known" (the
 * state dump's threads that never ran during the trace are left out). */
static int has_content(const struct ts_row *r)
{
	const struct tl_lane *l = r->user;
	unsigned i;

	if (!l)
		return 0;
	for (i = 0; i < l->n; i++)
		if (l->p[i].state != TS_NONE && l->p[i].state != TS_UNKNOWN)
			return 1;
	return l->nticks > 0;
}

/* A thread row and what ranks it for --max-rows. */
struct ranked {
	struct ts_row *row;
	uint64_t key[2];
};

static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	for (unsigned k = 0; k < 2; k++)
		if (x->key[k] != y->key[k])
			return x->key[k] < y->key[k] ? 1 : -1;
	return x->row->id < y->row->id ? -1 : x->row->id > y->row->id;
}

/* The events a row ticks (in the window). */
static uint64_t ticked(const struct ts_row *r)
{
	const struct tl_lane *l = r->user;
	uint64_t n = 0;

	for (unsigned i = 0; l && i < l->nticks; i++)
		n += l->tick[i].count;
	return n;
}

/*
 * The thread rows to draw, in pid/tid order: the max_rows busiest, by
 * running time with a kernel trace, else by the events they show (a
 * user-space trace says nothing of running time).
 */
static struct ts_row **pick_threads(struct timeline *tl, unsigned *n, unsigned *left_out)
{
	unsigned all, i, k = 0;
	struct ts_row **rows = ts_sorted_threads(&tl->ts, &all);

	tl->quiet_threads = 0;
	for (i = 0; i < all; i++)
		if (has_content(rows[i]))
			rows[k++] = rows[i];
		else if (rows[i]->user)
			tl->quiet_threads++;
	*left_out = 0;
	if (k > tl->max_rows) {
		struct ranked *rank = malloc(k * sizeof(*rank));
		unsigned kept = 0;
		if (!rank)
			abort();
		for (i = 0; i < k; i++) {
			rank[i].row = rows[i];
			rank[i].key[0] = tl->ts.kernel_events ? rows[i]->busy_ns : ticked(rows[i]);
			rank[i].key[1] = rows[i]->events;
		}
		qsort(rank, k, sizeof(*rank), by_rank);
		for (i = 0; i < k; i++)
			rank[i].row->mark = i < tl->max_rows ? 1 : 0;
		free(rank);
		for (i = 0; i < k; i++)
			if (rows[i]->mark)
				rows[kept++] = rows[i];
		*left_out = k - kept;
		k = kept;
	}
	for (i = 0; i < k; i++)
		rows[i]->mark = 0;
	*n = k;
	return rows;
}

static int by_id(const void *a, const void *b)
{
	const struct ts_row *x = *(struct ts_row *const *)a, *y = *(struct ts_row *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct ts_row **pick_cpus(struct timeline *tl, unsigned *n)
{
	struct ts_row **rows = malloc((tl->ts.ncpus + 1) * sizeof(*rows));
	unsigned i, k = 0;

	if (!rows)
		abort();
	for (i = 0; i < tl->ts.ncpus; i++)
		if (has_content(tl->ts.cpus[i]) && tl->ts.cpus[i]->id >= 0)
			rows[k++] = tl->ts.cpus[i];
	/* by CPU number (a trace may name thousands) */
	qsort(rows, k, sizeof(*rows), by_id);
	*n = k;
	return rows;
}

static void row_label(const struct ts_row *r, char *buf, size_t n)
{
	if (r->is_cpu)
		snprintf(buf, n, "cpu %lld", (long long)r->id);
	else
		snprintf(buf, n, "%s [%lld]", r->name[0] ? r->name : "?", (long long)r->id);
}

static void row_info(const struct ts_row *r, char *buf, size_t n)
{
	int k = 0;

	buf[0] = 0;
	if (r->is_cpu)
		return;
	if (r->pid >= 0 && r->pid != r->id)
		k += snprintf(buf + k, n - (size_t)k, "thread of %d, ", r->pid);
	if (r->ppid >= 0)
		k += snprintf(buf + k, n - (size_t)k, "parent %d, ", r->ppid);
	if (r->first_name[0] && strcmp(r->first_name, r->name))
		k += snprintf(buf + k, n - (size_t)k, "was %s, ", r->first_name);
	snprintf(buf + k, n - (size_t)k, "%llu events", (unsigned long long)r->events);
}

/* ---- notes shown above the picture ----------------------------------- */

static unsigned notes(const struct timeline *tl, unsigned left_out, char out[][400])
{
	unsigned n = 0;

	if (tl->damage)
		snprintf(out[n++], 400, "The trace is damaged: %s. The picture stops there.", tl->damage);
	if (!tl->ts.kernel_events)
		snprintf(out[n++], 400, "No kernel trace: threads show their events as ticks, not their "
			 "states (record with marktrace record --kernel for states).");
	else if (!tl->ts.kernel_state)
		snprintf(out[n++], 400, "No scheduler events (kernel_sched_schedule) in the kernel trace: "
			 "a thread is shown running from its first event on its CPU, blocked and runnable "
			 "are not known.");
	if (tl->ts.lost)
		snprintf(out[n++], 400, "%llu events were lost (buffers full): states after a loss may be wrong.",
			 (unsigned long long)tl->ts.lost);
	if (left_out)
		snprintf(out[n++], 400, "%u thread%s with the %s %s not drawn (--max-rows %u).", left_out,
			 left_out == 1 ? "" : "s", tl->ts.kernel_events ? "least running time" : "fewest events",
			 left_out == 1 ? "is" : "are", tl->max_rows);
	if (tl->quiet_threads)
		snprintf(out[n++], 400, "%u threads of the state dump never ran during the trace: not drawn.",
			 tl->quiet_threads);
	if (tl->ts.dropped_threads)
		snprintf(out[n++], 400, "More than %u threads: events of %u later ones are not drawn.",
			 TS_MAX_THREADS, tl->ts.dropped_threads);
	return n;
}

static void fmt_ns(char *buf, size_t n, double ns)
{
	double a = ns < 0 ? -ns : ns;

	if (a >= 1e9)
		snprintf(buf, n, "%.3f s", ns / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.3f ms", ns / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.3f us", ns / 1e3);
	else
		snprintf(buf, n, "%.0f ns", ns);
}

/* ---- HTML ------------------------------------------------------------ */

static void json_row(struct vbuf *b, struct timeline *tl, struct ts_row *r, unsigned *shown)
{
	struct tl_lane *l = r->user;
	char label[64], info[160];
	uint64_t prev = tl->v0;
	unsigned i, texts;

	row_label(r, label, sizeof(label));
	row_info(r, info, sizeof(info));
	vb_str(b, "{\"label\":");
	tout_json_string(b, label, sizeof(label), 1);
	vb_str(b, ",\"info\":");
	tout_json_string(b, info, sizeof(info), 1);
	vb_str(b, ",\"e\":");
	vb_u64(b, l->n ? l->end - tl->v0 : 0);
	vb_str(b, ",\"p\":[");
	for (i = 0; i < l->n; i++) {
		vb_check(b);
		if (i)
			vb_char(b, ',');
		vb_u64(b, l->p[i].t - prev);
		prev = l->p[i].t;
		vb_char(b, ',');
		vb_u64(b, l->p[i].state);
		vb_char(b, ',');
		vb_i64(b, l->p[i].aux);
		*shown |= 1u << l->p[i].state;
	}
	vb_str(b, "],\"k\":[");
	prev = tl->v0;
	for (i = 0; i < l->nticks; i++) {
		vb_check(b);
		if (i)
			vb_char(b, ',');
		vb_u64(b, l->tick[i].t - prev);
		prev = l->tick[i].t;
		vb_char(b, ',');
		vb_u64(b, l->tick[i].count);
		vb_char(b, ',');
		vb_u64(b, l->tick[i].name);
	}
	/* the fields of ticks of one event: [tick index, "text", ...] */
	vb_str(b, "],\"f\":[");
	for (i = 0, texts = 0; i < l->nticks; i++) {
		const char *text = tl_text(l, &l->tick[i]);
		if (!text)
			continue;
		vb_check(b);
		if (texts++)
			vb_char(b, ',');
		vb_u64(b, i);
		vb_char(b, ',');
		tout_json_string(b, text, TL_TEXT_MAX, 1);
	}
	vb_str(b, "]}");
}

/* Names of the threads CPU rows mention, for their tooltips. */
static void json_thread_names(struct vbuf *b, struct timeline *tl, struct ts_row **cpus, unsigned ncpus,
			      struct ts_row **threads, unsigned nthreads)
{
	unsigned i, k, first = 1;

	vb_str(b, ",\"tn\":{");
	for (i = 0; i < ncpus + nthreads; i++) {
		struct ts_row *r = i < ncpus ? cpus[i] : threads[i - ncpus];
		struct tl_lane *l = r->user;
		for (k = 0; k < (r->is_cpu ? l->n : 1); k++) {
			struct ts_row *t = r->is_cpu ? (l->p[k].aux > 0 ? ts_find_thread(&tl->ts, l->p[k].aux) : NULL) : r;
			char label[64];
			if (!t || t->mark)
				continue;
			t->mark = 1;
			row_label(t, label, sizeof(label));
			vb_str(b, first ? "\"" : ",\"");
			vb_i64(b, t->id);
			vb_str(b, "\":");
			tout_json_string(b, label, sizeof(label), 1);
			first = 0;
		}
	}
	vb_char(b, '}');
}

static const char html_head[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>marktrace timeline</title>\n"
	"<style>\nbody { font: 13px sans-serif; margin: 8px; }\n"
	"#bar button { margin-right: 4px; }\n"
	".key { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 10px; "
	"vertical-align: middle; border: 1px solid #888; }\n"
	"#tip { position: absolute; display: none; white-space: pre; background: #ffffe0; "
	"border: 1px solid #888; padding: 3px; font: 12px monospace; pointer-events: none; }\n"
	".note { color: #a00000; }\ncanvas { display: block; margin-top: 6px; }\n"
	"</style></head><body>\n";

/* The legend's facts: state names and colours, system call names. */
static void json_legend(struct vbuf *b, struct timeline *tl)
{
	unsigned i;

	vb_str(b, ",\"states\":[");
	for (i = 0; i < TS_NSTATES; i++) {
		vb_str(b, i ? ",\"" : "\"");
		vb_str(b, ts_state_name[i]);
		vb_str(b, "\"");
	}
	vb_str(b, "],\"colors\":[");
	for (i = 0; i < TS_NSTATES; i++) {
		vb_str(b, i ? ",\"" : "\"");
		vb_str(b, state_color[i]);
		vb_str(b, "\"");
	}
	vb_str(b, "],\"tick\":\"" TICK_COLOR "\",\"S\":{\"running\":2,\"syscall\":3,\"trap\":4,"
		  "\"irq\":5,\"softirq\":6},\"sys\":{");
	if (tl->ts.kernel_events) { /* system call names for the tooltips */
		unsigned k = 0;
		for (i = 0; i < ts_syscall_count(); i++)
			if (ts_syscall_name(i)) {
				vb_check(b);
				vb_str(b, k++ ? ",\"" : "\"");
				vb_u64(b, i);
				vb_str(b, "\":\"");
				vb_str(b, ts_syscall_name(i));
				vb_char(b, '"');
			}
	}
	vb_str(b, "},\"names\":[");
	for (i = 0; i < tl->nnames; i++) {
		vb_check(b);
		if (i)
			vb_char(b, ',');
		tout_json_string(b, tl->names[i], (size_t)-1, 1);
	}
	/* each name's colour: its ticks and its legend entry */
	vb_str(b, "],\"ncolors\":[");
	for (i = 0; i < tl->nnames; i++) {
		vb_check(b);
		vb_str(b, i ? ",\"" : "\"");
		vb_str(b, marker_palette[tl->color[i]]);
		vb_char(b, '"');
	}
	vb_str(b, "],\"count\":\"" COUNT_COLOR "\"");
}

static void json_section(struct vbuf *b, struct timeline *tl, const char *title, int cpu,
			 struct ts_row **rows, unsigned n, unsigned *shown)
{
	unsigned i;

	vb_str(b, "{\"title\":\"");
	vb_str(b, title);
	vb_str(b, cpu ? "\",\"cpu\":1,\"rows\":[" : "\",\"cpu\":0,\"rows\":[");
	for (i = 0; i < n; i++) {
		if (i)
			vb_str(b, ",\n");
		json_row(b, tl, rows[i], shown);
	}
	vb_str(b, "]}");
}

/* The viewer's data: a JSON object inside <script type="application/json">. */
static void json_data(struct vbuf *b, struct timeline *tl, struct ts_row **cpus, unsigned ncpus,
		      struct ts_row **threads, unsigned nthreads)
{
	unsigned i, k, shown = 0;

	vb_str(b, "<script type=\"application/json\" id=\"data\">\n{\"span\":");
	vb_u64(b, tl->end > tl->v0 ? (tl->end < tl->v1 ? tl->end : tl->v1) - tl->v0 : 0);
	json_legend(b, tl);
	vb_str(b, ",\"sections\":[");
	if (ncpus)
		json_section(b, tl, "CPUs (resource view)", 1, cpus, ncpus, &shown);
	if (ncpus && nthreads)
		vb_str(b, ",\n");
	if (nthreads)
		json_section(b, tl, "Threads (control flow)", 0, threads, nthreads, &shown);
	vb_str(b, "]");
	json_thread_names(b, tl, cpus, ncpus, threads, nthreads);
	vb_str(b, ",\"shown\":[");
	for (i = 1, k = 0; i < TS_NSTATES; i++)
		if (shown & (1u << i)) {
			if (k++)
				vb_char(b, ',');
			vb_u64(b, i);
		}
	vb_str(b, "]}\n</script>\n");
}

static void write_html(struct vbuf *b, struct timeline *tl)
{
	unsigned ncpus, nthreads, left_out, i, nnotes;
	struct ts_row **cpus = pick_cpus(tl, &ncpus), **threads = pick_threads(tl, &nthreads, &left_out);
	char note[8][400];

	vb_str(b, html_head);
	vb_str(b, "<div><b>marktrace timeline</b> of ");
	tout_text(b, tl->dir, (size_t)-1);
	vb_str(b, "</div>\n");
	nnotes = notes(tl, left_out, note);
	for (i = 0; i < nnotes; i++) {
		vb_str(b, "<div class=\"note\">");
		tout_text(b, note[i], sizeof(note[i]));
		vb_str(b, "</div>\n");
	}
	vb_str(b, "<div id=\"bar\"><button id=\"left\">&larr;</button><button id=\"zin\">+</button>"
		  "<button id=\"zout\">&minus;</button><button id=\"right\">&rarr;</button>"
		  "<button id=\"all\">whole trace</button> <span id=\"range\"></span> "
		  "(wheel: zoom, drag: move, double-click: zoom in)</div>\n"
		  "<div id=\"legend\"></div>\n<canvas id=\"tl\"></canvas><div id=\"tip\"></div>\n");
	json_data(b, tl, cpus, ncpus, threads, nthreads);
	vb_str(b, "<script>\n");
	vb_str(b, timeline_js);
	vb_str(b, "</script>\n</body></html>\n");
	free(cpus);
	free(threads);
}

/* ---- SVG ------------------------------------------------------------- */

static double nice_step(double ns)
{
	double p = 1, m;

	while (p * 10 <= ns)
		p *= 10;
	while (p > ns && p > 1)
		p /= 10;
	m = ns / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void svg_rect(struct vbuf *b, long x0, long x1, long y, const char *fill)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%d\" fill=\"%s\"/>\n",
		 x0, y, x1 - x0, ROW, fill);
	vb_check(b);
	vb_str(b, buf);
}

/* A pixel of a row's ticks: the colour of its first, the events of all. */
struct tick_pixel {
	long x;
	unsigned color;
	uint64_t count;
};

/*
 * A row's ticks at pixel resolution: a path per marker colour, and the
 * number of events above each pixel holding more than one where it
 * fits (a label does not run over the next).
 */
static void svg_ticks(struct vbuf *b, struct timeline *tl, const struct tl_lane *l, long y, double scale)
{
	struct tick_pixel *px = malloc((l->nticks + 1) * sizeof(*px));
	long right = (long)tl->width - RM, free_x = 0;
	unsigned i, n = 0, c;
	char buf[160];

	if (!px)
		abort();
	for (i = 0; i < l->nticks; i++) {
		long x = LW + (long)((double)(l->tick[i].t - tl->v0) * scale);
		if (x >= right)
			break;
		if (n && px[n - 1].x == x) {
			px[n - 1].count += l->tick[i].count;
			continue;
		}
		px[n].x = x;
		px[n].color = tl->color[l->tick[i].name];
		px[n++].count = l->tick[i].count;
	}
	for (c = 0; c < NPALETTE; c++) {
		int open = 0;
		for (i = 0; i < n; i++) {
			if (px[i].color != c)
				continue;
			if (!open) {
				vb_str(b, "<path stroke=\"");
				vb_str(b, marker_palette[c]);
				vb_str(b, "\" d=\"");
				open = 1;
			}
			snprintf(buf, sizeof(buf), "M%ld.5 %ldv%d", px[i].x, y, ROW / 2);
			vb_check(b);
			vb_str(b, buf);
		}
		if (open)
			vb_str(b, "\"/>\n");
	}
	for (i = 0; i < n; i++) {
		int len;
		if (px[i].count < 2 || px[i].x < free_x)
			continue;
		len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)px[i].count);
		if (px[i].x + 1 + 5 * len > right)
			continue;
		snprintf(buf, sizeof(buf), "<text class=\"count\" x=\"%ld\" y=\"%ld\" font-size=\"8\" fill=\"" COUNT_COLOR
			 "\">%llu</text>\n", px[i].x + 1, y + ROW - 1, (unsigned long long)px[i].count);
		vb_check(b);
		vb_str(b, buf);
		free_x = px[i].x + 3 + 5 * len;
	}
	free(px);
}

/* One row at pixel resolution: the first state reaching a pixel colours
 * it, runs of one colour are one rectangle, ticks are one path. */
static void svg_row(struct vbuf *b, struct timeline *tl, struct ts_row *r, long y, double scale,
		    unsigned *shown)
{
	struct tl_lane *l = r->user;
	long drawn = -1, run0 = -1, run1 = -1, right = (long)tl->width - RM;
	int run_state = -1;
	char label[64], buf[96];
	unsigned i;

	row_label(r, label, sizeof(label));
	snprintf(buf, sizeof(buf), "<text x=\"4\" y=\"%ld\">", y + ROW - 4);
	vb_str(b, buf);
	tout_text(b, label, sizeof(label));
	vb_str(b, "</text>\n");
	for (i = 0; i < l->n; i++) {
		uint64_t a = l->p[i].t, e = i + 1 < l->n ? l->p[i + 1].t : l->end;
		long x0 = LW + (long)((double)(a - tl->v0) * scale), x1 = LW + (long)((double)(e - tl->v0) * scale);
		if (!l->p[i].state)
			continue;
		if (x1 <= x0)
			x1 = x0 + 1;
		if (x1 > right)
			x1 = right;
		if (x1 <= drawn)
			continue;
		if (x0 < drawn)
			x0 = drawn;
		*shown |= 1u << l->p[i].state;
		if (run_state == l->p[i].state && x0 == run1) {
			run1 = x1;
		} else {
			if (run_state >= 0)
				svg_rect(b, run0, run1, y, state_color[run_state]);
			run_state = l->p[i].state;
			run0 = x0;
			run1 = x1;
		}
		drawn = x1;
	}
	if (run_state >= 0)
		svg_rect(b, run0, run1, y, state_color[run_state]);
	svg_ticks(b, tl, l, y, scale);
}

static void svg_axis(struct vbuf *b, struct timeline *tl, double span, double scale, long height)
{
	double step = nice_step(span / 10 > 1 ? span / 10 : 1), t;
	char buf[256], text[32];

	for (t = 0; t <= span; t += step) {
		long x = LW + (long)(t * scale);
		fmt_ns(text, sizeof(text), t);
		snprintf(buf, sizeof(buf), "<rect x=\"%ld\" y=\"%d\" width=\"1\" height=\"%ld\" fill=\"#eeeeee\"/>"
			 "<text x=\"%ld\" y=\"%d\">%s</text>\n", x, AXIS - 4, height - AXIS, x + 3, AXIS - 16, text);
		vb_check(b);
		vb_str(b, buf);
	}
	snprintf(buf, sizeof(buf), "<rect x=\"%d\" y=\"%d\" width=\"%ld\" height=\"1\" fill=\"#000000\"/>\n",
		 LW, AXIS - 4, (long)tl->width - LW - RM);
	vb_str(b, buf);
}

/* The markers' legend from y down, wrapped at the width (b NULL: only
 * count): its lines. */
static long svg_marker_legend(struct vbuf *b, struct timeline *tl, long y)
{
	long x = 4, lines = tl->nnames ? 1 : 0;
	char buf[300];

	for (unsigned i = 0; i < tl->nnames; i++) {
		long w = 20 + 7 * (long)strnlen(tl->names[i], 80);
		if (x > 4 && x + w > (long)tl->width - RM) {
			x = 4;
			lines++;
		}
		if (b) {
			long top = y + 16 * (lines - 1);
			snprintf(buf, sizeof(buf), "<rect class=\"marker\" x=\"%ld\" y=\"%ld\" width=\"3\" height=\"12\" "
				 "fill=\"%s\"/><text class=\"marker\" x=\"%ld\" y=\"%ld\">", x, top,
				 marker_palette[tl->color[i]], x + 7, top + 10);
			vb_check(b);
			vb_str(b, buf);
			tout_text(b, tl->names[i], 80);
			vb_str(b, "</text>\n");
		}
		x += w;
	}
	return lines;
}

static void write_svg(struct vbuf *b, struct timeline *tl)
{
	unsigned ncpus, nthreads, left_out, i, nnotes, shown = 0;
	struct ts_row **cpus = pick_cpus(tl, &ncpus), **threads = pick_threads(tl, &nthreads, &left_out);
	double span = (double)(tl->end > tl->v0 ? (tl->end < tl->v1 ? tl->end : tl->v1) - tl->v0 : 0);
	double scale = (double)(tl->width - LW - RM) / (span > 0 ? span : 1);
	char note[8][400], buf[200];
	long y, height, top, legend_h = 16 * svg_marker_legend(NULL, tl, 0);

	nnotes = notes(tl, left_out, note);
	top = 20 + 16 * (long)nnotes;   /* title and notes above the axis */
	height = top + AXIS + (ncpus ? SEC : 0) + (nthreads ? SEC : 0) +
		 (long)(ncpus + nthreads) * (ROW + GAP) + 30 + legend_h;
	snprintf(buf, sizeof(buf), "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%ld\" "
		 "viewBox=\"0 0 %u %ld\" font-family=\"sans-serif\" font-size=\"12\">\n",
		 tl->width, height, tl->width, height);
	vb_str(b, buf);
	snprintf(buf, sizeof(buf), "<rect width=\"%u\" height=\"%ld\" fill=\"#ffffff\"/>\n"
		 "<text x=\"4\" y=\"14\" font-weight=\"bold\">marktrace timeline of ", tl->width, height);
	vb_str(b, buf);
	tout_text(b, tl->dir, (size_t)-1);
	vb_str(b, "</text>\n");
	for (i = 0; i < nnotes; i++) {
		snprintf(buf, sizeof(buf), "<text x=\"4\" y=\"%u\" fill=\"#a00000\">", 30 + 16 * i);
		vb_str(b, buf);
		tout_text(b, note[i], sizeof(note[i]));
		vb_str(b, "</text>\n");
	}
	snprintf(buf, sizeof(buf), "<g transform=\"translate(0 %ld)\">\n", top);
	vb_str(b, buf);
	svg_axis(b, tl, span, scale, height - top - 30 - legend_h);
	y = AXIS;
	for (i = 0; i < ncpus + nthreads; i++) {
		if (i == 0 || i == ncpus) {
			snprintf(buf, sizeof(buf), "<text x=\"4\" y=\"%ld\" font-weight=\"bold\">%s</text>\n",
				 y + SEC - 7, i < ncpus ? "CPUs (resource view)" : "Threads (control flow)");
			vb_str(b, buf);
			y += SEC;
		}
		svg_row(b, tl, i < ncpus ? cpus[i] : threads[i - ncpus], y, scale, &shown);
		y += ROW + GAP;
	}
	/* the legend, under the rows */
	long x = 4;
	for (i = 1; i < TS_NSTATES; i++) {
		if (!(shown & (1u << i)))
			continue;
		snprintf(buf, sizeof(buf), "<rect x=\"%ld\" y=\"%ld\" width=\"12\" height=\"12\" fill=\"%s\" "
			 "stroke=\"#888888\"/><text x=\"%ld\" y=\"%ld\">%s</text>\n",
			 x, y + 8, state_color[i], x + 16, y + 18, ts_state_name[i]);
		vb_str(b, buf);
		x += 30 + 8 * (long)strlen(ts_state_name[i]);
	}
	svg_marker_legend(b, tl, y + 22);
	vb_str(b, "</g>\n</svg>\n");
	free(cpus);
	free(threads);
}

/* ---- the command ----------------------------------------------------- */

static int parse_uint(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		mt_error("timeline: %s wants a number from %u to %u, not '%s'", opt, min, max, s);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= 0) || *out > 1e9) {
		mt_error("timeline: %s wants seconds from the first event (0 or more), not '%s'", opt, s);
		return -1;
	}
	return 0;
}

/* What a file's name asks for: 0 HTML (.html, .htm, no extension, -),
 * 1 SVG (.svg), -1 anything else (x.png: a picture we do not make). */
static int output_kind(const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');

	if (!dot || dot == base || !strcasecmp(dot, ".html") || !strcasecmp(dot, ".htm"))
		return 0;
	return !strcasecmp(dot, ".svg") ? 1 : -1;
}

static int parse_args(struct timeline *tl, int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'F' },
		{ "resolution", required_argument, NULL, 'R' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "max-rows", required_argument, NULL, 'm' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:rh", options, NULL)) != -1) {
		switch (c) {
		case 'o': tl->out_path = optarg; break;
		case 'F': format = optarg; break;
		case 'r': tl->recursive = 1; break;
		case 'R': if (parse_uint("--resolution", optarg, 16, 1u << 20, &tl->resolution)) return 2; break;
		case 'm': if (parse_uint("--max-rows", optarg, 1, 100000, &tl->max_rows)) return 2; break;
		case 'w': if (parse_uint("--width", optarg, 400, 100000, &tl->width)) return 2; break;
		case 'f': if (parse_seconds("--from", optarg, &tl->from_s)) return 2; tl->have_from = 1; break;
		case 't': if (parse_seconds("--to", optarg, &tl->to_s)) return 2; tl->have_to = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		mt_error("timeline: expected one trace directory, saw %d arguments", argc - optind);
		usage(stderr);
		return 2;
	}
	tl->dir = argv[optind];
	if (!tl->out_path) {
		mt_error("timeline: say where the picture goes: -o FILE.html or -o FILE.svg");
		return 2;
	}
	if (format && strcmp(format, "html") && strcmp(format, "svg")) {
		mt_error("timeline: --format is html or svg, not '%s'", format);
		return 2;
	}
	if (!format && output_kind(tl->out_path) < 0) {
		mt_error("timeline: cannot write %s: the pictures are HTML (.html, .htm) or SVG (.svg); "
			 "name the file so, or say --format html or --format svg", tl->out_path);
		return 2;
	}
	if (tl->have_from && tl->have_to && tl->to_s <= tl->from_s) {
		mt_error("timeline: --to %g is not after --from %g", tl->to_s, tl->from_s);
		return 2;
	}
	tl->svg = format ? !strcmp(format, "svg") : output_kind(tl->out_path) == 1;
	return -1;
}

static void free_lanes(struct ts *ts)
{
	unsigned i;

	for (i = 0; i < ts->thread_slots; i++)
		if (ts->threads[i] && ts->threads[i]->user) {
			tl_free(ts->threads[i]->user);
			free(ts->threads[i]->user);
		}
	for (i = 0; i < ts->ncpus; i++)
		if (ts->cpus[i]->user) {
			tl_free(ts->cpus[i]->user);
			free(ts->cpus[i]->user);
		}
}

/* The last grid: the whole window in --resolution cells, every row alike. */
static void coarsen_all(struct timeline *tl)
{
	uint64_t end = tl->end < tl->v1 ? tl->end : tl->v1;
	uint64_t q = tl_quantum(end > tl->v0 ? end - tl->v0 : 1, tl->resolution);
	unsigned i;

	for (i = 0; i < tl->ts.thread_slots + tl->ts.ncpus; i++) {
		struct ts_row *r = i < tl->ts.thread_slots ? tl->ts.threads[i] : tl->ts.cpus[i - tl->ts.thread_slots];
		if (r && r->user) {
			tl_coarsen(r->user, tl->v0, q);
			tl_coarsen_ticks(r->user, tl->v0, q);
		}
	}
}

static int write_picture(struct timeline *tl)
{
	struct vbuf *b = malloc(sizeof(*b));
	int to_stdout = !strcmp(tl->out_path, "-"), rc = 0;
	int fd = to_stdout ? STDOUT_FILENO : open(tl->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (!b)
		abort();
	if (fd < 0) {   /* 0600 and no link followed, as export's */
		mt_error("timeline: cannot write %s: %s", tl->out_path,
			 errno == ELOOP ? "a symbolic link, not followed" : strerror(errno));
		free(b);
		return 1;
	}
	vb_init(b, fd);
	if (tl->svg)
		write_svg(b, tl);
	else
		write_html(b, tl);
	vb_flush(b);
	if (b->failed || (!to_stdout && close(fd))) {
		mt_error("timeline: cannot write %s: %s", tl->out_path, strerror(b->failed ? b->error : errno));
		rc = 1;
	}
	free(b);
	return rc;
}

/*
 * --from or --to past the trace's end: an empty picture would say
 * nothing happened.  Said with the range there is; 1, else 0.
 */
static int outside(struct timeline *tl)
{
	uint64_t last = tl->end - tl->first;
	const char *opt = NULL;
	double value = 0;

	if (tl->have_from && (tl->v0 > tl->end || (tl->v0 == tl->end && tl->from_s > 0))) {
		opt = "--from";
		value = tl->from_s;
	} else if (tl->have_to && !tl->cut && tl->v1 > tl->end) {
		opt = "--to";
		value = tl->to_s;
	}
	if (!opt)
		return 0;
	mt_error("timeline: %s %g is past the end of %s: its events span 0 to %llu.%09llu seconds "
		 "(from its first event)", opt, value, tl->dir,
		 (unsigned long long)(last / 1000000000u), (unsigned long long)(last % 1000000000u));
	return 1;
}

int mt_cmd_timeline(int argc, char **argv)
{
	struct timeline tl;
	struct ctf_set set;
	int rc;
	unsigned i;

	memset(&tl, 0, sizeof(tl));
	tl.resolution = 8192;
	tl.max_rows = 500;
	tl.width = 1600;
	rc = parse_args(&tl, argc, argv);
	if (rc >= 0)
		return rc;
	if (mt_open_traces(&set, tl.dir, tl.recursive, "timeline"))
		return 1;
	for (i = 0; i < set.ntraces; i++)
		if (set.traces[i]->incomplete)
			mt_error("warning: %s: the recording did not end cleanly: streams may stop short",
				 set.traces[i]->path);
	ts_init(&tl.ts, on_interval, &tl);
	rc = read_trace(&tl, &set) ? 1 : 0;
	if (rc)
		mt_error("%s", tl.damage);
	ts_finish(&tl.ts);
	if (!tl.started) {
		mt_error("timeline: %s holds no events: nothing to draw", tl.dir);
		rc = 1;
	} else if (!rc && outside(&tl)) {
		rc = 2;
	} else {
		coarsen_all(&tl);
		assign_colors(&tl);
		rc |= write_picture(&tl);
	}
	free_lanes(&tl.ts);
	ts_free(&tl.ts);
	ts_unbind(&set);
	ctf_close(&set);
	free(tl.names);
	free(tl.color);
	free(tl.name_cls);
	free(tl.name_of_cls);
	return rc;
}
