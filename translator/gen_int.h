/*
 * gen_int.h - between the files of pass 3 (gen.c, gen_stmt.c,
 * gen_expr.c, gen_emit.c, each calling only those after it): the state
 * of the chunk being written.
 */
#ifndef GEN_INT_H
#define GEN_INT_H

#include "tr_gen.h"

struct gen {
	struct tr_session *s;
	struct tr_buf *out;             /* current statement list */
	int indent;
	unsigned tmp;                   /* temporaries and labels */
	struct tr_func *func;           /* NULL in a probe */
	struct tr_resolved *rp;
	int try_depth;                  /* inside pcall'ed try bodies */
	int loop_at_try;                /* loop depth when the innermost try began */
	int loop_depth;
	unsigned cont_label[64];
	bool globals_in_table;
	/* runtime functions called directly (tr_direct_call) that have a
	 * chunk local "rt_d_NAME": a call is then no lookup in rt */
	const char *direct[24];
	unsigned ndirect;
	unsigned expr_depth;            /* tr_gen_expr() and tr_gen_cond() calls open */
	unsigned closures;              /* try bodies open: a Lua function each */
	bool too_deep;                  /* reported */
	unsigned params;                /* leading parameters the probe's handler reads */
	bool uses_act, uses_pp;         /* the probe's handler counts actions, may read pp() */
	struct tr_vec entries;          /* the probe's @entry(expr) nodes (TR_TARGET_ENTRY), in order */
	unsigned entry_probe;           /* its number: the table ev_N */
	struct tr_buf regexes;          /* rt.re[N] = automaton lines, after the probes */
	struct tr_vec regex_patterns;   /* N - 1: its pattern (const char *) */
	bool regexec;                   /* matched()/ngroups() read regexec's match */
	struct tr_sym *timing;          /* -t: the global of each handler's cycles */
};


/* gen_stmt.c: a statement's Lua; the locals of a handler or function
 * (at most as many as Lua takes: an error at at) and of a merged
 * probe's branch; the action count at a loop's or a function's entry;
 * text [from, to) of the output removed. */
void tr_gen_stmt(struct gen *g, struct tr_stmt *st);
void tr_gen_check_locals(const struct tr_token *at, unsigned n);
void tr_gen_declare_locals(struct gen *g, struct tr_vec *locals);
void tr_gen_branch_locals(struct gen *g, const struct tr_stmt *branch);
void tr_gen_count_actions(struct gen *g, unsigned n, const struct tr_token *t);
void tr_gen_cut(struct gen *g, size_t from, size_t to);

/* gen_expr.c: an expression's value, as Lua (its effects emitted before);
 * as a Lua condition; the parts of an array access and a statistic. */
const char *tr_gen_expr(struct gen *g, struct tr_expr *e);
const char *tr_gen_cond(struct gen *g, struct tr_expr *e);
const char *tr_gen_key_of(struct gen *g, struct tr_sym *y, struct tr_vec *args);
const char *tr_gen_slice_args(struct gen *g, struct tr_vec *args);
const char *tr_gen_stat_of(struct gen *g, struct tr_expr *op);
const char *tr_gen_stat_method(int op);
bool tr_gen_nest_ok(struct gen *g, const struct tr_token *t);

/* gen_emit.c */
void tr_gen_line(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tr_gen_call_needs(struct gen *g, const char *code);
void tr_gen_reads_params(struct gen *g, unsigned n);
const char *tr_gen_direct_name(const struct gen *g, const char *direct);
const char *tr_gen_sym_name(struct gen *g, const struct tr_sym *y);
const char *tr_gen_zero_of(enum tr_type t);
const char *tr_gen_tmp(struct gen *g);

#endif
