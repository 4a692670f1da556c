/*
 * trace.c - marktap --trace DIR: a script over a stored trace instead of
 * live hits.
 *
 * Every CTF trace under DIR (ours or LTTng's: runtime/tools/ctf_read.c)
 * is read once, all streams merged in time order, one event at a time
 * (memory stays bounded whatever the trace's size: the stream files are
 * mapped, nothing is kept).  Marker probes -- process("...").mark("M"),
 * kernel.mark("M") and the tapset aliases over them -- run on the recorded
 * events named M, their handlers called as kmark.c calls them on events
 * recorded live (name, format, then the marker's fields through
 * mt_lua_push_args), each field found by name in the event.  The context
 * functions answer from the event: pid() and tid() (LTTng's vpid/vtid),
 * execname() (procname), cpu() (the stream's), local_clock_ns() the
 * event's clock value and gettimeofday_*() its time since the epoch.
 * begin runs before the first event, end after the last; timer.* probes
 * fire on trace time, between the events.
 *
 * --trace net://HOST[:PORT]/host/H/SESSION follows a live session of
 * lttng-relayd instead (relay_live.c): the same handlers on its events as
 * they are recorded, until the session ends or ^C.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tr_run.h"
#include "mt_lua.h"
#include <lauxlib.h>
#include "mt_event.h"
#include "mt_utf8.h"
#include "ctf_read.h"
#include "relay_live.h"
#include "relay_net.h"
#include "tstate.h"

/* A probe on a marker, bound to one event class: where its fields are. */
struct binding {
	int handler;
	const struct tr_resolved *r;
	struct mt_format fmt;           /* the handler's arguments */
	int field[MT_FIELDS_MAX];       /* event field of each argument, or -1 */
	unsigned char in_ctx[MT_FIELDS_MAX]; /* a $ctx_NAME: field of the event context */
	struct binding *next;
};

struct ttimer {
	int handler;
	int64_t interval;
	uint64_t next;
};

struct tr_trace {
	struct ctf_set set;
	const struct ctf_stream *cur;   /* the event whose handlers run */
	uint64_t now;                   /* trace time: the last event's, ns since the epoch */
	FILE *out;
	int out_tty, err_tty;           /* escape control bytes there (write_tty) */
	struct mt_lua_host host;
	struct mt_lua *mt;
	struct tr_session *s;
	struct ttimer *timers;
	unsigned ntimers;
	uint64_t runs, lost, lost_packets;
	struct ts ts;                   /* threads so far: other tasks' names */
	int state;                      /* ts is fed (a stored trace, not a live one) */
	uint64_t timer_budget;          /* timer firings left (see run_timers) */
	uint64_t timer_skipped;         /* firings given up over gaps */
	uint64_t begin, end;            /* --begin, --end: trace times (window) */
	int window_set;                 /* resolved at the first item */
	unsigned char *bound;           /* per s->probes: runs on a class of the trace */
};

/*
 * Timers fire on trace time, between events; a trace's times are its
 * maker's, and a gap of 2^63 ns under timer.ms(1) is 10^13 firings.  The
 * firings a run may make grow with the events read (TIMER_PER_EVENT each,
 * TIMER_FREE to start with, a few seconds of handlers); past them a timer jumps
 * to the next event's time and the firings skipped are counted and said.
 */
#define TIMER_FREE 10000000ull
#define TIMER_PER_EVENT 1000ull

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int64_t t_pid(void *ctx)
{
	struct tr_trace *t = ctx;
	return t->cur ? t->cur->ev.pid : mt_lua_self_pid();
}

static int64_t t_tid(void *ctx)
{
	struct tr_trace *t = ctx;
	return t->cur ? t->cur->ev.tid : mt_lua_self_tid();
}

static int64_t t_cpu(void *ctx)
{
	struct tr_trace *t = ctx;
	return t->cur ? t->cur->cpu : mt_lua_self_cpu();
}

static void t_execname(void *ctx, char *buf, size_t size)
{
	struct tr_trace *t = ctx;

	if (!t->cur) {
		mt_lua_self_execname(buf, size);
		return;
	}
	snprintf(buf, size, "%.*s", (int)strnlen(t->cur->ev.procname, t->cur->ev.procname_len),
		 t->cur->ev.procname);
}

/* Credentials are not in the traces: -1 at events, marktap's own elsewhere. */
static int64_t t_cred(void *ctx, int64_t own)
{
	return ((struct tr_trace *)ctx)->cur ? -1 : own;
}

