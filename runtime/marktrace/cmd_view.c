/*
 * cmd_view.c - `marktrace view`: every event of every trace under a
 * directory, in time order, one line each:
 *
 *   [10:04:05.123456789] (+0.000001234) cpu0 demo[1234/1235] fs_open: fd=3 filename="/etc/passwd"
 *   [10:04:05.123460000] lost 12 events on cpu1 (buffer full)
 *
 * The line is built by hand in a 64 KiB buffer (vbuf.c): this command is
 * measured against babeltrace2 in events per second.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctf_read.h"
#include "filter.h"
#include "marktrace.h"
#include "vbuf.h"
#include "view_sym.h"

enum time_mode { TIME_OF_DAY, TIME_ABSOLUTE, TIME_RELATIVE };

/* What view keeps of an event class (its ctf_event_class's user). */
struct view_class {
	struct view_class *next;
	const void *binding;    /* the filter's, or NULL */
	int hidden;             /* libmarktap's state dump, without --statedump */
};

struct view {
	struct vbuf *out;
	enum time_mode mode;
	int delta;
	struct mt_filter *filter;
	int symbols;            /* name the functions of #p fields (view_sym.h) */
	int statedump;          /* --statedump: show libmarktap's state dump */
	struct view_class *classes;
	struct vsym *sym;       /* NULL: no symbols to show */
	uint64_t first_time, prev_time;
	int have_first, have_prev;
	uint64_t events, shown, hidden; /* read, printed, state dump not shown */
	/* the formatted seconds part of the last timestamp: most lines share it */
	int64_t cached_sec;
	char cached_text[40];
	size_t cached_len;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: marktrace view [--filter EXPR] [--no-delta] [--absolute | --relative]\n"
		"                      [--no-symbols] [--debug-dir DIR] [--statedump] [-r] DIR\n\n"
		"Print the events of the trace (or recording) DIR in time order, one line each.\n\n"
		"  -f, --filter EXPR  only events matching EXPR: name globs (fs_*), comparisons\n"
		"                     (fd > 2, filename == \"/etc/*\", pid == 42, cpu != 0, procname,\n"
		"                     name), combined with and/or/not (&&, ||, !) and parentheses\n"
		"      --no-delta     no (+seconds) since the previous event\n"
		"      --absolute     show the date too: [2026-12-03 10:04:05.123456789]\n"
		"      --relative     seconds since the first event: [0.000123456]\n"
		"      --no-symbols   show #p addresses bare, without <function+0xoffset>\n"
		"      --debug-dir DIR  separate debug files of stripped objects, by build id\n"
		"                     (DIR/.build-id/ab/cdef....debug; /usr/lib/debug by default)\n"
		"      --statedump    show libmarktap's state dump events too\n"
		"                     (marktap_statedump:thread, bin_info, start, update, unload)\n"
		"  -r, --recursive    merge every trace under DIR, even of several recordings\n"
		"  -h, --help         this text\n\n"
		"Times are wall-clock times in the local time zone (set TZ to change it).\n");
}

/* "[10:04:05.123456789] " in the chosen mode */
static void put_time(struct view *v, uint64_t t)
{
	struct vbuf *b = v->out;
	int64_t sec;

	*b->p++ = '[';
	if (v->mode == TIME_RELATIVE) {
		uint64_t r = t - v->first_time;
		if (t < v->first_time) {
			*b->p++ = '-';
			r = v->first_time - t;
		}
		vb_u64(b, r / 1000000000u);
		*b->p++ = '.';
		vb_nanos(b, r);
	} else {
		sec = (int64_t)(t / 1000000000u);
		if (sec != v->cached_sec || !v->cached_len) {
			struct tm tm;
			time_t tt = (time_t)sec;
			const char *fmt = v->mode == TIME_ABSOLUTE ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S";
			v->cached_len = localtime_r(&tt, &tm) ?
				strftime(v->cached_text, sizeof(v->cached_text), fmt, &tm) : 0;
			if (!v->cached_len)
				v->cached_len = (size_t)snprintf(v->cached_text, sizeof(v->cached_text), "%lld",
								 (long long)sec);
			v->cached_sec = sec;
		}
		memcpy(b->p, v->cached_text, v->cached_len);
		b->p += v->cached_len;
		*b->p++ = '.';
		vb_nanos(b, t);
	}
	*b->p++ = ']';
	*b->p++ = ' ';
}

