/*
 * tstate.c - thread and CPU states over time from kernel markers
 * (see tstate.h for the markers and what each one means).
 *
 * A thread's state is derived, not stored: on a CPU it shows the CPU's
 * innermost irq/softirq if any, else its own innermost syscall/trap, else
 * user mode; off a CPU it shows its base state.  Every event recomputes the
 * rows it touches (refresh) and an interval ends where the result changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "tstate.h"
#include "syscall_names.h"

const char *const ts_state_name[TS_NSTATES] = {
	"none", "unknown", "running", "syscall", "trap", "irq", "softirq",
	"runnable", "blocked", "zombie", "idle",
};

/* What an event class means to the state (bound once, kept in cls->state). */
enum ts_kind {
	K_OTHER = 1, K_SWITCH, K_WAKEUP, K_WAKEUP_NEW, K_FORK, K_EXIT, K_FREE, K_EXEC,
	K_SYSCALL_ENTRY, K_SYSCALL_EXIT, K_TRAP_ENTRY, K_TRAP_EXIT,
	K_IRQ_ENTRY, K_IRQ_EXIT, K_SOFTIRQ_ENTRY, K_SOFTIRQ_EXIT, K_STATEDUMP,
	K_USER,                 /* an event of a user-space trace */
};

struct binding {
	enum ts_kind kind;
	int f[4];               /* field indices, -1 where the class lacks one */
	int family;             /* a scheduler/interrupt/syscall marker: no tick */
};

/* Markers of the families the state comes from, bound or not (migrate,
 * softirq_raise, process_wait...): pictures leave them out as ticks. */
static const char *const state_families[] = {
	"kernel_sched_", "kernel_process_", "kernel_irq_", "kernel_softirq_", "kernel_tasklet_",
	"kernel_arch_syscall_", "kernel_arch_trap_", "statedump_", "fs_exec", "mm_handle_fault_",
};

static const struct {
	const char *name;
	enum ts_kind kind;
	const char *fields[4];
} bindings[] = {
	{ "kernel_sched_schedule", K_SWITCH, { "prev_pid", "next_pid", "prev_state" } },
	{ "kernel_sched_try_wakeup", K_WAKEUP, { "pid" } },
	{ "kernel_sched_wakeup_new_task", K_WAKEUP_NEW, { "pid" } },
	{ "kernel_process_fork", K_FORK, { "parent_pid", "child_pid", "child_tgid" } },
	{ "kernel_process_exit", K_EXIT, { "pid" } },
	{ "kernel_process_free", K_FREE, { "pid" } },
	{ "fs_exec", K_EXEC, { "filename" } },
	{ "kernel_arch_syscall_entry", K_SYSCALL_ENTRY, { "syscall_id" } },
	{ "kernel_arch_syscall_exit", K_SYSCALL_EXIT, { "ret" } },
	{ "kernel_arch_trap_entry", K_TRAP_ENTRY, { "trap_id" } },
	{ "kernel_arch_trap_exit", K_TRAP_EXIT, { NULL } },
	{ "mm_handle_fault_entry", K_TRAP_ENTRY, { NULL } },
	{ "mm_handle_fault_exit", K_TRAP_EXIT, { NULL } },
	{ "kernel_irq_entry", K_IRQ_ENTRY, { "irq_id" } },
	{ "kernel_irq_exit", K_IRQ_EXIT, { NULL } },
	{ "kernel_softirq_entry", K_SOFTIRQ_ENTRY, { "softirq_id" } },
	{ "kernel_softirq_exit", K_SOFTIRQ_EXIT, { "softirq_id" } },
	{ "statedump_process_state", K_STATEDUMP, { "pid", "parent_pid", "tgid", "name" } },
};

/* Linux task states in sched_switch's prev_state that mean "exited". */
#define LINUX_EXIT_DEAD   0x0010
#define LINUX_EXIT_ZOMBIE 0x0020
#define LINUX_TASK_DEAD   0x0080

const char *ts_syscall_name(int64_t nr)
{
	if (nr < 0 || (uint64_t)nr >= sizeof(syscall_names) / sizeof(syscall_names[0]))
		return NULL;
	return syscall_names[nr];
}

