/*
 * print.c - pass 1's output: the parse tree in stap's form.
 *
 * Every operand of an operator is parenthesised and every statement of a
 * block ends with ';' and a newline, exactly as "stap -p1" prints, so the
 * two can be compared with diff.  Two differences, both to make the output
 * read back as the same tree: printf/printd formats are printed as written
 * (stap doubles their backslashes each time) and -9223372036854775808 is
 * one literal (stap prints -(-9223372036854775808)).
 */
#define _GNU_SOURCE
#include "tr_ast.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void print_list(struct tr_buf *b, const struct tr_vec *v)
{
	for (unsigned i = 0; i < v->n; i++) {
		if (i)
			tr_buf_puts(b, ", ");
		if (v->items[i])
			tr_print_expr(b, v->items[i]);
		else
			tr_buf_putc(b, '*');
	}
}

static void paren(struct tr_buf *b, const struct tr_expr *e)
{
	tr_buf_putc(b, '(');
	tr_print_expr(b, e);
	tr_buf_putc(b, ')');
}

/* A name with stap's pretty-printing suffix: "$x$$" prints "$x->$$". */
static void print_pretty_name(struct tr_buf *b, const char *name, size_t skip)
{
	const char *dollar = strchr(name + skip, '$');

	if (!dollar || dollar == name + skip) {
		tr_buf_puts(b, name);
		return;
	}
	tr_buf_add(b, name, (size_t)(dollar - name));
	tr_buf_printf(b, "->%s", dollar);
}

static void print_target(struct tr_buf *b, const struct tr_expr *e)
{
	unsigned k = 0;

	if (e->addr)
		tr_buf_putc(b, '&');
	if (!*e->str) { /* autocast: (fh)->a */
		paren(b, e->a);
	} else if (e->a) { /* @cast(p, "t"), @kderef(4, p)... */
		tr_buf_printf(b, "%s(", e->str);
		tr_print_expr(b, e->a);
		if (e->b) {
			tr_buf_puts(b, ", ");
			tr_print_expr(b, e->b);
		}
		tr_buf_printf(b, "%s)", e->fmt ? e->fmt : "");
	} else if (e->str[0] == '$') {
		print_pretty_name(b, e->str, e->str[1] == '$' ? 2 : 1);
	} else {
		tr_buf_puts(b, e->str);
	}
	for (const char *m = e->members; m && *m;) {
		if (!strncmp(m, "[]", 2)) {
			tr_buf_putc(b, '[');
			if (k < e->args.n)
				tr_print_expr(b, e->args.items[k++]);
			tr_buf_putc(b, ']');
			m += 2;
			continue;
		}
		size_t n = strcspn(m + 2, "-[") + 2; /* "->name" */
		tr_buf_puts(b, "->");
		print_pretty_name(b, tr_strndup(m + 2, n - 2), 0);
		m += n;
	}
}

/* "((a) + (b)) - (c)" for a chain, with a loop however long it is. */
static void print_chain(struct tr_buf *b, const struct tr_expr *e)
{
	struct tr_vec spine = {0};

	tr_chain(e, false, &spine);
	for (unsigned i = 1; i < spine.n; i++)
		tr_buf_putc(b, '(');
	paren(b, ((struct tr_expr *)spine.items[0])->a);
	for (unsigned i = 0; i < spine.n; i++) {
		const struct tr_expr *op = spine.items[i];
		tr_buf_printf(b, " %s ", op->op);
		paren(b, op->b);
		if (i + 1 < spine.n)
			tr_buf_putc(b, ')');
	}
	free(spine.items);
}

