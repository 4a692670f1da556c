/*
 * hlock.c - the script host's handler lock, and the hits it skips (hlock.h).
 */
#define _GNU_SOURCE
#include <sched.h>
#include "hlock.h"

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

static int lock_word;                   /* 0 free, 1 held */
static long skipped_pending;            /* hits skipped, not given to Lua yet */

__thread int hlock_in_handler __attribute__((tls_model("initial-exec")));

void hlock_spin_take(int *w, int me)
{
	unsigned spins = 0;
	int free_word = 0;

	while (!__atomic_compare_exchange_n(w, &free_word, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		free_word = 0;
		while (__atomic_load_n(w, __ATOMIC_RELAXED)) {
			if (++spins > 2000) {
				sched_yield();
				spins = 0;
			}
			cpu_relax();
		}
	}
}

void hlock_spin_drop(int *w)
{
	__atomic_store_n(w, 0, __ATOMIC_RELEASE);
}

/* The compiler barriers keep hlock_in_handler's stores on their side of
 * the lock's (a signal runs on this thread: no CPU fence is needed). */
void hlock(void)
{
	hlock_in_handler++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	hlock_spin_take(&lock_word, 1);
}

void hunlock(void)
{
	hlock_spin_drop(&lock_word);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	hlock_in_handler--;
}

void hlock_skipped_add(void)
{
	__atomic_add_fetch(&skipped_pending, 1, __ATOMIC_RELAXED);
}

/* A plain load first: the common case (none) writes nothing. */
long hlock_skipped_take(void)
{
	if (!__atomic_load_n(&skipped_pending, __ATOMIC_RELAXED))
		return 0;
	return __atomic_exchange_n(&skipped_pending, 0, __ATOMIC_RELAXED);
}
