/*
 * uclock-test.c - the checks that decide whether user sessions stamp
 * events with the TSC (runtime/marktrace/uclock.c), on made-up inputs:
 * CPU flags, clocksource names, and calibration samples of TSCs that are
 * one clock, offset on one CPU, of another rate on one CPU, or unsteady.
 * TAP output.
 */
#include <stdio.h>
#include <string.h>
#include "uclock.h"

static int n, failed;

static void ok(int cond, const char *what, const char *why)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
	if (why && *why)
		printf("#   %s\n", why);
	failed += !cond;
}

#define FLAGS_OK "flags\t\t: fpu tsc msr constant_tsc rep_good nopl nonstop_tsc cpuid\n"
#define FLAGS_NO_NONSTOP "flags\t\t: fpu tsc msr constant_tsc rep_good nopl cpuid\n"

static void flags(void)
{
	char why[256] = "";

	ok(mt_uclock_check_flags("processor\t: 0\n" FLAGS_OK "vmx flags\t: vnmi\n\n"
				 "processor\t: 1\n" FLAGS_OK, why, sizeof(why)) == 0,
	   "flags: both flags on every CPU pass", why);
	why[0] = '\0';
	ok(mt_uclock_check_flags("processor\t: 0\n" FLAGS_OK "\nprocessor\t: 1\n"
				 FLAGS_NO_NONSTOP, why, sizeof(why)) < 0 &&
	   strstr(why, "cpu 1 has no nonstop_tsc"), "flags: one CPU without nonstop_tsc fails", why);
	why[0] = '\0';
	ok(mt_uclock_check_flags("flags\t\t: fpu tsc nonstop_tsc constant_tsc_x\n", why,
				 sizeof(why)) < 0 && strstr(why, "no constant_tsc"),
	   "flags: a word that only starts with constant_tsc is not it", why);
	why[0] = '\0';
	ok(mt_uclock_check_flags("processor\t: 0\nvmx flags\t: constant_tsc nonstop_tsc\n", why,
				 sizeof(why)) < 0 && strstr(why, "no CPU flags"),
	   "flags: no flags line fails", why);
}

static void clocksources(void)
{
	const char *good[] = { "tsc", "kvm-clock", "xen", "hyperv_clocksource_tsc_page" };
	const char *bad[] = { "hpet", "acpi_pm", "jiffies", "tsc-early_" };
	char why[256];
	unsigned i;

	for (i = 0; i < 4; i++) {
		char what[96];
		why[0] = '\0';
		snprintf(what, sizeof(what), "clocksource %s reads the TSC", good[i]);
		ok(mt_uclock_check_clocksource(good[i], why, sizeof(why)) == 0, what, why);
		why[0] = '\0';
		snprintf(what, sizeof(what), "clocksource %s does not", bad[i]);
		ok(mt_uclock_check_clocksource(bad[i], why, sizeof(why)) < 0 && strstr(why, bad[i]),
		   what, why);
	}
}

/*
 * 2 CPUs x 3 rounds 25 ms apart, a 2 GHz TSC (0.5 ns per tick) that is one
 * clock; then cpu 1 is given an offset (us), a rate of its own (ppm), or
 * one sample of cpu 0 is moved off the line (us).
 */
static void make(struct mt_uclock_sample *s, double off1_us, double ppm1, double jolt0_us)
{
	unsigned r, c;

	for (r = 0; r < 3; r++)
		for (c = 0; c < 2; c++) {
			struct mt_uclock_sample *p = &s[r * 2 + c];
			double ns = 5e9 + r * 25e6 + c * 3e3;   /* CLOCK_MONOTONIC at the sample */
			double tsc = 1e12 + (ns - 5e9) * 2.0;
			if (c == 1)
				tsc += off1_us * 2e3 + (ns - 5e9) * 2.0 * ppm1 * 1e-6;
			if (c == 0 && r == 1)
				tsc += jolt0_us * 2e3;
			p->cpu = c;
			p->ns = (mt_u64)ns;
			p->tsc = (mt_u64)tsc;
		}
}

static void samples(void)
{
	struct mt_uclock_sample s[6];
	struct mt_uclock_fit fit;
	char why[256];

	why[0] = '\0';
	make(s, 0, 0, 0);
	ok(mt_uclock_check_samples(s, 2, 3, &fit, why, sizeof(why)) == 0,
	   "samples: one clock on two CPUs passes", why);
	ok(fit.mult == 1ull << 31 && fit.tsc0 == s[4].tsc && fit.ns0 == s[4].ns,
	   "samples: the fit is the first CPU's line (0.5 ns per tick from its last sample)", "");
	why[0] = '\0';
	make(s, 8, 0, 0);
	ok(mt_uclock_check_samples(s, 2, 3, &fit, why, sizeof(why)) == 0,
	   "samples: cpu 1 8 us off is within the bound", why);
	why[0] = '\0';
	make(s, 50, 0, 0);
	ok(mt_uclock_check_samples(s, 2, 3, &fit, why, sizeof(why)) < 0 &&
	   strstr(why, "cpu 1's TSC is 50.0 us ahead of cpu 0's"),
	   "samples: cpu 1's TSC 50 us ahead fails", why);
	why[0] = '\0';
	make(s, 0, 300, 0);
	ok(mt_uclock_check_samples(s, 2, 3, &fit, why, sizeof(why)) < 0 &&
	   strstr(why, "cpu 1's TSC runs 300 ppm faster than cpu 0's"),
	   "samples: cpu 1's TSC 300 ppm faster fails", why);
	why[0] = '\0';
	make(s, 0, 50, 0);
	ok(mt_uclock_check_samples(s, 2, 3, &fit, why, sizeof(why)) == 0,
	   "samples: 50 ppm is within the bound", why);
	why[0] = '\0';
	make(s, 0, 0, 20);
	ok(mt_uclock_check_samples(s, 2, 3, &fit, why, sizeof(why)) < 0 &&
	   strstr(why, "TSC of cpu 0 is not steady"),
	   "samples: a middle sample 20 us off cpu 0's own line fails", why);
	why[0] = '\0';
	make(s, 0, 0, 0);
	s[5].tsc = s[1].tsc;
	ok(mt_uclock_check_samples(s, 2, 3, &fit, why, sizeof(why)) < 0 &&
	   strstr(why, "cpu 1's TSC did not advance"), "samples: a TSC that stopped fails", why);
	why[0] = '\0';
	ok(mt_uclock_check_samples(s, 2, 1, &fit, why, sizeof(why)) < 0,
	   "samples: one round is too few", why);
}

int main(void)
{
	flags();
	clocksources();
	samples();
	printf("1..%d\n", n);
	return failed != 0;
}