void tr_print_expr(struct tr_buf *b, const struct tr_expr *e)
{
	switch (e->kind) {
	case E_NUM:
		tr_buf_printf(b, "%" PRId64, e->num);
		break;
	case E_STR:
		tr_buf_printf(b, "\"%s\"", e->str);
		break;
	case E_SYM:
		tr_buf_puts(b, e->str);
		break;
	case E_TARGET:
		print_target(b, e);
		break;
	case E_DEFINED:
		tr_buf_puts(b, "@defined(");
		tr_print_expr(b, e->a);
		tr_buf_putc(b, ')');
		break;
	case E_INDEX:
		if (e->a->kind == E_SYM || e->a->kind == E_HIST)
			tr_print_expr(b, e->a);
		else
			paren(b, e->a);
		tr_buf_putc(b, '[');
		print_list(b, &e->args);
		tr_buf_putc(b, ']');
		break;
	case E_CALL:
		tr_buf_printf(b, "%s(", e->op);
		print_list(b, &e->args);
		tr_buf_putc(b, ')');
		break;
	case E_PRINT:
		tr_buf_printf(b, "%s(", e->op);
		if (e->fmt) {
			tr_buf_printf(b, "\"%s\"", e->fmt);
			if (e->args.n)
				tr_buf_puts(b, ", ");
		}
		print_list(b, &e->args);
		tr_buf_putc(b, ')');
		break;
	case E_STAT:
		tr_buf_printf(b, "%s(", e->op);
		tr_print_expr(b, e->a);
		if (e->args.n)  /* @variance's bit shift */
			tr_buf_printf(b, ", %" PRId64, ((const struct tr_expr *)e->args.items[0])->num);
		tr_buf_putc(b, ')');
		break;
	case E_HIST:
		tr_buf_puts(b, e->stat_op ? "@hist_log(" : "@hist_linear(");
		tr_print_expr(b, e->a);
		for (unsigned i = 0; i < e->args.n; i++) {
			tr_buf_puts(b, ", ");
			tr_print_expr(b, e->args.items[i]);
		}
		tr_buf_putc(b, ')');
		break;
	case E_BIN:
	case E_LOGIC:
	case E_CMP:
	case E_CAT:
		print_chain(b, e);
		break;
	case E_ASSIGN:
		paren(b, e->a);
		tr_buf_printf(b, " %s ", e->op);
		paren(b, e->b);
		break;
	case E_UNARY:
	case E_PRE:
		tr_buf_puts(b, e->op);
		paren(b, e->a);
		break;
	case E_POST:
		paren(b, e->a);
		tr_buf_puts(b, e->op);
		break;
	case E_TERN:
		paren(b, e->a);
		tr_buf_putc(b, '?');
		paren(b, e->b);
		tr_buf_putc(b, ':');
		paren(b, e->c);
		break;
	case E_IN:
		tr_buf_putc(b, '[');
		print_list(b, &e->args);
		tr_buf_puts(b, "] in ");
		tr_print_expr(b, e->a);
		break;
	case E_EMBED:
		tr_buf_printf(b, "%%{ %s %%}", e->str);
		break;
	case E_REGEX:
		paren(b, e->a);
		tr_buf_printf(b, " %s ", e->op);
		tr_print_expr(b, e->b);
		break;
	}
}

static const char *const stat_names[] = { "@count", "@sum", "@min", "@max", "@avg", "@variance" };

static const char *sort_mark(int dir)
{
	return dir > 0 ? "+" : "-";
}

void tr_print_stmt(struct tr_buf *b, const struct tr_stmt *st)
{
	switch (st->kind) {
	case S_BLOCK:
		tr_buf_puts(b, "{\n");
		for (unsigned i = 0; i < st->list.n; i++) {
			tr_print_stmt(b, st->list.items[i]);
			tr_buf_puts(b, ";\n");
		}
		tr_buf_putc(b, '}');
		break;
	case S_EXPR:
		tr_print_expr(b, st->e);
		break;
	case S_NULL:
		tr_buf_putc(b, ';');
		break;
	case S_IF:
		tr_buf_puts(b, "if (");
		tr_print_expr(b, st->e);
		tr_buf_puts(b, ") ");
		tr_print_stmt(b, st->body);
		tr_buf_putc(b, '\n');
		if (st->els) {
			tr_buf_puts(b, "else ");
			tr_print_stmt(b, st->els);
			tr_buf_putc(b, '\n');
		}
		break;
	case S_FOR:
		tr_buf_puts(b, "for (");
		if (st->e)
			tr_print_expr(b, st->e);
		tr_buf_puts(b, "; ");
		if (st->e2)
			tr_print_expr(b, st->e2);
		tr_buf_puts(b, "; ");
		if (st->e3)
			tr_print_expr(b, st->e3);
		tr_buf_puts(b, ") ");
		tr_print_stmt(b, st->body);
		break;
	case S_FOREACH:
		tr_buf_puts(b, "foreach (");
		if (st->value) {
			tr_print_expr(b, st->value);
			tr_buf_puts(b, " = ");
		}
		tr_buf_putc(b, '[');
		for (unsigned i = 0; i < st->keys.n; i++) {
			if (i)
				tr_buf_puts(b, ", ");
			tr_print_expr(b, st->keys.items[i]);
			if (st->sort_col == (int)i + 1)
				tr_buf_puts(b, sort_mark(st->sort_dir));
		}
		tr_buf_puts(b, "] in ");
		tr_print_expr(b, st->base);
		/* stap prints the aggregate but its default, @count (and
		 * @variance, which sorts as @count) */
		if (st->sort_aggr != ST_COUNT && st->sort_aggr != ST_VARIANCE)
			tr_buf_printf(b, " %s", stat_names[st->sort_aggr]);
		if (st->sort_col < 0)
			tr_buf_puts(b, sort_mark(st->sort_dir));
		if (st->limit) {
			tr_buf_puts(b, " limit ");
			tr_print_expr(b, st->limit);
		}
		tr_buf_puts(b, ") ");
		tr_print_stmt(b, st->body);
		break;
	case S_RETURN:
		tr_buf_puts(b, "return");
		if (st->e) {
			tr_buf_putc(b, ' ');
			tr_print_expr(b, st->e);
		}
		break;
	case S_DELETE:
		tr_buf_puts(b, "delete ");
		tr_print_expr(b, st->e);
		break;
	case S_NEXT:
		tr_buf_puts(b, "next");
		break;
	case S_BREAK:
		tr_buf_puts(b, "break");
		break;
	case S_CONTINUE:
		tr_buf_puts(b, "continue");
		break;
	case S_TRY:
		tr_buf_puts(b, "try {\n");
		tr_print_stmt(b, st->body);
		tr_buf_puts(b, "\n} catch");
		if (st->catch_var) {
			tr_buf_puts(b, " (");
			tr_print_expr(b, st->catch_var);
			tr_buf_putc(b, ')');
		}
		tr_buf_puts(b, " {\n");
		tr_print_stmt(b, st->els);
		tr_buf_puts(b, "\n}\n");
		break;
	case S_EMBED:
		tr_buf_printf(b, "%%{%s%%}", st->code);
		break;
	}
}