static void put_delta(struct view *v, uint64_t t)
{
	struct vbuf *b = v->out;

	if (!v->have_prev) {
		memcpy(b->p, "(+?.\?\?\?\?\?\?\?\?\?) ", 15);
		b->p += 15;
	} else {
		uint64_t d = t - v->prev_time;
		*b->p++ = '(';
		if (t < v->prev_time) {     /* streams overlap wrongly: show it, do not wrap */
			*b->p++ = '-';
			d = v->prev_time - t;
		} else {
			*b->p++ = '+';
		}
		vb_u64(b, d / 1000000000u);
		*b->p++ = '.';
		vb_nanos(b, d);
		*b->p++ = ')';
		*b->p++ = ' ';
	}
	v->prev_time = t;
	v->have_prev = 1;
}

static void put_value(struct vbuf *b, const struct ctf_event *ev, unsigned i)
{
	const struct ctf_field *f = &ev->cls->fields[i];

	switch (f->kind) {
	case CTF_STRING:
		vb_quoted(b, ctf_field_string(ev, i), (size_t)-1);
		return;
	case CTF_FLOAT:
		vb_double(b, ctf_field_float(ev, i));
		return;
	case CTF_TEXT:          /* a compound value, already shown as text */
		vb_put(b, ctf_field_string(ev, i), strlen(ctf_field_string(ev, i)));
		return;
	}
	if (f->enum_type) {     /* as babeltrace2 shows it: ( "LABEL" : container = N ) */
		const char *label = ctf_field_label(ev, i);
		vb_put(b, "( ", 2);
		if (label)
			vb_quoted(b, label, (size_t)-1);
		else
			vb_put(b, "<unknown>", 9);
		vb_put(b, " : container = ", 15);
		if (f->is_signed)
			vb_i64(b, ctf_field_int(ev, i));
		else
			vb_u64(b, ctf_field_uint(ev, i));
		vb_put(b, " )", 2);
		return;
	}
	if (f->is_char) {
		vb_quoted_char(b, (unsigned char)ctf_field_uint(ev, i));
		return;
	}
	switch (f->base) {
	case 16: vb_hex(b, ctf_field_uint(ev, i)); break;
	case 8: vb_oct(b, ctf_field_uint(ev, i)); break;
	case 2: vb_bin(b, ctf_field_uint(ev, i)); break;
	default:
		if (f->is_signed)
			vb_i64(b, ctf_field_int(ev, i));
		else
			vb_u64(b, ctf_field_uint(ev, i));
	}
}

/* A pid or tid; the trace may not say it (an LTTng channel without the
 * vpid context): '?' */
static void put_id(struct vbuf *b, int32_t id)
{
	if (id < 0)
		*b->p++ = '?';
	else
		vb_i64(b, id);
}

/* The event context's other fields (LTTng's ip, pthread_id, perf
 * counters...) after the payload: " {ctx ip=0x401136 pthread_id=140}" */
static void put_context(struct vbuf *b, const struct ctf_event *ctx)
{
	const struct ctf_event_class *c = ctx->cls;

	vb_put(b, " {ctx", 5);
	for (unsigned i = 0; i < c->nfields; i++) {
		vb_check(b);
		*b->p++ = ' ';
		vb_put(b, c->fields[i].name, c->fields[i].name_len);
		*b->p++ = '=';
		put_value(b, ctx, i);
	}
	*b->p++ = '}';
}

static void put_cpu(struct vbuf *b, int64_t cpu)
{
	memcpy(b->p, "cpu", 3);
	b->p += 3;
	if (cpu < 0)
		*b->p++ = '?';
	else
		vb_u64(b, (uint64_t)cpu);
}

static void print_event(struct view *v, const struct ctf_stream *s)
{
	const struct ctf_event *ev = &s->ev;
	const struct ctf_event_class *c = ev->cls;
	struct vbuf *b = v->out;
	uint64_t ptrs = v->sym ? vsym_pointer_fields(v->sym, s) : 0;
	unsigned i;

	vb_check(b);
	put_time(v, s->time);
	if (v->delta)
		put_delta(v, s->time);
	put_cpu(b, s->cpu);
	*b->p++ = ' ';
	vb_escaped(b, ev->procname, ev->procname_len);
	*b->p++ = '[';
	put_id(b, ev->pid);
	*b->p++ = '/';
	put_id(b, ev->tid);
	*b->p++ = ']';
	*b->p++ = ' ';
	vb_put(b, c->name, c->name_len);
	if (c->nfields || ev->ctx)
		*b->p++ = ':';
	for (i = 0; i < c->nfields; i++) {
		vb_check(b);
		*b->p++ = ' ';
		vb_put(b, c->fields[i].name, c->fields[i].name_len);
		*b->p++ = '=';
		put_value(b, ev, i);
		if (i < 64 && (ptrs >> i & 1))
			vsym_put(v->sym, b, ev->pid, ctf_field_uint(ev, i));
	}
	if (ev->ctx)
		put_context(b, ev->ctx);
	*b->p++ = '\n';
}

