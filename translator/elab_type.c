/*
 * elab_type.c - pass 2: types inferred, as stap's semantic pass does.
 *
 * Takes the bound probes and functions (elab_bind.c: every name knows
 * its symbol, every call its function, every $name its field's type)
 * and the -G initial values.  Each symbol, array index, function and
 * parameter has a type slot; every expression unifies the slots it
 * touches with what it needs (a long, a string, statistics), round after
 * round until nothing changes.  What is still untyped then is stap's
 * "unresolved type", or a long where stap lets it be one; the last round
 * reports every mismatch, where the type was first inferred, and the
 * histogram kinds of each statistics global.  The types then fixed are
 * what pass 3 generates.
 */
#define _GNU_SOURCE
#include "elab_int.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

struct infer {
	bool changed;
	bool final;                    /* last round: report what is still wrong */
	struct tr_func *func;
	/* where each type slot got its type: stap names that place */
	struct tr_vec typed_slots, typed_at;
};

static void mismatch(struct infer *in, const struct tr_token *tok, enum tr_type want, enum tr_type got)
{
	if (in->final)
		tr_sem_error(tok, "type mismatch: expected %s but found %s", tr_type_name(want),
			     tr_type_name(got));
}

/* A variable (its type slot) used as another type, as stap says it:
 * where, and where its type was first inferred. */
static void slot_mismatch(struct infer *in, const enum tr_type *slot, enum tr_type got,
			  const struct tr_token *tok)
{
	if (!in->final)
		return;
	tr_sem_error(tok, "type mismatch (%s)", tr_type_name(got));
	for (unsigned i = 0; i < in->typed_slots.n; i++)
		if (in->typed_slots.items[i] == slot) {
			tr_sem_error(in->typed_at.items[i], "type was first inferred here (%s)",
				     tr_type_name(*slot));
			return;
		}
}

/* Unify a slot (symbol type, index type, return type) with a type. */
static void unify(struct infer *in, enum tr_type *slot, enum tr_type t, const struct tr_token *tok)
{
	if (t == T_UNKNOWN)
		return;
	if (*slot == T_UNKNOWN) {
		*slot = t;
		in->changed = true;
		tr_vec_push(&in->typed_slots, slot);
		tr_vec_push(&in->typed_at, (void *)tok);
	} else if (*slot != t) {
		slot_mismatch(in, slot, t, tok);
	}
}

static enum tr_type infer_expr(struct infer *in, struct tr_expr *e, enum tr_type want);

static void expect_type(struct infer *in, struct tr_expr *e, enum tr_type want)
{
	enum tr_type got = infer_expr(in, e, want);

	if (got != T_UNKNOWN && want != T_UNKNOWN && got != want)
		mismatch(in, e->tok, want, got);
}

static void infer_indexes(struct infer *in, struct tr_sym *y, struct tr_vec *args)
{
	for (unsigned i = 0; i < args->n; i++) {
		if (!args->items[i])
			continue;
		enum tr_type t = infer_expr(in, args->items[i], y && y->index_types ? y->index_types[i] : T_UNKNOWN);
		if (y && y->index_types && (int)i < y->arity) {
			if (t == T_STATS)
				mismatch(in, ((struct tr_expr *)args->items[i])->tok, T_LONG, T_STATS);
			else
				unify(in, &y->index_types[i], t, ((struct tr_expr *)args->items[i])->tok);
		}
	}
}

static enum tr_type stats_operand(struct infer *in, struct tr_expr *op)
{
	if (op->kind == E_SYM && op->sym) {
		unify(in, &op->sym->type, T_STATS, op->tok);
		op->type = T_STATS;
	} else if (op->kind == E_INDEX && op->sym) {
		infer_indexes(in, op->sym, &op->args);
		unify(in, &op->sym->type, T_STATS, op->tok);
		op->type = T_STATS;
	} else {
		if (in->final)
			tr_sem_error(op->tok, "expected aggregate (a global variable or array element of statistics)");
	}
	return T_STATS;
}

/* One operator of a chain, its left operand's type l already known. */
static enum tr_type infer_op(struct infer *in, struct tr_expr *e, enum tr_type l)
{
	enum tr_type r, want = e->kind == E_CAT ? T_STRING : T_LONG;

