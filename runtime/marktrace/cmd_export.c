/*
 * cmd_export.c - `marktrace export --format=chrome DIR [-o FILE.json]`:
 * the trace as Chrome trace-event JSON, which Perfetto UI and
 * chrome://tracing open.
 *
 *   ph "X"  a slice per interval of a thread's state (running, syscall N,
 *           irq N, runnable, blocked...) on the thread's track, and per
 *           interval of a CPU (the thread it ran, irq, softirq) on a track
 *           of a "CPUs" process; slices of one track never overlap
 *   ph "i"  every event, with its fields (and its other context fields,
 *           args.ctx) as args, on its thread's track (its CPU's when it
 *           came from the idle task)
 *   ph "B"  a begin marker (X_start, X_begin, X_entry, or --pair's first)
 *   ph "E"  and its end (X_end, X_exit, --pair's second) on the same track:
 *           a slice X; an end without an open begin stays an instant, and
 *           so do the markers whose other half the trace does not declare.
 *           Slices of one thread nest: an end that closes a slice opened
 *           before others still open ends those and opens them again.
 *           Where kernel traces give threads state slices, pairs are
 *           async slices instead ("b"/"e"), which need not nest with them
 *   ph "M"  process and thread names, at the end, once they are known
 *
 * Written as the trace is read: memory does not grow with the events.
 * Times are microseconds from the first event (a double holds ns then);
 * otherData says where that is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctf_read.h"
#include "marktrace.h"
#include "tout.h"
#include "tstate.h"
#include "vbuf.h"

/*
 * The CPUs' tracks belong to a process no Linux pid can be (pid_max is at
 * most 2^22), so they never mix with a real process's threads.
 */
#define CPU_PID 4194305
/* The threads of a trace that does not say their process (an LTTng
 * channel without the vpid context): their tid is no pid. */
#define UNKNOWN_PID 4194304

/* A pair of markers that make a slice: --pair BEGIN:END. */
struct user_pair {
	const char *begin, *end;
	unsigned name_len;      /* the slice's name: that much of begin */
};

/* What an event class is in a pair (its ctf_event_class's user). */
enum { ROLE_NONE, ROLE_BEGIN, ROLE_END };
struct pair_role {
	struct pair_role *next;
	unsigned char role;
	unsigned kind;          /* 0: _start/_begin to _end, 1: _entry to _exit, 2 + i: --pair i */
	unsigned base_len;      /* the slice's name: that much of the begin's name */
};

/* A begin whose end has not come. */
struct open_slice {
	int64_t pid, tid;
	const struct ctf_event_class *cls;
	const struct pair_role *role;
	uint64_t id;            /* async slices' id */
	int kernel;
};

#define MAX_OPEN_SLICES 65536

struct export {
	struct vbuf *out;
	struct ts ts;
	uint64_t t0;
	int started;
	uint64_t items;         /* JSON objects written (for the commas) */
	const struct ctf_trace *last_trace;
	int last_kernel;        /* whether last_trace is a kernel trace */
	int statedump;          /* --statedump: libmarktap's state dump as instants too */
	int unknown_pid;        /* a track of UNKNOWN_PID was written */
	struct user_pair *pairs;
	unsigned npairs;
	struct pair_role *roles;
	struct open_slice *open;
	unsigned nopen, open_cap;
	int async;              /* pairs as async slices (kernel traces' states) */
	uint64_t next_id;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: marktrace export [--format=chrome] [-o FILE.json] [--pair BEGIN:END]...\n"
		"                        [--statedump] [-r] DIR\n\n"
		"Write the traces under DIR as Chrome trace-event JSON (Perfetto UI,\n"
		"chrome://tracing): thread states and CPUs as slices (from the kernel\n"
		"markers of marktrace record --kernel), begin and end markers of a thread\n"
		"(X_start or X_begin and X_end, X_entry and X_exit) as slices, every other\n"
		"event as an instant with its fields, process and thread names.\n\n"
		"  -f, --format FMT   chrome (the only one)\n"
		"  -o, --output FILE  write there instead of standard output (-)\n"
		"      --pair BEGIN:END  the markers BEGIN and END of a thread make a slice\n"
		"                     too (req_start:req_done); repeat for more pairs\n"
		"      --statedump    libmarktap's state dump events as instants too\n"
		"  -r, --recursive    every trace under DIR, even of several recordings\n"
		"  -h, --help         this text\n");
}

