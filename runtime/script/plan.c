/*
 * plan.c - native plans in the traced process: handlers that only add,
 * run at the hit without the handler lock or Lua (plan.h).
 *
 * The plan's text is parsed by runtime/core/mt_plan.c, as marktap.ko
 * parses it; this file keeps only the execution: per-thread tables, and
 * their folding into the Lua globals before each exchange with marktap
 * (runtime/lua/API.md, "Native handlers").
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mt_lua.h"
#include "hlock.h"
#include "plan.h"

/* A plan of the session gen: its operations (mt_plan.h). */
struct plan {
	unsigned gen;
	unsigned nops;
	struct mt_plan_op op[];
};

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
	int64_t key[MT_PLAN_KEYS];
	int64_t value, folded;  /* counters; statistics: value is the count */
	int64_t sum, min, max, q;
	double sq;              /* the sum of squares, when q overflowed */
	uint32_t gk;            /* global << 8 | string keys << 4 | statistics << 3 | keys */
	uint32_t used;
	uint32_t qok;
};

struct nat_tab {
	struct nat_tab *next;
	unsigned gen;           /* the session it counts for (P.gen) */
	uint64_t hits;          /* hits of native handlers (relaxed) */
	int own;                /* statistics: 0 free, 1 the thread, 2 the folder */
	unsigned cap, n;        /* n: entries in order[] (release/acquire) */
	struct nat_ent *ent;
	unsigned *order;        /* cap / 2 slots */
};

#define NAT_CAP0 64
#define NAT_CAPMAX (1u << 14)   /* then the thread folds its table and clears it */

/* The session's (hlock, except where said). */
static struct {
	struct mt_lua *mt;             /* the globals to fold into */
	size_t maxstr;                 /* MAXSTRINGLEN - 1: string keys are cut there */
	unsigned gen;                  /* sessions run so far (plan_retire) */
	struct nat_tab *tabs;          /* every thread's table */
	pthread_key_t tab_key;
	int key_made;                  /* 1 made, -1 could not be: no native plans */
	uint64_t native_hits;          /* of threads gone */
	int64_t *fold;                 /* records being folded */
	size_t fold_cap;
	const char **fold_strs;        /* their string keys */
	size_t fold_nstrs, fold_strs_cap;
} P;

static __thread struct nat_tab *my_tab __attribute__((tls_model("initial-exec")));
static __thread char comm[17] __attribute__((tls_model("initial-exec")));   /* execname() */

static void fold_tab(struct nat_tab *t);
static void fold_flush(void);
static void free_keys(struct nat_tab *t);

static int64_t nat_value(const struct mt_plan_src *s, const struct mt_format *f, const struct mt_args *a)
{
	int64_t v;

	switch (s->kind) {
	case MT_PLAN_SRC_CONST:
		return s->c;
	case MT_PLAN_SRC_TID:
		return mt_lua_self_tid();
	case MT_PLAN_SRC_PID:
		return mt_lua_self_pid();
	case MT_PLAN_SRC_CPU:
		return mt_lua_self_cpu();
	case MT_PLAN_SRC_STR:
		return (int64_t)(intptr_t)a->v[s->arg].str;
	case MT_PLAN_SRC_EXEC:
		/* the thread's name now (it can change): as execname() reads it */
		mt_lua_self_execname(comm, sizeof(comm));
		return (int64_t)(intptr_t)comm;
	default:
		/* as push_args converts them for the Lua handler */
		if (f->fields[s->arg].store == MT_ST_DOUBLE)
			v = (int64_t)a->v[s->arg].d;
		else
			v = (int64_t)a->v[s->arg].u;
		return s->kind == MT_PLAN_SRC_NEG_ARG ? (int64_t)(0 - (uint64_t)v) : v;
	}
}

