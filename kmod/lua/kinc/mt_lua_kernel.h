/*
 * mt_lua_kernel.h - the C library Lua's core expects, in marktap.ko.
 *
 * Included by our luaconf.h when __KERNEL__ is defined; the C library
 * headers Lua's sources include (<string.h>, <stdio.h>, ...) are one-line
 * files of this folder that include this one.  What the kernel has is
 * mapped to it (string routines, snprintf, ctype); what Lua only needs
 * for files, the environment or the locale is a stub that fails, and is
 * never reached from marktap (no io, os, package or debug library; no
 * luaL_loadfile, luaL_newstate).  Numbers are integers (luaconf.h), so
 * nothing here deals with floating point.
 */
#ifndef MT_LUA_KERNEL_H
#define MT_LUA_KERNEL_H

#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/stdarg.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/bug.h>
#include <linux/random.h>
#include <asm/asm.h>   /* current_stack_pointer: luaconf.h's LUAI_MAXCCALLS */

/* Lua's lexer has a field named current (the kernel's is get_current()),
   lauxlib a function named panic */
#undef current
#define panic mt_lua_lauxlib_panic

/* limits usable in #if (the kernel's are casts, which #if cannot do;
   an unsigned ~0U there is computed in the preprocessor's 64 bits) */
#undef CHAR_BIT
#undef UCHAR_MAX
#undef SCHAR_MAX
#undef SHRT_MAX
#undef USHRT_MAX
#undef INT_MAX
#undef INT_MIN
#undef UINT_MAX
#undef LONG_MAX
#undef LONG_MIN
#undef ULONG_MAX
#undef LLONG_MAX
#undef LLONG_MIN
#undef ULLONG_MAX
#define CHAR_BIT 8
#define UCHAR_MAX 255
#define SCHAR_MAX 127
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 4294967295U
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-LONG_MAX - 1L)
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MAX 9223372036854775807LL
#define LLONG_MIN (-LLONG_MAX - 1LL)
#define ULLONG_MAX 18446744073709551615ULL

/* lstate.h: the type of the hook flag an asynchronous signal may set */
typedef int sig_atomic_t;

/* strings: the kernel's, plus the few it lacks */
#define strcoll(a, b) strcmp((a), (b))
static inline const char *mt_lua_strerror(int e) { (void)e; return "error"; }
#define strerror(e) mt_lua_strerror(e)

/* errno: Lua reads it after failed file calls, which do not happen here */
#define errno (*mt_lua_errno())
static inline int *mt_lua_errno(void) { static int e; return &e; }

/* longjmp-based errors (ldo.c), our own setjmp for x86-64 (mt_lua_jmp.S) */
typedef unsigned long mt_lua_jmpbuf[8];
int mt_lua_setjmp(mt_lua_jmpbuf b) __attribute__((returns_twice));
void mt_lua_longjmp(mt_lua_jmpbuf b, int v) __attribute__((noreturn));
#define LUAI_THROW(L, c) mt_lua_longjmp((c)->b, 1)
#define LUAI_TRY(L, c, a) if (mt_lua_setjmp((c)->b) == 0) { a }
#define luai_jmpbuf mt_lua_jmpbuf

/* a Lua panic (error outside any protected call): marktap always calls
   through lua_pcall, so this is our bug */
#define abort() BUG()

/* memory: Lua allocates through the lua_Alloc of each state; lauxlib's
   default allocator (luaL_newstate, unused) gets none */
static inline void *mt_lua_no_realloc(void *p, size_t n) { (void)p; (void)n; return NULL; }
#define realloc(p, n) mt_lua_no_realloc((p), (n))
#define free(p) ((void)(p))
static inline char *getenv(const char *n) { (void)n; return NULL; }

/* files (luaL_loadfilex, luaL_fileresult; never called) */
typedef struct mt_lua_file FILE;
#define BUFSIZ 64
#define EOF (-1)
#define stdin ((FILE *)NULL)
#define stdout ((FILE *)NULL)
#define stderr ((FILE *)NULL)
static inline FILE *fopen(const char *n, const char *m) { (void)n; (void)m; return NULL; }
static inline FILE *freopen(const char *n, const char *m, FILE *f) { (void)n; (void)m; (void)f; return NULL; }
static inline int fclose(FILE *f) { (void)f; return EOF; }
static inline int getc(FILE *f) { (void)f; return EOF; }
static inline size_t fread(void *p, size_t s, size_t n, FILE *f) { (void)p; (void)s; (void)n; (void)f; return 0; }
static inline int ferror(FILE *f) { (void)f; return 1; }
static inline int feof(FILE *f) { (void)f; return 1; }
static inline int fflush(FILE *f) { (void)f; return 0; }
#define fprintf(f, ...) ((void)(f), 0)
#define fputs(s, f) ((void)(s), (void)(f), 0)
#define fwrite(p, s, n, f) ((void)(p), (void)(f), (size_t)0)

/* locale: "C" */
struct lconv { char *decimal_point; };
static inline struct lconv *localeconv(void) { static char dot[] = "."; static struct lconv c = { dot }; return &c; }

#endif
