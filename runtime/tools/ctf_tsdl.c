/*
 * ctf_tsdl.c - parse the TSDL metadata of a marktap trace.
 *
 * The subset marktap writes, and a little more: typealias, typedef, trace,
 * env, clock, named structs, one stream class, and events whose fields are
 * integers, floats and strings.  Errors are "FILE:LINE:COL: expected X,
 * saw Y"; inside the parser they unwind with longjmp (as Lua's parser
 * does), which is safe because everything lives in one arena.
 *
 * Every integer is byte aligned and little endian (doc/trace-format.md), so
 * the header and context structs have fixed offsets, computed here once
 * (struct ctf_layout) instead of interpreting the TSDL per event; metadata
 * outside that subset is refused with a message that says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctf_int.h"
#include "mt_utf8.h"

#define MAX_IDS     (1u << 20)  /* event ids we index directly */
#define MAX_DEPTH   32          /* struct nesting */
#define MAX_SCLASSES 256        /* stream classes (LTTng: one per channel) */

/* ---- arena: everything a trace's metadata needs, freed at once ---- */

struct ctf_arena {
	struct ctf_arena *next;
	size_t used, cap;
	max_align_t data[];
};

static void *arena_alloc(struct ctf_arena **a, size_t n)
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
	char *d = arena_alloc(a, n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static void arena_free(struct ctf_arena *a)
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

/* ---- TSDL types ---- */

struct tsdl_name {              /* a typealias/typedef or a named struct */
	struct tsdl_name *next;
	const char *name;
	struct ctf_type *type;
};

/* ---- the TSDL lexer ---- */

enum { TK_EOF, TK_IDENT, TK_NUM, TK_STR, TK_PUNCT, TK_ASSIGN_TYPE };

struct tok {
	int kind;
	const char *s;          /* TK_IDENT, TK_STR (raw, no quotes), TK_PUNCT */
	size_t len;
	uint64_t num;
	int negative;
	unsigned line, col;
};

struct parser {
	const char *path;
	const char *p, *end, *line_start;
	unsigned line;
	struct tok tok;
	struct ctf_arena **arena;
	struct ctf_err *err;
	jmp_buf fail;
	struct tsdl_name *aliases, *structs;
	unsigned depth;
	char *plain;            /* the text of packetized metadata */

	/* what the blocks said */
	struct ctf_type *packet_header, *packet_context, *event_header, *event_context;
	unsigned nstream_blocks, nclock_blocks;
	struct pstream { uint64_t id; struct ctf_type *pc, *eh, *ec; } *streams, *cur_stream;
	int64_t offset_s;
	uint64_t offset_cycles;
	struct ctf_trace *trace;
	struct pending_event *cur_event;
	struct pending_event { struct pending_event *next; struct ctf_event_class *cls;
			       struct ctf_type *fields; unsigned line, col;
			       uint64_t stream_id; /* UINT64_MAX: not said */ } *events, **events_tail;
};

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

static void __attribute__((noreturn, format(printf, 2, 3)))
parse_fail(struct parser *ps, const char *fmt, ...)
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
	parse_fail(ps, "expected %s, saw %s", what, saw);
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
				parse_fail(ps, "unterminated comment");
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
			parse_fail(ps, "number too large");
		v = v * base + d;
		digits++;
	}
	if (!digits)
		parse_fail(ps, "malformed number");
	while (q < ps->end && (*q == 'u' || *q == 'U' || *q == 'l' || *q == 'L'))
		q++;
	if (q < ps->end && (is_alpha(*q) || is_digit(*q)))
		parse_fail(ps, "malformed number");
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
			parse_fail(ps, "unterminated string");
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
			parse_fail(ps, "name too long");
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
	char *d = arena_alloc(ps->arena, n + 1), *o = d, *shown;
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
	shown = arena_alloc(ps->arena, 4 * (size_t)(o - d) + 1);
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
		parse_fail(ps, "expected a non-negative number for '%s'", attr);
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
	parse_fail(ps, "expected true or false for '%s'", attr);
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
	parse_fail(ps, "expected a base (10, 16, 8, 2, decimal, hex...)");
}

