/*
 * ctf_tsdl.c - parse the TSDL metadata of a trace (ours, or LTTng's) into
 * its types and blocks (struct parser, ctf_tsdl.h); ctf_trace.c lays them
 * out and makes the trace.
 *
 * TSDL as CTF 1.8 writes it: typealias, typedef, trace, env, clock,
 * named and nested structs, enums, variants, arrays and sequences, several
 * stream classes (LTTng: one per channel), events with their stream ids.
 * Errors are "FILE:LINE:COL: expected X, saw Y"; inside the parser they
 * unwind with longjmp (as Lua's parser does), which is safe because
 * everything lives in one arena.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctf_int.h"
#include "ctf_tsdl.h"
#include "mt_utf8.h"

#define MAX_DEPTH   32          /* struct nesting */

/* ---- arena: everything a trace's metadata needs, freed at once ---- */

struct ctf_arena {
	struct ctf_arena *next;
	size_t used, cap;
	max_align_t data[];
};

void *ctf_arena_alloc(struct ctf_arena **a, size_t n)
{
	struct ctf_arena *c = *a;

	n = (n + 15) & ~(size_t)15;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			abort();  /* metadata is small: out of memory here is fatal */
		c->next = *a;
		c->used = 0;
		c->cap = cap;
		*a = c;
	}
	c->used += n;
	return (char *)c->data + c->used - n;
}

static char *arena_strndup(struct ctf_arena **a, const char *s, size_t n)
{
	char *d = ctf_arena_alloc(a, n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void ctf_arena_free(struct ctf_arena *a)
{
	while (a) {
		struct ctf_arena *next = a->next;
		free(a);
		a = next;
	}
}

/* Messages quote file and directory names, which a trace's maker chose:
 * shown printable as the strings of its metadata are (ctf_printable). */
void ctf_set_err(struct ctf_err *err, const char *fmt, ...)
{
	char raw[sizeof(err->msg)], shown[4 * sizeof(raw) + 1];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	n = ctf_printable(shown, raw, strlen(raw));
	if (n >= sizeof(err->msg))
		n = sizeof(err->msg) - 1;
	memcpy(err->msg, shown, n);
	err->msg[n] = '\0';
}

/*
 * Strings of a trace's metadata (event names, env values, enum labels) end
 * up on terminals (view, stats, marktap -L, messages) and in generated
 * code: whoever made the trace chose their bytes.  Bytes a terminal could
 * take for a control (C0, DEL, C1 as UTF-8) and bytes that are not UTF-8
 * are kept as the text \xHH; dst has room for 4 * n + 1 bytes.
 */
static unsigned utf8_printable_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	unsigned len = mt_utf8_len(s, n, &cp);

	return len > 1 && cp >= 0xa0 ? len : 0;   /* not C1 */
}

size_t ctf_printable(char *dst, const char *src, size_t n)
{
	static const char xd[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	char *o = dst;
	size_t i = 0;

	while (i < n) {
		unsigned len = s[i] >= 0x80 ? utf8_printable_len(s + i, n - i) : 0;
		if (len) {
			memcpy(o, s + i, len);
			o += len;
			i += len;
		} else if (s[i] >= 0x20 && s[i] < 0x7f) {
			*o++ = (char)s[i++];
		} else {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = xd[s[i] >> 4];
			*o++ = xd[s[i++] & 15];
		}
	}
	*o = '\0';
	return (size_t)(o - dst);
}

static void describe_tok(const struct tok *t, char *buf, size_t n)
{
	char text[4 * 40 + 1];

	switch (t->kind) {
	case TK_EOF: snprintf(buf, n, "end of file"); break;
	case TK_IDENT: snprintf(buf, n, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s); break;
	case TK_NUM: snprintf(buf, n, "number %s%llu", t->negative ? "-" : "", (unsigned long long)t->num); break;
	case TK_STR:
		ctf_printable(text, t->s, t->len > 40 ? 40 : t->len);
		snprintf(buf, n, "string \"%s\"", text);
		break;
	case TK_ASSIGN_TYPE: snprintf(buf, n, "':='"); break;
	default:
		if ((unsigned char)t->s[0] >= 0x20 && (unsigned char)t->s[0] < 0x7f)
			snprintf(buf, n, "'%c'", t->s[0]);
		else
			snprintf(buf, n, "byte 0x%02x", (unsigned char)t->s[0]);
	}
}

void __attribute__((noreturn, format(printf, 2, 3)))
tsdl_fail(struct parser *ps, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ctf_set_err(ps->err, "%s:%u:%u: %s", ps->path, ps->tok.line, ps->tok.col, what);
	longjmp(ps->fail, 1);
}

static void __attribute__((noreturn)) expected(struct parser *ps, const char *what)
{
	char saw[200];

	describe_tok(&ps->tok, saw, sizeof(saw));
	tsdl_fail(ps, "expected %s, saw %s", what, saw);
}

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }

static void skip_space(struct parser *ps)
{
	for (;;) {
		while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
					   *ps->p == '\r' || *ps->p == '\f' || *ps->p == '\v')) {
			if (*ps->p == '\n') {
				ps->line++;
				ps->line_start = ps->p + 1;
			}
			ps->p++;
		}
		if (ps->end - ps->p >= 2 && ps->p[0] == '/' && ps->p[1] == '*') {
			const char *q = ps->p + 2;
			while (q + 1 < ps->end && !(q[0] == '*' && q[1] == '/')) {
				if (*q == '\n') {
					ps->line++;
					ps->line_start = q + 1;
				}
				q++;
			}
			if (q + 1 >= ps->end) {
				ps->tok.line = ps->line;
				ps->tok.col = (unsigned)(ps->p - ps->line_start) + 1;
				tsdl_fail(ps, "unterminated comment");
			}
			ps->p = q + 2;
		} else if (ps->end - ps->p >= 2 && ps->p[0] == '/' && ps->p[1] == '/') {
			while (ps->p < ps->end && *ps->p != '\n')
				ps->p++;
		} else {
			return;
		}
	}
}

