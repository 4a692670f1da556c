/*
 * luaconf.h - Marktap's configuration of Lua 5.4: integer-only numbers.
 *
 * Put in place of Lua's own luaconf.h (prepare-lua.sh does it), this file
 * configures the Lua core for marktap.ko (__KERNEL__ defined) and for the
 * user-space build that tests the runtime against the same number model.
 * SystemTap's language has 64-bit integers and strings only, so Lua's
 * lua_Number is a long long too (as in NetBSD's kernel Lua and lunatik):
 * Lua keeps its two number subtypes, but a "float" is an integer; '/'
 * divides like '//' (an error on zero instead of inf), '^' is an integer
 * power, and nothing in the core compiles to a floating-point instruction
 * (built with the kernel's flags, any float left is a compile error).
 *
 * What the core still assumes about floats is mapped to our integer
 * routines (mt_luanum.c) through l_mathop() and the luai_num* operations;
 * the three places no configuration reaches are small patches (patches/).
 * Written for Lua 5.4.4; every name below is one the core expects here.
 */
#ifndef luaconf_h
#define luaconf_h

#ifdef __KERNEL__
#include "mt_lua_kernel.h"  /* the C library subset Lua's core needs */
#else
#include <limits.h>
#include <stddef.h>
#endif

#define MT_LUA_INTEGER_ONLY 1

/* --- platform ------------------------------------------------------- */

#define LUAI_IS32INT ((UINT_MAX >> 30) >= 3)

#if !defined(__KERNEL__) && defined(__linux__)
#define LUA_USE_POSIX
#endif

#define LUA_API extern
#define LUALIB_API LUA_API
#define LUAMOD_API LUA_API
#if defined(MT_LUA_ONE)
/* all of Lua in one unit (kmod/lua/mt_lua_one.c): internal functions and
   data are static, so the compiler can inline across Lua's files */
#define LUAI_FUNC static
#define LUAI_DDEC(dec) static dec
#define LUAI_DDEF static
#elif defined(__GNUC__) && !defined(__KERNEL__)
#define LUAI_FUNC __attribute__((visibility("hidden"))) extern
#define LUAI_DDEC(dec) LUAI_FUNC dec
#define LUAI_DDEF /* empty */
#else
#define LUAI_FUNC extern
#define LUAI_DDEC(dec) LUAI_FUNC dec
#define LUAI_DDEF /* empty */
#endif

#if defined(__GNUC__)
#define luai_likely(x) (__builtin_expect(((x) != 0), 1))
#define luai_unlikely(x) (__builtin_expect(((x) != 0), 0))
#else
#define luai_likely(x) (x)
#define luai_unlikely(x) (x)
#endif
#if defined(LUA_CORE) || defined(LUA_LIB)
#define l_likely(x) luai_likely(x)
#define l_unlikely(x) luai_unlikely(x)
#endif

/* --- integers: long long, as stap's longs ---------------------------- */

#define LUA_INTEGER long long
#define LUAI_UACINT LUA_INTEGER
#define LUA_INTEGER_FRMLEN "ll"
#define LUA_INTEGER_FMT "%" LUA_INTEGER_FRMLEN "d"
#define LUA_MAXINTEGER LLONG_MAX
#define LUA_MININTEGER LLONG_MIN
#define LUA_UNSIGNED unsigned LUA_INTEGER
#define LUA_MAXUNSIGNED ULLONG_MAX
#define lua_integer2str(s, sz, n) l_sprintf((s), sz, LUA_INTEGER_FMT, (LUAI_UACINT)(n))

/* --- "floats": integers as well -------------------------------------- */

#define LUA_NUMBER long long
#define LUAI_UACNUMBER LUA_NUMBER
#define LUA_NUMBER_FRMLEN "ll"
#define LUA_NUMBER_FMT "%" LUA_NUMBER_FRMLEN "d"
#define lua_number2str(s, sz, n) l_sprintf((s), sz, LUA_NUMBER_FMT, (LUAI_UACNUMBER)(n))
/* hexadecimal float formats (%a, %q of a float) print the integer */
#define lua_number2strx(L, b, sz, f, n) ((void)(L), l_sprintf((b), sz, LUA_NUMBER_FMT, (LUAI_UACNUMBER)(n)))
/* every "float" is integral and in range */
#define lua_numbertointeger(n, p) ((*(p) = (LUA_INTEGER)(n)), 1)

/* Properties of the float type the core asks about: a 64-bit mantissa
   (every integer is exact, so lvm.c's l_intfitsf test is always true). */