static int value_big_endian(struct parser *ps, const struct value *v)
{
	if (v->kind == TK_IDENT && (!strcmp(v->text, "le") || !strcmp(v->text, "native")))
		return 0;
	if (v->kind == TK_IDENT && (!strcmp(v->text, "be") || !strcmp(v->text, "network")))
		return 1;
	ps->tok.line = v->line;
	ps->tok.col = v->col;
	parse_fail(ps, "expected a byte order (le, be, native, network)");
}

/* ---- TSDL types and declarations ---- */

static struct ctf_type *parse_type(struct parser *ps);
static struct ctf_type *parse_alias_use(struct parser *ps);

static struct ctf_type *new_type(struct parser *ps, int kind)
{
	struct ctf_type *t = arena_alloc(ps->arena, sizeof(*t));

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
	struct tsdl_name *n = arena_alloc(ps->arena, sizeof(*n));

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
				parse_fail(ps, "align = %llu: an alignment is a power of two (in bits)",
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
			parse_fail(ps, "too many array dimensions (at most %u)", MAX_DIMS);
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
		parse_fail(ps, "structures nested too deep");
	while (!is_punct(ps, '}')) {
		if (n == sizeof(decls) / sizeof(decls[0]))
			parse_fail(ps, "too many fields in a structure (at most 256)");
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
			parse_fail(ps, "align(%s%llu): an alignment is a power of two (in bits)",
				   ps->tok.negative ? "-" : "", (unsigned long long)ps->tok.num);
		if (ps->tok.num > t->align)
			t->align = ps->tok.num > 4096 ? 4096 : (unsigned)ps->tok.num;
		next(ps);
		expect_punct(ps, ')');
	}
	t->ndecls = n;
	t->decls = arena_alloc(ps->arena, (n ? n : 1) * sizeof(*decls));
	memcpy(t->decls, decls, n * sizeof(*decls));
}

/* A signed enum bound: a number or '-' number. */
static int64_t enum_bound(struct parser *ps)
{
	int64_t v;

	if (ps->tok.kind != TK_NUM)
		expected(ps, "an enum value");
	if (ps->tok.num > (uint64_t)INT64_MAX && ps->tok.negative)
		parse_fail(ps, "enum value out of range");
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
		parse_fail(ps, "an enum's container is an integer");
	expect_punct(ps, '{');
	while (!is_punct(ps, '}')) {
		struct ctf_mapping *m;

		if (n == sizeof(maps) / sizeof(maps[0]))
			parse_fail(ps, "too many enum labels (at most 1024)");
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
	t->maps = arena_alloc(ps->arena, (n ? n : 1) * sizeof(*maps));
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
			parse_fail(ps, "unknown variant '%s'", name ? name : "");
		copy = arena_alloc(ps->arena, sizeof(*copy));
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
		parse_fail(ps, "unknown type '%s'", name);
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
				parse_fail(ps, "unknown structure 'struct %s'", name);
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
			parse_fail(ps, "type name too long");
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
		parse_fail(ps, "CTF major version %llu is not supported (1.8 is)", (unsigned long long)v.num);
	if (!strcmp(attr, "byte_order") && value_big_endian(ps, &v))
		parse_fail(ps, "big-endian traces are not supported (marktap writes little endian)");
	if (!strcmp(attr, "uuid")) {
		if (v.kind != TK_STR || parse_uuid(v.text, t->uuid))
			parse_fail(ps, "malformed uuid");
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
		struct ctf_env *e = arena_alloc(ps->arena, (t->nenv + 16) * sizeof(*e));
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
			parse_fail(ps, "clock frequency 0");
	} else if (!strcmp(attr, "offset_s")) {
		if (v.kind != TK_NUM || v.num > (uint64_t)INT64_MAX / 1000000000)
			parse_fail(ps, "bad clock offset_s");
		ps->offset_s = v.negative ? -(int64_t)v.num : (int64_t)v.num;
	} else if (!strcmp(attr, "offset")) {
		/* in cycles: LTTng writes the whole epoch offset here */
		if (value_uint(ps, &v, attr) > (uint64_t)INT64_MAX)
			parse_fail(ps, "bad clock offset");
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
			parse_fail(ps, "per-event context is not supported");
		}
		return;
	}
	v = take_value(ps);
	if (!strcmp(attr, "name")) {
		if (v.kind == TK_NUM)
			parse_fail(ps, "expected a name for the event");
		e->cls->name = v.text;
	} else if (!strcmp(attr, "id")) {
		e->cls->id = value_uint(ps, &v, attr);
		if (e->cls->id >= MAX_IDS)
			parse_fail(ps, "event id %llu too large", (unsigned long long)e->cls->id);
	} else if (!strcmp(attr, "stream_id")) {
		e->stream_id = value_uint(ps, &v, attr);
	}
}

static void parse_event_block(struct parser *ps)
{
	struct pending_event *e = arena_alloc(ps->arena, sizeof(*e));
	struct ctf_event_class *c = arena_alloc(ps->arena, sizeof(*c));
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
		parse_fail(ps, "event block without %s", c->name ? "an id" : "a name");
	}
}