unsigned ts_syscall_count(void)
{
	return sizeof(syscall_names) / sizeof(syscall_names[0]);
}

void ts_init(struct ts *ts, ts_interval_fn interval, void *ctx)
{
	struct timespec now;

	memset(ts, 0, sizeof(*ts));
	ts->interval = interval;
	ts->ctx = ctx;
	/* a multiplier the trace's maker cannot know (not a secret: a
	 * clock read will do if the kernel has no random bytes yet) */
	if (getrandom(&ts->hash_mul, sizeof(ts->hash_mul), GRND_NONBLOCK) != sizeof(ts->hash_mul)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ts->hash_mul = ((uint64_t)now.tv_nsec << 32 ^ (uint64_t)now.tv_sec) * 0x9E3779B97F4A7C15ull;
	}
	ts->hash_mul |= 1;
}

int ts_trace_is_kernel(const struct ctf_trace *t)
{
	unsigned i;

	for (i = 0; i < t->nenv; i++)
		if (!strcmp(t->env[i].key, "domain"))
			return !strcmp(t->env[i].value, "kernel");
	return 0;
}

static struct binding *bind(const struct ctf_event_class *c)
{
	struct binding *b = calloc(1, sizeof(*b));
	size_t i;
	unsigned k;

	if (!b)
		abort();
	b->kind = K_OTHER;
	for (k = 0; k < 4; k++)
		b->f[k] = -1;
	for (i = 0; i < sizeof(state_families) / sizeof(state_families[0]); i++)
		if (!strncmp(c->name, state_families[i], strlen(state_families[i])))
			b->family = 1;
	for (i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
		if (strcmp(c->name, bindings[i].name))
			continue;
		b->kind = bindings[i].kind;
		for (k = 0; k < 4 && bindings[i].fields[k]; k++)
			b->f[k] = ctf_class_field(c, bindings[i].fields[k]);
		/* a class of that name but other fields (not ours): no state from it */
		for (k = 0; k < 4 && bindings[i].fields[k]; k++) {
			const char *f = bindings[i].fields[k];
			unsigned want = !strcmp(f, "filename") || !strcmp(f, "name") ? CTF_STRING : CTF_INT;
			if (b->f[k] < 0 || c->fields[b->f[k]].kind != want)
				b->kind = K_OTHER;
		}
		break;
	}
	return b;
}

/* ---- rows ------------------------------------------------------------ */

static struct ts_row *new_row(struct ts *ts, int is_cpu, int64_t id)
{
	struct ts_row *r = calloc(1, sizeof(*r));

	if (!r)
		abort();
	r->is_cpu = is_cpu;
	r->id = id;
	r->pid = r->ppid = -1;
	r->on_cpu = -1;
	r->current = -1;
	r->since = ts->now;
	r->state = TS_NONE;
	r->base = TS_UNKNOWN;
	r->aux = -1;
	return r;
}

/*
 * Multiply-shift with a random odd multiplier: with a fixed one, a trace of
 * 200000 threads whose tids all landed in one cluster of the table (7.6 MB)
 * kept marktrace export busy for 3 minutes (quadratic probing).
 */
static unsigned hash_tid(const struct ts *ts, int64_t tid, unsigned slots)
{
	return (unsigned)(((uint64_t)tid * ts->hash_mul) >> 40) & (slots - 1);
}

static void grow_threads(struct ts *ts)
{
	unsigned slots = ts->thread_slots ? ts->thread_slots * 2 : 256, i;
	struct ts_row **t = calloc(slots, sizeof(*t));

	if (!t)
		abort();
	for (i = 0; i < ts->thread_slots; i++) {
		struct ts_row *r = ts->threads[i];
		unsigned h;
		if (!r)
			continue;
		for (h = hash_tid(ts, r->id, slots); t[h]; h = (h + 1) & (slots - 1))
			;
		t[h] = r;
	}
	free(ts->threads);
	ts->threads = t;
	ts->thread_slots = slots;
}

struct ts_row *ts_find_thread(const struct ts *ts, int64_t tid)
{
	unsigned h;

