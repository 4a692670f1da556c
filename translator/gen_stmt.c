/*
 * gen_stmt.c - pass 3: statements into Lua.
 *
 * Takes a bound and typed statement (pass 2) and writes its Lua into the
 * current statement list, its expressions through gen_expr.c.  Loops
 * and function entries count actions against MAXACTION; next, break,
 * continue and return leave try bodies (pcall'ed closures) with a code.
 */
#define _GNU_SOURCE
#include "gen_int.h"

#include <stdlib.h>
#include <string.h>

/* Remove the text [from, to) of the current output (lines emitted earlier
 * that turned out unneeded). */
void tr_gen_cut(struct gen *g, size_t from, size_t to)
{
	memmove(g->out->data + from, g->out->data + to, g->out->len - to + 1);
	g->out->len -= to - from;
}

/* A statement's effects and temporaries in their own Lua block. */
static void block_open(struct gen *g)
{
	tr_gen_line(g, "do");
	g->indent++;
}

static void block_close(struct gen *g)
{
	g->indent--;
	tr_gen_line(g, "end");
}

static void ret_default(struct gen *g)
{
	if (g->func)
		tr_gen_line(g, "rt_unnest()");
}

static void control(struct gen *g, int code, const char *value)
{
	/* Inside a try body (a pcall'ed closure) leave with a code. */
	if (g->try_depth && (code <= 2 || g->loop_depth <= g->loop_at_try)) {
		tr_gen_line(g, "do return %d%s%s end", code, value ? ", " : "", value ? value : "");
		return;
	}
	switch (code) {
	case 1:
		/* the value first: a call in it (return f(n - 1)) is still
		 * nested in this function, as stap counts it */
		if (g->func && value) {
			unsigned t = ++g->tmp;
			tr_gen_line(g, "local rv%u = %s", t, value);
			value = tr_printf("rv%u", t);
		}
		ret_default(g);
		tr_gen_line(g, "do return %s end", value ? value : "");
		break;
	case 2:
		/* next in a procfs read probe: the value so far is the file's */
		if (!g->func && g->rp && g->rp->kind == P_PROCFS && !g->rp->procfs_write)
			tr_gen_line(g, "do return a1 end");
		else
			tr_gen_line(g, "do return end");
		break;
	case 3:
		tr_gen_line(g, "do break end");
		break;
	case 4:
		tr_gen_line(g, "goto c%u", g->cont_label[g->loop_depth - 1]);
		break;
	}
}

/* Statements of a body, loops counted once (their own bodies count at
 * each of their iterations). */
static unsigned stmt_count(const struct tr_stmt *st)
{
	unsigned n = 0;

	if (!st)
		return 0;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			n += stmt_count(st->list.items[i]);
		return n;
	case S_IF:
		return 1 + stmt_count(st->body) + stmt_count(st->els);
	case S_TRY:
		return 1 + stmt_count(st->body) + stmt_count(st->els);
	case S_NULL:
		return 0;
	default:
		return 1;
	}
}

/*
 * MAXACTION: the generated code counts (rt.count_actions), which costs a
 * subtraction where Lua's count hook would slow every VM instruction.
 * Only loops and function calls can make a handler long, so the count
 * is taken at each iteration (the body's statements, and the loop's own)
 * and at each function entry.
 */
void tr_gen_count_actions(struct gen *g, unsigned n, const struct tr_token *t)
{
	g->uses_act = true;
	tr_gen_line(g, "act = act - %u if act < 0 then rt_maxaction(%s) end", n ? n : 1, tr_lua_loc(t));
}

static void loop_body(struct gen *g, struct tr_stmt *body, unsigned label)
{
	tr_gen_count_actions(g, 1 + stmt_count(body), body ? body->tok : NULL);
	if (g->loop_depth < 64)
		g->cont_label[g->loop_depth] = label;
	g->loop_depth++;
	block_open(g);
	tr_gen_stmt(g, body);
	block_close(g);
	g->loop_depth--;
	tr_gen_line(g, "::c%u::", label);
}