static void begin_object(struct export *x)
{
	vb_check(x->out);
	vb_str(x->out, x->items++ ? ",\n{" : "\n{");
}

static void put_ts(struct export *x, uint64_t t)
{
	vb_str(x->out, "\"ts\":");
	tout_json_micros(x->out, t >= x->t0 ? t - x->t0 : 0);
}

static void put_track(struct export *x, int64_t pid, int64_t tid)
{
	vb_str(x->out, ",\"pid\":");
	vb_i64(x->out, pid);
	vb_str(x->out, ",\"tid\":");
	vb_i64(x->out, tid);
}

static int64_t pid_of(struct export *x, const struct ts_row *r)
{
	if (r->pid > 0)
		return r->pid;
	x->unknown_pid = 1;
	return UNKNOWN_PID;
}

/* An event's process: its context's, else its thread's as the state
 * module knows it, else not known. */
static int64_t event_pid(struct export *x, const struct ctf_event *ev)
{
	const struct ts_row *r;

	if (ev->pid > 0)
		return ev->pid;
	r = ts_find_thread(&x->ts, ev->tid);
	return r ? pid_of(x, r) : (x->unknown_pid = 1, UNKNOWN_PID);
}

/* A track per CPU; numbers tstate.c does not take (any 64-bit value a
 * trace says) share one track past them. */
static int64_t cpu_tid(int64_t cpu)
{
	return CPU_PID + 1 + (cpu >= 0 && cpu < TS_MAX_CPUS ? cpu : TS_MAX_CPUS);
}

/* A state interval ends: a slice on the thread's or the CPU's track. */
static void on_interval(void *ctx, struct ts_row *r, uint64_t start, uint64_t end,
			unsigned state, int32_t aux)
{
	struct export *x = ctx;
	struct vbuf *b = x->out;
	char name[64];

	if (state == TS_UNKNOWN || state == TS_IDLE)
		return;
	if (r->is_cpu) {
		struct ts_row *t = aux > 0 ? ts_find_thread(&x->ts, aux) : NULL;
		if (state == TS_IRQ || state == TS_SOFTIRQ || !t)
			snprintf(name, sizeof(name), "%s", ts_state_name[state]);
		else
			snprintf(name, sizeof(name), "%s [%d]", t->name[0] ? t->name : "?", aux);
	} else if (state == TS_SYSCALL && ts_syscall_name(aux)) {
		snprintf(name, sizeof(name), "syscall %s", ts_syscall_name(aux));
	} else if (state == TS_SYSCALL || state == TS_IRQ || state == TS_SOFTIRQ || (state == TS_TRAP && aux >= 0)) {
		snprintf(name, sizeof(name), "%s %d", ts_state_name[state], aux);
	} else {
		snprintf(name, sizeof(name), "%s", ts_state_name[state]);
	}
	begin_object(x);
	vb_str(b, "\"ph\":\"X\",\"cat\":\"state\",\"name\":");
	tout_json_string(b, name, sizeof(name), 0);
	vb_char(b, ',');
	put_ts(x, start);
	vb_str(b, ",\"dur\":");
	tout_json_micros(b, end - start);
	if (r->is_cpu)
		put_track(x, CPU_PID, cpu_tid(r->id));
	else
		put_track(x, pid_of(x, r), r->id);
	vb_str(b, ",\"args\":{\"state\":\"");
	vb_str(b, ts_state_name[state]);
	vb_str(b, "\"");
	if (!r->is_cpu && state >= TS_USER && state <= TS_SOFTIRQ && state != TS_USER) {
		vb_str(b, ",\"number\":");
		vb_i64(b, aux);
	} else if (r->is_cpu && aux > 0) {
		vb_str(b, ",\"tid\":");
		vb_i64(b, aux);
	} else if (state == TS_USER) {
		vb_str(b, ",\"cpu\":");
		vb_i64(b, aux);
	}
	vb_str(b, "}}");
}

