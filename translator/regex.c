/*
 * regex.c - a script's regular expressions as automata, at translation.
 *
 * stap compiles each `s =~ "RE"` into a matcher when it translates the
 * script; marktap does the same, so that the handlers running in
 * marktap.ko, which has no regcomp, can match too.  The pattern (POSIX
 * extended, as regcomp(REG_EXTENDED) reads it: elab_type.c has already
 * refused an invalid one with regcomp's words) becomes a Thompson NFA,
 * then a DFA whose input is the subject's bytes between two symbols of
 * their own, BEGIN and END: '^' and '$' are edges on them, so anchors need
 * no special case.  A loop on every symbol in front makes the automaton
 * find a match anywhere; the first accepting state reached answers yes.
 *
 * What the runtime gets (mt_rt.lua's rt.dfa_match): the class of each of
 * the 258 symbols (a string), the class count K, the transition table
 * (state * K + class, states from 0), the accepting states and the start.
 *
 * Not every pattern is taken: GNU's escapes (\w \b \< \` and
 * back-references), collating elements and equivalence classes, or an
 * automaton past the bounds below give -1, and the call stays regexec's
 * (rt_regmatch: user space only).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tr_gen.h"

#define SYMS 258                /* bytes, BEGIN, END */
#define SYM_BEGIN 256
#define SYM_END 257
#define NFA_MAX 4000
#define DFA_MAX 400
#define REPEAT_MAX 255

struct symset { uint64_t w[5]; };

static void set_add(struct symset *s, int c) { s->w[c >> 6] |= 1ULL << (c & 63); }
static int set_has(const struct symset *s, int c) { return (int)(s->w[c >> 6] >> (c & 63)) & 1; }

enum { N_SET, N_SPLIT, N_ACCEPT };

struct nstate {
	int kind;
	struct symset set;              /* N_SET: its symbols, then out */
	int out, out1;                  /* N_SPLIT: both */
};

/* the pattern as a tree */
enum { R_SET, R_CAT, R_ALT, R_REP, R_EMPTY };

struct rnode {
	int kind;
	struct symset set;
	struct rnode *a, *b;
	int min, max;                   /* R_REP: max -1 is no bound */
};

struct rx {
	const char *p;
	int bad;                        /* not taken (see the header) */
	struct nstate *n;
	int nn;
	int nnodes;
};

static struct rnode *node(struct rx *x, int kind)
{
	struct rnode *r = tr_alloc(sizeof(*r));

	if (++x->nnodes > 4096)
		x->bad = 1;
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	return r;
}

/* ---- parsing ---------------------------------------------------------- */

static struct rnode *alternation(struct rx *x);

static void class_named(struct rx *x, struct symset *s, const char *name, size_t len)
{
	static const char *const classes[] = {
		"alpha", "digit", "alnum", "upper", "lower", "space",
		"xdigit", "punct", "print", "graph", "cntrl", "blank",
	};
	int which = -1;

	for (unsigned i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strlen(classes[i]) == len && !strncmp(classes[i], name, len))
			which = (int)i;
	if (which < 0) {
		x->bad = 1;
		return;
	}
	/* the C locale's classes (marktap's processes and the kernel) */
	for (int c = 0; c < 128; c++) {
		int u = c >= 'A' && c <= 'Z', l = c >= 'a' && c <= 'z', d = c >= '0' && c <= '9';
		int sp = c == ' ' || (c >= '\t' && c <= '\r'), pr = c >= 32 && c < 127;
		int in = 0;
		switch (which) {
		case 0: in = u || l; break;
		case 1: in = d; break;
		case 2: in = u || l || d; break;
		case 3: in = u; break;
		case 4: in = l; break;
		case 5: in = sp; break;
		case 6: in = d || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); break;
		case 7: in = pr && c != ' ' && !u && !l && !d; break;
		case 8: in = pr; break;
		case 9: in = pr && c != ' '; break;
		case 10: in = c < 32 || c == 127; break;
		case 11: in = c == ' ' || c == '\t'; break;
		}
		if (in)
			set_add(s, c);
	}
}

/* [...] after its '[' */
static struct rnode *bracket(struct rx *x)
{
	struct rnode *r = node(x, R_SET);
	struct symset s = {{0}};
	int negate = 0, first = 1;

	if (*x->p == '^') {
		negate = 1;
		x->p++;
	}
	while (*x->p && (first || *x->p != ']')) {
		int lo = (unsigned char)*x->p, hi;
		first = 0;
		if (x->p[0] == '[' && (x->p[1] == '.' || x->p[1] == '=')) {
			x->bad = 1;   /* collating elements, equivalence classes */
			return r;
		}
		if (x->p[0] == '[' && x->p[1] == ':') {
			const char *end = strstr(x->p + 2, ":]");
			if (!end) {
				x->bad = 1;
				return r;
			}
			class_named(x, &s, x->p + 2, (size_t)(end - x->p - 2));
			x->p = end + 2;
			continue;
		}
		x->p++;
		hi = lo;
		if (x->p[0] == '-' && x->p[1] && x->p[1] != ']') {
			if (x->p[1] == '[') {
				x->bad = 1;
				return r;
			}
			hi = (unsigned char)x->p[1];
			x->p += 2;
		}
		for (int c = lo; c <= hi; c++)
			set_add(&s, c);
	}
	if (*x->p != ']') {
		x->bad = 1;
		return r;
	}
	x->p++;
	if (negate)
		for (int i = 0; i < 4; i++)
			s.w[i] = ~s.w[i];
	s.w[0] &= ~1ULL;   /* never NUL (a C string's end) */
	s.w[4] = 0;        /* never BEGIN or END */
	r->set = s;
	return r;
}

