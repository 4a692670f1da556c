/* mt_lua_fp.c - stap's floating point tapset (fp_add, fp_to_string...).
 *
 * stap keeps an IEEE 754 double in a long (its bits) and works on it with
 * a software float library, for the kernel has no FPU to lend.  Here the
 * bits go through C's doubles: the same arithmetic, correctly rounded.
 * marktap.ko's Lua has no floats at all: these functions exist in user
 * space only, and the tapset (tapsets/floatingpoint.stp) says so in
 * kernel handlers.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mt_lua_int.h"

static double fp_arg(lua_State *L, int idx)
{
	uint64_t bits = (uint64_t)luaL_checkinteger(L, idx);
	double d;

	memcpy(&d, &bits, sizeof d);
	return d;
}

static int push_fp(lua_State *L, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	lua_pushinteger(L, (lua_Integer)bits);
	return 1;
}

static int rt_fp_add(lua_State *L) { return push_fp(L, fp_arg(L, 1) + fp_arg(L, 2)); }
static int rt_fp_sub(lua_State *L) { return push_fp(L, fp_arg(L, 1) - fp_arg(L, 2)); }
static int rt_fp_mul(lua_State *L) { return push_fp(L, fp_arg(L, 1) * fp_arg(L, 2)); }
/* IEEE's division: by zero an infinity (or a NaN for 0/0), no error */
static int rt_fp_div(lua_State *L) { return push_fp(L, fp_arg(L, 1) / fp_arg(L, 2)); }
/* IEEE's remainder (the quotient rounded to even), as softfloat's f64_rem,
 * not C's fmod */
static int rt_fp_rem(lua_State *L) { return push_fp(L, remainder(fp_arg(L, 1), fp_arg(L, 2))); }
static int rt_fp_sqrt(lua_State *L) { return push_fp(L, sqrt(fp_arg(L, 1))); }
static int rt_long_to_fp(lua_State *L) { return push_fp(L, (double)luaL_checkinteger(L, 1)); }

/* the low 32 bits as a float, widened */
static int rt_fp32_to_fp64(lua_State *L)
{
	uint32_t bits = (uint32_t)luaL_checkinteger(L, 1);
	float f;

	memcpy(&f, &bits, sizeof f);
	return push_fp(L, (double)f);
}

/* fp_eq, fp_le, fp_lt: 1 or 0; a NaN compares false */
static int rt_fp_cmp(lua_State *L)
{
	double a = fp_arg(L, 1), b = fp_arg(L, 2);
	const char *op = luaL_checkstring(L, 3);

	lua_pushinteger(L, op[0] == '=' ? a == b : op[1] == '=' ? a <= b : a < b);
	return 1;
}

/*
 * fp_to_long(fp, mode): rounded to an integer as softfloat's modes are
 * numbered: 0 to nearest, ties to even; 1 toward zero; 2 down; 3 up;
 * 4 to nearest, ties away from zero; 6 to odd (toward zero, then the
 * lowest bit set if anything was dropped).  Out of range saturates, and
 * a NaN gives the largest long, as softfloat's x86 conventions.
 */
static int rt_fp_to_long(lua_State *L)
{
	double d = fp_arg(L, 1), r;
	lua_Integer mode = luaL_checkinteger(L, 2);

	switch (mode) {
	case 0: r = nearbyint(d); break;   /* the default rounding: ties to even */
	case 1: r = trunc(d); break;
	case 2: r = floor(d); break;
	case 3: r = ceil(d); break;
	case 4: r = round(d); break;
	case 6: r = trunc(d); break;
	default: return mt_raisef(L, 0, "fp_to_long: rounding mode %lld is not 0 to 4 or 6", (long long)mode);
	}
	if (isnan(d) || r >= 9223372036854775808.0) {
		lua_pushinteger(L, INT64_MAX);
		return 1;
	}
	if (r < -9223372036854775808.0) {
		lua_pushinteger(L, INT64_MIN);
		return 1;
	}
	int64_t v = (int64_t)r;
	if (mode == 6 && r != d)
		v |= 1;
	lua_pushinteger(L, v);
	return 1;
}

/* fp_to_string(fp, precision): decimal with precision digits after the
 * point (at least one, as stap's); the last one rounded */
static int rt_fp_to_string(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	double d = fp_arg(L, 1);
	lua_Integer prec = luaL_checkinteger(L, 2);
	char buf[512];
	int n;

	if (prec < 1)
		prec = 1;
	if (prec > 100)
		prec = 100;
	n = snprintf(buf, sizeof buf, "%.*f", (int)prec, d);
	mt_push_trunc(L, mt, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	return 1;
}

/* string_to_fp(s): [+-]digits[.digits][(e|E)[+-]digits], any part of it
 * empty ("" and "." are 0), nothing else: stap's grammar; anything else
 * is stap's "invalid format" error */
static int rt_string_to_fp(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len), *p = s;
	char norm[600];
	size_t n = 0;

	if (len > 500)
		return mt_raisef(L, 0, "invalid format");
	if (*p == '-' || *p == '+')
		norm[n++] = *p++;
	norm[n++] = '0';   /* "", ".5", "-." */
	while (*p >= '0' && *p <= '9')
		norm[n++] = *p++;
	if (*p == '.')
		norm[n++] = *p++;
	while (*p >= '0' && *p <= '9')
		norm[n++] = *p++;
	if (*p == 'e' || *p == 'E') {
		norm[n++] = *p++;
		if (*p == '-' || *p == '+')
			norm[n++] = *p++;
		norm[n++] = '0';
		while (*p >= '0' && *p <= '9')
			norm[n++] = *p++;
	}
	if ((size_t)(p - s) != len)
		return mt_raisef(L, 0, "invalid format");
	norm[n] = '\0';
	double d;
	if (sscanf(norm, "%lf", &d) != 1)
		return mt_raisef(L, 0, "invalid format");
	return push_fp(L, d);
}

static const luaL_Reg fp_funcs[] = {
	{"fp_add", rt_fp_add}, {"fp_sub", rt_fp_sub}, {"fp_mul", rt_fp_mul}, {"fp_div", rt_fp_div},
	{"fp_rem", rt_fp_rem}, {"fp_sqrt", rt_fp_sqrt}, {"fp_cmp", rt_fp_cmp},
	{"long_to_fp", rt_long_to_fp}, {"fp32_to_fp64", rt_fp32_to_fp64},
	{"fp_to_long", rt_fp_to_long}, {"fp_to_string", rt_fp_to_string},
	{"string_to_fp", rt_string_to_fp},
	{NULL, NULL}
};

void mt_open_fp(lua_State *L, struct mt_lua *mt)
{
	lua_pushlightuserdata(L, mt);
	luaL_setfuncs(L, fp_funcs, 1);
}
