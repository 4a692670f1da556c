/*
 * parse.c - recursive descent over preprocessed tokens, as stap's parser.
 *
 * Precedence, lowest first (stap's): assignment (right), ?:, ||, &&, |,
 * ^, &, "in", comparisons and =~ !~, << >>, ".", + -, * / %, unary, ++ --.
 * An error is reported at once and the parser jumps back to the top level,
 * which skips to the next "probe", "global", "function" or "private": so a
 * pass reports every error of a file, not only the first, as stap does.
 *
 * Nesting (parentheses, unary operators, right operands of assignments and
 * ?:, statements inside statements) is bounded by TR_NEST_MAX with a parse
 * error, so no later pass recurses deeper than that; a chain of
 * left-associative operators (1+1+...+1) is read by a loop, however long,
 * and every later pass walks such a chain with a loop too (tr_chain).
 *
 * One rule differs from stap so that pass 1's output reads back as the same
 * tree: one ';' after any statement is a separator, not an empty statement
 * (stap prints "if (c) x\n;" and would read that ';' as a new statement).
 */
#define _GNU_SOURCE
#include "tr_ast.h"

#include <setjmp.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

/* Probe points one written point may expand to ("{a,b}.{c,d}": 4). */
#define MAX_POINT_EXPANSION 10000

struct parser {
	struct tr_session *s;
	const struct tr_file *f;
	struct tr_vec toks;
	unsigned pos;
	jmp_buf recover;
	struct tr_script *sc;
	bool in_function;
	int loop_depth;
	unsigned nest;                  /* expression() and statement() levels open */
	const char *stack_base;         /* where the parse began on the C stack */
	size_t stack_budget;            /* how much of it the parse may use */
};

static const struct tr_token *peek(struct parser *p)
{
	return p->toks.items[p->pos];
}

static const struct tr_token *peek2(struct parser *p)
{
	const struct tr_token *t = p->toks.items[p->pos];

	return t->type == TOK_EOF ? t : p->toks.items[p->pos + 1];
}

static const struct tr_token *next(struct parser *p)
{
	const struct tr_token *t = p->toks.items[p->pos];

	if (t->type != TOK_EOF)
		p->pos++;
	return t;
}

static bool is_op(const struct tr_token *t, const char *op)
{
	return t->type == TOK_OP && strcmp(t->text, op) == 0;
}

static bool is_kw(const struct tr_token *t, const char *kw)
{
	return t->type == TOK_KEYWORD && strcmp(t->text, kw) == 0;
}

static void __attribute__((noreturn)) fail(struct parser *p, const struct tr_token *t,
					   const char *msg)
{
	if (t->type == TOK_JUNK && t->msg)
		msg = t->msg;
	else if (t->type == TOK_EOF && strcmp(msg, "expected statement"))
		msg = "unexpected end-of-file";
	tr_error_at("parse error", t, "%s", msg);
	longjmp(p->recover, 1);
}

/* One more level of nesting at the token t; leave() undoes it.  Levels
 * are bounded, and so is the C stack they take (a level of parentheses
 * is some sixteen calls here): a small stack (ulimit -s) is no crash. */
static void enter(struct parser *p, const struct tr_token *t)
{
	char here;

	if (++p->nest > TR_NEST_MAX)
		fail(p, t, tr_printf("too many nested levels (more than %d)", TR_NEST_MAX));
	if ((size_t)(p->stack_base - &here) > p->stack_budget)
		fail(p, t, tr_printf("too many nested levels for the stack (%u)", p->nest));
}

/* A quarter of the stack limit for the parse: the passes after it walk
 * the same depth with smaller frames. */
static size_t stack_budget(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_STACK, &r) || r.rlim_cur == RLIM_INFINITY || r.rlim_cur > (64u << 20))
		return 16u << 20;
	return (size_t)r.rlim_cur / 4;
}

static void leave(struct parser *p)
{
	p->nest--;
}

static const struct tr_token *expect_op(struct parser *p, const char *op)
{
	const struct tr_token *t = next(p);

	if (!is_op(t, op))
		fail(p, t, tr_printf("expected '%s'", op));
	return t;
}

static const struct tr_token *expect_ident(struct parser *p)
{
	const struct tr_token *t = next(p);

	if (t->type != TOK_IDENT)
		fail(p, t, "expected identifier");
	return t;
}

static struct tr_expr *mk(enum tr_ekind kind, const struct tr_token *tok)
{
	struct tr_expr *e = tr_alloc(sizeof(*e));

	e->kind = kind;
	e->tok = tok;
	return e;
}

static struct tr_stmt *mks(enum tr_skind kind, const struct tr_token *tok)
{
	struct tr_stmt *st = tr_alloc(sizeof(*st));

	st->kind = kind;
	st->tok = tok;
	return st;
}

/* ---- expressions -------------------------------------------------------- */

static struct tr_expr *expression(struct parser *p);
static struct tr_expr *unary(struct parser *p);
static struct tr_stmt *statement(struct parser *p);
static struct tr_stmt *block(struct parser *p);

static const char *const print_names[] = {
	"print", "println", "printf", "printd", "printdln",
	"sprint", "sprintln", "sprintf", "sprintd", "sprintdln", NULL,
};

static bool is_print_name(const char *s)
{
	for (unsigned i = 0; print_names[i]; i++)
		if (!strcmp(s, print_names[i]))
			return true;
	return false;
}

static const struct tr_token *literal_string(struct parser *p, const char **body)
{
	const struct tr_token *t = next(p);
	struct tr_buf b = {0};

	if (t->type != TOK_STRING)
		fail(p, t, "expected literal string");
	tr_buf_puts(&b, t->text);
	/* Adjacent literals join, as in C: "a" "b" is "ab". */
	while (peek(p)->type == TOK_STRING)
		tr_buf_puts(&b, next(p)->text);
	*body = tr_buf_str(&b);
	return t;
}

/* "a, b, c)": expressions up to the closing ')' (the '(' is read). */
static void expr_list(struct parser *p, struct tr_vec *v)
{
	for (;;) {
		tr_vec_push(v, expression(p));
		const struct tr_token *t = next(p);
		if (is_op(t, ")"))
			return;
		if (!is_op(t, ","))
			fail(p, t, "expected ',' or ')'");
	}
}

