/*
 * filter.c - compile a --filter expression to a tree, bind it to each
 * event class once (field name -> field index, name glob -> yes/no), then
 * evaluate it per event without a string lookup.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter.h"

enum node_kind { N_OR, N_AND, N_NOT, N_NAME_GLOB, N_CMP };
enum ref { R_FIELD, R_PID, R_TID, R_CPU, R_PROCNAME, R_NAME };
enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
enum lit { L_INT, L_FLOAT, L_STRING };

struct node {
	enum node_kind kind;
	struct node *a, *b;
	/* N_NAME_GLOB: the pattern in str; N_CMP: ref op literal */
	enum ref ref;
	enum op op;
	enum lit lit;
	__int128 ival;
	double fval;
	char *name;             /* the glob or the field name */
	char *str;              /* a string literal */
	int is_glob;
	unsigned slot;          /* index in a binding (N_NAME_GLOB and R_FIELD) */
};

struct binding {
	struct binding *next;
	int slot[];             /* field index or -1; for a glob 1 or 0 */
};

struct mt_filter {
	struct node *root;
	unsigned nslots;
	struct node **slots;    /* the node of each slot */
	unsigned char *taken;   /* per slot: a class bound had the field, or
				   its name matched the glob */
	struct binding *bindings;
};

/* ---- lexer ---- */

enum { T_END, T_WORD, T_NUM, T_STR, T_CHAR, T_OP, T_AND, T_OR, T_NOT, T_LPAREN, T_RPAREN, T_BAD };

struct lexer {
	const char *src, *p, *line_start;
	unsigned line;
	int tok;
	const char *start;      /* of the token */
	size_t len;
	unsigned tline, tcol;
	char *text;             /* T_WORD, T_STR: unescaped */
	enum op op;
	enum lit numkind;
	__int128 ival;
	double fval;
	struct mt_filter_err *err;
	int failed;
	unsigned terms;         /* bounded: evaluation recurses over the tree */
};

#define MAX_TERMS 4096

/* Words are names, globs and bare string values (a path, a glob on one). */
static int word_char(int c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '*' ||
	       c == '?' || c == '[' || c == ']' || c == '$' || c == '/' || c == '.' ||
	       (!first && ((c >= '0' && c <= '9') || c == '-'));
}

static void describe(const struct lexer *lx, char *buf, size_t n)
{
	if (lx->tok == T_END)
		snprintf(buf, n, "end of filter");
	else if (lx->tok == T_BAD && ((unsigned char)lx->start[0] < 0x20 || (unsigned char)lx->start[0] >= 0x7f))
		snprintf(buf, n, "byte 0x%02x", (unsigned char)lx->start[0]);
	else
		snprintf(buf, n, "'%.*s'", (int)(lx->len > 40 ? 40 : lx->len), lx->start);
}

static void fail(struct lexer *lx, const char *expected)
{
	char saw[64];

	if (lx->failed)
		return;
	lx->failed = 1;
	describe(lx, saw, sizeof(saw));
	lx->err->line = lx->tline;
	lx->err->col = lx->tcol;
	snprintf(lx->err->msg, sizeof(lx->err->msg), "expected %s, saw %s", expected, saw);
}

static char *unescape(const char *s, size_t n)
{
	char *d = malloc(n + 1), *o = d;
	size_t i;

	if (!d)
		abort();
	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			switch (s[++i]) {
			case 'n': *o++ = '\n'; break;
			case 't': *o++ = '\t'; break;
			case 'r': *o++ = '\r'; break;
			case '0': *o++ = '\0'; break;
			default: *o++ = s[i];
			}
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return d;
}

static void lex_number(struct lexer *lx)
{
	const char *q = lx->p;
	char *end;
	int neg = *q == '-';

	if (neg)
		q++;
	if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
		unsigned long long v = strtoull(q, &end, 16);
		lx->numkind = L_INT;
		lx->ival = neg ? -(__int128)v : (__int128)v;
	} else {
		unsigned long long v = strtoull(q, &end, 10);
		lx->numkind = L_INT;
		lx->ival = neg ? -(__int128)v : (__int128)v;
		if (*end == '.' || *end == 'e' || *end == 'E') {
			lx->fval = strtod(lx->p, &end);
			lx->numkind = L_FLOAT;
		}
	}
	lx->p = end;
	if (word_char((unsigned char)*lx->p, 0) || *lx->p == '.')
		lx->tok = T_BAD;
	lx->fval = lx->numkind == L_INT ? (double)lx->ival : lx->fval;
}

