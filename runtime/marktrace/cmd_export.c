/*
 * cmd_export.c - `marktrace export --format=chrome DIR [-o FILE.json]`:
 * the trace as Chrome trace-event JSON, which Perfetto UI and
 * chrome://tracing open.
 *
 *   ph "X"  a slice per interval of a thread's state (running, syscall N,
 *           irq N, runnable, blocked...) on the thread's track, and per
 *           interval of a CPU (the thread it ran, irq, softirq) on a track
 *           of a "CPUs" process; slices of one track never overlap
 *   ph "i"  every event, with its fields as args, on its thread's track
 *           (its CPU's when it came from the idle task)
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

struct export {
	struct vbuf *out;
	struct ts ts;
	uint64_t t0;
	int started;
	uint64_t items;         /* JSON objects written (for the commas) */
	const struct ctf_trace *last_trace;
	int last_kernel;        /* whether last_trace is a kernel trace */
	int statedump;          /* --statedump: libmarktap's state dump as instants too */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: marktrace export [--format=chrome] [-o FILE.json] [--statedump] [-r] DIR\n\n"
		"Write the traces under DIR as Chrome trace-event JSON (Perfetto UI,\n"
		"chrome://tracing): thread states and CPUs as slices (from the kernel\n"
		"markers of marktrace record --kernel), every event as an instant with\n"
		"its fields, process and thread names.\n\n"
		"  -f, --format FMT   chrome (the only one)\n"
		"  -o, --output FILE  write there instead of standard output (-)\n"
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

static int64_t pid_of(const struct ts_row *r)
{
	return r->pid > 0 ? r->pid : r->id;
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
		put_track(x, pid_of(r), r->id);
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

static void put_event(struct export *x, const struct ctf_stream *s, int kernel)
{
	const struct ctf_event *ev = &s->ev;
	const struct ctf_event_class *c = ev->cls;
	struct vbuf *b = x->out;
	unsigned i;

	begin_object(x);
	vb_str(b, "\"ph\":\"i\",\"s\":\"t\",\"cat\":");
	vb_str(b, kernel ? "\"kernel\"" : "\"user\"");
	vb_str(b, ",\"name\":");
	tout_json_string(b, c->name, (size_t)-1, 0);
	vb_char(b, ',');
	put_ts(x, s->time);
	if (ev->tid > 0)
		put_track(x, ev->pid > 0 ? ev->pid : ev->tid, ev->tid);
	else
		put_track(x, CPU_PID, cpu_tid(s->cpu));
	vb_str(b, ",\"args\":{");
	for (i = 0; i < c->nfields; i++) {
		vb_check(b);
		if (i)
			vb_char(b, ',');
		tout_json_string(b, c->fields[i].name, c->fields[i].name_len, 0);
		vb_char(b, ':');
		put_value(b, ev, i);
	}
	if (ctf_class_field(c, "cpu") < 0 && s->cpu >= 0) {
		vb_str(b, c->nfields ? ",\"cpu\":" : "\"cpu\":");
		vb_i64(b, s->cpu);
	}
	vb_str(b, "}}");
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
		if (r->name[0])
			put_meta(x, "thread_name", pid_of(r), r->id, r->name);
		/* a process is named after its main thread, else its first thread seen */
		if (r->name[0] && (r->id == pid_of(r) || i == 0 || pid_of(rows[i - 1]) != pid_of(r))) {
			struct ts_row *main = r->id == pid_of(r) ? r : ts_find_thread(&x->ts, pid_of(r));
			if (r->id != pid_of(r) && main && main->name[0])
				continue;   /* its main thread names it */
			put_meta(x, "process_name", pid_of(r), pid_of(r), r->name);
		}
	}
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
			if (x->statedump || !mt_is_statedump(s->ev.cls->name))
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "chrome", *out_path = NULL;
	struct export x;
	struct ctf_set set;
	int c, fd = STDOUT_FILENO, rc, recursive = 0, statedump = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:rh", options, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'r': recursive = 1; break;
		case 'T': statedump = 1; break;
		case 'o': out_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (strcmp(format, "chrome")) {
		mt_error("export: unknown format '%s' (chrome is the one there is)", format);
		return 2;
	}
	if (optind != argc - 1) {
		mt_error("export: expected one trace directory, saw %d arguments", argc - optind);
		usage(stderr);
		return 2;
	}
	if (mt_open_traces(&set, argv[optind], recursive, "export"))
		return 1;
	for (unsigned i = 0; i < set.ntraces; i++)
		set.traces[i]->show_thread_events = statedump;   /* as view --statedump */
	if (out_path && !strcmp(out_path, "-"))
		out_path = NULL;        /* standard output, said explicitly */
	/* 0600 as the traces are (a kernel trace's file names...); a link
	 * there (planted in a directory others can write) is not followed */
	if (out_path && (fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
		mt_error("export: cannot write %s: %s", out_path,
			 errno == ELOOP ? "a symbolic link, not followed" : strerror(errno));
		ctf_close(&set);
		return 1;
	}
	memset(&x, 0, sizeof(x));
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
	return rc;
}
