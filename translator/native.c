/*
 * native.c - marker handlers that a traced process runs without Lua.
 *
 * The commonest marker handlers only count: c[tid()]++, n++,
 * bytes[$fd] += $count, lat[tid()] <<< $ns, if ($fd > 2) opens++.  When every statement of a
 * marker probe adds a constant, a marker argument or a context value (tid
 * pid cpu) to a long global, or gives one to a statistics global without
 * histograms (<<<), scalar or array with keys from the same sources, and no
 * code the traced processes run reads those globals, the probe gets a plan
 * besides its Lua handler:
 *
 *     rt.native("probe_3", "1 #1 tid;2 a2 a1", {[1] = "operator '++' at ..."})
 *
 * libmarktap-script.so then adds into per-thread tables at the hit, with no
 * lock and no Lua call, and folds the tables into the globals before each
 * exchange with marktap (runtime/lua/API.md, "Native handlers"); so does
 * marktap.ko for kernel markers.  The plan's format, its limits and its
 * parser: runtime/core/mt_plan.h.  A guard is an if around the statement,
 * or an "if (c) next" before it, negated.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "mt_plan.h"
#include "tr.h"

/* The globals process-side code uses otherwise than by a native add. */
struct used {
	struct tr_session *s;
	struct tr_vec syms;
};

static bool is_used(const struct used *u, const struct tr_sym *y)
{
	for (unsigned i = 0; i < u->syms.n; i++)
		if (u->syms.items[i] == y)
			return true;
	return false;
}

static void use(struct used *u, struct tr_sym *y)
{
	if (y && y->kind == SYM_GLOBAL && !is_used(u, y))
		tr_vec_push(&u->syms, y);
}

/* The source of minus a value source: "#-5", "-a2", "a2"; NULL if none. */
static const char *negated(const char *src)
{
	if (!src)
		return NULL;
	if (src[0] == MT_PLAN_CONST) {
		long long v = strtoll(src + 1, NULL, 10);
		return v == LLONG_MIN ? NULL : tr_printf("%c%lld", MT_PLAN_CONST, -v);
	}
	if (src[0] == MT_PLAN_ARG)
		return tr_printf("%c%s", MT_PLAN_NEG, src);
	if (src[0] == MT_PLAN_NEG)
		return src + 1;
	return NULL;
}

/* A source of a value or key: "#5", "a2", "-a2", "tid"; NULL if none. */
static const char *source(const struct tr_expr *e, bool value)
{
	const char *d;

	switch (e->kind) {
	case E_NUM:
		return tr_printf("%c%lld", MT_PLAN_CONST, (long long)e->num);
	case E_UNARY:
		return value && !strcmp(e->op, "-") ? negated(source(e->a, true)) : NULL;
	case E_TARGET:
		if (e->kread)   /* kernel reads (btf.c): Lua's */
			return NULL;
		if (e->target_arg > 0 && e->type == T_LONG)
			return tr_printf("%c%d", MT_PLAN_ARG, e->target_arg);
		if (!value && e->target_arg > 0 && e->type == T_STRING)
			return tr_printf("%c%d", MT_PLAN_STR, e->target_arg);   /* a key only */
		return NULL;
	case E_CALL:
		if (e->args.n || !e->func || !(d = tr_lua_direct_call(e->func)))
			return NULL;
		if (!strcmp(d, "rt.tid"))
			return MT_PLAN_TID;
		if (!strcmp(d, "rt.pid"))
			return MT_PLAN_PID;
		if (!strcmp(d, "rt.cpu"))
			return MT_PLAN_CPU;
		if (!value && !strcmp(d, "rt.execname"))
			return MT_PLAN_EXECNAME;   /* a string, as a key */
		return NULL;
	default:
		return NULL;
	}
}

