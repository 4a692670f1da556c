/*
 * mt_plan.h - native plans: marker handlers that only add, run without Lua.
 *
 * The translator (translator/native.c) gives a marker handler whose every
 * statement adds to a long global, or gives a value to a statistics
 * global, a plan besides its Lua code; the script host of a traced
 * process (runtime/script/plan.c) and marktap.ko (kmod/mt_lua_nat.c) run
 * it at the hit, each into tables of its own.  This header is the
 * format's one home: its text, its limits, and the parsed form both
 * executions read (mt_plan.c parses, in user space and in the kernel).
 *
 * The text: operations separated by ';', each made of tokens separated
 * by one ' ' (no empty operation, no empty token):
 *
 *     [GUARD...] GLOBAL VALUE [KEY...]
 *
 *   GUARD   "?LcR": the operation runs only when the comparison c of the
 *           value sources L and R holds; c is one of MT_PLAN_CMPS
 *   GLOBAL  the global's number in rt.globals, from 1; "<N": VALUE goes
 *           to statistics global N (count, sum, min, max), else it is
 *           added to long global N
 *   VALUE   a value source: "#N" a constant, "aN" marker argument N
 *           (from 1, not a string), "-aN" its negation, "tid" "pid" "cpu"
 *   KEY     "#N", "aN", "tid", "pid", "cpu", or a string: "sN" string
 *           argument N, "sx" execname()
 *
 *     "1 #1 tid;?a1>#2 <2 a2 sx"
 *
 * A plan that does not parse, or does not fit the marker it is bound to
 * (an argument it lacks, a string where a number is read), is refused:
 * the Lua handler runs instead.  The kernel parses plans that user space
 * wrote: every field is checked here, bounds first.
 */
#ifndef MT_PLAN_H
#define MT_PLAN_H

#include "mt_compat.h"
#include "mt_fmt.h"

/* Limits: the translator makes no plan past them, the parser refuses it. */
#define MT_PLAN_OPS 16            /* operations of a plan */
#define MT_PLAN_KEYS 4            /* keys of an operation's global */
#define MT_PLAN_GUARDS 8          /* guards of an operation */
/* A global's number shares 32 bits with its operation's keys (the
 * executions' entries: global << 8 | string keys << 4 | statistics << 3 | keys). */
#define MT_PLAN_GLOBAL_MAX (0xffffffffu >> 8)

/* The text's punctuation. */
#define MT_PLAN_OP_SEP ';'        /* between operations */
#define MT_PLAN_TOKEN_SEP ' '     /* between tokens */
#define MT_PLAN_GUARD '?'         /* a guard's first character */
#define MT_PLAN_STATS '<'         /* before GLOBAL: statistics */

/* Sources: a character and a number, or a word. */
#define MT_PLAN_CONST '#'         /* "#-5" */
#define MT_PLAN_ARG 'a'           /* "a2" */
#define MT_PLAN_NEG '-'           /* "-a2" (VALUE and guards only) */
#define MT_PLAN_STR 's'           /* "s1" (KEY only) */
#define MT_PLAN_EXECNAME "sx"     /* (KEY only) */
#define MT_PLAN_TID "tid"
#define MT_PLAN_PID "pid"
#define MT_PLAN_CPU "cpu"

/* A guard's comparison, one character between its two sources. */
#define MT_PLAN_EQ '='            /* == */
#define MT_PLAN_NE '!'            /* != */
#define MT_PLAN_LT '<'            /* <  */
#define MT_PLAN_GT '>'            /* >  */
#define MT_PLAN_LE '['            /* <= */
#define MT_PLAN_GE ']'            /* >= */
#define MT_PLAN_CMPS "=!<>[]"

enum mt_plan_src_kind {
	MT_PLAN_SRC_CONST,        /* c */
	MT_PLAN_SRC_ARG,          /* argument arg, a number */
	MT_PLAN_SRC_NEG_ARG,      /* minus argument arg */
	MT_PLAN_SRC_STR,          /* argument arg, a string (keys) */
	MT_PLAN_SRC_EXEC,         /* execname() (keys) */
	MT_PLAN_SRC_TID,
	MT_PLAN_SRC_PID,
	MT_PLAN_SRC_CPU,
};

struct mt_plan_src {
	u8 kind;                  /* enum mt_plan_src_kind */
	u8 arg;                   /* the argument's field index (from 0) */
	s64 c;
};

struct mt_plan_guard {
	struct mt_plan_src l, r;
	char cmp;                 /* MT_PLAN_EQ ... MT_PLAN_GE */
};

struct mt_plan_op {
	u32 global;               /* 1 .. MT_PLAN_GLOBAL_MAX */
	u8 stats;                 /* 1: VALUE goes to statistics */
	u8 nkeys;
	u8 strmask;               /* the keys that are strings: bit k, key k */
	u8 nguards;               /* all must hold */
	struct mt_plan_guard guard[MT_PLAN_GUARDS];
	struct mt_plan_src value, key[MT_PLAN_KEYS];
};

struct mt_plan {
	unsigned nops;            /* 1 .. MT_PLAN_OPS */
	struct mt_plan_op op[MT_PLAN_OPS];
};

/* The plan of text for a marker of format f into *plan: 0, or -EINVAL
 * when text does not parse or does not fit f (*plan then undefined). */
int mt_plan_parse(const char *text, const struct mt_format *f, struct mt_plan *plan);

#endif