static int64_t t_ppid(void *ctx) { return t_cred(ctx, getppid()); }
static int64_t t_uid(void *ctx) { return t_cred(ctx, (int64_t)getuid()); }
static int64_t t_euid(void *ctx) { return t_cred(ctx, (int64_t)geteuid()); }
static int64_t t_gid(void *ctx) { return t_cred(ctx, (int64_t)getgid()); }
static int64_t t_egid(void *ctx) { return t_cred(ctx, (int64_t)getegid()); }

static int t_read_mem(void *ctx, uint64_t addr, void *dst, size_t n)
{
	(void)ctx; (void)addr; (void)dst; (void)n;
	return -1;   /* the traced memory is gone */
}

/* The event's time; between events (timers, end) the trace's time so far. */
static int64_t t_clock_ns(void *ctx, int realtime)
{
	struct tr_trace *t = ctx;

	if (t->cur)
		return realtime ? (int64_t)t->cur->time : (int64_t)t->cur->ev.ts;
	return (int64_t)t->now;
}

/*
 * Other tasks, by thread id (the tapsets' pid2execname() and the thread
 * groups of a marker's pid fields: ctxswitch's next task, a signal's
 * recipient): live they are read from /proc, which cannot answer for a
 * stored trace; its state (tstate.c: the state dump, fork, exec and each
 * event's context) does, as it was at the event.
 */
static void no_interval(void *ctx, struct ts_row *row, uint64_t start, uint64_t end,
			unsigned state, int32_t aux)
{
	(void)ctx; (void)row; (void)start; (void)end; (void)state; (void)aux;
}

static int t_task_execname(lua_State *L)
{
	struct tr_trace *t = lua_touserdata(L, lua_upvalueindex(1));
	const struct ts_row *r = ts_find_thread(&t->ts, luaL_checkinteger(L, 1));

	lua_pushstring(L, r ? r->name : "");
	return 1;
}

static int t_task_tgid(lua_State *L)
{
	struct tr_trace *t = lua_touserdata(L, lua_upvalueindex(1));
	const struct ts_row *r = ts_find_thread(&t->ts, luaL_checkinteger(L, 1));

	lua_pushinteger(L, r && r->pid >= 0 ? r->pid : -1);
	return 1;
}

/* The runtime's task_execname and task_tgid answered from ts; /proc's
 * other answers withdrawn. */
static void use_trace_tasks(struct tr_trace *t)
{
	lua_State *L = mt_lua_state(t->mt);
	int top = lua_gettop(L);

	ts_init(&t->ts, no_interval, NULL);
	t->state = 1;
	lua_getglobal(L, "require");
	lua_pushliteral(L, "mtrt");
	if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
		lua_pushlightuserdata(L, t);
		lua_pushcclosure(L, t_task_execname, 1);
		lua_setfield(L, -2, "task_execname");
		lua_pushlightuserdata(L, t);
		lua_pushcclosure(L, t_task_tgid, 1);
		lua_setfield(L, -2, "task_tgid");
		/* what only /proc knows (priority, state, CPU, times, memory)
		 * is not this machine's to answer for a stored trace's tasks:
		 * the tapsets' task_prio() & co. say so (task.stp) */
		static const char *const proc_only[] = {
			"task_stat", "task_state", "task_cputime", "task_statm"
		};
		for (unsigned i = 0; i < sizeof(proc_only) / sizeof(proc_only[0]); i++) {
			lua_pushnil(L);
			lua_setfield(L, -2, proc_only[i]);
		}
	}
	lua_settop(L, top);
}

/*
 * The trace's strings are its maker's, and the handlers print them
 * (string fields, execname()): on a terminal their control bytes would be
 * obeyed (ESC/CSI/OSC sequences retitle, recolour, move the cursor, make
 * the terminal answer).  As marktrace view does, on a terminal they are
 * written as the text \xHH: C0 controls but newline and tab, DEL, the C1
 * controls (U+0080-U+009F: CSI is U+009B) and bytes outside a well-formed
 * UTF-8 sequence.  The script's own sequences (ansi_*()) too: which bytes
 * came from the trace is not known here.  A file or a pipe gets the bytes
 * as printed.  A write ends where a print ended: a UTF-8 sequence is cut
 * between two only when a script prints it in parts (its bytes then show
 * as \xHH).
 */