static void nat_thread_exit(void *arg)
{
	struct nat_tab *t = arg, **pt;

	my_tab = NULL;
	hlock();
	if (t->gen == P.gen) {   /* else an ended session's, unlinked by plan_retire() */
		fold_tab(t);
		fold_flush();
		P.native_hits += t->hits;
	}
	for (pt = &P.tabs; *pt; pt = &(*pt)->next) {
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
	t->gen = P.gen;
	t->next = P.tabs;
	P.tabs = t;
	hunlock();
	pthread_setspecific(P.tab_key, t);
	my_tab = t;
	return t;
}

static size_t key_len(int64_t k)
{
	return strnlen((const char *)(intptr_t)k, P.maxstr);
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

	hlock_spin_take(&t->own, 1);
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
	hlock_spin_drop(&t->own);
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
			hlock_skipped_add();
			return;
		}
		e = nat_find(t->ent, t->cap, gk, k, nk, &found);
	}
	memcpy(e->key, k, nk * sizeof(int64_t));
	e->gk = gk;
	if (strmask && own_keys(e, nk) < 0) {
		memset(e, 0, sizeof(*e));
		hlock_skipped_add();
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
 * session was unlinked by plan_retire() before session gen began: no folder
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
		pthread_setspecific(P.tab_key, NULL);
		my_tab = NULL;
		free_keys(t);
		free(t->ent);
		free(t->order);
		free(t);
		t = NULL;
	}
	if (!t && !(t = nat_new_tab()))
		hlock_skipped_add();
	return t && t->gen == gen ? t : NULL;
}

static int holds(const struct mt_plan_op *o, const struct mt_format *f, const struct mt_args *a)
{
	for (unsigned g = 0; g < o->nguards; g++) {
		int64_t l = nat_value(&o->guard[g].l, f, a), r = nat_value(&o->guard[g].r, f, a);
		int holds;
		switch (o->guard[g].cmp) {
		case MT_PLAN_EQ: holds = l == r; break;
		case MT_PLAN_NE: holds = l != r; break;
		case MT_PLAN_LT: holds = l < r; break;
		case MT_PLAN_GT: holds = l > r; break;
		case MT_PLAN_LE: holds = l <= r; break;
		default: holds = l >= r; break;   /* MT_PLAN_GE */
		}
		if (!holds)
			return 0;
	}
	return 1;
}

void plan_run(const struct plan *p, const struct mt_format *f, const struct mt_args *a)
{
	struct nat_tab *t = nat_tab_for(p->gen);

	if (!t)
		return;
	__atomic_store_n(&t->hits, t->hits + 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < p->nops; i++) {
		const struct mt_plan_op *o = &p->op[i];
		int64_t k[MT_PLAN_KEYS];
		if (!holds(o, f, a))
			continue;
		for (unsigned j = 0; j < o->nkeys; j++)
			k[j] = nat_value(&o->key[j], f, a);
		nat_add(t, o->global, o->strmask, o->stats, k, o->nkeys, nat_value(&o->value, f, a));
	}
}

/* ---- folding (hlock held) ---- */

static size_t fold_len;

/* A string key into the record: its index among the fold's strings. */
static int64_t fold_str(int64_t k)
{
	if (P.fold_nstrs == P.fold_strs_cap) {
		size_t cap = P.fold_strs_cap ? 2 * P.fold_strs_cap : 256;
		const char **ns = realloc(P.fold_strs, cap * sizeof(*ns));
		if (!ns)
			return -1;
		P.fold_strs = ns;
		P.fold_strs_cap = cap;
	}
	P.fold_strs[P.fold_nstrs] = (const char *)(intptr_t)k;
	return (int64_t)P.fold_nstrs++;
}

static int fold_key(struct nat_ent *e, unsigned i)
{
	int64_t v = e->key[i];

	if (e->gk >> 4 & 1u << i && (v = fold_str(v)) < 0)
		return -1;
	P.fold[fold_len++] = v;
	return 0;
}

