/*
 * gen_expr.c - pass 3: expressions into Lua.
 *
 * Takes a bound and typed expression (pass 2) and gives the Lua text of
 * its value, after emitting, before the statement being written, the
 * statements its side effects need.  Lua has no assignment expressions,
 * so an expression with side effects (x++, a[k] = v inside a condition)
 * is flattened: its effects become statements, and an operand evaluated
 * before such effects is first saved in a temporary, so stap's
 * left-to-right order holds.  && || ?: evaluate their right side only
 * when needed, with the right side's effects inside an "if".
 */
#define _GNU_SOURCE
#include "gen_int.h"
#include "tr_elab.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Lua's parser stops near 200 nested blocks and expressions ("C stack
 * overflow" when the chunk loads): a script nested deeper gets a semantic
 * error at its place instead.  A block costs one Lua level, an operand
 * about two. */
#define LUA_NEST_MAX 180
/* From this length on, a chain of one kind of operator (1+1+...+1) is
 * computed in a local, one operator per statement, not as a Lua
 * expression as deep as the chain. */
#define CHAIN_FLAT 16

/* Evaluate a then b; if b emitted statements, a is saved first. */
static void pair(struct gen *g, struct tr_expr *ea, struct tr_expr *eb, const char **a, const char **b)
{
	*a = tr_gen_expr(g, ea);
	size_t mark = g->out->len;
	*b = tr_gen_expr(g, eb);
	if (g->out->len != mark && ea->kind != E_NUM && ea->kind != E_STR) {
		/* Save a's value before b's side effects. */
		char *after = tr_strdup(g->out->data + mark);
		const char *t = tr_gen_tmp(g);
		g->out->len = mark;
		g->out->data[mark] = '\0';
		tr_gen_line(g, "local %s = %s", t, *a);
		tr_buf_puts(g->out, after);
		*a = t;
	}
}

const char *tr_gen_key_of(struct gen *g, struct tr_sym *y, struct tr_vec *args)
{
	struct tr_buf b = {0};
	const char **v = tr_alloc(sizeof(char *) * (args->n + 1));

	for (unsigned i = 0; i < args->n; i++) {
		size_t mark = g->out->len;
		v[i] = tr_gen_expr(g, args->items[i]);
		if (i + 1 < args->n || g->out->len != mark) {
			/* Keep evaluation order when later indexes have effects. */
			if (args->n > 1) {
				const char *t = tr_gen_tmp(g);
				tr_gen_line(g, "local %s = %s", t, v[i]);
				v[i] = t;
			}
		}
	}
	if (args->n == 1)
		return v[0];
	tr_buf_printf(&b, "%s:key(", tr_gen_sym_name(g, y));
	for (unsigned i = 0; i < args->n; i++)
		tr_buf_printf(&b, "%s%s", i ? ", " : "", v[i]);
	tr_buf_putc(&b, ')');
	return tr_buf_str(&b);
}

/* A slice's indexes in order, rt.ANY for '*': "k1, rt.ANY". */
const char *tr_gen_slice_args(struct gen *g, struct tr_vec *args)
{
	struct tr_buf b = {0};

	for (unsigned i = 0; i < args->n; i++) {
		const char *v = "rt.ANY";
		if (args->items[i]) {
			v = tr_gen_expr(g, args->items[i]);
			if (i + 1 < args->n) { /* read before later indexes' effects */
				const char *t = tr_gen_tmp(g);
				tr_gen_line(g, "local %s = %s", t, v);
				v = t;
			}
		}
		tr_buf_printf(&b, "%s%s", i ? ", " : "", v);
	}
	return tr_buf_str(&b);
}

/* The reads btf.c compiled for a kernel value: rt.kernel_read in the
 * module; a subscript by an expression of args moves the address by
 * rt.kernel_index's offset (mt_rt.lua: the index checked). */
