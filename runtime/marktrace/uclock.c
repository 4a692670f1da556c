/*
 * uclock.c - the TSC clock of user sessions (mt_compat.h, struct mt_uclock).
 *
 * At session creation marktrace calibrates the TSC against CLOCK_MONOTONIC
 * over 50 ms; every second after, it measures the clock's error against
 * CLOCK_MONOTONIC and steers the rate so that the error is gone a second
 * later (at most 200 ppm of correction), keeping the clock continuous: the
 * new origin is the old clock's value at that instant.  So timestamps stay
 * monotonic and comparable with CLOCK_MONOTONIC (and with kernel traces)
 * to within microseconds.  Only with an invariant TSC that the kernel
 * itself uses as its clocksource; else writers call clock_gettime().
 *
 * The session's copy is the writers'; the traced program can write it
 * (an odd sequence count forever would stall every reader).  marktrace
 * reads and steers its own copy and only publishes to the session's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "marktrace.h"
#include "mt_session.h"
#include "uclock.h"

#ifdef MT_HAVE_TSC
static int tsc_usable(void)
{
	char line[4096];
	int constant = 0, nonstop = 0, tsc_source = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		tsc_source = fgets(line, sizeof(line), f) && !strncmp(line, "tsc", 3);
		fclose(f);
	}
	return constant && nonstop && tsc_source;
}

/* A (tsc, CLOCK_MONOTONIC) pair, from the tightest of a few tries. */
static void sample(mt_u64 *tsc, mt_u64 *ns)
{
	mt_u64 best = ~0ull;

	for (int i = 0; i < 8; i++) {
		mt_u64 t1 = mt_rdtsc(), m = mt_clock_monotonic(), t2 = mt_rdtsc();
		if (t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1 + (t2 - t1) / 2;
			*ns = m;
		}
	}
}

static struct {
	mt_u64 tsc, ns;       /* the last sample */
	double next;          /* when to steer again (CLOCK_MONOTONIC, s) */
} last;

static struct mt_uclock own;   /* ours: what the session's copy should hold */

static void publish_to(struct mt_uclock *c, mt_u64 tsc0, mt_u64 ns0, mt_u64 mult)
{
	__atomic_store_n(&c->seq, c->seq + 1, __ATOMIC_RELAXED);   /* odd */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&c->tsc0, tsc0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->ns0, ns0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->mult, mult, __ATOMIC_RELAXED);
	__atomic_store_n(&c->seq, c->seq + 1, __ATOMIC_RELEASE);   /* even */
}

static void publish(struct mt_session *s, mt_u64 tsc0, mt_u64 ns0, mt_u64 mult)
{
	publish_to(&own, tsc0, ns0, mult);
	/* the session's sequence count from ours: odd while we write, even
	 * after, whatever the program left in it */
	__atomic_store_n(&s->clock.seq, own.seq - 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->clock.tsc0, tsc0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->clock.ns0, ns0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->clock.mult, mult, __ATOMIC_RELAXED);
	__atomic_store_n(&s->clock.seq, own.seq, __ATOMIC_RELEASE);
}

void mt_uclock_setup(struct mt_session *s)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	mt_u64 t1, n1, t2, n2;

	if (getenv("MARKTAP_CLOCK") && !strcmp(getenv("MARKTAP_CLOCK"), "monotonic"))
		return;
	if (!tsc_usable())
		return;
	sample(&t1, &n1);
	nanosleep(&pause, NULL);
	sample(&t2, &n2);
	if (t2 <= t1 || n2 <= n1)
		return;
	own.seq = 0;
	publish(s, t2, n2, (mt_u64)(((unsigned __int128)(n2 - n1) << 32) / (t2 - t1)));
	last.tsc = t2;
	last.ns = n2;
	last.next = n2 / 1e9 + 1.0;
	own.enabled = 1;
	s->clock.enabled = 1;
	/* marktrace's own timestamps (flushes) on the same clock: our copy */
	__atomic_store_n(&mt_uclock_active, &own, __ATOMIC_RELEASE);
}

void mt_uclock_steer(struct mt_session *s)
{
	struct mt_uclock *c = &own;
	mt_u64 t, n, ours, mult;
	double rate, err, interval, corr;

	if (!c->enabled || mt_clock_monotonic() / 1e9 < last.next)
		return;
	sample(&t, &n);
	if (t <= last.tsc || n <= last.ns)
		return;
	ours = mt_uclock_at(c, c->tsc0, c->ns0, c->mult, t);
	/* the true rate over the last interval, and our error now */
	rate = (double)(n - last.ns) / (double)(t - last.tsc);   /* ns per tick */
	err = (double)(long long)(ours - n);                      /* ns ahead */
	interval = (double)(n - last.ns);
	corr = err / interval;                 /* slow down by this fraction */
	if (corr > 2e-4)
		corr = 2e-4;
	if (corr < -2e-4)
		corr = -2e-4;
	mult = (mt_u64)(rate * (1.0 - corr) * 4294967296.0);
	if (mult)
		publish(s, t, ours, mult);
	last.tsc = t;
	last.ns = n;
	last.next = n / 1e9 + 1.0;
}
#else
void mt_uclock_setup(struct mt_session *s) { (void)s; }
void mt_uclock_steer(struct mt_session *s) { (void)s; }
#endif
