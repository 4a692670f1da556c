/*
 * gen.c - pass 3: the elaborated script as one Lua 5.4 chunk.
 *
 * The chunk calls the runtime module "mtrt" (runtime/lua/API.md) and
 * registers one handler per concrete probe with rt.probe("probe_N", fn).
 * A marker handler receives its context as arguments: the marker's name,
 * its format, then the argument values in order; the same chunk runs in the
 * marktap process (begin, end, timers) and, later, in the traced process.
 *
 * Lua has no assignment expressions, so an expression with side effects
 * (x++, a[k] = v inside a condition) is flattened: its effects become
 * statements emitted before the statement that uses the value, and an
 * operand evaluated before such effects is first saved in a temporary, so
 * stap's left-to-right order holds.  && || ?: evaluate their right side
 * only when needed, with the right side's effects inside an "if".
 */
#define _GNU_SOURCE
#include "tr_elab.h"
#include "tr_gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct gen {
	struct tr_session *s;
	struct tr_buf *out;             /* current statement list */
	int indent;
	unsigned tmp;                   /* temporaries and labels */
	struct tr_func *func;           /* NULL in a probe */
	struct tr_resolved *rp;
	int try_depth;                  /* inside pcall'ed try bodies */
	int loop_at_try;                /* loop depth when the innermost try began */
	int loop_depth;
	unsigned cont_label[64];
	bool globals_in_table;
	/* runtime functions called directly (tr_direct_call) that have a
	 * chunk local "rt_d_NAME": a call is then no lookup in rt */
	const char *direct[24];
	unsigned ndirect;
	unsigned expr_depth;            /* expr() and cond() calls open */
	unsigned closures;              /* try bodies open: a Lua function each */
	bool too_deep;                  /* reported */
	unsigned params;                /* leading parameters the probe's handler reads */
	bool uses_act, uses_pp;         /* the probe's handler counts actions, may read pp() */
};

/* What the Lua of a call may need of the handler's state: a script
 * function counts actions at entry and may call anything; embedded code
 * is looked at. */
static void call_needs(struct gen *g, const char *code)
{
	if (!code) {
		g->uses_act = g->uses_pp = true;
		return;
	}
	if (strstr(code, "act"))
		g->uses_act = true;
	if (strstr(code, "rt.pp") || strstr(code, "rt.pn") || strstr(code, "cur_p") || strstr(code, "F["))
		g->uses_pp = g->uses_act = true;
}

/* The handler reads its first n parameters (mk_name, mk_fmt, a1...): the
 * hosts need not push the others (a kernel hit's cost is partly its
 * arguments) */
static void reads_params(struct gen *g, unsigned n)
{
	if (n > g->params)
		g->params = n;
}

/* Lua's parser stops near 200 nested blocks and expressions ("C stack
 * overflow" when the chunk loads): a script nested deeper gets a semantic
 * error at its place instead.  A block costs one Lua level, an operand
 * about two. */
#define LUA_NEST_MAX 180
/* From this length on, a chain of one kind of operator (1+1+...+1) is
 * computed in a local, one operator per statement, not as a Lua
 * expression as deep as the chain. */
#define CHAIN_FLAT 16

static void line(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	char *p;

	for (int i = 0; i < g->indent; i++)
		tr_buf_puts(g->out, "  ");
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		p = NULL;
	va_end(ap);
	if (p) {
		tr_buf_puts(g->out, p);
		free(p);
	}
	tr_buf_putc(g->out, '\n');
}

/* A Lua string literal for bytes. */
static const char *lua_bytes(const char *s, size_t n)
{
	struct tr_buf b = {0};

	tr_buf_putc(&b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			tr_buf_printf(&b, "\\%c", c);
		else if (c == '\n')
			tr_buf_puts(&b, "\\n");
		else if (c < 32 || c >= 127)
			tr_buf_printf(&b, "\\%03u", c);
		else
			tr_buf_putc(&b, (char)c);
	}
	tr_buf_putc(&b, '"');
	return tr_buf_str(&b);
}

static const char *lua_str_raw(const char *raw)
{
	size_t n;
	char *bytes = tr_unescape(raw, &n);

	return lua_bytes(bytes, n);
}

static const char *lua_plain(const char *s)
{
	return lua_bytes(s, strlen(s));
}

/*
 * Text for a "-- ..." comment line.  Probe points carry names that come
 * from outside the script (a stored trace's event classes, a program's SDT
 * notes): a newline or carriage return there would end the comment and
 * make the rest Lua code, so control bytes are shown as '?'.
 */
