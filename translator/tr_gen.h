/*
 * tr_gen.h - pass 3: the elaborated script as one Lua chunk (gen*.c), the
 * native plans of the marker handlers that only add (native.c), and what
 * both write with: Lua text (lua_text.c), the statistics globals' uses
 * (stats.c), regular expressions as automata (regex.c).
 */
#ifndef TR_GEN_H
#define TR_GEN_H

#include "tr_points.h"

/* The Lua chunk, or NULL after errors (reported): gen.c, with
 * gen_stmt.c, gen_expr.c and gen_emit.c (gen_int.h). */
char *tr_generate(struct tr_session *s);
/* native.c: marker handlers that only add (tr_probe.native_plan). */
void tr_native_plans(struct tr_session *s);

/* lua_text.c: Lua literals of a language string's raw body, of a C
 * string; a comment's text (control bytes shown as '?'); a number;
 * where a token is, as a Lua string for the runtime's errors. */
const char *tr_lua_string(const char *raw);
const char *tr_lua_plain(const char *s);
const char *tr_lua_comment(const char *s);
const char *tr_lua_num(int64_t v);
const char *tr_lua_loc(const struct tr_token *t);
/* "rt.tid" for a tapset function that only returns rt.tid(), or NULL. */
const char *tr_lua_direct_call(const struct tr_func *f);

/* regex.c: a valid ERE (regcomp has read it) as a Lua table of its
 * automaton for rt.dfa_match, or NULL where regexec must match it. */
const char *tr_regex_dfa(const char *pattern);

/* stats.c: a statistics global's first @hist_* (NULL: none), checked
 * against every other one of it (a semantic error at the first that
 * differs); is it printed with one?  The bit shift of its @variance
 * (-1: no @variance reads it; report: check every one); is it read
 * with @variance? */
struct tr_expr *tr_stats_first_hist(struct tr_session *s, struct tr_sym *y);
void tr_stats_check_hist(struct tr_session *s, struct tr_sym *y, const struct tr_expr *first);
bool tr_stats_has_hist(struct tr_session *s, struct tr_sym *y);
int64_t tr_stats_variance_shift(struct tr_session *s, struct tr_sym *y, bool report);
bool tr_stats_has_variance(struct tr_session *s, struct tr_sym *y);

#endif
