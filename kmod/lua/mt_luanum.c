/*
 * mt_luanum.c - the integer "float" operations of our luaconf.h.
 *
 * Lua's core calls these where it would do floating-point arithmetic:
 * luai_numdiv/nummod/numpow (the '/', '%' and '^' of a float operand),
 * l_mathop(op) (constant folding, table hashing), lua_str2number
 * (numerals and tonumber() of strings that are not plain integers).
 * Compiled with the Lua core, in the kernel and in user space alike.
 */
#define LUA_CORE
#include "lprefix.h"
#include <limits.h>
#include "lua.h"
#include "ldebug.h"

/* '/': truncated like C and stap; zero and LLONG_MIN / -1 are errors. */
lua_Number mt_lua_numdiv(lua_State *L, lua_Number a, lua_Number b)
{
	if (b == 0)
		luaG_runerror(L, "division by zero");
	if (b == -1)
		return (lua_Number)(0ull - (unsigned long long)a);
	return a / b;
}

/* '//' of a float operand: floor division, as Lua's '//' of integers. */
lua_Number mt_lua_numidiv(lua_State *L, lua_Number a, lua_Number b)
{
	lua_Number q = mt_lua_numdiv(L, a, b);

	if (b != -1 && a % b != 0 && (a ^ b) < 0)
		q--;
	return q;
}

/* '%' of a float operand: Lua's floor modulo, as for its integers. */
lua_Number mt_lua_nummod(lua_State *L, lua_Number a, lua_Number b)
{
	lua_Number m;

	if (b == 0)
		luaG_runerror(L, "division by zero");
	if (b == -1)
		return 0;
	m = a % b;
	if (m != 0 && (m ^ b) < 0)
		m += b;
	return m;
}

lua_Number mt_lua_pow(lua_Number a, lua_Number b)
{
	unsigned long long r = 1, x = (unsigned long long)a;

	if (b < 0)  /* 1/a^-b truncated */
		return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
	while (b) {  /* wrapping, like stap's multiplication */
		if (b & 1)
			r *= x;
		x *= x;
		b >>= 1;
	}
	return (lua_Number)r;
}

lua_Number mt_lua_numpow(lua_State *L, lua_Number a, lua_Number b)
{
	if (b < 0 && a == 0)
		luaG_runerror(L, "division by zero");
	return mt_lua_pow(a, b);
}

lua_Number mt_lua_floor(lua_Number x) { return x; }
lua_Number mt_lua_fabs(lua_Number x) { return x < 0 ? (lua_Number)(0ull - (unsigned long long)x) : x; }
lua_Number mt_lua_fmod(lua_Number a, lua_Number b) { return (b == 0 || b == -1) ? 0 : a % b; }

lua_Number mt_lua_ldexp(lua_Number x, int e)
{
	if (e <= -64 || e >= 64)
		return e < 0 ? 0 : x == 0 ? 0 : x < 0 ? LUA_MININTEGER : LUA_MAXINTEGER;
	return e < 0 ? x >> -e : (lua_Number)((unsigned long long)x << e);
}

/* x = m * 2^e with m = x, e = 0: only table hashing asks (lua_Number keys) */
lua_Number mt_lua_frexp(lua_Number x, int *e)
{
	*e = 0;
	return x;
}

/*
 * A decimal integer with optional sign and surrounding spaces; *end
 * points past it, or at s when there is none or it overflows (Lua then
 * calls the numeral malformed, or tonumber() returns nil).  Lua reaches
 * this only for what its integer reader refused: fractions, exponents,
 * hexadecimal floats, decimal overflow.  All are refused here too.
 */
lua_Number mt_lua_str2number(const char *s, char **end)
{
	const char *p = s;
	unsigned long long v = 0;
	int neg = 0, digits = 0;

	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (ULLONG_MAX - d) / 10)
			break;
		v = v * 10 + d;
	}
	if (!digits || (*p >= '0' && *p <= '9') ||
	    v > (unsigned long long)LLONG_MAX + neg) {
		*end = (char *)s;
		return 0;
	}
	*end = (char *)p;
	return neg ? (lua_Number)(0ull - v) : (lua_Number)v;
}