	if (!ts->thread_slots)
		return NULL;
	for (h = hash_tid(ts, tid, ts->thread_slots); ts->threads[h]; h = (h + 1) & (ts->thread_slots - 1))
		if (ts->threads[h]->id == tid)
			return ts->threads[h];
	return NULL;
}

struct ts_row *ts_thread(struct ts *ts, int64_t tid)
{
	unsigned h;

	if (ts->thread_slots) {
		for (h = hash_tid(ts, tid, ts->thread_slots); ts->threads[h];
		     h = (h + 1) & (ts->thread_slots - 1))
			if (ts->threads[h]->id == tid)
				return ts->threads[h];
	}
	if (ts->nthreads >= TS_MAX_THREADS) {
		ts->dropped_threads++;
		return NULL;
	}
	if (2 * (ts->nthreads + 1) > ts->thread_slots)
		grow_threads(ts);
	for (h = hash_tid(ts, tid, ts->thread_slots); ts->threads[h]; h = (h + 1) & (ts->thread_slots - 1))
		;
	ts->threads[h] = new_row(ts, 0, tid);
	ts->nthreads++;
	return ts->threads[h];
}

/* By number, in O(1): a trace may name a new CPU in every packet. */
struct ts_row *ts_cpu(struct ts *ts, int64_t cpu)
{
	unsigned k;

	if (cpu < 0 || cpu >= TS_MAX_CPUS)
		cpu = -1;
	k = (unsigned)(cpu + 1);
	if (k >= ts->cpu_ids) {
		unsigned n = ts->cpu_ids ? ts->cpu_ids : 16;
		while (n <= k)
			n *= 2;
		ts->cpu_by_id = realloc(ts->cpu_by_id, n * sizeof(*ts->cpu_by_id));
		if (!ts->cpu_by_id)
			abort();
		memset(ts->cpu_by_id + ts->cpu_ids, 0, (n - ts->cpu_ids) * sizeof(*ts->cpu_by_id));
		ts->cpu_ids = n;
	}
	if (ts->cpu_by_id[k])
		return ts->cpu_by_id[k];
	ts->cpus = realloc(ts->cpus, (ts->ncpus + 1) * sizeof(*ts->cpus));
	if (!ts->cpus)
		abort();
	ts->cpus[ts->ncpus] = new_row(ts, 1, cpu);
	ts->cpus[ts->ncpus]->state = TS_UNKNOWN;
	ts->cpu_by_id[k] = ts->cpus[ts->ncpus];
	return ts->cpus[ts->ncpus++];
}

static void set_name(struct ts_row *r, const char *name, size_t max)
{
	size_t n = strnlen(name, max < 16 ? max : 16);

	if (!n || (strlen(r->name) == n && !memcmp(r->name, name, n)))
		return;
	memcpy(r->name, name, n);
	r->name[n] = 0;
	if (!r->first_name[0])
		memcpy(r->first_name, r->name, n + 1);
}

/* End the open interval of r at now if (state, aux) changes. */
static void set_state(struct ts *ts, struct ts_row *r, unsigned state, int32_t aux)
{
	if (r->state == state && r->aux == aux)
		return;
	if (r->state != TS_NONE && ts->now > r->since) {
		if (r->state == TS_USER || r->state == TS_SYSCALL || r->state == TS_TRAP ||
		    r->state == TS_IRQ || r->state == TS_SOFTIRQ)
			r->busy_ns += ts->now - r->since;
		ts->interval(ts->ctx, r, r->since, ts->now, r->state, r->aux);
	}
	r->state = (unsigned char)state;
	r->aux = aux;
	r->since = ts->now;
}

static void refresh_thread(struct ts *ts, struct ts_row *t)
{
	struct ts_row *c;

	if (t->on_cpu < 0) {
		set_state(ts, t, t->base, -1);
		return;
	}
	c = ts_cpu(ts, t->on_cpu);
	if (c->irq_depth)
		set_state(ts, t, c->irq[c->irq_depth - 1].state, c->irq[c->irq_depth - 1].aux);
	else if (t->depth)
		set_state(ts, t, t->mode[t->depth - 1].state, t->mode[t->depth - 1].aux);
	else
		set_state(ts, t, TS_USER, (int32_t)t->on_cpu);
}

