/* mt_lua_str.c - stap's string operators and string tapset functions.
 *
 * stap strings are C strings of at most MAXSTRINGLEN - 1 bytes: every
 * string made here is cut to that length.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mt_lua_int.h"

static int rt_cat(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t na, nb, max = mt_strmax(mt);
	const char *a = luaL_checklstring(L, 1, &na);
	const char *b = luaL_checklstring(L, 2, &nb);
	if (na >= max) {
		mt_push_trunc(L, mt, a, na);
		return 1;
	}
	if (na + nb > max)
		nb = max - na;
	luaL_Buffer lb;
	char *p = luaL_buffinitsize(L, &lb, na + nb);
	memcpy(p, a, na);
	memcpy(p + na, b, nb);
	luaL_pushresultsize(&lb, na + nb);
	return 1;
}

static int rt_trunc(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	if (n <= mt_strmax(mt))
		lua_settop(L, 1);
	else
		mt_push_trunc(L, mt, s, n);
	return 1;
}

static int rt_strcmp(lua_State *L)
{
	size_t na, nb;
	const char *a = luaL_checklstring(L, 1, &na);
	const char *b = luaL_checklstring(L, 2, &nb);
	int r = memcmp(a, b, na < nb ? na : nb);
	if (r == 0)
		r = na < nb ? -1 : na > nb;
	lua_pushinteger(L, r < 0 ? -1 : r > 0);
	return 1;
}

static int rt_tostr(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	if (lua_type(L, 1) == LUA_TSTRING) {
		lua_settop(L, 1);
		return 1;
	}
	mt->scratch.len = 0;
	mt_buf_value(L, 1, &mt->scratch);
	mt_push_trunc(L, mt, mt->scratch.data, mt->scratch.len);
	return 1;
}

static int rt_strlen(lua_State *L)
{
	size_t n;
	luaL_checklstring(L, 1, &n);
	lua_pushinteger(L, (lua_Integer)n);
	return 1;
}

static int rt_substr(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	lua_Integer start = luaL_checkinteger(L, 2), len = luaL_checkinteger(L, 3);
	if (start < 0 || len <= 0 || (uint64_t)start >= n) {
		lua_pushliteral(L, "");
		return 1;
	}
	size_t left = n - (size_t)start;
	lua_pushlstring(L, s + start, (uint64_t)len < left ? (size_t)len : left);
	return 1;
}

static int rt_isinstr(lua_State *L)
{
	size_t n1, n2;
	const char *s1 = luaL_checklstring(L, 1, &n1);
	const char *s2 = luaL_checklstring(L, 2, &n2);
	lua_pushinteger(L, memmem(s1, n1, s2, n2) != NULL);
	return 1;
}

/* strtol(str, base) as stap's runtime computes it (the kernel's
 * simple_strtol): no leading blanks, a '-' but no '+', base 0 meaning
 * 0x.. hexadecimal, 0.. octal or decimal, an 0x after base 16 skipped;
 * digits 0-9 and a-f only (whatever the base), up to the first that is not
 * below the base; the base taken as an unsigned 32-bit number; the value
 * wrapping at 64 bits. */
static int rt_strtol(lua_State *L)
{
	const char *s = luaL_checkstring(L, 1);
	uint32_t base = (uint32_t)luaL_checkinteger(L, 2);
	bool neg = *s == '-';
	uint64_t v = 0;

	s += neg;
	if (base == 0)
		base = s[0] != '0' ? 10 : tolower((unsigned char)s[1]) == 'x' && isxdigit((unsigned char)s[2]) ? 16 : 8;
	if (base == 16 && s[0] == '0' && tolower((unsigned char)s[1]) == 'x')
		s += 2;
	for (;; s++) {
		uint32_t d;
		if (*s >= '0' && *s <= '9')
			d = (uint32_t)(*s - '0');
		else if (tolower((unsigned char)*s) >= 'a' && tolower((unsigned char)*s) <= 'f')
			d = (uint32_t)(tolower((unsigned char)*s) - 'a' + 10);
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
	}
	lua_pushinteger(L, (lua_Integer)(neg ? 0 - v : v));
	return 1;
}

