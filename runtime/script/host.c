/*
 * host.c - libmarktap-script.so: probe script handlers inside the traced
 * process.
 *
 * libmarktap loads this plugin when marktap runs a script here (script.c)
 * and gives it the session connection.  The plugin loads the translated
 * chunk into a Lua state (libmtlua), arms the markers the script binds and
 * runs their handlers at each hit, one at a time per process (a mutex), so
 * globals keep stap's semantics.  Handler output and error lines go back to
 * marktap as frames on the session connection ('O', 'R'), which marktap
 * writes out itself: a traced process never holds a descriptor of
 * marktap's (its terminal, its -o file), which a process of another user
 * could keep, read from and write to long after.  Where the process's own
 * stdout (stderr) is the very file marktap writes to -- a command of
 * "marktap -c" that inherited it -- marktap says so ("write out own") and
 * the handlers write to the process's own descriptor, in order with what
 * the program writes there itself.  Globals travel as
 * deltas (mt_lua_sync_*) when marktap pulls them, and once more when the
 * process exits or the session ends.  Frames: runtime/proto/mt_wire.h.
 *
 * A hit on a marker from a signal handler that interrupted a handler of the
 * same thread is skipped and counted (stap's MAXSKIPPED), never deadlocks.
 *
 * Native handlers: a handler that only adds to long globals comes with a
 * plan (translator/native.c); its hits add into a table of the thread,
 * without the lock or Lua, and the tables are folded into the Lua globals
 * before each delta (runtime/lua/API.md, "Native handlers").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dlfcn.h>
#include <lua.h>
#include <lauxlib.h>
#include "mt_event.h"
#include "mt_lib.h"
#include "mt_lua.h"
#include "mt_wire.h"
#include "sdt.h"
#include "ufunc.h"
#include "usym.h"

#define EXPORT __attribute__((visibility("default")))

struct binding {
	int handler;            /* id in the Lua state */
	int any_object;         /* process.mark(): any object of the process */
	dev_t dev;
	ino_t ino;
	char *marker;
	char *handler_name;     /* "probe_N" until the chunk is loaded */
	char *plan;             /* native plan, or NULL */
	char *provider;         /* an SDT probe's (sdt.c); NULL: libmarktap's */
};

/* ---- native plans ------------------------------------------------------ */

#define NAT_KEYS 4              /* translator/native.c, NATIVE_KEYS */
enum { SRC_CONST, SRC_ARG, SRC_NEG_ARG, SRC_TID, SRC_PID, SRC_CPU, SRC_STR, SRC_EXEC };

struct nat_src {
	int kind;
	unsigned arg;           /* field index */
	int64_t c;
};

#define NAT_GUARDS 8

struct nat_guard {
	struct nat_src l, r;
	char cmp;               /* = ! < > [ ]: == != < > <= >= */
};

struct nat_op {
	unsigned gi, nk, ng;
	unsigned strmask;       /* keys that are strings (bit i: key i) */
	int stat;               /* <<<: the value goes to statistics */
	struct nat_guard guard[NAT_GUARDS];   /* all must hold */
	struct nat_src val, key[NAT_KEYS];
};

struct nat_plan {
	unsigned nops;
	struct nat_op op[];
};

/* What a marker runs: rt->script points here. */
struct attached {
	struct mt_marker *marker;
	struct attached *next;
	int name_ref, format_ref;   /* Lua strings, made at the first hit */
	int n, nnative;
	int sdt;                    /* an SDT probe's site (sdt.c) */
	unsigned gen;               /* the session's (h.gen) */
	struct nat_plan **native;   /* per handler: its plan, or NULL (Lua) */
	int handlers[];
};

static struct {
	const struct mt_script_ops *ops;
	int lock;                      /* one handler at a time (hlock) */
	pthread_mutex_t send_lock;     /* frames from several threads */
	struct mt_lua *mt;
	int fd;
	int own_out, own_err;          /* write to our own fd 1, fd 2 */
	int active;                    /* handlers run */
	int stop_sent;
	pthread_mutex_t finish_lock;   /* one finish(); a second caller waits */
	int finished;                  /* finish() ran: bye sent (finish_lock) */
	int ended;                     /* the session is over: a next one may start */
	unsigned gen;                  /* sessions run so far (retire(); hlock) */
	int traps_used;                /* sdt_start() ran: SDT or function probes */
	struct attached *retired;      /* of ended sessions (never freed: retire()) */
	struct binding *binds;
	unsigned nbinds, nsdt;
	struct attached *attached;
	long skipped_pending;
	int native_off;                /* MARKTAP_NATIVE=0 */
	struct nat_tab *tabs;          /* every thread's table (hlock) */
	pthread_key_t tab_key;
	int64_t *fold;                 /* records being folded (hlock) */
	size_t fold_cap;
	const char **fold_strs;        /* their string keys */
	size_t fold_nstrs, fold_strs_cap;
	size_t maxstr;                 /* MAXSTRINGLEN - 1: string keys are cut there */
	uint64_t native_hits;          /* of threads gone (hlock) */
	uint64_t lua_hits;             /* (hlock) */
} h = {
	.send_lock = PTHREAD_MUTEX_INITIALIZER,
	.finish_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
};

/*
 * The handler lock: handlers are short (MAXACTION bounds them), so a
 * waiter spins, then yields; a futex mutex cost twice as much per hit,
 * and much more when two threads hit at once.
 */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