/* The aggregate ordering an array of statistics (Map:each): stap's runtime
 * sorts on @count @sum @min @max @avg, and @variance as @count. */
static const char *sort_aggr_name(int op)
{
	return op == ST_VARIANCE ? "count" : tr_gen_stat_method(op);
}

static void foreach_stmt(struct gen *g, struct tr_stmt *st)
{
	unsigned label = ++g->tmp;
	struct tr_buf vars = {0};
	const char *limit = "nil", *pattern = "";

	block_open(g);
	/* stap's order: a slice's indexes, then the limit, each once */
	if (st->base->kind == E_INDEX)
		pattern = tr_printf(", {%s}", tr_gen_slice_args(g, &st->base->args));
	if (st->limit) {
		limit = tr_printf("lim%u", label);
		tr_gen_line(g, "local %s = %s", limit, tr_gen_expr(g, st->limit));
	}
	for (unsigned i = 0; i < st->keys.n; i++)
		tr_buf_printf(&vars, "%sk%u_%u", i ? ", " : "", label, i);
	tr_buf_printf(&vars, ", v%u", label);
	if (st->base->kind == E_HIST) {
		const char *stv = tr_gen_stat_of(g, st->base->a);
		tr_gen_line(g, "local n%u = 0", label);
		tr_gen_line(g, "for %s in %s:buckets() do", tr_buf_str(&vars), stv);
		g->indent++;
		tr_gen_line(g, "n%u = n%u + 1", label, label);
		if (st->limit)
			tr_gen_line(g, "if n%u > %s then break end", label, limit);
	} else {
		struct tr_sym *a = st->base->sym;
		const char *col = st->sort_col < 0 ? "0" : st->sort_col ? tr_printf("%d", st->sort_col) : "nil";
		tr_gen_line(g, "for %s in %s:each(%s, %d, %s%s%s) do", tr_buf_str(&vars), tr_gen_sym_name(g, a), col,
		     st->sort_dir ? st->sort_dir : 1, limit,
		     a->type == T_STATS ? tr_printf(", \"%s\"", sort_aggr_name(st->sort_aggr)) :
		     *pattern ? ", nil" : "", pattern);
		g->indent++;
	}
	for (unsigned i = 0; i < st->keys.n; i++) {
		struct tr_expr *k = st->keys.items[i];
		tr_gen_line(g, "%s = k%u_%u", tr_gen_sym_name(g, k->sym), label, i);
	}
	if (st->value)
		tr_gen_line(g, "%s = v%u", tr_gen_sym_name(g, st->value->sym), label);
	loop_body(g, st->body, label);
	g->indent--;
	tr_gen_line(g, "end");
	block_close(g);
}

static void try_stmt(struct gen *g, struct tr_stmt *st)
{
	unsigned n = ++g->tmp;
	int saved_loop = g->loop_at_try;

	block_open(g);
	/* an error leaves the try body with the calls it unwound still
	 * counted in stap's nesting: back to the depth at the try */
	tr_gen_line(g, "local d%u = rt.nesting()", n);
	tr_gen_line(g, "local ok%u, r%u, v%u = pcall(function()", n, n, n);
	g->indent++;
	g->try_depth++;
	g->closures++;
	g->loop_at_try = g->loop_depth;
	tr_gen_stmt(g, st->body);
	g->closures--;
	g->try_depth--;
	g->loop_at_try = saved_loop;
	g->indent--;
	tr_gen_line(g, "end)");
	tr_gen_line(g, "if not ok%u then", n);
	g->indent++;
	tr_gen_line(g, "local m%u = rt.catch(r%u)", n, n);
	tr_gen_line(g, "rt.nesting(d%u)", n);
	if (st->catch_var && st->catch_var->sym)
		tr_gen_line(g, "%s = m%u", tr_gen_sym_name(g, st->catch_var->sym), n);
	tr_gen_stmt(g, st->els);
	g->indent--;
	/* Leave the try body's closure as its return/next/break/continue asked. */
	tr_gen_line(g, "elseif r%u == 1 then", n);
	g->indent++;
	control(g, 1, tr_printf("v%u", n));
	g->indent--;
	tr_gen_line(g, "elseif r%u == 2 then", n);
	g->indent++;
	control(g, 2, NULL);
	g->indent--;
	if (g->loop_depth > 0) {
		tr_gen_line(g, "elseif r%u == 3 then", n);
		g->indent++;
		control(g, 3, NULL);
		g->indent--;
		tr_gen_line(g, "elseif r%u == 4 then", n);
		g->indent++;
		control(g, 4, NULL);
		g->indent--;
	}
	tr_gen_line(g, "end");
	block_close(g);
}