static void lex_number(struct parser *ps, struct tok *t)
{
	const char *q = ps->p;
	uint64_t v = 0;
	unsigned base = 10, digits = 0;

	if (*q == '-') {
		t->negative = 1;
		q++;
	}
	if (ps->end - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
		base = 16;
		q += 2;
	}
	for (; q < ps->end; q++) {
		unsigned d;
		if (is_digit(*q))
			d = (unsigned)(*q - '0');
		else if (base == 16 && *q >= 'a' && *q <= 'f')
			d = (unsigned)(*q - 'a' + 10);
		else if (base == 16 && *q >= 'A' && *q <= 'F')
			d = (unsigned)(*q - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			tsdl_fail(ps, "number too large");
		v = v * base + d;
		digits++;
	}
	if (!digits)
		tsdl_fail(ps, "malformed number");
	while (q < ps->end && (*q == 'u' || *q == 'U' || *q == 'l' || *q == 'L'))
		q++;
	if (q < ps->end && (is_alpha(*q) || is_digit(*q)))
		tsdl_fail(ps, "malformed number");
	t->num = v;
	ps->p = q;
}

static void next(struct parser *ps)
{
	struct tok *t = &ps->tok;

	skip_space(ps);
	memset(t, 0, sizeof(*t));
	t->line = ps->line;
	t->col = (unsigned)(ps->p - ps->line_start) + 1;
	if (ps->p >= ps->end) {
		t->kind = TK_EOF;
		return;
	}
	t->s = ps->p;
	if (is_alpha(*ps->p)) {
		while (ps->p < ps->end && (is_alpha(*ps->p) || is_digit(*ps->p)))
			ps->p++;
		t->kind = TK_IDENT;
	} else if (is_digit(*ps->p) || (*ps->p == '-' && ps->end - ps->p >= 2 && is_digit(ps->p[1]))) {
		t->kind = TK_NUM;
		lex_number(ps, t);
	} else if (*ps->p == '"') {
		const char *q = ++ps->p;
		while (q < ps->end && *q != '"' && *q != '\n') {
			if (*q == '\\' && q + 1 < ps->end)
				q++;
			q++;
		}
		if (q >= ps->end || *q != '"')
			tsdl_fail(ps, "unterminated string");
		t->kind = TK_STR;
		t->s = ps->p;
		ps->p = q + 1;
		t->len = (size_t)(q - t->s);
		return;
	} else if (*ps->p == ':' && ps->end - ps->p >= 2 && ps->p[1] == '=') {
		t->kind = TK_ASSIGN_TYPE;
		ps->p += 2;
	} else {
		t->kind = TK_PUNCT;
		ps->p++;
	}
	t->len = (size_t)(ps->p - t->s);
}

static int is_punct(struct parser *ps, char c)
{
	return ps->tok.kind == TK_PUNCT && ps->tok.s[0] == c;
}

static int is_word(struct parser *ps, const char *w)
{
	return ps->tok.kind == TK_IDENT && strlen(w) == ps->tok.len && !memcmp(ps->tok.s, w, ps->tok.len);
}

static void expect_punct(struct parser *ps, char c)
{
	char what[8] = { '\'', c, '\'', 0 };

	if (!is_punct(ps, c))
		expected(ps, what);
	next(ps);
}

static const char *take_ident(struct parser *ps, const char *what)
{
	const char *s;

	if (ps->tok.kind != TK_IDENT)
		expected(ps, what);
	s = arena_strndup(ps->arena, ps->tok.s, ps->tok.len);
	next(ps);
	return s;
}

/* A dotted name: packet.header, clock.monotonic.value */
static const char *take_dotted(struct parser *ps, const char *what)
{
	char buf[256];
	size_t n = 0;

	for (;;) {
		if (ps->tok.kind != TK_IDENT)
			expected(ps, what);
		if (n + ps->tok.len + 2 > sizeof(buf))
			tsdl_fail(ps, "name too long");
		memcpy(buf + n, ps->tok.s, ps->tok.len);
		n += ps->tok.len;
		next(ps);
		if (!is_punct(ps, '.'))
			break;
		buf[n++] = '.';
		next(ps);
	}
	return arena_strndup(ps->arena, buf, n);
}

/* A value on the right of '=': number, identifier (dotted) or string. */
struct value {
	int kind;               /* TK_NUM, TK_IDENT, TK_STR */
	uint64_t num;
	int negative;
	const char *text;       /* identifier or string contents (unescaped) */
	unsigned line, col;
};

/* A string's contents, escapes undone, shown printable (ctf_printable). */
static const char *unescape(struct parser *ps, const char *s, size_t n)
{
	char *d = ctf_arena_alloc(ps->arena, n + 1), *o = d, *shown;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			i++;
			switch (s[i]) {
			case 'n': *o++ = '\n'; break;
			case 't': *o++ = '\t'; break;
			default: *o++ = s[i];
			}
		} else {
			*o++ = s[i];
		}
	}
	shown = ctf_arena_alloc(ps->arena, 4 * (size_t)(o - d) + 1);
	ctf_printable(shown, d, (size_t)(o - d));
	return shown;
}

