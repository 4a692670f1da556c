/*
 * mt_lua_one.c - Lua's core and the libraries marktap.ko uses, compiled
 * as one translation unit.
 *
 * Why: a kernel.mark handler's run is dozens of small calls between Lua's
 * files (the API into the tables, the VM into calls and strings).  Apart,
 * each is a real call and, under the kernel's speculation mitigations, a
 * return through the return thunk: a profile of a hit in the guest put a
 * sixth of its time in the thunks.  In one unit, with Lua's internal
 * functions static (MT_LUA_ONE in our luaconf.h), the compiler inlines
 * across files.  Lua's sources allow this: their internal names are
 * unique across files.
 *
 * The list is the core and the libraries prepare-lua.sh names (it puts
 * them next to this file), headers' users after what they use.
 */
#define MT_LUA_ONE 1
#define LUA_CORE
#define LUA_LIB

#include "lprefix.h"
#include "luaconf.h"

/* the core */
#include "lzio.c"
#include "lctype.c"
#include "lopcodes.c"
#include "lmem.c"
#include "lundump.c"
#include "ldump.c"
#include "lstate.c"
#include "lgc.c"
#include "llex.c"
#include "lcode.c"
#include "lparser.c"
#include "ldebug.c"
#include "lfunc.c"
#include "lobject.c"
#include "ltm.c"
#include "lstring.c"
#include "ltable.c"
#include "ldo.c"
#include "lvm.c"
#include "lapi.c"
#include "mt_luanum.c"

/* the libraries (no io, os, package, debug or math) */
#include "lauxlib.c"
#include "lbaselib.c"
#include "lstrlib.c"
#include "ltablib.c"

#include "mt_klua.h"   /* the host's declarations of what follows */

/*
 * The run budget's slice is spent (lvm.c's checks, the libraries'
 * charges, luaconf.h): the host gives the next slice, or the run's error
 * is raised here (with the place when a Lua function runs).
 */
void luai_budgetspent(lua_State *L)
{
	const char *why = mt_lua_budget_refill(L);

	if (why)
		luaG_runerror(L, "%s", why);
}

/*
 * A hit's protected call, in one frame: the caller has pushed the
 * function and nargs arguments, as for lua_pcall(L, nargs, 0, 0).  What lua_pcallk, luaD_pcall,
 * luaD_rawrunprotected and f_call do for a call without results,
 * message handler or continuation, with the call to the function direct
 * (theirs goes through a function pointer: in the kernel, a retpoline
 * thunk) and none of their frames.  LUA_OK with the stack as it was
 * before the function was pushed, or the
 * status with the error object on top, as luaD_pcall leaves it.
 */
int mt_lua_pcall_hit(lua_State *L, int nargs)
{
	StkId func = L->top - (nargs + 1);
	ptrdiff_t old_top = savestack(L, func);
	CallInfo *old_ci = L->ci;
	lu_byte old_allowhook = L->allowhook;
	l_uint32 old_nccalls = L->nCcalls;
	struct lua_longjmp lj;

	lj.status = LUA_OK;
	lj.previous = L->errorJmp;
	L->errorJmp = &lj;
	LUAI_TRY(L, &lj,
		luaD_callnoyield(L, func, 0);
	);
	L->errorJmp = lj.previous;
	L->nCcalls = old_nccalls;
	if (l_likely(lj.status == LUA_OK))
		return LUA_OK;
	L->ci = old_ci;
	L->allowhook = old_allowhook;
	lj.status = luaD_closeprotected(L, old_top, lj.status);
	luaD_seterrorobj(L, lj.status, restorestack(L, old_top));
	luaD_shrinkstack(L);
	return lj.status;
}

/* A hit's handler pushed: the stack grown for room values (as
 * lua_checkstack) and registry[ref] pushed (as lua_rawgeti), in one
 * call.  0, nothing pushed, when the stack cannot grow. */
int mt_lua_push_handler(lua_State *L, int ref, int room)
{
	if (!lua_checkstack(L, room))
		return 0;
	setobj2s(L, L->top, luaH_getint(hvalue(&G(L)->l_registry), ref));
	api_incr_top(L);
	return 1;
}

int mt_lua_push_name(lua_State *L, struct mt_lua_name *c, const char *name)
{
	unsigned long long w[2];

	memcpy(w, name, sizeof(w));
	if (l_likely(c->ts && w[0] == c->w[0] && w[1] == c->w[1])) {
		setsvalue2s(L, L->top, (TString *)c->ts);
		api_incr_top(L);
		return 1;
	}
	/* a miss: a new name (errors, out of memory, are the handler's) */
	if (c->ref <= 0) {
		lua_pushboolean(L, 0);
		c->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	c->ts = NULL;
	lua_pushlstring(L, name, strnlen(name, sizeof(w)));
	lua_pushvalue(L, -1);
	lua_rawseti(L, LUA_REGISTRYINDEX, c->ref);
	c->ts = tsvalue(s2v(L->top - 1));
	memcpy(c->w, w, sizeof(w));
	return 1;
}