/* Take the word w (0 free) as `me`: spin while it is held, then yield. */
static void spin_take(int *w, int me)
{
	unsigned spins = 0;
	int free_word = 0;

	while (!__atomic_compare_exchange_n(w, &free_word, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		free_word = 0;
		while (__atomic_load_n(w, __ATOMIC_RELAXED)) {
			if (++spins > 2000) {
				sched_yield();
				spins = 0;
			}
			cpu_relax();
		}
	}
}

static void spin_drop(int *w)
{
	__atomic_store_n(w, 0, __ATOMIC_RELEASE);
}

/*
 * in_handler: this thread holds, or is about to take, the handler lock.
 * It is raised BEFORE the lock is taken and lowered after it is dropped:
 * a signal handler that hits a marker in between sees it and skips the
 * hit (reentered()), where it would otherwise spin forever on a lock its
 * own thread holds.  The compiler barriers keep the stores in that order
 * (a signal runs on this thread: no CPU fence is needed).
 */
static __thread int in_handler __attribute__((tls_model("initial-exec")));

static void hlock(void)
{
	in_handler++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	spin_take(&h.lock, 1);
}

static void hunlock(void)
{
	spin_drop(&h.lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_handler--;
}

/* ---- native handlers: per-thread tables ----------------------------------
 *
 * Each thread adds into its own open-addressing table: entries keyed by
 * (global, keys), with the running sum (written by the thread only) and the
 * part already folded (written by the folder only, under hlock).  New
 * entries are listed in insertion order; the count is published with a
 * release store after the entry is whole, so the folder, which holds hlock,
 * reads the entries without stopping the writers.  Growth and clearing,
 * which move entries, take hlock.
 *
 * A string key (a marker's %s argument) is kept as a copy owned by the
 * table, cut at MAXSTRINGLEN - 1 bytes as Lua cuts it; key[i] points to it.
 *
 * Statistics (<<<) are gathered per period instead: count, sum, min, max,
 * sum of squares since the last fold.  The thread updates them, and the
 * folder reads and empties them, each holding the table's `own` word (a
 * spin lock between the two only: the thread holds it for a few stores).
 */
struct nat_ent {
	int64_t key[NAT_KEYS];
	int64_t value, folded;  /* counters; statistics: value is the count */
	int64_t sum, min, max, q;
	double sq;              /* the sum of squares, when q overflowed */
	uint32_t gk;            /* global << 8 | string keys << 4 | statistics << 3 | keys */
	uint32_t used;
	uint32_t qok;
};

struct nat_tab {
	struct nat_tab *next;
	unsigned gen;           /* the session it counts for (h.gen) */
	uint64_t hits;          /* hits of native handlers (relaxed) */
	int own;                /* statistics: 0 free, 1 the thread, 2 the folder */
	unsigned cap, n;        /* n: entries in order[] (release/acquire) */
	struct nat_ent *ent;
	unsigned *order;        /* cap / 2 slots */
};

#define NAT_CAP0 64
#define NAT_CAPMAX (1u << 14)   /* then the thread folds its table and clears it */

static __thread struct nat_tab *my_tab __attribute__((tls_model("initial-exec")));
static __thread int in_native __attribute__((tls_model("initial-exec")));
static __thread char comm[17] __attribute__((tls_model("initial-exec")));   /* SRC_EXEC */

static void fold_all(void);
static void fold_tab(struct nat_tab *t);
static void fold_flush(void);
static void free_keys(struct nat_tab *t);

static int nat_src_parse(const char *t, struct nat_src *s, int value, const struct mt_format *f)
{
	char *end;

	memset(s, 0, sizeof(*s));
	if (t[0] == '#') {
		s->kind = SRC_CONST;
		s->c = strtoll(t + 1, &end, 10);
		return *end ? -1 : 0;
	}
	if (!strcmp(t, "tid") || !strcmp(t, "pid") || !strcmp(t, "cpu")) {
		s->kind = t[0] == 't' ? SRC_TID : t[0] == 'p' ? SRC_PID : SRC_CPU;
		return 0;
	}
	if (!value && !strcmp(t, "sx")) {   /* execname(), as a key */
		s->kind = SRC_EXEC;
		return 0;
	}
	if (!value && t[0] == 's') {   /* a string argument, as a key */
		unsigned long n = strtoul(t + 1, &end, 10);
		if (*end || n < 1 || n > f->nfields || f->fields[n - 1].store != MT_ST_STRING)
			return -1;
		s->kind = SRC_STR;
		s->arg = (unsigned)(n - 1);
		return 0;
	}
	s->kind = SRC_ARG;
	if (value && t[0] == '-') {
		s->kind = SRC_NEG_ARG;
		t++;
	}
	if (t[0] != 'a')
		return -1;
	unsigned long n = strtoul(t + 1, &end, 10);
	if (*end || n < 1 || n > f->nfields || f->fields[n - 1].store == MT_ST_STRING)
		return -1;   /* not this marker's: the Lua handler runs */
	s->arg = (unsigned)(n - 1);
	return 0;
}

/* The plan for a marker of format f; NULL if it does not fit it. */
static struct nat_plan *nat_plan_parse(const char *text, const struct mt_format *f)
{
	unsigned nops = 1;
	struct nat_plan *p;
	char *copy, *save = NULL, *op;

	for (const char *c = text; *c; c++)
		nops += *c == ';';
	p = calloc(1, sizeof(*p) + nops * sizeof(struct nat_op));
	copy = strdup(text);
	if (!p || !copy)
		goto bad;
	for (op = strtok_r(copy, ";", &save); op; op = strtok_r(NULL, ";", &save)) {
		struct nat_op *o = &p->op[p->nops];
		char *s2 = NULL, *tok;
		int i = 0;
		if (p->nops == nops)
			goto bad;
		for (tok = strtok_r(op, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2), i++) {
			if (i == 0 && *tok == '?') {   /* a guard: ?L<R */
				struct nat_guard *g = &o->guard[o->ng];
				size_t at = strcspn(tok + 1, "=!<>[]") + 1;
				if (o->ng == NAT_GUARDS || !tok[at] || at == 1 || !tok[at + 1])
					goto bad;
				g->cmp = tok[at];
				tok[at] = '\0';
				if (nat_src_parse(tok + 1, &g->l, 1, f) < 0 || nat_src_parse(tok + at + 1, &g->r, 1, f) < 0)
					goto bad;
				o->ng++;
				i--;
				continue;
			}
			if (i == 0) {
				char *end;
				unsigned long gi;
				o->stat = *tok == '<';
				gi = strtoul(tok + o->stat, &end, 10);
				if (*end || gi < 1 || gi > (UINT32_MAX >> 8))
					goto bad;
				o->gi = (unsigned)gi;
			} else if (i == 1) {
				if (nat_src_parse(tok, &o->val, 1, f) < 0)
					goto bad;
			} else {
				if (i - 2 >= NAT_KEYS || nat_src_parse(tok, &o->key[i - 2], 0, f) < 0)
					goto bad;
				if (o->key[i - 2].kind == SRC_STR || o->key[i - 2].kind == SRC_EXEC)
					o->strmask |= 1u << (i - 2);
				o->nk++;
			}
		}
		if (i < 2)
			goto bad;
		p->nops++;
	}
	free(copy);
	if (!p->nops) {
		free(p);
		return NULL;
	}
	return p;
bad:
	free(copy);
	free(p);
	return NULL;
}

static int64_t nat_value(const struct nat_src *s, const struct mt_format *f, const struct mt_args *a)
{
	int64_t v;

	switch (s->kind) {
	case SRC_CONST:
		return s->c;
	case SRC_TID:
		return mt_lua_self_tid();
	case SRC_PID:
		return mt_lua_self_pid();
	case SRC_CPU:
		return mt_lua_self_cpu();
	case SRC_STR:
		return (int64_t)(intptr_t)a->v[s->arg].str;
	case SRC_EXEC:
		/* the thread's name now (it can change): as execname() reads it */
		mt_lua_self_execname(comm, sizeof(comm));
		return (int64_t)(intptr_t)comm;
	default:
		/* as push_args converts them for the Lua handler */
		if (f->fields[s->arg].store == MT_ST_DOUBLE)
			v = (int64_t)a->v[s->arg].d;
		else
			v = (int64_t)a->v[s->arg].u;
		return s->kind == SRC_NEG_ARG ? (int64_t)(0 - (uint64_t)v) : v;
	}
}

static void nat_thread_exit(void *arg)
{
	struct nat_tab *t = arg, **pt;

	my_tab = NULL;
	hlock();
	if (t->gen == h.gen) {   /* else an ended session's, unlinked by retire() */
		fold_tab(t);
		fold_flush();
		h.native_hits += t->hits;
	}
	for (pt = &h.tabs; *pt; pt = &(*pt)->next) {
		if (*pt == t) {
			*pt = t->next;
			break;
		}
	}
	hunlock();
	free_keys(t);
	free(t->ent);
	free(t->order);
	free(t);
}

static struct nat_tab *nat_new_tab(void)
{
	struct nat_tab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = NAT_CAP0;
	t->ent = calloc(t->cap, sizeof(*t->ent));
	t->order = calloc(t->cap / 2, sizeof(*t->order));
	if (!t->ent || !t->order) {
		free(t->ent);
		free(t->order);
		free(t);
		return NULL;
	}
	hlock();
	t->gen = h.gen;
	t->next = h.tabs;
	h.tabs = t;
	hunlock();
	pthread_setspecific(h.tab_key, t);
	my_tab = t;
	return t;
}

static size_t key_len(int64_t k)
{
	return strnlen((const char *)(intptr_t)k, h.maxstr);
}

static uint64_t nat_hash(uint32_t gk, const int64_t *k, unsigned nk)
{
	uint64_t x = gk * 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < nk; i++) {
		if (gk >> 4 & 1u << i) {   /* FNV-1a of the string */
			const unsigned char *c = (const unsigned char *)(intptr_t)k[i];
			size_t n = key_len(k[i]);
			uint64_t f = 0xcbf29ce484222325ull;
			for (size_t j = 0; j < n; j++)
				f = (f ^ c[j]) * 0x100000001b3ull;
			x ^= f;
		} else {
			x ^= (uint64_t)k[i];
		}
		x *= 0xff51afd7ed558ccdull;
		x ^= x >> 32;
	}
	return x ^ (x >> 29);
}

static int key_eq(uint32_t gk, unsigned i, int64_t a, int64_t b)
{
	size_t n;

	if (!(gk >> 4 & 1u << i))
		return a == b;
	n = key_len(a);
	return n == key_len(b) && !memcmp((const void *)(intptr_t)a, (const void *)(intptr_t)b, n);
}

/* The table's copies of an entry's string keys; -1 when out of memory. */
static int own_keys(struct nat_ent *e, unsigned nk)
{
	for (unsigned i = 0; i < nk; i++) {
		if (!(e->gk >> 4 & 1u << i))
			continue;
		size_t n = key_len(e->key[i]);
		char *c = malloc(n + 1);
		if (!c) {
			while (i-- > 0)
				if (e->gk >> 4 & 1u << i)
					free((void *)(intptr_t)e->key[i]);
			return -1;
		}
		memcpy(c, (const void *)(intptr_t)e->key[i], n);
		c[n] = '\0';
		e->key[i] = (int64_t)(intptr_t)c;
	}
	return 0;
}

static void free_keys(struct nat_tab *t)
{
	for (unsigned j = 0; j < t->n; j++) {
		struct nat_ent *e = &t->ent[t->order[j]];
		for (unsigned i = 0; i < (e->gk & 7u); i++)
			if (e->gk >> 4 & 1u << i)
				free((void *)(intptr_t)e->key[i]);
	}
}

static struct nat_ent *nat_find(struct nat_ent *ent, unsigned cap, uint32_t gk, const int64_t *k,
				unsigned nk, int *found)
{
	unsigned mask = cap - 1, i = (unsigned)nat_hash(gk, k, nk) & mask;

	for (;; i = (i + 1) & mask) {
		struct nat_ent *e = &ent[i];
		if (!e->used) {
			*found = 0;
			return e;
		}
		if (e->gk == gk) {
			unsigned j = 0;
			while (j < nk && key_eq(gk, j, e->key[j], k[j]))
				j++;
			if (j == nk) {
				*found = 1;
				return e;
			}
		}
	}
}

/* Room for one more entry (hlock held): a table twice the size, or at the
 * largest size the table folded and emptied. */
static int nat_make_room(struct nat_tab *t)
{
	unsigned cap = t->cap * 2;
	struct nat_ent *ent;
	unsigned *order;

	if (cap > NAT_CAPMAX) {
		fold_tab(t);
		fold_flush();
		free_keys(t);
		memset(t->ent, 0, t->cap * sizeof(*t->ent));
		__atomic_store_n(&t->n, 0, __ATOMIC_RELEASE);
		return 0;
	}
	ent = calloc(cap, sizeof(*ent));
	order = calloc(cap / 2, sizeof(*order));
	if (!ent || !order) {
		free(ent);
		free(order);
		return -1;
	}
	for (unsigned j = 0; j < t->n; j++) {
		struct nat_ent *o = &t->ent[t->order[j]], *e;
		int found;
		e = nat_find(ent, cap, o->gk, o->key, o->gk & 7, &found);
		*e = *o;
		order[j] = (unsigned)(e - ent);
	}
	free(t->ent);
	free(t->order);
	t->ent = ent;
	t->order = order;
	t->cap = cap;
	return 0;
}

static void stat_push(struct nat_tab *t, struct nat_ent *e, int64_t v)
{
	int64_t sq, q;

	spin_take(&t->own, 1);
	if (e->value == 0) {
		e->min = e->max = v;
		e->sum = e->q = 0;
		e->sq = 0.0;
		e->qok = 1;
	} else {
		if (v < e->min)
			e->min = v;
		if (v > e->max)
			e->max = v;
	}
	e->value++;
	e->sum = (int64_t)((uint64_t)e->sum + (uint64_t)v);
	if (e->qok && (__builtin_mul_overflow(v, v, &sq) || __builtin_add_overflow(e->q, sq, &q)))
		e->qok = 0;
	else if (e->qok)
		e->q = q;
	e->sq += (double)v * (double)v;
	spin_drop(&t->own);
}

static void nat_add(struct nat_tab *t, unsigned gi, unsigned strmask, int stat, const int64_t *k,
		    unsigned nk, int64_t d)
{
	uint32_t gk = (uint32_t)(gi << 8 | strmask << 4 | (stat ? 8u : 0u) | nk);
	struct nat_ent *e;
	int found;

	e = nat_find(t->ent, t->cap, gk, k, nk, &found);
	if (found) {
		if (stat)
			stat_push(t, e, d);
		else
			__atomic_store_n(&e->value, (int64_t)((uint64_t)e->value + (uint64_t)d), __ATOMIC_RELAXED);
		return;
	}
	if (2 * (t->n + 1) > t->cap) {
		int rc;
		hlock();
		rc = nat_make_room(t);
		hunlock();
		if (rc < 0) {   /* out of memory: counted as a skipped hit */
			__atomic_add_fetch(&h.skipped_pending, 1, __ATOMIC_RELAXED);
			return;
		}
		e = nat_find(t->ent, t->cap, gk, k, nk, &found);
	}
	memcpy(e->key, k, nk * sizeof(int64_t));
	e->gk = gk;
	if (strmask && own_keys(e, nk) < 0) {
		memset(e, 0, sizeof(*e));
		__atomic_add_fetch(&h.skipped_pending, 1, __ATOMIC_RELAXED);
		return;
	}
	e->value = stat ? 0 : d;   /* statistics: pushed once published */
	e->folded = 0;
	e->used = 1;
	t->order[t->n] = (unsigned)(e - t->ent);
	__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELEASE);
	if (stat)
		stat_push(t, e, d);
}

