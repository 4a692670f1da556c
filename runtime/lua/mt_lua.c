/* mt_lua.c - the state of a translated script: creation, loading, running
 * handlers with stap's limits, errors and output.
 *
 * Errors travel as Lua errors whose value is an "error object", a table
 *   { msg = "division by 0", loc = "operator '/' at t.stp:3:12", fatal = bool }
 * so try/catch (rt.catch) can give the script the bare message and the
 * host can print stap's "ERROR: msg near loc" once, at the end of the hit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <lualib.h>

#include "mt_lua_int.h"
#include "mt_event.h"
#include "mt_rt_lua.h"   /* generated from mt_rt.lua: mt_rt_lua_source */

#define MT_MSGH_INDEX 1

/* ---- sinks ---- */

static void default_write(void *ctx, const char *buf, size_t n)
{
	fwrite(buf, 1, n, stdout);
	fflush(stdout);
}

static void default_error(void *ctx, const char *line)
{
	fprintf(stderr, "%s\n", line);
}

static void diag(struct mt_lua *mt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diag(struct mt_lua *mt, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	mt->o.error(mt->o.ctx, line);
}

static int error_tostring(lua_State *L)
{
	char buf[1024];
	mt_error_text(L, 1, buf, sizeof buf);
	lua_pushstring(L, buf);
	return 1;
}

/* Message handler of every protected call: turns Lua's own errors (a
 * translator bug, out of memory in a table...) into error objects, while the
 * stack still shows where they happened. */
static int msgh(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	if (mt_is_error_object(L, 1)) {
		lua_settop(L, 1);
		return 1;
	}
	size_t n;
	const char *s = luaL_tolstring(L, 1, &n);
	mt_push_error(L, mt, s, n, 0, false);
	return 1;
}

/* The count hook: the hit used its MAXACTION budget.  The hook then fires
 * at every instruction and raises the same error object again, so a
 * try/catch in the script cannot resume, and the location stays the first. */
static void action_hook(lua_State *L, lua_Debug *ar)
{
	struct mt_lua *mt = *(struct mt_lua **)lua_getextraspace(L);
	if (!mt->action_fired) {
		mt_push_error(L, mt, "MAXACTION exceeded", strlen("MAXACTION exceeded"), 0, true);
		lua_pushvalue(L, -1);
		lua_rawseti(L, LUA_REGISTRYINDEX, mt->action_err_ref);
		mt->action_fired = true;
		lua_sethook(L, action_hook, LUA_MASKCOUNT, 1);
	} else {
		lua_rawgeti(L, LUA_REGISTRYINDEX, mt->action_err_ref);
	}
	lua_error(L);
}

static void arm_budget(struct mt_lua *mt)
{
	mt->action_fired = false;
	if (mt->o.maxaction < 0 || mt->script_counts)
		return;
	mt->budget_armed = true;
	int64_t budget = mt->o.maxaction * mt->o.insns_per_action;
	if (mt->o.maxaction > INT_MAX / mt->o.insns_per_action)
		budget = INT_MAX;
	if (budget < 1)
		budget = 1;
	lua_sethook(mt->L, action_hook, LUA_MASKCOUNT, (int)budget);
}

static void disarm_budget(struct mt_lua *mt)
{
	lua_sethook(mt->L, NULL, 0, 0);
	mt->budget_armed = false;
}

/* ---- module functions: registration, limits, errors ---- */

static int rt_probe(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	const char *name = luaL_checkstring(L, 1);
	luaL_checktype(L, 2, LUA_TFUNCTION);
	bool always = false;
	if (lua_type(L, 3) == LUA_TTABLE) {
		lua_getfield(L, 3, "always");
		always = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, mt->names_ref);
	if (lua_getfield(L, -1, name) != LUA_TNIL)
		return luaL_error(L, "rt.probe: handler '%s' registered twice", name);
	lua_pop(L, 1);
	if (mt->nhandlers == mt->handlers_cap) {
		int cap = mt->handlers_cap ? 2 * mt->handlers_cap : 16;
		struct mt_handler *h = realloc(mt->handlers, (size_t)cap * sizeof *h);
		if (!h)
			return luaL_error(L, "not enough memory");
		mt->handlers = h;
		mt->handlers_cap = cap;
	}
	int id = mt->nhandlers;
	lua_pushinteger(L, id);
	lua_setfield(L, -2, name);
	lua_pushvalue(L, 2);
	mt->handlers[id].ref = luaL_ref(L, LUA_REGISTRYINDEX);
	mt->handlers[id].always = always;
	mt->nhandlers++;
	lua_pushinteger(L, id);
	return 1;
}

static int rt_linemap(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_unref(L, LUA_REGISTRYINDEX, mt->linemap_ref);
	lua_pushvalue(L, 1);
	mt->linemap_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	/* The map belongs to the chunk calling us. */
	lua_Debug ar;
	if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "S", &ar))
		snprintf(mt->chunksource, sizeof mt->chunksource, "%s", ar.source);
	return 0;
}