static struct value take_value(struct parser *ps)
{
	struct value v;

	memset(&v, 0, sizeof(v));
	v.line = ps->tok.line;
	v.col = ps->tok.col;
	v.kind = ps->tok.kind;
	switch (ps->tok.kind) {
	case TK_NUM:
		v.num = ps->tok.num;
		v.negative = ps->tok.negative;
		next(ps);
		break;
	case TK_STR:
		v.text = unescape(ps, ps->tok.s, ps->tok.len);
		next(ps);
		break;
	case TK_IDENT:
		v.text = take_dotted(ps, "a value");
		break;
	default:
		expected(ps, "a value");
	}
	return v;
}

static uint64_t value_uint(struct parser *ps, const struct value *v, const char *attr)
{
	if (v->kind != TK_NUM || v->negative) {
		ps->tok.line = v->line;
		ps->tok.col = v->col;
		tsdl_fail(ps, "expected a non-negative number for '%s'", attr);
	}
	return v->num;
}

static int value_bool(struct parser *ps, const struct value *v, const char *attr)
{
	if (v->kind == TK_NUM && !v->negative && v->num <= 1)
		return (int)v->num;
	if (v->kind == TK_IDENT && (!strcmp(v->text, "true") || !strcmp(v->text, "TRUE")))
		return 1;
	if (v->kind == TK_IDENT && (!strcmp(v->text, "false") || !strcmp(v->text, "FALSE")))
		return 0;
	ps->tok.line = v->line;
	ps->tok.col = v->col;
	tsdl_fail(ps, "expected true or false for '%s'", attr);
}

static int value_base(struct parser *ps, const struct value *v)
{
	static const struct { const char *name; int base; } names[] = {
		{ "decimal", 10 }, { "dec", 10 }, { "d", 10 }, { "i", 10 }, { "u", 10 },
		{ "hexadecimal", 16 }, { "hex", 16 }, { "x", 16 }, { "X", 16 }, { "p", 16 },
		{ "octal", 8 }, { "oct", 8 }, { "o", 8 }, { "binary", 2 }, { "b", 2 },
	};
	size_t i;

	if (v->kind == TK_NUM && !v->negative && (v->num == 2 || v->num == 8 || v->num == 10 || v->num == 16))
		return (int)v->num;
	if (v->kind == TK_IDENT)
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(v->text, names[i].name))
				return names[i].base;
	ps->tok.line = v->line;
	ps->tok.col = v->col;
	tsdl_fail(ps, "expected a base (10, 16, 8, 2, decimal, hex...)");
}

static int value_big_endian(struct parser *ps, const struct value *v)
{
	if (v->kind == TK_IDENT && (!strcmp(v->text, "le") || !strcmp(v->text, "native")))
		return 0;
	if (v->kind == TK_IDENT && (!strcmp(v->text, "be") || !strcmp(v->text, "network")))
		return 1;
	ps->tok.line = v->line;
	ps->tok.col = v->col;
	tsdl_fail(ps, "expected a byte order (le, be, native, network)");
}