/*
 * This thread's table for a plan of session gen.  A table of an earlier
 * session was unlinked by retire() before session gen began: no folder
 * reads it any more, the thread frees it.  A plan of an earlier session
 * (a hit that read rt->script before that session ended) adds nothing:
 * the plan and the table it would count into must be of one session, or
 * a count would land in the next script's globals.
 */
static struct nat_tab *nat_tab_for(unsigned gen)
{
	struct nat_tab *t = my_tab;

	if (t && t->gen != gen) {
		if ((int)(t->gen - gen) > 0)
			return NULL;
		pthread_setspecific(h.tab_key, NULL);
		my_tab = NULL;
		free_keys(t);
		free(t->ent);
		free(t->order);
		free(t);
		t = NULL;
	}
	if (!t && !(t = nat_new_tab()))
		__atomic_add_fetch(&h.skipped_pending, 1, __ATOMIC_RELAXED);
	return t && t->gen == gen ? t : NULL;
}

static void nat_run(const struct nat_plan *p, unsigned gen, const struct mt_format *f,
		    const struct mt_args *a)
{
	struct nat_tab *t = nat_tab_for(gen);

	if (!t)
		return;
	__atomic_store_n(&t->hits, t->hits + 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < p->nops; i++) {
		const struct nat_op *o = &p->op[i];
		int64_t k[NAT_KEYS];
		unsigned g;
		for (g = 0; g < o->ng; g++) {
			int64_t l = nat_value(&o->guard[g].l, f, a), r = nat_value(&o->guard[g].r, f, a);
			int holds;
			switch (o->guard[g].cmp) {
			case '=': holds = l == r; break;
			case '!': holds = l != r; break;
			case '<': holds = l < r; break;
			case '>': holds = l > r; break;
			case '[': holds = l <= r; break;
			default: holds = l >= r; break;
			}
			if (!holds)
				break;
		}
		if (g < o->ng)
			continue;
		for (unsigned j = 0; j < o->nk; j++)
			k[j] = nat_value(&o->key[j], f, a);
		nat_add(t, o->gi, o->strmask, o->stat, k, o->nk, nat_value(&o->val, f, a));
	}
}