static void call_args(struct parser *p, struct tr_vec *args)
{
	expect_op(p, "(");
	if (is_op(peek(p), ")")) {
		next(p);
		return;
	}
	expr_list(p, args);
}

static struct tr_expr *print_call(struct parser *p, const struct tr_token *name)
{
	struct tr_expr *e = mk(E_PRINT, name);
	const char *n = name->text;

	e->op = n;
	e->print_str = n[0] == 's';
	if (e->print_str)
		n++;
	e->print_fmt = !strcmp(n, "printf");
	e->print_delim = !strncmp(n, "printd", 6);
	e->print_ln = strstr(n, "ln") != NULL;
	expect_op(p, "(");
	if (e->print_fmt || e->print_delim) {
		e->fmt_tok = literal_string(p, &e->fmt);
		const char *err;
		enum tr_type unused[1];
		if (e->print_fmt && tr_format_types(e->fmt, unused, 0, &err) < 0)
			fail(p, peek(p), err); /* as stap, in pass 1 */
		const struct tr_token *t = next(p);
		if (is_op(t, ")"))
			goto done;
		if (!is_op(t, ","))
			fail(p, t, "expected ',' or ')'");
	} else if (is_op(peek(p), ")")) {
		next(p);
		goto done;
	}
	expr_list(p, &e->args);
done:
	if (e->print_delim && e->args.n < 2) /* printd and printdln: two values or more */
		fail(p, peek(p), "expected literal string or number");
	if (!e->print_fmt && !e->print_delim && e->args.n == 0 && strcmp(e->op, "println") &&
	    strcmp(e->op, "sprintln"))
		fail(p, name, tr_printf("%s requires at least one argument", e->op));
	return e;
}

