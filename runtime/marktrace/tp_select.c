/*
 * tp_select.c - which kernel tracepoints: where tracefs is, its
 * available_events against record's -e patterns (record_tp.c's), and
 * marktrace list --tracepoints.  The formats: tp_format.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "marktrace.h"
#include "record_tp.h"

const char *mt_tp_tracefs(void)
{
	static const char *const where[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[64];
	unsigned i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(path, sizeof(path), "%s/events", where[i]);
		/* a folder we may not enter is there: its error says why */
		if (access(path, F_OK) == 0 || errno == EACCES)
			return where[i];
	}
	return NULL;
}

int mt_tp_wanted(const char *patterns)
{
	for (const char *p = patterns; *p; p += strcspn(p, "\n"), p += *p == '\n')
		if (memchr(p, ':', strcspn(p, "\n")) && *p != '!')
			return 1;
	return 0;
}

int mt_tp_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = -99;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -99;
		fclose(f);
	}
	return v;
}

void mt_tp_list_free(struct mt_tp_list *l)
{
	while (l->n)
		free(l->names[--l->n]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

static int list_add(struct mt_tp_list *l, const char *name)
{
	if (l->n == l->cap) {
		unsigned cap = l->cap ? 2 * l->cap : 256;
		char **v = realloc(l->names, cap * sizeof(*v));
		if (!v)
			return -1;
		l->names = v;
		l->cap = cap;
	}
	if (!(l->names[l->n] = strdup(name)))
		return -1;
	l->n++;
	return 0;
}

/* Every tracepoint the kernel offers (available_events: "subsys:name"). */
static int read_available(const char *tracefs, struct mt_tp_list *all, const char *cmd)
{
	char path[256], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/available_events", tracefs);
	f = fopen(path, "re");
	if (!f) {
		int e = errno;
		if (e == EACCES || e == EPERM)
			mt_error("%s: tracepoints take root, or CAP_PERFMON and read access to "
				 "tracefs (kernel.perf_event_paranoid is %d): cannot read %s: %s",
				 cmd, mt_tp_paranoid(), path, strerror(e));
		else
			mt_error("%s: cannot read %s: %s", cmd, path, strerror(e));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strchr(line, ':') && list_add(all, line) < 0) {
			fclose(f);
			mt_error("%s: out of memory", cmd);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

/* The patterns with a ':' (tracepoints; "!..." excludes): the names they
 * take, in available_events' order.  A pattern that takes none is an
 * error naming it; so is a pattern without ':' when there is no command
 * (whose user markers it could name): marktap.ko's markers and
 * tracepoints are not recorded together. */
int mt_tp_select(const struct mt_record_opts *o, const char *tracefs, struct mt_tp_list *out)
{
	struct mt_tp_list all = { 0 };
	const char *p;
	int bad = 0;
	unsigned i;

	for (p = o->patterns; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		int n = (int)strcspn(p, "\n");
		if (!memchr(p, ':', (size_t)n) && !*o->command) {
			mt_error("record: --kernel: '%.*s' is not a tracepoint (SUBSYS:NAME): "
				 "a recording takes tracepoints or marktap.ko's kernel markers, "
				 "not both", n, p);
			bad = 1;
		}
	}
	if (bad || read_available(tracefs, &all, "record: --kernel") < 0) {
		mt_tp_list_free(&all);
		return -1;
	}
	for (p = o->patterns; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char pat[MT_PATTERNS_MAX];
		unsigned taken = 0;

		snprintf(pat, sizeof(pat), "%.*s", (int)strcspn(p, "\n"), p);
		if (*pat == '!' || !strchr(pat, ':'))
			continue;
		for (i = 0; i < all.n; i++)
			taken += fnmatch(pat, all.names[i], 0) == 0;
		if (!taken) {
			mt_error("record: --kernel: no tracepoint matches '%s' "
				 "(marktrace list --tracepoints lists them)", pat);
			bad = 1;
		}
	}
	for (i = 0; i < all.n && !bad; i++) {
		int in = 0, out_ = 0;
		for (p = o->patterns; *p; p += strcspn(p, "\n"), p += *p == '\n') {
			char pat[MT_PATTERNS_MAX];
			snprintf(pat, sizeof(pat), "%.*s", (int)strcspn(p, "\n"), p);
			if (!strchr(pat, ':'))
				continue;
			if (*pat == '!')
				out_ |= fnmatch(pat + 1, all.names[i], 0) == 0;
			else
				in |= fnmatch(pat, all.names[i], 0) == 0;
		}
		if (in && !out_ && list_add(out, all.names[i]) < 0)
			bad = 1;
	}
	mt_tp_list_free(&all);
	if (!bad && !out->n)
		mt_error("record: --kernel: the exclusions leave no tracepoint to record");
	else if (!bad && out->n > MT_EVENTS_MAX)
		mt_error("record: --kernel: the patterns take %u tracepoints; a recording "
			 "holds at most %u", out->n, MT_EVENTS_MAX);
	else if (!bad)
		return 0;
	return -1;
}

/* marktrace list --tracepoints [GLOB...]: NAME "FORMAT", one a line. */
int mt_list_tracepoints(char **patterns, int npatterns)
{
	const char *tracefs = mt_tp_tracefs();
	struct mt_tp_list all = { 0 };
	struct mt_tp_event *ev = malloc(sizeof(*ev));
	unsigned i;
	int k, rc = 0, *taken = calloc((size_t)npatterns + 1, sizeof(int));

	if (!tracefs || !ev || !taken) {
		mt_error("list: --tracepoints: %s", !tracefs ? "no tracefs (neither "
			 "/sys/kernel/tracing nor /sys/kernel/debug/tracing)" : "out of memory");
		free(ev);
		free(taken);
		return 1;
	}
	if (read_available(tracefs, &all, "list: --tracepoints") < 0)
		rc = 1;
	for (i = 0; i < all.n; i++) {
		char err[512];
		int want = !npatterns;

		for (k = 0; k < npatterns; k++)
			if (fnmatch(patterns[k], all.names[i], 0) == 0)
				want = taken[k] = 1;
		if (!want)
			continue;
		if (mt_tp_read_event(tracefs, all.names[i], ev, err, sizeof(err)) < 0)
			printf("%s unavailable: %s\n", all.names[i], err);
		else
			printf("%s \"%s\"\n", ev->name, ev->format);
	}
	for (k = 0; k < npatterns && !rc; k++)
		if (!taken[k]) {
			mt_error("list: --tracepoints: no tracepoint matches '%s'", patterns[k]);
			rc = 1;
		}
	mt_tp_list_free(&all);
	free(ev);
	free(taken);
	return rc;
}
