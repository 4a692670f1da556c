/*
 * analysis_opts.c - the options lttng-analyses users type, given to the
 * analyses of scripts/: --min and --max (duration bounds, microseconds),
 * --freq-resolution (a frequency histogram's bucket count),
 * --period-begin, --period-end and --period-key (the events and the
 * field that delimit a period), and --mi (alias --json: one JSON
 * document on stdout).
 *
 * Each option sets a global of tapsets/analysis.stp, as -G would
 * (__analysis_min_ns...), so the analyses stay in the stap language.  An
 * analysis takes an option when its global survives elaboration (the
 * script, or the tapset functions it calls, reads it); any other is
 * refused after pass 2, so `--script cputop --min 5` is an error and not
 * a silent no-op.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "tr.h"
#include "analysis_opts.h"

/* The options, and the global each sets. */
static const struct {
	const char *option;
	const char *global;
} options[] = {
	{ "min", "__analysis_min_ns" },
	{ "max", "__analysis_max_ns" },
	{ "freq-resolution", "__analysis_freq_resolution" },
	{ "period-begin", "__analysis_period_begin" },
	{ "period-end", "__analysis_period_end" },
	{ "period-key", "__analysis_period_key" },
	{ "mi", "__analysis_mi" },
	{ "json", "__analysis_mi" },
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))
#define MAX_RESOLUTION 1000

/* "US[.FRACTION]" microseconds (at most 3 fraction digits): nanoseconds. */
static int parse_us(const char *text, int64_t *ns)
{
	const char *p = text;
	int64_t us = 0, frac = 0;
	int n = 0, f = 0;

	for (; isdigit((unsigned char)*p) && n < 12; p++, n++)
		us = us * 10 + (*p - '0');
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p) && f < 3; p++, f++)
			frac = frac * 10 + (*p - '0');
	if (!n || *p)
		return -1;
	for (; f < 3; f++)
		frac *= 10;
	*ns = us * 1000 + frac;
	return 0;
}

/* An event or field name: letters, digits and _ : . - * (no quote). */
static int parse_name(const char *text)
{
	if (!*text)
		return -1;
	for (const char *p = text; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_:.-", *p))
			return -1;
	return 0;
}

static int set(struct tr_analysis_opts *ao, unsigned which, const char *value)
{
	ao->given[which] = true;
	ao->values[which] = value;
	return 0;
}

int tr_analysis_option(struct tr_analysis_opts *ao, const char *option, const char *value,
		       char **errmsg)
{
	unsigned i;
	int64_t v;
	char *end;

	for (i = 0; i < NOPTIONS && strcmp(options[i].option, option); i++)
		;
	if (i == NOPTIONS)
		return -1;
	if (!strcmp(option, "min") || !strcmp(option, "max")) {
		if (parse_us(value, &v)) {
			*errmsg = tr_printf("--%s: '%s' is not a duration in microseconds "
					    "(US[.FRACTION], at most 3 decimals)", option, value);
			return 1;
		}
		return set(ao, i, tr_printf("%" PRId64, v));
	}
	if (!strcmp(option, "freq-resolution")) {
		errno = 0;
		v = strtoll(value, &end, 10);
		if (!isdigit((unsigned char)*value) || *end || errno || v < 1 || v > MAX_RESOLUTION) {
			*errmsg = tr_printf("--freq-resolution: '%s' is not a bucket count (1 to %d)",
					    value, MAX_RESOLUTION);
			return 1;
		}
		return set(ao, i, tr_printf("%" PRId64, v));
	}
	if (!strcmp(option, "mi") || !strcmp(option, "json"))
		return set(ao, i, "1");
	if (parse_name(value)) {
		*errmsg = tr_printf("--%s: '%s' is not %s name", option, value,
				    strcmp(option, "period-key") ? "an event" : "a field");
		return 1;
	}
	return set(ao, i, tr_strdup(value));
}

/* The value given for OPTION, or NULL. */
static const char *given(const struct tr_analysis_opts *ao, const char *option)
{
	for (unsigned i = 0; i < NOPTIONS; i++)
		if (ao->given[i] && !strcmp(options[i].option, option))
			return ao->values[i];
	return NULL;
}

int tr_analysis_apply(struct tr_session *s, const struct tr_analysis_opts *ao, char **errmsg)
{
	const char *min = given(ao, "min"), *max = given(ao, "max");

	if (min && max && strtoll(min, NULL, 10) > strtoll(max, NULL, 10)) {
		*errmsg = tr_printf("--min is above --max");
		return 1;
	}
	if (!given(ao, "period-begin") && (given(ao, "period-end") || given(ao, "period-key"))) {
		*errmsg = tr_printf("--%s goes with --period-begin EVENT", given(ao, "period-end") ?
				    "period-end" : "period-key");
		return 1;
	}
	for (unsigned i = 0; i < NOPTIONS; i++)
		if (ao->given[i])
			tr_vec_push(&s->globals_set, tr_printf("%s=%s", options[i].global, ao->values[i]));
	return 0;
}

/*
 * Over a stored trace an analysis protects no traced system: its maps
 * (a frequency analysis keeps every distinct duration) and its end probe
 * (which draws them) grow with the trace, as lttng-analyses' do.  The
 * limits that bound live handlers are raised for it, unless -D set them.
 */
void tr_analysis_offline_limits(struct tr_session *s)
{
	static const char *const raised[][2] = {
		{ "MAXMAPENTRIES", "MAXMAPENTRIES=1000000" },
		{ "MAXACTION_INTERRUPTIBLE", "MAXACTION_INTERRUPTIBLE=1000000000" },
	};

	for (unsigned i = 0; i < sizeof(raised) / sizeof(raised[0]); i++)
		if (tr_define_value(s, raised[i][0], INT64_MIN) == INT64_MIN)
			tr_vec_push(&s->defines, (void *)raised[i][1]);
}

int tr_analysis_check(const struct tr_session *s, const struct tr_analysis_opts *ao,
		      const char *script, char **errmsg)
{
	for (unsigned i = 0; i < NOPTIONS; i++) {
		bool used = false;
		if (!ao->given[i])
			continue;
		for (unsigned k = 0; k < s->globals.n && !used; k++)
			used = !strcmp(((const struct tr_sym *)s->globals.items[k])->name, options[i].global);
		if (!used) {
			const char *base = strrchr(script, '/');
			*errmsg = tr_printf("%s takes no --%s (marktap(1), ANALYSES: the options each takes)",
					    base ? base + 1 : script, options[i].option);
			return 1;
		}
	}
	return 0;
}

_Static_assert(NOPTIONS == TR_ANALYSIS_NOPTIONS, "analysis_opts.h sizes the options table");
