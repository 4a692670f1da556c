/*
 * elab_prune.c - pass 2: what has no effect is dropped, as stap's
 * optimizer drops it (none of it with -u).
 *
 * Before binding, on the concrete probes (elab_probe.c): an if whose
 * branches do nothing becomes its condition.  After binding, before
 * types (elab_bind.c): a <<< into a local nothing reads.  After types
 * (elab_type.c): tapset alias statements whose local nothing reads, the
 * probes left with nothing to do (a warning names each), and the tapset
 * functions no probe calls any more.  What is left is pass 3's input.
 */
#define _GNU_SOURCE
#include "elab_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Alias variables that nothing reads are not computed, as stap elides
 * them: scheduler.ctxswitch's next_task_name reads /proc, and a script
 * that only counts switches must not pay for it.  A tapset statement
 * "local = expr" (tapset alias expressions have no side effects, see
 * doc/tapsets.md) whose local nothing else in the probe reads is dropped,
 * to a fixed point (lseek's argstr reads fildes), and the locals left
 * without any use leave the probe.
 */
/* Every local's reads in one walk (a merged syscall.* handler has
 * thousands of statements: a walk per statement was quadratic) */
static void count_reads(const struct tr_expr *e, void *arg)
{
	(void)arg;
	if (e->kind == E_SYM && e->sym && e->sym->kind == SYM_LOCAL)
		e->sym->reads++;
	/* the target of a plain store is no read */
	if (e->kind == E_ASSIGN && !strcmp(e->op, "=") && e->a->kind == E_SYM && e->a->sym &&
	    e->a->sym->kind == SYM_LOCAL)
		e->a->sym->reads--;
}

/* Every local that occurs at all, read or written: reads set to 1 (one
 * walk for all of them, as count_reads) */
static void mark_occurrence(const struct tr_expr *e, void *arg)
{
	(void)arg;
	if (e->kind == E_SYM && e->sym && e->sym->kind == SYM_LOCAL)
		e->sym->reads = 1;
}

static void count_local_reads(struct tr_probe *p)
{
	struct tr_walker w = { .expr = count_reads };

	for (unsigned i = 0; i < p->locals.n; i++)
		((struct tr_sym *)p->locals.items[i])->reads = 0;
	tr_walk_stmt(&w, p->body);
}

static bool empty_body(const struct tr_stmt *st);

/* A tapset's if or try that an elision left with nothing to do goes too:
 * a tapset's condition has no effect of its own (doc/tapsets.md), and a
 * try of nothing catches nothing (netfilter.stp's reads of the packet). */
static void drop_if_empty(struct tr_stmt *st)
{
	if (!st->tok->file->tapset || !st->body || !empty_body(st->body) ||
	    (st->kind == S_IF && st->els && !empty_body(st->els)))
		return;
	st->kind = S_NULL;
	st->e = NULL;
	st->body = st->els = NULL;
}

/* Drop the tapset's stores into locals nothing reads (the reads as
 * count_local_reads found them before this pass) */
static bool elide_dead(struct tr_stmt *body, struct tr_stmt *st)
{
	bool dropped = false;

	if (st->kind == S_BLOCK) {
		for (unsigned i = 0; i < st->list.n; i++)
			dropped |= elide_dead(body, st->list.items[i]);
		return dropped;
	}
	/* aliases merged into one handler (syscall.*) sit in the branches
	 * of its search: a variable no branch reads is dead in each */
	if (st->kind == S_IF) {
		if (st->body)
			dropped |= elide_dead(body, st->body);
		if (st->els)
			dropped |= elide_dead(body, st->els);
		if (dropped)
			drop_if_empty(st);
		return dropped;
	}
	if (st->kind == S_TRY) {   /* the catch's block is left as it is */
		if (st->body && (dropped = elide_dead(body, st->body)))
			drop_if_empty(st);
		return dropped;
	}
	if (st->kind != S_EXPR || !st->tok->file->tapset || st->e->kind != E_ASSIGN ||
	    strcmp(st->e->op, "=") || st->e->a->kind != E_SYM || !st->e->a->sym ||
	    st->e->a->sym->kind != SYM_LOCAL || st->e->a->sym->reads > 0)
		return false;
	st->kind = S_NULL;
	st->e = NULL;
	return true;
}

/* The locals that no longer occur in body leave the list. */
static void drop_unused_locals(struct tr_vec *locals, const struct tr_stmt *body)
{
	struct tr_walker w = { .expr = mark_occurrence };
	unsigned k = 0;

	for (unsigned i = 0; i < locals->n; i++)
		((struct tr_sym *)locals->items[i])->reads = 0;
	tr_walk_stmt(&w, body);
	for (unsigned i = 0; i < locals->n; i++) {
		struct tr_sym *y = locals->items[i];
		if (y->reads > 0)
			locals->items[k++] = y;
	}
	locals->n = k;
}

static void elide_alias_locals(struct tr_probe *p)
{
	do
		count_local_reads(p);
	while (elide_dead(p->body, p->body));
	drop_unused_locals(&p->locals, p->body);
}

/*
 * A tapset function that only elided alias statements called (next_pid's
 * __marktap_task_tgid when the script reads prev_tid alone) leaves the
 * session with them: marktap.ko would see its Lua and refuse a chunk that
 * never calls it.  The functions kept are the user's and those a probe
 * still calls, directly or through others.
 */
struct reach {
	struct tr_vec work;
};

static void reach_call(const struct tr_expr *e, void *arg)
{
	struct reach *rc = arg;

	if (e->kind == E_CALL && e->func && !e->func->visited) {
		e->func->visited = true;
		tr_vec_push(&rc->work, e->func);
	}
}

static void prune_functions(struct tr_session *s)
{
	struct reach rc = {0};
	struct tr_walker w = { .expr = reach_call, .arg = &rc };
	unsigned i, k = 0;

	for (i = 0; i < s->funcs.n; i++)
		((struct tr_func *)s->funcs.items[i])->visited = false;
	for (i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		tr_walk_stmt(&w, p->body);
		for (unsigned r = 0; r < p->resolved.n; r++)
			if (((struct tr_resolved *)p->resolved.items[r])->cond)
				tr_walk_expr(&w, ((struct tr_resolved *)p->resolved.items[r])->cond);
	}
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (!f->file->tapset && !f->visited) {
			f->visited = true;
			tr_vec_push(&rc.work, f);
		}
	}
	while (rc.work.n) {
		struct tr_func *f = rc.work.items[--rc.work.n];
		if (f->body)
			tr_walk_stmt(&w, f->body);
	}
	free(rc.work.items);
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (f->visited)
			s->funcs.items[k++] = f;
		else
			f->used = false;
	}
	s->funcs.n = k;
}