static void put_value(struct vbuf *b, const struct ctf_event *ev, unsigned i)
{
	const struct ctf_field *f = &ev->cls->fields[i];
	char buf[40];

	switch (f->kind) {
	case CTF_STRING:
	case CTF_TEXT:
		tout_json_string(b, ctf_field_string(ev, i), (size_t)-1, 0);
		return;
	case CTF_FLOAT: {
		double d = ctf_field_float(ev, i);
		if (isfinite(d)) {
			vb_double(b, d);
		} else {
			snprintf(buf, sizeof(buf), "%g", d);
			tout_json_string(b, buf, sizeof(buf), 0);
		}
		return;
	}
	}
	if (f->enum_type && ctf_field_label(ev, i)) {
		tout_json_string(b, ctf_field_label(ev, i), (size_t)-1, 0);
	} else if (f->is_char) {
		buf[0] = (char)ctf_field_uint(ev, i);
		buf[1] = 0;
		tout_json_string(b, buf, 2, 0);
	} else if (f->base == 16 || f->base == 8 || f->base == 2) {
		/* addresses and flags: as text, exact (a JSON number is a double) */
		vb_char(b, '"');
		if (f->base == 16)
			vb_hex(b, ctf_field_uint(ev, i));
		else if (f->base == 8)
			vb_oct(b, ctf_field_uint(ev, i));
		else
			vb_bin(b, ctf_field_uint(ev, i));
		vb_char(b, '"');
	} else if (f->is_signed) {
		vb_i64(b, ctf_field_int(ev, i));
	} else {
		vb_u64(b, ctf_field_uint(ev, i));
	}
}

/* The fields of ev as JSON members, without braces: 0 if none written. */
static int put_fields(struct vbuf *b, const struct ctf_event *ev)
{
	const struct ctf_event_class *c = ev->cls;
	unsigned i;

	for (i = 0; i < c->nfields; i++) {
		vb_check(b);
		if (i)
			vb_char(b, ',');
		tout_json_string(b, c->fields[i].name, c->fields[i].name_len, 0);
		vb_char(b, ':');
		put_value(b, ev, i);
	}
	return c->nfields > 0;
}

/* {payload fields, cpu, "ctx":{other context fields}} */
static void put_args(struct vbuf *b, const struct ctf_stream *s)
{
	const struct ctf_event *ev = &s->ev;
	int some;

	vb_char(b, '{');
	some = put_fields(b, ev);
	if (ctf_class_field(ev->cls, "cpu") < 0 && s->cpu >= 0) {
		vb_str(b, some ? ",\"cpu\":" : "\"cpu\":");
		vb_i64(b, s->cpu);
		some = 1;
	}
	if (ev->ctx && ctf_class_field(ev->cls, "ctx") < 0) {
		vb_str(b, some ? ",\"ctx\":{" : "\"ctx\":{");
		put_fields(b, ev->ctx);
		vb_char(b, '}');
	}
	vb_char(b, '}');
}

/* The track of an event: its thread's, or its CPU's for the idle task. */
static void event_track(struct export *x, const struct ctf_stream *s, int64_t *pid, int64_t *tid)
{
	if (s->ev.tid > 0) {
		*pid = event_pid(x, &s->ev);
		*tid = s->ev.tid;
	} else {
		*pid = CPU_PID;
		*tid = cpu_tid(s->cpu);
	}
}

static void put_event(struct export *x, const struct ctf_stream *s, int kernel)
{
	const struct ctf_event *ev = &s->ev;
	struct vbuf *b = x->out;
	int64_t pid, tid;

	begin_object(x);
	vb_str(b, "\"ph\":\"i\",\"s\":\"t\",\"cat\":");
	vb_str(b, kernel ? "\"kernel\"" : "\"user\"");
	vb_str(b, ",\"name\":");
	tout_json_string(b, ev->cls->name, (size_t)-1, 0);
	vb_char(b, ',');
	put_ts(x, s->time);
	event_track(x, s, &pid, &tid);
	put_track(x, pid, tid);
	vb_str(b, ",\"args\":");
	put_args(b, s);
	vb_char(b, '}');
}