static void write_tty(FILE *f, const char *buf, size_t n)
{
	size_t len;
	const char *text = tr_tty_escape(buf, n, &len);

	fwrite(text, 1, len, f);
}

static void write_out(void *ctx, const char *buf, size_t n)
{
	struct tr_trace *t = ctx;

	if (t->out_tty)
		write_tty(t->out, buf, n);
	else
		fwrite(buf, 1, n, t->out);
}

/* Error lines quote what the handlers made of the trace, too. */
static void write_error(void *ctx, const char *line)
{
	struct tr_trace *t = ctx;

	if (t->err_tty)
		write_tty(stderr, line, strlen(line));
	else
		fputs(line, stderr);
	fputc('\n', stderr);
}

/* How a probe's argument k reads the event class's field fi. */
static void bind_field(struct binding *b, unsigned k, const struct ctf_event_class *c, int fi)
{
	struct mt_field *f = &b->fmt.fields[k];
	int is_string = (intptr_t)b->r->field_types.items[k] == T_STRING;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", (const char *)b->r->fields.items[k]);
	b->field[k] = fi;
	if (fi >= 0)
		is_string = c->fields[fi].kind == CTF_STRING || c->fields[fi].kind == CTF_TEXT;
	f->store = is_string ? MT_ST_STRING : fi >= 0 && c->fields[fi].kind == CTF_FLOAT ? MT_ST_DOUBLE : MT_ST_INT;
	f->size = 8;
	f->is_signed = fi >= 0 && c->fields[fi].is_signed;
}

/* A marker probe point, in the order the probes were written. */
struct point {
	const char *marker;
	const struct tr_probe *p;
	const struct tr_resolved *r;
	unsigned order;
	unsigned probe;                 /* p's place in s->probes */
};