static int rt_str_replace(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t n, nold, nnew;
	const char *s = luaL_checklstring(L, 1, &n);
	const char *old = luaL_checklstring(L, 2, &nold);
	const char *new = luaL_checklstring(L, 3, &nnew);
	if (nold == 0) {
		lua_settop(L, 1);
		return 1;
	}
	struct mt_buf *b = &mt->scratch;
	b->len = 0;
	const char *p = s, *end = s + n, *hit;
	while ((hit = memmem(p, (size_t)(end - p), old, nold)) != NULL) {
		mt_buf_add(b, p, (size_t)(hit - p));
		mt_buf_add(b, new, nnew);
		p = hit + nold;
		if (b->len > mt_strmax(mt))
			break;
	}
	mt_buf_add(b, p, (size_t)(end - p));
	mt_push_trunc(L, mt, b->data ? b->data : "", b->len);
	return 1;
}

static int rt_tokenize(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t n, nd;
	const char *s = luaL_checklstring(L, 1, &n);
	const char *delim = luaL_checklstring(L, 2, &nd);
	if (n > 0) {
		char *copy = malloc(n);
		if (!copy)
			return luaL_error(L, "not enough memory");
		memcpy(copy, s, n);
		free(mt->tok_str);
		mt->tok_str = copy;
		mt->tok_len = n;
		mt->tok_pos = 0;
	}
	if (!mt->tok_str) {
		lua_pushliteral(L, "");
		return 1;
	}
	const char *t = mt->tok_str;
	size_t pos = mt->tok_pos;
	/* Tokens are never empty: skip runs of delimiters. */
	while (pos < mt->tok_len && memchr(delim, t[pos], nd))
		pos++;
	size_t start = pos;
	while (pos < mt->tok_len && !memchr(delim, t[pos], nd))
		pos++;
	lua_pushlstring(L, t + start, pos - start);
	mt->tok_pos = pos < mt->tok_len ? pos + 1 : pos;
	return 1;
}

/* The character at s (avail bytes readable) as stap's runtime reads it: a
 * UTF-8 sequence of RFC 3629 (shortest form, no surrogates, at most
 * U+10FFFF) is one code point; any other byte stands for itself.
 * Returns how many bytes it took. */
