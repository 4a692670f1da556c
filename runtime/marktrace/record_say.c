/*
 * record_say.c - what a recording says of its -e patterns at the end,
 * shared by the user-space and the kernel recordings (cmd_record.c,
 * record_kernel.c), below both.
 */
#include <stdio.h>
#include <string.h>
#include "marktrace.h"
#include "mt_ctf.h"
#include "mt_session.h"
#include "record.h"

/* Is c a marker's class (not one libmarktap writes for itself)? */
int mt_record_is_marker_class(const struct mt_ctf_class *c)
{
	return !c->is_thread && strncmp(c->name, "marktap_statedump:", 18) != 0;
}

/* Does a marker class of the trace match glob? */
static int trace_has(const struct mt_ctf_trace *t, const char *glob)
{
	unsigned i;

	for (i = 0; i < t->nclasses; i++)
		if (mt_record_is_marker_class(t->classes[i]) && mt_glob_match(glob, t->classes[i]->name))
			return 1;
	return 0;
}

/* Who the user side of a recording is, for messages. */
void mt_record_who(const struct mt_record_opts *o, char *who, size_t size)
{
	if (o->pid)
		snprintf(who, size, "process %d", (int)o->pid);
	else
		snprintf(who, size, "'%s'", o->command[0]);
}

/*
 * Each -e glob that took nothing, named in a warning at the end: one that
 * took no marker of the processes that joined (its markers are those the
 * trace holds: libmarktap registers a class for each marker it arms), and
 * one that matched none at all (libmarktap's pattern_hits: an exclusion
 * that excludes nothing is most likely misspelt, and lets through what it
 * was meant to stop).  With kernel, elsewhere has the patterns (bits as
 * pattern_hits) that matched a kernel marker of the same recording, said
 * nothing of.  Returns how many were said.
 */
unsigned mt_record_say_patterns(const struct mt_record_opts *o, const struct mt_session *s,
				const struct mt_ctf_trace *t, int kernel, mt_u64 elsewhere)
{
	char who[4200];
	const char *p, *nor = kernel ? " nor any kernel marker" : "";
	unsigned nth, said = 0;
	mt_u64 hits = mt_load_relaxed(&s->pattern_hits);   /* the program's to write: a hint */

	mt_record_who(o, who, sizeof(who));
	/* nth counts the non-empty lines, as mt_patterns_hits does */
	for (p = o->patterns, nth = 0; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char one[MT_EVENT_NAME_MAX + 64];
		size_t n = strcspn(p, "\n");
		int known = nth < 64;   /* past 64 pattern_hits says nothing */
		int here = known && (hits >> nth & 1), kernel_too = known && (elsewhere >> nth & 1);

		if (!n)
			continue;
		nth++;
		snprintf(one, sizeof(one), "%.*s", (int)n, p);
		if (kernel_too || (kernel && !known))
			continue;
		if (one[0] == '!') {
			if (known && !here && ++said)
				mt_error("record: warning: -e '%s' excluded nothing: no marker of %s%s "
					 "matches '%s' ('marktrace list' lists a program's markers)",
					 one, who, nor, one + 1);
		} else if (!trace_has(t, one) && ++said) {
			if (here)
				mt_error("record: warning: -e '%s' took no marker of %s: the "
					 "exclusions (-e '!...') exclude every marker it matches", one, who);
			else
				mt_error("record: warning: -e '%s' matched no marker of %s%s "
					 "('marktrace list' lists a program's markers)", one, who, nor);
		}
	}
	return said;
}