/* A body that does nothing: empty blocks, ';' and a bare literal (after
 * the alias statements nothing reads are gone). */
static bool empty_body(const struct tr_stmt *st)
{
	if (st->kind == S_NULL || (st->kind == S_EXPR && (st->e->kind == E_NUM || st->e->kind == E_STR)))
		return true;
	if (st->kind != S_BLOCK)
		return false;
	for (unsigned i = 0; i < st->list.n; i++)
		if (!empty_body(st->list.items[i]))
			return false;
	return true;
}

/*
 * As stap's optimizer: a probe whose handler does nothing is not
 * attached at all (a warning names it), unless -u.  An empty handler
 * has no effect a script could see, and attaching it would only cost
 * the probed program.
 */
static void elide_empty_probes(struct tr_session *s)
{
	unsigned k = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		/* a perf counter is kept: @perf("C") reads it (as stap) */
		if (!empty_body(p->body) || r->perf_counter) {
			p->id = k;      /* handlers are named by their place */
			s->probes.items[k++] = p;
			continue;
		}
		tr_warn(r->alias_pp && p->point_tok ? p->point_tok : p->tok, "Probe '%.*s' has been elided",
			(int)strcspn(r->pp, ".("), r->pp);
	}
	s->probes.n = k;
}

/*
 * As stap's optimizer: "if (c) {} else {}", both branches doing nothing,
 * is reduced to the expression statement "c" before types are inferred,
 * so a condition nothing else types stays untyped ("unresolved type" for
 * a local never assigned, as stap says for "if (x) ;").
 */