/* ---- TSDL types and declarations ---- */

static struct ctf_type *parse_type(struct parser *ps);
static struct ctf_type *parse_alias_use(struct parser *ps);

static struct ctf_type *new_type(struct parser *ps, int kind)
{
	struct ctf_type *t = ctf_arena_alloc(ps->arena, sizeof(*t));

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->align = 8;
	t->base = 10;
	return t;
}

static struct ctf_type *lookup(struct tsdl_name *list, const char *name)
{
	for (; list; list = list->next)
		if (!strcmp(list->name, name))
			return list->type;
	return NULL;
}

static void define(struct parser *ps, struct tsdl_name **list, const char *name, struct ctf_type *t)
{
	struct tsdl_name *n = ctf_arena_alloc(ps->arena, sizeof(*n));

	n->name = name;
	n->type = t;
	n->next = *list;
	*list = n;
}

/* integer { size = 32; align = 8; signed = true; ... } */
static void parse_attrs(struct parser *ps, struct ctf_type *t)
{
	int have_align = 0;

	expect_punct(ps, '{');
	while (!is_punct(ps, '}')) {
		const char *attr = take_dotted(ps, "an attribute name or '}'");
		struct value v;

		expect_punct(ps, '=');
		v = take_value(ps);
		if (!strcmp(attr, "size"))
			t->size = (unsigned)(value_uint(ps, &v, attr) > 4096 ? 4096 : v.num);
		else if (!strcmp(attr, "align")) {
			uint64_t a = value_uint(ps, &v, attr);
			/* CTF: a power of two; 0 would divide by zero in any
			 * reader that aligns, the others misplace fields */
			if (a == 0 || (a & (a - 1))) {
				ps->tok.line = v.line;
				ps->tok.col = v.col;
				tsdl_fail(ps, "align = %llu: an alignment is a power of two (in bits)",
					   (unsigned long long)a);
			}
			t->align = (unsigned)(a > 4096 ? 4096 : a);
			have_align = 1;
		} else if (!strcmp(attr, "signed"))
			t->is_signed = value_bool(ps, &v, attr);
		else if (!strcmp(attr, "base"))
			t->base = value_base(ps, &v);
		else if (!strcmp(attr, "encoding"))
			t->encoded = !(v.kind == TK_IDENT && !strcmp(v.text, "none"));
		else if (!strcmp(attr, "byte_order"))
			t->big_endian = value_big_endian(ps, &v);
		else if (!strcmp(attr, "exp_dig"))
			t->exp_dig = (unsigned)(value_uint(ps, &v, attr) > 4096 ? 4096 : v.num);
		else if (!strcmp(attr, "mant_dig"))
			t->mant_dig = (unsigned)(value_uint(ps, &v, attr) > 4096 ? 4096 : v.num);
		else if (!strcmp(attr, "map"))
			t->maps_clock = v.kind == TK_IDENT && !strncmp(v.text, "clock.", 6);
		/* anything else: not needed to decode */
		expect_punct(ps, ';');
	}
	next(ps);
	if (t->kind == TY_INT && !have_align)
		t->align = t->size % 8 ? 1 : 8;
	if (t->kind == TY_FLOAT)
		t->size = t->exp_dig + t->mant_dig;
}

#define MAX_DIMS 8               /* x[2][3]...: array dimensions of a field */

/* One "TYPE name[dims];" of a struct or variant body into d: x[2][3] is two arrays of three. */
static void parse_decl(struct parser *ps, struct ctf_decl *d)
{
	struct ctf_type *ft = parse_type(ps), *dims[MAX_DIMS];
	unsigned n = 0;

	d->line = ps->tok.line;
	d->col = ps->tok.col;
	d->name = take_ident(ps, "a field name");
	while (is_punct(ps, '[')) {
		struct ctf_type *a;

		if (n == MAX_DIMS)
			tsdl_fail(ps, "too many array dimensions (at most %u)", MAX_DIMS);
		next(ps);
		if (ps->tok.kind == TK_NUM && !ps->tok.negative) {
			a = new_type(ps, TY_ARRAY);
			a->length = ps->tok.num;
			next(ps);
		} else if (ps->tok.kind == TK_IDENT) {
			/* a sequence: the length is another field's value */
			a = new_type(ps, TY_SEQ);
			a->ref = take_dotted(ps, "a length field");
		} else {
			expected(ps, "an array length or a length field");
		}
		expect_punct(ps, ']');
		dims[n++] = a;
	}
	while (n--) {           /* the last dimension is the innermost */
		dims[n]->elem = ft;
		dims[n]->align = ft->align;
		ft = dims[n];
	}
	d->type = ft;
	expect_punct(ps, ';');
}

