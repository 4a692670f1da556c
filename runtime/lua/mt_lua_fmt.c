/* mt_lua_fmt.c - stap's printf: %d %i %u %x %X %o %p %s %c %b %m %M %%
 * with the flags "- + space # 0", width, precision and "*".
 *
 * The translator checks the argument types; here a wrong type or a missing
 * argument is still a clean stap error, never a crash.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <string.h>

#include "mt_lua_int.h"

enum {
	F_LEFT = 1,    /* '-' */
	F_PLUS = 2,    /* '+' */
	F_SPACE = 4,   /* ' ' */
	F_ALT = 8,     /* '#' */
	F_ZERO = 16,   /* '0' */
};

struct conv {
	unsigned flags;
	int64_t width;     /* -1: none */
	int64_t prec;      /* -1: none */
	char kind;
};

/* A field never grows beyond this: "%*d" with a huge width must not make
 * the traced process allocate gigabytes. */
#define MAX_FIELD 4096

static void pad(struct mt_buf *b, char c, int64_t n)
{
	if (n > 0)
		mt_buf_fill(b, c, (size_t)n);
}

/* Emits `body` (n bytes) right- or left-justified in the field. */
static void field(struct mt_buf *b, const struct conv *c, const char *body, size_t n)
{
	int64_t fill = c->width - (int64_t)n;
	if (!(c->flags & F_LEFT))
		pad(b, ' ', fill);
	mt_buf_add(b, body, n);
	if (c->flags & F_LEFT)
		pad(b, ' ', fill);
}

static void integer(struct mt_buf *b, const struct conv *c, int64_t v)
{
	char digits[70], *end = digits + sizeof digits, *p = end;
	const char *set = c->kind == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned base = 10;
	bool is_signed = c->kind == 'd' || c->kind == 'i';
	bool neg = is_signed && v < 0;
	uint64_t mag = neg ? 0 - (uint64_t)v : (uint64_t)v;
	const char *prefix = "";
	int64_t prec = c->prec;

	switch (c->kind) {
	case 'o': base = 8; break;
	case 'x': case 'X': base = 16; break;
	case 'p': base = 16; prefix = "0x"; prec = 16; break;
	}
	for (uint64_t m = mag; m; m /= base)
		*--p = set[m % base];
	if (mag == 0 && prec != 0)
		*--p = '0';
	int64_t ndigits = end - p;
	if (prec > MAX_FIELD)
		prec = MAX_FIELD;
	int64_t zeros = prec > ndigits ? prec - ndigits : 0;

	if (c->flags & F_ALT) {
		if (base == 16 && mag != 0 && c->kind != 'p')
			prefix = c->kind == 'X' ? "0X" : "0x";
		else if (base == 8 && zeros == 0 && (ndigits == 0 || *p != '0'))
			zeros = 1;
	}
	char sign = 0;
	if (neg)
		sign = '-';
	else if (is_signed && (c->flags & F_PLUS))
		sign = '+';
	else if (is_signed && (c->flags & F_SPACE))
		sign = ' ';

	int64_t len = (sign != 0) + (int64_t)strlen(prefix) + zeros + ndigits;
	int64_t fill = c->width > len ? c->width - len : 0;
	if ((c->flags & F_ZERO) && !(c->flags & F_LEFT) && c->prec < 0) {
		zeros += fill;   /* zero padding goes between sign/prefix and digits */
		fill = 0;
	}
	if (!(c->flags & F_LEFT))
		pad(b, ' ', fill);
	if (sign)
		mt_buf_addc(b, sign);
	mt_buf_add(b, prefix, strlen(prefix));
	pad(b, '0', zeros);
	mt_buf_add(b, p, (size_t)ndigits);
	if (c->flags & F_LEFT)
		pad(b, ' ', fill);
}

/* %b: the long's bytes as they are in memory; the width says how many. */
static void binary(struct mt_buf *b, const struct conv *c, int64_t v)
{
	int64_t n = c->width;
	if (n != 1 && n != 2 && n != 4 && n != 8)
		n = 8;
	union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; char bytes[8]; } u;
	switch (n) {
	case 1: u.u8 = (uint8_t)v; break;
	case 2: u.u16 = (uint16_t)v; break;
	case 4: u.u32 = (uint32_t)v; break;
	default: u.u64 = (uint64_t)v; break;
	}
	mt_buf_add(b, u.bytes, (size_t)n);
}

/* %m and %M: precision bytes (default 1) at the address v. */
static int memory(lua_State *L, struct mt_lua *mt, struct mt_buf *b, const struct conv *c,
		  int64_t v, int loc_idx)
{
	int64_t n = c->prec < 0 ? 1 : c->prec;
	if (n > MAX_FIELD)
		n = MAX_FIELD;
	char raw[MAX_FIELD], hex[2 * MAX_FIELD];
	if (n > 0 && mt->host.read_mem(mt->host.ctx, (uint64_t)v, raw, (size_t)n) != 0)
		return mt_raisef(L, loc_idx, "user string copy fault at 0x%" PRIx64, (uint64_t)v);
	if (c->kind == 'm') {
		field(b, c, raw, (size_t)n);
		return 0;
	}
	static const char set[] = "0123456789abcdef";
	for (int64_t i = 0; i < n; i++) {
		hex[2 * i] = set[(uint8_t)raw[i] >> 4];
		hex[2 * i + 1] = set[(uint8_t)raw[i] & 15];
	}
	field(b, c, hex, (size_t)(2 * n));
	return 0;
}