/* The script counts its own actions (cheaper than the count hook): the hook
 * is no longer set, and the script calls rt.maxaction() when its budget of
 * rt.MAXACTION runs out. */
static int rt_count_actions(lua_State *L)
{
	MT_SELF(L)->script_counts = lua_toboolean(L, 1);
	return 0;
}

static int rt_maxaction(lua_State *L)
{
	return mt_raise(L, MT_SELF(L), "MAXACTION exceeded", 1, true);
}

static int rt_nest(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	if (mt->nesting >= mt->o.maxnesting)
		return mt_raise(L, mt, "MAXNESTING exceeded", 1, false);
	mt->nesting++;
	return 0;
}

static int rt_unnest(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	if (mt->nesting > 0)
		mt->nesting--;
	return 0;
}

/* rt.nesting(): the depth; rt.nesting(d): back to d, as a try statement
 * is left by an error (the calls it unwound did not unnest) */
static int rt_nesting(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	if (lua_isnoneornil(L, 1)) {
		lua_pushinteger(L, mt->nesting);
		return 1;
	}
	lua_Integer d = luaL_checkinteger(L, 1);
	if (d >= 0 && d <= mt->nesting)
		mt->nesting = (int)d;
	return 0;
}

static int rt_error(lua_State *L)
{
	size_t n;
	const char *msg = luaL_checklstring(L, 1, &n);
	mt_push_error(L, MT_SELF(L), msg, n, 2, false);
	return lua_error(L);
}

static int rt_catch(lua_State *L)
{
	if (mt_is_error_object(L, 1)) {
		lua_getfield(L, 1, "fatal");
		if (lua_toboolean(L, -1)) {
			lua_settop(L, 1);
			return lua_error(L);
		}
		lua_getfield(L, 1, "msg");
		return 1;
	}
	luaL_tolstring(L, 1, NULL);
	return 1;
}

static int rt_exit(lua_State *L)
{
	mt_lua_request_exit(MT_SELF(L));
	return 0;
}

static int rt_stopping(lua_State *L)
{
	lua_pushboolean(L, MT_SELF(L)->stop != 0);
	return 1;
}

/* ---- integers ---- */

static int rt_div(lua_State *L)
{
	lua_Integer a = luaL_checkinteger(L, 1), b = luaL_checkinteger(L, 2);
	if (b == 0)
		return mt_raise(L, MT_SELF(L), "division by 0", 3, false);
	if (b == -1)   /* LLONG_MIN / -1 traps in C; stap's longs wrap */
		lua_pushinteger(L, (lua_Integer)(0 - (uint64_t)a));
	else
		lua_pushinteger(L, a / b);
	return 1;
}

static int rt_mod(lua_State *L)
{
	lua_Integer a = luaL_checkinteger(L, 1), b = luaL_checkinteger(L, 2);
	if (b == 0)
		return mt_raise(L, MT_SELF(L), "division by 0", 3, false);
	lua_pushinteger(L, b == -1 ? 0 : a % b);
	return 1;
}

