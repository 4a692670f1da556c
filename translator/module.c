/*
 * module.c - pass 4: the module file, and reading one back to run it.
 *
 * The module file (-p4) is text: a manifest of "-- key: value" lines,
 * then the chunk.  It runs without the script and the translator
 * (marktap's staprun): its probes and options come from the manifest,
 * its handlers from the chunk, and main.c runs it as pass 5 runs a
 * translated script.
 */
#define _GNU_SOURCE
#include "tr_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum tr_pkind k)
{
	static const char *const names[] = {
		"begin", "end", "error", "never", "timer", "mark", "kernel.mark",
		"timer.profile", "procfs", "process.begin", "process.end", "kernel.trace", "perf",
	};
	return names[k];
}

int tr_module_write(struct tr_session *s, const char *path, const char *lua)
{
	FILE *fp = fopen(path, "w");

	if (!fp) {
		fprintf(stderr, "ERROR: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(fp, "-- marktap module 1\n");
	fprintf(fp, "-- name: %s\n", tr_module_name(s));
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			struct tr_resolved *r = p->resolved.items[k];
			fprintf(fp, "-- probe: probe_%u %s %lld %lld %lld %s", p->id, kind_name(r->kind),
				(long long)r->priority, (long long)r->interval_ns, (long long)r->randomize_ns, r->pp);
			if (r->format)
				fprintf(fp, " format=\"%s\"", r->format);
			fputc('\n', fp);
			if (r->dw_func) {   /* where, and the recipes of its values (dwarf.c) */
				fprintf(fp, "-- func: probe_%u %c 0x%llx %s %s\n", p->id, r->dw_return ? 'r' : 'e',
					(unsigned long long)r->dw_addr, r->path, r->dw_cfa ? r->dw_cfa : "-");
				for (unsigned f = 0; f < r->dw_recipes.n; f++) {
					bool str = (enum tr_type)(intptr_t)r->field_types.items[f] == T_STRING;
					fprintf(fp, "-- fvar: probe_%u %c %s\n", p->id,
						r->dw_at_return.items[f] ? (str ? 'R' : 'L') : str ? 's' : 'l',
						(const char *)r->dw_recipes.items[f]);
				}
			} else if (r->provider)
				fprintf(fp, "-- sdt: probe_%u %s %s %s\n", p->id, r->provider, r->marker,
					r->path ? r->path : "*");
			else if (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL)
				fprintf(fp, "-- mark: probe_%u %s %s\n", p->id, r->marker,
					r->path ? r->path : "*");
			else if (r->kind == P_PROCFS)
				fprintf(fp, "-- procfs: probe_%u %c %lld %lld %s\n", p->id, r->procfs_write ? 'w' : 'r',
					(long long)r->procfs_umask, (long long)r->procfs_maxsize, r->procfs_file);
			else if (r->kind == P_PROC_BEGIN || r->kind == P_PROC_END)
				fprintf(fp, "-- process: probe_%u %d %lld %s\n", p->id, r->thread,
					(long long)r->proc_pid, r->path ? r->path : "*");
		}
	}
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *g = s->globals.items[i];
		fprintf(fp, "-- global: %s %s %d\n", g->name, tr_type_name(g->type), g->arity > 0 ? g->arity : 0);
	}
	for (unsigned i = 0; i < s->defines.n; i++)
		fprintf(fp, "-- option: %s\n", (const char *)s->defines.items[i]);
	if (s->guru)
		fprintf(fp, "-- option: guru\n");
	if (s->absent_points)
		fprintf(fp, "-- option: absent-points\n");
	fprintf(fp, "-- end of manifest\n");
	fputs(lua, fp);
	if (fclose(fp)) {
		fprintf(stderr, "ERROR: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Read a module file written by -p4: its probes and options into the
 * session, its handlers into *chunk.  0, or 1 after an error (printed). */
int tr_module_read(struct tr_session *s, const char *path, struct tr_buf *chunk)
{
	FILE *fp = fopen(path, "r");
	char line[8192];
	struct tr_probe *last = NULL;
	unsigned lineno = 0;
	bool manifest = true;

	if (!fp) {
		fprintf(stderr, "ERROR: cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!manifest) {
			tr_buf_puts(chunk, line);
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		if (lineno == 1 && strcmp(line, "-- marktap module 1") != 0)
			break;
		unsigned id;
		char kind[32], a[4096], b[4096], prov[256], fkind;
		unsigned long long faddr;
		long long prio, interval, randomize;
		int n = 0;
		if (sscanf(line, "-- probe: probe_%u %31s %lld %lld %lld %n", &id, kind, &prio, &interval,
			   &randomize, &n) == 5 && n > 0) {
			struct tr_resolved *r = tr_alloc(sizeof(*r));
			int k;
			for (k = 0; k <= P_PERF && strcmp(kind_name((enum tr_pkind)k), kind); k++)
				;
			if (k > P_PERF)
				break;
			r->kind = (enum tr_pkind)k;
			r->priority = prio;
			r->interval_ns = interval;
			r->randomize_ns = randomize;
			r->pp = tr_strdup(line + n);
			if (!last || last->id != id) {
				last = tr_alloc(sizeof(*last));
				last->id = id;
				tr_vec_push(&s->probes, last);
			}
			tr_vec_push(&last->resolved, r);
		} else if (sscanf(line, "-- mark: probe_%u %4095s %4095[^\n]", &id, a, b) == 3 ||
			   sscanf(line, "-- sdt: probe_%u %255s %4095s %4095[^\n]", &id, prov, a, b) == 4) {
			/* the marker (or SDT probe) of the probe line before */
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r)
				break;
			r->provider = line[3] == 's' ? tr_strdup(prov) : NULL;
			r->marker = tr_strdup(a);
			r->path = strcmp(b, "*") ? tr_strdup(b) : NULL;
		} else if (sscanf(line, "-- name: %255s", prov) == 1) {
			s->module_name = tr_strdup(prov);
		} else if (sscanf(line, "-- procfs: probe_%u %c %lld %lld %4095s", &id, &fkind, &interval,
				  &randomize, a) == 5 ||
			   sscanf(line, "-- procfs: probe_%u %c %4095s", &id, &fkind, a) == 3 ||
			   sscanf(line, "-- process: probe_%u %c %lld %4095s", &id, &fkind, &prio, a) == 4) {
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r)
				break;
			if (line[3] == 'p' && line[4] == 'r' && line[5] == 'o' && line[6] == 'c' && line[7] == 'f') {
				/* .umask and .maxsize, or none (an older module's line) */
				bool sized = sscanf(line, "-- procfs: probe_%u %c %lld %lld %4095s", &id, &fkind,
						    &interval, &randomize, a) == 5;
				r->procfs_umask = sized ? interval : -1;
				r->procfs_maxsize = sized ? randomize : 0;
				r->procfs_write = fkind == 'w';
				r->procfs_file = tr_strdup(a);
				tr_vec_push(&r->fields, "value");
				tr_vec_push(&r->field_types, (void *)(intptr_t)T_STRING);
			} else {
				r->thread = fkind == '1';
				r->proc_pid = prio;
				r->path = strcmp(a, "*") ? tr_strdup(a) : NULL;
			}
		} else if (sscanf(line, "-- func: probe_%u %c %llx %4095s %n", &id, &fkind, &faddr, a, &n) == 4 &&
			   n > 0) {
			/* a function probe (dwarf.c): the probe line before's */
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r)
				break;
			r->provider = TR_FUNC_PROVIDER;
			r->marker = "";
			r->path = tr_strdup(a);
			r->dw_func = true;
			r->dw_return = fkind == 'r';
			r->dw_addr = faddr;
			r->dw_cfa = strcmp(line + n, "-") ? tr_strdup(line + n) : NULL;
		} else if (sscanf(line, "-- fvar: probe_%u %c %n", &id, &fkind, &n) == 2 && n > 0) {
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r || !r->dw_func || !strchr("lsLR", fkind))
				break;
			tr_vec_push(&r->dw_recipes, tr_strdup(line + n));
			tr_vec_push(&r->dw_at_return, (void *)(intptr_t)(fkind == 'L' || fkind == 'R'));
			tr_vec_push(&r->field_types, (void *)(intptr_t)(fkind == 's' || fkind == 'R' ? T_STRING : T_LONG));
			tr_vec_push(&r->fields, tr_printf("v%u", r->fields.n + 1));
		} else if (!strncmp(line, "-- option: ", 11)) {
			if (!strcmp(line + 11, "guru"))
				s->guru = true;
			else if (!strcmp(line + 11, "absent-points"))
				s->absent_points = true;
			else
				tr_vec_push(&s->defines, tr_strdup(line + 11));
		} else if (!strcmp(line, "-- end of manifest")) {
			manifest = false;
		} else if (strncmp(line, "-- ", 3) != 0) {
			break;
		}
	}
	fclose(fp);
	if (manifest) {
		fprintf(stderr, "ERROR: %s:%u: not a marktap module (bad manifest line)\n", path, lineno);
		return 1;
	}
	return 0;
}
