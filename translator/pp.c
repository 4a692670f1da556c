/*
 * pp.c - the preprocessor: %( COND %? THEN %: ELSE %) and @define macros.
 *
 * It works on tokens, between the lexer and the parser, as stap's does.
 * Conditions compare kernel_v, kernel_vr, systemtap_v (versions), arch,
 * runtime, CONFIG_* (strings, '*' globbing for == and !=), guru_mode and
 * numbers ($# has already become a number), joined by && and ||.
 * Macros: "@define NAME %( BODY %)" or "@define NAME(a, b) %( ... @a ... %)",
 * used as @NAME or @NAME(x, y).  Macros of a script are visible in that
 * script only; those of tapset .stpm files everywhere.
 */
#define _GNU_SOURCE
#include "tr_ast.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MACRO_DEPTH_MAX 64
#define MACRO_TOKENS_MAX 200000
#define TR_STR_(x) #x
#define TR_STR(x) TR_STR_(x)
static unsigned long expanded_tokens;   /* in this tr_pp_run */
/* A bound was hit (nesting, expansion size): stop expanding at once, or
 * the other branches of a self-referencing macro would each run into the
 * bound again (a fuzzer's "@define A %( @A @A %)" took 1 GB with ASan). */
static bool giving_up;

struct macro {
	const char *name;               /* without '@' */
	struct tr_vec params;           /* const char * */
	struct tr_vec body;             /* const struct tr_token * */
	const struct tr_token *tok;
};

struct pp {
	struct tr_session *s;
	const struct tr_vec *in;
	unsigned pos;
	struct tr_vec *out;
	struct tr_vec *macros;          /* where @define puts them */
	struct tr_vec local;
	int depth;
	bool failed;
};

static const struct tr_token *peek(struct pp *pp)
{
	return pp->in->items[pp->pos];
}

static const struct tr_token *next(struct pp *pp)
{
	const struct tr_token *t = pp->in->items[pp->pos];

	if (t->type != TOK_EOF)
		pp->pos++;
	return t;
}

static bool is_op(const struct tr_token *t, const char *op)
{
	return t->type == TOK_OP && strcmp(t->text, op) == 0;
}

static void pp_error(struct pp *pp, const struct tr_token *t, const char *msg)
{
	tr_error_at("parse error", t, "%s", t->type == TOK_JUNK && t->msg ? t->msg : msg);
	pp->failed = true;
}

/* ---- conditions --------------------------------------------------------- */

/* The kernel's configuration, read once: /boot/config-RELEASE, the build
 * tree's .config, or the running kernel's /proc/config.gz (through gzip:
 * no zlib for one file).  Empty when none is found. */
static const char *kernel_config(struct tr_session *s)
{
	static char *text;
	char path[512];
	struct utsname u;
	struct tr_buf b = {0};
	FILE *fp;

	if (text)
		return text;
	snprintf(path, sizeof(path), "/boot/config-%s", s->kernel_vr);
	fp = fopen(path, "r");
	if (!fp) {
		snprintf(path, sizeof(path), "/lib/modules/%s/build/.config", s->kernel_vr);
		fp = fopen(path, "r");
	}
	bool piped = false;
	if (!fp && uname(&u) == 0 && !strcmp(u.release, s->kernel_vr) && access("/proc/config.gz", R_OK) == 0) {
		fp = popen("gzip -dc /proc/config.gz 2>/dev/null", "r");
		piped = fp != NULL;
	}
	if (fp) {
		char chunk[4096];
		size_t n;
		while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
			tr_buf_add(&b, chunk, n);
		if (piped)
			pclose(fp);
		else
			fclose(fp);
	}
	text = (char *)tr_buf_str(&b);
	return text;
}

static const char *config_value(struct tr_session *s, const char *name)
{
	size_t n = strlen(name);

	for (const char *line = kernel_config(s); *line;) {
		size_t len = strcspn(line, "\n");
		if (len > n && !strncmp(line, name, n) && line[n] == '=') {
			const char *v = line + n + 1;
			size_t vl = len - n - 1;
			if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
				v++;
				vl -= 2;
			}
			return tr_strndup(v, vl);
		}
		line += len + (line[len] == '\n');
	}
	return "";
}

static int compare(const char *op, int cmp)
{
	if (!strcmp(op, "==")) return cmp == 0;
	if (!strcmp(op, "!=")) return cmp != 0;
	if (!strcmp(op, "<")) return cmp < 0;
	if (!strcmp(op, "<=")) return cmp <= 0;
	if (!strcmp(op, ">")) return cmp > 0;
	if (!strcmp(op, ">=")) return cmp >= 0;
	return -1;
}