static int rt_shl(lua_State *L)
{
	uint64_t a = (uint64_t)luaL_checkinteger(L, 1);
	unsigned n = (unsigned)luaL_checkinteger(L, 2) & 63;
	lua_pushinteger(L, (lua_Integer)(a << n));
	return 1;
}

static int rt_shr(lua_State *L)
{
	int64_t a = luaL_checkinteger(L, 1);
	unsigned n = (unsigned)luaL_checkinteger(L, 2) & 63;
	/* Arithmetic shift written without relying on implementation-defined >>. */
	uint64_t u = (uint64_t)a >> n;
	if (a < 0 && n)
		u |= ~(UINT64_MAX >> n);
	lua_pushinteger(L, (lua_Integer)u);
	return 1;
}

/* ---- output ---- */

static void add_args(lua_State *L, struct mt_buf *b, int first, const char *delim, size_t dlen)
{
	int top = lua_gettop(L);
	for (int i = first; i <= top; i++) {
		if (i > first && delim)
			mt_buf_add(b, delim, dlen);
		mt_buf_value(L, i, b);
	}
}

static int print_common(lua_State *L, bool delimited, bool newline, bool to_string)
{
	struct mt_lua *mt = MT_SELF(L);
	struct mt_buf *b = to_string ? &mt->scratch : &mt->out;
	size_t dlen = 0;
	const char *delim = delimited ? luaL_checklstring(L, 1, &dlen) : NULL;
	if (to_string)
		b->len = 0;
	add_args(L, b, delimited ? 2 : 1, delim, dlen);
	if (newline)
		mt_buf_addc(b, '\n');
	if (to_string) {
		mt_push_trunc(L, mt, b->data ? b->data : "", b->len);
		return 1;
	}
	mt_out_maybe_flush(mt);
	return 0;
}

static int rt_print(lua_State *L) { return print_common(L, false, false, false); }
static int rt_println(lua_State *L) { return print_common(L, false, true, false); }
static int rt_printd(lua_State *L) { return print_common(L, true, false, false); }
static int rt_printdln(lua_State *L) { return print_common(L, true, true, false); }
static int rt_sprint(lua_State *L) { return print_common(L, false, false, true); }
static int rt_sprintln(lua_State *L) { return print_common(L, false, true, true); }
static int rt_sprintd(lua_State *L) { return print_common(L, true, false, true); }
static int rt_sprintdln(lua_State *L) { return print_common(L, true, true, true); }

static int rt_log(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	mt_buf_add(&mt->out, s, n);
	if (n == 0 || s[n - 1] != '\n')
		mt_buf_addc(&mt->out, '\n');
	mt_lua_flush(mt);
	return 0;
}

static int rt_warn(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	const char *s = luaL_checkstring(L, 1);
	size_t n = strlen(s);
	diag(mt, "WARNING: %.*s", (int)(n && s[n - 1] == '\n' ? n - 1 : n), s);
	return 0;
}

static int rt_flush(lua_State *L)
{
	mt_lua_flush(MT_SELF(L));
	return 0;
}

static const luaL_Reg rt_funcs[] = {
	{"probe", rt_probe}, {"linemap", rt_linemap},
	{"count_actions", rt_count_actions}, {"maxaction", rt_maxaction},
	{"nest", rt_nest}, {"unnest", rt_unnest}, {"nesting", rt_nesting},
	{"error", rt_error}, {"catch", rt_catch},
	{"exit", rt_exit}, {"stopping", rt_stopping},
	{"div", rt_div}, {"mod", rt_mod}, {"shl", rt_shl}, {"shr", rt_shr},
	{"print", rt_print}, {"println", rt_println},
	{"printd", rt_printd}, {"printdln", rt_printdln},
	{"sprint", rt_sprint}, {"sprintln", rt_sprintln},
	{"sprintd", rt_sprintd}, {"sprintdln", rt_sprintdln},
	{"log", rt_log}, {"warn", rt_warn}, {"flush", rt_flush},
	{NULL, NULL}
};

/* ---- the state ---- */