/* ---- begin and end markers as slices ---- */

static int ends_with(const char *name, size_t n, const char *suffix, size_t *base)
{
	size_t k = strlen(suffix);

	if (n <= k || memcmp(name + n - k, suffix, k))
		return 0;
	*base = n - k;
	return 1;
}

/* Does trace t have a class named base followed by suffix? */
static int has_class(const struct ctf_trace *t, const char *base, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	for (unsigned i = 0; i < t->nclasses; i++) {
		const struct ctf_event_class *c = t->class_list[i];
		if (c->name_len == n + k && !memcmp(c->name, base, n) && !memcmp(c->name + n, suffix, k))
			return 1;
	}
	return 0;
}

/*
 * What class c of trace t is in a pair: --pair names first, then the
 * suffixes, when the trace declares the other half (X_start without an
 * X_end is an instant); in user space only: a kernel trace's _entry and
 * _exit are its states.
 */
static const struct pair_role *pair_role(struct export *x, struct ctf_event_class *c,
					 const struct ctf_trace *t, int kernel)
{
	struct pair_role *r = c->user;
	size_t base = 0;
	unsigned i;

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->next = x->roles;
	x->roles = r;
	c->user = r;
	for (i = 0; i < x->npairs; i++) {
		if (!strcmp(c->name, x->pairs[i].begin) || !strcmp(c->name, x->pairs[i].end)) {
			r->role = strcmp(c->name, x->pairs[i].begin) ? ROLE_END : ROLE_BEGIN;
			r->kind = 2 + i;
			r->base_len = x->pairs[i].name_len;
			return r;
		}
	}
	if (kernel)
		return r;
	if ((ends_with(c->name, c->name_len, "_start", &base) || ends_with(c->name, c->name_len, "_begin", &base)) &&
	    has_class(t, c->name, base, "_end"))
		r->role = ROLE_BEGIN, r->kind = 0;
	else if (ends_with(c->name, c->name_len, "_end", &base) &&
		 (has_class(t, c->name, base, "_start") || has_class(t, c->name, base, "_begin")))
		r->role = ROLE_END, r->kind = 0;
	else if (ends_with(c->name, c->name_len, "_entry", &base) && has_class(t, c->name, base, "_exit"))
		r->role = ROLE_BEGIN, r->kind = 1;
	else if (ends_with(c->name, c->name_len, "_exit", &base) && has_class(t, c->name, base, "_entry"))
		r->role = ROLE_END, r->kind = 1;
	r->base_len = r->role ? (unsigned)base : 0;
	return r;
}

/* The begin o's slice starts ("B", "b") or ends ("E", "e") at t; the
 * end's fields, when there is one, as args.end. */
static void put_slice_mark(struct export *x, const struct open_slice *o, int begin, uint64_t t,
			   const struct ctf_stream *s, int reopened)
{
	struct vbuf *b = x->out;

	begin_object(x);
	vb_str(b, x->async ? (begin ? "\"ph\":\"b\"" : "\"ph\":\"e\"") : (begin ? "\"ph\":\"B\"" : "\"ph\":\"E\""));
	vb_str(b, o->kernel ? ",\"cat\":\"kernel\",\"name\":" : ",\"cat\":\"user\",\"name\":");
	tout_json_string(b, o->cls->name, o->role->base_len, 0);
	vb_char(b, ',');
	put_ts(x, t);
	put_track(x, o->pid, o->tid);
	if (x->async) {
		vb_str(b, ",\"id\":");
		vb_u64(b, o->id);
	}
	if (s) {
		vb_str(b, begin ? ",\"args\":" : ",\"args\":{\"end\":");
		put_args(b, s);
		if (!begin)
			vb_char(b, '}');
	} else if (reopened) {
		vb_str(b, ",\"args\":{\"continued\":true}");
	}
	vb_char(b, '}');
}

