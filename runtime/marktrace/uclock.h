/* uclock.h - the clock of user sessions' timestamps (uclock.c). */
#ifndef MT_UCLOCK_H
#define MT_UCLOCK_H
#include <stddef.h>
#include <stdlib.h>
#include "mt_session.h"

/* Check the TSC and, when it is one clock, calibrate it and enable it in a
 * new session; else writers use clock_gettime().  Either way
 * mt_uclock_describe() says which, and why. */
void mt_uclock_setup(struct mt_session *s);
/* Once a second at most: keep it on CLOCK_MONOTONIC. */
void mt_uclock_steer(struct mt_session *s);
/* The clock of the last session set up: "tsc: ..." or "clock_gettime: why". */
const char *mt_uclock_describe(void);

/*
 * The checks, separated from where their inputs come from (tests feed
 * them; MARKTAP_CPUINFO_FILE and MARKTAP_CLOCKSOURCE_FILE name other files
 * than /proc/cpuinfo and the kernel's current_clocksource).
 */
/* One (TSC, CLOCK_MONOTONIC) pair read on one CPU. */
struct mt_uclock_sample {
	unsigned cpu;
	mt_u64 tsc, ns;
};
/* The TSC scaled to CLOCK_MONOTONIC: ns = ns0 + ((tsc - tsc0) * mult) >> 32. */
struct mt_uclock_fit {
	mt_u64 tsc0, ns0, mult;
};
/* Every CPU's flags line of a /proc/cpuinfo text has constant_tsc and
 * nonstop_tsc: 0, or -1 with why. */
int mt_uclock_check_flags(const char *cpuinfo, char *why, size_t len);
/* The kernel's clocksource reads the TSC (tsc, or a paravirtual clock
 * built on it): 0, or -1 with why. */
int mt_uclock_check_clocksource(const char *name, char *why, size_t len);
/* rounds x ncpu samples, round-major (one per CPU in each round, rounds
 * spread in time): one line fits every sample (no CPU offset from the
 * others, no rate of its own, no sample off the line).  0 with fit set
 * from the first CPU's samples, or -1 with why. */
int mt_uclock_check_samples(const struct mt_uclock_sample *smp, unsigned ncpu,
			    unsigned rounds, struct mt_uclock_fit *fit, char *why, size_t len);
/* Bounds of the check. */
#define MT_UCLOCK_MAX_OFF_NS 10000   /* a sample's distance from the line */
#define MT_UCLOCK_MAX_PPM    100     /* a CPU's rate against the first's */
#endif