/* One statement as a native add: "GLOBAL VALUE KEY..." and the global. */
static const char *add_op(struct tr_session *s, const struct tr_stmt *st, struct tr_sym **gp)
{
	const struct tr_expr *e = st->e, *lhs;
	const char *val;
	struct tr_sym *y;
	struct tr_buf b = {0};
	unsigned gi;
	bool stat = false;

	if (st->kind != S_EXPR || !e)
		return NULL;
	if (e->kind == E_PRE || e->kind == E_POST) {
		val = e->op[0] == '+' ? "#1" : "#-1";
	} else if (e->kind == E_ASSIGN && !strcmp(e->op, "+=")) {
		val = source(e->b, true);
	} else if (e->kind == E_ASSIGN && !strcmp(e->op, "<<<")) {
		val = source(e->b, true);
		stat = true;
	} else if (e->kind == E_ASSIGN && !strcmp(e->op, "-=")) {
		val = negated(source(e->b, true));
	} else {
		return NULL;
	}
	lhs = e->a;
	if (!val || !lhs || (lhs->kind != E_SYM && lhs->kind != E_INDEX))
		return NULL;
	y = lhs->sym;
	if (!y || y->kind != SYM_GLOBAL || y->type != (stat ? T_STATS : T_LONG))
		return NULL;
	/* (each answer walks the whole script: asked once per global, since a
	 * merged probe.* may hold hundreds of adds to one) */
	if (stat && !y->stats_kind)
		y->stats_kind = tr_stats_has_hist(s, y) || tr_stats_has_variance(s, y) ? 2 : 1;
	if (stat && y->stats_kind == 2)
		return NULL;   /* its buckets and its variance are Lua's to count */
	if (lhs->kind == E_SYM ? y->arity != 0 : (y->arity < 1 || (unsigned)y->arity != lhs->args.n ||
						  lhs->args.n > MT_PLAN_KEYS))
		return NULL;
	for (gi = 0; gi < s->globals.n && s->globals.items[gi] != y; gi++)
		;
	if (gi == s->globals.n)
		return NULL;
	if (stat)
		tr_buf_printf(&b, "%c", MT_PLAN_STATS);
	tr_buf_printf(&b, "%u%c%s", gi + 1, MT_PLAN_TOKEN_SEP, val);
	for (unsigned k = 0; lhs->kind == E_INDEX && k < lhs->args.n; k++) {
		const char *src = source(lhs->args.items[k], false);
		if (!src || !y->index_types ||
		    y->index_types[k] != (*src == MT_PLAN_STR ? T_STRING : T_LONG)) {
			free(b.data);
			return NULL;
		}
		tr_buf_printf(&b, "%c%s", MT_PLAN_TOKEN_SEP, src);
	}
	*gp = y;
	return tr_buf_str(&b);
}

/* Walking process-side code: every global it uses, except in native adds. */
static bool not_add(const struct tr_stmt *st, void *arg)
{
	struct used *u = arg;
	struct tr_sym *y;

	return add_op(u->s, st, &y) == NULL;
}

static void use_expr(const struct tr_expr *e, void *arg)
{
	use(arg, e->sym);
}

static bool process_side(const struct tr_probe *p)
{
	for (unsigned k = 0; k < p->resolved.n; k++) {
		const struct tr_resolved *r = p->resolved.items[k];
		if (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL)
			return true;
	}
	return false;
}

/* The statements of a body, blocks flattened; false if one is no add. */
/* "?a1>#2 ": the guard of an if's condition (negated for its else, or for
 * the rest of a block after "if (c) next"); NULL if it is no comparison of
 * two sources. */
static const char *guard_of(const struct tr_expr *c, bool negate)
{
	static const char *const ops[] = { "==", "!=", "<", ">=", ">", "<=" };
	static const char codes[] = {   /* pairs: an op and its negation */
		MT_PLAN_EQ, MT_PLAN_NE, MT_PLAN_LT, MT_PLAN_GE, MT_PLAN_GT, MT_PLAN_LE
	};
	const char *l, *r;

	if (!c || c->kind != E_CMP || !c->a || !c->b || c->a->type != T_LONG || c->b->type != T_LONG)
		return NULL;
	for (unsigned i = 0; i < 6; i++) {
		if (strcmp(c->op, ops[i]))
			continue;
		l = source(c->a, true);
		r = source(c->b, true);
		if (!l || !r)
			return NULL;
		return tr_printf("%c%s%c%s%c", MT_PLAN_GUARD, l, codes[negate ? i ^ 1 : i], r,
				 MT_PLAN_TOKEN_SEP);
	}
	return NULL;
}

