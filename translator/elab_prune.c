/*
 * elab_prune.c - pass 2: what has no effect is dropped, as stap's
 * optimizer drops it (none of it with -u).
 *
 * After binding, before types (elab_bind.c): stores into locals nothing
 * reads, statements without effects and ifs whose branches do nothing,
 * in the user's probes and functions.  After types
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
	/* (a branch binding dropped: what a false @defined guards) */
	if (!st || st->kind == S_NULL || (st->kind == S_EXPR && (st->e->kind == E_NUM || st->e->kind == E_STR)))
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


/*
 * As stap's optimizer, before types are checked, on the user's probes and
 * functions (a tapset's statements are its own business, see
 * elide_alias_locals): rounds of
 *   - a store "x = v" or "x <<< v" into a local nothing reads becomes v
 *     ("Eliding assignment to 'x'"), wherever it sits in an expression;
 *   - an expression statement without effects goes ("Eliding
 *     side-effect-free expression"): literals, reads, operators over
 *     them, sprintf, calls of functions without effects, f()++;
 *   - an if whose branches do nothing becomes its condition, to go in
 *     the next round, if there is one (so "if (x) {}" alone keeps its
 *     untyped x, "unresolved type", as stap's);
 * until a round changes nothing.  Warnings are of the first round (later
 * rounds are as quiet as stap's).  So a local or a global left
 * unreferenced needs no type: "i = [a] in arr" with i never read does not
 * ask what arr holds.  Not with -u.
 */
struct voids {
	bool changed, warn;
	struct tr_vec busy;             /* functions whose effects are being looked at */
};

static bool pure_stmt(struct voids *v, const struct tr_stmt *st);

/* A function without effects: its body writes nothing but its own
 * locals, prints nothing but strings, calls nothing with effects.
 * Embedded code counts as an effect; a recursive call adds none of its
 * own (stap drops "h(10);" of a recursive h that only returns, and an
 * error its depth would raise with it). */
static bool pure_func(struct voids *v, struct tr_func *f)
{
	bool pure;

	if (!f || !f->body || f->code)
		return false;
	for (unsigned i = 0; i < v->busy.n; i++)
		if (v->busy.items[i] == f)
			return true;
	tr_vec_push(&v->busy, f);
	pure = pure_stmt(v, f->body);
	v->busy.n--;
	return pure;
}

/* locals_ok: a write to a local or a parameter is no effect (in a
 * function's body: they die with the call). */
static bool pure_expr(struct voids *v, const struct tr_expr *e, bool locals_ok)
{
	if (!e)
		return true;
	if (tr_is_chain(e)) {
		struct tr_vec spine = {0};
		bool pure;
		tr_chain(e, false, &spine);
		pure = pure_expr(v, ((struct tr_expr *)spine.items[0])->a, locals_ok);
		for (unsigned i = 0; pure && i < spine.n; i++)
			pure = pure_expr(v, ((struct tr_expr *)spine.items[i])->b, locals_ok);
		free(spine.items);
		return pure;
	}
	switch (e->kind) {
	case E_EMBED:
		return false;
	case E_PRINT:
		if (!e->print_str)
			return false;
		break;
	case E_CALL:
		if (!pure_func(v, e->func))
			return false;
		break;
	case E_ASSIGN:
	case E_PRE:
	case E_POST:
		/* f()++ writes nothing: stap drops it when f() does nothing */
		if (e->a->kind == E_SYM || e->a->kind == E_INDEX || e->a->kind == E_TARGET) {
			if (!locals_ok || e->a->kind != E_SYM || !e->a->sym || e->a->sym->kind == SYM_GLOBAL)
				return false;
		} else if (e->kind == E_ASSIGN) {
			return false;
		}
		break;
	default:
		break;
	}
	if (!pure_expr(v, e->a, locals_ok) || !pure_expr(v, e->b, locals_ok) ||
	    !pure_expr(v, e->c, locals_ok))
		return false;
	for (unsigned i = 0; i < e->args.n; i++)
		if (!pure_expr(v, e->args.items[i], locals_ok))
			return false;
	return true;
}

static bool pure_stmt(struct voids *v, const struct tr_stmt *st)
{
	if (!st)
		return true;
	switch (st->kind) {
	case S_EMBED:
	case S_DELETE:
	case S_NEXT:
		return false;
	case S_FOREACH:
		for (unsigned i = 0; i < st->keys.n; i++)
			if (!pure_expr(v, st->keys.items[i], true))
				return false;
		if (!pure_expr(v, st->value, true) || !pure_expr(v, st->base, true) ||
		    !pure_expr(v, st->limit, true))
			return false;
		break;
	default:
		break;
	}
	for (unsigned i = 0; i < st->list.n; i++)
		if (!pure_stmt(v, st->list.items[i]))
			return false;
	return pure_expr(v, st->e, true) && pure_expr(v, st->e2, true) && pure_expr(v, st->e3, true) &&
	       pure_stmt(v, st->body) && pure_stmt(v, st->els) && pure_expr(v, st->catch_var, true);
}

/* A local's reads in a body: every occurrence but as the target of a
 * store ("=", "<<<"), which a read of the store's own value is not. */
