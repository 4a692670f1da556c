/*
 * util.c - arena-style allocation, buffers, and stap-style diagnostics;
 * the string and tree helpers every pass shares.
 */
#define _GNU_SOURCE
#include "tr_ast.h"
#include "mt_utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tr_diag tr_diag;

void *tr_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fputs("marktap: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

char *tr_strndup(const char *s, size_t n)
{
	char *p = tr_alloc(n + 1);

	memcpy(p, s, n);
	return p;
}

char *tr_strdup(const char *s)
{
	return tr_strndup(s, strlen(s));
}

char *tr_printf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0) {
		fputs("marktap: out of memory\n", stderr);
		exit(1);
	}
	va_end(ap);
	return p;
}

void tr_buf_add(struct tr_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = realloc(b->data, cap);
		if (!b->data) {
			fputs("marktap: out of memory\n", stderr);
			exit(1);
		}
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void tr_buf_puts(struct tr_buf *b, const char *s)
{
	tr_buf_add(b, s, strlen(s));
}

void tr_buf_putc(struct tr_buf *b, char c)
{
	tr_buf_add(b, &c, 1);
}

void tr_buf_printf(struct tr_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fputs("marktap: out of memory\n", stderr);
		exit(1);
	}
	tr_buf_add(b, p, (size_t)n);
	free(p);
}

const char *tr_buf_str(struct tr_buf *b)
{
	if (!b->data)
		tr_buf_add(b, "", 0);
	return b->data;
}

void tr_vec_push(struct tr_vec *v, void *item)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->items = realloc(v->items, v->cap * sizeof(void *));
		if (!v->items) {
			fputs("marktap: out of memory\n", stderr);
			exit(1);
		}
	}
	v->items[v->n++] = item;
}

/* ---- files -------------------------------------------------------------- */

struct tr_file *tr_file_from_string(const char *name, const char *text)
{
	struct tr_file *f = tr_alloc(sizeof(*f));

	f->name = name;
	f->text = text;
	f->len = strlen(text);
	return f;
}

struct tr_file *tr_file_read(const char *path, const char *shown_name)
{
	FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	struct tr_buf b = {0};
	char chunk[65536];
	size_t n;

	if (!fp)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		tr_buf_add(&b, chunk, n);
	if (ferror(fp)) {
		int e = errno;
		if (fp != stdin)
			fclose(fp);
		errno = e;
		return NULL;
	}
	if (fp != stdin)
		fclose(fp);
	tr_buf_str(&b);
	/* A NUL inside the text would end it early: the lexer reports it. */
	struct tr_file *f = tr_file_from_string(shown_name ? shown_name : path, b.data);
	f->len = b.len;
	return f;
}

/* ---- diagnostics -------------------------------------------------------- */

static const char *tok_type_name(enum tr_tok_type t)
{
	switch (t) {
	case TOK_EOF: return "end of input";
	case TOK_JUNK: return "junk";
	case TOK_IDENT: return "identifier";
	case TOK_KEYWORD: return "keyword";
	case TOK_OP: return "operator";
	case TOK_STRING: return "string";
	case TOK_NUMBER: return "number";
	case TOK_EMBEDDED: return "embedded-code";
	}
	return "?";
}

const char *tr_tok_describe(const struct tr_token *t)
{
	switch (t->type) {
	case TOK_KEYWORD:
	case TOK_EMBEDDED:
	case TOK_EOF:
		return tok_type_name(t->type);
	case TOK_STRING:
		return tr_printf("string \"%s\"", t->text);
	case TOK_JUNK:
		if (t->bad_number)
			return tr_printf("number '%s'", t->text);
		return tr_printf("junk '%s'", t->text ? t->text : "");
	case TOK_IDENT:
		/* stap names every @word (@count, @hist_log, a macro) an operator */
		if (t->text && t->text[0] == '@')
			return tr_printf("operator '%s'", t->text);
		return tr_printf("identifier '%s'", t->text ? t->text : "");
	default:
		return tr_printf("%s '%s'", tok_type_name(t->type), t->text ? t->text : "");
	}
}

