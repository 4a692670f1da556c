/*
 * tr_base.h - what every pass of the translator builds on (util.c):
 * memory, buffers and vectors, source files, tokens, diagnostics.
 *
 * Every allocation lives until the command ends (one arena, in effect):
 * the passes never free what they make.
 */
#ifndef TR_BASE_H
#define TR_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- memory ------------------------------------------------------- */

void *tr_alloc(size_t n); /* zeroed, never NULL (aborts on OOM) */
char *tr_strdup(const char *s);
char *tr_strndup(const char *s, size_t n);
char *tr_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* CLOCK_MONOTONIC in ns (util.c) */
int64_t tr_mono_ns(void);

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

/* Read a file from disk ("-" is stdin); NULL with errno on failure. */
struct tr_file *tr_file_read(const char *path, const char *shown_name);
struct tr_file *tr_file_from_string(const char *name, const char *text);

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
	bool bad_number;       /* TOK_JUNK: a number's text, invalid or out of range */
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

/* ---- strings ------------------------------------------------------------ */

/* Glob match with '*' (one component) as stap does for probe points. */
bool tr_glob(const char *pattern, const char *text);

/* Strings of the language: raw body -> bytes (escapes processed). */
char *tr_unescape(const char *raw, size_t *len);

/* " (similar: a, b)" of the candidates nearest name, or "" */
const char *tr_similar_names(const char *name, const struct tr_vec *cands);
/* The same with another label: " (similar tracepoints: a, b)" */
const char *tr_similar_as(const char *label, const char *name, const struct tr_vec *cands);
/* " (alternatives: a, b)": all the candidates, nearest name first, or "" */
const char *tr_alternatives(const char *name, const struct tr_vec *cands);

#endif
