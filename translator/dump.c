/*
 * dump.c - stap's --dump-functions, --dump-probe-types and
 * --dump-probe-aliases: what the tapsets define and what pass 2 resolves.
 *
 * Functions and aliases come from the tapsets as loaded for a script
 * (MARKTAP_TAPSET_DIR, -I), one line each, sorted, in stap's forms:
 *   name:type (param:type, ...)
 *   alias.name = point, point?
 * Names starting with '_' are the tapsets' own, as stap leaves them out.
 */
#include "tr_elab.h"

#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted lines of v, each once. */
static void print_sorted(struct tr_vec *v)
{
	qsort(v->items, v->n, sizeof(v->items[0]), cmp_str);
	for (unsigned i = 0; i < v->n; i++)
		if (!i || strcmp(v->items[i], v->items[i - 1]))
			puts(v->items[i]);
}

static bool from_tapset(const struct tr_session *s, const struct tr_file *f)
{
	for (unsigned i = 0; i < s->user.n; i++)
		if (((const struct tr_script *)s->user.items[i])->file == f)
			return false;
	return true;
}

static int dump_functions(struct tr_session *s)
{
	struct tr_vec lines = {0};

	tr_elab_tapset_need(s, '*', NULL);
	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		const struct tr_func *fn = s->all_funcs.items[i];
		struct tr_buf b = {0};

		if (fn->name[0] == '_' || !from_tapset(s, fn->file))
			continue;
		tr_buf_printf(&b, "%s:%s (", fn->name, tr_type_name(fn->type));
		for (unsigned k = 0; k < fn->params.n; k++) {
			const struct tr_sym *p = fn->params.items[k];
			tr_buf_printf(&b, "%s%s:%s", k ? ", " : "", p->name, tr_type_name(p->type));
		}
		tr_buf_putc(&b, ')');
		tr_vec_push(&lines, (void *)tr_buf_str(&b));
	}
	print_sorted(&lines);
	return 0;
}

static int dump_aliases(struct tr_session *s)
{
	struct tr_vec lines = {0};

	tr_elab_tapset_need(s, '*', NULL);
	for (unsigned i = 0; i < s->all_aliases.n; i++) {
		const struct tr_probe *al = s->all_aliases.items[i];

		if (!from_tapset(s, al->file))
			continue;
		for (unsigned k = 0; k < al->alias_names.n; k++) {
			struct tr_buf b = {0};
			const struct tr_probe_point *name = al->alias_names.items[k];
			const char *first = ((const struct tr_component *)name->comps.items[0])->name;

			if (first[0] == '_')
				continue;
			tr_print_point(&b, name);
			tr_buf_puts(&b, " = ");
			for (unsigned t = 0; t < al->points.n; t++) {
				if (t)
					tr_buf_puts(&b, ", ");
				tr_print_point(&b, al->points.items[t]);
			}
			tr_vec_push(&lines, (void *)tr_buf_str(&b));
		}
	}
	print_sorted(&lines);
	return 0;
}

int tr_dump(struct tr_session *s, enum tr_dump what)
{
	if (what == TR_DUMP_PROBE_TYPES) {
		struct tr_vec lines = {0};

		for (size_t i = 0; tr_point_types[i]; i++)
			tr_vec_push(&lines, (void *)tr_point_types[i]);
		print_sorted(&lines);
		return 0;
	}
	if (tr_elab_load_tapsets(s))
		return 1;
	return what == TR_DUMP_FUNCTIONS ? dump_functions(s) : dump_aliases(s);
}
