/*
 * mt_compat.h - the few primitives the shared core needs, for user space
 * and for the kernel.  The core (mt_fmt, mt_event, mt_ring) includes only
 * this header, so the same .c files build in libmarktap and in marktap.ko.
 */
#ifndef MT_COMPAT_H
#define MT_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/stdarg.h>
#include <linux/errno.h>
#include <linux/ktime.h>  /* brings timekeeping.h with the types it needs */
typedef u64 mt_u64;
/* CLOCK_MONOTONIC, NMI-safe: the same clock user space reads. */
static inline mt_u64 mt_clock_ns(void) { return ktime_get_mono_fast_ns(); }
#else
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdarg.h>
#include <errno.h>
#include <time.h>
typedef uint64_t mt_u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
typedef int32_t s32;
typedef int64_t s64;
static inline mt_u64 mt_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (mt_u64)ts.tv_sec * 1000000000ull + (mt_u64)ts.tv_nsec;
}
#endif

/*
 * Atomics: GCC's __atomic builtins, available to both worlds on the
 * architectures we build for (x86_64).  Each use names its ordering.
 */
#define mt_load_relaxed(p)      __atomic_load_n((p), __ATOMIC_RELAXED)
#define mt_load_acquire(p)      __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define mt_store_relaxed(p, v)  __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define mt_store_release(p, v)  __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define mt_add_release(p, v)    __atomic_add_fetch((p), (v), __ATOMIC_RELEASE)
#define mt_add_relaxed(p, v)    __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define mt_cas_relaxed(p, oldp, v) \
	__atomic_compare_exchange_n((p), (oldp), (v), 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)

#define mt_likely(x)   __builtin_expect(!!(x), 1)
#define mt_unlikely(x) __builtin_expect(!!(x), 0)

#endif