	if (e->kind == E_CMP) {
		r = infer_expr(in, e->b, l);
		if (l == T_UNKNOWN && r != T_UNKNOWN) /* never a chain: those have types */
			l = infer_expr(in, e->a, r);
		if (l != T_UNKNOWN && r != T_UNKNOWN && l != r)
			mismatch(in, e->b->tok, l, r);
		if (l == T_STATS || r == T_STATS)
			mismatch(in, e->tok, T_LONG, T_STATS);
	} else {
		if (l != T_UNKNOWN && l != want)
			mismatch(in, e->a->tok, want, l);
		expect_type(in, e->b, want);
	}
	e->type = want;
	return want;
}

/* A chain of binary operators, deepest first, with a loop. */
static enum tr_type infer_chain(struct infer *in, struct tr_expr *e)
{
	struct tr_vec spine = {0};
	struct tr_expr *low;
	enum tr_type l;

	tr_chain(e, false, &spine);
	low = spine.items[0];
	l = infer_expr(in, low->a, low->kind == E_CMP ? T_UNKNOWN : low->kind == E_CAT ? T_STRING : T_LONG);
	for (unsigned i = 0; i < spine.n; i++)
		l = infer_op(in, spine.items[i], l);
	free(spine.items);
	return l;
}

static enum tr_type infer_expr(struct infer *in, struct tr_expr *e, enum tr_type want)
{
	enum tr_type t = T_UNKNOWN, l, r;