/* A CPU shows its innermost irq, else its thread's mode; aux = that thread. */
static void refresh_cpu(struct ts *ts, struct ts_row *c)
{
	struct ts_row *t;
	int32_t who = (int32_t)c->current;

	if (c->current < 0) {
		set_state(ts, c, TS_UNKNOWN, -1);
		return;
	}
	if (c->irq_depth) {
		set_state(ts, c, c->irq[c->irq_depth - 1].state, who);
		return;
	}
	if (c->current == 0) {
		set_state(ts, c, TS_IDLE, 0);
		return;
	}
	t = ts_thread(ts, c->current);
	set_state(ts, c, t && t->depth ? t->mode[t->depth - 1].state : TS_USER, who);
}

static void refresh_both(struct ts *ts, struct ts_row *c)
{
	refresh_cpu(ts, c);
	if (c->current > 0) {
		struct ts_row *t = ts_thread(ts, c->current);
		if (t)
			refresh_thread(ts, t);
	}
}

/* Take thread tid off CPU c (if it is there) into base state. */
static void switch_out(struct ts *ts, const struct ts_row *c, struct ts_row *t, unsigned base)
{
	t->base = (unsigned char)base;
	if (t->on_cpu >= 0) {
		struct ts_row *was = ts_cpu(ts, t->on_cpu);
		if (was->current == t->id)
			was->current = -1;
		if (was != c)
			refresh_cpu(ts, was);
	}
	t->on_cpu = -1;
	refresh_thread(ts, t);
}

/* Thread tid (0: idle) runs on CPU c from now. */
static void switch_in(struct ts *ts, struct ts_row *c, int64_t tid)
{
	if (c->current > 0 && c->current != tid) {
		/* a switch we did not see (lost, or before the trace) */
		struct ts_row *old = ts_thread(ts, c->current);
		if (old && old->on_cpu == c->id)
			switch_out(ts, c, old, TS_UNKNOWN);
	}
	c->current = tid;
	if (tid > 0) {
		struct ts_row *t = ts_thread(ts, tid);
		if (t) {
			if (t->on_cpu >= 0 && t->on_cpu != c->id) {
				struct ts_row *was = ts_cpu(ts, t->on_cpu);
				if (was->current == tid) {
					was->current = -1;
					refresh_cpu(ts, was);
				}
			}
			t->on_cpu = c->id;
		}
	}
	refresh_both(ts, c);
}

static void push(struct ts_mode *stack, unsigned *depth, unsigned state, int32_t aux)
{
	if (*depth == TS_MODE_DEPTH) {  /* entries without exits (lost): forget the oldest */
		memmove(stack, stack + 1, (TS_MODE_DEPTH - 1) * sizeof(*stack));
		(*depth)--;
	}
	stack[*depth].state = (unsigned char)state;
	stack[*depth].aux = aux;
	(*depth)++;
}

/* Pop the innermost entry if it is of that state (an exit whose entry
 * came before the trace has nothing to pop). */
static void pop(struct ts_mode *stack, unsigned *depth, unsigned state)
{
	if (*depth && stack[*depth - 1].state == state)
		(*depth)--;
}

static int32_t field_i32(const struct ctf_event *ev, int f)
{
	return f < 0 ? -1 : (int32_t)ctf_field_int(ev, (unsigned)f);
}