void tr_print_point(struct tr_buf *b, const struct tr_probe_point *pp)
{
	for (unsigned i = 0; i < pp->comps.n; i++) {
		const struct tr_component *c = pp->comps.items[i];
		if (i)
			tr_buf_putc(b, '.');
		tr_buf_puts(b, c->name);
		if (c->has_arg) {
			tr_buf_putc(b, '(');
			tr_print_expr(b, c->arg);
			tr_buf_putc(b, ')');
		}
	}
	if (pp->sufficient)
		tr_buf_putc(b, '!');
	else if (pp->optional)
		tr_buf_putc(b, '?');
	if (pp->cond) {
		tr_buf_puts(b, " if (");
		tr_print_expr(b, pp->cond);
		tr_buf_putc(b, ')');
	}
}

/* sep: "," between a probe's points, ", " between an alias's (as stap). */
static void print_points(struct tr_buf *b, const struct tr_vec *v, const char *sep)
{
	for (unsigned i = 0; i < v->n; i++) {
		if (i)
			tr_buf_puts(b, sep);
		tr_print_point(b, v->items[i]);
	}
}

void tr_print_script(FILE *out, const struct tr_script *sc)
{
	struct tr_buf b = {0};
	unsigned i;

	tr_buf_printf(&b, "# file %s\n", sc->file->name);
	for (i = 0; i < sc->embeds.n; i++) {
		const struct tr_global_embed *em = sc->embeds.items[i];
		tr_buf_printf(&b, "%%{%s%%}", em->code);
	}
	for (i = 0; i < sc->globals.n; i++) {
		const struct tr_sym *g = sc->globals.items[i];
		tr_buf_printf(&b, "global %s", g->name);
		if (g->wrap)
			tr_buf_putc(&b, '%');
		if (g->size)
			tr_buf_printf(&b, "[%" PRId64 "]", g->size);
		if (g->init) {
			tr_buf_puts(&b, " = ");
			tr_print_expr(&b, g->init);
		}
		tr_buf_putc(&b, '\n');
	}
	for (i = 0; i < sc->aliases.n; i++) {
		const struct tr_probe *pr = sc->aliases.items[i];
		tr_buf_puts(&b, "probe ");
		print_points(&b, &pr->alias_names, ",");
		tr_buf_puts(&b, pr->epilogue ? " += " : " = ");
		print_points(&b, &pr->points, ", ");
		tr_print_stmt(&b, pr->body);
		tr_buf_putc(&b, '\n');
	}
	for (i = 0; i < sc->probes.n; i++) {
		const struct tr_probe *pr = sc->probes.items[i];
		tr_buf_puts(&b, "probe ");
		print_points(&b, &pr->points, ",");
		tr_print_stmt(&b, pr->body);
		tr_buf_putc(&b, '\n');
	}
	for (i = 0; i < sc->funcs.n; i++) {
		const struct tr_func *fn = sc->funcs.items[i];
		tr_buf_printf(&b, "function %s (", fn->name);
		for (unsigned k = 0; k < fn->params.n; k++) {
			const struct tr_sym *a = fn->params.items[k];
			tr_buf_printf(&b, "%s%s", k ? ", " : "", a->name);
		}
		tr_buf_puts(&b, ")\n");
		if (fn->code)
			tr_buf_printf(&b, "%%{%s%%}", fn->code);
		else
			tr_print_stmt(&b, fn->body);
		tr_buf_putc(&b, '\n');
	}
	fwrite(b.data, 1, b.len, out);
	free(b.data);
}

/* The point as the script writes it: "kernel.mark(\"m\")" (messages of
 * pass 2 and the pp() of the points it resolves). */
const char *tr_elab_point_text(const struct tr_vec *comps)
{
	struct tr_probe_point pp = { .comps = *comps };
	struct tr_buf b = {0};

	tr_print_point(&b, &pp);
	return tr_buf_str(&b);
}
