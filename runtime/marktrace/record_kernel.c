/*
 * record_kernel.c - marktrace record --kernel [-- CMD]: the kernel markers
 * of marktap.ko, and with a command its user markers too, as two traces
 * (DIR/kernel, DIR/ust) on one clock that readers merge in time order;
 * with --relay the same traces go to lttng-relayd (cmd_record.c, relay.c),
 * through the same trace writer as a user session's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "kernel.h"
#include "uclock.h"
#include "marktrace.h"
#include "record.h"
#include "record_tp.h"

static int kernel_fail(const char *what, int rc)
{
	mt_error("record: --kernel: %s: %s", what, mt_kernel_strerror(rc));
	return 1;
}

/* Is name one of the patterns, as written (not a glob's match)? */
static int named(const char *patterns, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = patterns; *p; p += strcspn(p, "\n"), p += *p == '\n')
		if (!strncmp(p, name, len) && (p[len] == '\n' || !p[len]))
			return 1;
	return 0;
}

struct check {
	const struct mt_record_opts *o;
	int unknown;          /* patterns that name no kernel marker */
	int globbed;          /* unavailable markers only a glob took */
};

static void check_report(int what, const char *name, const char *why, void *arg)
{
	struct check *c = arg;

	if (what == MT_KCHECK_UNKNOWN && name[0] == '!') {
		if (!*c->o->command)   /* with one: judged with its markers, at the end */
			mt_error("record: warning: -e '%s' excludes no kernel marker "
				 "(marktrace list --kernel lists them)", name);
	} else if (what == MT_KCHECK_UNKNOWN) {
		if (!*c->o->command) {
			mt_error("record: --kernel: no kernel marker matches '%s' "
				 "(marktrace list --kernel lists them)", name);
			c->unknown++;
		} else if (!c->o->quiet) {
			fprintf(stderr, "marktrace: '%s' matches no kernel marker: "
				"only the command's user markers can match it\n", name);
		}
	} else if (named(c->o->patterns, name)) {
		fprintf(stderr, "marktrace: warning: kernel marker %s is unavailable on this "
			"kernel: %s\n", name, why);
	} else {
		c->globbed++;
	}
}

/*
 * The patterns against the module's catalogue, before anything is
 * created: a name the module does not know is an error (without a command,
 * whose user markers it might be), an exclusion that excludes none of its
 * markers a warning (with a command, at the end), a marker the kernel
 * cannot provide a warning with the reason, and a recording with no
 * kernel marker at all an error.  hits: the patterns that match a kernel
 * marker, bits as mt_patterns_hits'.
 */
static int check_patterns(const struct mt_record_opts *o, mt_u64 *hits)
{
	struct mt_kernel_marker *v;
	struct check c = { o, 0, 0 };
	size_t n;
	int usable, rc = mt_kernel_catalogue(&v, &n);

	if (rc < 0)
		return kernel_fail("reading the catalogue", rc);
	usable = mt_kernel_check(o->patterns, v, n, check_report, &c);
	for (size_t i = 0; i < n; i++)   /* which patterns the kernel's markers answer */
		*hits |= mt_patterns_hits(o->patterns, v[i].name);
	free(v);
	if (c.globbed && !o->quiet)
		fprintf(stderr, "marktrace: %d of the kernel markers the patterns match %s "
			"unavailable on this kernel (marktrace list --kernel says why)\n",
			c.globbed, c.globbed == 1 ? "is" : "are");
	if (c.unknown)
		return 1;
	if (!usable) {
		mt_error("record: --kernel: no kernel marker to record: the patterns match "
			 "none that this kernel provides");
		return 1;
	}
	return 0;
}

/* One trace of the recording: DIR[/sub] (none when dir is NULL: relayd
 * only) and relayd's copy (--relay), its first metadata written; 0, or
 * -1 said. */
