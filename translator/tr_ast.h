/*
 * tr_ast.h - pass 1: the tree of a script, the session that holds the
 * trees, and the lexer (lex.c), preprocessor (pp.c), parser (parse.c)
 * and printer (print.c) that make and show them.
 */
#ifndef TR_AST_H
#define TR_AST_H

#include "tr_base.h"

/* ---- lexer and preprocessor ------------------------------------------ */

struct tr_session; /* below */

/* Tokenize a whole file into *out (TOK_EOF last).  Errors are reported. */
void tr_lex_file(struct tr_session *s, const struct tr_file *f, struct tr_vec *out);

/* Conditionals and @define macros; in -> out token vectors. */
void tr_pp_run(struct tr_session *s, const struct tr_vec *in, struct tr_vec *out);
/* Collect the @define's of a .stpm file into the session's global macros. */
void tr_pp_collect(struct tr_session *s, const struct tr_vec *in);

/* ---- the tree ---------------------------------------------------------- */

/* How deep the parser lets expressions and statements nest: every pass
 * may recurse this deep (a long chain of one operator is no nesting). */
#define TR_NEST_MAX 1000

enum tr_type { T_UNKNOWN, T_LONG, T_STRING, T_STATS };
const char *tr_type_name(enum tr_type t);

enum tr_ekind {
	E_NUM, E_STR, E_SYM, E_TARGET, E_DEFINED, E_INDEX, E_CALL, E_PRINT,
	E_STAT, E_HIST, E_BIN, E_LOGIC, E_CMP, E_CAT, E_UNARY, E_PRE, E_POST,
	E_ASSIGN, E_TERN, E_IN, E_REGEX,
	E_EMBED,                        /* %{ code %} as a value (-g): str */
};

enum tr_stat_op { ST_COUNT, ST_SUM, ST_MIN, ST_MAX, ST_AVG, ST_VARIANCE };

struct tr_sym;

struct tr_expr {
	enum tr_ekind kind;
	const struct tr_token *tok;
	enum tr_type type;
	const char *op;                 /* operators, E_CALL/E_PRINT name */
	int64_t num;
	const char *str;                /* E_STR raw body, E_SYM / E_TARGET name */
	struct tr_expr *a, *b, *c;      /* operands; E_INDEX base = a */
	struct tr_vec args;             /* E_CALL/E_PRINT/E_INDEX/E_IN/E_HIST */
	int stat_op;                    /* E_STAT: enum tr_stat_op; E_HIST: 0 lin 1 log */
	struct tr_sym *sym;             /* E_SYM, E_INDEX base, E_IN base */
	struct tr_func *func;           /* E_CALL */
	/* E_PRINT */
	bool print_fmt, print_ln, print_str, print_delim;
	const char *fmt;                /* raw format string (printf/sprintf) */
	const struct tr_token *fmt_tok;
	/* E_INDEX with a '*' index in delete */
	bool wildcard_index;
	int target_arg;                 /* E_TARGET resolved: field index +1 */
#define TR_TARGET_ENTRY (-8)    /* @entry(expr) of a kernel function's .return: expr at the call (btf.c) */
#define TR_TARGET_PRETTY (-9)   /* $p$, $$parms$...: e->pretty (btf_var.c) */
#define TR_TARGET_SYSCALL (-10) /* a system call's parameter: num = position * 4 + kind (elab_bind.c) */
	/* E_TARGET past a marker's $name (all need DWARF, a semantic error
	 * here, but they parse and print as in stap): str is the base, "$x"
	 * or "@var(...)", or an operator "@cast" "@entry" with its operand in
	 * a and the rest of its arguments, as written, in fmt; members the
	 * chain after it, "->f[]->g", each "[]" standing for the next of
	 * args; addr a '&' before it all. */
	const char *members;
	bool addr;
	const char *store;              /* E_TARGET written in guru mode: dwarf.c's spec */
	/* E_TARGET of a kernel value through BTF (btf.c): the reads from
	 * the base (a: @cast's operand, else field target_arg), each
	 * "off:size:signed:shift:bits;" (size 0: the address, no read) */
	const char *kread;
	/* E_TARGET pretty-printed through BTF ($p$, $$parms$: btf_var.c):
	 * struct tr_pretty pieces, target_arg TR_TARGET_PRETTY */
	struct tr_vec pretty;
	/* a kernel pointer's struct (BTF, btf_var.c): its local keeps it
	 * for stap's autocast, p->m */
	const void *autocast_btf;
	unsigned autocast_type;
};

/* One piece of a pretty-printed kernel value: kind 'L' the text; 'n',
 * 'u', 'p' a signed, unsigned or pointer value read through steps (the
 * kread steps) from field param (or, in members, from the struct's
 * address); 's' a char pointer's string, 'c' a char array's (steps end
 * on its address); 'S' a struct through a pointer, 'A' a struct at an
 * address: {members}, whose steps start at the struct. */
struct tr_pretty {
	char kind;
	const char *text;
	int param;
	const char *steps;
	struct tr_vec members;
};