static void fill_defaults(struct mt_lua_options *o)
{
	if (!o->maxmapentries) o->maxmapentries = 2048;
	if (o->maxstringlen <= 1) o->maxstringlen = 512;
	if (!o->maxaction) o->maxaction = 1000;
	if (!o->maxskipped) o->maxskipped = 100;
	if (!o->maxnesting) o->maxnesting = 10;
	if (!o->hist_elision) o->hist_elision = 2;
	else if (o->hist_elision == MT_LUA_HIST_ELISION_ZERO) o->hist_elision = 0;
	if (o->insns_per_action <= 0) o->insns_per_action = 16;
	if (!o->write) o->write = default_write;
	if (!o->error) o->error = default_error;
}

static void set_limit(lua_State *L, const char *name, int64_t v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, name);
}

/* `require` for states without the package library: only "mtrt". */
static int safe_require(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	if (strcmp(name, "mtrt") != 0)
		return luaL_error(L, "module '%s' not found (only 'mtrt' without -g)", name);
	lua_getglobal(L, "mtrt");
	return 1;
}

static void open_libs(struct mt_lua *mt)
{
	lua_State *L = mt->L;
	static const luaL_Reg libs[] = {
		{LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string},
		{LUA_TABLIBNAME, luaopen_table},
#ifndef MT_LUA_INTEGER_ONLY  /* a Lua whose numbers are integers has no math library */
		{LUA_MATHLIBNAME, luaopen_math},
#endif
		{LUA_UTF8LIBNAME, luaopen_utf8}, {NULL, NULL}
	};
#ifndef MT_LUA_INTEGER_ONLY
	if (mt->o.guru) {
		luaL_openlibs(L);
		return;
	}
#endif
	for (const luaL_Reg *l = libs; l->name; l++) {
		luaL_requiref(L, l->name, l->func, 1);
		lua_pop(L, 1);
	}
	/* Scripts must not read files or compile code behind the translator
	 * (-g keeps load and dofile; without a package library, require
	 * still finds mtrt). */
	static const char *const unsafe[] = {"dofile", "loadfile", "load", "require", NULL};
	for (const char *const *n = unsafe; *n && !mt->o.guru; n++) {
		lua_pushnil(L);
		lua_setglobal(L, *n);
	}
	lua_pushcfunction(L, safe_require);
	lua_setglobal(L, "require");
}

/* Runs inside lua_pcall: builds the module table "mtrt". */
static int open_module(lua_State *L)
{
	struct mt_lua *mt = lua_touserdata(L, 1);

	lua_pushlightuserdata(L, mt);
	lua_setfield(L, LUA_REGISTRYINDEX, "mtrt.self");
	luaL_newmetatable(L, MT_ERROR_MT);
	lua_pushcfunction(L, error_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	lua_newtable(L);
	mt->names_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pushboolean(L, 0);   /* a slot for the MAXACTION error of the hit */
	mt->action_err_ref = luaL_ref(L, LUA_REGISTRYINDEX);

	lua_newtable(L);   /* the module */
	lua_pushlightuserdata(L, mt);
	luaL_setfuncs(L, rt_funcs, 1);
	mt_open_fmt(L, mt);
	mt_open_str(L, mt);
	mt_open_ctx(L, mt);
	mt_open_fp(L, mt);
	set_limit(L, "MAXMAPENTRIES", mt->o.maxmapentries);
	set_limit(L, "MAXSTRINGLEN", mt->o.maxstringlen);
	set_limit(L, "MAXACTION", mt->o.maxaction);
	set_limit(L, "MAXNESTING", mt->o.maxnesting);
	set_limit(L, "MAXERRORS", mt->o.maxerrors);
	set_limit(L, "MAXSKIPPED", mt->o.maxskipped);
	set_limit(L, "HIST_ELISION", mt->o.hist_elision);

	/* The Lua half: maps, statistics, histograms. */
	if (luaL_loadbufferx(L, mt_rt_lua_source, strlen(mt_rt_lua_source), "=mtrt", "t"))
		return lua_error(L);
	lua_pushvalue(L, -2);
	lua_call(L, 1, 0);

	lua_pushvalue(L, -1);
	lua_setglobal(L, "mtrt");
	lua_pushvalue(L, -1);   /* for the host, whatever scripts do to globals */
	lua_setfield(L, LUA_REGISTRYINDEX, "mtrt.module");
	if (mt->o.guru) {
		luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
		lua_pushvalue(L, -2);
		lua_setfield(L, -2, "mtrt");
		lua_pop(L, 1);
	}
	return 0;
}

/* The allocator: realloc with a ceiling (maxmemory), so a script that
 * grows without bound fails with "out of memory" instead of exhausting the
 * traced program's memory. */
static void *mt_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct mt_lua *mt = ud;
	size_t old = ptr ? osize : 0;
	if (nsize == 0) {
		free(ptr);
		mt->mem_used -= old;
		return NULL;
	}
	if (mt->o.maxmemory > 0 && nsize > old
	    && mt->mem_used + (nsize - old) > (uint64_t)mt->o.maxmemory)
		return NULL;
	void *p = realloc(ptr, nsize);
	if (p)
		mt->mem_used = mt->mem_used - old + nsize;
	return p;
}

