/*
 * klua-alloc.h - just enough of the kernel's headers for kmod/mt_lua_alloc.c
 * and kmod/mt_klua.h to build on the host (klua-alloc.c; forced with -include).
 */
#ifndef KLUA_ALLOC_H
#define KLUA_ALLOC_H
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t u64;
#define BITS_TO_LONGS(n) (((n) + 63) / 64)
#define ALIGN(x, a) (((x) + (a) - 1) & ~((size_t)(a) - 1))
#define ilog2(x) (63 - __builtin_clzl(x))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
static inline void __set_bit(unsigned i, unsigned long *m) { m[i / 64] |= 1ul << (i % 64); }
static inline void __clear_bit(unsigned i, unsigned long *m) { m[i / 64] &= ~(1ul << (i % 64)); }
static inline unsigned find_next_bit(const unsigned long *m, unsigned n, unsigned i)
{
	for (; i < n; i++)
		if (m[i / 64] & (1ul << (i % 64)))
			return i;
	return n;
}
#define GFP_KERNEL 0
#define __GFP_ZERO 0
#define __GFP_NOWARN 0
#define __GFP_NORETRY 0
static inline void *__vmalloc(size_t n, int gfp) { (void)gfp; return calloc(1, n); }
static inline void vfree(void *p) { free(p); }
#endif