static int64_t number_arg(lua_State *L, int idx, int argno, char kind)
{
	int isnum = 0;
	int64_t v = 0;
	if (lua_type(L, idx) == LUA_TNUMBER)
		v = lua_tointegerx(L, idx, &isnum);
	if (!isnum)
		mt_raisef(L, 0, "printf: argument %d for %%%c is not a long but a %s",
			  argno, kind, luaL_typename(L, idx));
	return v;
}

/* Reads "*" or digits; *arg advances when "*" takes an argument. */
static int64_t read_count(lua_State *L, const char **f, const char *end, int *arg, int top,
			  bool *from_star)
{
	*from_star = false;
	if (*f < end && **f == '*') {
		(*f)++;
		*from_star = true;
		if (*arg > top)
			mt_raisef(L, 0, "printf: missing argument for '*'");
		int idx = (*arg)++;
		return number_arg(L, idx, idx, '*');
	}
	int64_t n = 0;
	while (*f < end && **f >= '0' && **f <= '9') {
		if (n < MAX_FIELD)
			n = n * 10 + (**f - '0');
		(*f)++;
	}
	return n;
}

static const char *parse_conv(lua_State *L, const char *f, const char *end,
			      struct conv *c, int *arg, int top)
{
	bool star;
	c->flags = 0;
	c->width = -1;
	c->prec = -1;
	for (; f < end; f++) {
		unsigned fl = *f == '-' ? F_LEFT : *f == '+' ? F_PLUS : *f == ' ' ? F_SPACE
			: *f == '#' ? F_ALT : *f == '0' ? F_ZERO : 0;
		if (!fl)
			break;
		c->flags |= fl;
	}
	if (f < end && (*f == '*' || (*f >= '1' && *f <= '9'))) {
		c->width = read_count(L, &f, end, arg, top, &star);
		if (c->width < 0) {   /* C: a negative "*" width means left-justified */
			c->flags |= F_LEFT;
			c->width = c->width == INT64_MIN ? MAX_FIELD : -c->width;
		}
		if (c->width > MAX_FIELD)
			c->width = MAX_FIELD;
	}
	if (f < end && *f == '.') {
		f++;
		c->prec = read_count(L, &f, end, arg, top, &star);
		if (c->prec < 0)
			c->prec = -1;
	}
	while (f < end && strchr("hlLqjzt", *f))
		f++;
	c->kind = f < end ? *f++ : 0;
	return f;
}

int mt_format(lua_State *L, struct mt_lua *mt, struct mt_buf *b,
	      const char *fmt, size_t fmtlen, int first)
{
	const char *f = fmt, *end = fmt + fmtlen;
	int top = lua_gettop(L), arg = first;
	while (f < end) {
		const char *pct = memchr(f, '%', (size_t)(end - f));
		if (!pct) {
			mt_buf_add(b, f, (size_t)(end - f));
			break;
		}
		mt_buf_add(b, f, (size_t)(pct - f));
		struct conv c;
		f = parse_conv(L, pct + 1, end, &c, &arg, top);
		if (c.kind == '%') {
			mt_buf_addc(b, '%');
			continue;
		}
		if (!c.kind || !strchr("diuxXopscbmM", c.kind))
			return mt_raisef(L, 0, "printf: unknown conversion '%.*s' in format",
					 (int)(f - pct), pct);
		if (arg > top)
			return mt_raisef(L, 0, "printf: too few arguments for '%.*s'",
					 (int)(f - pct), pct);
		int argno = arg - first + 1;
		int idx = arg++;
		if (c.kind == 's') {
			size_t n;
			const char *s;
			if (lua_type(L, idx) == LUA_TSTRING)
				s = lua_tolstring(L, idx, &n);
			else if (lua_isinteger(L, idx))
				s = lua_tolstring(L, idx, &n);   /* only ever a translator slip */
			else
				return mt_raisef(L, 0, "printf: argument %d for %%s is not a string but a %s",
						 argno, luaL_typename(L, idx));
			if (c.prec >= 0 && (size_t)c.prec < n)
				n = (size_t)c.prec;
			field(b, &c, s, n);
			continue;
		}
		int64_t v = number_arg(L, idx, argno, c.kind);
		switch (c.kind) {
		case 'c': {
			char ch = (char)v;
			field(b, &c, &ch, 1);
			break;
		}
		case 'b':
			binary(b, &c, v);
			break;
		case 'm': case 'M':
			memory(L, mt, b, &c, v, 0);
			break;
		default:
			integer(b, &c, v);
			break;
		}
	}
	return 0;
}

static int rt_printf(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t n;
	const char *fmt = luaL_checklstring(L, 1, &n);
	mt_format(L, mt, &mt->out, fmt, n, 2);
	mt_out_maybe_flush(mt);
	return 0;
}

static int rt_sprintf(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t n;
	const char *fmt = luaL_checklstring(L, 1, &n);
	mt->scratch.len = 0;
	mt_format(L, mt, &mt->scratch, fmt, n, 2);
	/* stap's strings are C strings: a %c of 0 ends the string there
	 * (printf writes the byte; sprintf's value stops at it) */
	const char *d = mt->scratch.data ? mt->scratch.data : "";
	const char *nul = memchr(d, '\0', mt->scratch.len);
	mt_push_trunc(L, mt, d, nul ? (size_t)(nul - d) : mt->scratch.len);
	return 1;
}

static const luaL_Reg fmt_funcs[] = {
	{"printf", rt_printf}, {"sprintf", rt_sprintf}, {NULL, NULL}
};

void mt_open_fmt(lua_State *L, struct mt_lua *mt)
{
	lua_pushlightuserdata(L, mt);
	luaL_setfuncs(L, fmt_funcs, 1);
}