static int panic(lua_State *L)
{
	/* Only reached by an error outside any protected call: a bug here. */
	fprintf(stderr, "marktap: Lua runtime panic: %s\n", lua_tostring(L, -1));
	abort();
}

const char *const mt_lua_limit_names[] = {
	"MAXMAPENTRIES", "MAXSTRINGLEN", "MAXACTION", "MAXERRORS", "MAXSKIPPED", "MAXNESTING",
	"HIST_ELISION", NULL,
};

int mt_lua_option_set(struct mt_lua_options *o, const char *name, int64_t v)
{
	int64_t *const field[] = {
		&o->maxmapentries, &o->maxstringlen, &o->maxaction, &o->maxerrors, &o->maxskipped,
		&o->maxnesting, &o->hist_elision,
	};

	for (unsigned i = 0; mt_lua_limit_names[i]; i++)
		if (!strcasecmp(name, mt_lua_limit_names[i])) {
			/* stap's HIST_ELISION=0 marks every gap; our 0 means unset */
			*field[i] = field[i] == &o->hist_elision && v == 0 ? MT_LUA_HIST_ELISION_ZERO : v;
			return 0;
		}
	return -1;
}

struct mt_lua *mt_lua_new(const struct mt_lua_options *o)
{
	struct mt_lua *mt = calloc(1, sizeof *mt);
	if (!mt)
		return NULL;
	if (o)
		mt->o = *o;
	fill_defaults(&mt->o);
	if (mt->o.host)
		mt->host = *mt->o.host;
	mt_ctx_defaults(&mt->host);
	mt->linemap_ref = LUA_NOREF;
	mt->L = lua_newstate(mt_alloc, mt);
	if (!mt->L) {
		free(mt);
		return NULL;
	}
	lua_atpanic(mt->L, panic);
	*(struct mt_lua **)lua_getextraspace(mt->L) = mt;
	lua_gc(mt->L, LUA_GCGEN, 0, 0);   /* short pauses inside traced programs */
	open_libs(mt);
	lua_pushcfunction(mt->L, open_module);
	lua_pushlightuserdata(mt->L, mt);
	if (lua_pcall(mt->L, 1, 0, 0) != LUA_OK) {
		diag(mt, "ERROR: cannot set up the Lua runtime: %s", lua_tostring(mt->L, -1));
		mt_lua_free(mt);
		return NULL;
	}
	lua_settop(mt->L, 0);
	lua_pushlightuserdata(mt->L, mt);
	lua_pushcclosure(mt->L, msgh, 1);   /* MT_MSGH_INDEX */
	return mt;
}

void mt_lua_free(struct mt_lua *mt)
{
	if (!mt)
		return;
	mt_lua_flush(mt);
	if (mt->L)
		lua_close(mt->L);
	free(mt->handlers);
	mt_str_free(mt);
	free(mt->out.data);
	free(mt->scratch.data);
	free(mt);
}