/* ---- folding (hlock held) ---- */

static size_t fold_len;

/* A string key into the record: its index among the fold's strings. */
static int64_t fold_str(int64_t k)
{
	if (h.fold_nstrs == h.fold_strs_cap) {
		size_t cap = h.fold_strs_cap ? 2 * h.fold_strs_cap : 256;
		const char **ns = realloc(h.fold_strs, cap * sizeof(*ns));
		if (!ns)
			return -1;
		h.fold_strs = ns;
		h.fold_strs_cap = cap;
	}
	h.fold_strs[h.fold_nstrs] = (const char *)(intptr_t)k;
	return (int64_t)h.fold_nstrs++;
}

static int fold_key(struct nat_ent *e, unsigned i)
{
	int64_t v = e->key[i];

	if (e->gk >> 4 & 1u << i && (v = fold_str(v)) < 0)
		return -1;
	h.fold[fold_len++] = v;
	return 0;
}

static int fold_room(size_t more)
{
	if (fold_len + more > h.fold_cap) {
		size_t cap = h.fold_cap ? 2 * h.fold_cap : 1024;
		int64_t *nf;
		while (cap < fold_len + more)
			cap *= 2;
		nf = realloc(h.fold, cap * sizeof(*nf));
		if (!nf)
			return -1;
		h.fold = nf;
		h.fold_cap = cap;
	}
	return 0;
}

/* Records for mt_lua_native_fold: counters (global, keys, amount, key...),
 * statistics (-global, keys, count, sum, min, max, q, q exact, sq's bits,
 * key...). */
static void fold_tab(struct nat_tab *t)
{
	unsigned n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
	int owned = 0;

	for (unsigned j = 0; j < n; j++) {
		struct nat_ent *e = &t->ent[t->order[j]];
		unsigned nk = e->gk & 7;
		if (e->gk & 8) {
			int64_t bits;
			if (!owned) {
				spin_take(&t->own, 2);
				owned = 1;
			}
			if (!e->value || fold_room(9 + nk) < 0)
				continue;
			memcpy(&bits, &e->sq, sizeof(bits));
			h.fold[fold_len++] = -(int64_t)(e->gk >> 8);
			h.fold[fold_len++] = nk;
			h.fold[fold_len++] = e->value;
			h.fold[fold_len++] = e->sum;
			h.fold[fold_len++] = e->min;
			h.fold[fold_len++] = e->max;
			h.fold[fold_len++] = e->q;
			h.fold[fold_len++] = e->qok;
			h.fold[fold_len++] = bits;
			for (unsigned i = 0; i < nk; i++)
				if (fold_key(e, i) < 0)
					h.fold[fold_len++] = -1;
			e->value = 0;   /* the next period starts empty */
			continue;
		}
		int64_t v = __atomic_load_n(&e->value, __ATOMIC_RELAXED);
		if (v == e->folded)
			continue;
		if (fold_room(3 + nk) < 0)
			break;   /* folded at the next exchange */
		size_t mark = fold_len;
		h.fold[fold_len++] = e->gk >> 8;
		h.fold[fold_len++] = nk;
		h.fold[fold_len++] = (int64_t)((uint64_t)v - (uint64_t)e->folded);
		for (unsigned i = 0; i < nk; i++) {
			if (fold_key(e, i) < 0) {
				fold_len = mark;   /* folded at the next exchange */
				break;
			}
		}
		if (fold_len == mark)
			break;
		e->folded = v;
	}
	if (owned)
		spin_drop(&t->own);
}