static void reduce_empty_ifs(struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			reduce_empty_ifs(st->list.items[i]);
		break;
	case S_IF:
		reduce_empty_ifs(st->body);
		reduce_empty_ifs(st->els);
		if (empty_body(st->body) && (!st->els || empty_body(st->els))) {
			st->kind = S_EXPR;
			st->body = st->els = NULL;
		}
		break;
	case S_FOR:
	case S_FOREACH:
	case S_TRY:
		reduce_empty_ifs(st->body);
		reduce_empty_ifs(st->els);
		break;
	default:
		break;
	}
}

/* Before binding: every concrete probe's empty ifs. */
void tr_elab_reduce_empty_ifs(struct tr_session *s)
{
	for (unsigned i = 0; i < s->probes.n; i++)
		reduce_empty_ifs(((struct tr_probe *)s->probes.items[i])->body);
}

/* A value without effects whose type needs nothing else: a literal, or
 * an operator over literals (not a variable: its type is what the
 * store would have given the local). */
static bool plain_value(const struct tr_expr *e)
{
	switch (e->kind) {
	case E_NUM:
	case E_STR:
		return true;
	case E_UNARY:
		return strcmp(e->op, "&") && plain_value(e->a);
	case E_BIN:
		/* 1 / 0 is kept: its error is what a script may be after */
		if (!strcmp(e->op, "/") || !strcmp(e->op, "%"))
			return false;
		/* fall through */
	case E_CAT:
	case E_CMP:
	case E_LOGIC:
		/* (a short chain: a long one is left, not walked here) */
		return !tr_is_chain(e->a) && plain_value(e->a) && plain_value(e->b);
	default:
		return false;
	}
}

/*
 * As stap's optimizer, before types are checked: "a <<< v" into a local
 * nothing reads is dropped (v still evaluated, with a warning), so such a
 * local is no statistics local ("a = 1; a <<< 2" elaborates, a long).
 * Statements of the user's probes and functions; not with -u.
 */
static void elide_dead_stats(struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			elide_dead_stats(st->list.items[i]);
		return;
	case S_IF: case S_FOR: case S_FOREACH: case S_TRY:
		elide_dead_stats(st->body);
		elide_dead_stats(st->els);
		return;
	case S_EXPR: {
		struct tr_expr *e = st->e;
		if (e->kind != E_ASSIGN || e->a->kind != E_SYM || !e->a->sym ||
		    e->a->sym->kind != SYM_LOCAL || e->a->sym->read)
			return;
		if (!strcmp(e->op, "=") && !st->tok->file->tapset && plain_value(e->b)) {
			/* x = 1, x never read: nothing left to do (a probe
			 * left empty is elided, as stap's) */
			tr_warn(e->tok, "Eliding assignment to '%s'", e->a->sym->name);
			st->kind = S_NULL;
			st->e = NULL;
			return;
		}
		if (strcmp(e->op, "<<<"))
			return;
		tr_warn(e->tok, "Eliding assignment to '%s'", e->a->sym->name);
		st->e = e->b;
		return;
	}
	default:
		return;
	}
}

/* After binding: the dead statistics stores of the user's probes and
 * functions (a tapset's are its own business). */
void tr_elab_elide_dead_stats(struct tr_session *s)
{
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		if (!p->file->tapset) {
			elide_dead_stats(p->body);
			drop_unused_locals(&p->locals, p->body);
		}
	}
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (!f->file->tapset && f->body) {
			elide_dead_stats(f->body);
			drop_unused_locals(&f->locals, f->body);
		}
	}
}

/* After types: unread alias locals, empty probes, unreached functions. */
void tr_elab_prune(struct tr_session *s)
{
	for (unsigned i = 0; i < s->probes.n; i++)
		elide_alias_locals(s->probes.items[i]);
	elide_empty_probes(s);
	prune_functions(s);
}