static const char *kernel_reads(struct gen *g, const char *v, const char *steps, const struct tr_vec *args,
				const struct tr_token *tok)
{
	long off;
	unsigned size, sign, shift, bits, k, count;
	int used;

	if (sscanf(steps, "T:%u:%u;", &size, &sign) == 2) {   /* a register cut to its type */
		unsigned long long mask = (1ULL << (size * 8)) - 1, top = 1ULL << (size * 8 - 1);
		if (!sign)
			return tr_printf("(%s & %#llx)", v, mask);
		return tr_printf("(((%s & %#llx) ~ %#llx) - %#llx)", v, mask, top, top);
	}
	if (!strncmp(steps, "K;", 2)) {   /* a task value: its task_struct (btf.c) */
		v = tr_printf("rt.task_addr(%s)", v);
		steps += 2;
	}
	for (;;) {
		if (sscanf(steps, "I:%u:%ld:%u;%n", &k, &off, &count, &used) == 3 && k < args->n) {
			struct tr_expr *ix = args->items[k];
			v = tr_printf("(%s + rt.kernel_index(%s, %ld, %u, %s))", v, tr_gen_expr(g, ix), off, count,
				      tr_lua_loc(ix->tok));
			steps += used;
			continue;
		}
		if (sscanf(steps, "%ld:%u:%u:%u:%u;%n", &off, &size, &sign, &shift, &bits, &used) != 5)
			break;
		v = off ? tr_printf("(%s + %ld)", v, off) : v;
		if (size)
			v = tr_printf("rt.kernel_read(%s, %u, %s, %s)", v, size, sign ? "true" : "false", tr_lua_loc(tok));
		if (bits)
			v = tr_printf("((%s >> %u) & %#llx)", v, shift, (unsigned long long)((1ULL << bits) - 1));
		steps += used;
	}
	return v;
}

/* $$parms, $$vars, $$return of a kernel function (btf.c) */
static const char *kfunc_vars(struct gen *g, struct tr_expr *e)
{
	struct tr_resolved *r = g->rp;
	struct tr_buf f = {0}, a = {0};
	const char *name;

	if (e->target_arg == -7) {
		tr_gen_reads_params(g, 2 + r->fields.n);
		return tr_printf("rt_sprintf(\"return=%%#x\", a%u)", r->fields.n);
	}
	for (unsigned i = 0; (name = tr_btf_param_name(r, i)) != NULL; i++) {
		tr_buf_printf(&f, "%s%s=%%#x", i ? " " : "", name);
		tr_buf_printf(&a, ", a%u", i + 1);
		tr_gen_reads_params(g, 2 + i + 1);
	}
	return tr_printf("rt_sprintf(\"%s\"%s)", tr_buf_str(&f), tr_buf_str(&a));
}

/* A pretty-printed kernel value: btf_var.c's pieces as one format and
 * its reads, each from field a<param>, or from base (a struct's address) */
static void pretty(struct gen *g, const struct tr_expr *e, const struct tr_vec *pieces, const char *base,
		   struct tr_buf *f, struct tr_buf *a)
{
	for (unsigned i = 0; i < pieces->n; i++) {
		const struct tr_pretty *pc = pieces->items[i];
		const char *v = NULL;

		if (pc->kind == 'L') {   /* (a member's name and punctuation: no '%') */
			tr_buf_puts(f, pc->text);
			continue;
		}
		if (!base)
			tr_gen_reads_params(g, 2 + (unsigned)pc->param);
		v = kernel_reads(g, base ? base : tr_printf("a%d", pc->param), pc->steps ? pc->steps : "",
				 &e->args, e->tok);
		switch (pc->kind) {
		case 'n': tr_buf_puts(f, "%d"); break;
		case 'u': tr_buf_puts(f, "%u"); break;
		case 'p': tr_buf_puts(f, "%#x"); break;
		case 's': case 'c':
			tr_buf_puts(f, "%s");
			v = tr_printf("rt.pretty_kstring(%s)", v);
			break;
		default: {   /* 'S', 'A': a struct, from its address */
			struct tr_buf mf = {0}, ma = {0};
			pretty(g, e, &pc->members, "p", &mf, &ma);
			tr_buf_puts(f, "%s");
			v = tr_printf("(function(p) %sreturn rt_sprintf(%s%s) end)(%s)",
				      pc->kind == 'S' ? "if p == 0 then return \"0x0\" end " : "",
				      tr_lua_plain(tr_buf_str(&mf)), ma.len ? tr_buf_str(&ma) : "", v);
		}
		}
		tr_buf_printf(a, ", %s", v);
	}
}

