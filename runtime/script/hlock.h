/*
 * hlock.h - the script host's handler lock, and the hits it skips.
 *
 * One Lua handler at a time per process, so that globals keep stap's
 * semantics (host.c); the native plans' tables move and fold under it too
 * (plan.c).  Handlers are short (MAXACTION bounds them), so a waiter
 * spins, then yields: a futex mutex cost twice as much per hit, and much
 * more when two threads hit at once.
 *
 * A hit that finds its own thread inside a handler (a signal handler that
 * interrupted it) is skipped rather than waiting for ever, and so is a
 * native add out of memory: they are counted here and given to the Lua
 * state (stap's MAXSKIPPED) by the next handler or delta.
 */
#ifndef MT_SCRIPT_HLOCK_H
#define MT_SCRIPT_HLOCK_H

/* Take the word w (0 free) as `me`: spin while it is held, then yield. */
void hlock_spin_take(int *w, int me);
void hlock_spin_drop(int *w);

/*
 * This thread holds, or is about to take, the handler lock: raised
 * BEFORE the lock is taken and lowered after it is dropped, so that a
 * signal handler that hits a marker in between sees it and skips the
 * hit, where it would otherwise spin for ever on a lock its own thread
 * holds.
 */
extern __thread int hlock_in_handler __attribute__((tls_model("initial-exec")));

void hlock(void);
void hunlock(void);

/* One more skipped hit; the count so far, taken (0 when none). */
void hlock_skipped_add(void);
long hlock_skipped_take(void);

#endif