static void delete_stmt(struct gen *g, struct tr_stmt *st)
{
	struct tr_expr *e = st->e;

	if (e->kind == E_SYM && e->sym) {
		struct tr_sym *y = e->sym;
		if (y->arity > 0 || y->type == T_STATS)
			tr_gen_line(g, "%s:clear()", tr_gen_sym_name(g, y));
		else
			tr_gen_line(g, "%s = %s", tr_gen_sym_name(g, y), tr_gen_zero_of(y->type));
		return;
	}
	if (e->kind == E_INDEX && e->sym) {
		if (e->wildcard_index) {
			struct tr_buf b = {0};
			for (unsigned i = 0; i < e->args.n; i++)
				tr_buf_printf(&b, "%s%s", i ? ", " : "",
					      e->args.items[i] ? tr_gen_expr(g, e->args.items[i]) : "rt.ANY");
			tr_gen_line(g, "%s:delete_match(%s)", tr_gen_sym_name(g, e->sym), tr_buf_str(&b));
		} else {
			tr_gen_line(g, "%s:delete(%s)", tr_gen_sym_name(g, e->sym), tr_gen_key_of(g, e->sym, &e->args));
		}
		return;
	}
	tr_sem_error(st->tok, "delete needs a variable, an array or an array element");
}

/* Lua gives a function at most 200 locals (parameters included) and the
 * generated code needs some of its own: a handler or function with more
 * gets a semantic error rather than Lua's at load. */
#define LUA_LOCALS_MAX 180

void tr_gen_check_locals(const struct tr_token *at, unsigned n)
{
	if (n > LUA_LOCALS_MAX)
		tr_sem_error(at, "too many parameters and local variables to translate (%u, at most %d)",
			     n, LUA_LOCALS_MAX);
}

void tr_gen_declare_locals(struct gen *g, struct tr_vec *locals)
{
	for (unsigned i = 0; i < locals->n; i++) {
		struct tr_sym *y = locals->items[i];
		tr_gen_line(g, "local l_%s = %s", y->name, tr_gen_zero_of(y->type));
	}
}

static void collect_local(const struct tr_expr *e, void *arg)
{
	struct tr_vec *used = arg;

	if (!e->sym || e->sym->kind != SYM_LOCAL)
		return;
	for (unsigned i = 0; i < used->n; i++)
		if (used->items[i] == e->sym)
			return;
	tr_vec_push(used, e->sym);
}

/* The walk of a branch stops at the branches inside it (they declare their own) */
static bool outside_inner_branches(const struct tr_stmt *st, void *arg)
{
	const struct tr_stmt *branch = ((void **)arg)[1];

	return st == branch || !st->own_locals;
}

static void collect_branch_local(const struct tr_expr *e, void *arg)
{
	collect_local(e, ((void **)arg)[0]);
}

/* A merged probe's branch (tr_stmt.own_locals): the probe's locals it
 * uses, declared at its start, inside the branch's "if": Lua counts only
 * the locals in scope, and the branches never run together.  (The block
 * around a merged probe's search, which keeps its selector's value, is a
 * branch too, holding the others.) */
void tr_gen_branch_locals(struct gen *g, const struct tr_stmt *branch)
{
	struct tr_vec used = {0};
	void *arg[2] = { &used, (void *)branch };
	struct tr_walker w = { .stmt = outside_inner_branches, .expr = collect_branch_local, .arg = arg };

	tr_walk_stmt(&w, branch);
	tr_gen_check_locals(branch->tok, used.n + (g->rp ? g->rp->fields.n : 0));
	tr_gen_declare_locals(g, &used);
	free(used.items);
}