static int fold_room(size_t more)
{
	if (fold_len + more > P.fold_cap) {
		size_t cap = P.fold_cap ? 2 * P.fold_cap : 1024;
		int64_t *nf;
		while (cap < fold_len + more)
			cap *= 2;
		nf = realloc(P.fold, cap * sizeof(*nf));
		if (!nf)
			return -1;
		P.fold = nf;
		P.fold_cap = cap;
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
				hlock_spin_take(&t->own, 2);
				owned = 1;
			}
			if (!e->value || fold_room(9 + nk) < 0)
				continue;
			memcpy(&bits, &e->sq, sizeof(bits));
			P.fold[fold_len++] = -(int64_t)(e->gk >> 8);
			P.fold[fold_len++] = nk;
			P.fold[fold_len++] = e->value;
			P.fold[fold_len++] = e->sum;
			P.fold[fold_len++] = e->min;
			P.fold[fold_len++] = e->max;
			P.fold[fold_len++] = e->q;
			P.fold[fold_len++] = e->qok;
			P.fold[fold_len++] = bits;
			for (unsigned i = 0; i < nk; i++)
				if (fold_key(e, i) < 0)
					P.fold[fold_len++] = -1;
			e->value = 0;   /* the next period starts empty */
			continue;
		}
		int64_t v = __atomic_load_n(&e->value, __ATOMIC_RELAXED);
		if (v == e->folded)
			continue;
		if (fold_room(3 + nk) < 0)
			break;   /* folded at the next exchange */
		size_t mark = fold_len;
		P.fold[fold_len++] = e->gk >> 8;
		P.fold[fold_len++] = nk;
		P.fold[fold_len++] = (int64_t)((uint64_t)v - (uint64_t)e->folded);
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
		hlock_spin_drop(&t->own);
}

static void fold_flush(void)
{
	if (fold_len && P.mt)
		mt_lua_native_fold(P.mt, P.fold, fold_len, P.fold_strs, P.fold_nstrs);
	fold_len = 0;
	P.fold_nstrs = 0;
}

void plan_fold_all(void)
{
	for (struct nat_tab *t = P.tabs; t; t = t->next)
		fold_tab(t);
	fold_flush();
}

/* ---- the session ---- */

/* Parsed whole (6 KiB: from the heap, as a program thread's dlopen may
 * get here), then kept as long as its operations. */
struct plan *plan_new(const char *text, const struct mt_format *f)
{
	struct mt_plan *parsed = malloc(sizeof(*parsed));
	struct plan *p = NULL;

	if (parsed && mt_plan_parse(text, f, parsed) == 0 &&
	    (p = malloc(sizeof(*p) + parsed->nops * sizeof(p->op[0])))) {
		p->gen = P.gen;
		p->nops = parsed->nops;
		memcpy(p->op, parsed->op, parsed->nops * sizeof(p->op[0]));
	}
	free(parsed);
	return p;
}

void plan_free(struct plan *p)
{
	free(p);
}

int plan_start(struct mt_lua *mt, size_t maxstr)
{
	if (!P.key_made)
		P.key_made = pthread_key_create(&P.tab_key, nat_thread_exit) == 0 ? 1 : -1;
	hlock();
	P.mt = mt;
	P.maxstr = maxstr;
	hunlock();
	return P.key_made > 0 ? 0 : -1;
}

uint64_t plan_hits(void)
{
	uint64_t n = P.native_hits;

	for (struct nat_tab *t = P.tabs; t; t = t->next)
		n += __atomic_load_n(&t->hits, __ATOMIC_RELAXED);
	return n;
}

void plan_retire(void)
{
	P.tabs = NULL;
	P.gen++;
	P.mt = NULL;
	P.native_hits = 0;
}

void plan_fork_child(void)
{
	for (struct nat_tab **pt = &P.tabs, *t; (t = *pt);) {
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
	P.native_hits = 0;
}
