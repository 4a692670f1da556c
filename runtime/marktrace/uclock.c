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
/*
 * uclock.c - the clock of user sessions' timestamps (mt_compat.h, struct
 * mt_uclock).
 *
 * Writers stamp events with the TSC scaled to CLOCK_MONOTONIC when the TSC
 * is one clock for the whole machine, and with clock_gettime() otherwise
 * (twice the cost of an rdtsc, or more, under a paravirtual clocksource).
 * The TSC is one clock when:
 *  - every CPU says constant_tsc (its rate does not follow the CPU's
 *    frequency) and nonstop_tsc (it does not stop in deep sleep states);
 *  - the kernel's clocksource reads it: `tsc`, or a paravirtual clock
 *    built on it (kvm-clock, xen, Hyper-V's TSC page).  The kernel leaves
 *    the TSC for hpet or acpi_pm when its watchdog finds it unstable;
 *  - it passes a calibration check against CLOCK_MONOTONIC: three rounds
 *    of one sample on each CPU we may run on (pinned there with
 *    sched_setaffinity), 50 ms from first to last, fit one line: no CPU's
 *    rate more than 100 ppm off the first CPU's, no sample more than 10 us
 *    off the line (CPUs whose TSCs are not synchronised, or a TSC that is
 *    not steady).  A failed check is tried once more, for a sample that
 *    met a preempted vCPU.
 * Whichever clock is chosen, mt_uclock_describe() says it, and why; the
 * trace's metadata and `marktrace stats` carry it.
 *
 * Every second after, marktrace measures the clock's error against
 * CLOCK_MONOTONIC and steers the rate so that the error is gone a second
 * later (at most 200 ppm of correction), keeping the clock continuous: the
 * new origin is the old clock's value at that instant.  So timestamps stay
 * monotonic and comparable with CLOCK_MONOTONIC (and with kernel traces)
 * to within microseconds.
 *
 * The session's copy is the writers'; the traced program can write it
 * (an odd sequence count forever would stall every reader).  marktrace
 * reads and steers its own copy and only publishes to the session's.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mt_session.h"
#include "uclock.h"

static char description[384] = "clock_gettime: no session was set up";

static void describe(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void describe(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(description, sizeof(description), fmt, ap);
	va_end(ap);
}

const char *mt_uclock_describe(void)
{
	return description;
}

/* Is word one of the blank-separated words of line[0..n)? */
static int has_word(const char *line, size_t n, const char *word)
{
	size_t w = strlen(word), i;

	for (i = 0; i + w <= n; i++)
		if ((i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t') &&
		    !memcmp(line + i, word, w) &&
		    (i + w == n || line[i + w] == ' ' || line[i + w] == '\t'))
			return 1;
	return 0;
}

int mt_uclock_check_flags(const char *cpuinfo, char *why, size_t len)
{
	const char *line = cpuinfo;
	unsigned cpus = 0;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		size_t k = 5 + strspn(line + (n >= 5 ? 5 : n), " \t");

		/* "flags\t\t: fpu vme ...", one line per CPU (not the "vmx
		 * flags" nor the "bugs" lines) */
		if (n >= 5 && !strncmp(line, "flags", 5) && k < n && line[k] == ':') {
			if (!has_word(line, n, "constant_tsc")) {
				snprintf(why, len, "cpu %u has no constant_tsc flag (its TSC rate may "
					 "follow the CPU's frequency)", cpus);
				return -1;
			}
			if (!has_word(line, n, "nonstop_tsc")) {
				snprintf(why, len, "cpu %u has no nonstop_tsc flag (its TSC may stop in "
					 "deep sleep states)", cpus);
				return -1;
			}
			cpus++;
		}
		line = end ? end + 1 : NULL;
	}
	if (!cpus) {
		snprintf(why, len, "no CPU flags in /proc/cpuinfo");
		return -1;
	}
	return 0;
}

/* Clocksources that read the TSC (the kernel's names). */
static const char *const tsc_sources[] = {
	"tsc", "kvm-clock", "xen", "hyperv_clocksource_tsc_page", NULL
};

int mt_uclock_check_clocksource(const char *name, char *why, size_t len)
{
	unsigned i;

	for (i = 0; tsc_sources[i]; i++)
		if (!strcmp(name, tsc_sources[i]))
			return 0;
	snprintf(why, len, "the kernel's clocksource is %s, not the TSC nor a clock built on it "
		 "(the kernel leaves the TSC when it finds it unstable)", name);
	return -1;
}

static double absd(double x) { return x < 0 ? -x : x; }

