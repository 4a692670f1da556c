/*
 * elab.c - pass 2: probe points, aliases, tapsets, symbols, types.
 *
 * Takes the parsed user scripts (pass 1) and gives pass 3 the concrete
 * probes of the session (s->probes) with the globals and functions they
 * use (s->globals, s->funcs), every name bound and every type inferred,
 * as stap's semantic pass does.  The steps, one file each, in order:
 *
 *   elab_tapset.c  the tapsets loaded; every global, function and alias
 *                  of the scripts and tapsets collected
 *   elab_probe.c   each probe point resolved through probe aliases and
 *   elab_point.c   to built-in points, wildcards expanded against the
 *                  marker catalogue: one concrete probe per point, with
 *                  its own copy of the body (a marker's format gives
 *                  $arg1 its type)
 *   elab_bind.c    names bound to locals, globals and functions (tapset
 *                  files joining for what the script does not define)
 *   elab_type.c    types inferred to a fixed point
 *   elab_prune.c   what has no effect dropped, as stap's optimizer does
 *
 * elab_int.h is their interface to each other.
 */
#define _GNU_SOURCE
#include "elab_int.h"

#include <stdlib.h>
#include <string.h>

/* The whole pass: 0, or -1 after errors (reported). */
int tr_elaborate(struct tr_session *s)
{
	unsigned i;

	if (tr_elab_load_tapsets(s))
		return -1;
	/* User globals are always there (stap lists them even when unused). */
	for (i = 0; i < s->all_globals.n; i++) {
		struct tr_sym *g = s->all_globals.items[i];
		if (!g->file->tapset && !g->used) {
			g->used = true;
			tr_vec_push(&s->globals, g);
		}
	}
	for (i = 0; i < s->user.n; i++) {
		struct tr_script *sc = s->user.items[i];
		for (unsigned k = 0; k < sc->probes.n; k++)
			tr_elab_resolve_probe(s, sc->probes.items[k]);
		if (s->unoptimized)
			for (unsigned k = 0; k < sc->funcs.n; k++)
				tr_elab_bind_func(s, sc->funcs.items[k]);
	}
	if (tr_diag.errors)
		return -1;
	if (s->probes.n == 0) {
		tr_sem_error(NULL, "no probes found");
		return -1;
	}
	tr_elab_merge_selected(s);
	if (tr_elab_bind(s))
		return -1;
	if (!s->unoptimized) {
		tr_elab_prune(s);
		if (s->probes.n == 0) {
			tr_sem_error(NULL, "no probes found");
			return -1;
		}
	}
	return tr_kdata_check(s);
}

/* Names and types of the resolved probes (also -L's alias variables). */
int tr_elab_bind(struct tr_session *s)
{
	if (tr_elab_bind_names(s))
		return -1;
	if (!s->unoptimized)
		tr_elab_elide_voids(s);
	tr_elab_set_globals(s);
	return tr_elab_infer_types(s);
}

static int cmp_func(const void *a, const void *b)
{
	const struct tr_func *x = *(struct tr_func *const *)a, *y = *(struct tr_func *const *)b;
	return strcmp(x->name, y->name);
}

static void print_sym(FILE *out, const struct tr_sym *y, const char *indent)
{
	fprintf(out, "%s%s:%s", indent, y->name, tr_type_name(y->type));
	if (y->arity > 0) {
		fputs(" [", out);
		for (int i = 0; i < y->arity; i++)
			fprintf(out, "%s%s", i ? ", " : "", tr_type_name(y->index_types[i]));
		fputc(']', out);
	}
	fputc('\n', out);
}

/* -p2: the globals, functions and probes in use, with their types. */
void tr_elab_print(FILE *out, struct tr_session *s)
{
	unsigned i;

	if (s->globals.n)
		fputs("# globals\n", out);
	for (i = 0; i < s->globals.n; i++)
		print_sym(out, s->globals.items[i], "");
	if (s->funcs.n)
		fputs("# functions\n", out);
	struct tr_func **fs = tr_alloc(sizeof(*fs) * (s->funcs.n + 1));
	memcpy(fs, s->funcs.items, sizeof(*fs) * s->funcs.n);
	qsort(fs, s->funcs.n, sizeof(*fs), cmp_func);
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = fs[i];
		fprintf(out, "%s:%s (", f->name, tr_type_name(f->type));
		for (unsigned k = 0; k < f->params.n; k++) {
			struct tr_sym *a = f->params.items[k];
			fprintf(out, "%s%s:%s", k ? ", " : "", a->name, tr_type_name(a->type));
		}
		fputs(")\n", out);
		if (f->locals.n) {
			fputs("  # locals\n", out);
			for (unsigned k = 0; k < f->locals.n; k++)
				print_sym(out, f->locals.items[k], "  ");
		}
	}
	fputs("# probes\n", out);
	for (i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		fprintf(out, "%s /* <- %s */\n", r->pp, p->orig_pp);
		if (p->locals.n) {
			fputs("  # locals\n", out);
			for (unsigned k = 0; k < p->locals.n; k++)
				print_sym(out, p->locals.items[k], "  ");
		}
	}
}