static const char *lua_comment(const char *s)
{
	char *c = tr_strdup(s);

	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

static const char *lua_num(int64_t v)
{
	if (v == INT64_MIN)
		return "(1 << 63)";   /* no math library in marktap.ko's Lua */
	if (v < 0)
		return tr_printf("(%" PRId64 ")", v);
	return tr_printf("%" PRId64, v);
}

/* Where an error happened, as stap prints it after "near". */
static const char *loc(const struct tr_token *t)
{
	if (!t || !t->file)
		return "nil";
	return lua_plain(tr_printf("%s at %s:%u:%u", tr_tok_describe(t), t->file->name, t->line, t->col));
}

const char *tr_lua_loc(const struct tr_token *t)
{
	return loc(t);
}

/* A tapset function that only returns a runtime function's value, such
 * as tid(): "%{ return rt.tid() %}", is called directly (a hit of
 * c[tid()]++ then makes one Lua call less).  "rt.tid", or NULL. */
const char *tr_direct_call(const struct tr_func *f)
{
	const char *c = f->code, *name;
	size_t n;

	if (!c || f->params.n)
		return NULL;
	c += strspn(c, " \t\n");
	if (strncmp(c, "return rt.", 10))
		return NULL;
	name = c + 7;
	n = strspn(name + 3, "abcdefghijklmnopqrstuvwxyz_0123456789") + 3;
	c = name + n;
	if (strncmp(c, "()", 2))
		return NULL;
	c += 2;
	c += strspn(c, " \t\n;");
	if (*c)
		return NULL;
	return tr_printf("%.*s", (int)n, name);
}

/* "rt.tid" as called: its chunk local when it has one */
static const char *direct_name(const struct gen *g, const char *direct)
{
	for (unsigned i = 0; i < g->ndirect; i++)
		if (!strcmp(g->direct[i], direct))
			return tr_printf("rt_d_%s", direct + 3);
	return direct;
}

/* Chunk locals for the runtime functions the script calls directly,
 * taken after the chunk set rt.pp and rt.pn (a few: Lua allows a chunk
 * 200 locals, and globals take up to 120 of them). */
static void direct_locals(struct gen *g)
{
	const struct tr_session *s = g->s;

	for (unsigned i = 0; i < s->funcs.n && g->ndirect < sizeof(g->direct) / sizeof(g->direct[0]); i++) {
		const char *d = tr_direct_call(s->funcs.items[i]);

		if (d && strcmp(direct_name(g, d), d) == 0) {
			line(g, "local rt_d_%s = %s", d + 3, d);
			g->direct[g->ndirect++] = d;
		}
	}
}

static const char *sym_name(struct gen *g, const struct tr_sym *y)
{
	if (y->kind == SYM_GLOBAL)
		return g->globals_in_table ? tr_printf("G[%u]", y->index) : tr_printf("g%u_%s", y->index, y->name);
	return tr_printf("l_%s", y->name);
}

static const char *zero_of(enum tr_type t)
{
	return t == T_STRING ? "\"\"" : "0";
}

static const char *tmp(struct gen *g)
{
	return tr_printf("t%u", ++g->tmp);
}

static const char *expr(struct gen *g, struct tr_expr *e);
static const char *cond(struct gen *g, struct tr_expr *e);
static void stmt(struct gen *g, struct tr_stmt *st);

/* Evaluate a then b; if b emitted statements, a is saved first. */
static void pair(struct gen *g, struct tr_expr *ea, struct tr_expr *eb, const char **a, const char **b)
{
	*a = expr(g, ea);
	size_t mark = g->out->len;
	*b = expr(g, eb);
	if (g->out->len != mark && ea->kind != E_NUM && ea->kind != E_STR) {
		/* Save a's value before b's side effects. */
		char *after = tr_strdup(g->out->data + mark);
		const char *t = tmp(g);
		g->out->len = mark;
		g->out->data[mark] = '\0';
		line(g, "local %s = %s", t, *a);
		tr_buf_puts(g->out, after);
		*a = t;
	}
}

static const char *key_of(struct gen *g, struct tr_sym *y, struct tr_vec *args)
{
	struct tr_buf b = {0};
	const char **v = tr_alloc(sizeof(char *) * (args->n + 1));

	for (unsigned i = 0; i < args->n; i++) {
		size_t mark = g->out->len;
		v[i] = expr(g, args->items[i]);
		if (i + 1 < args->n || g->out->len != mark) {
			/* Keep evaluation order when later indexes have effects. */
			if (args->n > 1) {
				const char *t = tmp(g);
				line(g, "local %s = %s", t, v[i]);
				v[i] = t;
			}
		}
	}
	if (args->n == 1)
		return v[0];
	tr_buf_printf(&b, "%s:key(", sym_name(g, y));
	for (unsigned i = 0; i < args->n; i++)
		tr_buf_printf(&b, "%s%s", i ? ", " : "", v[i]);
	tr_buf_putc(&b, ')');
	return tr_buf_str(&b);
}

/* A slice's indexes in order, rt.ANY for '*': "k1, rt.ANY". */
static const char *slice_args(struct gen *g, struct tr_vec *args)
{
	struct tr_buf b = {0};

	for (unsigned i = 0; i < args->n; i++) {
		const char *v = "rt.ANY";
		if (args->items[i]) {
			v = expr(g, args->items[i]);
			if (i + 1 < args->n) { /* read before later indexes' effects */
				const char *t = tmp(g);
				line(g, "local %s = %s", t, v);
				v = t;
			}
		}
		tr_buf_printf(&b, "%s%s", i ? ", " : "", v);
	}
	return tr_buf_str(&b);
}

/* The reads btf.c compiled for a kernel value: rt.kernel_read in the module. */
static const char *kernel_reads(struct gen *g, const char *v, const char *steps, const struct tr_token *tok)
{
	long off;
	unsigned size, sign, shift, bits;
	int used;

	if (sscanf(steps, "T:%u:%u;", &size, &sign) == 2) {   /* a register cut to its type */
		unsigned long long mask = (1ULL << (size * 8)) - 1, top = 1ULL << (size * 8 - 1);
		if (!sign)
			return tr_printf("(%s & %#llx)", v, mask);
		return tr_printf("(((%s & %#llx) ~ %#llx) - %#llx)", v, mask, top, top);
	}
	while (sscanf(steps, "%ld:%u:%u:%u:%u;%n", &off, &size, &sign, &shift, &bits, &used) == 5) {
		v = off ? tr_printf("(%s + %ld)", v, off) : v;
		if (size)
			v = tr_printf("rt.kernel_read(%s, %u, %s, %s)", v, size, sign ? "true" : "false", loc(tok));
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
		reads_params(g, 2 + r->fields.n);
		return tr_printf("rt_sprintf(\"return=%%#x\", a%u)", r->fields.n);
	}
	for (unsigned i = 0; (name = tr_btf_param_name(r, i)) != NULL; i++) {
		tr_buf_printf(&f, "%s%s=%%#x", i ? " " : "", name);
		tr_buf_printf(&a, ", a%u", i + 1);
		reads_params(g, 2 + i + 1);
	}
	return tr_printf("rt_sprintf(\"%s\"%s)", tr_buf_str(&f), tr_buf_str(&a));
}

static const char *target(struct gen *g, struct tr_expr *e)
{
	struct tr_resolved *r = g->rp;

	if (e->kread && e->a)   /* @cast(p, "T")->m */
		return kernel_reads(g, expr(g, e->a), e->kread, e->tok);
	if (r && r->kfunc && (e->target_arg == -3 || e->target_arg == -7))
		return kfunc_vars(g, e);
	if (e->kread) {
		reads_params(g, 2 + (unsigned)e->target_arg);
		return kernel_reads(g, tr_printf("a%d", e->target_arg), e->kread, e->tok);
	}
	if (e->target_arg > 0)
		reads_params(g, 2 + (unsigned)e->target_arg);
	else if (e->target_arg == -1 || e->target_arg == -2)
		reads_params(g, 2);
	else if (e->target_arg == -3)
		reads_params(g, 2 + (r ? r->fields.n : 0));
	switch (e->target_arg) {
	case -1:
		return "mk_name";
	case -2:
		return "mk_fmt";
	case -4:
		return r && r->provider ? lua_plain(r->provider) : "\"marktap\"";
	case -6:    /* @kregister(N), @uregister(N): no registers here (elab_bind.c) */
		return tr_printf("rt.error(%s)", lua_plain(tr_printf("%s: marktap's handlers get no registers", e->str)));
	case -5:    /* @perf("C"): marktap opens no perf counters (check_runnable) */
		return tr_printf("rt.error(%s)", lua_plain(tr_printf("%s: marktap opens no perf counters", e->str)));
	case -3: {
		struct tr_buf f = {0}, a = {0};
		for (unsigned i = 0; r && i < r->fields.n; i++) {
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

static const char *stat_of(struct gen *g, struct tr_expr *op)
{
	if (op->kind == E_SYM)
		return sym_name(g, op->sym);
	return tr_printf("%s:get(%s)", sym_name(g, op->sym), key_of(g, op->sym, &op->args));
}

static const char *const stat_methods[] = { "count", "sum", "min", "max", "avg", "variance" };

/* The Lua of "a OP b" for an arithmetic or bitwise operator e. */
static const char *binop_text(const struct tr_expr *e, const char *a, const char *b)
{
	const char *op = e->op;

	if (!strcmp(op, "/"))
		return tr_printf("rt_div(%s, %s, %s)", a, b, loc(e->tok));
	if (!strcmp(op, "%"))
		return tr_printf("rt_mod(%s, %s, %s)", a, b, loc(e->tok));
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
	const char *t = tmp(g);

	tr_chain(e, true, &spine);
	struct tr_expr *low = spine.items[0];
	if (low->kind == E_LOGIC)
		line(g, "local %s = %s and 1 or 0", t, cond(g, low->a));
	else
		line(g, "local %s = %s", t, expr(g, low->a));
	for (unsigned i = 0; i < spine.n; i++) {
		struct tr_expr *op = spine.items[i];
		if (op->kind == E_LOGIC) {
			line(g, "if %s %s 0 then", t, !strcmp(op->op, "&&") ? "~=" : "==");
			g->indent++;
			line(g, "%s = %s and 1 or 0", t, cond(g, op->b));
			g->indent--;
			line(g, "end");
			continue;
		}
		const char *b = expr(g, op->b);
		if (op->kind == E_BIN)
			line(g, "%s = %s", t, binop_text(op, t, b));
		else if (op->kind == E_CAT)
			line(g, "%s = rt_cat(%s, %s)", t, t, b);
		else
			line(g, "%s = %s and 1 or 0", t, compare_text(op, t, b));
	}
	free(spine.items);
	return t;
}

/* The value of a && b, a || b, c ? x : y, with b/x/y's effects conditional. */
static const char *logic(struct gen *g, struct tr_expr *e)
{
	const char *t = tmp(g);
	bool and = !strcmp(e->op, "&&");

	line(g, "local %s = %s", t, and ? "0" : "1");
	line(g, "if %s%s then", and ? "" : "not ", cond(g, e->a));
	g->indent++;
	const char *b = cond(g, e->b);
	line(g, "%s = %s and 1 or 0", t, b);
	g->indent--;
	line(g, "end");
	return t;
}

static const char *ternary(struct gen *g, struct tr_expr *e)
{
	const char *t = tmp(g);

	line(g, "local %s", t);
	line(g, "if %s then", cond(g, e->a));
	g->indent++;
	line(g, "%s = %s", t, expr(g, e->b));
	g->indent--;
	line(g, "else");
	g->indent++;
	line(g, "%s = %s", t, expr(g, e->c));
	g->indent--;
	line(g, "end");
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
	const char *kt = tmp(g);

	line(g, "local %s = %s", kt, k);
	if (d[strspn(d, "0123456789")] == '\0') {
		/* a constant step (++): nothing can replace the map's table
		 * between the read and the store, so it is looked up once */
		const char *vt = tmp(g);
		line(g, "local %s = %s.vals", vt, name);
		line(g, "local %s = %s[%s]", t, vt, kt);
		line(g, "if %s then %s = %s + %s; %s[%s] = %s else %s = %s:add(%s, %s, %s) end",
		     t, t, t, d, vt, kt, t, t, name, kt, d, where);
		return;
	}
	line(g, "local %s = %s.vals[%s]", t, name, kt);
	line(g, "if %s then %s = %s + %s; %s.vals[%s] = %s else %s = %s:add(%s, %s, %s) end",
	     t, t, t, d, name, kt, t, t, name, kt, d, where);
}

static const char *assign_plain(struct gen *g, struct tr_expr *e);

/* Assignments and ++/--: the store as statements, the value as a name.
 * A target variable written in guru mode (elab_bind.c gave it a store spec):
 * its field takes the new value as a marker's would, then rt.ustore
 * writes it into the traced process (runtime/script/ufunc.c). */
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
		r = v = tmp(g);
		line(g, "local %s = %s", v, expr(g, e->b));
	}
	line(g, "do local err = rt.ustore(%s, %s) if err then rt.error(err, %s) end end",
	     lua_plain(lhs->store), v, loc(lhs->tok));
	return r;
}

static const char *assign_plain(struct gen *g, struct tr_expr *e)
{
	struct tr_expr *lhs = e->a;
	const char *op = e->op, *v = NULL, *k = NULL;
	bool array = lhs->kind == E_INDEX;
	/* a procfs read probe's $value is its handler's a1 */
	const char *name = lhs->sym ? sym_name(g, lhs->sym) :
			   lhs->kind == E_TARGET ? tr_printf("a%d", lhs->target_arg) : "nil";

	if (lhs->kind == E_TARGET && lhs->target_arg > 0)
		reads_params(g, 2 + (unsigned)lhs->target_arg);

	if (e->kind == E_ASSIGN) {
		if (array)
			k = key_of(g, lhs->sym, &lhs->args);
		v = expr(g, e->b);
	} else if (array) {
		k = key_of(g, lhs->sym, &lhs->args);
	}
	if (array && lhs->args.n > 1) {
		const char *kt = tmp(g);
		line(g, "local %s = %s", kt, k);
		k = kt;
	}
	if (e->kind == E_PRE || e->kind == E_POST) {
		const char *d = e->op[0] == '+' ? "1" : "-1";
		const char *t = tmp(g);
		if (array) {
			add_inline(g, t, name, k, d, loc(e->tok));
			return e->kind == E_PRE ? t : tr_printf("(%s - %s)", t, d);
		}
		if (e->kind == E_POST) {
			line(g, "local %s = %s", t, name);
			line(g, "%s = %s + %s", name, t, d);
			return t;
		}
		line(g, "%s = %s + %s", name, name, d);
		return name;
	}
	if (!strcmp(op, "<<<")) {
		if (array)
			line(g, "%s:push(%s, %s, %s)", name, k, v, loc(e->tok));
		else
			line(g, "%s:push(%s, %s)", name, v, loc(e->tok));
		return v;
	}
	const char *t = tmp(g);
	if (!strcmp(op, "=")) {
		if (array) {
			line(g, "local %s = %s:set(%s, %s, %s)", t, name, k, v, loc(e->tok));
			return t;
		}
		line(g, "%s = %s", name, v);
		return name;
	}
	if (array && (!strcmp(op, "+=") || !strcmp(op, "-="))) {
		add_inline(g, t, name, k, tr_printf("%s%s", op[0] == '-' ? "-" : "", v), loc(e->tok));
		return t;
	}
	const char *old = array ? tr_printf("%s:get(%s)", name, k) : name, *nv;
	char bop[3] = { op[0], op[1] == '=' ? '\0' : op[1], '\0' };
	if (!strcmp(op, ".="))
		nv = tr_printf("rt_cat(%s, %s)", old, v);
	else if (!strcmp(bop, "/"))
		nv = tr_printf("rt_div(%s, %s, %s)", old, v, loc(e->tok));
	else if (!strcmp(bop, "%"))
		nv = tr_printf("rt_mod(%s, %s, %s)", old, v, loc(e->tok));
	else if (!strcmp(bop, "<<"))
		nv = tr_printf("rt_shl(%s, %s)", old, v);
	else if (!strcmp(bop, ">>"))
		nv = tr_printf("rt_shr(%s, %s)", old, v);
	else
		nv = tr_printf("(%s %s %s)", old, !strcmp(bop, "^") ? "~" : bop, v);
	if (array) {
		line(g, "local %s = %s:set(%s, %s, %s)", t, name, k, nv, loc(e->tok));
		return t;
	}
	line(g, "%s = %s", name, nv);
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
			v[i] = tr_printf("%s:hist(%s)", stat_of(g, a->a), loc(a->tok));
		else
			v[i] = expr(g, a);
		if (g->out->len != mark && i > saved) {
			/* Earlier arguments are read before this one's effects. */
			char *after = tr_strdup(g->out->data + mark);
			g->out->len = mark;
			g->out->data[mark] = '\0';
			for (unsigned k = saved; k < i; k++) {
				const char *t = tmp(g);
				line(g, "local %s = %s", t, v[k]);
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
	const char *args = args_list(g, &e->args, true, e->tok);
	const char *sep = e->args.n ? ", " : "";

	/* stap: println/sprintln of a histogram print the chart alone (it
	 * ends with its empty line) */
	if (e->args.n == 1 && ((struct tr_expr *)e->args.items[0])->kind == E_HIST &&
	    !e->print_fmt && !e->print_delim)
		return tr_printf("rt_%s(%s)", e->print_str ? "sprint" : "print", args);

	if (e->print_fmt || e->print_delim)
		return tr_printf("rt_%s(%s%s%s)", e->op, lua_str_raw(e->fmt), sep, args);
	return tr_printf("rt_%s(%s)", e->op, args);
}

/* One more level of Lua nesting; false (reported once) past Lua's limit. */
static bool nest_ok(struct gen *g, const struct tr_token *t)
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
	return nest_ok(g, e->tok);
}

static const char *expr_inner(struct gen *g, struct tr_expr *e);
static const char *cond_inner(struct gen *g, struct tr_expr *e);

static const char *expr(struct gen *g, struct tr_expr *e)
{
	const char *v = "nil";

	if (nest_in(g, e))
		v = long_chain(e) ? chain_value(g, e) : expr_inner(g, e);
	g->expr_depth--;
	return v;
}

static const char *cond(struct gen *g, struct tr_expr *e)
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
		return lua_num(e->num);
	case E_STR:
		return lua_str_raw(e->str);
	case E_SYM:
		return e->sym ? sym_name(g, e->sym) : "0";
	case E_TARGET:
		return target(g, e);
	case E_DEFINED:
		return "1";
	case E_EMBED: /* marktap's embedded code is Lua */
		g->uses_act = g->uses_pp = true;
		return tr_printf("(%s)", tr_strip_pragmas(e->str));
	case E_INDEX:
		if (e->a->kind == E_HIST) {
			const char *st = stat_of(g, e->a->a);
			return tr_printf("%s:bucket(%s, %s)", st, expr(g, e->args.items[0]), loc(e->tok));
		}
		return tr_printf("%s:get(%s)", sym_name(g, e->sym), key_of(g, e->sym, &e->args));
	case E_IN:
		return tr_printf("(%s and 1 or 0)", cond(g, e));
	case E_CALL: {
		const char *a = args_list(g, &e->args, false, e->tok), *direct = tr_direct_call(e->func);
		call_needs(g, direct ? direct : e->func->code);
		if (direct)
			return tr_printf("%s()", direct_name(g, direct));
		/* a function of embedded code gets the call's place too
		 * (__loc): its errors are "near" the call, as stap's */
		if (e->func->code)
			return tr_printf("F[%s](%s%s%s)", lua_plain(e->func->lua), a, e->args.n ? ", " : "", loc(e->tok));
		return tr_printf("F[%s](%s)", lua_plain(e->func->lua), a);
	}
	case E_PRINT:
		return print_call(g, e);
	case E_STAT:
		return tr_printf("%s:%s(%s)", stat_of(g, e->a), stat_methods[e->stat_op],
				 e->stat_op ? loc(e->tok) : "");
	case E_HIST:
		return tr_printf("%s:hist(%s)", stat_of(g, e->a), loc(e->tok));
	case E_BIN:
		return binop(g, e);
	case E_LOGIC:
		return logic(g, e);
	case E_CMP:
	case E_REGEX:
		return tr_printf("(%s and 1 or 0)", cond(g, e));
	case E_CAT: {
		const char *a, *b;
		pair(g, e->a, e->b, &a, &b);
		return tr_printf("rt_cat(%s, %s)", a, b);
	}
	case E_UNARY:
		if (!strcmp(e->op, "!"))
			return tr_printf("(%s and 0 or 1)", cond(g, e->a));
		if (!strcmp(e->op, "+"))
			return expr(g, e->a);
		return tr_printf("(%s(%s))", e->op, expr(g, e->a));
	case E_PRE:
	case E_POST:
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
		const char *m = tr_printf("(rt_regmatch(%s, %s, %s) ~= 0)", expr(g, e->a),
					  lua_str_raw(e->b->str), loc(e->tok));
		return !strcmp(e->op, "!~") ? tr_printf("(not %s)", m) : m;
	}
	case E_IN:
		for (unsigned i = 0; i < e->args.n; i++)
			if (!e->args.items[i]) /* [*, 2] in a */
				return tr_printf("%s:exists_match(%s)", sym_name(g, e->sym),
						 slice_args(g, &e->args));
		return tr_printf("%s:exists(%s)", sym_name(g, e->sym), key_of(g, e->sym, &e->args));
	case E_UNARY:
		if (!strcmp(e->op, "!"))
			return tr_printf("(not %s)", cond(g, e->a));
		break;
	case E_LOGIC: {
		size_t mark = g->out->len;
		const char *a = cond(g, e->a);
		size_t mid = g->out->len;
		const char *b = cond(g, e->b);
		if (g->out->len == mid) /* no effects on the right: Lua's own and/or */
			return tr_printf("(%s %s %s)", a, !strcmp(e->op, "&&") ? "and" : "or", b);
		g->out->len = mark;
		g->out->data[mark] = '\0';
		return tr_printf("(%s ~= 0)", logic(g, e));
	}
	default:
		break;
	}
	return tr_printf("(%s ~= 0)", expr(g, e));
}

/* ---- statements --------------------------------------------------------------- */

/* A statement's effects and temporaries in their own Lua block. */
/* Remove the text [from, to) of the current output (lines emitted earlier
 * that turned out unneeded). */
static void cut(struct gen *g, size_t from, size_t to)
{
	memmove(g->out->data + from, g->out->data + to, g->out->len - to + 1);
	g->out->len -= to - from;
}

static void block_open(struct gen *g)
{
	line(g, "do");
	g->indent++;
}

static void block_close(struct gen *g)
{
	g->indent--;
	line(g, "end");
}

static void ret_default(struct gen *g)
{
	if (g->func)
		line(g, "rt_unnest()");
}

static void control(struct gen *g, int code, const char *value)
{
	/* Inside a try body (a pcall'ed closure) leave with a code. */
	if (g->try_depth && (code <= 2 || g->loop_depth <= g->loop_at_try)) {
		line(g, "do return %d%s%s end", code, value ? ", " : "", value ? value : "");
		return;
	}
	switch (code) {
	case 1:
		/* the value first: a call in it (return f(n - 1)) is still
		 * nested in this function, as stap counts it */
		if (g->func && value) {
			unsigned t = ++g->tmp;
			line(g, "local rv%u = %s", t, value);
			value = tr_printf("rv%u", t);
		}
		ret_default(g);
		line(g, "do return %s end", value ? value : "");
		break;
	case 2:
		line(g, "do return end");
		break;
	case 3:
		line(g, "do break end");
		break;
	case 4:
		line(g, "goto c%u", g->cont_label[g->loop_depth - 1]);
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
static void count_actions(struct gen *g, unsigned n, const struct tr_token *t)
{
	g->uses_act = true;
	line(g, "act = act - %u if act < 0 then rt_maxaction(%s) end", n ? n : 1, loc(t));
}

static void loop_body(struct gen *g, struct tr_stmt *body, unsigned label)
{
	count_actions(g, 1 + stmt_count(body), body ? body->tok : NULL);
	if (g->loop_depth < 64)
		g->cont_label[g->loop_depth] = label;
	g->loop_depth++;
	block_open(g);
	stmt(g, body);
	block_close(g);
	g->loop_depth--;
	line(g, "::c%u::", label);
}

/* The aggregate ordering an array of statistics (Map:each): stap's runtime
 * sorts on @count @sum @min @max @avg, and @variance as @count. */
static const char *sort_aggr_name(int op)
{
	return op == ST_VARIANCE ? "count" : stat_methods[op];
}

static void foreach_stmt(struct gen *g, struct tr_stmt *st)
{
	unsigned label = ++g->tmp;
	struct tr_buf vars = {0};
	const char *limit = "nil", *pattern = "";

	block_open(g);
	/* stap's order: a slice's indexes, then the limit, each once */
	if (st->base->kind == E_INDEX)
		pattern = tr_printf(", {%s}", slice_args(g, &st->base->args));
	if (st->limit) {
		limit = tr_printf("lim%u", label);
		line(g, "local %s = %s", limit, expr(g, st->limit));
	}
	for (unsigned i = 0; i < st->keys.n; i++)
		tr_buf_printf(&vars, "%sk%u_%u", i ? ", " : "", label, i);
	tr_buf_printf(&vars, ", v%u", label);
	if (st->base->kind == E_HIST) {
		const char *stv = stat_of(g, st->base->a);
		line(g, "local n%u = 0", label);
		line(g, "for %s in %s:buckets() do", tr_buf_str(&vars), stv);
		g->indent++;
		line(g, "n%u = n%u + 1", label, label);
		if (st->limit)
			line(g, "if n%u > %s then break end", label, limit);
	} else {
		struct tr_sym *a = st->base->sym;
		const char *col = st->sort_col < 0 ? "0" : st->sort_col ? tr_printf("%d", st->sort_col) : "nil";
		line(g, "for %s in %s:each(%s, %d, %s%s%s) do", tr_buf_str(&vars), sym_name(g, a), col,
		     st->sort_dir ? st->sort_dir : 1, limit,
		     a->type == T_STATS ? tr_printf(", \"%s\"", sort_aggr_name(st->sort_aggr)) :
		     *pattern ? ", nil" : "", pattern);
		g->indent++;
	}
	for (unsigned i = 0; i < st->keys.n; i++) {
		struct tr_expr *k = st->keys.items[i];
		line(g, "%s = k%u_%u", sym_name(g, k->sym), label, i);
	}
	if (st->value)
		line(g, "%s = v%u", sym_name(g, st->value->sym), label);
	loop_body(g, st->body, label);
	g->indent--;
	line(g, "end");
	block_close(g);
}

static void try_stmt(struct gen *g, struct tr_stmt *st)
{
	unsigned n = ++g->tmp;
	int saved_loop = g->loop_at_try;

	block_open(g);
	/* an error leaves the try body with the calls it unwound still
	 * counted in stap's nesting: back to the depth at the try */
	line(g, "local d%u = rt.nesting()", n);
	line(g, "local ok%u, r%u, v%u = pcall(function()", n, n, n);
	g->indent++;
	g->try_depth++;
	g->closures++;
	g->loop_at_try = g->loop_depth;
	stmt(g, st->body);
	g->closures--;
	g->try_depth--;
	g->loop_at_try = saved_loop;
	g->indent--;
	line(g, "end)");
	line(g, "if not ok%u then", n);
	g->indent++;
	line(g, "local m%u = rt.catch(r%u)", n, n);
	line(g, "rt.nesting(d%u)", n);
	if (st->catch_var && st->catch_var->sym)
		line(g, "%s = m%u", sym_name(g, st->catch_var->sym), n);
	stmt(g, st->els);
	g->indent--;
	/* Leave the try body's closure as its return/next/break/continue asked. */
	line(g, "elseif r%u == 1 then", n);
	g->indent++;
	control(g, 1, tr_printf("v%u", n));
	g->indent--;
	line(g, "elseif r%u == 2 then", n);
	g->indent++;
	control(g, 2, NULL);
	g->indent--;
	if (g->loop_depth > 0) {
		line(g, "elseif r%u == 3 then", n);
		g->indent++;
		control(g, 3, NULL);
		g->indent--;
		line(g, "elseif r%u == 4 then", n);
		g->indent++;
		control(g, 4, NULL);
		g->indent--;
	}
	line(g, "end");
	block_close(g);
}

static void delete_stmt(struct gen *g, struct tr_stmt *st)
{
	struct tr_expr *e = st->e;

	if (e->kind == E_SYM && e->sym) {
		struct tr_sym *y = e->sym;
		if (y->arity > 0 || y->type == T_STATS)
			line(g, "%s:clear()", sym_name(g, y));
		else
			line(g, "%s = %s", sym_name(g, y), zero_of(y->type));
		return;
	}
	if (e->kind == E_INDEX && e->sym) {
		if (e->wildcard_index) {
			struct tr_buf b = {0};
			for (unsigned i = 0; i < e->args.n; i++)
				tr_buf_printf(&b, "%s%s", i ? ", " : "",
					      e->args.items[i] ? expr(g, e->args.items[i]) : "rt.ANY");
			line(g, "%s:delete_match(%s)", sym_name(g, e->sym), tr_buf_str(&b));
		} else {
			line(g, "%s:delete(%s)", sym_name(g, e->sym), key_of(g, e->sym, &e->args));
		}
		return;
	}
	tr_sem_error(st->tok, "delete needs a variable, an array or an array element");
}

static void stmt(struct gen *g, struct tr_stmt *st)
{
	if (!st || !nest_ok(g, st->tok))
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			stmt(g, st->list.items[i]);
		return;
	case S_NULL:
		return;
	case S_EXPR: {
		struct tr_expr *e = st->e;
		block_open(g);
		const char *v = expr(g, e);
		/* A Lua statement must be a call: keep calls, drop plain values. */
		if (e->kind == E_CALL || e->kind == E_PRINT || e->kind == E_STAT || e->kind == E_HIST ||
		    (e->kind == E_INDEX && e->a->kind != E_SYM) || e->kind == E_BIN)
			line(g, "local _ = %s", v);
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
		c = cond(g, st->e);
		bare = g->out->len == body;
		if (bare) {
			g->out->len = mark;
			g->out->data[mark] = '\0';
			g->indent--;
		}
		line(g, "if %s then", c);
		g->indent++;
		stmt(g, st->body);
		g->indent--;
		/* "else if" as Lua's elseif while the condition needs no
		 * statements: a long else-if chain stays one Lua level deep. */
		while (st->els && st->els->kind == S_IF) {
			size_t mark = g->out->len;
			const char *c = cond(g, st->els->e);
			if (g->out->len != mark) {
				g->out->len = mark;
				g->out->data[mark] = '\0';
				break;
			}
			st = st->els;
			line(g, "elseif %s then", c);
			g->indent++;
			stmt(g, st->body);
			g->indent--;
		}
		if (st->els) {
			line(g, "else");
			g->indent++;
			stmt(g, st->els);
			g->indent--;
		}
		line(g, "end");
		if (!bare)
			block_close(g);
		return;
	}
	case S_FOR: {
		unsigned label = ++g->tmp;
		block_open(g);
		if (st->e) {
			block_open(g);
			expr(g, st->e);
			block_close(g);
		}
		line(g, "while true do");
		g->indent++;
		if (st->e2)
			line(g, "if not %s then break end", cond(g, st->e2));
		loop_body(g, st->body, label);
		if (st->e3) {
			block_open(g);
			expr(g, st->e3);
			block_close(g);
		}
		g->indent--;
		line(g, "end");
		block_close(g);
		return;
	}
	case S_FOREACH:
		foreach_stmt(g, st);
		return;
	case S_RETURN:
		if (st->e) {
			block_open(g);
			control(g, 1, expr(g, st->e));
			block_close(g);
		} else {
			control(g, 1, g->func ? zero_of(g->func->type) : NULL);
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
		line(g, "do %s end", st->code);
		return;
	}
}

/* ---- the chunk --------------------------------------------------------------- */

/* Lua gives a function at most 200 locals (parameters included) and the
 * generated code needs some of its own: a handler or function with more
 * gets a semantic error rather than Lua's at load. */
#define LUA_LOCALS_MAX 180

static void check_locals(const struct tr_token *at, unsigned n)
{
	if (n > LUA_LOCALS_MAX)
		tr_sem_error(at, "too many parameters and local variables to translate (%u, at most %d)",
			     n, LUA_LOCALS_MAX);
}

static void declare_locals(struct gen *g, struct tr_vec *locals)
{
	for (unsigned i = 0; i < locals->n; i++) {
		struct tr_sym *y = locals->items[i];
		line(g, "local l_%s = %s", y->name, zero_of(y->type));
	}
}

/* The histogram a stats global is printed with: the first @hist_* of it. */
struct hist_find {
	const struct tr_sym *y;
	struct tr_expr *found;
};

static void hist_of(const struct tr_expr *e, void *arg)
{
	struct hist_find *f = arg;

	if (e->kind == E_HIST && e->a->sym == f->y && !f->found)
		f->found = (struct tr_expr *)e;
}

static struct tr_expr *first_hist(struct tr_session *s, struct tr_sym *y)
{
	struct hist_find f = { y, NULL };
	struct tr_walker w = { NULL, hist_of, &f };

	for (unsigned i = 0; i < s->probes.n && !f.found; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n && !f.found; i++)
		tr_walk_stmt(&w, ((struct tr_func *)s->funcs.items[i])->body);
	return f.found;
}

bool tr_global_has_hist(struct tr_session *s, struct tr_sym *y)
{
	return first_hist(s, y) != NULL;
}

/* The bit shift of a statistics global's @variance (stap's optional second
 * argument, 0 when absent): checked as stap checks it, one value per
 * global; -1 when no @variance reads it. */
struct shift_find {
	const struct tr_sym *y;
	int64_t shift;
	bool report;
};

static void shift_of(const struct tr_expr *e, void *arg)
{
	struct shift_find *f = arg;

	if (e->kind != E_STAT || e->stat_op != ST_VARIANCE || !e->a || e->a->sym != f->y)
		return;
	int64_t v = e->args.n ? ((const struct tr_expr *)e->args.items[0])->num : 0;
	if (v < 0 || v > 62) {
		if (f->report)
			tr_sem_error(e->tok, "bit shift (%" PRId64 ") out of range <0..62>", v);
		return;
	}
	if (f->shift >= 0 && f->shift != v) {
		if (f->report)
			tr_sem_error(e->tok, "conflicting bit shifts declared (previously %" PRId64 ")", f->shift);
		return;
	}
	f->shift = v;
}

static int64_t variance_shift(struct tr_session *s, struct tr_sym *y, bool report)
{
	struct shift_find f = { y, -1, report };
	struct tr_walker w = { NULL, shift_of, &f };

	for (unsigned i = 0; i < s->probes.n; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n; i++)
		tr_walk_stmt(&w, ((struct tr_func *)s->funcs.items[i])->body);
	return f.shift;
}

bool tr_global_has_variance(struct tr_session *s, struct tr_sym *y)
{
	return variance_shift(s, y, false) >= 0;
}

/* ", shift = N" for rt.stat/rt.map when @variance reads with a shift. */
static const char *shift_spec(struct tr_session *s, struct tr_sym *y)
{
	int64_t shift = variance_shift(s, y, true);

	return shift > 0 ? tr_printf(", shift = %" PRId64, shift) : "";
}

/* stap: one histogram per statistic (kind and parameters); a second one
 * is a semantic error at its place. */
struct hist_same {
	const struct tr_sym *y;
	const struct tr_expr *first;
	bool reported;
};

static bool same_hist(const struct tr_expr *a, const struct tr_expr *b)
{
	if (a->stat_op != b->stat_op || a->args.n != b->args.n)
		return false;
	for (unsigned i = 0; i < a->args.n; i++)
		if (((const struct tr_expr *)a->args.items[i])->num != ((const struct tr_expr *)b->args.items[i])->num)
			return false;
	return true;
}

static void hist_other(const struct tr_expr *e, void *arg)
{
	struct hist_same *f = arg;

	if (e->kind != E_HIST || e->a->sym != f->y || f->reported || same_hist(e, f->first))
		return;
	tr_sem_error(e->tok, "multiple histogram types declared on '__global_%s'", f->y->name);
	f->reported = true;
}

static void check_one_hist(struct tr_session *s, struct tr_sym *y, const struct tr_expr *first)
{
	struct hist_same f = { y, first, false };
	struct tr_walker w = { NULL, hist_other, &f };

	for (unsigned i = 0; i < s->probes.n; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n; i++)
		tr_walk_stmt(&w, ((struct tr_func *)s->funcs.items[i])->body);
}

static const char *hist_spec(struct tr_session *s, struct tr_sym *y)
{
	struct tr_expr *h = first_hist(s, y);

	if (!h)
		return "nil";
	check_one_hist(s, y, h);
	if (h->stat_op)
		return "{\"log\"}";
	int64_t lo = ((struct tr_expr *)h->args.items[0])->num, hi = ((struct tr_expr *)h->args.items[1])->num,
		step = ((struct tr_expr *)h->args.items[2])->num;
	/* stap's runtime: (hi - lo) / step + 1 buckets (C division), from 1
	 * to 126, besides underflow and overflow */
	if (step <= 0 || (hi - lo) / step + 1 < 1 || (hi - lo) / step + 1 > 126) {
		tr_sem_error(h->tok, step <= 0 ? "histogram: interval must be positive" :
			     "histogram: number of buckets must be between 1 and 126 ((stop - start) / interval + 1)");
		return "nil";
	}
	return tr_printf("{\"linear\", %" PRId64 ", %" PRId64 ", %" PRId64 "}", lo, hi, step);
}

/* Every global by number, for the runtime that moves globals between
 * marktap and the traced processes (rt.globals, runtime/lua/API.md). */
static void sync_registration(struct gen *g)
{
	struct tr_session *s = g->s;
	struct tr_buf names = {0}, get = {0}, set = {0};
	unsigned n = s->globals.n;

	for (unsigned i = 0; i < n; i++) {
		struct tr_sym *y = s->globals.items[i];
		tr_buf_printf(&names, "%s%s", i ? ", " : "", lua_plain(y->name));
		if (!g->globals_in_table) {
			tr_buf_printf(&get, "%s%s", i ? ", " : "", sym_name(g, y));
			tr_buf_printf(&set, "%s = t[%u]; ", sym_name(g, y), i + 1);
		}
	}
	if (g->globals_in_table)
		line(g, "rt.globals({%s}, function() local t = {} for i = 0, %u do t[i + 1] = G[i] end return t end, "
		     "function(t) for i = 0, %u do G[i] = t[i + 1] end end)", tr_buf_str(&names), n - 1, n - 1);
	else
		line(g, "rt.globals({%s}, function() return {%s} end, function(t) %send)",
		     tr_buf_str(&names), tr_buf_str(&get), tr_buf_str(&set));
}

static void globals(struct gen *g)
{
	struct tr_session *s = g->s;

	g->globals_in_table = s->globals.n > 120;
	if (g->globals_in_table)
		line(g, "local G = {}");
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *y = s->globals.items[i];
		const char *init;
		y->index = i;
		if (y->arity > 0) {
			struct tr_buf b = {0};
			tr_buf_printf(&b, "rt.map{name = %s, arity = %d, value = \"%s\"", lua_plain(y->name),
				      y->arity, y->type == T_STATS ? "stat" : tr_type_name(y->type));
			tr_buf_puts(&b, ", keys = {");
			for (int k = 0; k < y->arity; k++)
				tr_buf_printf(&b, "%s\"%s\"", k ? ", " : "", tr_type_name(y->index_types[k]));
			tr_buf_putc(&b, '}');
			if (y->size)
				tr_buf_printf(&b, ", size = %" PRId64, y->size);
			if (y->wrap)
				tr_buf_puts(&b, ", wrap = true");
			if (y->type == T_STATS)
				tr_buf_printf(&b, ", hist = %s%s", hist_spec(s, y), shift_spec(s, y));
			tr_buf_putc(&b, '}');
			init = tr_buf_str(&b);
		} else if (y->type == T_STATS) {
			init = tr_printf("rt.stat{hist = %s%s}", hist_spec(s, y), shift_spec(s, y));
		} else if (y->init) {
			init = y->init->kind == E_NUM ? lua_num(y->init->num) : lua_str_raw(y->init->str);
			if (y->init->kind == E_NUM && y->type == T_STRING)
				init = lua_plain(tr_printf("%" PRId64, y->init->num));
		} else {
			init = zero_of(y->type);
		}
		if (g->globals_in_table)
			line(g, "G[%u] = %s -- %s", i, init, y->name);
		else
			line(g, "local %s = %s", sym_name(g, y), init);
	}
	sync_registration(g);
}

static void functions(struct gen *g)
{
	struct tr_session *s = g->s;

	line(g, "local F = {}");
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		f->lua = tr_printf("%s/%u", f->name, f->params.n);
	}
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		struct tr_buf params = {0};
		for (unsigned k = 0; k < f->params.n; k++) {
			struct tr_sym *p = f->params.items[k];
			tr_buf_printf(&params, "%s%s%s", k ? ", " : "", f->code ? "" : "l_", p->name);
		}
		if (f->code)
			tr_buf_printf(&params, "%s__loc", f->params.n ? ", " : "");
		line(g, "F[%s] = function(%s)", lua_plain(f->lua), tr_buf_str(&params));
		g->indent++;
		if (f->code) {
			line(g, "%s", f->code);
		} else {
			g->func = f;
			line(g, "rt_nest(%s)", loc(f->tok));
			count_actions(g, 1, f->tok);
			check_locals(f->tok, f->params.n + f->locals.n);
			declare_locals(g, &f->locals);
			stmt(g, f->body);
			line(g, "rt_unnest()");
			line(g, "do return %s end", zero_of(f->type));
			g->func = NULL;
		}
		g->indent--;
		line(g, "end");
	}
}