/* ns per tick between two samples; 0 if either clock did not advance. */
static double rate_between(const struct mt_uclock_sample *a, const struct mt_uclock_sample *b)
{
	if (b->tsc <= a->tsc || b->ns <= a->ns)
		return 0;
	return (double)(b->ns - a->ns) / (double)(b->tsc - a->tsc);
}

int mt_uclock_check_samples(const struct mt_uclock_sample *smp, unsigned ncpu,
			    unsigned rounds, struct mt_uclock_fit *fit, char *why, size_t len)
{
	const struct mt_uclock_sample *a = &smp[0], *b;
	double rate;
	unsigned i;

	if (!ncpu || rounds < 2) {
		snprintf(why, len, "too few calibration samples");
		return -1;
	}
	b = &smp[(rounds - 1) * ncpu];
	/* the line: the first CPU's first and last samples */
	rate = rate_between(a, b);
	for (i = 0; i < ncpu; i++) {
		double r = rate_between(&smp[i], &smp[(rounds - 1) * ncpu + i]);
		double ppm = rate > 0 ? (r / rate - 1) * 1e6 : 0;

		if (r <= 0 || r > 1e3 || r < 1e-3) {
			snprintf(why, len, "cpu %u's TSC did not advance with CLOCK_MONOTONIC",
				 smp[i].cpu);
			return -1;
		}
		if (absd(ppm) > MT_UCLOCK_MAX_PPM) {
			/* fewer ns per tick: more ticks per ns */
			snprintf(why, len, "cpu %u's TSC runs %.0f ppm %s than cpu %u's (over %.0f ms)",
				 smp[i].cpu, absd(ppm), ppm < 0 ? "faster" : "slower", a->cpu,
				 (double)(smp[(rounds - 1) * ncpu + i].ns - smp[i].ns) / 1e6);
			return -1;
		}
	}
	for (i = 0; i < rounds * ncpu; i++) {
		/* where the line puts this sample's TSC, minus its CLOCK_MONOTONIC */
		double off = (double)(long long)(smp[i].tsc - b->tsc) * rate -
			     (double)(long long)(smp[i].ns - b->ns);

		if (absd(off) <= MT_UCLOCK_MAX_OFF_NS)
			continue;
		if (smp[i].cpu == a->cpu)
			snprintf(why, len, "the TSC of cpu %u is not steady against CLOCK_MONOTONIC "
				 "(a sample %.1f us off its line)", a->cpu, absd(off) / 1e3);
		else
			snprintf(why, len, "cpu %u's TSC is %.1f us %s cpu %u's", smp[i].cpu,
				 absd(off) / 1e3, off > 0 ? "ahead of" : "behind", a->cpu);
		return -1;
	}
	fit->tsc0 = b->tsc;
	fit->ns0 = b->ns;
	fit->mult = (mt_u64)(((unsigned __int128)(b->ns - a->ns) << 32) / (b->tsc - a->tsc));
	return 0;
}

/* The first line of a file, without its newline; "" when unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* A whole file (bounded), NUL-terminated, to free; NULL when unreadable. */
static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0, cap = 65536;
	char *buf = f ? malloc(cap) : NULL;

	while (buf) {
		n += fread(buf + n, 1, cap - 1 - n, f);
		if (n < cap - 1 || cap >= (64u << 20))
			break;
		char *more = realloc(buf, cap * 2);
		if (!more) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = more;
		cap *= 2;
	}
	if (buf)
		buf[n] = '\0';
	if (f)
		fclose(f);
	return buf;
}

/* A name from a file the user may have named: printable, short. */
static void clean_name(char *name)
{
	char *p;

	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
			*p = '_';
	if (strlen(name) > 40)
		name[40] = '\0';
}

#ifdef MT_HAVE_TSC
/*
 * A (tsc, CLOCK_MONOTONIC) pair, from the tightest of a few tries.  The
 * clock was read somewhere between the two TSC reads; pairing it with the
 * first makes our clock never behind CLOCK_MONOTONIC (ahead by at most the
 * window, some 20 ns), so that no event is stamped before a reading of the
 * clock the program took before it (clock-source.t; the midpoint left
 * events up to 14 ns early once hits got faster).
 */
