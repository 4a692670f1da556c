/* mt_lua_base.c - what every part of the Lua runtime uses: growable
 * buffers, the handler output's flush, MAXSTRINGLEN truncation, and stap's
 * errors as Lua error objects (see mt_lua.c for how they travel). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_lua_int.h"

/* ---- addresses ---- */

void mt_lua_push_addrs(lua_State *L, const uint64_t *addrs, size_t n)
{
	luaL_Buffer b;
	char one[24];

	luaL_buffinit(L, &b);
	for (size_t i = 0; i < n; i++) {
		snprintf(one, sizeof(one), "%s0x%" PRIx64, i ? " " : "", addrs[i]);
		luaL_addstring(&b, one);
	}
	luaL_pushresult(&b);
}

/* ---- buffers ---- */

int mt_buf_reserve(struct mt_buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

void mt_buf_add(struct mt_buf *b, const char *s, size_t n)
{
	if (n == 0 || mt_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

void mt_buf_addc(struct mt_buf *b, char c)
{
	mt_buf_add(b, &c, 1);
}

void mt_buf_fill(struct mt_buf *b, char c, size_t n)
{
	if (n == 0 || mt_buf_reserve(b, n))
		return;
	memset(b->data + b->len, c, n);
	b->len += n;
}

/* ---- output ---- */

void mt_lua_flush(struct mt_lua *mt)
{
	if (mt->out.len == 0)
		return;
	mt->o.write(mt->o.ctx, mt->out.data, mt->out.len);
	mt->out.len = 0;
}

void mt_out_maybe_flush(struct mt_lua *mt)
{
	if (mt->out.len >= MT_OUT_FLUSH_AT)
		mt_lua_flush(mt);
}

/* ---- strings ---- */

size_t mt_strmax(struct mt_lua *mt)
{
	return (size_t)mt->o.maxstringlen - 1;
}

void mt_push_trunc(lua_State *L, struct mt_lua *mt, const char *s, size_t n)
{
	size_t max = mt_strmax(mt);
	lua_pushlstring(L, s, n > max ? max : n);
}

void mt_buf_value(lua_State *L, int idx, struct mt_buf *b)
{
	if (lua_isinteger(L, idx)) {
		char num[24];
		int n = snprintf(num, sizeof num, "%" PRId64, (int64_t)lua_tointeger(L, idx));
		mt_buf_add(b, num, (size_t)n);
	} else {
		size_t n;
		const char *s = luaL_tolstring(L, idx, &n);
		mt_buf_add(b, s, n);
		lua_pop(L, 1);
	}
}

/* ---- errors ---- */

bool mt_is_error_object(lua_State *L, int idx)
{
	bool yes = false;
	if (lua_type(L, idx) == LUA_TTABLE && lua_getmetatable(L, idx)) {
		luaL_getmetatable(L, MT_ERROR_MT);
		yes = lua_rawequal(L, -1, -2);
		lua_pop(L, 2);
	}
	return yes;
}

/* Pushes the line map's location of the innermost frame of the loaded
 * chunk, or nil.  Used when an error carries no explicit location. */
static void push_mapped_loc(lua_State *L, struct mt_lua *mt)
{
	lua_Debug ar;
	if (mt->linemap_ref == LUA_NOREF || !mt->chunksource[0]) {
		lua_pushnil(L);
		return;
	}
	for (int level = 0; lua_getstack(L, level, &ar); level++) {
		if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
			continue;
		if (strcmp(ar.source, mt->chunksource) != 0)
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, mt->linemap_ref);
		lua_rawgeti(L, -1, ar.currentline);
		lua_remove(L, -2);
		if (!lua_isnil(L, -1))
			return;
		lua_pop(L, 1);
	}
	lua_pushnil(L);
}

/* Pushes a new error object {msg, loc, fatal}. */
void mt_push_error(lua_State *L, struct mt_lua *mt, const char *msg, size_t msglen,
		       int loc_idx, bool fatal)
{
	if (loc_idx)
		loc_idx = lua_absindex(L, loc_idx);
	lua_createtable(L, 0, 3);
	lua_pushlstring(L, msg, msglen);
	lua_setfield(L, -2, "msg");
	if (loc_idx && lua_type(L, loc_idx) == LUA_TSTRING)
		lua_pushvalue(L, loc_idx);
	else
		push_mapped_loc(L, mt);
	lua_setfield(L, -2, "loc");
	lua_pushboolean(L, fatal);
	lua_setfield(L, -2, "fatal");
	luaL_setmetatable(L, MT_ERROR_MT);
}

int mt_raise(lua_State *L, struct mt_lua *mt, const char *msg, int loc_idx, bool fatal)
{
	mt_push_error(L, mt, msg, strlen(msg), loc_idx, fatal);
	return lua_error(L);
}

int mt_raisef(lua_State *L, int loc_idx, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return mt_raise(L, MT_SELF(L), msg, loc_idx, false);
}

/* Formats the error value at idx as stap prints it, without "ERROR: ". */
void mt_error_text(lua_State *L, int idx, char *buf, size_t size)
{
	idx = lua_absindex(L, idx);
	if (mt_is_error_object(L, idx)) {
		lua_getfield(L, idx, "msg");
		lua_getfield(L, idx, "loc");
		const char *msg = lua_tostring(L, -2), *loc = lua_tostring(L, -1);
		if (loc)
			snprintf(buf, size, "%s near %s", msg ? msg : "?", loc);
		else
			snprintf(buf, size, "%s", msg ? msg : "?");
		lua_pop(L, 2);
	} else {
		const char *s = lua_tostring(L, idx);
		snprintf(buf, size, "%s", s ? s : "(error object is not a string)");
	}
}