/*
 * A begin or end marker: a slice's start or end, 1; 0 when it is none
 * (an instant, then: an end without its begin, a begin past the limit).
 */
static int pair_event(struct export *x, const struct ctf_stream *s, int kernel)
{
	const struct pair_role *r = pair_role(x, (struct ctf_event_class *)s->ev.cls, s->trace, kernel);
	struct open_slice *o;
	int64_t pid, tid;
	unsigned i, k;

	if (r->role == ROLE_NONE)
		return 0;
	event_track(x, s, &pid, &tid);
	if (r->role == ROLE_BEGIN) {
		if (x->nopen == MAX_OPEN_SLICES)
			return 0;
		if (x->nopen == x->open_cap) {
			x->open_cap = x->open_cap ? 2 * x->open_cap : 64;
			x->open = realloc(x->open, x->open_cap * sizeof(*x->open));
			if (!x->open)
				abort();
		}
		o = &x->open[x->nopen++];
		o->pid = pid;
		o->tid = tid;
		o->cls = s->ev.cls;
		o->role = r;
		o->id = ++x->next_id;
		o->kernel = kernel;
		put_slice_mark(x, o, 1, s->time, s, 0);
		return 1;
	}
	/* the innermost open begin of the same pair on this track */
	for (i = x->nopen; i-- > 0;) {
		o = &x->open[i];
		if (o->tid == tid && o->pid == pid && o->role->kind == r->kind &&
		    (r->kind >= 2 || (o->role->base_len == r->base_len &&
				      !memcmp(o->cls->name, s->ev.cls->name, r->base_len))))
			break;
	}
	if (i == (unsigned)-1)
		return 0;
	/* B/E nest: slices opened inside it and still open end here and go on */
	for (k = x->nopen; !x->async && k-- > i + 1;)
		if (x->open[k].tid == tid && x->open[k].pid == pid)
			put_slice_mark(x, &x->open[k], 0, s->time, NULL, 0);
	put_slice_mark(x, &x->open[i], 0, s->time, s, 0);
	for (k = i + 1; !x->async && k < x->nopen; k++)
		if (x->open[k].tid == tid && x->open[k].pid == pid)
			put_slice_mark(x, &x->open[k], 1, s->time, NULL, 1);
	memmove(&x->open[i], &x->open[i + 1], (x->nopen - i - 1) * sizeof(*x->open));
	x->nopen--;
	return 1;
}

/* --pair BEGIN:END; the slice is named after what the two share
 * (req_start:req_done: "req"), else after BEGIN. */
static int add_pair(struct export *x, char *arg)
{
	char *colon = NULL;
	struct user_pair *p;
	unsigned n = 0, colons = 0, seen = 0;

	/* LTTng's names hold a colon (provider:event): with 3 colons the
	 * middle one separates the two names */
	for (char *q = arg; *q; q++)
		colons += *q == ':';
	for (char *q = arg; *q && !colon; q++)
		if (*q == ':' && ++seen == (colons + 1) / 2)
			colon = q;
	if (colons % 2 == 0 || colon == arg || !colon[1]) {
		mt_error("export: --pair wants BEGIN:END (two marker names, each with one colon or none), not '%s'", arg);
		return -1;
	}
	*colon = '\0';
	x->pairs = realloc(x->pairs, (x->npairs + 1) * sizeof(*x->pairs));
	if (!x->pairs)
		abort();
	p = &x->pairs[x->npairs++];
	p->begin = arg;
	p->end = colon + 1;
	while (p->begin[n] && p->begin[n] == p->end[n])
		n++;
	while (n && strchr("_:.-", p->begin[n - 1]))
		n--;
	p->name_len = n ? n : (unsigned)strlen(p->begin);
	return 0;
}