static void next(struct lexer *lx)
{
	const char *p;

	free(lx->text);
	lx->text = NULL;
	while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' || *lx->p == '\r') {
		if (*lx->p == '\n') {
			lx->line++;
			lx->line_start = lx->p + 1;
		}
		lx->p++;
	}
	p = lx->start = lx->p;
	lx->tline = lx->line;
	lx->tcol = (unsigned)(p - lx->line_start) + 1;
	if (!*p) {
		lx->tok = T_END;
		lx->len = 0;
		return;
	}
	lx->tok = T_BAD;
	lx->p = p + 1;
	if (word_char((unsigned char)*p, 1)) {
		while (word_char((unsigned char)*lx->p, 0))
			lx->p++;
		lx->len = (size_t)(lx->p - p);
		lx->text = unescape(p, lx->len);
		lx->tok = !strcmp(lx->text, "and") ? T_AND : !strcmp(lx->text, "or") ? T_OR :
			  !strcmp(lx->text, "not") ? T_NOT : T_WORD;
		return;
	}
	if ((*p >= '0' && *p <= '9') || (*p == '-' && p[1] >= '0' && p[1] <= '9')) {
		lx->p = p;
		lx->tok = T_NUM;
		lex_number(lx);
	} else if (*p == '"' || *p == '\'') {
		const char *q = p + 1;
		while (*q && *q != *p) {
			if (*q == '\\' && q[1])
				q++;
			q++;
		}
		if (!*q) {
			lx->len = 1;
			fail(lx, *p == '"' ? "a closing '\"' for this string" : "a closing '\\'' for this character");
			lx->tok = T_BAD;
			lx->p = q;
			return;
		}
		lx->text = unescape(p + 1, (size_t)(q - p - 1));
		lx->p = q + 1;
		lx->tok = *p == '"' ? T_STR : T_CHAR;
		if (lx->tok == T_CHAR) {
			lx->ival = (unsigned char)lx->text[0];
			if (strlen(lx->text) != 1)
				lx->tok = T_BAD;
		}
	} else if (*p == '(') {
		lx->tok = T_LPAREN;
	} else if (*p == ')') {
		lx->tok = T_RPAREN;
	} else if (*p == '&' && p[1] == '&') {
		lx->tok = T_AND;
		lx->p = p + 2;
	} else if (*p == '|' && p[1] == '|') {
		lx->tok = T_OR;
		lx->p = p + 2;
	} else if (*p == '=' || *p == '<' || *p == '>' || *p == '!') {
		int eq = p[1] == '=';
		lx->tok = T_OP;
		lx->p = p + 1 + eq;
		switch (*p) {
		case '=': lx->op = OP_EQ; break;
		case '<': lx->op = eq ? OP_LE : OP_LT; break;
		case '>': lx->op = eq ? OP_GE : OP_GT; break;
		default:
			if (eq)
				lx->op = OP_NE;
			else
				lx->tok = T_NOT;
		}
	}
	lx->len = (size_t)(lx->p - p);
}

/* ---- parser ---- */

static void free_node(struct node *n)
{
	if (!n)
		return;
	free_node(n->a);
	free_node(n->b);
	free(n->name);
	free(n->str);
	free(n);
}

static struct node *new_node(enum node_kind kind, struct node *a, struct node *b)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		abort();
	n->kind = kind;
	n->a = a;
	n->b = b;
	return n;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static struct node *parse_or(struct lexer *lx, unsigned depth);

static struct node *parse_primary(struct lexer *lx, unsigned depth)
{
	static const struct { const char *name; enum ref ref; } refs[] = {
		{ "pid", R_PID }, { "tid", R_TID }, { "cpu", R_CPU },
		{ "procname", R_PROCNAME }, { "name", R_NAME },
	};
	struct node *n;
	size_t i;

	if (lx->tok == T_LPAREN) {
		next(lx);
		n = parse_or(lx, depth + 1);
		if (!n)
			return NULL;
		if (lx->tok != T_RPAREN) {
			fail(lx, "')'");
			free_node(n);
			return NULL;
		}
		next(lx);
		return n;
	}
	if (lx->tok != T_WORD) {
		fail(lx, "an event name, a comparison, 'not' or '('");
		return NULL;
	}
	if (++lx->terms > MAX_TERMS) {
		fail(lx, "at most 4096 terms");
		return NULL;
	}
	n = new_node(N_NAME_GLOB, NULL, NULL);
	n->name = lx->text;
	lx->text = NULL;
	next(lx);
	if (lx->tok != T_OP)
		return n;       /* a bare word: glob on the event name */
	n->kind = N_CMP;
	n->op = lx->op;
	n->ref = R_FIELD;
	for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		if (!strcmp(n->name, refs[i].name))
			n->ref = refs[i].ref;
	if (n->ref == R_FIELD && has_glob(n->name)) {
		/* point at the word, not at the operator */
		char saw[64];
		snprintf(saw, sizeof(saw), "%s", n->name);
		free_node(n);
		lx->failed = 1;
		snprintf(lx->err->msg, sizeof(lx->err->msg),
			 "expected a field name before '%.*s', saw the pattern '%s'", (int)lx->len, lx->start, saw);
		lx->err->line = lx->tline;
		lx->err->col = lx->tcol;
		return NULL;
	}
	if (n->ref == R_FIELD && n->name[0] == '_' && n->name[1]) /* _pid: the payload's pid */
		memmove(n->name, n->name + 1, strlen(n->name));
	next(lx);
	switch (lx->tok) {
	case T_NUM:
		n->lit = lx->numkind;
		n->ival = lx->ival;
		n->fval = lx->fval;
		break;
	case T_CHAR:
		n->lit = L_INT;
		n->ival = lx->ival;
		n->fval = (double)lx->ival;
		break;
	case T_STR:
	case T_WORD:
		n->lit = L_STRING;
		n->str = lx->text;
		lx->text = NULL;
		n->is_glob = has_glob(n->str);
		break;
	default:
		fail(lx, "a value (a number, a \"string\" or a 'c' character)");
		free_node(n);
		return NULL;
	}
	next(lx);
	return n;
}