static const char *target(struct gen *g, struct tr_expr *e)
{
	struct tr_resolved *r = g->rp;

	if (e->target_arg == TR_TARGET_ENTRY) {   /* kept at the call (gen.c) */
		unsigned k = 0;
		while (k < g->entries.n && g->entries.items[k] != e)
			k++;
		return tr_printf("ev[%u]", k + 1);
	}
	if (e->target_arg == TR_TARGET_PRETTY) {
		struct tr_buf f = {0}, a = {0};
		pretty(g, e, &e->pretty, NULL, &f, &a);
		return tr_printf("rt_sprintf(%s%s)", tr_lua_plain(tr_buf_str(&f)), a.len ? tr_buf_str(&a) : "");
	}
	if (e->kread && e->a)   /* @cast(p, "T")->m */
		return kernel_reads(g, tr_gen_expr(g, e->a), e->kread, &e->args, e->tok);
	if (r && r->kfunc && (e->target_arg == -3 || e->target_arg == -7))
		return kfunc_vars(g, e);
	if (e->kread) {
		tr_gen_reads_params(g, 2 + (unsigned)e->target_arg);
		return kernel_reads(g, tr_printf("a%d", e->target_arg), e->kread, &e->args, e->tok);
	}
	if (e->target_arg > 0)
		tr_gen_reads_params(g, 2 + (unsigned)e->target_arg);
	else if (e->target_arg == -1 || e->target_arg == -2)
		tr_gen_reads_params(g, 2);
	else if (e->target_arg == -3)
		tr_gen_reads_params(g, 2 + (r ? r->fields.n - r->ctx_fields : 0));
	switch (e->target_arg) {
	case TR_TARGET_SYSCALL: {   /* from the registers saved at the call (marktap.ko) */
		const char *v = tr_printf("rt.syscall_arg(%d)", (int)(e->num / 4));
		return e->num % 4 == 1 ? tr_printf("((%s & 0xffffffff ~ 0x80000000) - 0x80000000)", v) :
		       e->num % 4 == 2 ? tr_printf("(%s & 0xffffffff)", v) : v;
	}
	case -1:
		return "mk_name";
	case -2:
		return "mk_fmt";
	case -4:
		return r && r->provider ? tr_lua_plain(r->provider) : "\"marktap\"";
	case -6:    /* @kregister(N), @uregister(N): no registers here (elab_bind.c) */
		return tr_printf("rt.error(%s)", tr_lua_plain(tr_printf("%s: marktap's handlers get no registers", e->str)));
	case -5:    /* @perf("C"): marktap opens no perf counters (check_runnable) */
		return tr_printf("rt.error(%s)", tr_lua_plain(tr_printf("%s: marktap opens no perf counters", e->str)));
	case -3: {
		struct tr_buf f = {0}, a = {0};
		for (unsigned i = 0; r && i < r->fields.n - r->ctx_fields; i++) {   /* $ctx_*: not parms */
			bool str = (enum tr_type)(intptr_t)r->field_types.items[i] == T_STRING;
			tr_buf_printf(&f, "%s%s=%s", i ? " " : "", (const char *)r->fields.items[i],
				      str ? "\\\"%s\\\"" : "%#x");
			tr_buf_printf(&a, ", a%u", i + 1);
		}
		return tr_printf("rt_sprintf(\"%s\"%s)", tr_buf_str(&f), tr_buf_str(&a));
	}
	default:
		if (e->type == T_STRING)
			return tr_printf("rt_trunc(a%d)", e->target_arg);
		return tr_printf("a%d", e->target_arg);
	}
}

const char *tr_gen_stat_of(struct gen *g, struct tr_expr *op)
{
	if (op->kind == E_SYM)
		return tr_gen_sym_name(g, op->sym);
	return tr_printf("%s:get(%s)", tr_gen_sym_name(g, op->sym), tr_gen_key_of(g, op->sym, &op->args));
}

static const char *const stat_methods[] = { "count", "sum", "min", "max", "avg", "variance" };

/* The runtime's method for a statistics operator (enum tr_stat_op). */
const char *tr_gen_stat_method(int op)
{
	return stat_methods[op];
}

/* The Lua of "a OP b" for an arithmetic or bitwise operator e. */
static const char *binop_text(const struct tr_expr *e, const char *a, const char *b)
{
	const char *op = e->op;

	if (!strcmp(op, "/"))
		return tr_printf("rt_div(%s, %s, %s)", a, b, tr_lua_loc(e->tok));
	if (!strcmp(op, "%"))
		return tr_printf("rt_mod(%s, %s, %s)", a, b, tr_lua_loc(e->tok));
	if (!strcmp(op, "<<"))
		return tr_printf("rt_shl(%s, %s)", a, b);
	if (!strcmp(op, ">>"))
		return tr_printf("rt_shr(%s, %s)", a, b);
	if (!strcmp(op, "^"))
		op = "~";
	return tr_printf("(%s %s %s)", a, op, b);
}

