/*
 * list.c - marktap -l / -L: the probe points a pattern resolves to.
 *
 *   $ marktap -L 'process("./prog").mark("*")'
 *   process("/abs/prog").mark("fs_open") $arg1:long $arg2:string $fd:long $filename:string
 *
 * One line per concrete point, sorted, as stap -l/-L prints them (a point
 * reached through a tapset alias by the alias's name, as stap does); -L adds
 * the context variables a handler of that point can read, with types (an
 * alias's own variables first), and
 * for a kernel marker that marktap.ko (loaded) cannot provide on this
 * kernel, "# unavailable: REASON" from the module's catalogue
 * (/dev/marktap, or the file named by MARKTAP_KERNEL_LIST).
 */
#define _GNU_SOURCE
#include "tr_elab.h"
#include "kernel.h"
#include "mt_ioctl.h"

#include <stdlib.h>
#include <string.h>

/* The module's reason why a kernel marker is unavailable, or NULL.  The
 * catalogue is the device's text (kernel.c parses it, as for marktrace
 * list --kernel); no module, no reasons. */
static const char *kernel_unavailable(const char *marker)
{
	static struct mt_kernel_marker *v;
	static size_t n;
	static bool loaded;
	const struct mt_kernel_marker *m;

	if (!loaded) {
		const char *path = getenv("MARKTAP_KERNEL_LIST");
		loaded = true;
		if (mt_kernel_catalogue_file(path && *path ? path : MT_DEVICE_PATH, &v, &n) < 0)
			n = 0;
	}
	m = mt_kernel_find(v, n, marker);
	return m && !m->available ? tr_printf(MT_UNAVAILABLE "%s", m->source) : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What stap -l prints after each point the pattern's point gives: its
 * '?' or '!' and its condition. */
static const char *point_marks(const struct tr_probe_point *pt)
{
	struct tr_buf b = {0};

	tr_buf_puts(&b, pt->sufficient ? "!" : pt->optional ? "?" : "");
	if (pt->cond) {
		tr_buf_puts(&b, " if (");
		tr_print_expr(&b, pt->cond);
		tr_buf_putc(&b, ')');
	}
	return tr_buf_str(&b);
}

int tr_list_probes(struct tr_session *s)
{
	struct tr_file *f = tr_file_from_string("<input>", tr_printf("probe %s {}", s->listing));
	struct tr_script *sc = tr_parse(s, f);
	struct tr_vec lines = {0}, marks = {0};

	if (tr_diag.errors) {
		/* stap -l counts the errors and names no pass */
		fprintf(stderr, "%u parse error%s.\n", tr_diag.errors, tr_diag.errors == 1 ? "" : "s");
		return 1;
	}
	tr_vec_push(&s->user, sc);
	if (tr_elab_load_tapsets(s))
		return 1;
	/* stap lists what matches and says nothing of the rest (a point that
	 * matches nothing, a program that does not exist): each point of the
	 * pattern on its own, its semantic errors silent. */
	tr_diag.quiet_semantic = true;
	for (unsigned i = 0; i < sc->probes.n; i++) {
		struct tr_probe *pr = sc->probes.items[i];
		for (unsigned k = 0; k < pr->points.n; k++) {
			struct tr_probe *one = tr_alloc(sizeof(*one));
			struct tr_probe_point *pt = pr->points.items[k];
			unsigned errors = tr_diag.errors, first = s->probes.n;
			const char *mark = point_marks(pt);
			*one = *pr;
			one->points = (struct tr_vec){0};
			tr_vec_push(&one->points, pt);
			pt->optional = true;
			if (tr_elab_points(s, one))
				tr_diag.errors = errors;
			while (marks.n < first)
				tr_vec_push(&marks, (void *)"");
			while (marks.n < s->probes.n)
				tr_vec_push(&marks, (void *)mark);
		}
	}
	tr_diag.quiet_semantic = false;
	/* -L of an alias: its variables are the locals its body sets. */
	if (s->listing_vars && s->probes.n && tr_elab_bind(s))
		return 1;
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		struct tr_buf b = {0};
		tr_buf_puts(&b, r->alias_pp ? r->alias_pp : r->listed_pp ? r->listed_pp : r->pp);
		tr_buf_puts(&b, i < marks.n ? marks.items[i] : "");
		if (s->listing_vars && r->alias_pp)
			for (unsigned k = 0; k < p->locals.n; k++) {
				const struct tr_sym *y = p->locals.items[k];
				tr_buf_printf(&b, " %s:%s", y->name, tr_type_name(y->type));
			}
		if (s->listing_vars && r->dw) {   /* a function's parameters and locals */
			tr_buf_puts(&b, tr_dw_vars(r->dw));
		} else if (s->listing_vars && r->ktrace) {   /* a tracepoint's, with their C types */
			for (unsigned k = 0; k < r->ktrace->fields.n; k++)
				tr_buf_printf(&b, " $%s:%s", (const char *)r->ktrace->fields.items[k],
					      (const char *)r->ktrace->ctypes.items[k]);
		} else if (s->listing_vars && r->kfunc) {   /* a kernel function's, from BTF */
			tr_buf_puts(&b, tr_btf_vars(r));
		} else if (r->kfunc || r->kdata) {   /* a watchpoint has no variables */
		} else if (s->listing_vars && (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL)) {
			for (unsigned k = 0; k < r->fields.n; k++)
				tr_buf_printf(&b, " $arg%u:%s", k + 1,
					      tr_type_name((enum tr_type)(intptr_t)r->field_types.items[k]));
			for (unsigned k = 0; k < r->fields.n; k++) {
				const char *n = r->fields.items[k];
				/* a field called name or format is $argN only: $name
				 * and $format are the marker's own (target_lookup) */
				if (strncmp(n, "arg", 3) && (r->provider || (strcmp(n, "name") && strcmp(n, "format"))))
					tr_buf_printf(&b, " $%s:%s", n,
						      tr_type_name((enum tr_type)(intptr_t)r->field_types.items[k]));
			}
			if (!r->provider)   /* an SDT probe has its operands only */
				tr_buf_puts(&b, " $name:string $format:string");
			const char *why = r->kind == P_MARK_KERNEL ? kernel_unavailable(r->marker) : NULL;
			if (why)
				tr_buf_printf(&b, "  # %s", why);
		}
		tr_vec_push(&lines, (void *)tr_buf_str(&b));
	}
	/* nothing listed: exit status 1, as stap's */
	if (!lines.n)
		return 1;
	qsort(lines.items, lines.n, sizeof(void *), cmp_str);
	for (unsigned i = 0; i < lines.n; i++)
		if (i == 0 || strcmp(lines.items[i], lines.items[i - 1]))
			puts(lines.items[i]);
	return 0;
}
