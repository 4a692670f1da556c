/* Lua includes <stdarg.h>: see mt_lua_kernel.h */
#include "mt_lua_kernel.h"