/* The source line of a token and a caret under its column. */
static void print_source(struct tr_buf *b, const struct tr_token *t, const char *label,
			 unsigned indent)
{
	const struct tr_file *f = t->file;
	const char *p, *end;
	unsigned line = 1, i;

	if (!f || !f->text)
		return;
	p = f->text;
	while (line < t->line && *p) {
		if (*p++ == '\n')
			line++;
	}
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	tr_buf_printf(b, "%*s%s", (int)(indent - strlen(label)), "", label);
	tr_buf_add(b, p, (size_t)(end - p));
	tr_buf_putc(b, '\n');
	for (i = 0; i < indent; i++)
		tr_buf_putc(b, ' ');
	for (i = 1; i < t->col && p + i - 1 < end; i++)
		tr_buf_putc(b, p[i - 1] == '\t' ? '\t' : ' ');
	tr_buf_puts(b, "^\n");
}

/* stap prints one message of a kind once; -v shows them all. */
static bool already_seen(const char *msg)
{
	unsigned i;

	if (tr_diag.verbose)
		return false;
	for (i = 0; i < tr_diag.seen.n; i++) {
		if (strcmp(tr_diag.seen.items[i], msg) == 0) {
			tr_diag.duplicates++;
			return true;
		}
	}
	tr_vec_push(&tr_diag.seen, tr_strdup(msg));
	return false;
}

static void report(const char *kind, const struct tr_token *t, const char *msg, bool sem)
{
	struct tr_buf b = {0};
	const char *where;

	if (!t) {
		tr_buf_printf(&b, "%s: %s\n", kind, msg);
	} else {
		where = t->file ? tr_printf("%s:%u:%u", t->file->name, t->line, t->col) : "";
		if (t->type == TOK_EOF) {
			tr_buf_printf(&b, "%s: %s\n%13s%s EOF\n", kind, msg, "saw: ",
				      t->file ? t->file->name : "");
		} else if (sem) {
			tr_buf_printf(&b, "%s: %s: %s at %s\n", kind, msg, tr_tok_describe(t), where);
			print_source(&b, t, "source: ", 16);
		} else {
			/* a bad number is seen as stap shows it, other junk is a place */
			bool seen = t->type != TOK_JUNK || t->bad_number;

			tr_buf_printf(&b, "%s: %s\n", kind, msg);
			tr_buf_printf(&b, "%13s%s at %s\n", seen ? "saw: " : "at: ",
				      tr_tok_describe(t), where);
			print_source(&b, t, "source: ", 13);
		}
		/* Tokens of a macro body also show where the macro was used. */
		for (const struct tr_token *c = t->chain; c; c = c->chain)
			tr_buf_printf(&b, "%13s%s at %s:%u:%u\n", "in expansion of ",
				      tr_tok_describe(c), c->file ? c->file->name : "", c->line, c->col);
		tr_buf_putc(&b, '\n');
	}
	/* stap's key: the message, and for semantic errors the token too */
	if (!already_seen(tr_printf("%s: %s %s", kind, msg, sem && t ? tr_tok_describe(t) : "")))
		fputs(b.data, stderr);
	free(b.data);
}

void tr_error_at(const char *kind, const struct tr_token *t, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	tr_diag.errors++;
	report(kind, t, msg ? msg : fmt, false);
	free(msg);
}

void tr_sem_error(const struct tr_token *t, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	tr_diag.errors++;
	if (!tr_diag.quiet_semantic)
		report("semantic error", t, msg ? msg : fmt, true);
	free(msg);
}

void tr_warn(const struct tr_token *t, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (tr_diag.suppress_warnings)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	tr_diag.warnings++;
	report("WARNING", t, msg ? msg : fmt, true);
	free(msg);
}

const char *tr_type_name(enum tr_type t)
{
	switch (t) {
	case T_LONG: return "long";
	case T_STRING: return "string";
	case T_STATS: return "stats";
	default: return "unknown";
	}
}