/* Is there an event class of that name in one of the traces? */
static int set_has_class(const struct ctf_set *set, const char *name)
{
	for (unsigned i = 0; i < set->ntraces; i++)
		for (unsigned k = 0; k < set->traces[i]->nclasses; k++)
			if (!strcmp(set->traces[i]->class_list[k]->name, name))
				return 1;
	return 0;
}

/* A --pair name that no event class has makes no slice, silently: say
 * which (a misspelt name, or LTTng's provider: prefix left out). */
static void say_pairs_unmatched(const struct export *x, const struct ctf_set *set, const char *dir)
{
	for (unsigned i = 0; i < x->npairs; i++) {
		const char *name[2] = { x->pairs[i].begin, x->pairs[i].end };
		for (unsigned k = 0; k < 2; k++)
			if (!set_has_class(set, name[k]))
				mt_error("export: warning: --pair %s:%s: no event of the trace is named "
					 "'%s', so it makes no slice ('marktrace stats %s' lists the "
					 "trace's events)", name[0], name[1], name[k], dir);
	}
}

static void put_lost(struct export *x, const struct ctf_stream *s)
{
	struct vbuf *b = x->out;

	begin_object(x);
	vb_str(b, "\"ph\":\"i\",\"s\":\"g\",\"cat\":\"marktrace\",\"name\":\"lost events\",");
	put_ts(x, s->time);
	put_track(x, CPU_PID, cpu_tid(s->cpu));
	vb_str(b, ",\"args\":{\"events\":");
	vb_u64(b, s->lost_events);
	vb_str(b, ",\"packets\":");
	vb_u64(b, s->lost_packets);
	vb_str(b, ",\"cpu\":");
	vb_i64(b, s->cpu);
	vb_str(b, "}}");
}

static void put_meta(struct export *x, const char *what, int64_t pid, int64_t tid, const char *name)
{
	struct vbuf *b = x->out;

	begin_object(x);
	vb_str(b, "\"ph\":\"M\",\"name\":\"");
	vb_str(b, what);
	vb_str(b, "\"");
	put_track(x, pid, tid);
	vb_str(b, ",\"args\":{\"name\":");
	tout_json_string(b, name, 17, 0);
	vb_str(b, "}}");
}

static void put_names(struct export *x)
{
	unsigned n, i;
	struct ts_row **rows = ts_sorted_threads(&x->ts, &n);
	char name[32];

	if (x->ts.ncpus)
		put_meta(x, "process_name", CPU_PID, CPU_PID, "CPUs");
	for (i = 0; i < x->ts.ncpus; i++) {
		snprintf(name, sizeof(name), "cpu %lld", (long long)x->ts.cpus[i]->id);
		put_meta(x, "thread_name", CPU_PID, cpu_tid(x->ts.cpus[i]->id), name);
	}
	for (i = 0; i < n; i++) {
		struct ts_row *r = rows[i];
		int64_t pid = pid_of(x, r);
		if (r->name[0])
			put_meta(x, "thread_name", pid, r->id, r->name);
		if (pid == UNKNOWN_PID)
			continue;
		/* a process is named after its main thread, else its first thread seen */
		if (r->name[0] && (r->id == pid || i == 0 || pid_of(x, rows[i - 1]) != pid)) {
			struct ts_row *main = r->id == pid ? r : ts_find_thread(&x->ts, pid);
			if (r->id != pid && main && main->name[0])
				continue;   /* its main thread names it */
			put_meta(x, "process_name", pid, pid, r->name);
		}
	}
	if (x->unknown_pid)
		put_meta(x, "process_name", UNKNOWN_PID, UNKNOWN_PID, "pid not known");
	free(rows);
}