static bool is_cmp_op(const struct tr_token *t)
{
	return t->type == TOK_OP && compare(t->text, 0) >= 0;
}

/* What a condition may compare, in stap's words. */
#define COND_EXPECTED "expected 'arch', 'kernel_v', 'kernel_vr', 'systemtap_v',\n" \
	"             'runtime', 'systemtap_privilege', 'CONFIG_...', or\n" \
	"             comparison between strings or integers"

static int cond_atom(struct pp *pp)
{
	const struct tr_token *l = next(pp), *op, *r;
	struct tr_session *s = pp->s;

	if (is_op(l, "(")) { /* stap has no parentheses here: say what it says */
		pp_error(pp, l, COND_EXPECTED);
		while (peek(pp)->type != TOK_EOF && !is_op(peek(pp), "%?"))
			next(pp);
		return 0;
	}
	op = next(pp);
	if (!is_cmp_op(op)) {
		pp_error(pp, op, "expected comparison operator");
		return 0;
	}
	r = next(pp);
	if (l->type == TOK_NUMBER && r->type == TOK_NUMBER)
		return compare(op->text, l->num < r->num ? -1 : l->num > r->num);
	if (l->type == TOK_STRING && r->type == TOK_STRING)
		return compare(op->text, strcmp(l->text, r->text));
	if (l->type != TOK_IDENT) {
		pp_error(pp, l, COND_EXPECTED);
		return 0;
	}
	if (!strcmp(l->text, "guru_mode")) {
		if (r->type != TOK_NUMBER) {
			pp_error(pp, r, "expected number");
			return 0;
		}
		return compare(op->text, (s->guru ? 1 : 0) - (r->num ? 1 : 0));
	}
	if (r->type != TOK_STRING) {
		pp_error(pp, r, "expected string literal");
		return 0;
	}
	const char *have;
	bool version = false;
	if (!strcmp(l->text, "kernel_v")) {
		have = s->kernel_v;
		version = true;
	} else if (!strcmp(l->text, "kernel_vr")) {
		have = s->kernel_vr;
		version = true;
	} else if (!strcmp(l->text, "systemtap_v")) {
		have = s->systemtap_v;
		version = true;
	} else if (!strcmp(l->text, "arch")) {
		have = s->arch;
	} else if (!strcmp(l->text, "runtime")) {
		have = s->runtime;
	} else if (!strcmp(l->text, "systemtap_privilege")) {
		have = "stapdev"; /* stap's default; no --privilege here */
	} else if (!strncmp(l->text, "CONFIG_", 7)) {
		have = config_value(s, l->text);
	} else {
		pp_error(pp, l, COND_EXPECTED);
		return 0;
	}
	if ((!strcmp(op->text, "==") || !strcmp(op->text, "!=")) && strchr(r->text, '*'))
		return compare(op->text, tr_glob(r->text, have) ? 0 : 1);
	return compare(op->text, version ? strverscmp(have, r->text) : strcmp(have, r->text));
}

static int cond_and(struct pp *pp)
{
	int v = cond_atom(pp);

	while (is_op(peek(pp), "&&")) {
		next(pp);
		v = cond_atom(pp) && v;
	}
	return v;
}

static int cond_or(struct pp *pp)
{
	int v = cond_and(pp);

	while (is_op(peek(pp), "||")) {
		next(pp);
		v = cond_and(pp) || v;
	}
	return v;
}

/* ---- the walk ----------------------------------------------------------- */

static void run(struct pp *pp);

/* Tokens up to the %: or %) that closes the current level, not included. */
static void collect_branch(struct pp *pp, struct tr_vec *into, bool stop_at_else,
			   const struct tr_token *open)
{
	int nest = 0;

	for (;;) {
		const struct tr_token *t = peek(pp);
		if (t->type == TOK_EOF) {
			pp_error(pp, open, "incomplete conditional - missing '%)'");
			return;
		}
		if (is_op(t, "%("))
			nest++;
		else if (nest == 0 && (is_op(t, "%)") || (stop_at_else && is_op(t, "%:"))))
			return;
		else if (is_op(t, "%)"))
			nest--;
		tr_vec_push(into, (void *)next(pp));
	}
}

static void run_vec(struct pp *pp, struct tr_vec *toks)
{
	struct pp sub = *pp;
	struct tr_token *eof = tr_alloc(sizeof(*eof));
	const struct tr_token *last = toks->n ? toks->items[toks->n - 1] : peek(pp);

	*eof = *last;
	eof->type = TOK_EOF;
	eof->text = "";
	tr_vec_push(toks, eof);
	sub.in = toks;
	sub.pos = 0;
	sub.depth = pp->depth + 1;
	if (sub.depth > MACRO_DEPTH_MAX) {
		pp_error(pp, last, "too many nested macro expansions or conditionals");
		giving_up = true;
		return;
	}
	run(&sub);
	if (sub.failed)
		pp->failed = true;
	pp->local = sub.local;
}

