/*
 * tr_elab.h - pass 2, elaboration (elab.c and its steps, elab_*.c): the
 * parsed scripts become resolved probes with bound names and inferred
 * types; and the commands that stop there: -l/-L (list.c), --dump-*
 * (dump.c).
 */
#ifndef TR_ELAB_H
#define TR_ELAB_H

#include "tr_points.h"

/* The .stpm macros of the tapset path, before the script is parsed:
 * scripts may use them (elab_tapset.c). */
void tr_elab_load_macros(struct tr_session *s);
/* The whole pass: 0, or -1 after errors (reported). */
int tr_elaborate(struct tr_session *s);
/* The tapsets loaded and every script's globals, functions and aliases
 * collected (s->all_*): the first step, alone, for -l/-L and --dump-*
 * (elab_tapset.c). */
int tr_elab_load_tapsets(struct tr_session *s);
/* Tapset files are parsed when something of theirs is looked up: the
 * files defining function or global NAME ('f', 'g'), or aliases whose
 * first component matches the glob NAME ('a'); every file ('*'). */
void tr_elab_tapset_need(struct tr_session *s, char kind, const char *name);
/* Resolve one probe point given as text: for -l / -L (elab_probe.c). */
int tr_elab_points(struct tr_session *s, struct tr_probe *pr);
/* Names and types of the resolved probes (also -L's alias variables). */
int tr_elab_bind(struct tr_session *s);
/* -p2's output. */
void tr_elab_print(FILE *out, struct tr_session *s);

/* Pass 2's check of the user's %{ %} code (embed.c): kernel constants
 * become numbers, C and Lua that does not compile are semantic errors. */
void tr_embed_check(struct tr_session *s);
/* Embedded code without its C comments (stap's pragmas: "pure"...). */
const char *tr_embed_strip_pragmas(const char *code);
/* Why a call of the function whose code this is must be refused, or
 * NULL: stap's guru pragma outside guru mode, marktap's refuse pragma. */
const char *tr_embed_refusal(const char *name, const char *code, bool guru);

/* The probe point families pass 2 resolves, as stap lists them
 * ("timer.ms(number)"), NULL last (elab_point.c). */
extern const char *const tr_point_types[];

/* The command's actions that end after pass 2. */
int tr_list_probes(struct tr_session *s);
/* --dump-functions, --dump-probe-types, --dump-probe-aliases (dump.c) */
enum tr_dump { TR_DUMP_FUNCTIONS = 1, TR_DUMP_PROBE_TYPES, TR_DUMP_PROBE_ALIASES };
int tr_dump(struct tr_session *s, enum tr_dump what);

#endif
