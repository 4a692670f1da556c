/* Lua includes <errno.h>: see mt_lua_kernel.h */
#include "mt_lua_kernel.h"