/* { decls } of a struct or variant; a struct's alignment is its widest member's */
static void parse_struct_body(struct parser *ps, struct ctf_type *t)
{
	struct ctf_decl decls[256];
	unsigned n = 0, i;

	expect_punct(ps, '{');
	if (++ps->depth > MAX_DEPTH)
		tsdl_fail(ps, "structures nested too deep");
	while (!is_punct(ps, '}')) {
		if (n == sizeof(decls) / sizeof(decls[0]))
			tsdl_fail(ps, "too many fields in a structure (at most 256)");
		parse_decl(ps, &decls[n++]);
	}
	next(ps);
	ps->depth--;
	t->align = t->kind == TY_STRUCT ? 1 : 8;
	for (i = 0; i < n && t->kind == TY_STRUCT; i++)
		if (decls[i].type->align > t->align)
			t->align = decls[i].type->align;
	if (t->kind == TY_STRUCT && is_word(ps, "align")) {
		next(ps);
		expect_punct(ps, '(');
		if (ps->tok.kind != TK_NUM)
			expected(ps, "an alignment");
		if (ps->tok.negative || ps->tok.num == 0 || (ps->tok.num & (ps->tok.num - 1)))
			tsdl_fail(ps, "align(%s%llu): an alignment is a power of two (in bits)",
				   ps->tok.negative ? "-" : "", (unsigned long long)ps->tok.num);
		if (ps->tok.num > t->align)
			t->align = ps->tok.num > 4096 ? 4096 : (unsigned)ps->tok.num;
		next(ps);
		expect_punct(ps, ')');
	}
	t->ndecls = n;
	t->decls = ctf_arena_alloc(ps->arena, (n ? n : 1) * sizeof(*decls));
	memcpy(t->decls, decls, n * sizeof(*decls));
}

/* A signed enum bound: a number or '-' number. */
static int64_t enum_bound(struct parser *ps)
{
	int64_t v;

	if (ps->tok.kind != TK_NUM)
		expected(ps, "an enum value");
	if (ps->tok.num > (uint64_t)INT64_MAX && ps->tok.negative)
		tsdl_fail(ps, "enum value out of range");
	v = ps->tok.negative ? -(int64_t)ps->tok.num : (int64_t)ps->tok.num;
	next(ps);
	return v;
}

/* enum [name] : CONTAINER { "A" = 1, B, "C" = 2 ... 5, } */
static struct ctf_type *parse_enum(struct parser *ps)
{
	struct ctf_type *t = new_type(ps, TY_ENUM);
	struct ctf_mapping maps[1024];
	unsigned n = 0;
	int64_t nextv = 0;

	next(ps);
	if (ps->tok.kind == TK_IDENT)
		next(ps);       /* its name: enums are not looked up by name here */
	if (is_punct(ps, ':')) {
		next(ps);
		t->elem = parse_type(ps);
	} else {
		t->elem = lookup(ps->aliases, "int");
		if (!t->elem)
			expected(ps, "':' and a container type");
	}
	if (t->elem->kind != TY_INT)
		tsdl_fail(ps, "an enum's container is an integer");
	expect_punct(ps, '{');
	while (!is_punct(ps, '}')) {
		struct ctf_mapping *m;

		if (n == sizeof(maps) / sizeof(maps[0]))
			tsdl_fail(ps, "too many enum labels (at most 1024)");
		m = &maps[n++];
		if (ps->tok.kind != TK_STR && ps->tok.kind != TK_IDENT)
			expected(ps, "an enum label");
		m->label = ps->tok.kind == TK_STR ? unescape(ps, ps->tok.s, ps->tok.len)
						  : arena_strndup(ps->arena, ps->tok.s, ps->tok.len);
		next(ps);
		m->lo = m->hi = nextv;
		if (is_punct(ps, '=')) {
			next(ps);
			m->lo = m->hi = enum_bound(ps);
			if (is_punct(ps, '.')) {
				expect_punct(ps, '.');
				expect_punct(ps, '.');
				expect_punct(ps, '.');
				m->hi = enum_bound(ps);
			}
		}
		nextv = (int64_t)((uint64_t)m->hi + 1);
		if (!is_punct(ps, ','))
			break;
		next(ps);
	}
	expect_punct(ps, '}');
	t->size = t->elem->size;
	t->align = t->elem->align;
	t->maps = ctf_arena_alloc(ps->arena, (n ? n : 1) * sizeof(*maps));
	memcpy(t->maps, maps, n * sizeof(*maps));
	t->nmaps = n;
	return t;
}

/* variant [name] <tag> { options } */
static struct ctf_type *parse_variant(struct parser *ps)
{
	struct ctf_type *t = new_type(ps, TY_VARIANT);
	const char *name = NULL;