static const char *binop(struct gen *g, struct tr_expr *e)
{
	const char *a, *b;

	pair(g, e->a, e->b, &a, &b);
	return binop_text(e, a, b);
}

/* A Lua boolean for the comparison e of a and b. */
static const char *compare_text(const struct tr_expr *e, const char *a, const char *b)
{
	const char *op = !strcmp(e->op, "!=") ? "~=" : e->op;

	if (e->a->type == T_STRING && strcmp(op, "==") && strcmp(op, "~="))
		return tr_printf("(rt_strcmp(%s, %s) %s 0)", a, b, op);
	return tr_printf("(%s %s %s)", a, op, b);
}

static bool long_chain(const struct tr_expr *e)
{
	unsigned n = 0;

	for (const struct tr_expr *x = e; tr_is_chain(x) && x->kind == e->kind; x = x->a)
		if (++n >= CHAIN_FLAT)
			return true;
	return false;
}

/* The value of a long chain of one kind of operator, in a local: one
 * statement per operator, left to right, && and || short-circuiting. */
static const char *chain_value(struct gen *g, struct tr_expr *e)
{
	struct tr_vec spine = {0};
	const char *t = tr_gen_tmp(g);

	tr_chain(e, true, &spine);
	struct tr_expr *low = spine.items[0];
	if (low->kind == E_LOGIC)
		tr_gen_line(g, "local %s = %s and 1 or 0", t, tr_gen_cond(g, low->a));
	else
		tr_gen_line(g, "local %s = %s", t, tr_gen_expr(g, low->a));
	for (unsigned i = 0; i < spine.n; i++) {
		struct tr_expr *op = spine.items[i];
		if (op->kind == E_LOGIC) {
			tr_gen_line(g, "if %s %s 0 then", t, !strcmp(op->op, "&&") ? "~=" : "==");
			g->indent++;
			tr_gen_line(g, "%s = %s and 1 or 0", t, tr_gen_cond(g, op->b));
			g->indent--;
			tr_gen_line(g, "end");
			continue;
		}
		const char *b = tr_gen_expr(g, op->b);
		if (op->kind == E_BIN)
			tr_gen_line(g, "%s = %s", t, binop_text(op, t, b));
		else if (op->kind == E_CAT)
			tr_gen_line(g, "%s = rt_cat(%s, %s)", t, t, b);
		else
			tr_gen_line(g, "%s = %s and 1 or 0", t, compare_text(op, t, b));
	}
	free(spine.items);
	return t;
}

/* The value of a && b, a || b, c ? x : y, with b/x/y's effects conditional. */
static const char *logic(struct gen *g, struct tr_expr *e)
{
	const char *t = tr_gen_tmp(g);
	bool and = !strcmp(e->op, "&&");

	tr_gen_line(g, "local %s = %s", t, and ? "0" : "1");
	tr_gen_line(g, "if %s%s then", and ? "" : "not ", tr_gen_cond(g, e->a));
	g->indent++;
	const char *b = tr_gen_cond(g, e->b);
	tr_gen_line(g, "%s = %s and 1 or 0", t, b);
	g->indent--;
	tr_gen_line(g, "end");
	return t;
}

static const char *ternary(struct gen *g, struct tr_expr *e)
{
	const char *t = tr_gen_tmp(g);

	tr_gen_line(g, "local %s", t);
	tr_gen_line(g, "if %s then", tr_gen_cond(g, e->a));
	g->indent++;
	tr_gen_line(g, "%s = %s", t, tr_gen_expr(g, e->b));
	g->indent--;
	tr_gen_line(g, "else");
	g->indent++;
	tr_gen_line(g, "%s = %s", t, tr_gen_expr(g, e->c));
	g->indent--;
	tr_gen_line(g, "end");
	return t;
}

static const char *compare(struct gen *g, struct tr_expr *e)
{
	const char *a, *b;

	pair(g, e->a, e->b, &a, &b);
	return compare_text(e, a, b);
}

/* a[k] += d into local t: an existing element is updated in place (the
 * common case of counting), a new one goes through the map's add, which
 * keeps the insertion order and the size limits.  (A value is a number,
 * never false: "if t" tests presence without the equality call of
 * "t ~= nil".) */
