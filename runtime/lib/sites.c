/*
 * sites.c - patched marker sites (MARKTAP_PATCHED_SITES in marker.h).
 *
 * A patched site is a 5-byte nop in the program's code; while its marker's
 * gate is raised (enabled != 0: armed by marktrace or marktap, or an SDT
 * user's semaphore) it is a jump to the marker's code, and a nop again
 * once the gate is down.  Arming and disarming patch at once
 * (mt_sites_update, from registry.c).  Outside tools raise the semaphore
 * with nothing telling the process, so a thread ("marktap-sites") looks
 * at every patched site's gate each MARKTAP_SITE_POLL_MS milliseconds
 * (100 by default; 0: no thread, outside tools never reach these sites),
 * and once when an object registers its sites (a program started under
 * bpftrace -c has its semaphores raised before its constructors run).
 *
 * The nop and the jump differ only in the five bytes of one aligned
 * 8-byte word, rewritten with one store through /proc/self/mem
 * (runtime/script/text.c: the page never becomes writable and
 * executable), then every thread serialised: a thread runs the old
 * instruction or the new one, never a mix.  A word that holds neither
 * (a breakpoint of a debugger or a uprobe on the site) is left alone and
 * said once.  Lock order: the registry's, then this one.
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
#include <time.h>
#include "mt_lib.h"
#include "../script/text.h"

static pthread_mutex_t sites_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct mt_range *site_ranges;
static long poll_ms = -1;         /* -1: not read yet */
static int poller_running;        /* in this process (not a forked parent's) */
static unsigned long patched_count, refused_count;

static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* The jump of site s: e9 and the rel32 from the end of the instruction;
 * 0, or -1 when the target is out of a rel32's reach (not ours). */
static int jump_bytes(const struct mt_marker_site *s, unsigned char out[5])
{
	long long rel = (long long)(s->target - (s->site + 5));
	int32_t r32 = (int32_t)rel;

	if ((long long)r32 != rel)
		return -1;
	out[0] = 0xe9;
	memcpy(out + 1, &r32, 4);
	return 0;
}

static void refuse(const struct mt_marker_site *s, const char *why)
{
	refused_count++;
	if (refused_count <= 8)
		fprintf(stderr, "libmarktap: marker '%s': its patched site at %#lx %s; "
			"the site is left as it is\n",
			s->marker && s->marker->name ? s->marker->name : "?", s->site, why);
}

/* Site s as a jump (on) or a nop; sites lock held.  0, or -1 (said). */
static int set_site(const struct mt_marker_site *s, int on)
{
	uintptr_t at = (uintptr_t)s->site, word = at & ~(uintptr_t)7;
	unsigned off = (unsigned)(at - word);
	unsigned char jmp[5], v[8];
	const unsigned char *want, *other;

	if (off > 3 || jump_bytes(s, jmp) < 0) {
		refuse(s, "is not a site libmarktap can patch (build with this libmarktap's marker.h)");
		return -1;
	}
	memcpy(v, (const void *)word, 8);
	want = on ? jmp : nop5;
	other = on ? nop5 : jmp;
	if (!memcmp(v + off, want, 5))
		return 0;
	if (memcmp(v + off, other, 5)) {
		refuse(s, "holds other bytes than the nop or the jump (a breakpoint?)");
		return -1;
	}
	memcpy(v + off, want, 5);
	if (mt_text_write(word, v, 8) < 0) {
		char why[96];

		snprintf(why, sizeof(why), "cannot be written (%s)", strerror(errno));
		refuse(s, why);
		return -1;
	}
	mt_text_sync();
	patched_count++;
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
	prctl(PR_SET_NAME, "marktap-sites", 0, 0, 0);
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
	pthread_attr_t attr;
	pthread_t thread;
	const char *env;

	if (poll_ms < 0) {
		env = secure_getenv("MARKTAP_SITE_POLL_MS");
		poll_ms = env && *env ? strtol(env, NULL, 10) : 100;
		if (poll_ms < 0 || poll_ms > 3600 * 1000)
			poll_ms = 100;
	}
	if (poller_running || poll_ms == 0)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (pthread_create(&thread, &attr, poller, NULL) == 0)
		poller_running = 1;
	pthread_attr_destroy(&attr);
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