static size_t utf8_char(const unsigned char *s, size_t avail, uint32_t *cp)
{
	unsigned char b = s[0];
	size_t len, k;
	uint32_t c;

	*cp = b;
	if ((b & 0xE0) == 0xC0)
		len = 2, c = b & 0x1F;
	else if ((b & 0xF0) == 0xE0)
		len = 3, c = b & 0x0F;
	else if ((b & 0xF8) == 0xF0)
		len = 4, c = b & 0x07;
	else
		return 1;
	if (len > avail)
		return 1;
	for (k = 1; k < len; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return 1;
		c = c << 6 | (s[k] & 0x3F);
	}
	if (c < 0x80 || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		return 1;
	*cp = c;
	return len;
}

/* The printable form of character c (from utf8_char; wide: it took more
 * than one byte) in out: itself, a C escape, \ooo for other bytes,
 * \uXXXX or \UXXXXXXXX for code points.  Returns its length. */
static size_t escape(char *out, uint32_t c, bool wide)
{
	static const char from[] = "\a\b\f\n\r\t\v\"\\", to[] = "abfnrtv\"\\";
	const char *e = c && c < 128 ? memchr(from, (int)c, sizeof from - 1) : NULL;
	size_t n;

	if (wide) {
		n = c <= 0xFFFF ? 6 : 10;
		out[0] = '\\';
		out[1] = c <= 0xFFFF ? 'u' : 'U';
		for (size_t k = n - 1; k >= 2; k--, c >>= 4)
			out[k] = "0123456789ABCDEF"[c & 0xF];
		return n;
	}
	if (e) {
		out[0] = '\\';
		out[1] = to[e - from];
		return 2;
	}
	if (c < 128 && isprint((int)c)) {
		out[0] = (char)c;
		return 1;
	}
	out[0] = '\\';
	out[1] = (char)('0' + ((c >> 6) & 3));
	out[2] = (char)('0' + ((c >> 3) & 7));
	out[3] = (char)('0' + (c & 7));
	return 4;
}

/* stap's text_str family: s escaped into at most outlen bytes (0 or too
 * big: MAXSTRINGLEN-1), reading at most inlen bytes of s (the same
 * bound), stopping at a NUL.  quoted: inside quotes, the room being
 * max(outlen, 5) - 2; a string cut short then ends '"...' so that the
 * whole is exactly that long, an escape cut by it left out whole.  A
 * buffer (stap's *_buffer_quoted) does not stop at a NUL: it is escaped. */
static void text_str(lua_State *L, struct mt_lua *mt, const char *s, size_t n,
		     lua_Integer inlen, lua_Integer outlen, bool quoted, bool buffer)
{
	const lua_Integer max = (lua_Integer)mt_strmax(mt);
	struct mt_buf *b = &mt->scratch;
	size_t i = 0, avail, esc = SIZE_MAX, esc_len = 0;
	uint32_t c = 0;
	bool cut = false;

	if (inlen <= 0 || inlen > max)
		inlen = max;
	if (outlen <= 0 || outlen > max)
		outlen = max;
	b->len = 0;
	if (quoted) {
		outlen = (outlen < 5 ? 5 : outlen) - 2;
		mt_buf_addc(b, '"');
	}
	avail = n < (size_t)inlen ? n : (size_t)inlen;
	while (i < avail) {
		char e[10];
		size_t len = utf8_char((const unsigned char *)s + i, avail - i, &c), k;
		if (c == 0 && !buffer)
			break;
		if (outlen <= 0) {
			cut = true;
			break;
		}
		k = escape(e, c, len > 1);
		if (k > 1 && esc == SIZE_MAX && outlen - 3 < (lua_Integer)k)
			esc = b->len, esc_len = k;
		if (outlen < (lua_Integer)k) {
			cut = (lua_Integer)(i + len) < inlen;
			break;
		}
		mt_buf_add(b, e, k);
		outlen -= (lua_Integer)k;
		i += len;
	}
	if (quoted && cut) {
		size_t end = b->len - 3 + (size_t)outlen;
		if (esc != SIZE_MAX && esc < end && end < esc + esc_len)
			end = esc;
		b->len = end;
		mt_buf_add(b, "\"...", 4);
	} else if (quoted) {
		mt_buf_addc(b, '"');
	}
	mt_push_trunc(L, mt, b->data, b->len);
}

static int rt_text_str(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	text_str(L, MT_SELF(L), s, n, 0, 0, false, false);
	return 1;
}

/* text_strn(s, len, quoted); string_quoted(s) is text_strn(s, 0, 1) */
static int rt_text_strn(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	lua_Integer len = luaL_optinteger(L, 2, 0);
	lua_Integer quoted = luaL_optinteger(L, 3, 0);
	text_str(L, MT_SELF(L), s, n, 0, len, quoted != 0, false);
	return 1;
}

/* text_buf(s, outlen): the bytes of s, NULs too, quoted into at most
 * outlen bytes (stap's user_buffer_quoted, kernel_buffer_quoted) */
static int rt_text_buf(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	lua_Integer outlen = luaL_optinteger(L, 2, 0);
	text_str(L, MT_SELF(L), s, n, (lua_Integer)n, outlen, true, true);
	return 1;
}

static int rt_stringat(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	lua_Integer pos = luaL_checkinteger(L, 2);
	if (pos < 0 || (uint64_t)pos >= n)
		return mt_raisef(L, 3, "Position out of bounds");
	lua_pushinteger(L, (unsigned char)s[pos]);
	return 1;
}

/* ---- regular expressions (=~, !~, matched) ---- */

static regex_t *compiled(lua_State *L, struct mt_lua *mt, const char *pattern)
{
	int i;
	for (i = 0; i < mt->re_cache_n; i++)
		if (strcmp(mt->re_cache[i].pattern, pattern) == 0)
			break;
	if (i == mt->re_cache_n) {
		regex_t re;
		int rc = regcomp(&re, pattern, REG_EXTENDED);
		if (rc != 0) {
			char why[128];
			regerror(rc, &re, why, sizeof why);
			mt_raisef(L, 3, "invalid regular expression '%s': %s", pattern, why);
		}
		char *copy = strdup(pattern);
		if (!copy) {
			regfree(&re);
			luaL_error(L, "not enough memory");
		}
		if (mt->re_cache_n == (int)(sizeof mt->re_cache / sizeof mt->re_cache[0])) {
			struct mt_re_cache *last = &mt->re_cache[--mt->re_cache_n];
			free(last->pattern);
			regfree(&last->re);
		}
		i = mt->re_cache_n++;
		mt->re_cache[i].pattern = copy;
		mt->re_cache[i].re = re;
	}
	/* Most recently used first. */
	struct mt_re_cache hit = mt->re_cache[i];
	memmove(&mt->re_cache[1], &mt->re_cache[0], (size_t)i * sizeof hit);
	mt->re_cache[0] = hit;
	return &mt->re_cache[0].re;
}

static int rt_regmatch(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	const char *s = luaL_checkstring(L, 1);
	const char *pattern = luaL_checkstring(L, 2);
	regex_t *re = compiled(L, mt, pattern);
	regmatch_t m[10];
	size_t nm = re->re_nsub + 1 < 10 ? re->re_nsub + 1 : 10;
	if (regexec(re, s, nm, m, 0) != 0) {
		lua_pushinteger(L, 0);
		return 1;
	}
	char *copy = strdup(s);
	if (!copy)
		return luaL_error(L, "not enough memory");
	free(mt->re_subject);
	mt->re_subject = copy;
	memcpy(mt->re_match, m, sizeof m);
	mt->re_nmatch = nm;
	mt->re_groups = re->re_nsub + 1;
	mt->re_valid = true;
	lua_pushinteger(L, 1);
	return 1;
}

static int rt_matched(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	lua_Integer n = luaL_checkinteger(L, 1);
	if (!mt->re_valid)
		return mt_raisef(L, 2, "matched(): no successful regular expression match");
	if (n < 0 || (size_t)n >= mt->re_nmatch || mt->re_match[n].rm_so < 0) {
		lua_pushliteral(L, "");
		return 1;
	}
	lua_pushlstring(L, mt->re_subject + mt->re_match[n].rm_so,
			(size_t)(mt->re_match[n].rm_eo - mt->re_match[n].rm_so));
	return 1;
}

/* ngroups(): the groups of the last successful match's regexp, matched or
 * not, the whole match counted (stap's: "a|(b)" has 2) */
static int rt_ngroups(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	if (!mt->re_valid)
		return mt_raisef(L, 1, "ngroups(): no successful regular expression match");
	lua_pushinteger(L, (lua_Integer)mt->re_groups);
	return 1;
}

void mt_str_free(struct mt_lua *mt)
{
	for (int i = 0; i < mt->re_cache_n; i++) {
		free(mt->re_cache[i].pattern);
		regfree(&mt->re_cache[i].re);
	}
	mt->re_cache_n = 0;
	free(mt->re_subject);
	free(mt->tok_str);
	mt->re_subject = mt->tok_str = NULL;
}

static const luaL_Reg str_funcs[] = {
	{"cat", rt_cat}, {"trunc", rt_trunc}, {"strcmp", rt_strcmp}, {"tostr", rt_tostr},
	{"strlen", rt_strlen}, {"substr", rt_substr}, {"isinstr", rt_isinstr},
	{"strtol", rt_strtol}, {"str_replace", rt_str_replace}, {"tokenize", rt_tokenize},
	{"text_str", rt_text_str}, {"text_strn", rt_text_strn}, {"stringat", rt_stringat},
	{"text_buf", rt_text_buf},
	{"regmatch", rt_regmatch}, {"matched", rt_matched}, {"ngroups", rt_ngroups},
	{NULL, NULL}
};

void mt_open_str(lua_State *L, struct mt_lua *mt)
{
	lua_pushlightuserdata(L, mt);
	luaL_setfuncs(L, str_funcs, 1);
}
