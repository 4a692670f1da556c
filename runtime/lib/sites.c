/*
 * sites.c - patched marker sites (MARKTAP_PATCHED_SITES in marker.h).
 *
 * A patched site is a 5-byte instruction without effect in the program's
 * code; while its marker's gate is raised (enabled != 0: armed by marktrace
 * or marktap, or an SDT user's semaphore) it is a jump to the marker's
 * code, and back once the gate is down.  Arming and disarming patch at once
 * (mt_sites_update, from registry.c).  Outside tools raise the semaphore
 * with nothing telling the process, so a thread ("marktap-sites") looks
 * at every patched site's gate each MARKTAP_SITE_POLL_MS milliseconds
 * (100 by default; 0: no thread, outside tools never reach these sites),
 * and once when an object registers its sites (a program started under
 * bpftrace -c has its semaphores raised before its constructors run).
 *
 * The site off ("test $rel32, %eax") and on ("jmp rel32") differ in their
 * first byte only: one byte written through /proc/self/mem
 * (runtime/lib/text.c: the page never becomes writable and
 * executable), then every thread serialised: a thread runs the old
 * instruction or the new one, never a mix (an 8-byte word rewritten
 * whole, as first done, let threads running the site die of SIGILL under
 * load: the kernel's copy into the page is not one store).  A site that holds neither (a
 * breakpoint of a debugger or a uprobe on it) is left alone and said.
 * Lock order: the registry's, then this one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
#include "mt_lib.h"
#include "text.h"

static pthread_mutex_t sites_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct mt_range *site_ranges;
static long poll_ms = -1;         /* -1: not read yet */
static int poller_running;        /* in this process (not a forked parent's) */
static unsigned long refused_count;

#define SITE_OFF 0xa9   /* test $rel32, %eax */
#define SITE_ON 0xe9    /* jmp rel32 */

static void refuse(const struct mt_marker_site *s, const char *why)
{
	refused_count++;
	if (refused_count <= 8)
		fprintf(stderr, "libmarktap: marker '%s': its patched site at %#lx %s; "
			"the site is left as it is\n",
			s->marker && s->marker->name ? s->marker->name : "?", s->site, why);
}

/* Site s as a jump (on) or not; sites lock held.  0, or -1 (said). */
static int set_site(const struct mt_marker_site *s, int on)
{
	const unsigned char *p = (const unsigned char *)s->site;
	unsigned char want = on ? SITE_ON : SITE_OFF;
	long long rel = (long long)(s->target - (s->site + 5));
	int32_t r32;

	memcpy(&r32, p + 1, 4);
	if ((long long)r32 != rel) {
		refuse(s, "does not reach its target (not a site of this libmarktap's marker.h)");
		return -1;
	}
	if (p[0] == want)
		return 0;
	if (p[0] != SITE_OFF && p[0] != SITE_ON) {
		refuse(s, "holds another instruction (a breakpoint?)");
		return -1;
	}
	if (mt_text_write((uintptr_t)p, &want, 1) < 0) {
		char why[96];

		snprintf(why, sizeof(why), "cannot be written (%s)", strerror(errno));
		refuse(s, why);
		return -1;
	}
	mt_text_sync();
	return 0;
}

static int gate_up(const struct mt_marker_site *s)
{
	return s->marker && s->marker->gate &&
	       __atomic_load_n(&s->marker->gate->enabled, __ATOMIC_ACQUIRE) != 0;
}

/* Every site of range r as its gate says; sites lock held. */
static void sync_range(struct mt_range *r)
{
	struct mt_marker_site *s;

	for (s = r->begin; s < (struct mt_marker_site *)r->end; s++)
		set_site(s, gate_up(s));
}

void mt_sites_update(struct mt_marker *m)
{
	struct mt_range *r;
	struct mt_marker_site *s;

	if (!__atomic_load_n(&site_ranges, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&sites_mutex);
	for (r = site_ranges; r; r = r->next)
		for (s = r->begin; s < (struct mt_marker_site *)r->end; s++)
			if (s->marker == m)
				set_site(s, gate_up(s));
	pthread_mutex_unlock(&sites_mutex);
}

static void *poller(void *arg)
{
	struct timespec period;
	struct mt_range *r;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	sigdelset(&all, SIGTRAP);   /* as the agent: a probe here may trap */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* the system call itself, not record.c's prctl (which tells the
	 * recorder of renames: this thread records nothing) */
	syscall(SYS_prctl, PR_SET_NAME, "marktap-sites", 0, 0, 0);
	/* a tenth of the period of slack: the kernel may fold our wake-up
	 * into another one (an idle program, a laptop's idle CPU) */
	syscall(SYS_prctl, PR_SET_TIMERSLACK, (unsigned long)poll_ms * 100000UL, 0, 0, 0);
	period.tv_sec = poll_ms / 1000;
	period.tv_nsec = (poll_ms % 1000) * 1000000L;
	for (;;) {
		while (nanosleep(&period, &period) < 0 && errno == EINTR)
			;
		period.tv_sec = poll_ms / 1000;
		period.tv_nsec = (poll_ms % 1000) * 1000000L;
		pthread_mutex_lock(&sites_mutex);
		for (r = site_ranges; r; r = r->next)
			sync_range(r);
		pthread_mutex_unlock(&sites_mutex);
	}
	return NULL;
}

/* The thread, once per process (a forked child starts its own); sites
 * lock held. */
static void start_poller(void)
{
	const char *env;

	if (poll_ms < 0) {
		env = secure_getenv("MARKTAP_SITE_POLL_MS");
		poll_ms = env && *env ? strtol(env, NULL, 10) : 100;
		if (poll_ms < 0 || poll_ms > 3600 * 1000)
			poll_ms = 100;
	}
	if (poller_running || poll_ms == 0)
		return;
	if (mt_lib_thread_start(poller, NULL, 64 * 1024) == 0)
		poller_running = 1;
}

static void before_fork(void) { pthread_mutex_lock(&sites_mutex); }
static void after_fork_parent(void) { pthread_mutex_unlock(&sites_mutex); }
static void after_fork_child(void)
{
	/* the parent's thread is not here: a child of a forking server has
	 * its semaphores raised by outside tools too */
	poller_running = 0;
	if (site_ranges)
		start_poller();
	pthread_mutex_unlock(&sites_mutex);
}

MT_EXPORT void __mt_sites_register(struct mt_marker_site *begin, struct mt_marker_site *end)
{
	static int atfork;
	struct mt_range *r;

	if (!begin || begin >= end)
		return;
	pthread_mutex_lock(&sites_mutex);
	if (!atfork && pthread_atfork(before_fork, after_fork_parent, after_fork_child) == 0)
		atfork = 1;
	r = mt_range_add(&site_ranges, begin, end);
	if (r) {
		sync_range(r);   /* gates raised before we ran */
		__atomic_store_n(&site_ranges, r, __ATOMIC_RELEASE);
		start_poller();
	}
	pthread_mutex_unlock(&sites_mutex);
}

MT_EXPORT void __mt_sites_unregister(struct mt_marker_site *begin, struct mt_marker_site *end)
{
	(void)end;
	pthread_mutex_lock(&sites_mutex);
	free(mt_range_drop(&site_ranges, begin));
	pthread_mutex_unlock(&sites_mutex);
}