static void parse_top(struct parser *ps)
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
				parse_fail(ps, "too many stream classes (at most %u)", MAX_SCLASSES);
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

/* ---- from TSDL to fixed offsets ---- */

struct wanted {
	const char *name;       /* without a leading '_' */
	struct fixed *dst;
	int is_array;           /* a byte array (uuid, procname) rather than an integer */
};

static const char *strip_underscore(const char *name)
{
	return name[0] == '_' && name[1] ? name + 1 : name;
}

static void fail_at_decl(struct parser *ps, const struct ctf_decl *d, const char *fmt, const char *a, const char *b)
{
	ps->tok.line = d->line;
	ps->tok.col = d->col;
	parse_fail(ps, fmt, a, b);
}

/*
 * Lay out a header or context struct whose fields all have a fixed size:
 * 0, or -1 when it has other fields (the trace is then decoded generically).
 */
static int lay_out(struct parser *ps, const struct ctf_type *t, const char *what,
		   struct wanted *w, unsigned nw, unsigned *size_out)
{
	unsigned off = 0, i, k;

	*size_out = 0;
	for (k = 0; k < nw; k++)
		w[k].dst->off = -1;
	if (!t)
		return 0;
	if (t->kind != TY_STRUCT)
		parse_fail(ps, "%s is not a structure", what);
	for (i = 0; i < t->ndecls; i++) {
		const struct ctf_decl *d = &t->decls[i];
		const struct ctf_type *ty = d->type;
		unsigned size;
		int is_array = 0;

		if (ty->kind == TY_ARRAY && ty->elem->kind == TY_INT && ty->elem->size == 8 &&
		    ty->length <= 4096) {
			size = (unsigned)ty->length;
			is_array = 1;
			ty = ty->elem;
		} else if (ty->kind == TY_INT && ty->size && ty->size % 8 == 0 && ty->size <= 64) {
			size = ty->size / 8;
		} else {
			return -1;
		}
		if (ty->align > 8 || ty->big_endian)
			return -1;
		for (k = 0; k < nw; k++) {
			if (strcmp(strip_underscore(d->name), w[k].name))
				continue;
			if (w[k].is_array != is_array)
				fail_at_decl(ps, d, "%s field '%s' has the wrong type", what, d->name);
			w[k].dst->off = (int)off;
			w[k].dst->size = size;
		}
		off += size;
		if (off > 65536)
			parse_fail(ps, "%s is too large", what);
	}
	*size_out = off;
	return 0;
}

static int is_uint(const struct ctf_type *t, unsigned bits)
{
	return t && t->kind == TY_INT && t->size == bits && !t->is_signed && !t->big_endian &&
	       t->align <= 8;
}

static const struct ctf_decl *member(const struct ctf_type *t, unsigned i, const char *name)
{
	if (!t || t->kind != TY_STRUCT || i >= t->ndecls || strcmp(t->decls[i].name, name))
		return NULL;
	return &t->decls[i];
}

/*
 * marktap's compact event header (mt_event.h), exactly:
 *   enum : uint8 { ..., extended = 255 } id;
 *   variant <id> { struct { uint24 timestamp (clock) } compact;
 *                  struct { uint16 id; uint64 timestamp (clock) } extended; } v;
 * Any other shape is read generically.
 */