static struct node *parse_unary(struct lexer *lx, unsigned depth)
{
	struct node *n;

	if (depth > 200) {
		fail(lx, "less nesting");
		return NULL;
	}
	if (lx->tok != T_NOT)
		return parse_primary(lx, depth);
	next(lx);
	n = parse_unary(lx, depth + 1);
	return n ? new_node(N_NOT, n, NULL) : NULL;
}

static struct node *parse_and(struct lexer *lx, unsigned depth)
{
	struct node *n = parse_unary(lx, depth);

	while (n && lx->tok == T_AND) {
		struct node *r;
		next(lx);
		r = parse_unary(lx, depth);
		if (!r) {
			free_node(n);
			return NULL;
		}
		n = new_node(N_AND, n, r);
	}
	return n;
}

static struct node *parse_or(struct lexer *lx, unsigned depth)
{
	struct node *n;

	if (depth > 200) {
		fail(lx, "less nesting");
		return NULL;
	}
	n = parse_and(lx, depth);
	while (n && lx->tok == T_OR) {
		struct node *r;
		next(lx);
		r = parse_and(lx, depth);
		if (!r) {
			free_node(n);
			return NULL;
		}
		n = new_node(N_OR, n, r);
	}
	return n;
}

static void number_slots(struct mt_filter *f, struct node *n)
{
	if (!n)
		return;
	number_slots(f, n->a);
	number_slots(f, n->b);
	if (n->kind == N_NAME_GLOB || (n->kind == N_CMP && n->ref == R_FIELD)) {
		n->slot = f->nslots++;
		f->slots = realloc(f->slots, f->nslots * sizeof(*f->slots));
		if (!f->slots)
			abort();
		f->slots[n->slot] = n;
	}
}

struct mt_filter *mt_filter_compile(const char *src, struct mt_filter_err *err)
{
	struct lexer lx;
	struct mt_filter *f;
	struct node *root;