static void print_lost(struct view *v, const struct ctf_stream *s)
{
	struct vbuf *b = v->out;

	vb_check(b);
	put_time(v, s->time);
	if (s->cut && !s->lost_packets) {
		vb_str(b, "end of the stream of ");
		put_cpu(b, s->cpu);
		vb_str(b, ": the recording did not end cleanly, later events of ");
		put_cpu(b, s->cpu);
		vb_str(b, " are missing\n");
		return;
	}
	if (s->lost_events) {
		vb_str(b, "lost ");
		vb_u64(b, s->lost_events);
		vb_str(b, s->lost_events == 1 ? " event on " : " events on ");
		put_cpu(b, s->cpu);
		vb_str(b, " (buffer full)\n");
	}
	if (s->lost_packets) {
		if (s->lost_events)
			put_time(v, s->time);
		vb_str(b, "lost ");
		vb_u64(b, s->lost_packets);
		vb_str(b, s->lost_packets == 1 ? " packet on " : " packets on ");
		put_cpu(b, s->cpu);
		vb_str(b, s->cut_packet ? " (cut short: the recorder stopped while writing it)\n"
				       : " (overwritten or not written)\n");
	}
}

/* libmarktap's own events (runtime/lib/statedump.c, the thread events of
 * mt_event.h): where objects are and who threads are, not markers. */
int mt_is_statedump(const char *name)
{
	return strncmp(name, "marktap_statedump:", 18) == 0;
}

/* The class's view_class, made on first use (every class of the
 * metadata is bound before the first event: mt_filter_unused). */
static struct view_class *view_class(struct view *v, struct ctf_event_class *c)
{
	struct view_class *vc = c->user;

	if (vc)
		return vc;
	vc = calloc(1, sizeof(*vc));
	if (!vc)
		abort();
	vc->hidden = !v->statedump && mt_is_statedump(c->name);
	vc->binding = v->filter ? mt_filter_bind(v->filter, c) : NULL;
	vc->next = v->classes;
	v->classes = vc;
	c->user = vc;
	return vc;
}

static int matches(struct view *v, const struct ctf_stream *s, const struct view_class *vc)
{
	return !v->filter || mt_filter_match(v->filter, vc->binding, &s->ev, s->cpu);
}

/* An empty output is said, with why: the trace has no event (of the
 * program's markers), or the filter took none of them. */
static void say_nothing_shown(const struct view *v)
{
	if (v->events && v->filter)
		mt_error("view: warning: --filter took none of the trace's %llu event%s",
			 (unsigned long long)v->events, v->events == 1 ? "" : "s");
	else if (!v->events && v->hidden)
		mt_error("view: warning: the trace holds no event of the program's markers, only "
			 "libmarktap's state dump (%llu event%s: --statedump shows them)",
			 (unsigned long long)v->hidden, v->hidden == 1 ? "" : "s");
	else if (!v->events)
		mt_error("view: warning: the trace holds no event");
}

static int run(struct view *v, struct ctf_set *set)
{
	struct ctf_stream *s;
	int rc = 0;

	ctf_merge_start(set);
	for (; (s = ctf_merge_peek(set)) != NULL; ctf_merge_advance(set)) {
		const struct view_class *vc = NULL;
		if (s->item == CTF_ITEM_ERROR) {
			vb_flush(v->out);
			mt_error("%s", s->error);
			rc = 1;
			break;
		}
		if (s->item == CTF_ITEM_EVENT) {
			vc = view_class(v, (struct ctf_event_class *)s->ev.cls);
			if (v->sym)     /* objects are kept even when filtered out */
				vsym_event(v->sym, s);
			if (vc->hidden) {
				v->hidden++;
				continue;
			}
			v->events++;
		}
		if (!v->have_first) {
			v->first_time = s->time;
			v->have_first = 1;
		}
		if (vc) {
			if (matches(v, s, vc)) {
				print_event(v, s);
				v->shown++;
			}
		} else {
			print_lost(v, s);
		}
		if (v->out->failed)
			break;
	}
	vb_flush(v->out);
	if (v->out->failed && !rc) {
		mt_error("view: cannot write the output: %s", strerror(v->out->error));
		rc = 1;
	}
	if (!rc && !v->shown)
		say_nothing_shown(v);
	return rc;
}