static int is_compact_header(const struct ctf_type *eh)
{
	const struct ctf_decl *id = member(eh, 0, "id"), *v = member(eh, 1, "v"), *c, *x;
	const struct ctf_type *vt;
	const char *label;

	if (!id || !v || eh->ndecls != 2 || id->type->kind != TY_ENUM ||
	    !is_uint(id->type->elem, 8))
		return 0;
	label = ctf_enum_label(id->type, 255);
	vt = v->type;
	if (!label || strcmp(label, "extended") || vt->kind != TY_VARIANT || vt->ndecls != 2 ||
	    strcmp(vt->ref, "id"))
		return 0;
	c = &vt->decls[0];
	x = &vt->decls[1];
	if (strcmp(c->name, "compact") || strcmp(x->name, "extended"))
		return 0;
	for (unsigned k = 0; k < 255; k++) {   /* every other id is compact */
		label = ctf_enum_label(id->type, k);
		if (!label || strcmp(label, "compact"))
			return 0;
	}
	return c->type->ndecls == 1 && member(c->type, 0, "timestamp") &&
	       is_uint(c->type->decls[0].type, 24) && c->type->decls[0].type->maps_clock &&
	       x->type->ndecls == 2 && member(x->type, 0, "id") &&
	       is_uint(x->type->decls[0].type, 16) && member(x->type, 1, "timestamp") &&
	       is_uint(x->type->decls[1].type, 64) && x->type->decls[1].type->maps_clock;
}

static void build_layout(struct parser *ps, struct ctf_layout *L)
{
	struct wanted ph[] = {
		{ "magic", &L->magic, 0 }, { "uuid", &L->uuid, 1 },
		{ "stream_instance_id", &L->instance, 0 },
	};
	struct wanted pc[] = {
		{ "timestamp_begin", &L->ts_begin, 0 }, { "timestamp_end", &L->ts_end, 0 },
		{ "content_size", &L->content_size, 0 }, { "packet_size", &L->packet_size, 0 },
		{ "packet_seq_num", &L->seq, 0 }, { "events_discarded", &L->discarded, 0 },
		{ "cpu_id", &L->cpu_id, 0 },
	};
	struct wanted eh[] = { { "id", &L->ev_id, 0 }, { "timestamp", &L->ev_ts, 0 } };
	struct wanted ec[] = {
		{ "pid", &L->pid, 0 }, { "tid", &L->tid, 0 }, { "procname", &L->procname, 1 },
	};

	if (!ps->nstream_blocks)
		parse_fail(ps, "no stream block");
	ps->packet_context = ps->streams[0].pc;
	ps->event_header = ps->streams[0].eh;
	ps->event_context = ps->streams[0].ec;
	L->ph = ps->packet_header;
	L->pc = ps->packet_context;
	L->eh = ps->event_header;
	L->ec = ps->event_context;
	L->compact = ps->nstream_blocks == 1 && is_compact_header(ps->event_header);
	if (lay_out(ps, ps->packet_header, "packet.header", ph, 3, &L->ph_size) ||
	    lay_out(ps, ps->packet_context, "packet.context", pc, 7, &L->pc_size) ||
	    (!L->compact && lay_out(ps, ps->event_header, "event.header", eh, 2, &L->eh_size)) ||
	    lay_out(ps, ps->event_context, "event.context", ec, 3, &L->ec_size)) {
		L->generic = 1;
		L->compact = 0;
		return;
	}
	if (L->compact)
		L->eh_size = 0;     /* read_event reads it */
	if (L->magic.off >= 0 && L->magic.size != 4)
		parse_fail(ps, "packet.header magic is not 32 bits");
	if (L->uuid.off >= 0 && L->uuid.size != 16)
		parse_fail(ps, "packet.header uuid is not 16 bytes");
	if (L->ev_ts.off < 0 && !L->compact)
		parse_fail(ps, "event.header has no timestamp");
}

/* An 8-bit integer with an encoding: a character */
static int is_char_type(const struct ctf_type *t)
{
	return t->kind == TY_INT && t->size == 8 && t->encoded;
}

/* A top-level field of a generically decoded event: what it reads as. */
static void generic_field(struct ctf_field *f, const struct ctf_type *ty)
{
	f->size = 8;            /* values are widened (ctf_read.c) */
	switch (ty->kind) {
	case TY_ENUM:
		f->enum_type = ty;
		ty = ty->elem;
		/* fall through */
	case TY_INT:
		f->kind = CTF_INT;
		f->is_signed = (unsigned char)ty->is_signed;
		f->base = (unsigned char)ty->base;
		f->is_char = is_char_type(ty);
		break;
	case TY_FLOAT:
		f->kind = CTF_FLOAT;
		break;
	case TY_STRING:
		f->kind = CTF_STRING;
		break;
	case TY_ARRAY:
	case TY_SEQ:
		f->kind = is_char_type(ty->elem) ? CTF_STRING : CTF_TEXT;
		break;
	default:
		f->kind = CTF_TEXT;
	}
}