bool tr_glob(const char *p, const char *s)
{
	/* '*' matches any run of characters; simple backtracking. */
	const char *star = NULL, *mark = NULL;

	while (*s) {
		if (*p == '*') {
			star = p++;
			mark = s;
		} else if (*p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++mark;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/* The escapes of the language's string literals, as C's. */
char *tr_unescape(const char *raw, size_t *len)
{
	size_t n = strlen(raw), o = 0, i;
	char *out = tr_alloc(n + 1);

	for (i = 0; i < n; i++) {
		char c = raw[i];
		if (c != '\\' || i + 1 >= n) {
			out[o++] = c;
			continue;
		}
		c = raw[++i];
		switch (c) {
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'a': out[o++] = '\a'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'v': out[o++] = '\v'; break;
		case 'x': {
			unsigned v = 0, k = 0;
			while (k < 2 && i + 1 < n && strchr("0123456789abcdefABCDEF", raw[i + 1]) && raw[i + 1]) {
				char h = raw[++i];
				v = v * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
				k++;
			}
			out[o++] = (char)v;
			break;
		}
		case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
			unsigned v = (unsigned)(c - '0'), k = 1;
			while (k < 3 && i + 1 < n && raw[i + 1] >= '0' && raw[i + 1] <= '7') {
				v = v * 8 + (unsigned)(raw[++i] - '0');
				k++;
			}
			out[o++] = (char)v;
			break;
		}
		default:
			out[o++] = c; /* \\ \" \' and unknown ones: the character */
		}
	}
	out[o] = '\0';
	if (len)
		*len = o;
	return out;
}

/* printf formats: the argument type each conversion wants (elab_type.c checks
 * the arguments, parse.c the conversions, as stap does in pass 1). */
int tr_format_types(const char *raw, enum tr_type *types, int max, const char **err)
{
	char *fmt = tr_unescape(raw, NULL);
	int n = 0;

	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		p++;
		if (*p == '%')
			continue;
		while (*p && strchr("-+ #0", *p))
			p++;
		if (*p == '*') {
			if (n < max)
				types[n++] = T_LONG;
			p++;
		} else {
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (*p == '.') {
			p++;
			if (*p == '*') {
				if (n < max)
					types[n++] = T_LONG;
				p++;
			} else {
				while (*p >= '0' && *p <= '9')
					p++;
			}
		}
		while (*p == 'l' || *p == 'h' || *p == 'L')
			p++;
		if (!*p || !strchr("diuxXopscbmM", *p)) {
			*err = "invalid or missing conversion specifier";
			return -1;
		}
		if (n < max)
			types[n++] = *p == 's' || *p == 'm' || *p == 'M' ? (*p == 's' ? T_STRING : T_LONG) : T_LONG;
	}
	return n;
}

/* ---- walking the tree ---------------------------------------------------- */

bool tr_is_chain(const struct tr_expr *e)
{
	return e && (e->kind == E_BIN || e->kind == E_LOGIC || e->kind == E_CMP || e->kind == E_CAT);
}

void tr_chain(const struct tr_expr *e, bool same_kind, struct tr_vec *spine)
{
	const struct tr_expr *top = e;

	spine->n = 0;
	for (; tr_is_chain(e) && (!same_kind || e->kind == top->kind); e = e->a)
		tr_vec_push(spine, (void *)e);
	/* deepest first: the order the operators are evaluated in */
	for (unsigned i = 0, j = spine->n - 1; spine->n && i < j; i++, j--) {
		void *t = spine->items[i];
		spine->items[i] = spine->items[j];
		spine->items[j] = t;
	}
}

void tr_walk_expr(const struct tr_walker *w, const struct tr_expr *e)
{
	if (!e)
		return;
	if (tr_is_chain(e)) {
		/* Pre-order as the recursion would go, with a loop down the chain. */
		struct tr_vec spine = {0};
		tr_chain(e, false, &spine);
		for (unsigned i = spine.n; w->expr && i-- > 0;)
			w->expr(spine.items[i], w->arg);
		tr_walk_expr(w, ((struct tr_expr *)spine.items[0])->a);
		for (unsigned i = 0; i < spine.n; i++)
			tr_walk_expr(w, ((struct tr_expr *)spine.items[i])->b);
		free(spine.items);
		return;
	}
	if (w->expr)
		w->expr(e, w->arg);
	tr_walk_expr(w, e->a);
	tr_walk_expr(w, e->b);
	tr_walk_expr(w, e->c);
	for (unsigned i = 0; i < e->args.n; i++)
		tr_walk_expr(w, e->args.items[i]);
}

void tr_walk_stmt(const struct tr_walker *w, const struct tr_stmt *st)
{
	if (!st || (w->stmt && !w->stmt(st, w->arg)))
		return;
	for (unsigned i = 0; i < st->list.n; i++)
		tr_walk_stmt(w, st->list.items[i]);
	tr_walk_expr(w, st->e);
	tr_walk_expr(w, st->e2);
	tr_walk_expr(w, st->e3);
	tr_walk_stmt(w, st->body);
	tr_walk_stmt(w, st->els);
	for (unsigned i = 0; i < st->keys.n; i++)
		tr_walk_expr(w, st->keys.items[i]);
	tr_walk_expr(w, st->value);
	tr_walk_expr(w, st->base);
	tr_walk_expr(w, st->limit);
	tr_walk_expr(w, st->catch_var);
}

/* How many one-character edits make a into b (Levenshtein). */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t n = strlen(b);
	unsigned *row = tr_alloc((n + 1) * sizeof(*row));

	for (size_t j = 0; j <= n; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; a[i - 1]; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= n; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	unsigned d = row[n];
	free(row);
	return d;
}

struct near { const char *name; unsigned dist, at; };

static int by_distance(const void *a, const void *b)
{
	const struct near *x = a, *y = b;

	return x->dist != y->dist ? (x->dist < y->dist ? -1 : 1) : (x->at > y->at) - (x->at < y->at);
}

/* " (LABEL: a, b)" of up to max candidates (each once) no farther than
 * limit from name, nearest first, ties in the candidates' order; "" if
 * none. */
static const char *nearest(const char *label, const char *name, const struct tr_vec *cands, unsigned max,
			   unsigned limit)
{
	struct near *v = calloc(cands->n + 1, sizeof(*v));
	struct tr_buf b = {0};
	unsigned n = 0;

	for (unsigned i = 0; i < cands->n; i++) {
		const char *c = cands->items[i];
		unsigned d = edit_distance(name, c), k;
		for (k = 0; k < n && strcmp(v[k].name, c); k++)
			;
		if (d <= limit && k == n)
			v[n++] = (struct near){ c, d, i };
	}
	qsort(v, n, sizeof(*v), by_distance);
	for (unsigned k = 0; k < n && k < max; k++)
		tr_buf_printf(&b, "%s%s", k ? ", " : tr_printf(" (%s: ", label), v[k].name);
	if (n)
		tr_buf_putc(&b, ')');
	free(v);
	return tr_buf_str(&b);
}

/* " (similar: a, b)": up to five of the candidate names nearest name
 * (each once), nearest first, as stap suggests them; "" when none is near. */
const char *tr_similar_names(const char *name, const struct tr_vec *cands)
{
	return tr_similar_as("similar", name, cands);
}

const char *tr_similar_as(const char *label, const char *name, const struct tr_vec *cands)
{
	return nearest(label, name, cands, 5, (unsigned)strlen(name) / 2 + 2);
}

/* " (alternatives: $a, $b)": every candidate, nearest name first. */
const char *tr_alternatives(const char *name, const struct tr_vec *cands)
{
	return nearest("alternatives", name, cands, UINT_MAX, UINT_MAX);
}

/* Bytes for a terminal: C0 controls but newline and tab, DEL, C1 controls
 * and bytes outside well-formed UTF-8 as the text \xHH (trace.c says why) */
const char *tr_tty_escape(const char *buf, size_t n, size_t *len)
{
	const unsigned char *s = (const unsigned char *)buf;
	struct tr_buf b = {0};
	size_t i = 0, from = 0;

	while (i < n) {
		uint32_t cp = s[i];
		unsigned k = s[i] < 0x80 ? 1 : mt_utf8_len(s + i, n - i, &cp);
		if (k && (cp >= 0xa0 || (cp >= 0x20 && cp < 0x7f) || cp == '\n' || cp == '\t')) {
			i += k;
			continue;
		}
		tr_buf_add(&b, buf + from, i - from);
		tr_buf_printf(&b, "\\x%02x", s[i]);
		from = ++i;
	}
	tr_buf_add(&b, buf + from, i - from);
	*len = b.len;
	return tr_buf_str(&b);
}


int64_t tr_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