/* The fields of the scheduler's and the process markers. */
static void sched_event(struct ts *ts, struct ts_row *c, const struct binding *b,
			const struct ctf_event *ev)
{
	struct ts_row *t;
	int32_t pid = field_i32(ev, b->f[0]);

	switch (b->kind) {
	case K_SWITCH: {
		int64_t state = ctf_field_int(ev, (unsigned)b->f[2]);
		int32_t next = field_i32(ev, b->f[1]);
		ts->kernel_state = 1;
		if (pid > 0 && (t = ts_thread(ts, pid)) != NULL) {
			unsigned base = state == 0 ? TS_RUNNABLE : TS_BLOCKED;
			if (t->exiting || (state & (LINUX_EXIT_DEAD | LINUX_EXIT_ZOMBIE | LINUX_TASK_DEAD)))
				base = TS_ZOMBIE;
			if (c->current == pid)
				c->current = -1;
			switch_out(ts, c, t, base);
		}
		switch_in(ts, c, next < 0 ? -1 : next);
		return;
	}
	case K_WAKEUP:
	case K_WAKEUP_NEW:
		if (pid > 0 && (t = ts_thread(ts, pid)) != NULL && t->on_cpu < 0 &&
		    t->base != TS_ZOMBIE) {
			t->base = TS_RUNNABLE;
			refresh_thread(ts, t);
		}
		return;
	case K_FORK: {
		int32_t child = field_i32(ev, b->f[1]);
		struct ts_row *parent = pid > 0 ? ts_thread(ts, pid) : NULL;
		if (child <= 0 || (t = ts_thread(ts, child)) == NULL)
			return;
		t->pid = field_i32(ev, b->f[2]);
		if (parent) {
			/* a new process's parent is the forking thread's process */
			t->ppid = t->pid == t->id ? (parent->pid >= 0 ? parent->pid : (int32_t)parent->id)
						  : parent->ppid;
			if (parent->name[0])
				set_name(t, parent->name, sizeof(parent->name));
		}
		t->base = TS_RUNNABLE;     /* until wakeup_new: waits to start */
		refresh_thread(ts, t);
		return;
	}
	case K_EXIT:
		if (pid > 0 && (t = ts_thread(ts, pid)) != NULL)
			t->exiting = 1;
		return;
	case K_FREE:
		if (pid > 0 && (t = ts_thread(ts, pid)) != NULL && t->on_cpu < 0) {
			t->base = TS_NONE;
			t->exiting = 0;
			t->depth = 0;
			refresh_thread(ts, t);
		}
		return;
	case K_STATEDUMP:
		if (pid > 0 && (t = ts_thread(ts, pid)) != NULL) {
			t->ppid = field_i32(ev, b->f[1]);
			t->pid = field_i32(ev, b->f[2]);
			set_name(t, ctf_field_string(ev, (unsigned)b->f[3]), 16);
			if (t->state == TS_NONE && t->on_cpu < 0) {
				t->base = TS_UNKNOWN;
				refresh_thread(ts, t);
			}
		}
		return;
	default:
		return;
	}
}

/* Modes: of the current thread (syscall, trap) or of the CPU (irqs). */
static void mode_event(struct ts *ts, struct ts_row *c, struct ts_row *t, const struct binding *b,
		       const struct ctf_event *ev)
{
	switch (b->kind) {
	case K_SYSCALL_ENTRY:
	case K_TRAP_ENTRY:
		if (t)
			push(t->mode, &t->depth, b->kind == K_SYSCALL_ENTRY ? TS_SYSCALL : TS_TRAP,
			     field_i32(ev, b->f[0]));
		break;
	case K_SYSCALL_EXIT:
		if (t)
			pop(t->mode, &t->depth, TS_SYSCALL);
		break;
	case K_TRAP_EXIT:
		if (t)
			pop(t->mode, &t->depth, TS_TRAP);
		break;
	case K_IRQ_ENTRY:
		push(c->irq, &c->irq_depth, TS_IRQ, field_i32(ev, b->f[0]));
		break;
	case K_SOFTIRQ_ENTRY:
		push(c->irq, &c->irq_depth, TS_SOFTIRQ, field_i32(ev, b->f[0]));
		break;
	case K_IRQ_EXIT:
		pop(c->irq, &c->irq_depth, TS_IRQ);
		break;
	case K_SOFTIRQ_EXIT:
		pop(c->irq, &c->irq_depth, TS_SOFTIRQ);
		break;
	default:
		return;
	}
	refresh_both(ts, c);
}

