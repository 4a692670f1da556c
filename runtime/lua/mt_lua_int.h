/* mt_lua_int.h - what the files of the Lua runtime share. */
#ifndef MT_LUA_INT_H
#define MT_LUA_INT_H

#include <stdbool.h>
#include <regex.h>
#include <lauxlib.h>
#include "mt_lua.h"

/* the error objects' metatable; handler output is written at this size */
#define MT_ERROR_MT "mtrt.error"
#define MT_OUT_FLUSH_AT 8192

/* A growable byte buffer: handler output and sprintf results (mt_lua_base.c). */
struct mt_buf {
	char *data;
	size_t len, cap;
};

int mt_buf_reserve(struct mt_buf *b, size_t more);
void mt_buf_add(struct mt_buf *b, const char *s, size_t n);
void mt_buf_addc(struct mt_buf *b, char c);
void mt_buf_fill(struct mt_buf *b, char c, size_t n);

struct mt_lua {
	lua_State *L;
	struct mt_lua_options o;    /* with the defaults filled in */
	struct mt_lua_host host;    /* with the defaults filled in */
	struct mt_buf out;          /* handler output not yet written */
	struct mt_buf scratch;      /* sprintf and friends */
	struct mt_handler {
		int ref;            /* registry: the function */
		bool always;        /* runs when the session is stopping */
	} *handlers;
	int handlers_cap;
	int names_ref;              /* registry: name -> id */
	int linemap_ref;            /* registry: lua line -> loc, or LUA_NOREF */
	int action_err_ref;         /* registry slot: the MAXACTION error of this hit */
	bool action_fired;
	bool budget_armed;          /* the count hook is set */
	bool script_counts;         /* rt.count_actions(true): no count hook */
	int nhandlers;
	char chunksource[256];      /* source name of the loaded chunk, for the line map */
	int64_t errors, skips;
	uint64_t mem_used;          /* bytes allocated by the Lua state */
	int stop;                   /* MT_LUA_STOP_* or 0 */
	int64_t nesting;            /* script function depth in this hit */
	bool running;               /* inside mt_lua_run */
	/* tokenize() state: the string and the offset of the next token */
	char *tok_str;
	size_t tok_pos, tok_len;
	/* the last successful regmatch, for matched() and ngroups() */
	char *re_subject;
	regmatch_t re_match[10];
	size_t re_nmatch, re_groups;   /* re_groups: the regexp's groups, the whole one too */
	bool re_valid;
	/* a small cache of compiled regexps, most recent first */
	struct mt_re_cache {
		char *pattern;
		regex_t re;
	} re_cache[8];
	int re_cache_n;
};

/* The state that owns the calling C function (its first upvalue). */
#define MT_SELF(L) ((struct mt_lua *)lua_touserdata((L), lua_upvalueindex(1)))

/* Raise a stap error: msg, and the location string at stack index loc_idx
 * (0 or a nil there: found through the line map).  Never returns. */
int mt_raise(lua_State *L, struct mt_lua *mt, const char *msg, int loc_idx, bool fatal);
int mt_raisef(lua_State *L, int loc_idx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Error objects: is the value at idx one; push a new {msg, loc, fatal}
 * (loc from loc_idx, or the line map's); the text stap prints of one. */
bool mt_is_error_object(lua_State *L, int idx);
void mt_push_error(lua_State *L, struct mt_lua *mt, const char *msg, size_t msglen,
		   int loc_idx, bool fatal);
void mt_error_text(lua_State *L, int idx, char *buf, size_t size);

/* Push s truncated to MAXSTRINGLEN - 1 bytes. */
void mt_push_trunc(lua_State *L, struct mt_lua *mt, const char *s, size_t n);
size_t mt_strmax(struct mt_lua *mt);

/* Append v (long as decimal, string as is) to b. */
void mt_buf_value(lua_State *L, int idx, struct mt_buf *b);
void mt_out_maybe_flush(struct mt_lua *mt);

/* printf engine: formats the arguments at stack index first.. with fmt. */
int mt_format(lua_State *L, struct mt_lua *mt, struct mt_buf *b,
	      const char *fmt, size_t fmtlen, int first);

/* Register the functions of each part into the module table at -1
 * (each takes the state as upvalue 1). */
void mt_open_str(lua_State *L, struct mt_lua *mt);
void mt_open_ctx(lua_State *L, struct mt_lua *mt);
void mt_open_fp(lua_State *L, struct mt_lua *mt);     /* mt_lua_fp.c */
int mt_rt_ksym(lua_State *L);   /* mt_lua_ksym.c */
void mt_open_fmt(lua_State *L, struct mt_lua *mt);
void mt_ctx_defaults(struct mt_lua_host *h);
void mt_str_free(struct mt_lua *mt);

#endif
