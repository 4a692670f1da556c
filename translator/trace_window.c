/*
 * trace_window.c - marktap --trace's --begin, --end and --tid: the part
 * of a stored trace whose events the handlers see, as lttng-analyses'
 * options of the same names choose it.
 *
 * A time is written as one of
 *
 *   +SECONDS[.FRACTION]             from the trace's first event
 *   HH:MM[:SS[.FRACTION]]           the time of day (local, as marktrace
 *                                   view shows it) on the first event's day
 *   YYYY-MM-DD HH:MM[:SS[.FRACTION]]  a local date and time
 *   NANOSECONDS                     since the epoch (gettimeofday_ns())
 *
 * and resolved against the first event's time when the replay starts.
 * Events outside the window, or of threads --tid does not name, run no
 * handler and move no timer; the trace's state (task names, thread
 * groups) still follows every event.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tr_run.h"

#define NS_PER_SEC 1000000000ll

static const char TIME_FORMS[] = "+SECONDS, HH:MM:SS[.FRACTION], YYYY-MM-DD HH:MM:SS[.FRACTION] "
				 "or nanoseconds since the epoch";

/* Digits at *p (at least one, at most max): their value, p past them. */
static int digits(const char **p, int max, int64_t *value)
{
	int n = 0;

	*value = 0;
	while (isdigit((unsigned char)**p) && n < max) {
		*value = *value * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n;
}

/* ".FRACTION" at *p, or nothing: nanoseconds. */
static int fraction(const char **p, int64_t *ns)
{
	int64_t v;
	int n;

	*ns = 0;
	if (**p != '.')
		return 0;
	(*p)++;
	if (!(n = digits(p, 9, &v)))
		return -1;
	for (; n < 9; n++)
		v *= 10;
	*ns = v;
	return 0;
}

/* HH:MM[:SS[.F]] at *p: nanoseconds since midnight. */
static int time_of_day(const char **p, int64_t *ns)
{
	int64_t h, m, s = 0, f;

	if (digits(p, 2, &h) < 1 || **p != ':' || h > 23)
		return -1;
	(*p)++;
	if (digits(p, 2, &m) != 2 || m > 59)
		return -1;
	if (**p == ':') {
		(*p)++;
		if (digits(p, 2, &s) != 2 || s > 60)
			return -1;
	}
	if (fraction(p, &f))
		return -1;
	*ns = ((h * 60 + m) * 60 + s) * NS_PER_SEC + f;
	return 0;
}

static int parse_time(const char *text, struct tr_trace_time *out)
{
	const char *p = text;
	int64_t v, f;

	if (*p == '+') {
		p++;
		if (!digits(&p, 12, &v) || fraction(&p, &f) || *p)
			return -1;
		*out = (struct tr_trace_time){ TR_TIME_FROM_START, v * NS_PER_SEC + f };
		return 0;
	}
	if (strchr(p, '-')) {           /* YYYY-MM-DD HH:MM... */
		struct tm tm = { .tm_isdst = -1 };
		int64_t y, mo, d, day_ns;
		if (digits(&p, 4, &y) != 4 || *p++ != '-' || digits(&p, 2, &mo) != 2 || *p++ != '-' ||
		    digits(&p, 2, &d) != 2 || (*p != ' ' && *p != 'T') || !mo || mo > 12 || !d || d > 31)
			return -1;
		p++;
		if (time_of_day(&p, &day_ns) || *p)
			return -1;
		tm.tm_year = (int)y - 1900;
		tm.tm_mon = (int)mo - 1;
		tm.tm_mday = (int)d;
		time_t midnight = mktime(&tm);
		if (midnight == (time_t)-1 || midnight < 0)
			return -1;
		*out = (struct tr_trace_time){ TR_TIME_EPOCH, (int64_t)midnight * NS_PER_SEC + day_ns };
		return 0;
	}
	if (strchr(p, ':')) {
		if (time_of_day(&p, &v) || *p)
			return -1;
		*out = (struct tr_trace_time){ TR_TIME_OF_DAY, v };
		return 0;
	}
	if (!digits(&p, 19, &v) || *p)
		return -1;
	*out = (struct tr_trace_time){ TR_TIME_EPOCH, v };
	return 0;
}

int tr_trace_time_parse(const char *option, const char *text, struct tr_trace_time *out, char **errmsg)
{
	if (parse_time(text, out) == 0)
		return 0;
	*errmsg = tr_printf("%s: cannot read '%s' as a time (%s)", option, text, TIME_FORMS);
	return -1;
}

uint64_t tr_trace_time_at(const struct tr_trace_time *t, uint64_t first, uint64_t none)
{
	struct tm tm;
	time_t sec = (time_t)(first / NS_PER_SEC), midnight;

	switch (t->kind) {
	case TR_TIME_EPOCH:
		return (uint64_t)t->ns;
	case TR_TIME_FROM_START:
		return first + (uint64_t)t->ns;
	case TR_TIME_OF_DAY:
		if (!localtime_r(&sec, &tm))
			return none;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		midnight = mktime(&tm);
		return midnight == (time_t)-1 ? none : (uint64_t)midnight * NS_PER_SEC + (uint64_t)t->ns;
	default:
		return none;
	}
}

int tr_trace_tids_parse(const char *text, struct tr_vec *tids, char **errmsg)
{
	const char *p = text;

	for (;;) {
		int64_t v;
		if (!digits(&p, 10, &v) || v > INT32_MAX || (*p && *p != ',')) {
			*errmsg = tr_printf("--tid: cannot read '%s' as thread ids (N or N,M,...)", text);
			return -1;
		}
		tr_vec_push(tids, (void *)(intptr_t)v);
		if (!*p)
			return 0;
		p++;
	}
}
