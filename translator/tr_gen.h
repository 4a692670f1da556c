/*
 * tr_gen.h - pass 3: the elaborated script as one Lua chunk (gen.c), and
 * the native plans of the marker handlers that only add (native.c).
 */
#ifndef TR_GEN_H
#define TR_GEN_H

#include "tr_points.h"

/* The Lua chunk, or NULL after errors (reported). */
char *tr_generate(struct tr_session *s);
/* gen.c: "rt.tid" for a tapset function that only returns rt.tid(), or
 * NULL; where a token is, as a Lua string for the runtime's errors. */
const char *tr_direct_call(const struct tr_func *f);
const char *tr_lua_loc(const struct tr_token *t);
/* gen.c: is a statistics global printed with @hist_linear or @hist_log? */
bool tr_global_has_hist(struct tr_session *s, struct tr_sym *y);
/* gen.c: is a statistics global read with @variance? */
bool tr_global_has_variance(struct tr_session *s, struct tr_sym *y);
/* native.c: marker handlers that only add (tr_probe.native_plan). */
void tr_native_plans(struct tr_session *s);

#endif