static struct rnode *atom(struct rx *x)
{
	struct rnode *r;
	unsigned char c = (unsigned char)*x->p;

	switch (c) {
	case '(':
		x->p++;
		if (*x->p == ')') {
			x->p++;
			return node(x, R_EMPTY);
		}
		r = alternation(x);
		if (*x->p != ')')
			x->bad = 1;
		else
			x->p++;
		return r;
	case '[':
		x->p++;
		return bracket(x);
	case '.':
		x->p++;
		r = node(x, R_SET);
		for (int i = 1; i < 256; i++)
			set_add(&r->set, i);
		return r;
	case '^':
	case '$':
		x->p++;
		r = node(x, R_SET);
		set_add(&r->set, c == '^' ? SYM_BEGIN : SYM_END);
		return r;
	case '\\':
		c = (unsigned char)x->p[1];
		/* GNU's word and buffer operators, back-references */
		if (!c || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			x->bad = 1;
			return node(x, R_EMPTY);
		}
		x->p += 2;
		r = node(x, R_SET);
		set_add(&r->set, c);
		return r;
	case '*': case '+': case '?': case '{':
		x->bad = 1;   /* a quantifier with nothing before: regcomp's own reading */
		return node(x, R_EMPTY);
	default:
		x->p++;
		r = node(x, R_SET);
		set_add(&r->set, c);
		return r;
	}
}

static int number(struct rx *x)
{
	int n = 0, any = 0;

	while (*x->p >= '0' && *x->p <= '9') {
		n = n * 10 + (*x->p++ - '0');
		any = 1;
		if (n > REPEAT_MAX)
			x->bad = 1;
	}
	return any ? n : -1;
}

static struct rnode *repeat(struct rx *x)
{
	struct rnode *a = atom(x);

	while (!x->bad && *x->p && strchr("*+?{", *x->p)) {
		struct rnode *r = node(x, R_REP);
		if (a->kind == R_SET && (set_has(&a->set, SYM_BEGIN) || set_has(&a->set, SYM_END)))
			x->bad = 1;   /* an anchor repeated: left to regcomp's reading */
		r->a = a;
		switch (*x->p++) {
		case '*': r->min = 0; r->max = -1; break;
		case '+': r->min = 1; r->max = -1; break;
		case '?': r->min = 0; r->max = 1; break;
		default:
			r->min = number(x);
			r->max = r->min;
			if (*x->p == ',') {
				x->p++;
				r->max = number(x);
			}
			if (r->min < 0 || *x->p != '}' || (r->max >= 0 && r->max < r->min)) {
				x->bad = 1;
				return r;
			}
			x->p++;
		}
		a = r;
	}
	return a;
}

static struct rnode *concatenation(struct rx *x)
{
	struct rnode *r = NULL;

	while (!x->bad && *x->p && *x->p != '|' && *x->p != ')') {
		struct rnode *b = repeat(x);
		if (r) {
			struct rnode *c = node(x, R_CAT);
			c->a = r;
			c->b = b;
			b = c;
		}
		r = b;
	}
	return r ? r : node(x, R_EMPTY);
}

static struct rnode *alternation(struct rx *x)
{
	struct rnode *r = concatenation(x);

	while (!x->bad && *x->p == '|') {
		struct rnode *a = node(x, R_ALT);
		x->p++;
		a->a = r;
		a->b = concatenation(x);
		r = a;
	}
	return r;
}

/* ---- the NFA: each node compiled in front of its continuation ---------- */

static int nstate(struct rx *x, int kind, int out, int out1)
{
	if (x->nn >= NFA_MAX) {
		x->bad = 1;
		return 0;
	}
	struct nstate *s = &x->n[x->nn];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->out = out;
	s->out1 = out1;
	return x->nn++;
}

static int compile(struct rx *x, const struct rnode *r, int next)
{
	int s, body;

	if (x->bad)
		return next;
	switch (r->kind) {
	case R_EMPTY:
		return next;
	case R_SET:
		s = nstate(x, N_SET, next, -1);
		x->n[s].set = r->set;
		return s;
	case R_CAT:
		return compile(x, r->a, compile(x, r->b, next));
	case R_ALT:
		return nstate(x, N_SPLIT, compile(x, r->a, next), compile(x, r->b, next));
	}
	/* R_REP: the optional copies from the end, then the required ones */
	if (r->max < 0) {
		s = nstate(x, N_SPLIT, -1, next);
		body = compile(x, r->a, s);
		x->n[s].out = body;
		next = s;
	} else {
		for (int i = r->min; i < r->max; i++)
			next = nstate(x, N_SPLIT, compile(x, r->a, next), next);
	}
	for (int i = 0; i < r->min; i++)
		next = compile(x, r->a, next);
	return next;
}