lua_State *mt_lua_state(struct mt_lua *mt)
{
	return mt->L;
}

/* Protected call of the function below nargs arguments on the stack, with
 * the message handler (kept at stack index 1 for the life of the state, so
 * a hit pays no insertion for it) and the MAXACTION budget.  Leaves the
 * error value on the stack when it fails. */
static int protected_call(struct mt_lua *mt, int nargs, int nresults)
{
	mt->nesting = 0;
	mt->running = true;
	arm_budget(mt);
	int status = lua_pcall(mt->L, nargs, nresults, MT_MSGH_INDEX);
	if (mt->budget_armed)
		disarm_budget(mt);
	mt->running = false;
	return status;
}

int mt_lua_load(struct mt_lua *mt, const char *chunk, size_t len,
		const char *chunkname, char *err, size_t errlen)
{
	lua_State *L = mt->L;
	int top = lua_gettop(L);
	if (luaL_loadbufferx(L, chunk, len, chunkname, "t") != LUA_OK) {
		snprintf(err, errlen, "%s", lua_tostring(L, -1));
		lua_settop(L, top);
		return -1;
	}
	lua_Debug ar;
	lua_pushvalue(L, -1);
	if (lua_getinfo(L, ">S", &ar))
		snprintf(mt->chunksource, sizeof mt->chunksource, "%s", ar.source);
	/* No MAXACTION budget: the chunk's top level (marktap's own code)
	 * only defines handlers and globals, no statement of the script runs
	 * there, and a probe on every function of a library makes it tens of
	 * thousands of lines. */
	mt->nesting = 0;
	mt->running = true;
	int status = lua_pcall(L, 0, 0, MT_MSGH_INDEX);
	mt->running = false;
	mt_lua_flush(mt);
	if (status != LUA_OK) {
		if (status == LUA_ERRMEM)
			snprintf(err, errlen, "out of memory");
		else
			mt_error_text(L, -1, err, errlen);
		lua_settop(L, top);
		return -1;
	}
	lua_settop(L, top);
	return 0;
}

int mt_lua_handler(struct mt_lua *mt, const char *name)
{
	lua_State *L = mt->L;
	lua_rawgeti(L, LUA_REGISTRYINDEX, mt->names_ref);
	lua_getfield(L, -1, name);
	int id = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : -1;
	lua_pop(L, 2);
	return id;
}

const char *mt_lua_handler_name(struct mt_lua *mt, int id)
{
	lua_State *L = mt->L;
	const char *found = NULL;
	lua_rawgeti(L, LUA_REGISTRYINDEX, mt->names_ref);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (lua_tointeger(L, -1) == id && lua_type(L, -2) == LUA_TSTRING)
			found = lua_tostring(L, -2);   /* anchored in the names table */
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return found;
}

int mt_lua_handler_count(struct mt_lua *mt)
{
	return mt->nhandlers;
}

static void count_error(struct mt_lua *mt)
{
	mt->errors++;
	if (mt->o.maxerrors >= 0 && mt->errors > mt->o.maxerrors && !mt->stop)
		mt->stop = MT_LUA_STOP_ERRORS;
}

int mt_lua_run(struct mt_lua *mt, int id, int nargs)
{
	return mt_lua_run_results(mt, id, nargs, 0);
}

int mt_lua_run_results(struct mt_lua *mt, int id, int nargs, int nresults)
{
	lua_State *L = mt->L;
	int base = lua_gettop(L) - nargs;
	if (id < 0 || id >= mt->nhandlers || mt->running
	    || (mt->stop && !mt->handlers[id].always)) {
		lua_settop(L, base);
		return MT_LUA_SKIP;
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, mt->handlers[id].ref);
	if (nargs)
		lua_rotate(L, base + 1, 1);
	int status = protected_call(mt, nargs, nresults);
	/* stap flushes what the handler printed before reporting its error. */
	if (mt->out.len)
		mt_lua_flush(mt);
	if (status == LUA_OK)
		return MT_LUA_OK;
	char text[1024];
	if (status == LUA_ERRMEM)
		snprintf(text, sizeof text, "out of memory");
	else
		mt_error_text(L, -1, text, sizeof text);
	diag(mt, "ERROR: %s", text);
	count_error(mt);
	lua_settop(L, base);
	return MT_LUA_ERROR;
}