/* Is the tapset or script function NAME among those the script calls? */
static bool uses_func(const struct tr_session *s, const char *name)
{
	for (unsigned i = 0; i < s->funcs.n; i++)
		if (!strcmp(((const struct tr_func *)s->funcs.items[i])->name, name))
			return true;
	return false;
}

static void probes(struct gen *g)
{
	struct tr_session *s = g->s;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		bool marker = r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL || r->kind == P_PROCFS ||
			      r->kind == P_KTRACE || r->kind == P_NETFILTER;
		struct tr_buf params = {0};

		if (marker) {
			tr_buf_puts(&params, "mk_name, mk_fmt");
			for (unsigned k = 0; k < r->fields.n; k++)
				tr_buf_printf(&params, ", a%u", k + 1);
		}
		line(g, "-- %s", lua_comment(r->pp));
		/* pp() of a probe on several markers: by the marker's name */
		if (marker && p->resolved.n > 1) {
			struct tr_buf t = {0};
			for (unsigned k = 0; k < p->resolved.n; k++) {
				struct tr_resolved *rk = p->resolved.items[k];
				tr_buf_printf(&t, "%s[%s] = %s", k ? ", " : "", lua_plain(rk->marker), lua_plain(rk->pp));
			}
			line(g, "local pp_%u = {%s}", i, tr_buf_str(&t));
		}
		line(g, "rt.probe(\"probe_%u\", function(%s)", i, tr_buf_str(&params));
		g->indent++;
		g->rp = r;
		g->params = 0;
		/* the action count and the probe point, set at each hit; each
		 * line is dropped below if the handler turns out not to need
		 * it (a kernel hit pays for every Lua instruction) */
		g->uses_act = g->uses_pp = false;
		size_t act_at = g->out->len;
		line(g, "act = %s", r->kind == P_BEGIN || r->kind == P_END || r->kind == P_ERROR ?
		     "act_int" : "act_max");
		size_t pp_at = g->out->len;
		if (marker && p->resolved.n > 1)
			line(g, "cur_pp = pp_%u[mk_name] or %s", i, lua_plain(r->pp));
		else
			line(g, "cur_pp = %s", lua_plain(r->pp));
		size_t pp_end = g->out->len;
		/* pn(): the point as the script names it, an alias's name */
		if (uses_func(s, "pn")) {
			g->uses_pp = true;
			line(g, "cur_pn = %s", r->alias_pp ? lua_plain(r->alias_pp) : "cur_pp");
		}
		if (r->cond)
			line(g, "if not %s then return end", cond(g, r->cond));
		if (r->oneshot) /* first: next or return in the body still exit */
			line(g, "rt.exit()");
		check_locals(p->tok, p->locals.n + r->fields.n);
		declare_locals(g, &p->locals);
		stmt(g, p->body);
		if (!marker || r->kind == P_PROCFS)
			g->uses_act = g->uses_pp = true;   /* begin, end, timers...: as before */
		if (!g->uses_pp)
			cut(g, pp_at, pp_end);
		else if (marker && p->resolved.n > 1)
			reads_params(g, 2);
		if (!g->uses_act)
			cut(g, act_at, pp_at);
		g->rp = NULL;
		g->indent--;
		if (r->kind == P_END || r->kind == P_ERROR)
			line(g, "end, {always = true})");
		else if (marker)
			line(g, "end, {params = %u})", g->params);
		else
			line(g, "end)");
		if (p->native_plan)
			line(g, "rt.native(\"probe_%u\", \"%s\", {%s})", i, p->native_plan, p->native_where);
	}
}