static void add_inline(struct gen *g, const char *t, const char *name, const char *k,
		       const char *d, const char *where)
{
	const char *kt = tr_gen_tmp(g);

	tr_gen_line(g, "local %s = %s", kt, k);
	if (d[strspn(d, "0123456789")] == '\0') {
		/* a constant step (++): nothing can replace the map's table
		 * between the read and the store, so it is looked up once */
		const char *vt = tr_gen_tmp(g);
		tr_gen_line(g, "local %s = %s.vals", vt, name);
		tr_gen_line(g, "local %s = %s[%s]", t, vt, kt);
		tr_gen_line(g, "if %s then %s = %s + %s; %s[%s] = %s else %s = %s:add(%s, %s, %s) end",
		     t, t, t, d, vt, kt, t, t, name, kt, d, where);
		return;
	}
	tr_gen_line(g, "local %s = %s.vals[%s]", t, name, kt);
	tr_gen_line(g, "if %s then %s = %s + %s; %s.vals[%s] = %s else %s = %s:add(%s, %s, %s) end",
	     t, t, t, d, name, kt, t, t, name, kt, d, where);
}

static const char *assign_plain(struct gen *g, struct tr_expr *e);

/* Assignments and ++/--: the store as statements, the value as a name.
 * A target variable written in guru mode (elab_bind.c gave it a store spec):
 * its field takes the new value as a marker's would, then rt.ustore
 * writes it into the traced process (runtime/script/ufunc_recipe.c), or
 * rt.kernel_store into a kernel function probe's registers (marktap.ko). */
static const char *assign(struct gen *g, struct tr_expr *e)
{
	struct tr_expr *lhs = e->a;
	const char *v, *r;

	if (lhs->kind != E_TARGET || !lhs->store)
		return assign_plain(g, e);
	if (lhs->target_arg > 0) {   /* its field holds the new value */
		r = assign_plain(g, e);
		v = tr_printf("a%d", lhs->target_arg);
	} else {
		r = v = tr_gen_tmp(g);
		tr_gen_line(g, "local %s = %s", v, tr_gen_expr(g, e->b));
	}
	if (!strncmp(lhs->store, "kernel ", 7))   /* a kernel function's register (mt_kprobe.c) */
		tr_gen_line(g, "rt.kernel_store(%s, %s, %s)", lhs->store + 7, v, tr_lua_loc(lhs->tok));
	else if (!strncmp(lhs->store, "syscall ", 8))   /* a system call's argument (mt_lua_lib.c) */
		tr_gen_line(g, "rt.syscall_store(%s, %s, %s)", lhs->store + 8, v, tr_lua_loc(lhs->tok));
	else
		tr_gen_line(g, "do local err = rt.ustore(%s, %s) if err then rt.error(err, %s) end end",
			    tr_lua_plain(lhs->store), v, tr_lua_loc(lhs->tok));
	return r;
}