static int by_marker(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	int c = strcmp(x->marker, y->marker);

	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

static void bind_one(struct tr_trace *t, struct ctf_event_class *c, const struct point *pt)
{
	struct binding *b = calloc(1, sizeof(*b));   /* freed with a live version (unbind_trace) */

	if (!b)
		abort();
	b->r = pt->r;
	b->handler = mt_lua_handler(t->mt, tr_printf("probe_%u", pt->p->id));
	b->fmt.nfields = pt->r->fields.n < MT_FIELDS_MAX ? pt->r->fields.n : MT_FIELDS_MAX;
	for (unsigned a = 0; a < b->fmt.nfields; a++) {
		const char *name = pt->r->fields.items[a];
		if (a >= pt->r->fields.n - pt->r->ctx_fields) {   /* $ctx_NAME (elab_bind.c) */
			b->in_ctx[a] = 1;
			bind_field(b, a, c->context, c->context ? ctf_class_field(c->context, name + 4) : -1);
		} else {
			bind_field(b, a, c, ctf_class_field(c, name));
		}
	}
	b->next = c->user;
	c->user = b;
	t->bound[pt->probe] = 1;
}

/*
 * The probes of each event class of a trace, by the class's name (its
 * user pointer), in probe order.  The points are sorted by marker and
 * each class looks its name up: trace.event("*") over a trace of 100000
 * classes compared every class with every point (10^10 strcmp).
 */
static void bind_trace(struct tr_trace *t, struct ctf_trace *tr)
{
	struct tr_session *s = t->s;
	struct point *pts = NULL;
	unsigned n = 0, cap = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			const struct tr_resolved *r = p->resolved.items[k];
			if ((r->kind != P_MARK_USER && r->kind != P_MARK_KERNEL) || !r->marker)
				continue;
			if (n == cap && !(pts = realloc(pts, (cap = cap ? 2 * cap : 64) * sizeof(*pts))))
				abort();
			pts[n] = (struct point){ r->marker, p, r, n, i };
			n++;
		}
	}
	if (n)
		qsort(pts, n, sizeof(*pts), by_marker);
	for (unsigned ci = 0; ci < tr->nclasses && n; ci++) {
		struct ctf_event_class *c = tr->class_list[ci];
		unsigned lo = 0, hi = n;
		while (lo < hi) {          /* the first point of c's name */
			unsigned mid = (lo + hi) / 2;
			if (strcmp(pts[mid].marker, c->name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && !strcmp(pts[lo].marker, c->name); lo++)
			bind_one(t, c, &pts[lo]);
	}
	free(pts);
}

static void bind_classes(struct tr_trace *t)
{
	for (unsigned ti = 0; ti < t->set.ntraces; ti++)
		bind_trace(t, t->set.traces[ti]);
}

static void run_bindings(struct tr_trace *t, const struct ctf_stream *st)
{
	lua_State *L = mt_lua_state(t->mt);

	for (struct binding *b = st->ev.cls->user; b && !mt_lua_stopping(t->mt); b = b->next) {
		struct mt_args a;
		if (b->handler < 0 || !lua_checkstack(L, (int)b->fmt.nfields + 4))
			continue;
		for (unsigned k = 0; k < b->fmt.nfields; k++) {
			const struct ctf_event *ev = b->in_ctx[k] ? st->ev.ctx : &st->ev;
			int fi = ev ? b->field[k] : -1;
			if (b->fmt.fields[k].store == MT_ST_STRING) {
				a.v[k].str = fi >= 0 ? ctf_field_string(ev, (unsigned)fi) : "";
				a.slen[k] = (u32)strlen(a.v[k].str) + 1;
			} else if (b->fmt.fields[k].store == MT_ST_DOUBLE) {
				a.v[k].d = fi >= 0 ? ctf_field_float(ev, (unsigned)fi) : 0;
			} else {
				a.v[k].u = fi < 0 ? 0 : b->fmt.fields[k].is_signed ?
					(uint64_t)ctf_field_int(ev, (unsigned)fi) : ctf_field_uint(ev, (unsigned)fi);
			}
		}
		lua_pushstring(L, st->ev.cls->name);
		lua_pushstring(L, b->r->format ? b->r->format : "");
		mt_lua_push_args(L, &b->fmt, &a);
		mt_lua_run(t->mt, b->handler, (int)b->fmt.nfields + 2);
		t->runs++;
	}
}

/* timer.* probes due by trace time `until` (^C stops them too) */
static void run_timers(struct tr_trace *t, uint64_t until)
{
	t->timer_budget += TIMER_PER_EVENT;
	for (unsigned i = 0; i < t->ntimers && !mt_lua_stopping(t->mt) && !interrupted; i++) {
		struct ttimer *tm = &t->timers[i];
		if (!tm->next)
			tm->next = until + (uint64_t)tm->interval;   /* from the first event */
		while (tm->next <= until && !mt_lua_stopping(t->mt) && !interrupted) {
			if (!t->timer_budget) {
				uint64_t n = (until - tm->next) / (uint64_t)tm->interval + 1;
				t->timer_skipped += n;
				tm->next += n * (uint64_t)tm->interval;
				if (tm->next < until)        /* wrapped past 2^64 */
					tm->next = UINT64_MAX;
				break;
			}
			t->timer_budget--;
			t->now = tm->next;
			mt_lua_run(t->mt, tm->handler, 0);
			if (tm->next > UINT64_MAX - (uint64_t)tm->interval) {
				tm->next = UINT64_MAX;   /* no time after it */
				break;
			}
			tm->next += (uint64_t)tm->interval;
		}
	}
}

/* --begin and --end as trace times, from the first item's (trace_window.c) */
static void set_window(struct tr_trace *t, uint64_t first)
{
	t->begin = tr_trace_time_at(&t->s->trace_begin, first, 0);
	t->end = tr_trace_time_at(&t->s->trace_end, first, UINT64_MAX);
	t->window_set = 1;
}

/* --tid: the event is of a thread it names (or there is no --tid). */
static int thread_chosen(const struct tr_trace *t, int64_t tid)
{
	for (unsigned i = 0; i < t->s->trace_tids.n; i++)
		if ((intptr_t)t->s->trace_tids.items[i] == tid)
			return 1;
	return !t->s->trace_tids.n;
}

/*
 * One item of the merged streams; 0, or 1 after a damaged trace.  Items
 * outside --begin/--end move neither handlers nor timers (their time is
 * not the script's), but the thread state follows them all.
 */
static int replay_item(struct tr_trace *t, struct ctf_stream *st)
{
	int in_window;

	if (st->item == CTF_ITEM_ERROR) {
		fprintf(stderr, "ERROR: %s\n", st->error);
		return 1;
	}
	if (!t->window_set)
		set_window(t, st->time);
	in_window = st->time >= t->begin && st->time <= t->end;
	if (in_window) {
		run_timers(t, st->time);
		t->now = st->time;
	}
	if (st->item == CTF_ITEM_EVENT && st->ev.cls->user && in_window &&
	    thread_chosen(t, st->ev.tid)) {
		t->cur = st;
		run_bindings(t, st);
		t->cur = NULL;
	} else if (st->item == CTF_ITEM_LOST && in_window) {
		t->lost += st->lost_events;
		t->lost_packets += st->lost_packets;
	}
	if (t->state)
		ts_feed(&t->ts, st);   /* after the handlers: they saw the state before it */
	return 0;
}

/* Every event in time order; 0, or 1 after a damaged trace. */
static int replay(struct tr_trace *t)
{
	struct ctf_stream *st;

	ctf_merge_start(&t->set);
	while ((st = ctf_merge_peek(&t->set)) && !mt_lua_stopping(t->mt) && !interrupted) {
		if (replay_item(t, st))
			return 1;
		ctf_merge_advance(&t->set);
	}
	return 0;
}

/* live: bindings for each version of a trace's metadata; what the
 * handlers printed is out before each wait for relayd */
static void live_trace(void *ctx, struct ctf_trace *tr)
{
	bind_trace(ctx, tr);
}

/* A live version's classes are freed: so are their bindings (a relayd
 * may send many versions; the bindings of each took ~2 KB per class). */
static void unbind_trace(void *ctx, struct ctf_trace *tr)
{
	(void)ctx;
	for (unsigned ci = 0; ci < tr->nclasses; ci++) {
		struct binding *b = tr->class_list[ci]->user, *next;
		for (; b; b = next) {
			next = b->next;
			free(b);
		}
		tr->class_list[ci]->user = NULL;
	}
}

static void live_wait(void *ctx)
{
	struct tr_trace *t = ctx;

	mt_lua_flush(t->mt);
	fflush(t->out);
}

/* A live session's events as relayd has them, until it ends (or ^C). */
static int replay_live(struct tr_trace *t, struct mt_live *live)
{
	struct ctf_stream *st;

	mt_live_hooks(live, live_trace, live_wait, t);
	mt_live_on_free(live, unbind_trace);
	while (!mt_lua_stopping(t->mt) && (st = mt_live_next(live, &interrupted)))
		if (replay_item(t, st))
			return 1;
	if (*mt_live_error(live) && !interrupted) {   /* ^C mid-reply ends it as ^C does */
		fprintf(stderr, "ERROR: %s\n", mt_live_error(live));
		return 1;
	}
	return 0;
}

/*
 * What matched nothing.  A probe point of the script resolves against the
 * catalogues (kernel.mark, process().mark) or the trace's classes
 * (trace.event), and a stored trace may hold none of the events it
 * names: cputop's scheduler.ctxswitch over a user-space trace.  The
 * script then runs and prints empty tables, as if nothing had happened.
 * Each probe point of the script (not of a tapset) whose every concrete
 * probe is on a marker and none runs on a class of the trace is said,
 * with the events it runs on, as stap warns of what it cannot probe.
 */
struct unmatched {
	const struct tr_token *tok;     /* the script's probe point */
	unsigned probe;                 /* place in s->probes: order of a point's probes */
};

static int by_point(const void *a, const void *b)
{
	const struct unmatched *x = a, *y = b;

	if (x->tok != y->tok)
		return (uintptr_t)x->tok < (uintptr_t)y->tok ? -1 : 1;
	return x->probe < y->probe ? -1 : x->probe > y->probe;
}

static int on_markers_only(const struct tr_probe *p)
{
	for (unsigned k = 0; k < p->resolved.n; k++) {
		const struct tr_resolved *r = p->resolved.items[k];
		if ((r->kind != P_MARK_USER && r->kind != P_MARK_KERNEL) || !r->marker)
			return 0;
	}
	return p->resolved.n > 0;
}

/* The marker names of the probes v[0..n) run on, each once, at most 4. */
static const char *events_of(const struct tr_session *s, const struct unmatched *v, unsigned n)
{
	struct tr_buf b = {0};
	const char *shown[4];
	unsigned nshown = 0, more = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct tr_probe *p = s->probes.items[v[i].probe];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			const char *m = ((const struct tr_resolved *)p->resolved.items[k])->marker;
			unsigned j = 0;
			while (j < nshown && strcmp(shown[j], m))
				j++;
			if (j < nshown)
				continue;
			if (nshown < 4)
				shown[nshown++] = m;
			else
				more++;
		}
	}
	for (unsigned j = 0; j < nshown; j++)
		tr_buf_printf(&b, "%s%s", j ? (j + 1 == nshown && !more ? " or " : ", ") : "", shown[j]);
	if (more)
		tr_buf_printf(&b, " and %u more", more);
	const char *text = tr_strdup(tr_buf_str(&b));
	free(b.data);
	return text;
}