	next(ps);
	if (ps->tok.kind == TK_IDENT)
		name = take_ident(ps, "a variant name");
	if (is_punct(ps, '<')) {
		next(ps);
		t->ref = take_dotted(ps, "a tag field");
		expect_punct(ps, '>');
	}
	if (!is_punct(ps, '{')) {
		struct ctf_type *named = name ? lookup(ps->structs, name) : NULL;
		struct ctf_type *copy;
		if (!named || named->kind != TY_VARIANT)
			tsdl_fail(ps, "unknown variant '%s'", name ? name : "");
		copy = ctf_arena_alloc(ps->arena, sizeof(*copy));
		*copy = *named;
		if (t->ref)
			copy->ref = t->ref;
		return copy;
	}
	parse_struct_body(ps, t);
	if (name)
		define(ps, &ps->structs, name, t);
	return t;
}

/* Whether some alias is name or starts with "name " */
static int alias_prefix(const struct tsdl_name *list, const char *name, size_t n)
{
	for (; list; list = list->next)
		if (!strncmp(list->name, name, n) && (!list->name[n] || list->name[n] == ' '))
			return 1;
	return 0;
}

/* A type by its alias name, which may be several words ("unsigned long"). */
static struct ctf_type *parse_alias_use(struct parser *ps)
{
	char name[128];
	size_t n;
	struct ctf_type *t;

	n = (size_t)snprintf(name, sizeof(name), "%.*s", (int)ps->tok.len, ps->tok.s);
	for (;;) {
		/* one word more while some alias starts so; else put it back */
		const char *p = ps->p, *line_start = ps->line_start;
		unsigned line = ps->line;
		struct tok tok = ps->tok;
		size_t m;

		next(ps);
		if (ps->tok.kind == TK_IDENT && n + 1 + ps->tok.len < sizeof(name)) {
			m = (size_t)snprintf(name + n, sizeof(name) - n, " %.*s", (int)ps->tok.len, ps->tok.s);
			if (alias_prefix(ps->aliases, name, n + m)) {
				n += m;
				continue;
			}
			name[n] = '\0';
		}
		ps->p = p;
		ps->line_start = line_start;
		ps->line = line;
		ps->tok = tok;
		break;
	}
	t = lookup(ps->aliases, name);
	if (!t)
		tsdl_fail(ps, "unknown type '%s'", name);
	next(ps);
	return t;
}

static struct ctf_type *parse_type(struct parser *ps)
{
	struct ctf_type *t;

	if (is_word(ps, "integer")) {
		next(ps);
		t = new_type(ps, TY_INT);
		parse_attrs(ps, t);
		return t;
	}
	if (is_word(ps, "floating_point")) {
		next(ps);
		t = new_type(ps, TY_FLOAT);
		parse_attrs(ps, t);
		return t;
	}
	if (is_word(ps, "string")) {
		next(ps);
		t = new_type(ps, TY_STRING);
		if (is_punct(ps, '{'))
			parse_attrs(ps, t);
		return t;
	}
	if (is_word(ps, "struct")) {
		const char *name = NULL;
		next(ps);
		if (ps->tok.kind == TK_IDENT)
			name = take_ident(ps, "a structure name");
		if (!is_punct(ps, '{')) {
			if (!name)
				expected(ps, "a structure name or '{'");
			t = lookup(ps->structs, name);
			if (!t)
				tsdl_fail(ps, "unknown structure 'struct %s'", name);
			return t;
		}
		t = new_type(ps, TY_STRUCT);
		parse_struct_body(ps, t);
		if (name)
			define(ps, &ps->structs, name, t);
		return t;
	}
	if (is_word(ps, "enum"))
		return parse_enum(ps);
	if (is_word(ps, "variant"))
		return parse_variant(ps);
	if (ps->tok.kind == TK_IDENT)
		return parse_alias_use(ps);
	expected(ps, "a type");
}

/* typealias TYPE := NAME;   typedef TYPE NAME; */
static void parse_alias(struct parser *ps, int is_typedef)
{
	struct ctf_type *t;
	char name[128];
	size_t n = 0;

	next(ps);
	t = parse_type(ps);
	if (!is_typedef) {
		if (ps->tok.kind != TK_ASSIGN_TYPE)
			expected(ps, "':='");
		next(ps);
	}
	/* the name may be several words ("unsigned long") */
	do {
		if (ps->tok.kind != TK_IDENT)
			expected(ps, "a type name");
		if (n + ps->tok.len + 2 > sizeof(name))
			tsdl_fail(ps, "type name too long");
		if (n)
			name[n++] = ' ';
		memcpy(name + n, ps->tok.s, ps->tok.len);
		n += ps->tok.len;
		next(ps);
	} while (ps->tok.kind == TK_IDENT);
	expect_punct(ps, ';');
	define(ps, &ps->aliases, arena_strndup(ps->arena, name, n), t);
}