static const char *assign_plain(struct gen *g, struct tr_expr *e)
{
	struct tr_expr *lhs = e->a;
	const char *op = e->op, *v = NULL, *k = NULL;
	bool array = lhs->kind == E_INDEX;
	/* a procfs read probe's $value is its handler's a1 */
	const char *name = lhs->sym ? tr_gen_sym_name(g, lhs->sym) :
			   lhs->kind == E_TARGET ? tr_printf("a%d", lhs->target_arg) : "nil";

	if (lhs->kind == E_TARGET && lhs->target_arg > 0)
		tr_gen_reads_params(g, 2 + (unsigned)lhs->target_arg);
	if (array && lhs->sym->kind == SYM_GLOBAL && !lhs->sym->first_store)
		lhs->sym->first_store = e->tok;

	if (e->kind == E_ASSIGN) {
		if (array)
			k = tr_gen_key_of(g, lhs->sym, &lhs->args);
		v = tr_gen_expr(g, e->b);
	} else if (array) {
		k = tr_gen_key_of(g, lhs->sym, &lhs->args);
	}
	if (array && lhs->args.n > 1) {
		const char *kt = tr_gen_tmp(g);
		tr_gen_line(g, "local %s = %s", kt, k);
		k = kt;
	}
	if (e->kind == E_PRE || e->kind == E_POST) {
		const char *d = e->op[0] == '+' ? "1" : "-1";
		const char *t = tr_gen_tmp(g);
		if (array) {
			add_inline(g, t, name, k, d, tr_lua_loc(e->tok));
			return e->kind == E_PRE ? t : tr_printf("(%s - %s)", t, d);
		}
		if (e->kind == E_POST) {
			tr_gen_line(g, "local %s = %s", t, name);
			tr_gen_line(g, "%s = %s + %s", name, t, d);
			return t;
		}
		tr_gen_line(g, "%s = %s + %s", name, name, d);
		return name;
	}
	if (!strcmp(op, "<<<")) {
		if (array)
			tr_gen_line(g, "%s:push(%s, %s, %s)", name, k, v, tr_lua_loc(e->tok));
		else
			tr_gen_line(g, "%s:push(%s, %s)", name, v, tr_lua_loc(e->tok));
		return v;
	}
	const char *t = tr_gen_tmp(g);
	if (!strcmp(op, "=")) {
		if (array) {
			tr_gen_line(g, "local %s = %s:set(%s, %s, %s)", t, name, k, v, tr_lua_loc(e->tok));
			return t;
		}
		tr_gen_line(g, "%s = %s", name, v);
		return name;
	}
	if (array && (!strcmp(op, "+=") || !strcmp(op, "-="))) {
		add_inline(g, t, name, k, tr_printf("%s%s", op[0] == '-' ? "-" : "", v), tr_lua_loc(e->tok));
		return t;
	}
	const char *old = array ? tr_printf("%s:get(%s)", name, k) : name, *nv;
	char bop[3] = { op[0], op[1] == '=' ? '\0' : op[1], '\0' };
	if (!strcmp(op, ".=") && lhs->kind == E_TARGET && g->rp && g->rp->kind == P_PROCFS &&
	    g->rp->procfs_maxsize > 0)   /* $value of a read probe: its file's size bounds it */
		nv = tr_printf("rt.procfs_cat(%s, %s, %" PRId64 ")", old, v, g->rp->procfs_maxsize);
	else if (!strcmp(op, ".="))
		nv = tr_printf("rt_cat(%s, %s)", old, v);
	else if (!strcmp(bop, "/"))
		nv = tr_printf("rt_div(%s, %s, %s)", old, v, tr_lua_loc(e->tok));
	else if (!strcmp(bop, "%"))
		nv = tr_printf("rt_mod(%s, %s, %s)", old, v, tr_lua_loc(e->tok));
	else if (!strcmp(bop, "<<"))
		nv = tr_printf("rt_shl(%s, %s)", old, v);
	else if (!strcmp(bop, ">>"))
		nv = tr_printf("rt_shr(%s, %s)", old, v);
	else
		nv = tr_printf("(%s %s %s)", old, !strcmp(bop, "^") ? "~" : bop, v);
	if (array) {
		tr_gen_line(g, "local %s = %s:set(%s, %s, %s)", t, name, k, nv, tr_lua_loc(e->tok));
		return t;
	}
	tr_gen_line(g, "%s = %s", name, nv);
	return name;
}

/* A Lua call takes at most about 250 values (registers): more is an error
 * at the call, not Lua's at load. */
#define LUA_ARGS_MAX 200

static const char *args_list(struct gen *g, struct tr_vec *args, bool hist_ok, const struct tr_token *at)
{
	if (args->n > LUA_ARGS_MAX)
		tr_sem_error(at, "too many arguments to translate (%u, at most %d)", args->n, LUA_ARGS_MAX);
	struct tr_buf b = {0};
	const char **v = tr_alloc(sizeof(char *) * (args->n + 1));

	unsigned saved = 0; /* v[0..saved) are temporaries already */

	for (unsigned i = 0; i < args->n; i++) {
		struct tr_expr *a = args->items[i];
		size_t mark = g->out->len;
		if (hist_ok && a->kind == E_HIST)
			v[i] = tr_printf("%s:hist(%s)", tr_gen_stat_of(g, a->a), tr_lua_loc(a->tok));
		else
			v[i] = tr_gen_expr(g, a);
		if (g->out->len != mark && i > saved) {
			/* Earlier arguments are read before this one's effects. */
			char *after = tr_strdup(g->out->data + mark);
			g->out->len = mark;
			g->out->data[mark] = '\0';
			for (unsigned k = saved; k < i; k++) {
				const char *t = tr_gen_tmp(g);
				tr_gen_line(g, "local %s = %s", t, v[k]);
				v[k] = t;
			}
			saved = i;
			tr_buf_puts(g->out, after);
			free(after);
		}
	}
	for (unsigned i = 0; i < args->n; i++)
		tr_buf_printf(&b, "%s%s", i ? ", " : "", v[i]);
	return tr_buf_str(&b);
}