int mt_lua_stopping(struct mt_lua *mt)
{
	return mt->stop;
}

void mt_lua_request_exit(struct mt_lua *mt)
{
	if (!mt->stop)
		mt->stop = MT_LUA_STOP_EXIT;
}

void mt_lua_skipped(struct mt_lua *mt)
{
	mt->skips++;
	if (mt->skips > mt->o.maxskipped && mt->stop != MT_LUA_STOP_SKIPPED) {
		diag(mt, "ERROR: Skipped too many probes, check MAXSKIPPED or try again with stap -t for more details.");
		mt->stop = MT_LUA_STOP_SKIPPED;
	}
}

int64_t mt_lua_errors(struct mt_lua *mt)
{
	return mt->errors;
}

int64_t mt_lua_skips(struct mt_lua *mt)
{
	return mt->skips;
}

void mt_lua_summary(struct mt_lua *mt)
{
	mt_lua_flush(mt);
	if (mt->errors || mt->skips)
		diag(mt, "WARNING: Number of errors: %" PRId64 ", skipped probes: %" PRId64,
		     mt->errors, mt->skips);
}

/* ---- several states: globals by deltas (mt_rt.lua, "several states") ---- */

/* Push mtrt's function `name`; 0, or -1 (nothing pushed). */
static int push_sync_fn(lua_State *L, const char *name)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "mtrt.module");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return -1;
	}
	lua_getfield(L, -1, name);
	lua_remove(L, -2);
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1);
		return -1;
	}
	return 0;
}

int mt_lua_sync_take(struct mt_lua *mt, int mode, char **buf, size_t *len)
{
	lua_State *L = mt->L;
	int top = lua_gettop(L);
	/* mt_rt.lua: "F" every value; "A" a traced process's changes (added
	 * where applied); "P" marktap's new values (over the process's own) */
	const char *m = mode & MT_LUA_SYNC_FULL ? "F" : mode & MT_LUA_SYNC_RESET_STATS ? "A" : "P";
	const char *s;
	size_t n;

	*buf = NULL;
	*len = 0;
	if (mt->running || push_sync_fn(L, "_sync_take") < 0)
		return -1;
	lua_pushstring(L, m);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK || !(s = lua_tolstring(L, -1, &n))) {
		char text[512];
		mt_error_text(L, -1, text, sizeof text);
		diag(mt, "ERROR: sending the globals: %s", text);
		lua_settop(L, top);
		return -1;
	}
	/* an empty string: nothing changed */
	if (n > 0) {
		*buf = malloc(n);
		if (!*buf) {
			lua_settop(L, top);
			return -1;
		}
		memcpy(*buf, s, n);
		*len = n;
	}
	lua_settop(L, top);
	return 0;
}

/* (apply function, buffer, length): the apply function called with the
 * buffer as a Lua string. */
static int apply_protected(lua_State *L)
{
	const char *buf = lua_touserdata(L, 2);
	size_t len = (size_t)lua_tointeger(L, 3);

	lua_settop(L, 1);
	lua_pushlstring(L, buf, len);
	lua_call(L, 1, 0);
	return 0;
}

int mt_lua_sync_apply(struct mt_lua *mt, const char *buf, size_t len)
{
	lua_State *L = mt->L;
	int top = lua_gettop(L), rc = 0;

	if (!len)
		return 0;
	if (mt->running || push_sync_fn(L, "_sync_apply") < 0)
		return -1;
	/* the copy of the buffer is made inside the protected call: running
	 * out of memory there is an error, not a panic */
	lua_pushcfunction(L, apply_protected);
	lua_insert(L, -2);
	lua_pushlightuserdata(L, (void *)buf);
	lua_pushinteger(L, (lua_Integer)len);
	if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
		char text[1024];
		mt_error_text(L, -1, text, sizeof text);
		diag(mt, "ERROR: %s", text);
		if (mt_is_error_object(L, -1))
			count_error(mt);   /* a limit of the script: MAXMAPENTRIES... */
		else
			rc = -1;           /* a corrupt buffer */
	}
	lua_settop(L, top);
	return rc;
}

