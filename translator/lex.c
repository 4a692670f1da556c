/*
 * lex.c - the script language's tokens, as stap reads them.
 *
 * Identifiers may start with '$' or '@' ($fd, $$parms, @count); "$1" and
 * "@1" are script arguments, substituted here as stap does: "$N" by the
 * argument's own tokens, "@N" by a string.  String bodies are kept raw
 * (escapes unprocessed) so that pass 1 prints them as they were written.
 * A lexical error becomes a TOK_JUNK token with a message: the parser
 * reports it only if it reaches it, so an argument missing in a branch
 * the preprocessor drops is no error (stap behaves the same).
 */
#define _GNU_SOURCE
#include "tr_ast.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const keywords[] = {
	"probe", "global", "private", "function", "if", "else", "for", "foreach",
	"in", "limit", "return", "delete", "while", "break", "continue", "next",
	"string", "long", "try", "catch", NULL,
};

/* Longest first within each length. */
static const char *const ops3[] = { "<<<", "<<=", ">>=", NULL };
static const char *const ops2[] = {
	"==", "!=", "<=", ">=", "<<", ">>", "&&", "||", "++", "--", "+=", "-=",
	"*=", "/=", "%=", "&=", "|=", "^=", ".=", "=~", "!~", "->", "%(", "%?",
	"%:", "%)", NULL,
};
static const char ops1[] = "+-*/%&|^~!=<>.,;:?()[]{}";

static bool is_keyword(const char *s)
{
	/* every keyword is 2 to 8 lowercase letters: most identifiers of
	 * the tapsets are not, and go without a comparison */
	size_t n = strnlen(s, 9);

	if (n < 2 || n > 8 || s[0] < 'b' || s[0] > 'w')
		return false;
	for (unsigned i = 0; keywords[i]; i++)
		if (keywords[i][0] == s[0] && strcmp(s, keywords[i]) == 0)
			return true;
	return false;
}

struct lexer {
	struct tr_session *s;
	const struct tr_file *f;
	const char *p, *end;
	unsigned line, col;
	struct tr_vec *out;
	bool in_arg;    /* lexing a $N argument's text: no $N inside it */
};

static void adv(struct lexer *lx, size_t n)
{
	while (n-- && lx->p < lx->end) {
		if (*lx->p == '\n') {
			lx->line++;
			lx->col = 1;
		} else {
			lx->col++;
		}
		lx->p++;
	}
}

static struct tr_token *emit(struct lexer *lx, enum tr_tok_type type, const char *text,
			     unsigned line, unsigned col)
{
	struct tr_token *t = tr_alloc(sizeof(*t));

	t->type = type;
	t->text = text;
	t->file = lx->f;
	t->line = line;
	t->col = col;
	tr_vec_push(lx->out, t);
	return t;
}

static void junk(struct lexer *lx, unsigned line, unsigned col, const char *msg)
{
	struct tr_token *t = emit(lx, TOK_JUNK, "", line, col);
	t->msg = msg;
}

static bool ident_start(int c)
{
	return isalpha(c) || c == '_' || c == '$' || c == '@';
}

static bool ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$' || c == '@';
}

/* Escape an argument's text into a string literal body. */
static const char *quote_arg(const char *a)
{
	struct tr_buf b = {0};

	for (; *a; a++) {
		if (*a == '"' || *a == '\\')
			tr_buf_putc(&b, '\\');
		tr_buf_putc(&b, *a);
	}
	return tr_buf_str(&b);
}

static void lex_range(struct lexer *lx);

/* "$N" / "@N" / "$#" / "@#" at lx->p; true when handled. */
static bool script_arg(struct lexer *lx, unsigned line, unsigned col)
{
	const char *p = lx->p;
	bool as_string = *p == '@';
	unsigned long n;
	char *endp;
	unsigned nargs = lx->s ? lx->s->args.n : 0;

	if (lx->in_arg && (p[1] == '#' || isdigit((unsigned char)p[1]))) {
		/* '$1' '$1' would expand for ever: stap refuses any nesting */
		adv(lx, 2);
		junk(lx, line, col, "invalid nested substitution of command line arguments");
		return true;
	}
	if (p[1] == '#') {
		struct tr_token *t;
		adv(lx, 2);
		t = emit(lx, TOK_NUMBER, tr_printf("%u", nargs), line, col);
		t->num = nargs;
		if (as_string) {
			t->type = TOK_STRING;
		}
		return true;
	}
	if (!isdigit((unsigned char)p[1]))
		return false;
	n = strtoul(p + 1, &endp, 10);
	adv(lx, (size_t)(endp - p));
	if (n < 1 || n > nargs) {
		junk(lx, line, col, tr_printf("command line argument out of range [1-%u]", nargs));
		return true;
	}
	const char *arg = lx->s->args.items[n - 1];
	if (as_string) {
		emit(lx, TOK_STRING, quote_arg(arg), line, col);
	} else {
		/* The argument's own tokens, placed where "$N" was. */
		struct lexer sub = *lx;
		unsigned first = lx->out->n;
		sub.p = arg;
		sub.end = arg + strlen(arg);
		sub.in_arg = true;
		sub.line = line;
		sub.col = col;
		lex_range(&sub);
		for (unsigned i = first; i < lx->out->n; i++) {
			struct tr_token *t = lx->out->items[i];
			t->line = line;
			t->col = col;
		}
		if (lx->out->n == first)
			junk(lx, line, col, "command line argument is empty");
	}
	return true;
}