/* Floats the fixed path reads: IEEE binary32 and binary64. */
static int is_ieee(const struct ctf_type *ty)
{
	return (ty->exp_dig == 11 && ty->mant_dig == 53) || (ty->exp_dig == 8 && ty->mant_dig == 24);
}

/* An event's payload: integers, floats and strings, byte aligned (else generic). */
static void build_class(struct parser *ps, struct pending_event *e, int *generic)
{
	struct ctf_event_class *c = e->cls;
	const struct ctf_type *t = e->fields;
	struct ctf_field *f;
	unsigned i;

	if (!t)
		return;
	ps->tok.line = e->line;
	ps->tok.col = e->col;
	if (t->kind != TY_STRUCT)
		parse_fail(ps, "event '%s': fields is not a structure", c->name);
	c->type = t;
	f = arena_alloc(ps->arena, (t->ndecls ? t->ndecls : 1) * sizeof(*f));
	memset(f, 0, (t->ndecls ? t->ndecls : 1) * sizeof(*f));
	for (i = 0; i < t->ndecls; i++) {
		const struct ctf_decl *d = &t->decls[i];
		const struct ctf_type *ty = d->type;

		f[i].name = strip_underscore(d->name);
		f[i].name_len = (unsigned)strlen(f[i].name);
		f[i].base = 10;
		if (ty->kind == TY_INT && (ty->size == 8 || ty->size == 16 || ty->size == 32 || ty->size == 64)) {
			f[i].kind = CTF_INT;
			f[i].size = (unsigned char)(ty->size / 8);
			f[i].is_signed = (unsigned char)ty->is_signed;
			f[i].base = (unsigned char)ty->base;
			f[i].is_char = ty->size == 8 && ty->encoded;
		} else if (ty->kind == TY_FLOAT && is_ieee(ty)) {
			f[i].kind = CTF_FLOAT;
			f[i].size = ty->exp_dig == 11 ? 8 : 4;
		} else if (ty->kind == TY_STRING) {
			f[i].kind = CTF_STRING;
		} else {
			*generic = 1;
		}
		if (ty->align > 8 || ty->big_endian)
			*generic = 1;
		if (ty->kind == TY_FLOAT && !is_ieee(ty))
			fail_at_decl(ps, d, "event '%s' field '%s': unsupported float (IEEE binary32 and binary64 only)",
				     c->name, d->name);
	}
	c->fields = f;
	c->nfields = t->ndecls;
}

/* Once one part needs the generic decoder, every class's fields read as it does. */
static void make_generic(struct ctf_trace *t)
{
	unsigned i, k;

	t->layout->generic = 1;
	for (i = 0; i < t->nclasses; i++) {
		struct ctf_event_class *c = t->class_list[i];
		struct ctf_field *f = (struct ctf_field *)c->fields;
		for (k = 0; k < c->nfields; k++)
			generic_field(&f[k], c->type->decls[k].type);
	}
}

/* The stream class an event belongs to: by its stream_id, or the only one. */
static struct ctf_sclass *event_sclass(struct parser *ps, struct ctf_layout *L, struct pending_event *e)
{
	for (unsigned k = 0; k < L->nsc; k++)
		if (L->nsc == 1 || L->sc[k].id == (e->stream_id == UINT64_MAX ? 0 : e->stream_id))
			return &L->sc[k];
	ps->tok.line = e->line;
	ps->tok.col = e->col;
	parse_fail(ps, "event '%s': no stream class %llu", e->cls->name,
		   (unsigned long long)(e->stream_id == UINT64_MAX ? 0 : e->stream_id));
}

