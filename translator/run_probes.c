/*
 * run_probes.c - what both runs of pass 5 share, the live one (run.c)
 * and the one over a stored trace (trace.c): the check of the resolved
 * points the run can serve, and the begin, end and error probes, run by
 * priority.
 */
#include "tr_run.h"
#include "mt_lua.h"

#include <stdlib.h>
#include <string.h>

/*
 * Points pass 2 accepts, as stap does, that this session cannot run: an
 * error that says why, before anything starts.
 */
int tr_run_check(struct tr_session *s, const char *procev_why, const char *perf_why,
		 const char *procfs_why)
{
	int bad = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		const char *why = NULL;
		if ((r->kind == P_PROFILE || (r->kind == P_PERF && !r->perf_counter && !r->path)) && perf_why)
			why = tr_printf("its samples need %s", perf_why);
		else if (r->kind == P_PERF && r->path)
			why = "marktap samples perf events of every CPU, not of one program";
		else if (r->kind == P_PROCFS && !r->procfs_write && !strcmp(r->procfs_file, "__stdin"))
			why = "procfs(\"__stdin\") is marktap's input: it has write probes only "
			      "(input.char, input.line)";
		else if (r->kind == P_PROCFS && strcmp(r->procfs_file, "__stdin") && procfs_why)
			why = procfs_why;
		else if ((r->kind == P_PROC_BEGIN || r->kind == P_PROC_END) && r->thread &&
			 (s->target_cmd || s->target_pid) && procev_why)
			why = tr_printf("with -c or -x, marktap sees that process start and end by itself; "
					"its threads need %s", procev_why);
		else if ((r->kind == P_PROC_BEGIN || r->kind == P_PROC_END) && procev_why &&
			 !s->target_cmd && !s->target_pid)
			why = tr_printf("without -c or -x it needs %s", procev_why);
		else if (r->kind == P_KTRACE)   /* not in BTF (ktrace.c) */
			why = r->ktrace->why;
		else if (r->kind == P_PERF && r->perf_counter)
			why = "marktap reads no perf counters (@perf)";
		else if (r->kind >= P_PROFILE && s->trace_dir)
			why = "a stored trace (--trace) holds no such events";
		if (why) {
			fprintf(stderr, "ERROR: probe point %s cannot run: %s\n", r->pp, why);
			bad++;
		}
	}
	return bad;
}

static int cmp_priority(const void *a, const void *b)
{
	const struct tr_probe *x = *(struct tr_probe *const *)a, *y = *(struct tr_probe *const *)b;
	const struct tr_resolved *rx = x->resolved.items[0], *ry = y->resolved.items[0];

	if (rx->priority != ry->priority)
		return rx->priority < ry->priority ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The begin, end or error probes, by priority, in the order of the
 * script within one: begin stops early when a handler asked to exit. */
void tr_run_probes(struct mt_lua *mt, struct tr_session *s, enum tr_pkind kind)
{
	struct tr_probe **list = tr_alloc(sizeof(*list) * (s->probes.n + 1));
	unsigned n = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		if (((struct tr_resolved *)p->resolved.items[0])->kind == kind)
			list[n++] = p;
	}
	/* stable by id within a priority */
	qsort(list, n, sizeof(*list), cmp_priority);
	for (unsigned i = 0; i < n; i++) {
		int id = mt_lua_handler(mt, tr_printf("probe_%u", list[i]->id));
		if (id >= 0)
			mt_lua_run(mt, id, 0);
		if (kind == P_BEGIN && mt_lua_stopping(mt))
			break;
	}
	free(list);
}