	switch (e->kind) {
	case E_NUM:
		t = T_LONG;
		break;
	case E_STR:
		t = T_STRING;
		break;
	case E_TARGET:
		if (e->target_arg == TR_TARGET_ENTRY && e->a)   /* @entry(expr): expr's */
			e->type = infer_expr(in, e->a, want);
		for (unsigned i = 0; i < e->args.n; i++)   /* $p->a[i]: numbers */
			expect_type(in, e->args.items[i], T_LONG);
		t = e->type;
		break;
	case E_DEFINED:
		t = T_LONG;
		break;
	case E_EMBED: /* a long unless it says otherwise, as in stap */
		t = strstr(e->str, "/* string */") ? T_STRING : T_LONG;
		break;
	case E_SYM:
		if (!e->sym)
			break;
		if (e->sym->arity > 0 || e->sym->arity == -2) {
			break;
		}
		if (e->sym->type == T_UNKNOWN && want != T_UNKNOWN)
			unify(in, &e->sym->type, want, e->tok);
		t = e->sym->type;
		break;
	case E_INDEX:
		if (e->a->kind == E_HIST) {
			infer_expr(in, e->a, T_UNKNOWN);
			expect_type(in, e->args.items[0], T_LONG);
			t = T_LONG;
			break;
		}
		if (!e->sym)
			break;
		infer_indexes(in, e->sym, &e->args);
		if (e->sym->type == T_UNKNOWN && want != T_UNKNOWN && want != T_STATS)
			unify(in, &e->sym->type, want, e->tok);
		t = e->sym->type;
		break;
	case E_IN:
		infer_indexes(in, e->sym, &e->args);
		t = T_LONG;
		break;
	case E_CALL:
		if (!e->func)
			break;
		for (unsigned i = 0; i < e->args.n && i < e->func->params.n; i++) {
			struct tr_sym *p = e->func->params.items[i];
			struct tr_expr *a = e->args.items[i];
			enum tr_type at = infer_expr(in, a, p->type);
			if (at == T_STATS)
				mismatch(in, a->tok, T_LONG, T_STATS);
			else
				unify(in, &p->type, at, a->tok);
		}
		if (e->func->type == T_UNKNOWN && want != T_UNKNOWN && !e->func->code && want != T_STATS)
			unify(in, &e->func->type, want, e->tok);
		t = e->func->type;
		break;
	case E_PRINT: {
		/* one type per conversion and per '*' width or precision,
		 * however many: at most one per '%' or '*' */
		int max = 1;
		for (const char *q = e->fmt; q && *q; q++)
			max += *q == '%' || *q == '*';
		enum tr_type *types = tr_alloc(sizeof(*types) * (size_t)max);
		int n = 0;
		const char *err = NULL;
		if (e->print_fmt) {
			n = tr_format_types(e->fmt, types, max, &err);
			if (n < 0) {
				if (in->final)
					tr_sem_error(e->fmt_tok, "%s", err);
				n = 0;
			} else if ((unsigned)n != e->args.n && in->final) {
				tr_sem_error(e->tok, n > (int)e->args.n ? "not enough arguments to format string" :
					     "too many arguments to format string");
			}
		}
		for (unsigned i = 0; i < e->args.n; i++) {
			struct tr_expr *a = e->args.items[i];
			enum tr_type w = e->print_fmt && (int)i < n ? types[i] : T_UNKNOWN;
			enum tr_type at = infer_expr(in, a, w);
			if (a->kind == E_HIST)
				continue;
			/* a statistics value printed passes, as in stap: pass 3
			 * refuses it (gen_expr.c) */
			if (at == T_STATS && w == T_UNKNOWN)
				continue;
			if (w != T_UNKNOWN && at != T_UNKNOWN && at != w)
				mismatch(in, a->tok, w, at);
		}
		t = e->print_str ? T_STRING : T_LONG;
		break;
	}
	case E_STAT:
		stats_operand(in, e->a);
		t = T_LONG;
		break;
	case E_HIST:
		stats_operand(in, e->a);
		t = T_STRING;
		break;
	case E_BIN:
	case E_LOGIC:
	case E_CAT:
	case E_CMP:
		t = infer_chain(in, e);
		break;
	case E_REGEX:
		expect_type(in, e->a, T_STRING);
		if (in->final) { /* as stap, a bad pattern is a pass 2 error (the runtime's regcomp) */
			regex_t re;
			int rc = regcomp(&re, tr_unescape(e->b->str, NULL), REG_EXTENDED | REG_NOSUB);
			if (rc) {
				char why[128];
				regerror(rc, &re, why, sizeof(why));
				tr_sem_error(e->b->tok, "regex compilation error: %s", why);
			} else {
				regfree(&re);
			}
		}
		t = T_LONG;
		break;
	case E_UNARY:
	case E_PRE:
	case E_POST:
		expect_type(in, e->a, T_LONG);
		t = T_LONG;
		break;
	case E_TERN:
		expect_type(in, e->a, T_LONG);
		l = infer_expr(in, e->b, want);
		r = infer_expr(in, e->c, l != T_UNKNOWN ? l : want);
		if (l == T_UNKNOWN && r != T_UNKNOWN)
			l = infer_expr(in, e->b, r);
		if (l != T_UNKNOWN && r != T_UNKNOWN && l != r)
			mismatch(in, e->c->tok, l, r);
		t = l != T_UNKNOWN ? l : r;
		break;
	case E_ASSIGN:
		if (!strcmp(e->op, "<<<")) {
			stats_operand(in, e->a);
			expect_type(in, e->b, T_LONG);
			t = T_LONG;
			break;
		}
		if (!strcmp(e->op, ".=")) {
			expect_type(in, e->a, T_STRING);
			expect_type(in, e->b, T_STRING);
			t = T_STRING;
			break;
		}
		if (strcmp(e->op, "=")) {
			expect_type(in, e->a, T_LONG);
			expect_type(in, e->b, T_LONG);
			t = T_LONG;
			break;
		}
		r = infer_expr(in, e->b, T_UNKNOWN);
		l = infer_expr(in, e->a, r);
		if (r == T_UNKNOWN && l != T_UNKNOWN)
			r = infer_expr(in, e->b, l);
		if (r == T_STATS || l == T_STATS) {
			if (in->final)
				tr_sem_error(e->tok, "cannot assign to or from statistics; use <<<");
		} else if (l != T_UNKNOWN && r != T_UNKNOWN && l != r) {
			if (e->a->sym && e->a->kind == E_SYM) /* x = "s" for a long x */
				slot_mismatch(in, &e->a->sym->type, r, e->a->tok);
			else
				mismatch(in, e->tok, l, r);
		}
		t = l != T_UNKNOWN ? l : r;
		break;
	}
	e->type = t;
	return t;
}