/* Each stream class's events by id (ids are per stream class). */
static void index_classes(struct parser *ps, struct ctf_layout *L)
{
	struct pending_event *e;

	L->nsc = ps->nstream_blocks;
	L->sc = arena_alloc(ps->arena, L->nsc * sizeof(*L->sc));
	memset(L->sc, 0, L->nsc * sizeof(*L->sc));
	for (unsigned k = 0; k < L->nsc; k++) {
		L->sc[k].id = ps->streams[k].id;
		L->sc[k].pc = ps->streams[k].pc;
		L->sc[k].eh = ps->streams[k].eh;
		L->sc[k].ec = ps->streams[k].ec;
		for (unsigned j = 0; j < k; j++)
			if (L->sc[j].id == L->sc[k].id)
				parse_fail(ps, "two stream classes with id %llu", (unsigned long long)L->sc[k].id);
	}
	for (e = ps->events; e; e = e->next) {
		struct ctf_sclass *sc = event_sclass(ps, L, e);
		if (e->cls->id + 1 > sc->nids)
			sc->nids = e->cls->id + 1;
	}
	{
		uint64_t slots = 0;
		for (unsigned k = 0; k < L->nsc; k++)
			slots += L->sc[k].nids;
		if (slots > 2 * MAX_IDS)
			parse_fail(ps, "event ids too large over the stream classes (%llu slots)",
				   (unsigned long long)slots);
	}
	for (unsigned k = 0; k < L->nsc; k++) {
		L->sc[k].classes = arena_alloc(ps->arena, (L->sc[k].nids + 1) * sizeof(*L->sc[k].classes));
		memset(L->sc[k].classes, 0, (L->sc[k].nids + 1) * sizeof(*L->sc[k].classes));
	}
	for (e = ps->events; e; e = e->next) {
		struct ctf_sclass *sc = event_sclass(ps, L, e);
		if (sc->classes[e->cls->id]) {
			ps->tok.line = e->line;
			ps->tok.col = e->col;
			parse_fail(ps, "two events with id %llu ('%s' and '%s')", (unsigned long long)e->cls->id,
				   sc->classes[e->cls->id]->name, e->cls->name);
		}
		sc->classes[e->cls->id] = e->cls;
	}
}

/* The thread events of a marktap trace, if it declares them as libmarktap
 * writes them: an integer pid and a string name. */
static void find_thread_class(struct ctf_trace *t)
{
	unsigned i;

	for (i = 0; i < t->nclasses; i++) {
		const struct ctf_event_class *c = t->class_list[i];
		int pid, name;

		if (strcmp(c->name, "marktap_statedump:thread"))
			continue;
		pid = ctf_class_field(c, "pid");
		name = ctf_class_field(c, "name");
		if (pid >= 0 && name >= 0 && c->fields[pid].kind == CTF_INT &&
		    c->fields[name].kind == CTF_STRING) {
			t->thread_class = c;
			t->thread_pid = pid;
			t->thread_name = name;
		}
	}
}

static void build_trace(struct parser *ps)
{
	struct ctf_trace *t = ps->trace;
	struct pending_event *e;
	unsigned n = 0;
	int generic = 0;

	t->layout = arena_alloc(ps->arena, sizeof(*t->layout));
	memset(t->layout, 0, sizeof(*t->layout));
	build_layout(ps, t->layout);
	if (!t->freq)
		t->freq = 1000000000;
	/* unsigned: absurd offsets wrap instead of overflowing */
	t->offset_ns = (int64_t)((uint64_t)ps->offset_s * 1000000000u +
		(uint64_t)((unsigned __int128)ps->offset_cycles * 1000000000u / t->freq));
	for (e = ps->events; e; e = e->next) {
		build_class(ps, e, &generic);
		e->cls->name_len = (unsigned)strlen(e->cls->name);
		if (e->cls->nfields > t->max_fields)
			t->max_fields = e->cls->nfields;
		n++;
	}
	index_classes(ps, t->layout);
	/* the fixed layout reads stream class 0 only */
	t->classes = t->layout->sc[0].classes;
	t->nids = t->layout->sc[0].nids;
	t->class_list = arena_alloc(ps->arena, (n + 1) * sizeof(*t->class_list));
	t->nclasses = n;
	n = 0;
	for (e = ps->events; e; e = e->next) {
		e->cls->index = n;
		t->class_list[n++] = e->cls;
	}
	if (generic || t->layout->generic || t->layout->nsc > 1)
		make_generic(t);
	find_thread_class(t);
}

const char *ctf_enum_label(const struct ctf_type *t, uint64_t v)
{
	int is_signed = t->elem->is_signed;
	unsigned i;

	for (i = 0; i < t->nmaps; i++) {
		const struct ctf_mapping *m = &t->maps[i];
		if (is_signed ? (int64_t)v >= m->lo && (int64_t)v <= m->hi
			      : v >= (uint64_t)m->lo && v <= (uint64_t)m->hi)
			return m->label;
	}
	return NULL;
}

