/* Lua includes <time.h>: see mt_lua_kernel.h */
#include "mt_lua_kernel.h"