static int open_trace(struct mt_ctf_trace *t, const char *dir, const char *sub, unsigned ncpu,
		      const char *domain, const struct mt_ctf_clock *clock, int last)
{
	char path[4096], err[512];

	if (dir && sub)
		snprintf(path, sizeof(path), "%s/%s", dir, sub);
	else if (dir)
		snprintf(path, sizeof(path), "%s", dir);
	if (mt_ctf_open(t, dir ? path : NULL, ncpu, domain, clock, err, sizeof(err)) < 0 ||
	    mt_record_relay_attach(t, sub, ncpu, last, err, sizeof(err)) < 0 ||
	    mt_ctf_write_metadata(t, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		return -1;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A recording under way: the kernel's session, the command's if any. */
struct krec {
	struct mt_kernel k;
	struct mt_ctf_trace kt, ut;
	struct mt_session *us;
	pid_t child;
	int status, error;
};

/*
 * Copy packets until the command ends or we are told to stop.  The switch
 * timer closes the open sub-buffers every period (discard mode), as for a
 * user session: slow CPUs' events then reach the trace, and relayd, within
 * a period; a live session's quiet streams get beacons after the copy.
 */
static void kernel_loop(struct mt_record_opts *o, struct krec *kr)
{
	double period = (o->switch_ms ? o->switch_ms : 1000) / 1000.0, last_switch = now_s();

	while (!kr->error && !mt_record_stopped()) {
		mt_u64 beacon = 0;
		int moved;

		if (o->switch_ms && !o->overwrite && now_s() - last_switch > period) {
			mt_record_switch(kr->k.session);
			if (kr->us)
				mt_record_switch(kr->us);
			beacon = mt_clock_ns() - (mt_u64)(period * 1e9);
			last_switch = now_s();
		}
		moved = mt_record_consume(kr->k.session, &kr->kt, &kr->error);
		if (kr->us) {
			moved += mt_record_consume(kr->us, &kr->ut, &kr->error);
			mt_uclock_steer(kr->us);
		}
		if (beacon)
			mt_record_relay_tick(beacon);
		if (kr->child > 0 && waitpid(kr->child, &kr->status, WNOHANG) == kr->child)
			break;
		if (!moved) {
			struct timespec pause = { 0, 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
	}
}

/* The traces DIR (kernel alone) or DIR/kernel and DIR/ust (with a
 * command), at relayd in the same folders of the session's. */
static int kernel_traces(struct mt_record_opts *o, const char *dir, struct krec *kr,
			 int *ufd, size_t *ulen)
{
	struct mt_ctf_clock clock;
	int cmd = *o->command != NULL;

	mt_ctf_clock_now(&clock);
	if (open_trace(&kr->kt, dir, cmd ? "kernel" : NULL, kr->k.session->ncpu, "kernel", &clock,
		       !cmd) < 0)
		return -1;
	if (!cmd)
		return 0;
	*ufd = mt_record_create_session(o, &kr->us, ulen);
	if (*ufd < 0)
		return -1;
	/* the same clock as the kernel's trace, read the user session's way */
	snprintf(clock.source, sizeof(clock.source), "%s", mt_uclock_describe());
	return open_trace(&kr->ut, dir, "ust", kr->us->ncpu, "ust", &clock, 1);
}

/*
 * With a command: the patterns that match no kernel marker are for its
 * user markers; those that took none of them either are said at the end,
 * as a user recording says them, and why, when the command never joined
 * (not linked with libmarktap: a kernel recording of make, say, is
 * usual, so that alone is said only when a pattern was meant for it).
 */
static void say_user_patterns(const struct mt_record_opts *o, const struct krec *kr,
			      mt_u64 kernel_hits)
{
	if (!mt_record_say_patterns(o, kr->us, &kr->ut, 1, kernel_hits) ||
	    mt_load_relaxed(&kr->us->processes))
		return;
	mt_error("record: warning: no process joined the recording of user markers: '%s' "
		 "(and what it ran) is not linked with libmarktap", o->command[0]);
}

int mt_record_kernel(struct mt_record_opts *o, const char *dir)
{
	struct krec kr;
	size_t ulen = 0;
	int ufd = -1, rc;
	char where[4200];
	mt_u64 kernel_hits = 0;

	/* SUBSYS:NAME or --function: tracepoints and kprobes, by perf */
	if (mt_tp_wanted(o->patterns) || *o->functions)
		return mt_record_tp(o, dir);
	memset(&kr, 0, sizeof(kr));
	if (o->pid) {
		mt_error("record: --kernel with -p is not supported; give -- CMD instead");
		return 2;
	}
	if ((rc = mt_kernel_open(&kr.k)) < 0)
		return kernel_fail("opening /dev/marktap", rc);
	if (check_patterns(o, &kernel_hits)) {
		mt_kernel_close(&kr.k);
		return 1;
	}
	if ((rc = mt_kernel_configure(&kr.k, o->subbuf_size, o->num_subbuf,
				      o->overwrite ? MT_RING_OVERWRITE : MT_RING_DISCARD)) < 0)
		return kernel_fail("configuring the buffers", rc);
	if ((rc = mt_kernel_set_patterns(&kr.k, o->patterns)) < 0)
		return kernel_fail("setting the event patterns", rc);
	if (kernel_traces(o, dir, &kr, &ufd, &ulen) < 0)
		return 1;
	rc = mt_kernel_start(&kr.k);
	if (rc < 0)
		return kernel_fail("starting", rc);
	if (!o->quiet)
		fprintf(stderr, "marktrace: %d kernel markers armed\n", rc);
	if (*o->command && (kr.child = mt_record_spawn(o->command, ufd)) < 0)
		kr.error = 1;
	kernel_loop(o, &kr);
	if ((rc = mt_kernel_stop(&kr.k)) < 0)
		kernel_fail("stopping", rc);
	mt_record_finish(kr.k.session, &kr.kt, o->quiet, &kr.error);
	if (kr.us)
		mt_record_finish(kr.us, &kr.ut, o->quiet, &kr.error);
	snprintf(where, sizeof(where), "%s%s%s%s", dir ? dir : "",
		 dir && *mt_record_relay_path() ? " and " : "",
		 *mt_record_relay_path() ? "relayd's " : "", mt_record_relay_path());
	if (!o->quiet && kr.us)
		fprintf(stderr, "marktrace: %llu kernel events and %llu user events, in %s\n",
			(unsigned long long)kr.kt.events, (unsigned long long)kr.ut.events, where);
	else if (!o->quiet)
		fprintf(stderr, "marktrace: %llu kernel events, in %s\n",
			(unsigned long long)kr.kt.events, where);
	if (kr.us && !kr.error)
		say_user_patterns(o, &kr, kernel_hits);
	mt_record_relay_finish(dir, &kr.error);
	mt_ctf_close(&kr.kt);
	mt_kernel_close(&kr.k);
	if (kr.us) {
		mt_ctf_close(&kr.ut);
		munmap(kr.us, ulen);
		close(ufd);
	}
	return kr.error;
}

int mt_list_kernel(void)
{
	struct mt_kernel_marker *m;
	size_t n, i;
	int rc = mt_kernel_catalogue(&m, &n);

	if (rc < 0) {
		mt_error("list --kernel: %s", mt_kernel_strerror(rc));
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%s \"%s\" %s%s%s\n", m[i].name, m[i].format,
		       m[i].available ? "" : MT_UNAVAILABLE, m[i].source,
		       m[i].armed ? " [armed]" : "");
	free(m);
	return 0;
}