/*
 * Packetized metadata (LTTng's): packets of a 37-byte header (magic
 * 0x75D11D57, uuid, checksum, content_size and packet_size in bits, then
 * compression, encryption and checksum schemes and the version, all 0
 * but the version) and text.  The text of all packets, or NULL with err.
 */
#define MD_MAGIC 0x75D11D57u
#define MD_HEADER 37

static char *depacketize(const char *path, const unsigned char *p, size_t len,
			 size_t *out_len, struct ctf_err *err)
{
	char *text = malloc(len + 1);
	size_t off = 0, n = 0;

	if (!text)
		abort();
	while (off < len) {
		uint32_t magic, content, packet;

		if (len - off < MD_HEADER) {
			ctf_set_err(err, "%s: byte %zu: truncated metadata packet header (%zu bytes left)", path, off, len - off);
			goto fail;
		}
		memcpy(&magic, p + off, 4);
		memcpy(&content, p + off + 24, 4);
		memcpy(&packet, p + off + 28, 4);
		if (magic != MD_MAGIC) {
			ctf_set_err(err, "%s: byte %zu: bad metadata packet magic 0x%08x (expected 0x75d11d57)", path, off, magic);
			goto fail;
		}
		if (p[off + 32] || p[off + 33] || p[off + 34]) {
			ctf_set_err(err, "%s: byte %zu: compressed, encrypted or checksummed metadata is not supported", path, off);
			goto fail;
		}
		if (content % 8 || packet % 8 || content / 8 < MD_HEADER || content > packet ||
		    packet / 8 > len - off) {
			ctf_set_err(err, "%s: byte %zu: bad metadata packet sizes (content %u, packet %u bits; %zu bytes left)",
				    path, off, content, packet, len - off);
			goto fail;
		}
		memcpy(text + n, p + off + MD_HEADER, content / 8 - MD_HEADER);
		n += content / 8 - MD_HEADER;
		off += packet / 8;
	}
	text[n] = '\0';
	*out_len = n;
	return text;
fail:
	free(text);
	return NULL;
}

struct ctf_trace *ctf_trace_parse(const char *path, const char *name,
				  const char *text, size_t len, struct ctf_err *err)
{
	struct ctf_arena *arena = NULL;
	struct ctf_trace *volatile t;
	struct parser *ps = calloc(1, sizeof(*ps));

	if (!ps)
		abort();
	if (len >= 4 && (unsigned char)text[0] == 0x57 && (unsigned char)text[1] == 0x1d &&
	    (unsigned char)text[2] == 0xd1 && (unsigned char)text[3] == 0x75) {
		ps->plain = depacketize(path, (const unsigned char *)text, len, &len, err);
		if (!ps->plain) {
			free(ps);
			return NULL;
		}
		text = ps->plain;
	}
	t = arena_alloc(&arena, sizeof(*t));
	memset(t, 0, sizeof(*t));
	/* for messages and listings: printable (a directory's name is its maker's) */
	t->path = arena_alloc(&arena, 4 * strlen(path) + 1);
	ctf_printable((char *)t->path, path, strlen(path));
	t->name = arena_alloc(&arena, 4 * strlen(name) + 1);
	ctf_printable((char *)t->name, name, strlen(name));
	ps->path = path;
	ps->p = ps->line_start = text;
	ps->end = text + len;
	ps->line = 1;
	ps->arena = &arena;
	ps->err = err;
	ps->trace = t;
	ps->events_tail = &ps->events;
	ps->streams = arena_alloc(&arena, MAX_SCLASSES * sizeof(*ps->streams));
	memset(ps->streams, 0, MAX_SCLASSES * sizeof(*ps->streams));
	if (setjmp(ps->fail)) {
		arena_free(arena);
		free(ps->plain);
		free(ps);
		return NULL;
	}
	parse_top(ps);
	ps->tok.line = ps->line;
	ps->tok.col = 1;
	build_trace(ps);
	t->arena = arena;
	free(ps->plain);
	free(ps);
	return t;
}

void ctf_trace_free(struct ctf_trace *t)
{
	if (t) {
		free(t->threads);
		arena_free(t->arena);
	}
}