static void sample(mt_u64 *tsc, mt_u64 *ns)
{
	mt_u64 best = ~0ull;

	*tsc = *ns = 0;
	for (int i = 0; i < 8; i++) {
		mt_u64 t1 = mt_rdtsc(), m = mt_clock_monotonic(), t2 = mt_rdtsc();
		if (t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1;
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

#define ROUNDS 3

/*
 * Sample rounds x ncpu pairs, one per CPU of ours in each round, pinned
 * to it; the rounds 25 ms apart.  Our affinity is given back after (the
 * traced command inherits it).  0, or -1 with why.
 */
static int gather(struct mt_uclock_sample *smp, const unsigned *cpus, unsigned ncpu,
		  const cpu_set_t *mine, char *why, size_t len)
{
	struct timespec pause = { 0, 25 * 1000 * 1000 };
	unsigned r, i;
	int rc = 0;

	for (r = 0; r < ROUNDS && !rc; r++) {
		if (r)
			nanosleep(&pause, NULL);
		for (i = 0; i < ncpu && !rc; i++) {
			struct mt_uclock_sample *p = &smp[r * ncpu + i];
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(cpus[i], &one);
			p->cpu = cpus[i];
			if (ncpu > 1 && sched_setaffinity(0, sizeof(one), &one) < 0) {
				snprintf(why, len, "cannot run on cpu %u to check its TSC", cpus[i]);
				rc = -1;
				break;
			}
			sample(&p->tsc, &p->ns);
			if (ncpu > 1 && sched_getcpu() != (int)cpus[i]) {
				snprintf(why, len, "cpu %u: moved off it while checking its TSC", cpus[i]);
				rc = -1;
			}
		}
	}
	if (ncpu > 1)
		sched_setaffinity(0, sizeof(*mine), mine);
	return rc;
}

/* Sample the CPUs we may run on and check the samples fit one line.
 * 0 with fit and *checked set, or -1 with why. */
static int calibrate(struct mt_uclock_fit *fit, unsigned *checked, char *why, size_t len)
{
	cpu_set_t mine;
	unsigned cpus[CPU_SETSIZE], ncpu = 0, c, attempt;
	struct mt_uclock_sample *smp;
	int rc = -1;

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0) {
		CPU_ZERO(&mine);
		CPU_SET(0, &mine);   /* sample where we are, unpinned */
	}
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &mine))
			cpus[ncpu++] = c;
	smp = calloc((size_t)ncpu * ROUNDS, sizeof(*smp));
	if (!smp) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (attempt = 0; attempt < 2 && rc < 0; attempt++)
		rc = gather(smp, cpus, ncpu, &mine, why, len) < 0 ? -1 :
		     mt_uclock_check_samples(smp, ncpu, ROUNDS, fit, why, len);
	free(smp);
	*checked = ncpu;
	return rc;
}

/* The reasons not to use the TSC that are not measured; 0 if none. */
static int tsc_unusable(char *source, size_t source_len, char *why, size_t len)
{
	const char *clock = secure_getenv("MARKTAP_CLOCK");
	const char *cpuinfo = secure_getenv("MARKTAP_CPUINFO_FILE");
	const char *clocksource = secure_getenv("MARKTAP_CLOCKSOURCE_FILE");
	char *text;
	int rc;

	if (clock && !strcmp(clock, "monotonic")) {
		snprintf(why, len, "MARKTAP_CLOCK=monotonic");
		return -1;
	}
	text = read_all(cpuinfo && *cpuinfo ? cpuinfo : "/proc/cpuinfo");
	if (!text) {
		snprintf(why, len, "cannot read the CPU flags");
		return -1;
	}
	rc = mt_uclock_check_flags(text, why, len);
	free(text);
	if (rc < 0)
		return -1;
	read_line(clocksource && *clocksource ? clocksource :
		  "/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  source, source_len);
	clean_name(source);
	/* no sysfs: the calibration decides alone */
	return *source ? mt_uclock_check_clocksource(source, why, len) : 0;
}

void mt_uclock_setup(struct mt_session *s)
{
	char why[256], source[64];
	struct mt_uclock_fit fit;
	unsigned checked = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (tsc_unusable(source, sizeof(source), why, sizeof(why)) < 0 ||
	    calibrate(&fit, &checked, why, sizeof(why)) < 0) {
		describe("clock_gettime: %s", why);
		return;
	}
	own.seq = 0;
	publish(s, fit.tsc0, fit.ns0, fit.mult);
	last.tsc = fit.tsc0;
	last.ns = fit.ns0;
	last.next = fit.ns0 / 1e9 + 1.0;
	own.enabled = 1;
	s->clock.enabled = 1;
	/* marktrace's own timestamps (flushes) on the same clock: our copy */
	__atomic_store_n(&mt_uclock_active, &own, __ATOMIC_RELEASE);
	describe("tsc: %.3f GHz, constant_tsc nonstop_tsc, kernel clocksource %s, "
		 "checked against CLOCK_MONOTONIC on %u of %ld CPUs, steered every second",
		 4294967296.0 / (double)fit.mult, *source ? source : "unknown", checked, online);
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
void mt_uclock_setup(struct mt_session *s)
{
	(void)s;
	describe("clock_gettime: no TSC on this architecture");
}
void mt_uclock_steer(struct mt_session *s) { (void)s; }
#endif