static void say_unmatched(const struct tr_trace *t)
{
	const struct tr_session *s = t->s;
	struct unmatched *v = tr_alloc(sizeof(*v) * (s->probes.n + 1));
	unsigned n = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		const struct tr_probe *p = s->probes.items[i];
		if (p->point_tok && p->file && !p->file->tapset)
			v[n++] = (struct unmatched){ p->point_tok, i };
	}
	qsort(v, n, sizeof(*v), by_point);
	for (unsigned lo = 0, hi; lo < n; lo = hi) {
		int said = 0;   /* the point runs on something, or is not only markers */
		for (hi = lo; hi < n && v[hi].tok == v[lo].tok; hi++)
			said |= t->bound[v[hi].probe] || !on_markers_only(s->probes.items[v[hi].probe]);
		if (said)
			continue;
		const struct tr_probe *p = s->probes.items[v[lo].probe];
		tr_warn(v[lo].tok, "probe point %s matched no event of the trace %s: it runs on %s "
			"events ('marktrace stats %s' lists the trace's events)", p->orig_pp,
			s->trace_dir, events_of(s, v + lo, hi - lo), s->trace_dir);
	}
	free(v);
}

static void find_timers(struct tr_trace *t)
{
	struct tr_session *s = t->s;

	t->timers = tr_alloc(sizeof(*t->timers) * (s->probes.n + 1));
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		if (r->kind == P_TIMER && r->interval_ns > 0) {
			struct ttimer *tm = &t->timers[t->ntimers++];
			tm->handler = mt_lua_handler(t->mt, tr_printf("probe_%u", p->id));
			tm->interval = r->interval_ns;
		}
	}
}