static void infer_stmt(struct infer *in, struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			infer_stmt(in, st->list.items[i]);
		break;
	case S_EXPR:
		infer_expr(in, st->e, T_UNKNOWN);
		break;
	case S_IF:
		expect_type(in, st->e, T_LONG);
		infer_stmt(in, st->body);
		infer_stmt(in, st->els);
		break;
	case S_FOR:
		if (st->e)
			infer_expr(in, st->e, T_UNKNOWN);
		if (st->e2)
			expect_type(in, st->e2, T_LONG);
		if (st->e3)
			infer_expr(in, st->e3, T_UNKNOWN);
		infer_stmt(in, st->body);
		break;
	case S_FOREACH:
		if (st->base->kind == E_HIST) {
			infer_expr(in, st->base, T_UNKNOWN);
			if (st->keys.n != 1 && in->final)
				tr_sem_error(st->tok, "a histogram has one index");
			for (unsigned i = 0; i < st->keys.n; i++) {
				struct tr_expr *k = st->keys.items[i];
				if (k->sym)
					unify(in, &k->sym->type, T_LONG, k->tok);
				k->type = T_LONG;
			}
			if (st->value && st->value->sym)
				unify(in, &st->value->sym->type, T_LONG, st->value->tok);
		} else if (st->base->sym) {
			struct tr_sym *a = st->base->sym;
			if (st->base->kind == E_INDEX)
				infer_indexes(in, a, &st->base->args);
			for (unsigned i = 0; i < st->keys.n && a->index_types && (int)i < a->arity; i++) {
				struct tr_expr *k = st->keys.items[i];
				if (!k->sym)
					continue;
				unify(in, &k->sym->type, a->index_types[i], k->tok);
				unify(in, &a->index_types[i], k->sym->type, k->tok);
				k->type = k->sym->type;
			}
			if (st->value && st->value->sym) {
				enum tr_type vt = a->type == T_STATS ? T_LONG : a->type;
				if (a->type == T_STATS && in->final)
					tr_sem_error(st->value->tok, "cannot take the value of a statistics array in foreach");
				unify(in, &st->value->sym->type, vt, st->value->tok);
				unify(in, &a->type, st->value->sym->type == T_LONG && a->type == T_STATS ? T_STATS :
				      st->value->sym->type, st->value->tok);
			}
		}
		if (st->limit)
			expect_type(in, st->limit, T_LONG);
		infer_stmt(in, st->body);
		break;
	case S_RETURN:
		if (!in->func)
			break;
		if (st->e) {
			enum tr_type t = infer_expr(in, st->e, in->func->type);
			unify(in, &in->func->type, t, st->e->tok);
		}
		break;
	case S_DELETE:
		if (st->e->kind == E_INDEX && st->e->sym)
			infer_indexes(in, st->e->sym, &st->e->args);
		else if (st->e->kind != E_SYM)
			infer_expr(in, st->e, T_UNKNOWN);
		break;
	case S_TRY:
		infer_stmt(in, st->body);
		if (st->catch_var && st->catch_var->sym) {
			unify(in, &st->catch_var->sym->type, T_STRING, st->catch_var->tok);
			st->catch_var->type = T_STRING;
		}
		infer_stmt(in, st->els);
		break;
	default:
		break;
	}
}

static void infer_all(struct tr_session *s, struct infer *in)
{
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		in->func = NULL;
		if (r->cond)
			expect_type(in, r->cond, T_LONG);
		infer_stmt(in, p->body);
	}
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		in->func = f;
		infer_stmt(in, f->body);
	}
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *g = s->globals.items[i];
		if (g->init)
			unify(in, &g->type, g->init->type = g->init->kind == E_NUM ? T_LONG : T_STRING,
			      g->init->tok);
	}
}

static void check_resolved(struct tr_sym *y, const char *what)
{
	if (y->type == T_UNKNOWN && y->used)
		tr_sem_error(y->tok, "unresolved type for %s", what);
	for (int i = 0; i < y->arity && y->index_types; i++)
		if (y->index_types[i] == T_UNKNOWN)
			tr_sem_error(y->tok, "unresolved type for %s index %d", what, i + 1);
}

/* ---- histograms ------------------------------------------------------------ */

/*
 * As stap: one statistics global has one kind of histogram, so every
 * @hist_* of it must be the same (@hist_log, or @hist_linear with the
 * same range).  The second one that differs is the error.
 */
struct hist_seen {
	struct tr_vec syms, first;      /* the global, its first E_HIST */
};

static bool same_hist(const struct tr_expr *a, const struct tr_expr *b)
{
	if (a->stat_op != b->stat_op || a->args.n != b->args.n)
		return false;
	for (unsigned i = 0; i < a->args.n; i++)
		if (((struct tr_expr *)a->args.items[i])->num != ((struct tr_expr *)b->args.items[i])->num)
			return false;
	return true;
}