static const char *print_call(struct gen *g, struct tr_expr *e)
{
	for (unsigned i = 0; i < e->args.n; i++) {
		const struct tr_expr *a = e->args.items[i];
		if (a->kind != E_HIST && a->type == T_STATS) {   /* println(s): stap's pass 3 */
			tr_sem_error(a->tok, "print format actual argument evaluation type unsupported");
			return "nil";
		}
	}
	const char *args = args_list(g, &e->args, true, e->tok);
	const char *sep = e->args.n ? ", " : "";

	/* stap: println/sprintln of a histogram print the chart alone (it
	 * ends with its empty line) */
	if (e->args.n == 1 && ((struct tr_expr *)e->args.items[0])->kind == E_HIST &&
	    !e->print_fmt && !e->print_delim)
		return tr_printf("rt_%s(%s)", e->print_str ? "sprint" : "print", args);

	if (e->print_fmt || e->print_delim)
		return tr_printf("rt_%s(%s%s%s)", e->op, tr_lua_string(e->fmt), sep, args);
	return tr_printf("rt_%s(%s)", e->op, args);
}

/* One more level of Lua nesting; false (reported once) past Lua's limit. */
bool tr_gen_nest_ok(struct gen *g, const struct tr_token *t)
{
	if (g->indent + 2 * g->expr_depth + 3 * g->closures <= LUA_NEST_MAX)
		return true;
	if (!g->too_deep)
		tr_sem_error(t, "nested too deeply to translate (more than %d levels of blocks and operands)",
			     LUA_NEST_MAX / 2);
	g->too_deep = true;
	return false;
}

static bool nest_in(struct gen *g, const struct tr_expr *e)
{
	g->expr_depth++;
	return tr_gen_nest_ok(g, e->tok);
}

static const char *expr_inner(struct gen *g, struct tr_expr *e);
static const char *cond_inner(struct gen *g, struct tr_expr *e);

const char *tr_gen_expr(struct gen *g, struct tr_expr *e)
{
	const char *v = "nil";

	if (nest_in(g, e))
		v = long_chain(e) ? chain_value(g, e) : expr_inner(g, e);
	g->expr_depth--;
	return v;
}

const char *tr_gen_cond(struct gen *g, struct tr_expr *e)
{
	const char *v = "false";

	if (nest_in(g, e))
		v = long_chain(e) ? tr_printf("(%s ~= 0)", chain_value(g, e)) : cond_inner(g, e);
	g->expr_depth--;
	return v;
}

static const char *expr_inner(struct gen *g, struct tr_expr *e)
{
	switch (e->kind) {
	case E_NUM:
		return tr_lua_num(e->num);
	case E_STR:
		return tr_lua_string(e->str);
	case E_SYM:
		return e->sym ? tr_gen_sym_name(g, e->sym) : "0";
	case E_TARGET:
		return target(g, e);
	case E_DEFINED:
		return "1";
	case E_EMBED: /* marktap's embedded code is Lua */
		g->uses_act = g->uses_pp = true;
		return tr_printf("(%s)", tr_embed_strip_pragmas(e->str));
	case E_INDEX:
		if (e->a->kind == E_HIST) {
			const char *st = tr_gen_stat_of(g, e->a->a);
			return tr_printf("%s:bucket(%s, %s)", st, tr_gen_expr(g, e->args.items[0]), tr_lua_loc(e->tok));
		}
		return tr_printf("%s:get(%s)", tr_gen_sym_name(g, e->sym), tr_gen_key_of(g, e->sym, &e->args));
	case E_IN:
		return tr_printf("(%s and 1 or 0)", tr_gen_cond(g, e));
	case E_CALL: {
		if (e->op && !strcmp(e->op, "__marktap_entry") && !e->args.n) {
			/* where a .return alias's entry is: its @entry values (gen.c) */
			struct tr_buf v = {0};
			if (!g->entries.n || (g->rp && g->rp->kfunc_entry) || g->func)
				return "nil";
			for (unsigned k = 0; k < g->entries.n; k++)
				tr_buf_printf(&v, "%s%s", k ? ", " : "",
					      tr_gen_expr(g, ((struct tr_expr *)g->entries.items[k])->a));
			tr_gen_line(g, "ev_%u[rt.tid()] = {%s}", g->entry_probe, tr_buf_str(&v));
			return "nil";
		}
		const char *a = args_list(g, &e->args, false, e->tok), *direct = tr_lua_direct_call(e->func);
		tr_gen_call_needs(g, direct ? direct : e->func->code);
		if (direct)
			return tr_printf("%s()", tr_gen_direct_name(g, direct));
		/* a function of embedded code gets the call's place too
		 * (__loc): its errors are "near" the call, as stap's */
		if (e->func->code)
			return tr_printf("F[%s](%s%s%s)", tr_lua_plain(e->func->lua), a, e->args.n ? ", " : "", tr_lua_loc(e->tok));
		return tr_printf("F[%s](%s)", tr_lua_plain(e->func->lua), a);
	}
	case E_PRINT:
		return print_call(g, e);
	case E_STAT:
		return tr_printf("%s:%s(%s)", tr_gen_stat_of(g, e->a), stat_methods[e->stat_op],
				 e->stat_op ? tr_lua_loc(e->tok) : "");
	case E_HIST:
		return tr_printf("%s:hist(%s)", tr_gen_stat_of(g, e->a), tr_lua_loc(e->tok));
	case E_BIN:
		return binop(g, e);
	case E_LOGIC:
		return logic(g, e);
	case E_CMP:
	case E_REGEX:
		return tr_printf("(%s and 1 or 0)", tr_gen_cond(g, e));
	case E_CAT: {
		const char *a, *b;
		pair(g, e->a, e->b, &a, &b);
		return tr_printf("rt_cat(%s, %s)", a, b);
	}
	case E_UNARY:
		if (!strcmp(e->op, "!"))
			return tr_printf("(%s and 0 or 1)", tr_gen_cond(g, e->a));
		if (!strcmp(e->op, "+"))
			return tr_gen_expr(g, e->a);
		return tr_printf("(%s(%s))", e->op, tr_gen_expr(g, e->a));
	case E_PRE:
	case E_POST:
		/* 1++, f()++: stap reads them and passes them at pass 2 */
		if (e->a->kind != E_SYM && e->a->kind != E_TARGET &&
		    (e->a->kind != E_INDEX || e->a->a->kind != E_SYM)) {
			tr_sem_error(e->a->tok, "invalid lvalue type");
			return "nil";
		}
		return assign(g, e);
	case E_ASSIGN:
		return assign(g, e);
	case E_TERN:
		return ternary(g, e);
	}
	return "nil";
}