/*
 * A condition, its macros expanded first, as stap's (@define v %( 2 %)
 * then %( @v == 2 %? ...); *junk is set to its first token left over.
 */
static int condition(struct pp *pp, const struct tr_token **junk)
{
	struct tr_vec raw = {0}, expanded = {0};
	struct pp sub = *pp, ev;
	const struct tr_token *t;
	int v;

	while ((t = peek(pp))->type != TOK_EOF && !is_op(t, "%?") && !is_op(t, "%(") &&
	       !is_op(t, "%:") && !is_op(t, "%)"))
		tr_vec_push(&raw, (void *)next(pp));
	sub.out = &expanded;
	run_vec(&sub, &raw);   /* (it ends raw with an EOF token) */
	pp->failed |= sub.failed;
	pp->local = sub.local;
	tr_vec_push(&expanded, raw.items[raw.n - 1]);
	ev = *pp;
	ev.in = &expanded;
	ev.pos = 0;
	ev.failed = false;
	v = cond_or(&ev);
	pp->failed |= ev.failed;
	*junk = peek(&ev)->type != TOK_EOF ? peek(&ev) : NULL;
	free(raw.items);
	free(expanded.items);
	return v;
}

static void conditional(struct pp *pp)
{
	const struct tr_token *open = next(pp), *t, *junk;
	struct tr_vec then_toks = {0}, else_toks = {0};
	int v = condition(pp, &junk);

	t = junk ? junk : next(pp);
	if (!is_op(t, "%?")) {
		pp_error(pp, t, "expected '%?' marker for conditional");
		/* skip to the end of this conditional */
		collect_branch(pp, &then_toks, false, open);
		next(pp);
		return;
	}
	collect_branch(pp, &then_toks, true, open);
	if (is_op(peek(pp), "%:")) {
		next(pp);
		collect_branch(pp, &else_toks, false, open);
	}
	if (!is_op(next(pp), "%)"))
		return; /* reported by collect_branch */
	run_vec(pp, v ? &then_toks : &else_toks);
}

static struct macro *find_macro(struct pp *pp, const char *name)
{
	struct tr_vec *lists[2] = { &pp->local, &pp->s->macros };

	for (int l = 0; l < 2; l++)
		for (unsigned i = lists[l]->n; i-- > 0;) {
			struct macro *m = lists[l]->items[i];
			if (strcmp(m->name, name) == 0)
				return m;
		}
	return NULL;
}

static void define(struct pp *pp)
{
	const struct tr_token *at = next(pp), *name = next(pp), *t;
	struct macro *m = tr_alloc(sizeof(*m));

	if (name->type != TOK_IDENT && name->type != TOK_KEYWORD) {
		pp_error(pp, name, "expected identifier");
		return;
	}
	m->name = name->text;
	m->tok = at;
	if (is_op(peek(pp), "(")) {
		next(pp);
		for (;;) {
			t = next(pp);
			if (t->type != TOK_IDENT) {
				pp_error(pp, t, "expected identifier");
				return;
			}
			tr_vec_push(&m->params, (void *)t->text);
			t = next(pp);
			if (is_op(t, ")"))
				break;
			if (!is_op(t, ",")) {
				pp_error(pp, t, "expected ',' or ')'");
				return;
			}
		}
	}
	t = next(pp);
	if (!is_op(t, "%(")) {
		pp_error(pp, t, "expected '%('");
		return;
	}
	collect_branch(pp, &m->body, false, t);
	if (!is_op(next(pp), "%)"))
		return;
	if (pp->macros != &pp->s->macros) {
		for (unsigned i = 0; i < pp->local.n; i++)
			if (!strcmp(((struct macro *)pp->local.items[i])->name, m->name)) {
				pp_error(pp, name, tr_printf("attempt to redefine macro '@%s' in the same file",
							     m->name));
				return;
			}
	}
	if (find_macro(pp, m->name) && pp->macros == &pp->s->macros) {
		/* A tapset redefining a macro: the first one wins, as in stap. */
		return;
	}
	tr_vec_push(pp->macros == &pp->s->macros ? &pp->s->macros : &pp->local, m);
}

static struct tr_token *copy_tok(const struct tr_token *t, const struct tr_token *site)
{
	struct tr_token *c = tr_alloc(sizeof(*c));

	*c = *t;
	c->chain = site;
	return c;
}

