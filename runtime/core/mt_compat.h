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
#endif

/*
 * User space's clock may be the TSC, scaled to CLOCK_MONOTONIC by the
 * consumer (runtime/marktrace/uclock.c), which calibrates it at the start
 * of a session and steers it every second, continuously:
 *   ns = ns0 + ((tsc - tsc0) * mult) >> 32
 * read under a sequence count (odd while the consumer writes).  It costs
 * an rdtsc instead of a clock_gettime() (11 vs 24-26 ns on these machines,
 * tsc or kvm-clock); when the TSC is not one clock for the machine (flags,
 * clocksource, a calibration check on every CPU: uclock.c) the session
 * leaves it disabled.
 */
struct mt_uclock {
	u32 seq;
	u32 enabled;
	mt_u64 tsc0;
	mt_u64 ns0;
	mt_u64 mult;
};

#ifndef __KERNEL__
#if defined(__x86_64__)
#include <x86intrin.h>
#define MT_HAVE_TSC 1
static inline mt_u64 mt_rdtsc(void) { return __rdtsc(); }
#endif
/* The session clock this process records with, or NULL (mt_session.c). */
extern const struct mt_uclock *mt_uclock_active;

static inline mt_u64 mt_clock_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (mt_u64)ts.tv_sec * 1000000000ull + (mt_u64)ts.tv_nsec;
}

#ifdef MT_HAVE_TSC
static inline mt_u64 mt_uclock_at(const struct mt_uclock *c, mt_u64 tsc0, mt_u64 ns0,
				  mt_u64 mult, mt_u64 t)
{
	(void)c;
	if (t >= tsc0)
		return ns0 + (mt_u64)(((unsigned __int128)(t - tsc0) * mult) >> 32);
	return ns0 - (mt_u64)(((unsigned __int128)(tsc0 - t) * mult) >> 32);
}
#endif

static inline mt_u64 mt_clock_ns(void)
{
#ifdef MT_HAVE_TSC
	const struct mt_uclock *c = __atomic_load_n(&mt_uclock_active, __ATOMIC_ACQUIRE);

	if (c) {
		for (;;) {
			u32 seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
			mt_u64 tsc0 = __atomic_load_n(&c->tsc0, __ATOMIC_RELAXED);
			mt_u64 ns0 = __atomic_load_n(&c->ns0, __ATOMIC_RELAXED);
			mt_u64 mult = __atomic_load_n(&c->mult, __ATOMIC_RELAXED);
			mt_u64 t = mt_rdtsc();
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (!(seq & 1) && __atomic_load_n(&c->seq, __ATOMIC_RELAXED) == seq)
				return mt_uclock_at(c, tsc0, ns0, mult, t);
		}
	}
#endif
	return mt_clock_monotonic();
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