static void count_store_reads(const struct tr_expr *e, void *arg)
{
	(void)arg;
	if (e->kind == E_SYM && e->sym && e->sym->kind == SYM_LOCAL)
		e->sym->reads++;
	if (e->kind == E_ASSIGN && (!strcmp(e->op, "=") || !strcmp(e->op, "<<<")) &&
	    e->a->kind == E_SYM && e->a->sym && e->a->sym->kind == SYM_LOCAL)
		e->a->sym->reads--;
}

/* The stores into locals nothing reads, in e: each becomes its value
 * (its own place in the tree, so its parent need not change). */
static void elide_dead_stores(struct voids *v, struct tr_expr *e)
{
	if (!e)
		return;
	if (tr_is_chain(e)) {
		struct tr_vec spine = {0};
		tr_chain(e, false, &spine);
		elide_dead_stores(v, ((struct tr_expr *)spine.items[0])->a);
		for (unsigned i = 0; i < spine.n; i++)
			elide_dead_stores(v, ((struct tr_expr *)spine.items[i])->b);
		free(spine.items);
		return;
	}
	elide_dead_stores(v, e->a);
	elide_dead_stores(v, e->b);
	elide_dead_stores(v, e->c);
	for (unsigned i = 0; i < e->args.n; i++)
		elide_dead_stores(v, e->args.items[i]);
	if (e->kind != E_ASSIGN || (strcmp(e->op, "=") && strcmp(e->op, "<<<")) ||
	    e->a->kind != E_SYM || !e->a->sym || e->a->sym->kind != SYM_LOCAL || e->a->sym->reads > 0)
		return;
	if (v->warn)
		tr_warn(e->tok, "Eliding assignment to '%s'", e->a->sym->name);
	*e = *e->b;
	v->changed = true;
}

static void elide_voids(struct voids *v, struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			elide_voids(v, st->list.items[i]);
		return;
	case S_IF: case S_FOR: case S_FOREACH: case S_TRY:
		elide_voids(v, st->body);
		elide_voids(v, st->els);
		return;
	case S_EXPR:
		if (st->tok->file->tapset)
			return;
		elide_dead_stores(v, st->e);
		if (!pure_expr(v, st->e, false))
			return;
		if (v->warn)
			tr_warn(st->tok, "Eliding side-effect-free expression ");
		st->kind = S_NULL;
		st->e = NULL;
		v->changed = true;
		return;
	default:
		return;
	}
}

static void elide_body(struct voids *v, struct tr_stmt *body, struct tr_vec *locals)
{
	struct tr_walker w = { .expr = count_store_reads };

	for (unsigned i = 0; i < locals->n; i++)
		((struct tr_sym *)locals->items[i])->reads = 0;
	tr_walk_stmt(&w, body);
	elide_voids(v, body);
}

static void mark_global(const struct tr_expr *e, void *arg)
{
	(void)arg;
	if ((e->kind == E_SYM || e->kind == E_INDEX || e->kind == E_IN) && e->sym &&
	    e->sym->kind == SYM_GLOBAL)
		e->sym->reads = 1;
}

/* A user's global array the elisions left unreferenced ("[1] in arr"
 * gone) is no array of unknown types any more: declared, never used. */
static void forget_unused_arrays(struct tr_session *s)
{
	struct tr_walker w = { .expr = mark_global };

	for (unsigned i = 0; i < s->globals.n; i++)
		((struct tr_sym *)s->globals.items[i])->reads = 0;
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		tr_walk_stmt(&w, p->body);
		for (unsigned r = 0; r < p->resolved.n; r++)
			tr_walk_expr(&w, ((struct tr_resolved *)p->resolved.items[r])->cond);
	}
	for (unsigned i = 0; i < s->funcs.n; i++)
		tr_walk_stmt(&w, ((struct tr_func *)s->funcs.items[i])->body);
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *g = s->globals.items[i];
		if (!g->reads && !g->file->tapset && g->arity > 0) {
			g->arity = g->size ? -2 : -1;
			g->index_types = NULL;
		}
	}
}

/* After binding: the user's probes and functions, round after round. */
void tr_elab_elide_voids(struct tr_session *s)
{
	struct voids v = { .warn = true };
	bool any = false;

	do {
		v.changed = false;
		for (unsigned i = 0; i < s->probes.n; i++) {
			struct tr_probe *p = s->probes.items[i];
			elide_body(&v, p->body, &p->locals);
			reduce_empty_ifs(p->body);
		}
		for (unsigned i = 0; i < s->funcs.n; i++) {
			struct tr_func *f = s->funcs.items[i];
			if (!f->file->tapset && f->body) {
				elide_body(&v, f->body, &f->locals);
				reduce_empty_ifs(f->body);
			}
		}
		v.warn = false;
		any |= v.changed;
	} while (v.changed);
	if (any)
		forget_unused_arrays(s);
	free(v.busy.items);
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		drop_unused_locals(&p->locals, p->body);
	}
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (!f->file->tapset && f->body)
			drop_unused_locals(&f->locals, f->body);
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