enum tr_skind {
	S_BLOCK, S_EXPR, S_NULL, S_IF, S_FOR, S_FOREACH, S_RETURN, S_DELETE,
	S_NEXT, S_BREAK, S_CONTINUE, S_TRY, S_EMBED,
};

struct tr_stmt {
	enum tr_skind kind;
	const struct tr_token *tok;
	struct tr_vec list;             /* S_BLOCK statements */
	struct tr_expr *e, *e2, *e3;    /* expr, cond, init/cond/incr, return value */
	struct tr_stmt *body, *els;     /* if, loops, try/catch */
	bool is_while;
	bool own_locals;                /* S_BLOCK: a branch of a merged probe
					 * (elab_probe.c) declares the locals it uses */
	/* S_FOREACH */
	struct tr_vec keys;             /* E_SYM nodes */
	struct tr_expr *value;          /* foreach (v = [k] in a) */
	struct tr_expr *base;           /* array (E_SYM) or histogram (E_HIST) */
	int sort_col;                   /* 0 none, 1..n a key, -1 the value */
	int sort_dir;                   /* +1 ascending, -1 descending */
	int sort_aggr;                  /* statistics' value: enum tr_stat_op (@count default) */
	struct tr_expr *limit;
	bool keys_bracketed;
	/* S_TRY */
	struct tr_expr *catch_var;
	/* S_EMBED */
	const char *code;
};

struct tr_component {
	const char *name;               /* may hold '*' */
	struct tr_expr *arg;            /* E_NUM or E_STR literal, or NULL */
	bool has_arg;
	const struct tr_token *tok;
};

struct tr_probe_point {
	struct tr_vec comps;            /* struct tr_component * */
	bool optional, sufficient;      /* '?' and '!' */
	struct tr_expr *cond;
	const struct tr_token *tok;
};

struct tr_probe {
	struct tr_vec points;           /* struct tr_probe_point * */
	struct tr_stmt *body;
	const struct tr_token *tok;
	const struct tr_token *point_tok; /* the user's probe point it came from */
	/* aliases: probe NAME = points { } or += */
	bool is_alias, epilogue;
	struct tr_vec alias_names;      /* probe points being defined */
	const struct tr_file *file;
	bool privacy;
	/* elaboration */
	struct tr_vec locals;           /* struct tr_sym * */
	struct tr_vec resolved;         /* struct tr_resolved * */
	unsigned id;
	const char *orig_pp;            /* text written by the user */
	/* native.c: the plan of a handler that only adds, or NULL */
	const char *native_plan, *native_where;
};

enum tr_sym_kind { SYM_GLOBAL, SYM_LOCAL, SYM_PARAM };

struct tr_sym {
	const char *name;
	enum tr_sym_kind kind;
	enum tr_type type;
	int arity;                      /* -1 unknown, 0 scalar, n array */
	enum tr_type *index_types;      /* arity entries */
	const struct tr_token *tok;
	/* globals */
	int64_t size;                   /* global a[SIZE] */
	bool wrap, privacy;             /* '%'  */
	struct tr_expr *init;           /* literal initialiser */
	bool read, written, used;
	unsigned char stats_kind;       /* native.c's memo: 0 not known yet, 1 only counted
					 * and summed, 2 a histogram or @variance reads it */
	const struct tr_file *file;
	unsigned index;                 /* slot in generated code */
	const char *lua;                /* Lua name */
	const struct tr_token *first_store;  /* a global array's first element store */
	int reads;                      /* a local's reads in its probe (elab_prune.c's count) */
	/* a local assigned typed kernel pointers, of one struct (autocast:
	 * elab_bind.c); mixed: of several */
	const void *autocast_btf;
	unsigned autocast_type;
	bool autocast_mixed;
};

struct tr_func {
	const char *name;
	enum tr_type type;              /* declared or inferred */
	bool type_declared;
	struct tr_vec params;           /* struct tr_sym * (SYM_PARAM) */
	struct tr_stmt *body;           /* NULL with raw code */
	const char *code;               /* %{ raw Lua %} */
	const struct tr_token *tok;
	const struct tr_file *file;
	bool privacy;
	bool used, visited;
	struct tr_vec locals;
	const char *lua;
};

struct tr_global_embed {
	const char *code;
	const struct tr_token *tok;
};

/* One parsed file. */
struct tr_script {
	const struct tr_file *file;
	struct tr_vec globals;          /* struct tr_sym * */
	struct tr_vec funcs;            /* struct tr_func * */
	struct tr_vec probes;           /* struct tr_probe * (no aliases) */
	struct tr_vec aliases;          /* struct tr_probe * */
	struct tr_vec embeds;           /* struct tr_global_embed * */
	bool joined;                    /* a tapset's probes are in the session */
};
/* ---- the session ----------------------------------------------------- */