static int stat_op(const char *name)
{
	static const char *const names[] = {
		"@count", "@sum", "@min", "@max", "@avg", "@variance", NULL,
	};
	for (int i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* @variance(s, SHIFT): the bit shift is a literal number (stap's parser
 * takes a '-' before it; the range is checked with the statistic). */
static void variance_shift(struct parser *p, struct tr_expr *e)
{
	const struct tr_token *comma = next(p);

	if (e->stat_op != ST_VARIANCE)
		fail(p, comma, "not more than 1 parameter allowed");
	bool neg = is_op(peek(p), "-");
	if (neg)
		next(p);
	const struct tr_token *n = next(p);
	if (n->type != TOK_NUMBER)
		fail(p, n, "expected number");
	struct tr_expr *v = mk(E_NUM, n);
	v->num = neg ? -n->num : n->num;
	tr_vec_push(&e->args, v);
	if (is_op(peek(p), ","))
		fail(p, peek(p), "not more than 2 parameters allowed");
}

/* Indexes "[a, b, *]" after an array name; '*' only where allowed. */
static void index_list(struct parser *p, struct tr_expr *e, bool allow_star)
{
	expect_op(p, "[");
	for (;;) {
		if (allow_star && is_op(peek(p), "*")) {
			const struct tr_token *t = next(p);
			tr_vec_push(&e->args, NULL);
			e->wildcard_index = true;
			(void)t;
		} else {
			tr_vec_push(&e->args, expression(p));
		}
		const struct tr_token *t = next(p);
		if (is_op(t, "]"))
			return;
		if (!is_op(t, ","))
			fail(p, t, "expected ',' or ']'");
	}
}

static struct tr_expr *hist_op(struct parser *p, const struct tr_token *t)
{
	struct tr_expr *e = mk(E_HIST, t);

	e->stat_op = !strcmp(t->text, "@hist_log");
	expect_op(p, "(");
	e->a = expression(p);
	if (!e->stat_op) {
		for (int i = 0; i < 3; i++) {
			expect_op(p, ",");
			const struct tr_token *n = peek(p);
			struct tr_expr *v = unary(p);
			if (v->kind == E_UNARY && !strcmp(v->op, "-") && v->a->kind == E_NUM) {
				v->a->num = -v->a->num;
				v = v->a;
			}
			if (v->kind != E_NUM)
				fail(p, n, "expected literal number");
			tr_vec_push(&e->args, v);
		}
	}
	expect_op(p, ")");
	return e;
}

/* ---- target expressions: parsed and printed as stap does; pass 2 wants
 * DWARF for all but a marker's $name (and says so) ----------------------- */

/* The operators of target expressions and how many operands each takes
 * (@var and @cast: literal strings after the first). */
static const struct target_op {
	const char *name;
	int operands;
	bool guru;
} target_ops[] = {
	{ "@var", 0, false }, { "@cast", 1, false }, { "@entry", 1, false },
	{ "@probewrite", 1, false }, { "@kderef", 2, true }, { "@uderef", 2, false },
	{ "@kregister", 1, true }, { "@uregister", 1, false },
	{ "@perf", 0, false },          /* @perf("counter"): a perf counter's value */
};

static const struct target_op *target_op(const char *name)
{
	for (unsigned i = 0; i < sizeof(target_ops) / sizeof(target_ops[0]); i++)
		if (!strcmp(name, target_ops[i].name))
			return &target_ops[i];
	return NULL;
}

/* "->f", "[i]" after a target, into e->members ("[]" for each index). */
static void target_members(struct parser *p, struct tr_expr *e)
{
	struct tr_buf m = {0};

	for (;;) {
		if (is_op(peek(p), "->")) {
			next(p);
			const struct tr_token *f = next(p);
			if (f->type != TOK_IDENT && f->type != TOK_KEYWORD)
				fail(p, f, "expected identifier");
			tr_buf_printf(&m, "->%s", f->text);
		} else if (is_op(peek(p), "[")) {
			unsigned before = e->args.n;
			index_list(p, e, false);
			for (unsigned i = before; i < e->args.n; i++)
				tr_buf_puts(&m, "[]");
		} else {
			break;
		}
	}
	e->members = m.data;
}

/* stap's "autocast": members and indexes of any value, (x)[1]->a, its
 * base in a (printed in parentheses), needing a type as $x->f does. */
static struct tr_expr *autocast(struct parser *p, struct tr_expr *base)
{
	/* (an index first: its place is the '[', as in stap's errors) */
	struct tr_expr *t = mk(E_TARGET, is_op(peek(p), "[") ? peek(p) : base->tok);

	t->str = "";
	t->a = base;
	target_members(p, t);
	return t;
}

/* $name..., @var("name"[, "module"]), @cast(e, "type"[, "module"]),
 * @entry(e), @kderef(size, address)... and their members. */
static struct tr_expr *target(struct parser *p, const struct tr_token *t)
{
	struct tr_expr *e = mk(E_TARGET, t);
	const struct target_op *op = target_op(t->text);
	const char *lit;

	e->str = t->text;
	if (op && op->guru && !p->s->guru && !p->f->guru_ok)
		fail(p, t, tr_printf("using %s operator not permitted; need stap -g", t->text));
	if (op && !op->operands) { /* @var("name"[, "module"]), @perf("name") */
		expect_op(p, "(");
		literal_string(p, &lit);
		struct tr_buf b = {0};
		tr_buf_printf(&b, "%s(\"%s\"", t->text, lit);
		if (!strcmp(t->text, "@var") && is_op(peek(p), ",")) {
			next(p);
			literal_string(p, &lit);
			tr_buf_printf(&b, ", \"%s\"", lit);
		}
		tr_buf_putc(&b, ')');
		e->str = tr_buf_str(&b);
		expect_op(p, ")");
	} else if (op) {
		expect_op(p, "(");
		e->a = expression(p);
		if (op->operands == 2) {
			expect_op(p, ",");
			e->b = expression(p);
		} else if (!strcmp(t->text, "@cast")) { /* , "type"[, "module"] */
			struct tr_buf b = {0};
			for (int i = 0; i < 2 && (i == 0 || is_op(peek(p), ",")); i++) {
				expect_op(p, ",");
				literal_string(p, &lit);
				tr_buf_printf(&b, ", \"%s\"", lit);
			}
			e->fmt = tr_buf_str(&b);
		}
		expect_op(p, ")");
	}
	target_members(p, e);
	return e;
}

static struct tr_expr *primary(struct parser *p)
{
	const struct tr_token *t = next(p);
	struct tr_expr *e;
	int op;

	if (is_op(t, "(")) {
		e = expression(p);
		expect_op(p, ")");
		if (is_op(peek(p), "[") && e->kind == E_CALL) { /* "(f(1))[2]", as stap prints it */
			struct tr_expr *ix = mk(E_INDEX, peek(p));
			ix->a = e;
			index_list(p, ix, false);
			return ix;
		}
		if (is_op(peek(p), "[") && e->kind != E_TARGET)
			return autocast(p, e);   /* (x)[1], (a + b)[2]: never array x's element */
		return e;
	}
	if (t->type == TOK_NUMBER) {
		e = mk(E_NUM, t);
		e->num = t->num;
		return e;
	}
	if (t->type == TOK_EMBEDDED) { /* an embedded expression, as stap's */
		if (!p->s->guru && !p->f->guru_ok)
			fail(p, t, "embedded code in unprivileged script; need marktap -g");
		e = mk(E_EMBED, t);
		e->str = t->text;
		return e;
	}
	if (t->type == TOK_STRING) {
		p->pos--;
		e = mk(E_STR, t);
		literal_string(p, &e->str);
		return e;
	}
	if (t->type != TOK_IDENT)
		fail(p, t, "expected literal string or number");
	if (!strcmp(t->text, "@defined")) {
		e = mk(E_DEFINED, t);
		expect_op(p, "(");
		e->a = expression(p);
		expect_op(p, ")");
		return e;
	}
	if ((op = stat_op(t->text)) >= 0) {
		e = mk(E_STAT, t);
		e->stat_op = op;
		e->op = t->text;
		expect_op(p, "(");
		e->a = expression(p);
		if (is_op(peek(p), ","))
			variance_shift(p, e);
		expect_op(p, ")");
		return e;
	}
	if (!strcmp(t->text, "@hist_linear") || !strcmp(t->text, "@hist_log")) {
		e = hist_op(p, t);
		if (is_op(peek(p), "[")) {
			struct tr_expr *ix = mk(E_INDEX, peek(p));
			ix->a = e;
			index_list(p, ix, false);
			if (ix->args.n != 1)
				fail(p, ix->tok, "multiple indexes for a histogram bucket");
			return ix;
		}
		return e;
	}
	if (t->text[0] == '$' || (t->text[0] == '@' && is_op(peek(p), "(") && target_op(t->text)))
		return target(p, t);
	if (t->text[0] == '@')
		fail(p, t, tr_printf("unknown operator %s", t->text));
	if (is_op(peek(p), "(")) {
		if (is_print_name(t->text))
			return print_call(p, t);
		e = mk(E_CALL, t);
		e->op = t->text;
		call_args(p, &e->args);
		if (is_op(peek(p), "[")) { /* stap reads it; pass 2 rejects it */
			struct tr_expr *ix = mk(E_INDEX, peek(p));
			ix->a = e;
			index_list(p, ix, false);
			return ix;
		}
		return e;
	}
	e = mk(E_SYM, t);
	e->str = t->text;
	if (is_op(peek(p), "[")) {
		struct tr_expr *ix = mk(E_INDEX, t);
		ix->a = e;
		index_list(p, ix, false);
		while (is_op(peek(p), "[")) { /* a[1][2]: stap reads it, pass 2 rejects it */
			struct tr_expr *outer = mk(E_INDEX, peek(p));
			outer->a = ix;
			index_list(p, outer, false);
			ix = outer;
		}
		return ix;
	}
	return e;
}

/* A value, and stap's "autocast" after it, fh->fh_dentry or f(x)->a: a
 * member chain of any value (its base in a), needing DWARF like $x->f. */
static struct tr_expr *value(struct parser *p)
{
	struct tr_expr *e = primary(p);

	if ((e->kind != E_TARGET && is_op(peek(p), "->")) ||
	    ((e->kind == E_STR || e->kind == E_NUM) && is_op(peek(p), "[")))   /* "s"[1] */
		return autocast(p, e);
	return e;
}

static bool is_lvalue(const struct tr_expr *e)
{
	return e->kind == E_SYM || e->kind == E_INDEX || e->kind == E_TARGET;
}

/* ++v, v++ of any value v, as stap reads them (1++, f()++: pass 3
 * refuses what is no lvalue); not ++v++ nor v++++, as in stap. */
static struct tr_expr *crement(struct parser *p)
{
	const struct tr_token *t = peek(p);
	struct tr_expr *e;

	if (is_op(t, "++") || is_op(t, "--")) {
		next(p);
		e = mk(E_PRE, t);
		e->op = t->text;
		e->a = value(p);
		return e;
	}
	e = value(p);
	t = peek(p);
	if (is_op(t, "++") || is_op(t, "--")) {
		next(p);
		struct tr_expr *post = mk(E_POST, t);
		post->op = t->text;
		post->a = e;
		return post;
	}
	return e;
}

static struct tr_expr *unary(struct parser *p)
{
	const struct tr_token *t = peek(p);

	if (is_op(t, "&")) { /* &$x->f, &@var("x"): an address, as in stap */
		next(p);
		const struct tr_token *n = peek(p);
		struct tr_expr *e = value(p);
		if (e->kind == E_TARGET && e->addr)
			fail(p, n, "expected target-symbol expression after '&'");
		if (e->kind != E_TARGET) {
			/* &x, &a[1], &1: stap reads them, "&(x)"; pass 2 refuses
			 * them (elab_bind.c) */
			struct tr_expr *u = mk(E_UNARY, t);
			u->op = t->text;
			u->a = e;
			return u;
		}
		e->addr = true;
		return e;
	}

	if (is_op(t, "+") || is_op(t, "-") || is_op(t, "!") || is_op(t, "~")) {
		struct tr_expr *e = mk(E_UNARY, t);
		next(p);
		e->op = t->text;
		/* "-9223372036854775808" is the one literal that needs the sign. */
		if (is_op(t, "-") && peek(p)->type == TOK_NUMBER && peek(p)->overflow &&
		    peek(p)->num == INT64_MIN) {
			e = mk(E_NUM, next(p));
			e->num = INT64_MIN;
			return e;
		}
		enter(p, t);
		e->a = unary(p);
		leave(p);
		return e;
	}
	return crement(p);
}

typedef struct tr_expr *(*level_fn)(struct parser *);

/* A left-associative binary level: one of ops over the next level. */
static struct tr_expr *binary(struct parser *p, level_fn sub, const char *const *ops,
			      enum tr_ekind kind)
{
	struct tr_expr *l = sub(p);

	for (;;) {
		const struct tr_token *t = peek(p);
		unsigned i;
		for (i = 0; ops[i]; i++)
			if (is_op(t, ops[i]))
				break;
		if (!ops[i])
			return l;
		next(p);
		struct tr_expr *e = mk(kind, t);
		e->op = t->text;
		e->a = l;
		e->b = sub(p);
		l = e;
	}
}

static const char *const mul_ops[] = { "*", "/", "%", NULL };
static const char *const add_ops[] = { "+", "-", NULL };
static const char *const cat_ops[] = { ".", NULL };
static const char *const shift_ops[] = { "<<", ">>", NULL };
static const char *const cmp_ops[] = { "<", ">", "<=", ">=", "==", "!=", NULL };
static const char *const band_ops[] = { "&", NULL };
static const char *const bxor_ops[] = { "^", NULL };
static const char *const bor_ops[] = { "|", NULL };
static const char *const land_ops[] = { "&&", NULL };
static const char *const lor_ops[] = { "||", NULL };

static struct tr_expr *multiplicative(struct parser *p) { return binary(p, unary, mul_ops, E_BIN); }
static struct tr_expr *additive(struct parser *p) { return binary(p, multiplicative, add_ops, E_BIN); }
static struct tr_expr *concatenation(struct parser *p) { return binary(p, additive, cat_ops, E_CAT); }
static struct tr_expr *shift(struct parser *p) { return binary(p, concatenation, shift_ops, E_BIN); }

static struct tr_expr *comparison(struct parser *p)
{
	struct tr_expr *l = shift(p);
	const struct tr_token *t = peek(p);

	if (is_op(t, "=~") || is_op(t, "!~")) {
		struct tr_expr *e = mk(E_REGEX, next(p));
		e->op = t->text;
		e->a = l;
		e->b = mk(E_STR, peek(p));
		literal_string(p, &e->b->str);
		return e;
	}
	for (;;) {
		unsigned i;
		t = peek(p);
		for (i = 0; cmp_ops[i]; i++)
			if (is_op(t, cmp_ops[i]))
				break;
		if (!cmp_ops[i])
			return l;
		next(p);
		struct tr_expr *e = mk(E_CMP, t);
		e->op = t->text;
		e->a = l;
		e->b = shift(p);
		l = e;
	}
}

static struct tr_expr *array_in(struct parser *p)
{
	struct tr_vec idx = {0};
	bool bracketed = false;
	const struct tr_token *t = peek(p);

	if (is_op(t, "[")) {
		next(p);
		bracketed = true;
	}
	for (;;) {
		/* "[*, 2] in a": any value in that place */
		if (bracketed && is_op(peek(p), "*") && (is_op(peek2(p), ",") || is_op(peek2(p), "]"))) {
			next(p);
			tr_vec_push(&idx, NULL);
		} else {
			tr_vec_push(&idx, comparison(p));
		}
		if (!bracketed)
			break;
		t = next(p);
		if (is_op(t, "]"))
			break;
		if (!is_op(t, ","))
			fail(p, t, "expected ',' or ']'");
	}
	t = peek(p);
	if (is_kw(t, "in")) {
		struct tr_expr *e = mk(E_IN, next(p));
		const struct tr_token *n = expect_ident(p);
		e->args = idx;
		e->a = mk(E_SYM, n);
		e->a->str = n->text;
		return e;
	}
	if (idx.n != 1 || bracketed) {
		if (bracketed)
			fail(p, t, "expected 'in'");
		fail(p, t, "unexpected comma-separated expression list");
	}
	return idx.items[0];
}

static struct tr_expr *bit_and(struct parser *p) { return binary(p, array_in, band_ops, E_BIN); }
static struct tr_expr *bit_xor(struct parser *p) { return binary(p, bit_and, bxor_ops, E_BIN); }
static struct tr_expr *bit_or(struct parser *p) { return binary(p, bit_xor, bor_ops, E_BIN); }
static struct tr_expr *logical_and(struct parser *p) { return binary(p, bit_or, land_ops, E_LOGIC); }
static struct tr_expr *logical_or(struct parser *p) { return binary(p, logical_and, lor_ops, E_LOGIC); }

static struct tr_expr *ternary(struct parser *p)
{
	struct tr_expr *c = logical_or(p);
	const struct tr_token *t = peek(p);

	if (!is_op(t, "?"))
		return c;
	next(p);
	struct tr_expr *e = mk(E_TERN, t);
	e->a = c;
	e->b = expression(p);
	expect_op(p, ":");
	e->c = expression(p);
	return e;
}

static const char *const assign_ops[] = {
	"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", ".=", "<<<", NULL,
};

static struct tr_expr *assignment(struct parser *p)
{
	struct tr_expr *l = ternary(p);
	const struct tr_token *t = peek(p);
	unsigned i;

	for (i = 0; assign_ops[i]; i++)
		if (is_op(t, assign_ops[i]))
			break;
	if (!assign_ops[i])
		return l;
	if (!is_lvalue(l))
		fail(p, t, "expected an lvalue before assignment operator");
	next(p);
	struct tr_expr *e = mk(E_ASSIGN, t);
	e->op = t->text;
	e->a = l;
	e->b = expression(p);
	return e;
}

/* Every way into a nested expression passes here, or by unary(). */
static struct tr_expr *expression(struct parser *p)
{
	enter(p, peek(p));
	struct tr_expr *e = assignment(p);
	leave(p);
	return e;
}

/* ---- statements -------------------------------------------------------- */

static struct tr_stmt *block(struct parser *p)
{
	struct tr_stmt *st = mks(S_BLOCK, expect_op(p, "{"));

	for (;;) {
		const struct tr_token *t = peek(p);
		if (is_op(t, "}")) {
			next(p);
			return st;
		}
		if (t->type == TOK_EOF)
			fail(p, t, "expected statement");
		tr_vec_push(&st->list, statement(p));
	}
}

static struct tr_stmt *foreach_stmt(struct parser *p, const struct tr_token *kw)
{
	struct tr_stmt *st = mks(S_FOREACH, kw);
	const struct tr_token *t;

	expect_op(p, "(");
	/* foreach (v[+-] = [k...] in a) */
	if (peek(p)->type == TOK_IDENT &&
	    (is_op(peek2(p), "=") ||
	     ((is_op(peek2(p), "+") || is_op(peek2(p), "-")) &&
	      is_op(p->toks.items[p->pos + 2], "=")))) {
		t = next(p);
		st->value = mk(E_SYM, t);
		st->value->str = t->text;
		if (is_op(peek(p), "+") || is_op(peek(p), "-")) {
			st->sort_col = -1;
			st->sort_dir = is_op(next(p), "+") ? 1 : -1;
		}
		expect_op(p, "=");
	}
	if (is_op(peek(p), "[")) {
		next(p);
		st->keys_bracketed = true;
	}
	for (;;) {
		t = expect_ident(p);
		struct tr_expr *k = mk(E_SYM, t);
		k->str = t->text;
		tr_vec_push(&st->keys, k);
		if (is_op(peek(p), "+") || is_op(peek(p), "-")) {
			if (st->sort_col)
				fail(p, peek(p), "multiple sort directives");
			st->sort_col = (int)st->keys.n;
			st->sort_dir = is_op(next(p), "+") ? 1 : -1;
		}
		if (!st->keys_bracketed)
			break;
		t = next(p);
		if (is_op(t, "]"))
			break;
		if (!is_op(t, ","))
			fail(p, t, "expected ',' or ']'");
	}
	t = next(p);
	if (!is_kw(t, "in"))
		fail(p, t, "expected 'in'");
	t = peek(p);
	if (t->type == TOK_IDENT && (!strcmp(t->text, "@hist_linear") || !strcmp(t->text, "@hist_log"))) {
		next(p);
		st->base = hist_op(p, t);
	} else {
		t = expect_ident(p);
		st->base = mk(E_SYM, t);
		st->base->str = t->text;
		if (is_op(peek(p), "[")) { /* a slice: arr[*, 2] */
			struct tr_expr *ix = mk(E_INDEX, t);
			ix->a = st->base;
			index_list(p, ix, true);
			st->base = ix;
		}
	}
	/* foreach (k in a @sum-): which aggregate orders statistics */
	int aggr = peek(p)->type == TOK_IDENT ? stat_op(peek(p)->text) : -1;
	if (aggr >= 0) {
		next(p);
		st->sort_aggr = aggr;
		if (!is_op(peek(p), "+") && !is_op(peek(p), "-"))
			fail(p, peek(p), "expected sort directive");
	}
	if (is_op(peek(p), "+") || is_op(peek(p), "-")) {
		if (st->sort_col)
			fail(p, peek(p), "multiple sort directives");
		st->sort_col = -1;
		st->sort_dir = is_op(next(p), "+") ? 1 : -1;
	}
	if (is_kw(peek(p), "limit")) {
		next(p);
		st->limit = expression(p);
	}
	expect_op(p, ")");
	p->loop_depth++;
	st->body = statement(p);
	p->loop_depth--;
	return st;
}

static struct tr_stmt *try_stmt(struct parser *p, const struct tr_token *kw)
{
	struct tr_stmt *st = mks(S_TRY, kw);
	const struct tr_token *t;

	st->body = block(p);
	/* stap prints a try body inside its own braces: read that back as one block */
	if (st->body->list.n == 1 && ((struct tr_stmt *)st->body->list.items[0])->kind == S_BLOCK)
		st->body = st->body->list.items[0];
	t = next(p);
	if (!is_kw(t, "catch"))
		fail(p, t, "expected 'catch'");
	if (is_op(peek(p), "(")) {
		next(p);
		t = expect_ident(p);
		st->catch_var = mk(E_SYM, t);
		st->catch_var->str = t->text;
		expect_op(p, ")");
	}
	st->els = block(p);
	if (st->els->list.n == 1 && ((struct tr_stmt *)st->els->list.items[0])->kind == S_BLOCK)
		st->els = st->els->list.items[0];
	return st;
}

static bool ends_statement(const struct tr_token *t)
{
	return is_op(t, ";") || is_op(t, "}") || t->type == TOK_EOF;
}

static struct tr_stmt *statement_inner(struct parser *p)
{
	const struct tr_token *t = peek(p);
	struct tr_stmt *st;

	if (is_op(t, ";"))
		return mks(S_NULL, next(p));
	if (is_op(t, "{"))
		return block(p);
	if (t->type == TOK_EMBEDDED) {
		next(p);
		if (!p->s->guru && !p->f->guru_ok)
			fail(p, t, "embedded code in unprivileged script; need marktap -g");
		st = mks(S_EMBED, t);
		st->code = t->text;
		return st;
	}
	if (t->type == TOK_KEYWORD) {
		next(p);
		if (is_kw(t, "if")) {
			st = mks(S_IF, t);
			expect_op(p, "(");
			st->e = expression(p);
			expect_op(p, ")");
			st->body = statement(p);
			if (is_kw(peek(p), "else")) {
				next(p);
				st->els = statement(p);
			}
			return st;
		}
		if (is_kw(t, "while")) {
			st = mks(S_FOR, t);
			st->is_while = true;
			expect_op(p, "(");
			st->e2 = expression(p);
			expect_op(p, ")");
			p->loop_depth++;
			st->body = statement(p);
			p->loop_depth--;
			return st;
		}
		if (is_kw(t, "for")) {
			st = mks(S_FOR, t);
			expect_op(p, "(");
			if (!is_op(peek(p), ";"))
				st->e = expression(p);
			t = expect_op(p, ";");
			if (!is_op(peek(p), ";")) {
				st->e2 = expression(p);
			} else { /* stap reads a missing condition as 1 */
				st->e2 = mk(E_NUM, t);
				st->e2->num = 1;
			}
			expect_op(p, ";");
			if (!is_op(peek(p), ")"))
				st->e3 = expression(p);
			expect_op(p, ")");
			p->loop_depth++;
			st->body = statement(p);
			p->loop_depth--;
			return st;
		}
		if (is_kw(t, "foreach"))
			return foreach_stmt(p, t);
		if (is_kw(t, "try"))
			return try_stmt(p, t);
		if (is_kw(t, "return")) {
			if (!p->in_function)
				fail(p, t, "found 'return' not in function context");
			st = mks(S_RETURN, t);
			if (!ends_statement(peek(p)))
				st->e = expression(p);
			return st;
		}
		if (is_kw(t, "delete")) {
			st = mks(S_DELETE, t);
			const struct tr_token *n = peek(p);
			if (n->type == TOK_IDENT && n->text[0] != '$' && is_op(peek2(p), "[")) {
				next(p);
				struct tr_expr *ix = mk(E_INDEX, n);
				ix->a = mk(E_SYM, n);
				ix->a->str = n->text;
				index_list(p, ix, true);
				st->e = ix;
			} else {
				st->e = expression(p);
			}
			return st;
		}
		if (is_kw(t, "next")) {
			if (p->in_function)
				fail(p, t, "found 'next' in function context");
			return mks(S_NEXT, t);
		}
		if (is_kw(t, "break") || is_kw(t, "continue")) {
			if (!p->loop_depth)
				fail(p, t, tr_printf("found '%s' not in loop context", t->text));
			return mks(is_kw(t, "break") ? S_BREAK : S_CONTINUE, t);
		}
		fail(p, t, "expected statement");
	}
	if (t->type == TOK_EOF)
		fail(p, t, "expected statement");
	st = mks(S_EXPR, t);
	st->e = expression(p);
	return st;
}

static bool compound(const struct tr_stmt *st)
{
	switch (st->kind) {
	case S_BLOCK: case S_IF: case S_FOR: case S_FOREACH: case S_TRY: case S_NULL:
		return true;
	default:
		return false;
	}
}

static struct tr_stmt *statement(struct parser *p)
{
	enter(p, peek(p));
	struct tr_stmt *st = statement_inner(p);

	leave(p);
	/* A simple statement takes the ';' after it; after a compound one
	 * (block, if, loop, try) stap reads the ';' as an empty statement,
	 * which it prints as ";;" */
	if (is_op(peek(p), ";") && !compound(st))
		next(p);
	return st;
}

/* ---- probe points and declarations -------------------------------------- */

static bool adjacent(const struct tr_token *a, const struct tr_token *b)
{
	return a->file == b->file && a->line == b->line &&
	       b->col == a->col + strlen(a->text) && a->chain == b->chain;
}

static bool component_piece(const struct tr_token *t)
{
	return t->type == TOK_IDENT || t->type == TOK_KEYWORD || t->type == TOK_NUMBER ||
	       is_op(t, "*");
}

static struct tr_expr *point_literal(struct parser *p)
{
	const struct tr_token *t = next(p);
	struct tr_expr *e;
	bool neg = false;

	if (is_op(t, "-")) {
		neg = true;
		t = next(p);
	}
	if (t->type == TOK_NUMBER) {
		e = mk(E_NUM, t);
		e->num = neg ? -t->num : t->num;
		return e;
	}
	if (t->type == TOK_STRING && !neg) {
		p->pos--;
		e = mk(E_STR, t);
		literal_string(p, &e->str);
		return e;
	}
	fail(p, t, "expected literal string or number");
}

/* One component: "syscall", "function(\"f\")", "*"... */
static struct tr_component *component(struct parser *p)
{
	struct tr_component *c = tr_alloc(sizeof(*c));
	struct tr_buf name = {0};
	const struct tr_token *t = next(p), *prev;

	if (t->type == TOK_IDENT && t->text[0] == '@') /* as stap: no @name aliases */
		fail(p, t, "expected identifier or '*' or '{'");
	if (!component_piece(t) || (t->type == TOK_IDENT && t->text[0] == '$'))
		fail(p, t, "expected probe point specifier");
	c->tok = t;
	tr_buf_puts(&name, t->text);
	prev = t;
	while (component_piece(peek(p)) && adjacent(prev, peek(p))) {
		prev = next(p);
		tr_buf_puts(&name, prev->text);
	}
	c->name = tr_buf_str(&name);
	if (is_op(peek(p), "(")) {
		next(p);
		c->has_arg = true;
		c->arg = point_literal(p);
		expect_op(p, ")");
	}
	return c;
}

/* A probe point being read: its components and its '?' or '!'. */
struct point_path {
	struct tr_vec comps;
	bool optional, sufficient;
};

/* Every path of tails appended to every path of *paths, bounded:
 * "{a,b}.{c,d}" is four probe points. */
static void paths_product(struct parser *p, struct tr_vec *paths, const struct tr_vec *tails,
			  const struct tr_token *at)
{
	struct tr_vec out = {0};

	if ((size_t)paths->n * tails->n > MAX_POINT_EXPANSION)
		fail(p, at, tr_printf("too many probe points from brace alternatives (more than %d)",
				      MAX_POINT_EXPANSION));
	for (unsigned i = 0; i < paths->n; i++)
		for (unsigned k = 0; k < tails->n; k++) {
			const struct point_path *head = paths->items[i], *tail = tails->items[k];
			struct point_path *v = tr_alloc(sizeof(*v));
			for (unsigned j = 0; j < head->comps.n; j++)
				tr_vec_push(&v->comps, head->comps.items[j]);
			for (unsigned j = 0; j < tail->comps.n; j++)
				tr_vec_push(&v->comps, tail->comps.items[j]);
			v->optional = head->optional || tail->optional;
			v->sufficient = head->sufficient || tail->sufficient;
			tr_vec_push(&out, v);
		}
	free(paths->items);
	*paths = out;
}

/* '?' and '!' after a probe point (or an alternative of one). */
static void point_flags(struct parser *p, bool *optional, bool *sufficient)
{
	for (;;) {
		if (is_op(peek(p), "?")) {
			next(p);
			*optional = true;
		} else if (is_op(peek(p), "!")) {
			next(p);
			*optional = *sufficient = true;
		} else {
			return;
		}
	}
}

/* Components joined by '.', with stap's brace alternatives
 * "syscall.{open,close}" expanded as stap expands them when it parses:
 * into *paths, one struct point_path per probe point. */
static void point_paths(struct parser *p, struct tr_vec *paths, bool in_braces)
{
	tr_vec_push(paths, tr_alloc(sizeof(struct point_path)));
	for (;;) {
		const struct tr_token *t = peek(p);
		struct tr_vec tails = {0};
		if (is_op(t, "{") && !in_braces) {
			next(p);
			for (;;) {
				struct tr_vec alt = {0};
				point_paths(p, &alt, true);
				bool optional = false, sufficient = false;
				point_flags(p, &optional, &sufficient);
				for (unsigned i = 0; i < alt.n; i++) {
					struct point_path *a = alt.items[i];
					a->optional |= optional;
					a->sufficient |= sufficient;
					tr_vec_push(&tails, a);
				}
				free(alt.items);
				const struct tr_token *sep = next(p);
				if (is_op(sep, "}"))
					break;
				if (!is_op(sep, ","))
					fail(p, sep, "expected ',' or '}'");
			}
		} else {
			struct point_path *one = tr_alloc(sizeof(*one));
			tr_vec_push(&one->comps, component(p));
			tr_vec_push(&tails, one);
		}
		paths_product(p, paths, &tails, t);
		free(tails.items);
		if (!is_op(peek(p), "."))
			return;
		next(p);
	}
}

/* One probe point as written, several if it has brace alternatives. */
static void probe_points(struct parser *p, struct tr_vec *out)
{
	struct tr_vec paths = {0};
	const struct tr_token *first = peek(p);
	bool optional = false, sufficient = false;
	struct tr_expr *cond = NULL;

	point_paths(p, &paths, false);
	point_flags(p, &optional, &sufficient);
	if (is_kw(peek(p), "if")) {
		next(p);
		expect_op(p, "(");
		cond = expression(p);
		expect_op(p, ")");
	}
	for (unsigned i = 0; i < paths.n; i++) {
		struct tr_probe_point *pp = tr_alloc(sizeof(*pp));
		struct point_path *path = paths.items[i];
		pp->tok = first;
		pp->comps = path->comps;
		pp->optional = optional || path->optional;
		pp->sufficient = sufficient || path->sufficient;
		pp->cond = cond;
		tr_vec_push(out, pp);
	}
	free(paths.items);
}

static void probe_decl(struct parser *p, const struct tr_token *kw, bool privacy)
{
	struct tr_probe *pr = tr_alloc(sizeof(*pr));
	const struct tr_token *t;

	pr->tok = kw;
	pr->file = p->f;
	pr->privacy = privacy;
	for (;;) {
		probe_points(p, &pr->points);
		t = peek(p);
		if (is_op(t, ",")) {
			next(p);
			continue;
		}
		if (is_op(t, "=") || is_op(t, "+=")) {
			struct tr_probe_point *alias = pr->points.items[0];
			if (pr->is_alias || pr->points.n != 1 || alias->cond || alias->optional)
				fail(p, t, "expected probe point specifier");
			next(p);
			pr->is_alias = true;
			pr->epilogue = is_op(t, "+=");
			tr_vec_push(&pr->alias_names, alias);
			pr->points.n = 0;
			continue;
		}
		break;
	}
	t = peek(p);
	if (!is_op(t, "{"))
		fail(p, t, "expected '{'");
	p->in_function = false;
	pr->body = block(p);
	tr_vec_push(pr->is_alias ? &p->sc->aliases : &p->sc->probes, pr);
}

static struct tr_expr *global_init(struct parser *p)
{
	return point_literal(p);
}

static void global_decl(struct parser *p, bool privacy)
{
	for (;;) {
		const struct tr_token *t = expect_ident(p);
		struct tr_sym *g = tr_alloc(sizeof(*g));

		g->name = t->text;
		g->tok = t;
		g->kind = SYM_GLOBAL;
		g->arity = -1;
		g->privacy = privacy;
		g->file = p->f;
		if (t->text[0] == '$' || t->text[0] == '@')
			fail(p, t, "expected identifier");
		for (unsigned i = 0; i < p->sc->globals.n; i++)
			if (!strcmp(((struct tr_sym *)p->sc->globals.items[i])->name, t->text))
				fail(p, t, "duplicate global name");
		/* "global a%[N]": '%' (wrap when full) comes first, as in stap */
		if (is_op(peek(p), "%")) {
			next(p);
			g->wrap = true;
			g->arity = -2;
		}
		if (is_op(peek(p), "[")) {
			next(p);
			const struct tr_token *n = next(p);
			if (n->type != TOK_NUMBER || n->num <= 0)
				fail(p, n, "expected positive literal number");
			g->size = n->num;
			expect_op(p, "]");
			g->arity = -2; /* an array, arity still unknown */
		}
		if (is_op(peek(p), "=")) {
			next(p);
			g->init = global_init(p);
		}
		tr_vec_push(&p->sc->globals, g);
		if (!is_op(peek(p), ","))
			break;
		next(p);
	}
	if (is_op(peek(p), ";"))
		next(p);
}

static enum tr_type type_suffix(struct parser *p)
{
	const struct tr_token *t;

	if (!is_op(peek(p), ":"))
		return T_UNKNOWN;
	next(p);
	t = next(p);
	if (is_kw(t, "long"))
		return T_LONG;
	if (is_kw(t, "string"))
		return T_STRING;
	fail(p, t, "expected 'string' or 'long'");
}

static void function_decl(struct parser *p, const struct tr_token *kw, bool privacy)
{
	struct tr_func *fn = tr_alloc(sizeof(*fn));
	const struct tr_token *t = expect_ident(p);

	fn->name = t->text;
	fn->tok = t;
	fn->file = p->f;
	fn->privacy = privacy;
	fn->type = type_suffix(p);
	fn->type_declared = fn->type != T_UNKNOWN;
	expect_op(p, "(");
	if (!is_op(peek(p), ")")) {
		for (;;) {
			const struct tr_token *n = expect_ident(p);
			struct tr_sym *a = tr_alloc(sizeof(*a));
			a->name = n->text;
			a->tok = n;
			a->kind = SYM_PARAM;
			a->type = type_suffix(p);
			for (unsigned i = 0; i < fn->params.n; i++)
				if (!strcmp(((struct tr_sym *)fn->params.items[i])->name, a->name))
					fail(p, n, "duplicate parameter names");
			tr_vec_push(&fn->params, a);
			t = next(p);
			if (is_op(t, ")"))
				break;
			if (!is_op(t, ","))
				fail(p, t, "expected ',' or ')'");
		}
	} else {
		next(p);
	}
	if (fn->type == T_UNKNOWN && is_op(peek(p), ":")) {
		fn->type = type_suffix(p);
		fn->type_declared = true;
	}
	t = peek(p);
	if (t->type == TOK_EMBEDDED) {
		next(p);
		if (!p->s->guru && !p->f->guru_ok)
			fail(p, t, "embedded code in unprivileged script; need marktap -g");
		fn->code = t->text;
	} else {
		p->in_function = true;
		fn->body = block(p);
		p->in_function = false;
	}
	(void)kw;
	tr_vec_push(&p->sc->funcs, fn);
}

static bool top_level_start(const struct tr_token *t)
{
	return is_kw(t, "probe") || is_kw(t, "global") || is_kw(t, "function") ||
	       is_kw(t, "private") || t->type == TOK_EOF;
}

static void top_level(struct parser *p)
{
	const struct tr_token *t = next(p);
	bool privacy = false;

	if (is_kw(t, "private")) {
		privacy = true;
		t = next(p);
		if (!is_kw(t, "global") && !is_kw(t, "function"))
			fail(p, t, "expected 'global' or 'function'");
	}
	if (is_kw(t, "probe")) {
		probe_decl(p, t, privacy);
	} else if (is_kw(t, "global")) {
		global_decl(p, privacy);
	} else if (is_kw(t, "function")) {
		function_decl(p, t, privacy);
	} else if (t->type == TOK_EMBEDDED) {
		if (!p->s->guru && !p->f->guru_ok)
			fail(p, t, "embedded code in unprivileged script; need marktap -g");
		struct tr_global_embed *em = tr_alloc(sizeof(*em));
		em->code = t->text;
		em->tok = t;
		tr_vec_push(&p->sc->embeds, em);
	} else {
		fail(p, t, "expected 'probe', 'global', 'private', 'function', or '%{'");
	}
}

struct tr_script *tr_parse(struct tr_session *s, const struct tr_file *f)
{
	struct parser p = { .s = s, .f = f };
	struct tr_vec raw = {0};
	char base;

	p.sc = tr_alloc(sizeof(*p.sc));
	p.sc->file = f;
	p.stack_base = &base;
	p.stack_budget = stack_budget();
	tr_lex_file(s, f, &raw);
	tr_pp_run(s, &raw, &p.toks);
	free(raw.items);
	volatile unsigned start = 0;
	for (;;) {
		if (setjmp(p.recover)) {
			/* Skip to what can start a declaration, at least one token on. */
			p.loop_depth = 0;
			p.nest = 0;
			p.in_function = false;
			if (p.pos == start)
				next(&p);
			while (!top_level_start(peek(&p)))
				next(&p);
		}
		if (peek(&p)->type == TOK_EOF)
			break;
		start = p.pos;
		top_level(&p);
	}
	return p.sc;
}