static void lex_number(struct lexer *lx, unsigned line, unsigned col)
{
	const char *b = lx->p, *e = b;
	unsigned long long v;
	char *endp;
	struct tr_token *t;
	char *text;

	while (e < lx->end && isalnum((unsigned char)*e))
		e++;
	text = tr_strndup(b, (size_t)(e - b));
	adv(lx, (size_t)(e - b));
	errno = 0;
	/* stap takes any literal that fits 64 bits unsigned, decimal, octal
	 * or hex, and wraps one past INT64_MAX to a negative long. */
	v = strtoull(text, &endp, 0);
	if (*endp || errno || endp == text) {
		t = emit(lx, TOK_JUNK, text, line, col);
		t->msg = "number invalid or out of range";
		t->bad_number = true;
		return;
	}
	t = emit(lx, TOK_NUMBER, text, line, col);
	t->num = (int64_t)v;
	t->overflow = v > (unsigned long long)INT64_MAX;
}

/* A string literal's body as stap keeps it: the escapes it knows as
 * written, the backslash of any other dropped ("\\q" is "q"); a literal
 * ends on its line, as in stap. */
static void lex_string(struct lexer *lx, unsigned line, unsigned col)
{
	const char *b = lx->p + 1, *e = b;
	struct tr_buf body = {0};

	while (e < lx->end && *e != '"' && *e != '\n') {
		if (*e == '\\' && e + 1 < lx->end && e[1] != '\n') {
			if (strchr("ntrabfv01234567x\\\"", e[1]))
				tr_buf_putc(&body, *e);
			e++;
		}
		tr_buf_putc(&body, *e);
		e++;
	}
	if (e >= lx->end || *e == '\n') {
		adv(lx, (size_t)(e - lx->p));
		junk(lx, line, col, "Could not find matching closing quote");
		return;
	}
	emit(lx, TOK_STRING, tr_strdup(tr_buf_str(&body)), line, col);
	free(body.data);
	adv(lx, (size_t)(e - lx->p) + 1);
}

static void lex_range(struct lexer *lx)
{
	while (lx->p < lx->end) {
		const char *p = lx->p;
		unsigned line = lx->line, col = lx->col, i;
		int c = (unsigned char)*p;

		if (isspace(c)) {
			adv(lx, 1);
			continue;
		}
		if (c == '#' || (c == '/' && p + 1 < lx->end && p[1] == '/')) {
			while (lx->p < lx->end && *lx->p != '\n')
				adv(lx, 1);
			continue;
		}
		if (c == '/' && p + 1 < lx->end && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			if (!e || e >= lx->end) {
				adv(lx, (size_t)(lx->end - p));
				junk(lx, line, col, "Could not find matching '*/'");
				return;
			}
			adv(lx, (size_t)(e - p) + 2);
			continue;
		}
		if (c == '\0') {
			adv(lx, 1);
			junk(lx, line, col, "NUL character in the script");
			continue;
		}
		if (c == '"') {
			lex_string(lx, line, col);
			continue;
		}
		if (isdigit(c)) {
			lex_number(lx, line, col);
			continue;
		}
		if ((c == '$' || c == '@') && p + 1 < lx->end && script_arg(lx, line, col))
			continue;
		if (ident_start(c)) {
			const char *e = p + 1;
			while (e < lx->end && ident_char((unsigned char)*e))
				e++;
			char *text = tr_strndup(p, (size_t)(e - p));
			adv(lx, (size_t)(e - p));
			emit(lx, is_keyword(text) ? TOK_KEYWORD : TOK_IDENT, text, line, col);
			continue;
		}
		if (c == '%' && p + 1 < lx->end && p[1] == '{') {
			const char *e = p + 2;
			while (e + 1 < lx->end && !(e[0] == '%' && e[1] == '}'))
				e++;
			if (e + 1 >= lx->end) {
				adv(lx, (size_t)(lx->end - p));
				junk(lx, line, col, "Could not find matching '%}'");
				return;
			}
			emit(lx, TOK_EMBEDDED, tr_strndup(p + 2, (size_t)(e - p - 2)), line, col);
			adv(lx, (size_t)(e - p) + 2);
			continue;
		}
		for (i = 0; ops3[i]; i++)
			if (lx->end - p >= 3 && memcmp(p, ops3[i], 3) == 0)
				break;
		if (ops3[i]) {
			emit(lx, TOK_OP, ops3[i], line, col);
			adv(lx, 3);
			continue;
		}
		for (i = 0; ops2[i]; i++)
			if (lx->end - p >= 2 && memcmp(p, ops2[i], 2) == 0)
				break;
		if (ops2[i]) {
			emit(lx, TOK_OP, ops2[i], line, col);
			adv(lx, 2);
			continue;
		}
		if (strchr(ops1, c)) {
			emit(lx, TOK_OP, tr_strndup(p, 1), line, col);
			adv(lx, 1);
			continue;
		}
		adv(lx, 1);
		{
			struct tr_token *t = emit(lx, TOK_JUNK, tr_strndup(p, 1), line, col);
			t->msg = "unexpected character";
		}
	}
}

void tr_lex_file(struct tr_session *s, const struct tr_file *f, struct tr_vec *out)
{
	struct lexer lx = {
		.s = s, .f = f, .p = f->text, .end = f->text + f->len,
		.line = 1, .col = 1, .out = out,
	};

	lex_range(&lx);
	emit(&lx, TOK_EOF, "", lx.line, lx.col);
}