/* --begin, --end over a stored trace (trace_window.c): a time as written. */
enum tr_time_kind { TR_TIME_NONE, TR_TIME_EPOCH, TR_TIME_FROM_START, TR_TIME_OF_DAY };
struct tr_trace_time {
	enum tr_time_kind kind;
	int64_t ns;                     /* since the epoch, the first event or midnight */
};

struct tr_session {
	/* command line */
	int last_pass;                  /* 1..5 */
	bool guru, unoptimized, suppress_handler_errors;
	bool skip_badvars;              /* --skip-badvars: an unresolved $var is 0 */
	bool probe_timing;              /* -t: each handler's hits and cycles, reported at the end */
	bool flight;                    /* -F: run in the background, into -o's file */
	int verbose;
	const char *module_name;
	const char *output_file;
	int64_t switch_size;            /* -S SIZE[,N]: bytes of a file of -o's (0: no switching) */
	int64_t switch_count;           /* ... and how many are kept (0: all) */
	int64_t buffer_mb;              /* -s MB: each CPU's ring of kernel handler output
					 * (0: marktap.ko's, 1 MB; at most 4) */
	const char *target_cmd;
	long target_pid;
	const char *trace_dir;          /* --trace: a stored trace instead of live hits */
	struct tr_trace_time trace_begin, trace_end;   /* --begin, --end */
	struct tr_vec trace_tids;       /* --tid: thread ids (intptr_t), or none */
	double timeout;                 /* -T */
	struct tr_vec include_dirs;     /* -I */
	struct tr_vec defines;          /* -D NAME=VAL */
	struct tr_vec globals_set;      /* -G var=val */
	struct tr_vec args;             /* script arguments $1... */
	const char *listing;            /* -l / -L pattern */
	bool listing_vars;              /* -L */
	/* preprocessor facts */
	const char *kernel_vr, *kernel_v, *arch, *runtime, *systemtap_v;
	/* parse results */
	struct tr_vec user;             /* struct tr_script * */
	struct tr_vec tapsets;          /* struct tr_script *: the tapset files parsed */
	struct tr_vec tapset_index;     /* every tapset file, what it defines (elab_tapset.c) */
	const char **tapset_asked;      /* the names asked for of it (a hash set), */
	unsigned tapset_asked_cap, tapset_asked_n;   /* "KINDname" each */
	struct tr_vec macros;           /* global macros from .stpm files */
	bool tapsets_loaded;
	/* elaboration results */
	struct tr_vec globals;          /* used globals */
	struct tr_vec funcs;            /* used functions */
	struct tr_vec probes;           /* resolved probes (struct tr_probe *) */
	bool absent_points;             /* optional points of the script that named nothing:
					 * the run still waits for events (-T, exit(), ^C) */
	struct tr_vec all_funcs, all_globals, all_aliases;
	const char *pkgdatadir;
};

/* The value of -D NAME=VALUE (1 for -D NAME), or dflt when not given
 * (define.c). */
int64_t tr_define_value(struct tr_session *s, const char *name, int64_t dflt);
/* The session's name (stap's module name; module_name(), the directory of
 * its procfs files): -m's, a module file's, "stap_module" for -p4 without
 * -m, else "marktap_PID" (define.c). */
const char *tr_module_name(const struct tr_session *s);

/* ---- pass 1 ---------------------------------------------------------------- */

/* Parse a file (after lexing and preprocessing); errors reported. */
struct tr_script *tr_parse(struct tr_session *s, const struct tr_file *f);

/* Pass 1 output. */
void tr_print_script(FILE *out, const struct tr_script *sc);
void tr_print_expr(struct tr_buf *b, const struct tr_expr *e);
void tr_print_stmt(struct tr_buf *b, const struct tr_stmt *st);
void tr_print_point(struct tr_buf *b, const struct tr_probe_point *pp);
/* print.c: a point's components as the script writes them */
const char *tr_elab_point_text(const struct tr_vec *comps);

/* Every statement and expression under a statement, depth first (util.c):
 * stmt() returning false skips the statement's insides; either callback
 * may be NULL. */
struct tr_walker {
	bool (*stmt)(const struct tr_stmt *st, void *arg);
	void (*expr)(const struct tr_expr *e, void *arg);
	void *arg;
};
void tr_walk_stmt(const struct tr_walker *w, const struct tr_stmt *st);
void tr_walk_expr(const struct tr_walker *w, const struct tr_expr *e);
/* Operators that chain to the left (E_BIN, E_LOGIC, E_CMP, E_CAT): a
 * 50 000-term sum is a 50 000-deep tree along ->a, so every pass walks it
 * with a loop over tr_chain's spine: e, e->a, e->a->a... while they are
 * chain operators (of e's own kind if same_kind), deepest first. */
bool tr_is_chain(const struct tr_expr *e);
void tr_chain(const struct tr_expr *e, bool same_kind, struct tr_vec *spine);

/* The types a printf format's conversions want, at most max of them;
 * -1 and *err for a bad conversion. */
int tr_format_types(const char *raw, enum tr_type *types, int max, const char **err);

#endif
