/*
 * gen_emit.c - pass 3's writing: indented lines into the statement list
 * being built, the Lua names of symbols and temporaries, and what the
 * handler being written turns out to need (its parameters, the action
 * count, pp()).  gen_expr.c, gen_stmt.c and gen.c write through these.
 */
#define _GNU_SOURCE
#include "gen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the Lua of a call may need of the handler's state: a script
 * function counts actions at entry and may call anything; embedded code
 * is looked at. */
void tr_gen_call_needs(struct gen *g, const char *code)
{
	if (!code) {
		g->uses_act = g->uses_pp = true;
		return;
	}
	if (strstr(code, "act"))
		g->uses_act = true;
	if (strstr(code, "rt.pp") || strstr(code, "rt.pn") || strstr(code, "cur_p") || strstr(code, "F["))
		g->uses_pp = g->uses_act = true;
}

/* The handler reads its first n parameters (mk_name, mk_fmt, a1...): the
 * hosts need not push the others (a kernel hit's cost is partly its
 * arguments) */
void tr_gen_reads_params(struct gen *g, unsigned n)
{
	if (n > g->params)
		g->params = n;
}

void tr_gen_line(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	char *p;

	for (int i = 0; i < g->indent; i++)
		tr_buf_puts(g->out, "  ");
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		p = NULL;
	va_end(ap);
	if (p) {
		tr_buf_puts(g->out, p);
		free(p);
	}
	tr_buf_putc(g->out, '\n');
}

/* "rt.tid" as called: its chunk local when it has one */
const char *tr_gen_direct_name(const struct gen *g, const char *direct)
{
	for (unsigned i = 0; i < g->ndirect; i++)
		if (!strcmp(g->direct[i], direct))
			return tr_printf("rt_d_%s", direct + 3);
	return direct;
}

const char *tr_gen_sym_name(struct gen *g, const struct tr_sym *y)
{
	if (y->kind == SYM_GLOBAL)
		return g->globals_in_table ? tr_printf("G[%u]", y->index) : tr_printf("g%u_%s", y->index, y->name);
	return tr_printf("l_%s", y->name);
}

const char *tr_gen_zero_of(enum tr_type t)
{
	return t == T_STRING ? "\"\"" : "0";
}

const char *tr_gen_tmp(struct gen *g)
{
	return tr_printf("t%u", ++g->tmp);
}

