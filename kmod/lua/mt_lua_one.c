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
 * The list is Lua's files of Kbuild's MT_LUA_OBJS (prepare-lua.sh puts
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