static void fold_flush(void)
{
	if (fold_len && h.mt)
		mt_lua_native_fold(h.mt, h.fold, fold_len, h.fold_strs, h.fold_nstrs);
	fold_len = 0;
	h.fold_nstrs = 0;
}

static void fold_all(void)
{
	for (struct nat_tab *t = h.tabs; t; t = t->next)
		fold_tab(t);
	fold_flush();
}

/*
 * in_send: this thread is inside send_frame().  A trap path (a function
 * probe's report, run from SIGTRAP or a stub on whatever thread hit it)
 * may interrupt a thread holding send_lock: its line is dropped rather
 * than waiting for a lock its own thread holds.
 */
static __thread int in_send __attribute__((tls_model("initial-exec")));

static int send_frame(int type, const void *data, size_t len)
{
	int rc;

	if (in_send)
		return -1;
	in_send = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&h.send_lock);
	rc = h.fd >= 0 ? mt_wire_send(h.fd, type, data, len, NULL, 0) : -1;
	pthread_mutex_unlock(&h.send_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_send = 0;
	return rc;
}

/* Write to our own stdout or stderr; a closed pipe must not kill the
 * traced program with SIGPIPE: the signal is blocked for the write and a
 * pending one taken. */
static void write_fd(int fd, const char *buf, size_t n)
{
	sigset_t pipe_set, old;
	int broken = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			broken = errno == EPIPE;
			break;   /* the output is gone: nothing to do */
		}
		buf += w;
		n -= (size_t)w;
	}
	if (broken && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Handler output, to marktap, which writes it to its output: in frames
 * of at most 64 KiB (marktap buffers a frame whole before it writes it). */
static void out_write(void *ctx, const char *buf, size_t n)
{
	(void)ctx;
	if (h.own_out) {
		write_fd(1, buf, n);
		return;
	}
	while (n) {
		size_t k = n < 65536 ? n : 65536;
		if (send_frame('O', buf, k) < 0)
			return;   /* marktap is gone: nothing to do */
		buf += k;
		n -= k;
	}
}

/* An error or warning line, to marktap's stderr. */
static void err_line(void *ctx, const char *line)
{
	size_t n = strlen(line);

	(void)ctx;
	if (n > 1023)
		n = 1023;   /* as long as lines were */
	if (h.own_err) {
		char buf[1024];
		memcpy(buf, line, n);
		buf[n] = '\n';
		write_fd(2, buf, n + 1);
		return;
	}
	send_frame('R', line, n);
}

/* ---- which markers the script wants ---------------------------------- */

static int object_of(struct mt_marker *m, struct stat *st)
{
	Dl_info info;

	if (dladdr(m, &info) && info.dli_fname && strchr(info.dli_fname, '/') &&
	    stat(info.dli_fname, st) == 0)
		return 0;
	return stat("/proc/self/exe", st);   /* the main program */
}

/* The handlers of the bindings of marker m (provider NULL: libmarktap's
 * markers; else an SDT probe of that provider, in object dev/ino): rt->script
 * set, 1; or 0 when no binding wants it. */
static int attach_handlers(struct mt_marker *m, struct mt_marker_rt *rt, const char *provider,
			   int have_st, dev_t dev, ino_t ino)
{
	struct attached *a;
	struct stat st;
	int n = 0;

	a = malloc(sizeof(*a) + sizeof(int) * (h.nbinds ? h.nbinds : 1));
	if (!a)
		return 0;
	a->native = NULL;
	a->nnative = 0;
	for (unsigned i = 0; i < h.nbinds; i++) {
		struct binding *b = &h.binds[i];
		if (b->handler < 0 || strcmp(b->marker, m->name))
			continue;
		if (!b->provider != !provider || (provider && strcmp(b->provider, provider)))
			continue;
		if (!b->any_object) {
			if (!have_st) {
				have_st = object_of(m, &st) == 0 ? 1 : -1;
				dev = st.st_dev;
				ino = st.st_ino;
			}
			if (have_st < 0 || dev != b->dev || ino != b->ino)
				continue;
		}
		if (b->plan && !h.native_off) {
			if (!a->native)
				a->native = calloc(h.nbinds, sizeof(*a->native));
			if (a->native && (a->native[n] = nat_plan_parse(b->plan, &rt->format)))
				a->nnative++;
		}
		a->handlers[n++] = b->handler;
	}
	if (!n) {
		free(a->native);
		free(a);
		return 0;
	}
	a->n = n;
	a->marker = m;
	a->name_ref = a->format_ref = LUA_NOREF;
	a->sdt = provider != NULL;
	a->gen = h.gen;
	hlock();   /* SDT sites attach outside the registry lock */
	a->next = h.attached;
	h.attached = a;
	hunlock();
	rt->script = a;
	return 1;
}

static void attach_marker(struct mt_marker *m)
{
	struct mt_marker_rt *rt = m->rt;

	if (!rt || !rt->format_ok || rt->script || !m->name)
		return;
	if (attach_handlers(m, rt, NULL, 0, 0, 0))
		h.ops->arm(m, MT_ARMED_SCRIPT);
}

static int attach_sdt(struct mt_marker *m, struct mt_marker_rt *rt, const char *provider,
		      dev_t dev, ino_t ino)
{
	return attach_handlers(m, rt, provider, 1, dev, ino);
}

static void on_added(struct mt_marker *m)
{
	if (h.active)
		attach_marker(m);
}

static void detach_marker(struct mt_marker *m)
{
	struct mt_marker_rt *rt = m->rt;

	h.ops->disarm(m, MT_ARMED_SCRIPT);
	if (rt)
		rt->script = NULL;
}

/* dlclose: the descriptor goes away; forget it (registry lock held). */
static void on_removed(struct mt_marker *m)
{
	struct attached **pa, *a;

	detach_marker(m);
	hlock();   /* no handler of it still runs */
	for (pa = &h.attached; (a = *pa); pa = &a->next) {
		if (a->marker == m) {
			*pa = a->next;
			luaL_unref(mt_lua_state(h.mt), LUA_REGISTRYINDEX, a->name_ref);
			luaL_unref(mt_lua_state(h.mt), LUA_REGISTRYINDEX, a->format_ref);
			for (int i = 0; a->native && i < a->n; i++)
				free(a->native[i]);
			free(a->native);
			free(a);
			break;
		}
	}
	hunlock();
}

static void arm_one(struct mt_marker *m, void *arg)
{
	(void)arg;
	attach_marker(m);
}

static void disarm_all(void)
{
	struct attached *a;

	h.ops->lock();
	h.active = 0;
	if (h.traps_used)
		sdt_stop();
	for (a = h.attached; a; a = a->next)
		if (!a->sdt)
			detach_marker(a->marker);
	h.ops->unlock();
}

/* ---- a hit -------------------------------------------------------------- */

static void push_args(lua_State *L, struct attached *at, const struct mt_format *f,
		      const struct mt_args *a)
{
	if (at->name_ref == LUA_NOREF) {
		lua_pushstring(L, at->marker->name);
		at->name_ref = luaL_ref(L, LUA_REGISTRYINDEX);
		lua_pushstring(L, at->marker->format ? at->marker->format : "");
		at->format_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, at->name_ref);
	lua_rawgeti(L, LUA_REGISTRYINDEX, at->format_ref);
	mt_lua_push_args(L, f, a);
}

static void report_stop(void)
{
	static const char *const why[] = { "", "exit", "errors", "skipped" };
	int reason = mt_lua_stopping(h.mt);

	if (!reason || h.stop_sent || reason > 3)
		return;
	h.stop_sent = 1;
	send_frame('X', why[reason], strlen(why[reason]));
}

/* The handlers of a hit whose arguments are fetched. */
static void run_hit(struct attached *a, struct mt_marker_rt *rt, const struct mt_args *args)
{
	lua_State *L;

	if (a->nnative) {
		/* mt->stop is only ever set once; a stale read runs one more hit */
		if (!mt_lua_stopping(h.mt)) {
			in_native = 1;
			for (int i = 0; i < a->n; i++)
				if (a->native[i])
					nat_run(a->native[i], a->gen, &rt->format, args);
			in_native = 0;
		}
		if (a->nnative == a->n)
			return;
	}
	hlock();
	if (h.active && rt->script == a) {
		if (__atomic_load_n(&h.skipped_pending, __ATOMIC_RELAXED)) {
			long skipped = __atomic_exchange_n(&h.skipped_pending, 0, __ATOMIC_RELAXED);
			while (skipped-- > 0)
				mt_lua_skipped(h.mt);
		}
		L = mt_lua_state(h.mt);
		for (int i = 0; i < a->n; i++) {
			if (a->native && a->native[i])
				continue;
			if (!lua_checkstack(L, (int)rt->format.nfields + 4))
				break;
			push_args(L, a, &rt->format, args);
			mt_lua_run(h.mt, a->handlers[i], (int)rt->format.nfields + 2);
			h.lua_hits++;
		}
		report_stop();
	}
	hunlock();
}

/* Hits inside one of our handlers (a signal handler that interrupted it,
 * an SDT probe its code ran into) are skipped and counted. */
static int reentered(void)
{
	if (!in_handler && !in_native)
		return 0;
	__atomic_add_fetch(&h.skipped_pending, 1, __ATOMIC_RELAXED);
	return 1;
}

static void on_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap)
{
	struct attached *a = rt->script;
	struct mt_args args;

	(void)m;
	if (!a || !h.active || reentered())
		return;
	h.ops->fetch(&rt->format, ap, &args);
	run_hit(a, rt, &args);
}

