/*
 * record_kernel.c - marktrace record --kernel [-- CMD]: the kernel markers
 * of marktap.ko, and with a command its user markers too, as two traces
 * (DIR/kernel, DIR/ust) on one clock that readers merge in time order.
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

	if (what == MT_KCHECK_UNKNOWN) {
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
 * whose user markers it might be), a marker the kernel cannot provide a
 * warning with the reason, and a recording with no kernel marker at all
 * an error.
 */
static int check_patterns(const struct mt_record_opts *o)
{
	struct mt_kernel_marker *v;
	struct check c = { o, 0, 0 };
	size_t n;
	int usable, rc = mt_kernel_catalogue(&v, &n);

	if (rc < 0)
		return kernel_fail("reading the catalogue", rc);
	usable = mt_kernel_check(o->patterns, v, n, check_report, &c);
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

int mt_record_kernel(struct mt_record_opts *o, const char *dir)
{
	struct mt_kernel k;
	struct mt_ctf_clock clock;
	struct mt_ctf_trace kt, ut;
	struct mt_session *us = NULL;
	size_t ulen = 0;
	int ufd = -1, error = 0, rc, status = 0;
	pid_t child = 0;
	char path[4096], err[256];

	if (o->pid) {
		mt_error("record: --kernel with -p is not supported; give -- CMD instead");
		return 2;
	}
	if ((rc = mt_kernel_open(&k)) < 0)
		return kernel_fail("opening /dev/marktap", rc);
	if (check_patterns(o)) {
		mt_kernel_close(&k);
		return 1;
	}
	if ((rc = mt_kernel_configure(&k, o->subbuf_size, o->num_subbuf,
				      o->overwrite ? MT_RING_OVERWRITE : MT_RING_DISCARD)) < 0)
		return kernel_fail("configuring the buffers", rc);
	if ((rc = mt_kernel_set_patterns(&k, o->patterns)) < 0)
		return kernel_fail("setting the event patterns", rc);
	mt_ctf_clock_now(&clock);
	snprintf(path, sizeof(path), *o->command ? "%s/kernel" : "%s", dir);
	if (mt_ctf_open(&kt, path, k.session->ncpu, "kernel", &clock, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		return 1;
	}
	if (*o->command) {
		ufd = mt_record_create_session(o, &us, &ulen);
		snprintf(path, sizeof(path), "%s/ust", dir);
		/* the same clock as the kernel's trace, read the user session's way */
		snprintf(clock.source, sizeof(clock.source), "%s", mt_uclock_describe());
		if (ufd < 0 || mt_ctf_open(&ut, path, us->ncpu, "ust", &clock, err, sizeof(err)) < 0) {
			if (ufd >= 0)
				mt_error("record: %s", err);
			return 1;
		}
	}
	rc = mt_kernel_start(&k);
	if (rc < 0)
		return kernel_fail("starting", rc);
	if (!o->quiet)
		fprintf(stderr, "marktrace: %d kernel markers armed\n", rc);
	if (*o->command && (child = mt_record_spawn(o->command, ufd)) < 0)
		error = 1;
	while (!error && !mt_record_stopped()) {
		int moved = mt_record_consume(k.session, &kt, &error);
		if (us) {
			moved += mt_record_consume(us, &ut, &error);
			mt_uclock_steer(us);
		}
		if (child > 0 && waitpid(child, &status, WNOHANG) == child)
			break;
		if (!moved) {
			struct timespec pause = { 0, 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
	}
	if ((rc = mt_kernel_stop(&k)) < 0)
		kernel_fail("stopping", rc);
	mt_record_finish(k.session, &kt, o->quiet, &error);
	if (us)
		mt_record_finish(us, &ut, o->quiet, &error);
	if (!o->quiet)
		fprintf(stderr, "marktrace: %llu kernel events%s%llu user events, in %s\n",
			(unsigned long long)kt.events, us ? " and " : "",
			us ? (unsigned long long)ut.events : 0ull, dir);
	mt_ctf_close(&kt);
	mt_kernel_close(&k);
	if (us) {
		mt_ctf_close(&ut);
		munmap(us, ulen);
		close(ufd);
	}
	return error;
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