/* A Lua boolean for a long's truth. */
static const char *cond_inner(struct gen *g, struct tr_expr *e)
{
	switch (e->kind) {
	case E_CMP:
		return compare(g, e);
	case E_REGEX: {
		/* an automaton, as stap compiles one: marktap.ko matches it too */
		const char *m, *pat = tr_unescape(e->b->str, NULL);
		unsigned n = 0;
		while (n < g->regex_patterns.n && strcmp(g->regex_patterns.items[n], pat))
			n++;
		if (n == g->regex_patterns.n && !g->regexec) {
			const char *dfa = tr_regex_dfa(pat);
			if (dfa) {
				tr_vec_push(&g->regex_patterns, (void *)pat);
				tr_buf_printf(&g->regexes, "rt.re[%u] = %s\n", n + 1, dfa);
			}
		}
		if (n < g->regex_patterns.n) {
			m = tr_printf("rt.dfa_match(%s, rt.re[%u])", tr_gen_expr(g, e->a), n + 1);
		} else {
			m = tr_printf("(rt_regmatch(%s, %s, %s) ~= 0)", tr_gen_expr(g, e->a),
				      tr_lua_string(e->b->str), tr_lua_loc(e->tok));
		}
		return !strcmp(e->op, "!~") ? tr_printf("(not %s)", m) : m;
	}
	case E_IN:
		for (unsigned i = 0; i < e->args.n; i++)
			if (!e->args.items[i]) /* [*, 2] in a */
				return tr_printf("%s:exists_match(%s)", tr_gen_sym_name(g, e->sym),
						 tr_gen_slice_args(g, &e->args));
		return tr_printf("%s:exists(%s)", tr_gen_sym_name(g, e->sym), tr_gen_key_of(g, e->sym, &e->args));
	case E_UNARY:
		if (!strcmp(e->op, "!"))
			return tr_printf("(not %s)", tr_gen_cond(g, e->a));
		break;
	case E_LOGIC: {
		size_t mark = g->out->len;
		const char *a = tr_gen_cond(g, e->a);
		size_t mid = g->out->len;
		const char *b = tr_gen_cond(g, e->b);
		if (g->out->len == mid) /* no effects on the right: Lua's own and/or */
			return tr_printf("(%s %s %s)", a, !strcmp(e->op, "&&") ? "and" : "or", b);
		g->out->len = mark;
		g->out->data[mark] = '\0';
		return tr_printf("(%s ~= 0)", logic(g, e));
	}
	default:
		break;
	}
	return tr_printf("(%s ~= 0)", tr_gen_expr(g, e));
}

