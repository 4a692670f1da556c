/*
 * analysis_opts.h - lttng-analyses' options for the analyses of scripts/
 * (--min, --max, --freq-resolution, --period-begin/-end/-key, --mi):
 * read from the command line, set as tapsets/analysis.stp's globals, and
 * refused after pass 2 by an analysis that does not read them.
 */
#ifndef MARKTAP_ANALYSIS_OPTS_H
#define MARKTAP_ANALYSIS_OPTS_H

#include <stdbool.h>
#include "tr.h"

#define TR_ANALYSIS_NOPTIONS 8

struct tr_analysis_opts {
	bool given[TR_ANALYSIS_NOPTIONS];
	const char *values[TR_ANALYSIS_NOPTIONS];   /* as -G writes them */
};

/* --OPTION VALUE: 0, -1 when OPTION is none of these, 1 and *errmsg when
 * VALUE is not one it takes. */
int tr_analysis_option(struct tr_analysis_opts *ao, const char *option, const char *value,
		       char **errmsg);
/* Before pass 2: the options as -G settings; 0, or 1 and *errmsg when
 * they disagree (--min above --max, --period-end without --period-begin). */
int tr_analysis_apply(struct tr_session *s, const struct tr_analysis_opts *ao, char **errmsg);
/* marktap --script NAME --trace DIR: MAXMAPENTRIES and
 * MAXACTION_INTERRUPTIBLE raised, where -D did not set them. */
void tr_analysis_offline_limits(struct tr_session *s);
/* After pass 2: 0, or 1 and *errmsg when SCRIPT reads no global of an
 * option given. */
int tr_analysis_check(const struct tr_session *s, const struct tr_analysis_opts *ao,
		      const char *script, char **errmsg);

#endif