static void expand(struct pp *pp, struct macro *m)
{
	const struct tr_token *site = next(pp);
	struct tr_vec args[32] = {{0}};
	struct tr_vec body = {0};
	unsigned nargs = 0;

	if (m->params.n) {
		const struct tr_token *t = next(pp);
		int depth = 0;
		if (!is_op(t, "(")) {
			pp_error(pp, t, "expected '('");
			return;
		}
		for (;;) {
			t = next(pp);
			if (t->type == TOK_EOF) {
				pp_error(pp, site, "unterminated macro invocation");
				return;
			}
			if (depth == 0 && (is_op(t, ",") || is_op(t, ")"))) {
				nargs++;
				if (is_op(t, ")"))
					break;
				if (nargs >= 32) {
					pp_error(pp, t, "too many macro arguments");
					return;
				}
				continue;
			}
			if (is_op(t, "(") || is_op(t, "[") || is_op(t, "{"))
				depth++;
			if (is_op(t, ")") || is_op(t, "]") || is_op(t, "}"))
				depth--;
			tr_vec_push(&args[nargs], (void *)t);
		}
		if (nargs != m->params.n) {
			tr_error_at("parse error", site, "invalid macro invocation: %u arguments for %u parameters",
				    nargs, m->params.n);
			pp->failed = true;
			return;
		}
	}
	/* each expansion may hold several others: bound the whole work, or
	 * "@define a %( @a @a %)"-like macros would take exponential time */
	expanded_tokens += m->body.n;
	for (unsigned k = 0; k < nargs && k < 16; k++)
		expanded_tokens += args[k].n;
	if (expanded_tokens > MACRO_TOKENS_MAX) {
		pp_error(pp, site, "macro expansion too large (more than "
			 TR_STR(MACRO_TOKENS_MAX) " tokens)");
		giving_up = true;
		return;
	}
	for (unsigned i = 0; i < m->body.n; i++) {
		const struct tr_token *t = m->body.items[i];
		bool done = false;
		if (t->type == TOK_IDENT && t->text[0] == '@') {
			for (unsigned k = 0; k < m->params.n; k++)
				if (strcmp(t->text + 1, m->params.items[k]) == 0) {
					for (unsigned j = 0; j < args[k].n; j++)
						tr_vec_push(&body, copy_tok(args[k].items[j], site));
					done = true;
				}
		}
		if (!done)
			tr_vec_push(&body, copy_tok(t, site));
	}
	run_vec(pp, &body);
}

static void run(struct pp *pp)
{
	for (;;) {
		const struct tr_token *t = peek(pp);
		struct macro *m;

		if (t->type == TOK_EOF || giving_up)
			return;
		if (is_op(t, "%(")) {
			conditional(pp);
		} else if (is_op(t, "%?") || is_op(t, "%:") || is_op(t, "%)")) {
			pp_error(pp, t, "incomplete conditional - missing '%('");
			next(pp);
		} else if (t->type == TOK_IDENT && strcmp(t->text, "@define") == 0) {
			define(pp);
		} else if (t->type == TOK_IDENT && t->text[0] == '@' && t->text[1] &&
			   (m = find_macro(pp, t->text + 1))) {
			expand(pp, m);
		} else {
			tr_vec_push(pp->out, (void *)next(pp));
		}
	}
}

static void set_facts(struct tr_session *s)
{
	static struct utsname u;

	if (s->runtime)
		return;
	uname(&u);
	if (!s->kernel_vr)      /* -r KVER names another kernel */
		s->kernel_vr = u.release;
	s->kernel_v = tr_strndup(s->kernel_vr, strcspn(s->kernel_vr, "-+"));
	if (!s->arch)
		s->arch = strcmp(u.machine, "x86_64") == 0 ? "x86_64" : u.machine;
	if (!s->runtime)
		s->runtime = "marktap";
	if (!s->systemtap_v)
		s->systemtap_v = "4.8";
}

void tr_pp_run(struct tr_session *s, const struct tr_vec *in, struct tr_vec *out)
{
	struct pp pp = { .s = s, .in = in, .out = out };

	set_facts(s);
	expanded_tokens = 0;
	giving_up = false;
	pp.macros = &pp.local;
	run(&pp);
	tr_vec_push(out, in->items[in->n - 1]); /* EOF */
}

void tr_pp_collect(struct tr_session *s, const struct tr_vec *in)
{
	struct pp pp = { .s = s, .in = in };
	struct tr_vec out = {0};

	set_facts(s);
	pp.out = &out;
	pp.macros = &s->macros;
	for (;;) {
		const struct tr_token *t = peek(&pp);
		if (t->type == TOK_EOF)
			break;
		if (t->type == TOK_IDENT && strcmp(t->text, "@define") == 0)
			define(&pp);
		else if (is_op(t, "%("))
			conditional(&pp);
		else
			next(&pp);
	}
	free(out.items);
}