void tr_gen_stmt(struct gen *g, struct tr_stmt *st)
{
	if (!st || !tr_gen_nest_ok(g, st->tok))
		return;
	switch (st->kind) {
	case S_BLOCK:
		if (st->own_locals)
			tr_gen_branch_locals(g, st);
		for (unsigned i = 0; i < st->list.n; i++)
			tr_gen_stmt(g, st->list.items[i]);
		return;
	case S_NULL:
		return;
	case S_EXPR: {
		struct tr_expr *e = st->e;
		block_open(g);
		const char *v = tr_gen_expr(g, e);
		/* A Lua statement must be a call: keep calls, drop plain values. */
		if (e->kind == E_CALL || e->kind == E_PRINT || e->kind == E_STAT || e->kind == E_HIST ||
		    (e->kind == E_INDEX && e->a->kind != E_SYM) || e->kind == E_BIN)
			tr_gen_line(g, "local _ = %s", v);
		block_close(g);
		return;
	}
	case S_IF: {
		/* a block of its own only for the condition's temporaries:
		 * nested ifs (a merged binary search over system calls) stay
		 * one Lua level each, within the kernel parser's C depth */
		size_t mark = g->out->len, body;
		const char *c;
		bool bare;

		block_open(g);
		body = g->out->len;
		c = tr_gen_cond(g, st->e);
		bare = g->out->len == body;
		if (bare) {
			g->out->len = mark;
			g->out->data[mark] = '\0';
			g->indent--;
		}
		tr_gen_line(g, "if %s then", c);
		g->indent++;
		tr_gen_stmt(g, st->body);
		g->indent--;
		/* "else if" as Lua's elseif while the condition needs no
		 * statements: a long else-if chain stays one Lua level deep. */
		while (st->els && st->els->kind == S_IF) {
			size_t mark = g->out->len;
			const char *c = tr_gen_cond(g, st->els->e);
			if (g->out->len != mark) {
				g->out->len = mark;
				g->out->data[mark] = '\0';
				break;
			}
			st = st->els;
			tr_gen_line(g, "elseif %s then", c);
			g->indent++;
			tr_gen_stmt(g, st->body);
			g->indent--;
		}
		if (st->els) {
			tr_gen_line(g, "else");
			g->indent++;
			tr_gen_stmt(g, st->els);
			g->indent--;
		}
		tr_gen_line(g, "end");
		if (!bare)
			block_close(g);
		return;
	}
	case S_FOR: {
		unsigned label = ++g->tmp;
		block_open(g);
		if (st->e) {
			block_open(g);
			tr_gen_expr(g, st->e);
			block_close(g);
		}
		tr_gen_line(g, "while true do");
		g->indent++;
		if (st->e2)
			tr_gen_line(g, "if not %s then break end", tr_gen_cond(g, st->e2));
		loop_body(g, st->body, label);
		if (st->e3) {
			block_open(g);
			tr_gen_expr(g, st->e3);
			block_close(g);
		}
		g->indent--;
		tr_gen_line(g, "end");
		block_close(g);
		return;
	}
	case S_FOREACH:
		foreach_stmt(g, st);
		return;
	case S_RETURN:
		if (st->e) {
			block_open(g);
			control(g, 1, tr_gen_expr(g, st->e));
			block_close(g);
		} else {
			control(g, 1, g->func ? tr_gen_zero_of(g->func->type) : NULL);
		}
		return;
	case S_NEXT:
		control(g, 2, NULL);
		return;
	case S_BREAK:
		control(g, 3, NULL);
		return;
	case S_CONTINUE:
		control(g, 4, NULL);
		return;
	case S_DELETE:
		block_open(g);
		delete_stmt(g, st);
		block_close(g);
		return;
	case S_TRY:
		try_stmt(g, st);
		return;
	case S_EMBED:
		g->uses_act = g->uses_pp = true;
		tr_gen_line(g, "do %s end", st->code);
		return;
	}
}