/* stap prints the globals a script wrote but never read when it ends. */
static void display(struct gen *g)
{
	struct tr_session *s = g->s;

	line(g, "rt.probe(\"__display\", function()");
	g->indent++;
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *y = s->globals.items[i];
		const char *n = sym_name(g, y);
		if (!y->written || y->read || y->file->tapset)
			continue;
		if (y->arity > 0) {
			struct tr_buf ks = {0}, fmt = {0};
			for (int k = 0; k < y->arity; k++) {
				tr_buf_printf(&ks, "%sk%d", k ? ", " : "", k);
				tr_buf_printf(&fmt, "%s%s", k ? "," : "", y->index_types[k] == T_STRING ? "\\\"%s\\\"" : "%d");
			}
			line(g, "for %s, v in %s:each() do", tr_buf_str(&ks), n);
			if (y->type == T_STATS)
				line(g, "  if v:count() > 0 then rt_printf(\"%s[%s] @count=%%d @min=%%d @max=%%d @sum=%%d @avg=%%d\\n\", %s, v:count(), v:min(), v:max(), v:sum(), v:avg()) end",
				     y->name, tr_buf_str(&fmt), tr_buf_str(&ks));
			else
				line(g, "  rt_printf(\"%s[%s]=%s\\n\", %s, v)", y->name, tr_buf_str(&fmt),
				     y->type == T_STRING ? "\\\"%s\\\"" : "%d", tr_buf_str(&ks));
			line(g, "end");
		} else if (y->type == T_STATS) {
			line(g, "if %s:count() > 0 then rt_printf(\"%s @count=%%d @min=%%d @max=%%d @sum=%%d @avg=%%d\\n\", %s:count(), %s:min(), %s:max(), %s:sum(), %s:avg()) end",
			     n, y->name, n, n, n, n, n);
		} else {
			line(g, "rt_printf(\"%s=%s\\n\", %s)", y->name, y->type == T_STRING ? "\\\"%s\\\"" : "%d", n);
		}
	}
	g->indent--;
	line(g, "end, {always = true})");
}