int tr_trace_run(struct tr_session *s, const char *lua, size_t len)
{
	struct tr_trace t = { .out = stdout, .s = s, .timer_budget = TIMER_FREE };
	struct mt_lua_options o = {0};
	struct ctf_err cerr;
	struct mt_live *live = NULL;
	char err[512];
	int rc = 0;

	if (tr_run_check(s, NULL, NULL, "marktap serves /proc files in live runs only, not over a "
			 "stored trace (--trace)"))   /* points a trace has no events for */
		return 1;
	/* ^C works from here on, also while a relayd trickles its replies */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	mt_net_stop_on(&interrupted, 1);
	/* a live session (net://...) or the traces under a directory */
	if (mt_live_url(s->trace_dir) ? !(live = mt_live_open(s->trace_dir, &cerr))
				      : ctf_open(&t.set, s->trace_dir, &cerr) < 0) {
		fprintf(stderr, "ERROR: %s\n", cerr.msg);
		return 1;
	}
	if (s->output_file && !(t.out = fopen(s->output_file, "w"))) {
		fprintf(stderr, "ERROR: cannot open %s: %s\n", s->output_file, strerror(errno));
		mt_live_close(live);
		ctf_close(&t.set);
		return 1;
	}
	tr_define_lua_limits(s, &o);
	t.out_tty = isatty(fileno(t.out));
	t.err_tty = isatty(STDERR_FILENO);
	o.write = write_out;
	o.error = write_error;
	o.ctx = &t;
	o.guru = s->guru;
	t.host = (struct mt_lua_host){ t_pid, t_tid, t_ppid, t_uid, t_euid, t_gid, t_egid, t_cpu,
				       t_execname, t_read_mem, t_clock_ns, &t };
	o.host = &t.host;
	t.mt = mt_lua_new(&o);
	if (!t.mt || mt_lua_load(t.mt, lua, len, "=script", err, sizeof(err))) {
		fprintf(stderr, "ERROR: %s\n", t.mt ? err : "cannot create the Lua state");
		rc = 1;
		goto out;
	}
	if (!live)
		use_trace_tasks(&t);
	t.bound = tr_alloc(s->probes.n + 1);
	bind_classes(&t);
	if (!live)   /* a live session's classes come as its programs register them */
		say_unmatched(&t);
	find_timers(&t);
	tr_run_probes(t.mt, s, P_BEGIN);
	if (!mt_lua_stopping(t.mt))
		rc = live ? replay_live(&t, live) : replay(&t);
	tr_run_probes(t.mt, s, mt_lua_stopping(t.mt) == MT_LUA_STOP_ERRORS ? P_ERROR : P_END);
	{
		int id = mt_lua_handler(t.mt, "__display");
		if (id >= 0)
			mt_lua_run(t.mt, id, 0);
	}
	mt_lua_flush(t.mt);
	fflush(t.out);
	if (mt_lua_errors(t.mt) || mt_lua_skips(t.mt)) {
		fprintf(stderr, "WARNING: Number of errors: %lld, skipped probes: %lld\n",
			(long long)mt_lua_errors(t.mt), (long long)mt_lua_skips(t.mt));
		if (mt_lua_errors(t.mt))
			rc = 1;
	}
	if (live && !interrupted)
		say_unmatched(&t);
	if (t.timer_skipped)
		fprintf(stderr, "WARNING: %llu timer firings skipped over gaps in the trace (timers fire at "
			"most %llu times plus %llu per event)\n", (unsigned long long)t.timer_skipped,
			TIMER_FREE, TIMER_PER_EVENT);
	if (t.lost || t.lost_packets)
		fprintf(stderr, "WARNING: the trace lost %llu event%s and %llu packet%s: the handlers did not see them\n",
			(unsigned long long)t.lost, t.lost == 1 ? "" : "s",
			(unsigned long long)t.lost_packets, t.lost_packets == 1 ? "" : "s");
	if (s->verbose)
		fprintf(stderr, "marktap: %llu handler runs on recorded events\n", (unsigned long long)t.runs);
out:
	if (t.mt)
		mt_lua_free(t.mt);
	if (t.state) {
		ts_free(&t.ts);
		ts_unbind(&t.set);
	}
	for (unsigned i = 0; !live && i < t.set.ntraces; i++)
		unbind_trace(NULL, t.set.traces[i]);
	if (live)
		mt_live_close(live);
	else
		ctf_close(&t.set);
	if (t.out != stdout)
		fclose(t.out);
	free(t.bound);
	return rc;
}