#define MT_LUA_NUM_MANT_DIG 64
#define MT_LUA_NUM_MAX_10_EXP 19
#define MT_LUA_NUM_DIG 19
#define l_floatatt(n) (MT_LUA_NUM_##n)

/* math functions the core calls: integer versions (mt_luanum.c) */
#define l_mathop(op) mt_lua_##op
#define l_floor(x) (x)

/* Numerals: decimal integers only (l_str2int took the others first: a
   numeral reaching here has a fraction or exponent, or overflows). */
#define lua_str2number(s, p) mt_lua_str2number((s), (p))
#define lua_strx2number(s, p) mt_lua_str2number((s), (p))
#define lua_getlocaledecpoint() '.'

struct lua_State;
LUAI_FUNC LUA_NUMBER mt_lua_str2number(const char *s, char **end);
LUAI_FUNC LUA_NUMBER mt_lua_numdiv(struct lua_State *L, LUA_NUMBER a, LUA_NUMBER b);
LUAI_FUNC LUA_NUMBER mt_lua_numidiv(struct lua_State *L, LUA_NUMBER a, LUA_NUMBER b);
LUAI_FUNC LUA_NUMBER mt_lua_nummod(struct lua_State *L, LUA_NUMBER a, LUA_NUMBER b);
LUAI_FUNC LUA_NUMBER mt_lua_numpow(struct lua_State *L, LUA_NUMBER a, LUA_NUMBER b);
LUAI_FUNC LUA_NUMBER mt_lua_floor(LUA_NUMBER x);
LUAI_FUNC LUA_NUMBER mt_lua_fabs(LUA_NUMBER x);
LUAI_FUNC LUA_NUMBER mt_lua_fmod(LUA_NUMBER a, LUA_NUMBER b);
LUAI_FUNC LUA_NUMBER mt_lua_ldexp(LUA_NUMBER x, int e);
LUAI_FUNC LUA_NUMBER mt_lua_frexp(LUA_NUMBER x, int *e);
LUAI_FUNC LUA_NUMBER mt_lua_pow(LUA_NUMBER a, LUA_NUMBER b);

/* The arithmetic: wrapping like stap's longs (no signed-overflow UB);
   division and modulo raise Lua errors on zero (and x86's idiv traps on
   LLONG_MIN / -1), '^' is an integer power. */
#define mt_lua_wrap(op, a, b) ((LUA_NUMBER)((LUA_UNSIGNED)(a) op (LUA_UNSIGNED)(b)))
#define luai_numadd(L, a, b) mt_lua_wrap(+, a, b)
#define luai_numsub(L, a, b) mt_lua_wrap(-, a, b)
#define luai_nummul(L, a, b) mt_lua_wrap(*, a, b)
#define luai_numunm(L, a) mt_lua_wrap(-, 0, a)
#define luai_numeq(a, b) ((a) == (b))
#define luai_numlt(a, b) ((a) < (b))
#define luai_numle(a, b) ((a) <= (b))
#define luai_numgt(a, b) ((a) > (b))
#define luai_numge(a, b) ((a) >= (b))
#define luai_numisnan(a) 0
#define luai_numdiv(L, a, b) mt_lua_numdiv((L), (a), (b))
#define luai_numidiv(L, a, b) mt_lua_numidiv((L), (a), (b))
#define luai_nummod(L, a, b, m) ((m) = mt_lua_nummod((L), (a), (b)))
#define luai_numpow(L, a, b) mt_lua_numpow((L), (a), (b))

/* --- the rest of Lua's configuration --------------------------------- */

#define l_sprintf(s, sz, f, ...) snprintf((s), (sz), f, __VA_ARGS__)
#define lua_pointer2str(buff, sz, p) l_sprintf((buff), sz, "%p", (p))
#define LUA_KCONTEXT ptrdiff_t
#define LUA_IDSIZE 60
#define LUA_EXTRASPACE (sizeof(void *))
#define LUAI_MAXALIGN long long n; void *p

