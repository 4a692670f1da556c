/*
 * elab_int.h - between the steps of pass 2 (elab*.c), in the order
 * elab.c runs them; nothing outside pass 2 uses these.
 */
#ifndef ELAB_INT_H
#define ELAB_INT_H

#include "tr_elab.h"

/* elab_tapset.c: tr_elab_load_macros, tr_elab_load_tapsets (tr_elab.h) */

/* elab_probe.c: the concrete probes of a probe of a script, each with its
 * own copy of the body, appended to s->probes; then the probes of one
 * point that differ only by a tapset selector on one field merged. */
void tr_elab_resolve_probe(struct tr_session *s, struct tr_probe *pr);
void tr_elab_merge_selected(struct tr_session *s);

/* elab_point.c: the built-in points comps names, pushed to out (struct
 * tr_resolved *): their number, 0 for none, -1 after an error at tok. */
int tr_elab_builtin_points(struct tr_session *s, const struct tr_token *tok, const struct tr_vec *comps,
			   struct tr_vec *out);
/* After a point of a known shape named nothing: " (similar ...)", or "". */
const char *tr_elab_no_match_why(struct tr_session *s, const struct tr_vec *comps);

/* elab_bind.c: the names of s->probes bound (tapset probes may join):
 * 0, or -1 after errors; a called function's body bound, once; -G. */
int tr_elab_bind_names(struct tr_session *s);
void tr_elab_bind_func(struct tr_session *s, struct tr_func *f);
void tr_elab_set_globals(struct tr_session *s);

/* elab_prune.c, after binding: stores into locals nothing reads,
 * statements without effects, ifs whose branches do nothing. */
void tr_elab_elide_voids(struct tr_session *s);

/* elab_type.c: every type inferred and checked: 0, or -1 after errors. */
int tr_elab_infer_types(struct tr_session *s);

/* elab_prune.c, after types: unread alias locals, probes that do
 * nothing, tapset functions no probe calls. */
void tr_elab_prune(struct tr_session *s);

#endif
