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

static int rt_strtol(lua_State *L)
{
	const char *s = luaL_checkstring(L, 1);
	lua_Integer base = luaL_checkinteger(L, 2);
	if (base != 0 && (base < 2 || base > 36))
		return mt_raisef(L, 3, "strtol: invalid base %" PRId64, (int64_t)base);
	/* Parsed by hand so that out-of-range values wrap like stap's longs
	 * instead of saturating like strtoll(). */
	while (isspace((unsigned char)*s))
		s++;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if ((base == 0 || base == 16) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	    && isxdigit((unsigned char)s[2])) {
		s += 2;
		base = 16;
	} else if (base == 0) {
		base = s[0] == '0' ? 8 : 10;
	}
	uint64_t v = 0;
	for (;; s++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'z')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'Z')
			d = *s - 'A' + 10;
		else
			break;
		if (d >= base)
			break;
		v = v * (uint64_t)base + (uint64_t)d;
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

/* Appends the escaped form of byte c; returns how many bytes it took. */
static size_t escape(char *out, unsigned char c)
{
	static const char from[] = "\a\b\f\n\r\t\v\"\\", to[] = "abfnrtv\"\\";
	const char *e = c ? memchr(from, c, sizeof from - 1) : NULL;
	if (e) {
		out[0] = '\\';
		out[1] = to[e - from];
		return 2;
	}
	if (isprint(c) && c < 128) {
		out[0] = (char)c;
		return 1;
	}
	out[0] = '\\';
	out[1] = (char)('0' + (c >> 6));
	out[2] = (char)('0' + ((c >> 3) & 7));
	out[3] = (char)('0' + (c & 7));
	return 4;
}

/* text_strn(s, len, quoted): escaped s of at most len bytes (0: MAXSTRINGLEN);
 * quoted adds the quotes, and "..." after them when s did not fit. */
static void text_str(lua_State *L, struct mt_lua *mt, const char *s, size_t n,
		     size_t limit, bool quoted)
{
	size_t max = mt_strmax(mt);
	if (limit == 0 || limit > max)
		limit = max;
	struct mt_buf *b = &mt->scratch;
	b->len = 0;
	if (quoted)
		mt_buf_addc(b, '"');
	size_t room = limit - (quoted ? (limit >= 2 ? 2 : limit) : 0);
	bool cut = false;
	for (size_t i = 0; i < n; i++) {
		char e[4];
		size_t k = escape(e, (unsigned char)s[i]);
		if (b->len - quoted + k > room) {
			cut = true;
			break;
		}
		mt_buf_add(b, e, k);
	}
	if (quoted)
		mt_buf_addc(b, '"');
	if (quoted && cut)
		mt_buf_add(b, "...", 3);
	mt_push_trunc(L, mt, b->data, b->len);
}

static int rt_text_str(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	text_str(L, MT_SELF(L), s, n, 0, false);
	return 1;
}

static int rt_text_strn(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	lua_Integer len = luaL_checkinteger(L, 2);
	lua_Integer quoted = luaL_optinteger(L, 3, 0);
	text_str(L, MT_SELF(L), s, n, len < 0 ? 0 : (size_t)len, quoted != 0);
	return 1;
}

static int rt_stringat(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	lua_Integer pos = luaL_checkinteger(L, 2);
	if (pos < 0 || (uint64_t)pos >= n)
		return mt_raisef(L, 3, "Position out of range");
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
	{"regmatch", rt_regmatch}, {"matched", rt_matched},
	{NULL, NULL}
};

void mt_open_str(lua_State *L, struct mt_lua *mt)
{
	lua_pushlightuserdata(L, mt);
	luaL_setfuncs(L, str_funcs, 1);
}