/* An SDT or function probe's trap (sdt.c, ufunc.c): the arguments are
 * longs already.  A trap while this thread runs the host's own code (Lua,
 * native handlers: a probe on libc functions they call) is not a call of
 * the program's: ignored, not counted as skipped (function("*") on libc
 * would otherwise pass MAXSKIPPED at the first delta). */
static void on_sdt_hit(struct mt_marker *m, struct mt_marker_rt *rt, const struct mt_args *args)
{
	struct attached *a = rt->script;

	(void)m;
	if (!a || !h.active || in_handler || in_native)
		return;
	run_hit(a, rt, args);
}

static void sdt_error(const char *msg)
{
	char line[600];

	snprintf(line, sizeof(line), "WARNING: process %d: %s", (int)getpid(), msg);
	err_line(NULL, line);
}

/* ---- globals ------------------------------------------------------------ */

static void send_delta(void)
{
	char *buf = NULL;
	size_t len = 0;

	if (h.nsdt && h.active)   /* libraries dlopen'ed since the last pull */
		sdt_start(attach_sdt, on_sdt_hit, sdt_error);   /* traps_used already */
	hlock();
	if (__atomic_load_n(&h.skipped_pending, __ATOMIC_RELAXED)) {
		long skipped = __atomic_exchange_n(&h.skipped_pending, 0, __ATOMIC_RELAXED);
		while (skipped-- > 0)
			mt_lua_skipped(h.mt);
	}
	fold_all();
	report_stop();
	if (mt_lua_sync_take(h.mt, MT_LUA_SYNC_DELTA | MT_LUA_SYNC_RESET_STATS, &buf, &len) < 0)
		len = 0;
	hunlock();
	send_frame('D', buf, len);
	free(buf);
}

static void apply(const struct mt_frame *f)
{
	hlock();
	mt_lua_sync_apply(h.mt, f->data, f->len);
	hunlock();
}

static void finish_once(void);

/* The session ends for this process: last delta, bye.  Once: the serve
 * thread (Q), atexit and _exit/abort (on_final) may all get here, and a
 * second caller waits until the first is done: a main thread that exits
 * while the serve thread says bye must not end the process mid-frame. */
static void finish(void)
{
	pthread_mutex_lock(&h.finish_lock);
	if (!h.finished && h.fd >= 0) {
		h.finished = 1;
		finish_once();
	}
	pthread_mutex_unlock(&h.finish_lock);
}

static void finish_once(void)
{
	char bye[64];
	int fd;

	disarm_all();
	send_delta();
	hlock();
	mt_lua_flush(h.mt);
	{
		uint64_t nat = h.native_hits;
		for (struct nat_tab *t = h.tabs; t; t = t->next)
			nat += __atomic_load_n(&t->hits, __ATOMIC_RELAXED);
		snprintf(bye, sizeof(bye), "%lld %lld %llu %llu", (long long)mt_lua_errors(h.mt),
			 (long long)mt_lua_skips(h.mt), (unsigned long long)nat,
			 (unsigned long long)h.lua_hits);
	}
	hunlock();
	send_frame('B', bye, strlen(bye));
	pthread_mutex_lock(&h.send_lock);
	fd = h.fd;
	h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	shutdown(fd, SHUT_WR);
	__atomic_store_n(&h.ended, 1, __ATOMIC_RELEASE);
}