static void skip_block(struct parser *ps)
{
	unsigned depth = 0;

	do {
		if (ps->tok.kind == TK_EOF)
			expected(ps, "'}'");
		if (is_punct(ps, '{'))
			depth++;
		else if (is_punct(ps, '}'))
			depth--;
		next(ps);
	} while (depth);
}

/* ---- the blocks: trace, env, clock, stream, event ---- */

static int parse_uuid(const char *s, unsigned char out[16])
{
	unsigned i, n = 0;

	for (i = 0; s[i] && n < 32; i++) {
		int c = s[i], d;
		if (c == '-')
			continue;
		if (c >= '0' && c <= '9') d = c - '0';
		else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
		else return -1;
		if (n % 2 == 0)
			out[n / 2] = (unsigned char)(d << 4);
		else
			out[n / 2] |= (unsigned char)d;
		n++;
	}
	return n == 32 && !s[i] ? 0 : -1;
}

/* Calls fn(ps, attr, is_type) for each "attr = value;" or "attr := type;". */
static void parse_entries(struct parser *ps, const char *block,
			  void (*fn)(struct parser *, const char *, int))
{
	expect_punct(ps, '{');
	while (!is_punct(ps, '}')) {
		const char *attr;
		char what[64];

		snprintf(what, sizeof(what), "a %s attribute or '}'", block);
		attr = take_dotted(ps, what);
		if (ps->tok.kind == TK_ASSIGN_TYPE) {
			next(ps);
			fn(ps, attr, 1);
		} else {
			expect_punct(ps, '=');
			fn(ps, attr, 0);
		}
		expect_punct(ps, ';');
	}
	next(ps);
}

static void trace_entry(struct parser *ps, const char *attr, int is_type)
{
	struct ctf_trace *t = ps->trace;
	struct value v;

	if (is_type) {
		struct ctf_type *ty = parse_type(ps);
		if (!strcmp(attr, "packet.header"))
			ps->packet_header = ty;
		return;
	}
	v = take_value(ps);
	if (!strcmp(attr, "major") && value_uint(ps, &v, attr) != 1)
		tsdl_fail(ps, "CTF major version %llu is not supported (1.8 is)", (unsigned long long)v.num);
	if (!strcmp(attr, "byte_order") && value_big_endian(ps, &v))
		tsdl_fail(ps, "big-endian traces are not supported (marktap writes little endian)");
	if (!strcmp(attr, "uuid")) {
		if (v.kind != TK_STR || parse_uuid(v.text, t->uuid))
			tsdl_fail(ps, "malformed uuid");
		t->has_uuid = 1;
	}
}

static void env_entry(struct parser *ps, const char *attr, int is_type)
{
	struct ctf_trace *t = ps->trace;
	struct value v;
	char num[32];

	if (is_type)
		expected(ps, "'='");
	v = take_value(ps);
	if (v.kind == TK_NUM) {
		snprintf(num, sizeof(num), "%s%llu", v.negative ? "-" : "", (unsigned long long)v.num);
		v.text = arena_strndup(ps->arena, num, strlen(num));
	}
	if (t->nenv % 16 == 0) {
		struct ctf_env *e = ctf_arena_alloc(ps->arena, (t->nenv + 16) * sizeof(*e));
		if (t->nenv)
			memcpy(e, t->env, t->nenv * sizeof(*e));
		t->env = e;
	}
	t->env[t->nenv].key = attr;
	t->env[t->nenv].value = v.text;
	t->nenv++;
	/* marktap's recorder says 0 until it ends cleanly (mt_ctf.h) */
	if (!strcmp(attr, "recording_complete")) {
		t->has_state = 1;
		t->incomplete = !(v.kind == TK_NUM && v.num != 0);
	}
}

static void clock_entry(struct parser *ps, const char *attr, int is_type)
{
	struct ctf_trace *t = ps->trace;
	struct value v;

	if (is_type)
		expected(ps, "'='");
	v = take_value(ps);
	if (ps->nclock_blocks > 1)
		return;         /* events map to one clock: the first */
	if (!strcmp(attr, "name"))
		t->clock_name = v.text;
	else if (!strcmp(attr, "freq")) {
		t->freq = value_uint(ps, &v, attr);
		if (!t->freq)
			tsdl_fail(ps, "clock frequency 0");
	} else if (!strcmp(attr, "offset_s")) {
		if (v.kind != TK_NUM || v.num > (uint64_t)INT64_MAX / 1000000000)
			tsdl_fail(ps, "bad clock offset_s");
		ps->offset_s = v.negative ? -(int64_t)v.num : (int64_t)v.num;
	} else if (!strcmp(attr, "offset")) {
		/* in cycles: LTTng writes the whole epoch offset here */
		if (value_uint(ps, &v, attr) > (uint64_t)INT64_MAX)
			tsdl_fail(ps, "bad clock offset");
		ps->offset_cycles = v.num;
	}
}