/* ---- the DFA ---------------------------------------------------------- */

struct dstates {
	int nwords;                     /* uint64_t per NFA set */
	uint64_t *sets;                 /* DFA_MAX sets */
	int n;
};

static void closure(const struct rx *x, uint64_t *set, int s)
{
	while (s >= 0 && !(set[s >> 6] >> (s & 63) & 1)) {
		set[s >> 6] |= 1ULL << (s & 63);
		if (x->n[s].kind != N_SPLIT)
			return;
		closure(x, set, x->n[s].out1);
		s = x->n[s].out;
	}
}

static int dstate(struct dstates *d, const uint64_t *set)
{
	for (int i = 0; i < d->n; i++)
		if (!memcmp(d->sets + (size_t)i * d->nwords, set, (size_t)d->nwords * 8))
			return i;
	if (d->n == DFA_MAX)
		return -1;
	memcpy(d->sets + (size_t)d->n * d->nwords, set, (size_t)d->nwords * 8);
	return d->n++;
}

static void lua_bytes(struct tr_buf *b, const unsigned char *v, size_t n)
{
	tr_buf_puts(b, "\"");
	for (size_t i = 0; i < n; i++)
		tr_buf_printf(b, "\\%u", v[i]);
	tr_buf_puts(b, "\"");
}

const char *tr_regex_dfa(const char *pattern)
{
	struct rx x = { .p = pattern };
	struct rnode *root = alternation(&x);
	int start, loop, accept;

	if (x.bad || *x.p)
		return NULL;
	x.n = tr_alloc(sizeof(*x.n) * NFA_MAX);
	accept = nstate(&x, N_ACCEPT, -1, -1);
	start = compile(&x, root, accept);
	/* the search: any symbol but END before the match */
	loop = nstate(&x, N_SPLIT, -1, start);
	int any = nstate(&x, N_SET, loop, -1);
	for (int c = 0; c <= SYM_BEGIN; c++)
		set_add(&x.n[any].set, c);
	x.n[loop].out = any;
	if (x.bad)
		return NULL;

	/* symbol classes: symbols no edge tells apart share one */
	unsigned char cls[SYMS];
	int k = 1;
	memset(cls, 0, sizeof(cls));
	for (int i = 0; i < x.nn; i++) {
		if (x.n[i].kind != N_SET)
			continue;
		int map[SYMS][2];
		memset(map, -1, sizeof(map));
		int nk = 0;
		for (int c = 0; c < SYMS; c++) {
			int in = set_has(&x.n[i].set, c);
			if (map[cls[c]][in] < 0)
				map[cls[c]][in] = nk++;
			cls[c] = (unsigned char)map[cls[c]][in];
			if (nk > 250)
				return NULL;
		}
		k = nk;
	}

	struct dstates d = { .nwords = (x.nn + 63) / 64 };
	d.sets = tr_alloc((size_t)DFA_MAX * (size_t)d.nwords * 8);
	uint64_t *cur = tr_alloc((size_t)d.nwords * 8);
	int *next = tr_alloc(sizeof(int) * (size_t)DFA_MAX * (size_t)k);
	unsigned char *acc = tr_alloc(DFA_MAX);

	memset(cur, 0, (size_t)d.nwords * 8);
	closure(&x, cur, loop);
	dstate(&d, cur);
	long work = 0;
	for (int i = 0; i < d.n; i++) {
		if ((work += (long)k * x.nn) > 20000000L)
			return NULL;   /* a pattern this large stays regexec's */
		const uint64_t *set = d.sets + (size_t)i * d.nwords;
		acc[i] = (unsigned char)(set[accept >> 6] >> (accept & 63) & 1);
		for (int c = 0; c < k; c++) {
			int sym = 0;
			while (cls[sym] != c)
				sym++;
			memset(cur, 0, (size_t)d.nwords * 8);
			for (int s = 0; s < x.nn; s++)
				if ((set[s >> 6] >> (s & 63) & 1) && x.n[s].kind == N_SET && set_has(&x.n[s].set, sym))
					closure(&x, cur, x.n[s].out);
			int to = dstate(&d, cur);
			if (to < 0)
				return NULL;
			next[i * k + c] = to;
			set = d.sets + (size_t)i * d.nwords;
		}
	}

	struct tr_buf b = {0};
	tr_buf_puts(&b, "{cls = ");
	lua_bytes(&b, cls, SYMS);
	tr_buf_printf(&b, ", k = %d, acc = {", k);
	for (int i = 0, any_acc = 0; i < d.n; i++)
		if (acc[i])
			tr_buf_printf(&b, "%s[%d] = true", any_acc++ ? ", " : "", i);
	tr_buf_puts(&b, "}, nx = {");
	for (int i = 0; i < d.n * k; i++)
		tr_buf_printf(&b, "%s%d", i ? "," : "", next[i]);
	tr_buf_puts(&b, "}}");
	return tr_buf_str(&b);
}