static void *serve(void *arg)
{
	struct mt_frame f;
	int fd = (int)(long)arg;

	while (mt_wire_recv(fd, &f) == 0) {
		switch (f.type) {
		case 'P':
			send_delta();
			break;
		case 'A':
			apply(&f);
			break;
		case 'Q':
			mt_wire_free(&f);
			finish();
			close(fd);
			return NULL;
		default:
			break;
		}
		mt_wire_free(&f);
	}
	/* marktap went away without "quit": stop running handlers */
	disarm_all();
	pthread_mutex_lock(&h.send_lock);
	if (h.fd == fd)
		h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	__atomic_store_n(&h.ended, 1, __ATOMIC_RELEASE);
	close(fd);
	return NULL;
}

static int start_thread(int fd)
{
	pthread_t t;
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	/* not SIGTRAP: the thread runs libc code a script may probe, and a
	 * trap with SIGTRAP blocked makes the kernel kill the process */
	sigdelset(&all, SIGTRAP);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, serve, (void *)(long)fd);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc ? -1 : 0;
}

static void at_exit(void)
{
	finish();
}

/*
 * _exit or abort: as at exit.  exec: the image goes, and the connection
 * with it (close-on-exec); the new image joins anew if it carries
 * libmarktap.  Send the delta and say it is complete ('W'), but stay: if
 * exec fails, the process goes on running the script.
 */
static void on_final(int why)
{
	if (!h.active || h.fd < 0 || in_handler)
		return;
	if (why == MT_FINAL_EXIT) {
		finish();
		return;
	}
	send_delta();
	send_frame('W', NULL, 0);
}

/* ---- fork --------------------------------------------------------------- */

/* finish_lock before hlock before send_lock, as finish() and a handler's
 * output take them: the child must not inherit a lock another thread held
 * mid-frame (its own frames would wait for ever) */
static void fork_prepare(void)
{
	pthread_mutex_lock(&h.finish_lock);
	hlock();
	pthread_mutex_lock(&h.send_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&h.send_lock);
	hunlock();
	pthread_mutex_unlock(&h.finish_lock);
}

/* The child has a copy of the state; under "marktap -c" it joins the
 * session as a process of its own, counting only its own changes. */
static void fork_child(void)
{
	const char *name = secure_getenv(MT_SESSION_ENV);
	char hello[64];
	int fd;

	/* what the parent's threads added is the parent's to report */
	for (struct nat_tab **pt = &h.tabs, *t; (t = *pt);) {
		if (t != my_tab) {
			*pt = t->next;
			free_keys(t);
			free(t->ent);
			free(t->order);
			free(t);
			continue;
		}
		for (unsigned j = 0; j < t->n; j++) {
			struct nat_ent *e = &t->ent[t->order[j]];
			if (e->gk & 8)
				e->value = 0;
			else
				e->folded = e->value;
		}
		t->hits = 0;
		t->own = 0;
		pt = &t->next;
	}
	h.native_hits = h.lua_hits = 0;
	pthread_mutex_unlock(&h.send_lock);
	hunlock();
	pthread_mutex_unlock(&h.finish_lock);
	if (h.fd < 0 || !h.active)
		return;
	close(h.fd);
	h.fd = -1;
	h.stop_sent = 0;
	fd = name ? mt_wire_join(name) : -1;
	if (fd < 0) {   /* marktap -x traces the parent only */
		disarm_all();
		h.ended = 1;
		return;
	}
	mt_lua_sync_mark(h.mt);
	h.fd = fd;
	snprintf(hello, sizeof(hello), "%d 1", (int)getpid());
	if (send_frame('H', hello, strlen(hello)) < 0 || start_thread(fd) < 0)
		disarm_all();
}

/* ---- start -------------------------------------------------------------- */

/* A binding of handler `handler` to marker `marker` of the object at
 * path ("*": any), an SDT probe's when provider is not NULL; 0, or -1 when
 * out of memory.  An object not on this system binds nothing. */
static int add_binding(const char *handler, const char *path, const char *provider, const char *marker)
{
	struct binding *nb = realloc(h.binds, sizeof(*nb) * (h.nbinds + 1));
	struct stat st;

	if (!nb)
		return -1;
	h.binds = nb;
	nb = &h.binds[h.nbinds];
	memset(nb, 0, sizeof(*nb));
	nb->handler = -1;
	nb->any_object = !strcmp(path, "*");
	if (!nb->any_object) {
		if (stat(path, &st) != 0)
			return 0;
		nb->dev = st.st_dev;
		nb->ino = st.st_ino;
	}
	nb->marker = strdup(marker);
	nb->handler_name = strdup(handler);
	nb->provider = provider ? strdup(provider) : NULL;
	if (!nb->marker || !nb->handler_name || (provider && !nb->provider))
		return -1;
	h.nsdt += provider != NULL;
	h.nbinds++;
	return 0;
}

static int parse_manifest(char *text, struct mt_lua_options *o, long long *target)
{
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[32], a[PATH_MAX], b[256], c[256], prov[256];
		long long v;

		if (sscanf(line, "option %31s %lld", key, &v) == 2) {
			if (mt_lua_option_set(o, key, v) == 0)
				continue;   /* a -D limit (mt_lua_limit_names) */
			if (!strcmp(key, "guru")) o->guru = (int)v;
			else if (!strcmp(key, "target")) *target = v;
		} else if (!strcmp(line, "write out own")) {
			h.own_out = 1;
		} else if (!strcmp(line, "write err own")) {
			h.own_err = 1;
		} else if (sscanf(line, "bind %255s %4095s %255s", b, a, c) == 3) {
			if (add_binding(b, a, NULL, c) < 0)
				return -1;
		} else if (sscanf(line, "sdt %255s %4095s %255s %255s", b, a, prov, c) == 4) {
			if (add_binding(b, a, prov, c) < 0)
				return -1;
		} else if (!strncmp(line, "func ", 5)) {
			/* "func probe_N e|r ADDR PATH CFA" (ufunc.c): an SDT probe of
			 * provider UFUNC_PROVIDER named probe_N to sdt.c */
			if (ufunc_want(line) < 0 || sscanf(line, "func %255s %*c %*s %4095s", b, a) != 2 ||
			    add_binding(b, a, UFUNC_PROVIDER, b) < 0)
				return -1;
		} else if (!strncmp(line, "fvar ", 5)) {   /* its values */
			if (ufunc_field(line) < 0)
				return -1;
		}
	}
	return 0;
}

/* A session that could not start: the connection is the agent's to close
 * (not ours to write to again), and a next session may try. */
