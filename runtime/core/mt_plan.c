/*
 * mt_plan.c - parse native plans (mt_plan.h), for the script host and
 * for marktap.ko.
 *
 * The text is read in place, a token at a time as a (start, length)
 * span: no copy, no allocation, no library number parser (the kernel's
 * and libc's differ in what they let through).  Numbers are decimal
 * digits only, checked against their bound before they can overflow.
 */
#include "mt_plan.h"

struct span {
	const char *s;
	size_t n;
};

static int span_is(struct span t, const char *word)
{
	return t.n == strlen(word) && !memcmp(t.s, word, t.n);
}

/* The span from s up to the first stop character or the end of the text. */
static struct span span_to(const char *s, char stop)
{
	struct span t = { s, 0 };

	while (s[t.n] && s[t.n] != stop)
		t.n++;
	return t;
}

/* t, one decimal digit or more and nothing else, as a number at most
 * max into *out: 0, or -EINVAL. */
static int parse_decimal(struct span t, mt_u64 max, mt_u64 *out)
{
	mt_u64 v = 0;
	size_t i;

	if (!t.n)
		return -EINVAL;
	for (i = 0; i < t.n; i++) {
		unsigned d;

		if (t.s[i] < '0' || t.s[i] > '9')
			return -EINVAL;
		d = (unsigned)(t.s[i] - '0');
		if (d > max || v > (max - d) / 10)
			return -EINVAL;   /* v * 10 + d > max */
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* "#N": a constant of 64 bits, signed. */
static int parse_constant(struct span t, s64 *c)
{
	mt_u64 limit = (mt_u64)1 << 63, v;   /* |S64_MIN| */
	int neg = t.n && t.s[0] == '-';

	if (neg) {
		t.s++;
		t.n--;
	}
	if (parse_decimal(t, neg ? limit : limit - 1, &v))
		return -EINVAL;
	*c = neg ? (s64)(0 - v) : (s64)v;
	return 0;
}

/* "N" of "aN" or "sN": an argument of f, a string or not as str says;
 * its field index into *arg. */
static int parse_argument(struct span t, const struct mt_format *f, int str, u8 *arg)
{
	mt_u64 n, max = f->nfields < MT_FIELDS_MAX ? f->nfields : MT_FIELDS_MAX;

	if (parse_decimal(t, max, &n) || n < 1)
		return -EINVAL;
	if ((f->fields[n - 1].store == MT_ST_STRING) != !!str)
		return -EINVAL;   /* not this marker's: the Lua handler runs */
	*arg = (u8)(n - 1);
	return 0;
}

/* One source: of a value (VALUE, a guard's sides) or of a key. */
static int parse_source(struct span t, int value, const struct mt_format *f, struct mt_plan_src *s)
{
	struct span rest = { t.s + 1, t.n ? t.n - 1 : 0 };

	memset(s, 0, sizeof(*s));
	if (!t.n)
		return -EINVAL;
	if (t.s[0] == MT_PLAN_CONST) {
		s->kind = MT_PLAN_SRC_CONST;
		return parse_constant(rest, &s->c);
	}
	if (span_is(t, MT_PLAN_TID) || span_is(t, MT_PLAN_PID) || span_is(t, MT_PLAN_CPU)) {
		s->kind = span_is(t, MT_PLAN_TID) ? MT_PLAN_SRC_TID :
			  span_is(t, MT_PLAN_PID) ? MT_PLAN_SRC_PID : MT_PLAN_SRC_CPU;
		return 0;
	}
	if (!value && span_is(t, MT_PLAN_EXECNAME)) {
		s->kind = MT_PLAN_SRC_EXEC;
		return 0;
	}
	if (!value && t.s[0] == MT_PLAN_STR) {
		s->kind = MT_PLAN_SRC_STR;
		return parse_argument(rest, f, 1, &s->arg);
	}
	s->kind = MT_PLAN_SRC_ARG;
	if (value && t.s[0] == MT_PLAN_NEG) {
		s->kind = MT_PLAN_SRC_NEG_ARG;
		t = rest;
		rest.s++;
		rest.n = rest.n ? rest.n - 1 : 0;
	}
	if (!t.n || t.s[0] != MT_PLAN_ARG)
		return -EINVAL;
	return parse_argument(rest, f, 0, &s->arg);
}

/* "?LcR": a guard of o. */
static int parse_guard(struct span t, const struct mt_format *f, struct mt_plan_op *o)
{
	struct mt_plan_guard *g;
	struct span l = { t.s + 1, 0 }, r;

	if (o->nguards == MT_PLAN_GUARDS)
		return -EINVAL;
	while (1 + l.n < t.n && !strchr(MT_PLAN_CMPS, l.s[l.n]))
		l.n++;
	if (!l.n || 1 + l.n + 1 >= t.n)
		return -EINVAL;   /* no left side, no comparison, or no right side */
	g = &o->guard[o->nguards];
	g->cmp = l.s[l.n];
	r.s = l.s + l.n + 1;
	r.n = t.n - 1 - l.n - 1;
	if (parse_source(l, 1, f, &g->l) || parse_source(r, 1, f, &g->r))
		return -EINVAL;
	o->nguards++;
	return 0;
}

/* The global's number, after MT_PLAN_STATS for statistics. */
static int parse_global(struct span t, struct mt_plan_op *o)
{
	mt_u64 n;

	o->stats = t.n && t.s[0] == MT_PLAN_STATS;
	if (o->stats) {
		t.s++;
		t.n--;
	}
	if (parse_decimal(t, MT_PLAN_GLOBAL_MAX, &n) || n < 1)
		return -EINVAL;
	o->global = (u32)n;
	return 0;
}

/* One operation "[GUARD...] GLOBAL VALUE [KEY...]": the span op. */
static int parse_operation(struct span op, const struct mt_format *f, struct mt_plan_op *o)
{
	const char *end = op.s + op.n, *at = op.s;
	unsigned i = 0;   /* tokens after the guards */

	memset(o, 0, sizeof(*o));
	while (at <= end) {
		struct span t = { at, 0 };

		while (at + t.n < end && at[t.n] != MT_PLAN_TOKEN_SEP)
			t.n++;
		at += t.n + 1;
		if (!t.n)
			return -EINVAL;   /* an empty token: two separators, or one at an end */
		if (i == 0 && t.s[0] == MT_PLAN_GUARD) {
			if (parse_guard(t, f, o))
				return -EINVAL;
			continue;
		}
		if (i == 0) {
			if (parse_global(t, o))
				return -EINVAL;
		} else if (i == 1) {
			if (parse_source(t, 1, f, &o->value))
				return -EINVAL;
		} else {
			struct mt_plan_src *k = &o->key[o->nkeys];

			if (o->nkeys == MT_PLAN_KEYS || parse_source(t, 0, f, k))
				return -EINVAL;
			if (k->kind == MT_PLAN_SRC_STR || k->kind == MT_PLAN_SRC_EXEC)
				o->strmask |= (u8)(1u << o->nkeys);
			o->nkeys++;
		}
		i++;
	}
	return i < 2 ? -EINVAL : 0;   /* a global and a value at least */
}

int mt_plan_parse(const char *text, const struct mt_format *f, struct mt_plan *plan)
{
	const char *at = text;

	plan->nops = 0;
	for (;;) {
		struct span op = span_to(at, MT_PLAN_OP_SEP);

		if (plan->nops == MT_PLAN_OPS || !op.n || parse_operation(op, f, &plan->op[plan->nops]))
			return -EINVAL;
		plan->nops++;
		if (!op.s[op.n])
			return 0;
		at = op.s + op.n + 1;
	}
}