void mt_lua_sync_mark(struct mt_lua *mt)
{
	lua_State *L = mt->L;
	int top = lua_gettop(L);

	if (!mt->running && push_sync_fn(L, "_sync_mark") == 0)
		lua_pcall(L, 0, 0, 0);
	lua_settop(L, top);
}

/* ---- native handlers (mt_rt.lua, "native handlers") ---- */

const char *mt_lua_native_plan(struct mt_lua *mt, const char *handler)
{
	lua_State *L = mt->L;
	int top = lua_gettop(L);
	const char *plan = NULL;

	if (push_sync_fn(L, "native") == 0) {   /* rt.native exists: so does rt._natives */
		lua_getfield(L, LUA_REGISTRYINDEX, "mtrt.module");
		if (lua_getfield(L, -1, "_natives") == LUA_TTABLE &&
		    lua_getfield(L, -1, handler) == LUA_TSTRING)
			plan = lua_tostring(L, -1);   /* kept alive by rt._natives */
	}
	lua_settop(L, top);
	return plan;
}

/* (fold function, records, count, strings, count): the records and the
 * strings as Lua arrays. */
static int fold_protected(lua_State *L)
{
	const int64_t *rec = lua_touserdata(L, 2);
	lua_Integer n = lua_tointeger(L, 3);
	const char *const *strs = lua_touserdata(L, 4);
	lua_Integer ns = lua_tointeger(L, 5);

	lua_settop(L, 1);
	lua_createtable(L, (int)n, 0);
	for (lua_Integer i = 0; i < n; i++) {
		lua_pushinteger(L, (lua_Integer)rec[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_pushinteger(L, n);
	lua_createtable(L, (int)ns, 0);
	for (lua_Integer i = 0; i < ns; i++) {
		lua_pushstring(L, strs[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_call(L, 3, 0);
	return 0;
}

int mt_lua_native_fold(struct mt_lua *mt, const int64_t *rec, size_t n,
		       const char *const *strs, size_t nstrs)
{
	lua_State *L = mt->L;
	int top = lua_gettop(L), rc = 0, stopped = mt->stop;

	if (!n)
		return 0;
	if (mt->running || n > INT32_MAX || push_sync_fn(L, "_native_fold") < 0)
		return -1;
	lua_pushcfunction(L, fold_protected);
	lua_insert(L, -2);
	lua_pushlightuserdata(L, (void *)rec);
	lua_pushinteger(L, (lua_Integer)n);
	lua_pushlightuserdata(L, (void *)strs);
	lua_pushinteger(L, (lua_Integer)nstrs);
	if (lua_pcall(L, 5, 0, 0) != LUA_OK) {
		/* hits folded after the session stopped are not reported again */
		if (!stopped) {
			char text[1024];
			mt_error_text(L, -1, text, sizeof text);
			diag(mt, "ERROR: %s", text);
			count_error(mt);
		}
		rc = -1;
	}
	lua_settop(L, top);
	return rc;
}

void mt_lua_push_args(lua_State *L, const struct mt_format *f, const struct mt_args *a)
{
	for (unsigned i = 0; i < f->nfields; i++) {
		const struct mt_field *fld = &f->fields[i];
		if (fld->store == MT_ST_STRING)
			lua_pushlstring(L, a->v[i].str, a->slen[i] - 1);
		else if (fld->store == MT_ST_DOUBLE)
			lua_pushinteger(L, (lua_Integer)a->v[i].d);
		else
			lua_pushinteger(L, (lua_Integer)a->v[i].u);
	}
}