	memset(&lx, 0, sizeof(lx));
	lx.src = lx.p = lx.line_start = src;
	lx.line = 1;
	lx.err = err;
	next(&lx);
	root = parse_or(&lx, 0);
	if (root && lx.tok != T_END) {
		fail(&lx, lx.tok == T_RPAREN ? "an operator or the end (this ')' closes nothing)"
					     : "'and', 'or' or the end of the filter");
		free_node(root);
		root = NULL;
	}
	free(lx.text);
	if (!root) {
		if (!lx.failed)
			fail(&lx, "a filter");
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		abort();
	f->root = root;
	number_slots(f, root);
	f->taken = calloc(f->nslots + 1, 1);
	if (!f->taken)
		abort();
	return f;
}

void mt_filter_free(struct mt_filter *f)
{
	if (!f)
		return;
	while (f->bindings) {
		struct binding *b = f->bindings;
		f->bindings = b->next;
		free(b);
	}
	free_node(f->root);
	free(f->slots);
	free(f->taken);
	free(f);
}

/* A field's slot: a payload field's index, or CTX_FIELD + the index of a
 * context field (ctx.NAME, or NAME when the payload has none). */
#define CTX_FIELD (1 << 24)

static int bind_field(const struct ctf_event_class *c, const char *name)
{
	int i = strncmp(name, "ctx.", 4) ? ctf_class_field(c, name) : -1;

	if (i >= 0 || !c->context)
		return i;
	i = ctf_class_field(c->context, strncmp(name, "ctx.", 4) ? name : name + 4);
	return i >= 0 ? CTX_FIELD + i : -1;
}

const void *mt_filter_bind(struct mt_filter *f, const struct ctf_event_class *c)
{
	struct binding *b = calloc(1, sizeof(*b) + (f->nslots + 1) * sizeof(int));
	unsigned i;

	if (!b)
		abort();
	for (i = 0; i < f->nslots; i++) {
		const struct node *n = f->slots[i];
		if (n->kind == N_NAME_GLOB)
			b->slot[i] = fnmatch(n->name, c->name, 0) == 0;
		else
			b->slot[i] = bind_field(c, n->name);
		f->taken[i] |= n->kind == N_NAME_GLOB ? b->slot[i] : b->slot[i] >= 0;
	}
	b->next = f->bindings;
	f->bindings = b;
	return b;
}

void mt_filter_unused(const struct mt_filter *f, mt_filter_unused_fn report, void *arg)
{
	unsigned i, k;

	for (i = 0; i < f->nslots; i++) {
		const struct node *n = f->slots[i];
		if (f->taken[i])
			continue;
		for (k = 0; k < i; k++)    /* a name written twice is said once */
			if (!f->taken[k] && f->slots[k]->kind == n->kind &&
			    !strcmp(f->slots[k]->name, n->name))
				break;
		if (k == i)
			report(n->kind != N_NAME_GLOB, n->name, arg);
	}
}

/* ---- evaluation ---- */

static int cmp_result(enum op op, int c)
{
	switch (op) {
	case OP_EQ: return c == 0;
	case OP_NE: return c != 0;
	case OP_LT: return c < 0;
	case OP_LE: return c <= 0;
	case OP_GT: return c > 0;
	default:    return c >= 0;
	}
}

static int cmp_string(const struct node *n, const char *s)
{
	if (n->lit != L_STRING)
		return 0;
	if (n->is_glob && (n->op == OP_EQ || n->op == OP_NE))
		return (fnmatch(n->str, s, 0) == 0) == (n->op == OP_EQ);
	return cmp_result(n->op, strcmp(s, n->str));
}

static int cmp_int(const struct node *n, __int128 v)
{
	if (n->lit == L_STRING)
		return 0;
	if (n->lit == L_FLOAT) {
		double d = (double)v;
		return cmp_result(n->op, d < n->fval ? -1 : d > n->fval);
	}
	return cmp_result(n->op, v < n->ival ? -1 : v > n->ival);
}

static int cmp_float(const struct node *n, double d)
{
	if (n->lit == L_STRING || d != d)
		return n->lit != L_STRING && n->op == OP_NE;
	return cmp_result(n->op, d < n->fval ? -1 : d > n->fval);
}

static int eval_cmp(const struct node *n, const struct binding *b, const struct ctf_event *ev, int64_t cpu)
{
	char procname[257];
	const struct ctf_field *f;
	int i;

	switch (n->ref) {
	case R_PID: return cmp_int(n, ev->pid);
	case R_TID: return cmp_int(n, ev->tid);
	case R_CPU: return cmp_int(n, cpu);
	case R_NAME: return cmp_string(n, ev->cls->name);
	case R_PROCNAME: {
		size_t len = ev->procname_len < 256 ? ev->procname_len : 256;
		memcpy(procname, ev->procname, len);
		procname[len] = '\0';
		return cmp_string(n, procname);
	}
	case R_FIELD:
		break;
	}
	i = b->slot[n->slot];
	if (i < 0)
		return 0;
	if (i >= CTX_FIELD) {
		ev = ev->ctx;
		i -= CTX_FIELD;
		if (!ev)
			return 0;
	}
	f = &ev->cls->fields[i];
	switch (f->kind) {
	case CTF_STRING:
	case CTF_TEXT: return cmp_string(n, ctf_field_string(ev, (unsigned)i));
	case CTF_FLOAT: return cmp_float(n, ctf_field_float(ev, (unsigned)i));
	default:
		if (f->enum_type && n->lit == L_STRING) {   /* kind == "TMP": the label */
			const char *label = ctf_field_label(ev, (unsigned)i);
			return label ? cmp_string(n, label) : n->op == OP_NE;
		}
		if (f->is_signed)
			return cmp_int(n, ctf_field_int(ev, (unsigned)i));
		return cmp_int(n, ctf_field_uint(ev, (unsigned)i));
	}
}

static int eval(const struct node *n, const struct binding *b, const struct ctf_event *ev, int64_t cpu)
{
	switch (n->kind) {
	case N_OR: return eval(n->a, b, ev, cpu) || eval(n->b, b, ev, cpu);
	case N_AND: return eval(n->a, b, ev, cpu) && eval(n->b, b, ev, cpu);
	case N_NOT: return !eval(n->a, b, ev, cpu);
	case N_NAME_GLOB: return b->slot[n->slot];
	default: return eval_cmp(n, b, ev, cpu);
	}
}

int mt_filter_match(const struct mt_filter *f, const void *binding,
		    const struct ctf_event *ev, int64_t cpu)
{
	return eval(f->root, binding, ev, cpu);
}
