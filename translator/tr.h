/*
 * tr.h - the marktap translator's internal interfaces.
 *
 * A script goes through these passes (stap's numbering):
 *   1  lex (tr_lex_*), preprocess (tr_pp_*), parse (tr_parse_*): a tree
 *   2  elaborate (tr_elab_*): probe points, aliases, tapsets, types
 *   3  generate Lua (tr_gen_*)
 *   4  write the module file (tr_module_*)
 *   5  run it (tr_run_*)
 * Every node lives in one arena that is freed when the command ends, so
 * the passes never free anything themselves.
 */
#ifndef TR_H
#define TR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "mt_manifest.h"

/* ---- memory ------------------------------------------------------- */

void *tr_alloc(size_t n); /* zeroed, never NULL (aborts on OOM) */
char *tr_strdup(const char *s);
char *tr_strndup(const char *s, size_t n);
char *tr_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable byte buffer. */
struct tr_buf {
	char *data;
	size_t len, cap;
};
void tr_buf_add(struct tr_buf *b, const char *s, size_t n);
void tr_buf_puts(struct tr_buf *b, const char *s);
void tr_buf_printf(struct tr_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tr_buf_putc(struct tr_buf *b, char c);
const char *tr_buf_str(struct tr_buf *b); /* NUL-terminated view */
/* buf's n bytes with terminal controls written as \xHH (util.c) */
const char *tr_tty_escape(const char *buf, size_t n, size_t *len);

/* A growable array of pointers. */
struct tr_vec {
	void **items;
	unsigned n, cap;
};
void tr_vec_push(struct tr_vec *v, void *item);

/* ---- sources and diagnostics ----------------------------------------- */

struct tr_file {
	const char *name;   /* as shown in messages: path, "<input>" */
	const char *text;   /* NUL-terminated */
	size_t len;
	bool tapset;        /* from a tapset directory */
	bool guru_ok;       /* may hold embedded code */
};

enum tr_tok_type {
	TOK_EOF, TOK_JUNK, TOK_IDENT, TOK_KEYWORD, TOK_OP, TOK_STRING,
	TOK_NUMBER, TOK_EMBEDDED,
};

struct tr_token {
	enum tr_tok_type type;
	const char *text;      /* identifier, operator, keyword; string body raw */
	int64_t num;           /* TOK_NUMBER */
	const struct tr_file *file;
	unsigned line, col;    /* 1-based */
	const struct tr_token *chain; /* macro expansion: where it was invoked */
	bool overflow;         /* number did not fit: 9223372036854775808 */
	const char *msg;       /* TOK_JUNK: what is wrong */
};

/* Error counting per pass; tr_error prints in stap's form. */
struct tr_diag {
	unsigned errors, warnings;
	bool suppress_warnings; /* -w */
	bool warnings_are_errors; /* -W */
	bool quiet_semantic;    /* -l/-L: semantic errors counted, not printed */
	int verbose;
	struct tr_vec seen; /* messages already printed (stap prints each once) */
	unsigned duplicates;
};
extern struct tr_diag tr_diag;

/* kind: "parse error", "semantic error", "WARNING" */
void tr_error_at(const char *kind, const struct tr_token *tok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tr_sem_error(const struct tr_token *tok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tr_warn(const struct tr_token *tok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *tr_tok_describe(const struct tr_token *tok);

/* ---- lexer and preprocessor ------------------------------------------ */

struct tr_session; /* below */

/* Tokenize a whole file into *out (TOK_EOF last).  Errors are reported. */
void tr_lex_file(struct tr_session *s, const struct tr_file *f, struct tr_vec *out);
bool tr_is_keyword(const char *s);

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
	const struct tr_file *file;
	unsigned index;                 /* slot in generated code */
	const char *lua;                /* Lua name */
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

struct tr_session {
	/* command line */
	int last_pass;                  /* 1..5 */
	bool guru, unoptimized, suppress_handler_errors;
	int verbose;
	const char *module_name;
	const char *output_file;
	const char *target_cmd;
	long target_pid;
	const char *trace_dir;          /* --trace: a stored trace instead of live hits */
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
	struct tr_vec tapsets;          /* struct tr_script * */
	struct tr_vec macros;           /* global macros from .stpm files */
	bool tapsets_loaded;
	/* elaboration results */
	struct tr_vec globals;          /* used globals */
	struct tr_vec funcs;            /* used functions */
	struct tr_vec probes;           /* resolved probes (struct tr_probe *) */
	struct tr_vec all_funcs, all_globals, all_aliases;
	const char *pkgdatadir;
};

/* ---- passes ------------------------------------------------------------- */

/* Parse a file (after lexing and preprocessing); errors reported. */
struct tr_script *tr_parse(struct tr_session *s, const struct tr_file *f);
/* Read a file from disk ("-" is stdin); NULL with errno on failure. */
struct tr_file *tr_file_read(const char *path, const char *shown_name);
struct tr_file *tr_file_from_string(const char *name, const char *text);

/* Pass 1 output. */
void tr_print_script(FILE *out, const struct tr_script *sc);
void tr_print_expr(struct tr_buf *b, const struct tr_expr *e);
void tr_print_stmt(struct tr_buf *b, const struct tr_stmt *st);
void tr_print_point(struct tr_buf *b, const struct tr_probe_point *pp);

/* Pass 2. */
void tr_load_macros(struct tr_session *s);
int tr_elaborate(struct tr_session *s);
int tr_elab_bind(struct tr_session *s);
void tr_print_elaborated(FILE *out, struct tr_session *s);

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

/* Pass 3: the Lua chunk. */
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

/* Marker catalogue (kernel markers.tsv, ELF notes). */
struct tr_marker {
	const char *name, *format, *where; /* where: "kernel" or ELF path */
	const char *provider;           /* an SDT probe's (sys/sdt.h); NULL: ours */
};
int tr_markers_kernel(struct tr_session *s, struct tr_vec *out);
int tr_markers_elf(const char *path, struct tr_vec *out, char **errmsg);
/* The <sys/sdt.h> probes of the file (providers other than marktap), one
 * per (provider, name), format "arg1 %ld arg2 %ld ..." of their operands. */
int tr_markers_sdt(const char *path, struct tr_vec *out, char **errmsg);

/* Glob match with '*' (one component) as stap does for probe points. */
bool tr_glob(const char *pattern, const char *text);

/* The types a printf format's conversions want, at most max of them;
 * -1 and *err for a bad conversion. */
int tr_format_types(const char *raw, enum tr_type *types, int max, const char **err);

/* Strings of the language: raw body -> bytes (escapes processed). */
char *tr_unescape(const char *raw, size_t *len);

#endif

/* ---- resolved probe points (pass 2) ------------------------------------ */

/* After P_MARK_KERNEL: points marktap elaborates as stap does but may not
 * run (tr_run says why): timer.profile, procfs("F").read/.write, and
 * process.begin/.end (run for -c's and -x's process), kernel.trace("TP"),
 * perf.type(T).config(C)..., netfilter.hook("H").pf("PF") */
enum tr_pkind {
	P_BEGIN, P_END, P_ERROR, P_NEVER, P_TIMER, P_MARK_USER, P_MARK_KERNEL,
	P_PROFILE, P_PROCFS, P_PROC_BEGIN, P_PROC_END, P_KTRACE, P_PERF, P_NETFILTER,
};

/* procev.c: the kernel's process events (fork 'b', exec 'x', exit 'e'),
 * for process.begin/.end without -c or -x. */
struct tr_procev {
	int kind, pid, tgid;
	int parent;     /* a fork's parent process */
};
int tr_procev_open(char *why, size_t n);        /* a socket, or -1 and why */
int tr_procev_read(int fd, struct tr_procev *ev, int max);  /* -1: events lost */
void tr_procev_close(int fd);

/* perfev.c: sampled perf events (timer.profile, perf.type(T)...). */
struct tr_perf_sample {
	uint64_t ip;
	uint32_t pid, tid, cpu;
};
struct tr_perfev;
struct tr_resolved;
struct tr_perfev *tr_perfev_open(const struct tr_resolved *r, long pid, char *why, size_t n);
int tr_perfev_read(struct tr_perfev *pe, struct tr_perf_sample *out, int max, uint64_t *lost);
void tr_perfev_close(struct tr_perfev *pe);

/* ktrace.c: a kernel tracepoint from the kernel's trace headers. */
struct tr_ktrace {
	const char *system, *name;      /* "sched", "sched_switch" */
	struct tr_vec fields, ctypes;   /* its parameters, their C types */
};
int tr_ktrace_points(struct tr_session *s, struct tr_vec *out, char **errmsg);

struct tr_resolved {
	enum tr_pkind kind;
	int64_t priority;               /* begin(N) end(N) error(N) */
	bool oneshot;                   /* "oneshot": a begin probe that also exits */
	const char *pp;                 /* canonical, e.g. process("/bin/x").mark("m") */
	const char *others_unavailable; /* why the variables its alias does not
					   set have no value (elab.c) */
	const char *path;               /* P_MARK_USER */
	const char *marker, *format;    /* P_MARK_* */
	const char *provider;           /* an SDT probe's provider; NULL: a marker */
	int64_t interval_ns, randomize_ns; /* P_TIMER */
	/* P_PROCFS: the file (under stap's /proc/systemtap/MODULE), .write
	 * or .read, .umask, .maxsize; P_PROC_*: .thread, the process's pid
	 * (0: any; path, when set, names its program) */
	const char *procfs_file;
	bool procfs_write, thread;
	int64_t procfs_umask, procfs_maxsize, proc_pid;
	const struct tr_ktrace *ktrace; /* P_KTRACE, P_NETFILTER (its parameters) */
	int64_t perf_type, perf_config, perf_sample;   /* P_PERF (path: .process) */
	const char *perf_counter;       /* .counter("C"), read with @perf("C") */
	struct tr_vec fields;           /* const char * names of the marker's fields */
	struct tr_vec field_types;      /* (void *)(intptr_t) enum tr_type */
	struct tr_expr *cond;           /* probe point "if (cond)" */
	const char *alias_pp;           /* the outermost alias it came through */
	/* process("P").function("F")[.return] (dwarf.c): a P_MARK_USER with
	 * provider TR_FUNC_PROVIDER whose fields are the $variables the
	 * handler reads, each computed in the process by its recipe */
	struct tr_dwfunc *dw;           /* NULL in a -p4 module read back */
	bool dw_func, dw_return;
	uint64_t dw_addr;
	const char *dw_cfa;             /* .return: the call frame address's recipe */
	struct tr_vec dw_recipes;       /* const char *, per field */
	struct tr_vec dw_at_return;     /* (void *)1: evaluated at the return */
	/* process("P").plt("NAME"): a function probe (dw NULL) at the PLT
	 * entry of the function named here ($$name) */
	const char *plt_name;
	/* kernel.function("F"), kprobe.function("F"), module("M").function("F")
	 * (btf.c): a P_MARK_KERNEL whose marker is the module's binding
	 * "kprobe:[M:]F[:return[:N]]", fields arg1..arg6 (and return) */
	const struct tr_kfunc *kfunc;
};

/* btf.c: kernel functions from the kernel's BTF (libbpf). */
struct tr_kfunc;
/* The points comps names (kernel.function...), pushed to out as struct
 * tr_resolved *: their number, 0 if comps is no function point, -1
 * after a semantic error at tok. */
int tr_btf_resolve(struct tr_session *s, const struct tr_vec *comps, const struct tr_token *tok,
		   struct tr_vec *out);
/* $var... of a kernel function probe, @cast(p, "T")->m anywhere: 0, or -1 after an error */
int tr_btf_target(struct tr_session *s, struct tr_resolved *r, struct tr_expr *e, bool report);
int tr_btf_cast(struct tr_session *s, struct tr_expr *e, bool report);
const char *tr_btf_vars(const struct tr_resolved *r);   /* -L: " $file:struct file*" */
const char *tr_btf_param_name(const struct tr_resolved *r, unsigned i);   /* NULL past the last */
bool tr_btf_return(const struct tr_resolved *r);
/* int_arg(N)... returnval() with a literal N in a kernel function's
 * handler: e made the field it reads (true), else false. */
bool tr_btf_register_call(const struct tr_resolved *r, struct tr_expr *e);
/* elab.c: " (similar: a, b)" of the candidates nearest name, or "" */
const char *tr_similar_names(const char *name, const struct tr_vec *cands);

/* dwarf.c: functions of user-space ELF files, their variables (libdw). */
#define TR_FUNC_PROVIDER MT_FUNC_PROVIDER   /* runtime/core/mt_manifest.h */
struct tr_dwfunc;
/* The functions of path matching spec ("glob" or "glob@file"), sorted by
 * name, pushed to out: their number, or -1 with *errmsg. */
int tr_dw_functions(const char *path, const char *spec, struct tr_vec *out, char **errmsg);
const char *tr_dw_similar(const char *path);
const char *tr_dw_find_library(const char *name);      /* "libc.so.6": its path */
/* process("P").plt("GLOB"): P's PLT entries whose function's name matches
 * GLOB, in table order, pushed to out: their number, or -1 with *errmsg. */
struct tr_pltent {
	const char *name;               /* "puts"; "" for an ifunc's slot, as stap */
	uint64_t addr;                  /* file address of the entry's jmp */
};
int tr_dw_plt(const char *path, const char *glob, struct tr_vec *out, char **errmsg);
const char *tr_dw_plt_similar(const char *path);
/* .statement("FUNC@FILE:LINE"): the line's first address in each function
 * that has it, as functions whose probe address is there. */
int tr_dw_statements(const char *path, const char *spec, struct tr_vec *out, char **errmsg);
const char *tr_dw_name(const struct tr_dwfunc *f);
const char *tr_dw_pp_name(const struct tr_dwfunc *f);   /* "f@file.c:12" */
bool tr_dw_inlined(const struct tr_dwfunc *f);          /* an inlined copy (no .return) */
uint64_t tr_dw_addr(const struct tr_dwfunc *f);         /* after the prologue */
const char *tr_dw_cfa(const struct tr_dwfunc *f);       /* recipe, or NULL */
const char *tr_dw_vars(const struct tr_dwfunc *f);      /* -L: " $a:int $p:struct s*" */
/* The recipe of $var... at f (runtime/script/sdt.c evaluates it), or NULL
 * after a semantic error at e. */
const char *tr_dw_target(const struct tr_dwfunc *f, bool ret, const struct tr_expr *e, bool report,
			 enum tr_type *type, bool *at_return);
/* Guru mode's $var... = v: where to write it (ufunc.c's store spec), or
 * NULL after a semantic error at e. */
const char *tr_dw_store(const struct tr_dwfunc *f, bool ret, const struct tr_expr *e);

/* The command's remaining actions. */
int tr_list_probes(struct tr_session *s);
/* --dump-functions, --dump-probe-types, --dump-probe-aliases (dump.c) */
enum tr_dump { TR_DUMP_FUNCTIONS = 1, TR_DUMP_PROBE_TYPES, TR_DUMP_PROBE_ALIASES };
int tr_dump(struct tr_session *s, enum tr_dump what);
/* Pass 2's check of the user's %{ %} code (embed.c): kernel constants
 * become numbers, C and Lua that does not compile are semantic errors. */
void tr_check_embeds(struct tr_session *s);
/* Embedded code without its C comments (stap's pragmas: "pure"...). */
const char *tr_strip_pragmas(const char *code);
int tr_module_write(struct tr_session *s, const char *path, const char *lua);
/* The -D limits into the Lua runtime's options (run.c). */
struct mt_lua_options;
void tr_lua_limits(struct tr_session *s, struct mt_lua_options *o);
int tr_run(struct tr_session *s, const char *lua, size_t len);
/* --trace DIR: the script over a stored trace (trace.c) */
int tr_trace_run(struct tr_session *s, const char *lua, size_t len);
/* Its event classes as markers (struct tr_marker *), for trace.event("NAME"). */
int tr_trace_markers(struct tr_session *s, struct tr_vec *out, char **errmsg);
/* begin, end or error probes, by priority (run.c) */
struct mt_lua;
void tr_run_probes(struct mt_lua *mt, struct tr_session *s, enum tr_pkind kind);

/* Handlers of kernel markers (kmark.c): NULL when the script has none. */
struct tr_kmark;
struct mt_lua;
struct mt_lua_host;
struct tr_kmark *tr_kmark_new(struct tr_session *s);
const struct mt_lua_host *tr_kmark_host(struct tr_kmark *km);
int tr_kmark_start(struct tr_kmark *km, struct mt_lua *mt);
void tr_kmark_poll(struct tr_kmark *km);
void tr_kmark_stop(struct tr_kmark *km);
void tr_kmark_free(struct tr_kmark *km);
/* Let the handlers run in marktap.ko (a module with Lua, unless
 * MARKTAP_KERNEL_LUA=0): the chunk goes to the module at start. */
void tr_kmark_in_kernel(struct tr_kmark *km, const char *lua, size_t len, FILE *out);
int tr_kmark_pull(struct tr_kmark *km);    /* the kernel states' changes, here: 1 if any there */
void tr_kmark_push(struct tr_kmark *km);   /* this state's changes, there */
int64_t tr_kmark_in_kernel_errors(struct tr_kmark *km);   /* ERROR lines from there */
bool tr_kmark_failed(struct tr_kmark *km);   /* its errors went past MAXERRORS */
int tr_kmark_begun(struct tr_kmark *km);   /* after begin: handlers in the kernel armed */
int tr_module_run(struct tr_session *s, const char *path);
/* session.c: the traced processes that run the marker handlers. */
struct mt_lua;
struct tr_sess;
struct tr_sess *tr_sess_new(struct tr_session *s, struct mt_lua *mt, const char *lua, size_t len,
			    int out_fd);
void tr_sess_set_target(struct tr_sess *ss, long pid);
bool tr_sess_wants_processes(struct tr_sess *ss);
int tr_sess_listen(struct tr_sess *ss);
int tr_sess_attach(struct tr_sess *ss, int pid);
void tr_sess_poll(struct tr_sess *ss, int timeout_ms);
void tr_sess_pull(struct tr_sess *ss);
void tr_sess_push(struct tr_sess *ss);
void tr_sess_quit(struct tr_sess *ss);
int tr_sess_stop_reason(struct tr_sess *ss);
int64_t tr_sess_errors(struct tr_sess *ss);
int64_t tr_sess_skips(struct tr_sess *ss);
/* processes that ended without handing their last results (killed) */
unsigned tr_sess_lost(struct tr_sess *ss);
unsigned tr_sess_running(struct tr_sess *ss);
void tr_sess_free(struct tr_sess *ss);
/* The limits of -D, as the runtime's options want them. */
int64_t tr_define_value(struct tr_session *s, const char *name, int64_t dflt);