static void check_hist(const struct tr_expr *e, void *arg)
{
	struct hist_seen *h = arg;
	const struct tr_expr *op;
	unsigned i;

	if (e->kind != E_HIST)
		return;
	op = e->a->kind == E_INDEX ? e->a->a : e->a;
	if (op->kind != E_SYM || !op->sym || op->sym->kind != SYM_GLOBAL)
		return;
	for (i = 0; i < h->syms.n && h->syms.items[i] != op->sym; i++)
		;
	if (i == h->syms.n) {
		tr_vec_push(&h->syms, op->sym);
		tr_vec_push(&h->first, (void *)e);
	} else if (!same_hist(h->first.items[i], e)) {
		tr_sem_error(e->tok, "multiple histogram types declared on '__global_%s'", op->sym->name);
	}
}

static void check_hists(struct tr_session *s)
{
	struct hist_seen h = {0};
	struct tr_walker w = { .expr = check_hist, .arg = &h };

	for (unsigned i = 0; i < s->probes.n; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n; i++) {
		const struct tr_func *f = s->funcs.items[i];
		if (f->body)
			tr_walk_stmt(&w, f->body);
	}
	free(h.syms.items);
	free(h.first.items);
}

/* ---- the step ---------------------------------------------------------------- */

/* The types of every probe, function and global in use: 0, or -1 after
 * errors. */
int tr_elab_infer_types(struct tr_session *s)
{
	unsigned i;

	/* Types: propagate until nothing changes, then report what is left. */
	struct infer in = {0};
	for (int round = 0; round < 32; round++) {
		in.changed = false;
		infer_all(s, &in);
		if (!in.changed)
			break;
	}
	/* A local of a probe that nothing typed (never assigned, read only
	 * where any type goes: println(x), y = x) is stap's "unresolved
	 * type", after its warning.  But stap's optimizer first drops stores
	 * to locals never read (c = a), and a with them: while an untyped
	 * local is only written, the probe is let through, as a long. */
	for (i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		bool dead_store = false;
		for (unsigned k = 0; k < p->locals.n; k++) {
			const struct tr_sym *y = p->locals.items[k];
			dead_store |= y->type == T_UNKNOWN && !y->read && y->written;
		}
		const struct tr_resolved *r = p->resolved.items[0];
		for (unsigned k = 0; k < p->locals.n; k++) {
			struct tr_sym *y = p->locals.items[k];
			if (y->read && !y->written && r->others_unavailable) {
				tr_sem_error(y->tok, "variable '%s' is not available in %s: %s", y->name,
					     r->alias_pp ? r->alias_pp : r->pp, r->others_unavailable);
				continue;
			}
			if (y->read && !y->written && y->type != T_UNKNOWN)
				tr_warn(y->tok, "never-assigned local variable '%s'", y->name);
			if (y->type == T_UNKNOWN) {
				tr_warn(y->tok, "never-assigned local variable '%s'", y->name);
				/* read, or neither read nor written: delete x */
				if ((y->read || !y->written) && !dead_store)
					tr_sem_error(y->tok, "unresolved type ");  /* sic: stap's space */
				y->type = T_LONG;
			}
		}
	}
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		for (unsigned k = 0; k < f->locals.n; k++) {
			struct tr_sym *y = f->locals.items[k];
			if (y->type == T_UNKNOWN)
				y->type = T_LONG;
		}
	}
	for (int round = 0; round < 32; round++) {
		in.changed = false;
		infer_all(s, &in);
		if (!in.changed)
			break;
	}
	in.final = true;
	infer_all(s, &in);
	for (i = 0; i < s->probes.n + s->funcs.n; i++) {
		struct tr_vec *locals = i < s->probes.n ? &((struct tr_probe *)s->probes.items[i])->locals :
					&((struct tr_func *)s->funcs.items[i - s->probes.n])->locals;
		for (unsigned k = 0; k < locals->n; k++) {
			struct tr_sym *y = locals->items[k];
			if (y->type == T_STATS)
				tr_sem_error(y->tok, "stat locals not supported, missing global declaration? ");
		}
	}
	for (i = 0; i < s->globals.n; i++) {
		struct tr_sym *g = s->globals.items[i];
		if (g->type == T_UNKNOWN && g->arity <= 0 && g->arity != -2)
			g->type = T_LONG; /* declared, never used: stap says long too */
		check_resolved(g, tr_printf("global '%s'", g->name));
	}
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		for (unsigned k = 0; k < f->params.n; k++) {
			struct tr_sym *a = f->params.items[k];
			if (a->type == T_UNKNOWN)
				a->type = T_LONG;
		}
	}
	check_hists(s);
	return tr_diag.errors ? -1 : 0;
}