char *tr_generate(struct tr_session *s)
{
	struct tr_buf out = {0};
	struct gen g = { .s = s, .out = &out };
	static const char *const helpers[] = {
		"div", "mod", "shl", "shr", "cat", "trunc", "strcmp", "regmatch", "print", "println",
		"printf", "printd", "printdln", "sprint", "sprintln", "sprintf", "sprintd",
		"sprintdln", "nest", "unnest", NULL,
	};

	line(&g, "-- generated by marktap: do not edit");
	line(&g, "local rt = require \"mtrt\"");
	for (unsigned i = 0; helpers[i]; i++)
		line(&g, "local rt_%s = rt.%s", helpers[i], helpers[i]);
	line(&g, "rt.count_actions(true)");
	line(&g, "local rt_maxaction = rt.maxaction");
	line(&g, "local act_max = rt.MAXACTION < 0 and (-1 >> 1) or rt.MAXACTION");
	line(&g, "local act = act_max");
	/* begin, end and error probes run with interrupts on in stap: their
	 * bound is MAXACTION_INTERRUPTIBLE, 10 x MAXACTION unless set */
	if (tr_define_value(s, "MAXACTION_INTERRUPTIBLE", 0) > 0)
		line(&g, "local act_int = %" PRId64, tr_define_value(s, "MAXACTION_INTERRUPTIBLE", 0));
	else
		line(&g, "local act_int = act_max > (-1 >> 1) // 10 and act_max or act_max * 10");
	line(&g, "local cur_pp = \"\"");
	line(&g, "rt.pp = function() return cur_pp end");
	/* switch_file() rotates only output sent to a file (switchfile.stp) */
	if (uses_func(s, "switch_file"))
		line(&g, "rt.output_is_file = %s", s->output_file ? "true" : "false");
	if (uses_func(s, "pn")) {
		line(&g, "local cur_pn = \"\"");
		line(&g, "rt.pn = function() return cur_pn end");
	}
	for (unsigned i = 0; i < s->user.n; i++) {
		struct tr_script *sc = s->user.items[i];
		for (unsigned k = 0; k < sc->embeds.n; k++)
			line(&g, "%s", ((struct tr_global_embed *)sc->embeds.items[k])->code);
	}
	direct_locals(&g);
	globals(&g);
	functions(&g);
	tr_native_plans(s);
	probes(&g);
	display(&g);
	if (tr_diag.errors) {
		free(out.data);
		return NULL;
	}
	return out.data;
}