static void kernel_event(struct ts *ts, const struct ctf_stream *s, const struct binding *b)
{
	const struct ctf_event *ev = &s->ev;
	struct ts_row *c = ts_cpu(ts, s->cpu), *t = NULL;

	ts->kernel_events = 1;
	c->events++;
	/*
	 * The context thread is current on this CPU now (for a switch, that
	 * is prev).  A different one means a switch we did not see.
	 */
	if (ev->tid >= 0 && c->current != ev->tid)
		switch_in(ts, c, ev->tid);
	if (ev->tid > 0 && (t = ts_thread(ts, ev->tid)) != NULL) {
		t->events++;
		if (t->pid < 0)
			t->pid = ev->pid;
		set_name(t, ev->procname, ev->procname_len);
	}
	if (b->kind >= K_SYSCALL_ENTRY && b->kind <= K_SOFTIRQ_EXIT)
		mode_event(ts, c, t, b, ev);
	else if (b->kind != K_OTHER && b->kind != K_EXEC)
		sched_event(ts, c, b, ev);
}

int ts_feed(struct ts *ts, const struct ctf_stream *s)
{
	struct ctf_event_class *cls;
	struct binding *b;
	struct ts_row *t;

	if (!ts->started) {
		ts->t0 = s->time;
		ts->started = 1;
	}
	if (s->time > ts->now)
		ts->now = s->time;
	if (s->item != CTF_ITEM_EVENT) {
		ts->lost += s->lost_events;
		return 0;
	}
	cls = (struct ctf_event_class *)s->ev.cls;
	if (!cls->state) {
		b = bind(cls);
		if (!ts_trace_is_kernel(s->trace))
			b->kind = K_USER;
		cls->state = b;
	}
	b = cls->state;
	if (b->kind != K_USER) {
		kernel_event(ts, s, b);
		return b->family;
	}
	if (s->ev.tid > 0 && (t = ts_thread(ts, s->ev.tid)) != NULL) {
		t->events++;
		if (t->pid < 0)
			t->pid = s->ev.pid;
		set_name(t, s->ev.procname, s->ev.procname_len);
	}
	return 0;
}

static int by_pid_tid(const void *a, const void *b)
{
	const struct ts_row *x = *(struct ts_row *const *)a, *y = *(struct ts_row *const *)b;
	int64_t px = x->pid >= 0 ? x->pid : x->id, py = y->pid >= 0 ? y->pid : y->id;

	if (px != py)
		return px < py ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The thread rows with ids above min, sorted: the hash's order changes
 * from run to run, the output must not. */
static struct ts_row **sorted(struct ts *ts, int64_t min, unsigned *n)
{
	struct ts_row **rows = malloc((ts->nthreads + 1) * sizeof(*rows));
	unsigned i, k = 0;

	if (!rows)
		abort();
	for (i = 0; i < ts->thread_slots; i++)
		if (ts->threads[i] && ts->threads[i]->id > min)
			rows[k++] = ts->threads[i];
	qsort(rows, k, sizeof(*rows), by_pid_tid);
	*n = k;
	return rows;
}

void ts_finish(struct ts *ts)
{
	unsigned i, n;
	struct ts_row **rows = sorted(ts, INT64_MIN, &n);

	for (i = 0; i < n; i++)
		set_state(ts, rows[i], TS_NONE, -1);
	free(rows);
	for (i = 0; i < ts->ncpus; i++)
		set_state(ts, ts->cpus[i], TS_NONE, -1);
}

struct ts_row **ts_sorted_threads(struct ts *ts, unsigned *n)
{
	return sorted(ts, 0, n);
}

void ts_unbind(struct ctf_set *set)
{
	unsigned i, k;

	for (i = 0; i < set->ntraces; i++)
		for (k = 0; k < set->traces[i]->nclasses; k++) {
			free(set->traces[i]->class_list[k]->state);
			set->traces[i]->class_list[k]->state = NULL;
		}
}

void ts_free(struct ts *ts)
{
	unsigned i;

	for (i = 0; i < ts->thread_slots; i++)
		free(ts->threads[i]);
	for (i = 0; i < ts->ncpus; i++)
		free(ts->cpus[i]);
	free(ts->threads);
	free(ts->cpus);
	free(ts->cpu_by_id);
}