/*
 * trace.event("NAME") probe points (elab_point.c): the event classes of the
 * trace given with --trace, as markers whose format is made from their
 * fields ("fd %lld filename %s"), so that $fd and $filename resolve as a
 * marker's fields do.  A class with fields a format cannot hold (more than
 * MT_FIELDS_MAX, or names too long) gets a format of the ones it can.
 */
static const char *class_format(const struct ctf_event_class *c)
{
	struct tr_buf b = {0};
	unsigned n = 0;

	for (unsigned i = 0; i < c->nfields && n < MT_FIELDS_MAX; i++) {
		const struct ctf_field *f = &c->fields[i];
		const char *conv = f->kind == CTF_STRING || f->kind == CTF_TEXT ? "%s" :
			f->kind == CTF_FLOAT ? "%f" : f->is_signed ? "%lld" : "%llu";
		if (f->name_len >= MT_FIELD_NAME_MAX)
			continue;
		tr_buf_printf(&b, "%s%s %s", n++ ? " " : "", f->name, conv);
	}
	return tr_strdup(tr_buf_str(&b));
}

/* The event classes of a trace as markers (one per name: dedupe()). */
static void add_classes(void *ctx, struct ctf_trace *tr)
{
	struct tr_vec *out = ctx;

	for (unsigned ci = 0; ci < tr->nclasses; ci++) {
		const struct ctf_event_class *c = tr->class_list[ci];
		struct tr_marker *m = tr_alloc(sizeof(*m));
		m->name = tr_strdup(c->name);
		m->format = class_format(c);
		m->where = "trace";
		tr_vec_push(out, m);
	}
}

static int by_name_then_place(const void *a, const void *b)
{
	void *const *x = *(void *const *const *)a, *const *y = *(void *const *const *)b;
	int c = strcmp(((const struct tr_marker *)*x)->name, ((const struct tr_marker *)*y)->name);

	return c ? c : x < y ? -1 : x > y;
}

/*
 * One marker per name, the first one, in their order.  A trace may hold a
 * million event classes (ids up to 2^20): comparing each with all kept so
 * far took 52 s for 100000 (quadratic); sorting takes a moment.
 */