static int run(struct export *x, struct ctf_set *set, const char *dir)
{
	struct ctf_stream *s;
	int rc = 0;

	vb_str(x->out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	ctf_merge_start(set);
	while ((s = ctf_merge_peek(set)) != NULL) {
		if (s->item == CTF_ITEM_ERROR) {
			vb_flush(x->out);
			mt_error("%s", s->error);
			rc = 1;
			break;
		}
		if (!x->started) {
			x->t0 = s->time;
			x->started = 1;
		}
		ts_feed(&x->ts, s);
		if (s->trace != x->last_trace) {
			x->last_trace = s->trace;
			x->last_kernel = ts_trace_is_kernel(s->trace);
		}
		if (s->item == CTF_ITEM_EVENT) {
			/* the state dump is the recorder's, as view hides it */
			if ((x->statedump || !mt_is_statedump(s->ev.cls->name)) && !pair_event(x, s, x->last_kernel))
				put_event(x, s, x->last_kernel);
		} else
			put_lost(x, s);
		if (x->out->failed)
			break;
		ctf_merge_advance(set);
	}
	ts_finish(&x->ts);
	put_names(x);
	vb_str(x->out, "\n],\"otherData\":{\"generator\":\"marktrace export\",\"trace\":");
	tout_json_string(x->out, dir, (size_t)-1, 0);
	vb_str(x->out, ",\"first_event_ns_since_epoch\":");
	vb_u64(x->out, x->t0);
	vb_str(x->out, rc ? ",\"complete\":false}}\n" : ",\"complete\":true}}\n");
	return rc;
}

int mt_cmd_export(int argc, char **argv)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "statedump", no_argument, NULL, 'T' },
		{ "pair", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "chrome", *out_path = NULL;
	struct export x;
	struct ctf_set set;
	int c, fd = STDOUT_FILENO, rc, recursive = 0, statedump = 0;

	memset(&x, 0, sizeof(x));
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:rh", options, NULL)) != -1) {
		switch (c) {
		case 'P':
			if (add_pair(&x, optarg)) {
				free(x.pairs);
				return 2;
			}
			break;
		case 'f': format = optarg; break;
		case 'r': recursive = 1; break;
		case 'T': statedump = 1; break;
		case 'o': out_path = optarg; break;
		case 'h': usage(stdout); free(x.pairs); return 0;
		default: usage(stderr); free(x.pairs); return 2;
		}
	}
	rc = strcmp(format, "chrome") ? 2 : optind != argc - 1 ? 3 : 0;
	if (rc == 2)
		mt_error("export: unknown format '%s' (chrome is the one there is)", format);
	if (rc == 3) {
		mt_error("export: expected one trace directory, saw %d arguments", argc - optind);
		usage(stderr);
	}
	if (rc) {
		free(x.pairs);
		return 2;
	}
	if (mt_open_traces(&set, argv[optind], recursive, "export")) {
		free(x.pairs);
		return 1;
	}
	for (unsigned i = 0; i < set.ntraces; i++) {
		set.traces[i]->show_thread_events = statedump;   /* as view --statedump */
		x.async |= ts_trace_is_kernel(set.traces[i]);   /* threads get state slices */
	}
	say_pairs_unmatched(&x, &set, argv[optind]);
	if (out_path && !strcmp(out_path, "-"))
		out_path = NULL;        /* standard output, said explicitly */
	/* 0600 as the traces are (a kernel trace's file names...); a link
	 * there (planted in a directory others can write) is not followed */
	if (out_path && (fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
		mt_error("export: cannot write %s: %s", out_path,
			 errno == ELOOP ? "a symbolic link, not followed" : strerror(errno));
		ctf_close(&set);
		free(x.pairs);
		return 1;
	}
	x.statedump = statedump;
	x.out = malloc(sizeof(*x.out));
	if (!x.out)
		abort();
	vb_init(x.out, fd);
	fflush(stdout);
	ts_init(&x.ts, on_interval, &x);
	rc = run(&x, &set, argv[optind]);
	vb_flush(x.out);
	if (x.out->failed || (out_path && close(fd))) {
		mt_error("export: cannot write %s: %s", out_path ? out_path : "the output",
			 strerror(x.out->failed ? x.out->error : errno));
		rc = 1;
	}
	free(x.out);
	ts_free(&x.ts);
	ts_unbind(&set);
	ctf_close(&set);
	while (x.roles) {
		struct pair_role *next = x.roles->next;
		free(x.roles);
		x.roles = next;
	}
	free(x.open);
	free(x.pairs);
	return rc;
}