static void stream_entry(struct parser *ps, const char *attr, int is_type)
{
	struct ctf_type *ty;

	if (!is_type) {
		struct value v = take_value(ps);
		if (!strcmp(attr, "id"))
			ps->cur_stream->id = value_uint(ps, &v, attr);
		return;
	}
	ty = parse_type(ps);
	if (!strcmp(attr, "packet.context"))
		ps->cur_stream->pc = ty;
	else if (!strcmp(attr, "event.header"))
		ps->cur_stream->eh = ty;
	else if (!strcmp(attr, "event.context"))
		ps->cur_stream->ec = ty;
}

static void event_entry(struct parser *ps, const char *attr, int is_type)
{
	struct pending_event *e = ps->cur_event;
	struct value v;

	if (is_type) {
		unsigned line = ps->tok.line, col = ps->tok.col;
		struct ctf_type *ty = parse_type(ps);
		if (!strcmp(attr, "fields")) {
			e->fields = ty;
			e->line = line;
			e->col = col;
		} else if (!strcmp(attr, "context") && !(ty->kind == TY_STRUCT && ty->ndecls == 0)) {
			tsdl_fail(ps, "per-event context is not supported");
		}
		return;
	}
	v = take_value(ps);
	if (!strcmp(attr, "name")) {
		if (v.kind == TK_NUM)
			tsdl_fail(ps, "expected a name for the event");
		e->cls->name = v.text;
	} else if (!strcmp(attr, "id")) {
		e->cls->id = value_uint(ps, &v, attr);
		if (e->cls->id >= MAX_IDS)
			tsdl_fail(ps, "event id %llu too large", (unsigned long long)e->cls->id);
	} else if (!strcmp(attr, "stream_id")) {
		e->stream_id = value_uint(ps, &v, attr);
	}
}

static void parse_event_block(struct parser *ps)
{
	struct pending_event *e = ctf_arena_alloc(ps->arena, sizeof(*e));
	struct ctf_event_class *c = ctf_arena_alloc(ps->arena, sizeof(*c));
	unsigned line = ps->tok.line, col = ps->tok.col;

	memset(e, 0, sizeof(*e));
	memset(c, 0, sizeof(*c));
	c->id = UINT64_MAX;
	e->stream_id = UINT64_MAX;
	e->cls = c;
	e->line = line;
	e->col = col;
	*ps->events_tail = e;
	ps->events_tail = &e->next;
	ps->cur_event = e;
	next(ps);
	parse_entries(ps, "event", event_entry);
	if (!c->name || c->id == UINT64_MAX) {
		ps->tok.line = line;
		ps->tok.col = col;
		tsdl_fail(ps, "event block without %s", c->name ? "an id" : "a name");
	}
}

void tsdl_parse_top(struct parser *ps)
{
	next(ps);
	while (ps->tok.kind != TK_EOF) {
		if (is_word(ps, "typealias")) {
			parse_alias(ps, 0);
			continue;
		}
		if (is_word(ps, "typedef")) {
			parse_alias(ps, 1);
			continue;
		}
		if (is_word(ps, "trace")) {
			next(ps);
			parse_entries(ps, "trace", trace_entry);
		} else if (is_word(ps, "env")) {
			next(ps);
			parse_entries(ps, "env", env_entry);
		} else if (is_word(ps, "clock")) {
			next(ps);
			ps->nclock_blocks++;
			parse_entries(ps, "clock", clock_entry);
		} else if (is_word(ps, "stream")) {
			next(ps);
			if (ps->nstream_blocks == MAX_SCLASSES)
				tsdl_fail(ps, "too many stream classes (at most %u)", MAX_SCLASSES);
			ps->cur_stream = &ps->streams[ps->nstream_blocks++];
			parse_entries(ps, "stream", stream_entry);
		} else if (is_word(ps, "event")) {
			parse_event_block(ps);
		} else if (is_word(ps, "struct") || is_word(ps, "enum") || is_word(ps, "variant")) {
			(void)parse_type(ps);
		} else if (ps->tok.kind == TK_IDENT) {
			next(ps);       /* callsite { } and other blocks we do not need */
			if (!is_punct(ps, '{'))
				expected(ps, "'{'");
			skip_block(ps);
		} else {
			expected(ps, "a declaration (trace, clock, stream, event, typealias...)");
		}
		expect_punct(ps, ';');
	}
}