static void abandon(void)
{
	pthread_mutex_lock(&h.send_lock);
	h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	__atomic_store_n(&h.ended, 1, __ATOMIC_RELEASE);
}

static int fail(const char *fmt, const char *arg)
{
	char msg[600];

	snprintf(msg, sizeof(msg), fmt, arg);
	send_frame('E', msg, strlen(msg));
	abandon();
	return -1;
}

/*
 * Make room for a next session once one has ended (marktap -x again on
 * the same process).  Every marker was disarmed when it ended and
 * rt->script cleared, but a thread that read rt->script just before may
 * still be in on_hit() with it: the script's struct attached and native
 * plans are kept (a few hundred bytes per bound marker and session), so
 * that such a thread reads memory still valid; its Lua part finds
 * rt->script changed under hlock and runs nothing, its native part finds
 * the plan's session is not its table's (nat_tab_for) and adds nothing.
 * The Lua state goes (under hlock: every Lua run holds it).  The threads'
 * tables are unlinked: each thread frees its own at its next native hit
 * or its end.
 */
static void retire(void)
{
	struct attached *a;

	pthread_mutex_lock(&h.finish_lock);   /* exit and fork paths */
	h.ops->lock();                        /* dlopen, dlclose */
	hlock();
	while ((a = h.attached)) {
		h.attached = a->next;
		a->next = h.retired;
		h.retired = a;
	}
	for (unsigned i = 0; i < h.nbinds; i++) {
		free(h.binds[i].marker);
		free(h.binds[i].handler_name);
		free(h.binds[i].plan);
		free(h.binds[i].provider);
	}
	free(h.binds);
	h.binds = NULL;
	h.nbinds = h.nsdt = 0;
	h.tabs = NULL;
	h.gen++;
	h.own_out = h.own_err = 0;   /* output still buffered was the ended session's */
	mt_lua_free(h.mt);
	h.mt = NULL;
	h.native_hits = h.lua_hits = 0;
	__atomic_store_n(&h.skipped_pending, 0, __ATOMIC_RELAXED);
	h.stop_sent = 0;
	h.finished = 0;
	h.ended = 0;
	hunlock();
	h.ops->unlock();
	pthread_mutex_unlock(&h.finish_lock);
}

EXPORT int mt_script_plugin_start(const struct mt_script_ops *ops, int fd, int forked)
{
	static int atfork_done, key_made;
	struct mt_lua_options o = { 0 };
	struct mt_frame f;
	char hello[PATH_MAX + 64], exe[PATH_MAX], err[512], *chunk;
	long long target = 0;
	ssize_t n;

	if (!ops || ops->version != MT_SCRIPT_OPS_VERSION)
		return -1;
	if (h.ops && !__atomic_load_n(&h.ended, __ATOMIC_ACQUIRE)) {
		/* another marktap session got here first, and runs */
		static const char busy[] = "the process already runs a marktap script";
		mt_wire_send(fd, 'E', busy, sizeof(busy) - 1, NULL, 0);
		return -2;
	}
	if (h.ops)
		retire();
	(void)forked;
	h.ops = ops;
	h.fd = fd;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(hello, sizeof(hello), "%d 0 %s", (int)getpid(), exe);
	if (send_frame('H', hello, strlen(hello)) < 0)
		return -1;
	if (mt_wire_recv(fd, &f) < 0 || f.type != 'S')
		return fail("%s", "expected the script from marktap");
	chunk = strstr(f.data, "\n\n");
	if (!chunk) {
		mt_wire_free(&f);
		return fail("%s", "malformed script frame");
	}
	*chunk = '\0';
	chunk += 2;
	if (parse_manifest(f.data, &o, &target) < 0) {
		mt_wire_free(&f);
		return fail("%s", "out of memory");
	}
	if (h.nsdt && h.traps_used) {
		/* sdt.c and ufunc.c arm their sites once per process */
		mt_wire_free(&f);
		return fail("%s", "SDT and function probes run in one marktap session per process, "
			    "and an earlier session ran them here; markers of libmarktap still work");
	}
	o.write = out_write;
	o.error = err_line;
	h.maxstr = (size_t)(o.maxstringlen > 0 ? o.maxstringlen : 512) - 1;
	h.mt = mt_lua_new(&o);
	if (!h.mt || mt_lua_load(h.mt, chunk, f.len - (size_t)(chunk - f.data), "=script",
				 err, sizeof(err))) {
		mt_wire_free(&f);
		return fail("cannot load the script: %s", h.mt ? err : "out of memory");
	}
	mt_wire_free(&f);
	usym_register(mt_lua_state(h.mt));   /* uaddr(), ubacktrace()... (usym.c) */
	{
		const char *env = secure_getenv("MARKTAP_NATIVE");
		h.native_off = env && !strcmp(env, "0");
	}
	for (unsigned i = 0; i < h.nbinds; i++) {
		struct binding *b = &h.binds[i];
		const char *plan;
		b->handler = mt_lua_handler(h.mt, b->handler_name);
		plan = mt_lua_native_plan(h.mt, b->handler_name);
		b->plan = plan ? strdup(plan) : NULL;
	}
	if (!key_made)
		key_made = pthread_key_create(&h.tab_key, nat_thread_exit) == 0 ? 1 : -1;
	if (key_made < 0)
		h.native_off = 1;
	{
		lua_State *L = mt_lua_state(h.mt);
		char code[96];
		snprintf(code, sizeof(code), "local t = %lld; require('mtrt').target = function() return t end", target);
		if (luaL_dostring(L, code) != LUA_OK)
			lua_pop(L, 1);
	}
	if (mt_wire_recv(fd, &f) < 0 || f.type != 'F')
		return fail("%s", "expected the globals from marktap");
	mt_lua_sync_apply(h.mt, f.data, f.len);
	mt_lua_sync_mark(h.mt);
	mt_wire_free(&f);

	*ops->hit = on_hit;
	*ops->added = on_added;
	*ops->removed = on_removed;
	__atomic_store_n(ops->final, on_final, __ATOMIC_RELEASE);
	ops->lock();
	h.active = 1;
	ops->for_each(arm_one, NULL);
	ops->unlock();
	/* outside the registry lock: dl_iterate_phdr takes the loader's, and
	 * a dlopen holds that one when it registers markers */
	if (h.nsdt) {
		h.traps_used = 1;
		sdt_start(attach_sdt, on_sdt_hit, sdt_error);
	}
	if (!atfork_done) {
		atfork_done = 1;
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		atexit(at_exit);
	}
	if (send_frame('K', NULL, 0) < 0 || start_thread(fd) < 0) {
		disarm_all();
		abandon();
		return -1;
	}
	return 0;
}