static bool is_next(const struct tr_stmt *st)
{
	while (st && st->kind == S_BLOCK && st->list.n == 1)
		st = st->list.items[0];
	return st && st->kind == S_NEXT;
}

/* The statements of a body as native operations, each after the guards of
 * the ifs around it; false if one is no native add. */
static bool collect(struct tr_session *s, const struct tr_stmt *st, const struct used *u,
		    struct tr_buf *plan, struct tr_buf *where, unsigned *nops, const char *guards,
		    bool top)
{
	struct tr_sym *y;
	const char *op, *g, *global;

	if (!st || st->kind == S_NULL)
		return true;
	if (st->kind == S_BLOCK) {
		for (unsigned i = 0; i < st->list.n; i++) {
			const struct tr_stmt *it = st->list.items[i];
			if (it->kind == S_NEXT)
				return top;   /* the rest never runs */
			if (it->kind == S_IF && !it->els && is_next(it->body)) {
				/* if (c) next; : what follows runs when !c */
				if (!(g = guard_of(it->e, true)))
					return false;
				guards = tr_printf("%s%s", guards, g);
				continue;
			}
			if (!collect(s, it, u, plan, where, nops, guards, false))
				return false;
		}
		return true;
	}
	if (st->kind == S_IF) {
		if (!(g = guard_of(st->e, false)) ||
		    !collect(s, st->body, u, plan, where, nops, tr_printf("%s%s", guards, g), false))
			return false;
		return !st->els || collect(s, st->els, u, plan, where, nops,
					   tr_printf("%s%s", guards, guard_of(st->e, true)), false);
	}
	op = add_op(s, st, &y);
	if (!op || is_used(u, y) || ++*nops > MT_PLAN_OPS)
		return false;
	if (plan->len)
		tr_buf_printf(plan, "%c", MT_PLAN_OP_SEP);
	tr_buf_printf(plan, "%s%s", guards, op);
	global = op + (*op == MT_PLAN_STATS);   /* its number, up to the value */
	tr_buf_printf(where, "%s[%.*s] = %s", where->len ? ", " : "",
		      (int)(strchr(global, MT_PLAN_TOKEN_SEP) - global), global, tr_lua_loc(st->e->tok));
	return true;
}

void tr_native_plans(struct tr_session *s)
{
	struct used u = { .s = s };
	struct tr_walker w = { not_add, use_expr, &u };
	int64_t maxaction = tr_define_value(s, "MAXACTION", 1000);

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		if (!process_side(p))
			continue;
		tr_walk_stmt(&w, p->body);
		for (unsigned k = 0; k < p->resolved.n; k++)
			tr_walk_expr(&w, ((struct tr_resolved *)p->resolved.items[k])->cond);
	}
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		tr_walk_stmt(&w, f->body);
	}
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_buf plan = {0}, where = {0};
		unsigned nops = 0;
		bool cond = false;

		p->native_plan = p->native_where = NULL;
		if (!process_side(p))
			continue;
		for (unsigned k = 0; k < p->resolved.n; k++)
			cond |= ((struct tr_resolved *)p->resolved.items[k])->cond != NULL;
		if (!cond && collect(s, p->body, &u, &plan, &where, &nops, "", true) && nops &&
		    (maxaction < 0 || nops <= maxaction)) {
			p->native_plan = tr_buf_str(&plan);
			p->native_where = tr_buf_str(&where);
		}
	}
	free(u.syms.items);
}