static void dedupe(struct tr_vec *v)
{
	void ***order = malloc((v->n + 1) * sizeof(*order));
	unsigned i, k = 0;

	if (!order)
		abort();
	for (i = 0; i < v->n; i++)
		order[i] = &v->items[i];
	qsort(order, v->n, sizeof(*order), by_name_then_place);
	for (i = 1, k = 0; i < v->n; i++) {   /* k: the first of its name */
		if (!strcmp(((struct tr_marker *)*order[i])->name, ((struct tr_marker *)*order[k])->name))
			*order[i] = NULL;   /* a later one of the same name */
		else
			k = i;
	}
	k = 0;
	free(order);
	for (i = 0; i < v->n; i++)
		if (v->items[i])
			v->items[k++] = v->items[i];
	v->n = k;
}

/* A live session: the classes its metadata has when we attach (those
 * of events its programs have not registered yet are not known). */
static int live_markers(const char *url, struct tr_vec *out, char **errmsg)
{
	struct ctf_err e;
	struct mt_live *live = mt_live_open(url, &e);

	if (!live) {
		*errmsg = tr_strdup(e.msg);
		return -1;
	}
	mt_live_hooks(live, add_classes, NULL, out);
	mt_live_close(live);
	dedupe(out);
	return 0;
}

/*
 * The event context fields of the trace (ctf_event_class.context: those
 * beyond pid, tid and procname), each name once, for $ctx_NAME.  Read
 * once: elaboration asks for every $ctx_ of every probe.
 */
struct ctx_name {
	const char *name;
	bool is_string;
};

static struct tr_vec ctx_names;         /* struct ctx_name * */
static bool ctx_names_read;

static void add_context(void *ctx, struct ctf_trace *tr)
{
	const struct ctf_event_class *last = NULL;

	(void)ctx;
	for (unsigned ci = 0; ci < tr->nclasses; ci++) {
		const struct ctf_event_class *cx = tr->class_list[ci]->context;
		if (!cx || cx == last)   /* the classes of a stream class share it */
			continue;
		last = cx;
		for (unsigned i = 0; i < cx->nfields; i++) {
			const struct ctf_field *f = &cx->fields[i];
			unsigned k = 0;
			while (k < ctx_names.n && strcmp(((struct ctx_name *)ctx_names.items[k])->name, f->name))
				k++;
			if (k < ctx_names.n || f->name_len + 4 >= MT_FIELD_NAME_MAX)
				continue;
			struct ctx_name *cn = tr_alloc(sizeof(*cn));
			cn->name = tr_strdup(f->name);
			cn->is_string = f->kind == CTF_STRING || f->kind == CTF_TEXT;
			tr_vec_push(&ctx_names, cn);
		}
	}
}

static void read_context_names(const char *dir)
{
	struct ctf_set set;
	struct ctf_err e;

	ctx_names_read = true;
	if (mt_live_url(dir)) {
		struct mt_live *live = mt_live_open(dir, &e);
		if (live) {
			mt_live_hooks(live, add_context, NULL, NULL);
			mt_live_close(live);
		}
	} else if (ctf_open(&set, dir, &e) == 0) {
		for (unsigned ti = 0; ti < set.ntraces; ti++)
			add_context(NULL, set.traces[ti]);
		ctf_close(&set);
	}
}

bool tr_trace_context_field(struct tr_session *s, const char *name, bool *is_string,
			    struct tr_vec *names)
{
	bool found = false;

	if (!s->trace_dir)
		return false;
	if (!ctx_names_read)
		read_context_names(s->trace_dir);
	for (unsigned k = 0; k < ctx_names.n; k++) {
		const struct ctx_name *cn = ctx_names.items[k];
		tr_vec_push(names, tr_printf("$ctx_%s", cn->name));
		if (!strcmp(cn->name, name)) {
			*is_string = cn->is_string;
			found = true;
		}
	}
	return found;
}

int tr_trace_markers(struct tr_session *s, struct tr_vec *out, char **errmsg)
{
	struct ctf_set set;
	struct ctf_err e;

	if (!s->trace_dir) {
		*errmsg = tr_strdup("trace.event probes run over a stored trace: marktap --trace DIR");
		return -1;
	}
	if (mt_live_url(s->trace_dir))
		return live_markers(s->trace_dir, out, errmsg);
	if (ctf_open(&set, s->trace_dir, &e) < 0) {
		*errmsg = tr_strdup(e.msg);
		return -1;
	}
	for (unsigned ti = 0; ti < set.ntraces; ti++)
		add_classes(out, set.traces[ti]);
	ctf_close(&set);
	dedupe(out);
	return 0;
}