static void say_unused(int is_field, const char *name, void *arg)
{
	(void)arg;
	if (is_field)
		mt_error("view: warning: --filter: no event of the trace has a field '%s': "
			 "every comparison on it is false", name);
	else
		mt_error("view: warning: --filter: '%s' matches no event name of the trace", name);
}

/* Bind every class before the first event: the filter's names that match
 * nothing are said once, before the output (they are not errors: one
 * filter may serve several traces). */
static void bind_all(struct view *v, struct ctf_set *set)
{
	unsigned i, k;

	for (i = 0; i < set->ntraces; i++) {
		set->traces[i]->show_thread_events = v->statedump;
		for (k = 0; k < set->traces[i]->nclasses; k++)
			view_class(v, set->traces[i]->class_list[k]);
	}
	if (v->filter)
		mt_filter_unused(v->filter, say_unused, NULL);
}

int mt_open_traces(struct ctf_set *set, const char *dir, int recursive, const char *cmd)
{
	struct ctf_err err;
	int rc = recursive ? ctf_open(set, dir, &err) : ctf_open_recording(set, dir, &err);

	if (rc == -2)
		mt_error("%s: %s: give one of them, or -r (--recursive) to merge them all",
			 cmd, err.msg);
	else if (rc)
		mt_error("%s", err.msg);
	return rc ? -1 : 0;
}

int mt_cmd_view(int argc, char **argv)
{
	static const struct option options[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ "no-delta", no_argument, NULL, 'D' },
		{ "absolute", no_argument, NULL, 'A' },
		{ "relative", no_argument, NULL, 'R' },
		{ "no-symbols", no_argument, NULL, 'S' },
		{ "debug-dir", required_argument, NULL, 'G' },
		{ "statedump", no_argument, NULL, 'T' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct view v;
	struct ctf_set set;
	const char *filter_text = NULL;
	const char *debug_dir = "/usr/lib/debug";
	int c, rc, recursive = 0;

	memset(&v, 0, sizeof(v));
	v.delta = 1;
	v.symbols = 1;
	v.mode = TIME_OF_DAY;
	optind = 1;
	/* options anywhere (view DIR --relative), as GNU tools take them */
	while ((c = getopt_long(argc, argv, "f:rh", options, NULL)) != -1) {
		switch (c) {
		case 'f': filter_text = optarg; break;
		case 'D': v.delta = 0; break;
		case 'A': v.mode = TIME_ABSOLUTE; break;
		case 'R': v.mode = TIME_RELATIVE; break;
		case 'S': v.symbols = 0; break;
		case 'G': debug_dir = optarg; break;
		case 'T': v.statedump = 1; break;
		case 'r': recursive = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		mt_error("view: expected one trace directory, saw %d arguments", argc - optind);
		usage(stderr);
		return 2;
	}
	if (filter_text) {
		struct mt_filter_err ferr;
		v.filter = mt_filter_compile(filter_text, &ferr);
		if (!v.filter) {
			mt_error("filter:%u:%u: %s", ferr.line, ferr.col, ferr.msg);
			return 2;
		}
	}
	if (mt_open_traces(&set, argv[optind], recursive, "view")) {
		mt_filter_free(v.filter);
		return 1;
	}
	for (unsigned i = 0; i < set.ntraces; i++)
		if (set.traces[i]->incomplete)
			mt_error("warning: %s: the recording did not end cleanly (the recorder was "
				 "killed or stopped by an error): streams may stop short of the end",
				 set.traces[i]->path);
	bind_all(&v, &set);
	if (v.symbols)
		v.sym = vsym_new(&set, debug_dir);
	v.out = malloc(sizeof(*v.out));
	if (!v.out)
		abort();
	vb_init(v.out, STDOUT_FILENO);
	fflush(stdout);
	rc = run(&v, &set);
	free(v.out);
	vsym_free(v.sym);
	ctf_close(&set);
	mt_filter_free(v.filter);
	while (v.classes) {
		struct view_class *next = v.classes->next;
		free(v.classes);
		v.classes = next;
	}
	return rc;
}