#ifdef __KERNEL__
/*
 * The C stack, measured.  Lua's C levels (a call from C into Lua: a pcall,
 * a metamethod, a library's callback; the parser's nesting while loading)
 * compare the stack pointer with the lowest the host allows for the run,
 * the first word of the state's extra space (struct mt_lua_extra,
 * kmod/mt_klua.h): below it a new level is Lua's "C stack overflow"
 * error, and MT_LUA_CSTACK_ERROR_ROOM bytes further down (the error being
 * raised called a message handler, which nests again) Lua's "error in
 * error handling", which runs nothing more.  The host sets the limit with
 * room below it for the C that runs without a check (the pattern matcher's
 * recursion, a fault's and an interrupt's frames): mt_lua_run.c for a
 * hit, on the state's own stack; mt_lua_cpu.c for marktap's calls, on the
 * task's kernel stack.  Lua's count of C levels stays, at its 200.
 * Lua-to-Lua calls use no C stack; LUAI_MAXSTACK bounds them.
 */
#define MT_LUA_CSTACK_ERROR_ROOM 2048
#define mt_lua_cstack_limit(L) (*(unsigned long *)((char *)(L) - LUA_EXTRASPACE))
#define LUAI_MAXCCALLS \
	(luai_likely(current_stack_pointer >= mt_lua_cstack_limit(L)) ? 200 : \
	 current_stack_pointer + MT_LUA_CSTACK_ERROR_ROOM >= mt_lua_cstack_limit(L) ? \
	 (int)getCcalls(L) : 0)
#undef LUA_EXTRASPACE
#define LUA_EXTRASPACE (3 * sizeof(void *))   /* struct mt_lua_extra: mt_lua_cpu.c checks */
#define LUAI_MAXSTACK 20000
/* the run budget of lvm.c (patches/03-lvm-run-budget.patch): the int
 * after the stack limit in the extra space, the units left in the current slice; when it
 * goes negative luai_budgetspent (lua/mt_lua_one.c, through the host's
 * mt_lua_budget_refill in mt_lua_cpu.c) gives the next slice after a look
 * at the clock, or raises the run's error.  The libraries charge their work to it
 * (patches 04, 05): luai_charge in units (a function entry, a backward
 * jump, a table element moved or compared), luai_chargebytes in bytes
 * copied, compared or searched, MT_LUA_BYTES_PER_UNIT a unit. */
#define luai_budget(L) (((int *)((char *)(L) - LUA_EXTRASPACE + sizeof(unsigned long)))[0])
void luai_budgetspent(struct lua_State *L);
#define luai_charge(L, units) \
	{ if (luai_unlikely((luai_budget(L) -= (int)(units)) < 0)) luai_budgetspent(L); }
#define MT_LUA_BYTES_PER_UNIT_SHIFT 8
/* rounded up (a call that copies a byte is not free), at most 2^28 units
 * at once: the budget is an int (the host's slices are small) */
#define MT_LUA_UNITS_OF(n) (((size_t)(n) + (1u << MT_LUA_BYTES_PER_UNIT_SHIFT) - 1) >> \
			    MT_LUA_BYTES_PER_UNIT_SHIFT)
#define luai_chargebytes(L, n) \
	luai_charge(L, MT_LUA_UNITS_OF(n) > (1u << 28) ? (1u << 28) : MT_LUA_UNITS_OF(n))
/* lstrlib.c's pattern matcher recurses in C once per pattern item
   (~150 bytes a level): "pattern too complex" past 32 instead of 200 */
#define MAXCCALLS 32
#define LUAL_BUFFERSIZE 256
#define luai_makeseed(L) ((unsigned int)get_random_u32())
#define l_randomizePivot() (~0u)
/* output of print() and warnings: nowhere (handlers print through us) */
#define lua_writestring(s, l) ((void)(s), (void)(l))
#define lua_writeline() ((void)0)
#define lua_writestringerror(s, p) ((void)(s), (void)(p))
#else
/* no run budget in user space: the libraries' charges are nothing */
#define luai_charge(L, units) ((void)(L))
#define luai_chargebytes(L, n) ((void)(L))
#define LUAI_MAXSTACK 1000000
#define LUAL_BUFFERSIZE ((int)(16 * sizeof(void *) * sizeof(LUA_NUMBER)))
#define LUA_ROOT "/usr/local/"
#define LUA_LDIR LUA_ROOT "share/lua/5.4/"
#define LUA_CDIR LUA_ROOT "lib/lua/5.4/"
#define LUA_PATH_DEFAULT LUA_LDIR "?.lua;" LUA_LDIR "?/init.lua;./?.lua;./?/init.lua"
#define LUA_CPATH_DEFAULT LUA_CDIR "?.so;./?.so"
#define LUA_DIRSEP "/"
#endif

#if defined(LUA_USE_APICHECK)
#include <assert.h>
#define luai_apicheck(l, e) assert(e)
#endif

#endif
