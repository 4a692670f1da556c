/*
 * stats.c - what the script does with each statistics global: its
 * histogram (@hist_linear or @hist_log, one kind and range per global,
 * as stap checks) and the bit shift of its @variance.  gen.c declares
 * the global's runtime statistics from these; native.c leaves to Lua the
 * handlers of globals that need them.
 */
#include "tr_gen.h"

#include <inttypes.h>

/* The histogram a stats global is printed with: the first @hist_* of it. */
struct hist_find {
	const struct tr_sym *y;
	struct tr_expr *found;
};

static void hist_of(const struct tr_expr *e, void *arg)
{
	struct hist_find *f = arg;

	if (e->kind == E_HIST && e->a->sym == f->y && !f->found)
		f->found = (struct tr_expr *)e;
}

struct tr_expr *tr_stats_first_hist(struct tr_session *s, struct tr_sym *y)
{
	struct hist_find f = { y, NULL };
	struct tr_walker w = { NULL, hist_of, &f };

	for (unsigned i = 0; i < s->probes.n && !f.found; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n && !f.found; i++)
		tr_walk_stmt(&w, ((struct tr_func *)s->funcs.items[i])->body);
	return f.found;
}

bool tr_stats_has_hist(struct tr_session *s, struct tr_sym *y)
{
	return tr_stats_first_hist(s, y) != NULL;
}

/* The bit shift of a statistics global's @variance (stap's optional second
 * argument, 0 when absent): checked as stap checks it, one value per
 * global; -1 when no @variance reads it. */
struct shift_find {
	const struct tr_sym *y;
	int64_t shift;
	bool report;
};

static void shift_of(const struct tr_expr *e, void *arg)
{
	struct shift_find *f = arg;

	if (e->kind != E_STAT || e->stat_op != ST_VARIANCE || !e->a || e->a->sym != f->y)
		return;
	int64_t v = e->args.n ? ((const struct tr_expr *)e->args.items[0])->num : 0;
	if (v < 0 || v > 62) {
		if (f->report)
			tr_sem_error(e->tok, "bit shift (%" PRId64 ") out of range <0..62>", v);
		return;
	}
	if (f->shift >= 0 && f->shift != v) {
		if (f->report)
			tr_sem_error(e->tok, "conflicting bit shifts declared (previously %" PRId64 ")", f->shift);
		return;
	}
	f->shift = v;
}

int64_t tr_stats_variance_shift(struct tr_session *s, struct tr_sym *y, bool report)
{
	struct shift_find f = { y, -1, report };
	struct tr_walker w = { NULL, shift_of, &f };

	for (unsigned i = 0; i < s->probes.n; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n; i++)
		tr_walk_stmt(&w, ((struct tr_func *)s->funcs.items[i])->body);
	return f.shift;
}

bool tr_stats_has_variance(struct tr_session *s, struct tr_sym *y)
{
	return tr_stats_variance_shift(s, y, false) >= 0;
}

/* stap: one histogram per statistic (kind and parameters); a second one
 * is a semantic error at its place. */
struct hist_same {
	const struct tr_sym *y;
	const struct tr_expr *first;
	bool reported;
};

static bool same_hist(const struct tr_expr *a, const struct tr_expr *b)
{
	if (a->stat_op != b->stat_op || a->args.n != b->args.n)
		return false;
	for (unsigned i = 0; i < a->args.n; i++)
		if (((const struct tr_expr *)a->args.items[i])->num != ((const struct tr_expr *)b->args.items[i])->num)
			return false;
	return true;
}

static void hist_other(const struct tr_expr *e, void *arg)
{
	struct hist_same *f = arg;

	if (e->kind != E_HIST || e->a->sym != f->y || f->reported || same_hist(e, f->first))
		return;
	tr_sem_error(e->tok, "multiple histogram types declared on '__global_%s'", f->y->name);
	f->reported = true;
}

void tr_stats_check_hist(struct tr_session *s, struct tr_sym *y, const struct tr_expr *first)
{
	struct hist_same f = { y, first, false };
	struct tr_walker w = { NULL, hist_other, &f };

	for (unsigned i = 0; i < s->probes.n; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n; i++)
		tr_walk_stmt(&w, ((struct tr_func *)s->funcs.items[i])->body);
}

