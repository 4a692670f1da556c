/*
 * elab.c - pass 2: probe points, aliases, tapsets, symbols, types.
 *
 * Every probe point of the script is resolved to concrete points (begin,
 * a timer, one marker...): through probe aliases first (their prologue
 * "=" or epilogue "+=" bodies join the user's), then the built-in points,
 * wildcards expanded against the marker catalogue.  Each concrete point
 * gets its own copy of the body, since a marker's format gives $arg1 its
 * type.  Names are then bound to locals, globals and functions (tapset
 * files are searched for what the script does not define) and types are
 * inferred to a fixed point, as stap's semantic pass does.
 */
#define _GNU_SOURCE
#include "tr_elab.h"
#include "mt_fmt.h"

#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALIAS_DEPTH_MAX 16

/* ---- tapsets ------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_dir(struct tr_session *s, const char *dir, int first_pass, int last_pass)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct tr_vec names = {0};

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if ((n > 4 && !strcmp(de->d_name + n - 4, ".stp")) ||
		    (n > 5 && !strcmp(de->d_name + n - 5, ".stpm")))
			tr_vec_push(&names, tr_printf("%s/%s", dir, de->d_name));
	}
	closedir(d);
	qsort(names.items, names.n, sizeof(void *), cmp_names);
	/* Macros first: every tapset file may use every .stpm macro. */
	for (int pass = first_pass; pass <= last_pass; pass++)
		for (unsigned i = 0; i < names.n; i++) {
			const char *path = names.items[i];
			bool macro_file = strcmp(path + strlen(path) - 5, ".stpm") == 0;
			if (macro_file != (pass == 0))
				continue;
			struct tr_file *f = tr_file_read(path, path);
			if (!f) {
				fprintf(stderr, "WARNING: cannot read tapset %s\n", path);
				continue;
			}
			f->tapset = true;
			f->guru_ok = true;
			if (macro_file) {
				struct tr_vec toks = {0};
				tr_lex_file(s, f, &toks);
				tr_pp_collect(s, &toks);
			} else {
				tr_vec_push(&s->tapsets, tr_parse(s, f));
			}
		}
	free(names.items);
}

/*
 * The tapset directories, ':'-separated: MARKTAP_TAPSET_DIR, else the
 * installed one, else (not installed yet) the source tree's tapsets and
 * the build tree's (the generated syscalls.stp).
 */
static const char *tapset_path(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_TAPSET_DIR");

	const char *dir = tr_printf("%s/tapset", s->pkgdatadir);
	struct stat st;

	if (env)
		return env;
#ifdef MT_SRCDIR
	if (stat(dir, &st) != 0)
		return MT_SRCDIR "/tapsets:" MT_BUILDDIR "/tapsets";
#endif
	return dir;
}

/* Each directory of the path once (an in-tree build has srcdir == builddir). */
static void load_path(struct tr_session *s, int first_pass, int last_pass)
{
	struct tr_vec seen = {0};
	const char *p = tapset_path(s);

	while (*p) {
		size_t n = strcspn(p, ":");
		char *dir = tr_strndup(p, n), real[PATH_MAX];
		const char *key = realpath(dir, real) ? tr_strdup(real) : dir;
		bool dup = false;
		for (unsigned i = 0; i < seen.n && !dup; i++)
			dup = !strcmp(seen.items[i], key);
		if (n && !dup) {
			tr_vec_push(&seen, (void *)key);
			load_dir(s, dir, first_pass, last_pass);
		}
		p += n + (p[n] == ':');
	}
	free(seen.items);
}

static void load_tapsets(struct tr_session *s)
{
	if (s->tapsets_loaded)
		return;
	s->tapsets_loaded = true;
	for (unsigned i = 0; i < s->include_dirs.n; i++)
		load_dir(s, s->include_dirs.items[i], 1, 1);
	load_path(s, 1, 1);
}

/* The .stpm macros, before the script is parsed: scripts may use them. */
void tr_load_macros(struct tr_session *s)
{
	for (unsigned i = 0; i < s->include_dirs.n; i++)
		load_dir(s, s->include_dirs.items[i], 0, 0);
	load_path(s, 0, 0);
}

/* ---- cloning ------------------------------------------------------------ */

static struct tr_expr *clone_expr(const struct tr_expr *e);

static void clone_vec_expr(struct tr_vec *dst, const struct tr_vec *src)
{
	memset(dst, 0, sizeof(*dst));
	for (unsigned i = 0; i < src->n; i++)
		tr_vec_push(dst, src->items[i] ? clone_expr(src->items[i]) : NULL);
}

/* A chain of binary operators, bottom up: no recursion per operator. */
static struct tr_expr *clone_chain(const struct tr_expr *e)
{
	struct tr_vec spine = {0};
	struct tr_expr *below = NULL;

	tr_chain(e, false, &spine);
	for (unsigned i = 0; i < spine.n; i++) {
		const struct tr_expr *op = spine.items[i];
		struct tr_expr *c = tr_alloc(sizeof(*c));
		*c = *op;
		c->a = i ? below : clone_expr(op->a);
		c->b = clone_expr(op->b);
		below = c;
	}
	free(spine.items);
	return below;
}

static struct tr_expr *clone_expr(const struct tr_expr *e)
{
	struct tr_expr *c;

	if (!e)
		return NULL;
	if (tr_is_chain(e))
		return clone_chain(e);
	c = tr_alloc(sizeof(*c));
	*c = *e;
	c->a = clone_expr(e->a);
	c->b = clone_expr(e->b);
	c->c = clone_expr(e->c);
	clone_vec_expr(&c->args, &e->args);
	return c;
}

static struct tr_stmt *clone_stmt(const struct tr_stmt *st)
{
	struct tr_stmt *c;

	if (!st)
		return NULL;
	c = tr_alloc(sizeof(*c));
	*c = *st;
	memset(&c->list, 0, sizeof(c->list));
	for (unsigned i = 0; i < st->list.n; i++)
		tr_vec_push(&c->list, clone_stmt(st->list.items[i]));
	c->e = clone_expr(st->e);
	c->e2 = clone_expr(st->e2);
	c->e3 = clone_expr(st->e3);
	c->body = clone_stmt(st->body);
	c->els = clone_stmt(st->els);
	clone_vec_expr(&c->keys, &st->keys);
	c->value = clone_expr(st->value);
	c->base = clone_expr(st->base);
	c->limit = clone_expr(st->limit);
	c->catch_var = clone_expr(st->catch_var);
	return c;
}

/* ---- probe point resolution ---------------------------------------------- */

struct match {
	struct tr_resolved *r;
	struct tr_vec prologues, epilogues;     /* alias bodies, outermost last */
};

struct resolver {
	struct tr_session *s;
	struct tr_vec *out;                     /* struct match * */
	const struct tr_token *tok;
};

static const char *comp_str(const struct tr_component *c)
{
	return c->has_arg && c->arg->kind == E_STR ? c->arg->str : NULL;
}

static bool comp_num(const struct tr_component *c, int64_t *v)
{
	if (!c->has_arg || c->arg->kind != E_NUM)
		return false;
	*v = c->arg->num;
	return true;
}

static const char *point_text(const struct tr_vec *comps)
{
	struct tr_probe_point pp = { .comps = *comps };
	struct tr_buf b = {0};

	tr_print_point(&b, &pp);
	return tr_buf_str(&b);
}

static void add_match(struct resolver *rv, struct tr_resolved *r)
{
	struct match *m = tr_alloc(sizeof(*m));

	m->r = r;
	tr_vec_push(rv->out, m);
}

static void set_fields(struct tr_resolved *r)
{
	struct mt_format f;
	struct mt_fmt_error err;

	if (mt_fmt_parse(r->format, &f, &err))
		return;
	for (unsigned i = 0; i < f.nfields; i++) {
		tr_vec_push(&r->fields, tr_strdup(f.fields[i].name));
		enum tr_type t = strcmp(mt_fmt_stap_type(&f.fields[i]), "string") ? T_LONG : T_STRING;
		tr_vec_push(&r->field_types, (void *)(intptr_t)t);
	}
}

static const char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/')) {
		if (realpath(name, buf))
			return tr_strdup(buf);
		return name;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");
		char *cand = tr_printf("%.*s/%s", (int)n, path, name);
		if (access(cand, X_OK) == 0 && realpath(cand, buf))
			return tr_strdup(buf);
		path += n;
		if (*path == ':')
			path++;
	}
	return name;
}

static int resolve_marks(struct resolver *rv, const struct tr_vec *comps, unsigned at,
			 bool kernel, const char *path, const char *provider)
{
	const struct tr_component *mark = comps->items[at];
	const char *fmt_glob = NULL;
	struct tr_vec markers = {0};
	char *err = NULL;
	int found = 0;

	if (strcmp(mark->name, "mark") || !comp_str(mark))
		return 0;
	if (at + 1 < comps->n) {
		const struct tr_component *f = comps->items[at + 1];
		if (!kernel || strcmp(f->name, "format") || !comp_str(f) || at + 2 < comps->n)
			return 0;
		fmt_glob = comp_str(f);
	}
	if (kernel) {
		if (tr_markers_kernel(rv->s, &markers)) {
			tr_sem_error(rv->tok, "cannot read the kernel marker catalogue");
			return -1;
		}
	} else if (((!provider || tr_glob(provider, "marktap")) && tr_markers_elf(path, &markers, &err)) ||
		   tr_markers_sdt(path, &markers, &err)) {
		tr_sem_error(rv->tok, "%s", err);
		return -1;
	}
	for (unsigned i = 0; i < markers.n; i++) {
		const struct tr_marker *m = markers.items[i];
		if (!tr_glob(comp_str(mark), m->name))
			continue;
		if (m->provider && provider && !tr_glob(provider, m->provider))
			continue;
		if (fmt_glob && !tr_glob(fmt_glob, m->format))
			continue;
		struct tr_resolved *r = tr_alloc(sizeof(*r));
		r->kind = kernel ? P_MARK_KERNEL : P_MARK_USER;
		r->marker = m->name;
		r->format = m->format;
		r->path = path;
		r->provider = m->provider;
		r->pp = kernel ? tr_printf("kernel.mark(\"%s\")", m->name)
		      : m->provider ? tr_printf("process(\"%s\").provider(\"%s\").mark(\"%s\")", path,
						m->provider, m->name)
				    : tr_printf("process(\"%s\").mark(\"%s\")", path, m->name);
		set_fields(r);
		add_match(rv, r);
		found++;
	}
	free(markers.items);
	return found;
}

/* kernel.function, kprobe.function, module("M").function: btf.c */
static int resolve_kfuncs(struct resolver *rv, const struct tr_vec *comps)
{
	struct tr_vec got = {0};
	int n = tr_btf_resolve(rv->s, comps, rv->tok, &got);

	for (unsigned i = 0; n > 0 && i < got.n; i++)
		add_match(rv, got.items[i]);
	free(got.items);
	return n;
}

/* trace.event("NAME"): the events of the trace given with --trace (trace.c). */
static int resolve_trace_events(struct resolver *rv, const struct tr_component *ev)
{
	struct tr_vec markers = {0};
	char *err = NULL;
	int found = 0;

	if (strcmp(ev->name, "event") || !comp_str(ev))
		return 0;
	if (tr_trace_markers(rv->s, &markers, &err)) {
		tr_sem_error(rv->tok, "%s", err);
		return -1;
	}
	for (unsigned i = 0; i < markers.n; i++) {
		const struct tr_marker *m = markers.items[i];
		if (!tr_glob(comp_str(ev), m->name))
			continue;
		struct tr_resolved *r = tr_alloc(sizeof(*r));
		r->kind = P_MARK_KERNEL;        /* a recorded event, as kernel.mark's are */
		r->marker = m->name;
		r->format = m->format;
		r->pp = tr_printf("trace.event(\"%s\")", m->name);
		set_fields(r);
		add_match(rv, r);
		found++;
	}
	free(markers.items);
	return found;
}

/* process("P").function("F")[.return|.call|.inline] and
 * .statement("F@FILE:LINE"), from DWARF (dwarf.c).  As stap: .call the
 * functions' own code only, .inline only the copies inlined elsewhere. */
static int resolve_functions(struct resolver *rv, const struct tr_vec *comps, unsigned at,
			     const char *path)
{
	const struct tr_component *fc = comps->items[at];
	bool stmt = !strcmp(fc->name, "statement"), ret = false, call = false, inl = false;
	struct tr_vec funcs = {0};
	char *err = NULL;
	int n;

	if (!comp_str(fc) || at + 2 < comps->n || (stmt && at + 1 < comps->n))
		return 0;
	if (at + 1 < comps->n) {
		const struct tr_component *rc = comps->items[at + 1];
		ret = !strcmp(rc->name, "return");
		call = !strcmp(rc->name, "call");
		inl = !strcmp(rc->name, "inline");
		if ((!ret && !call && !inl) || rc->has_arg || stmt)
			return 0;
	}
	path = tr_dw_find_library(path);   /* .library("libc.so.6") */
	n = stmt ? tr_dw_statements(path, comp_str(fc), &funcs, &err) : tr_dw_functions(path, comp_str(fc), &funcs, &err);
	if (n < 0) {
		tr_sem_error(rv->tok, "%s", err);
		return -1;
	}
	if (n == 0) {
		const char *similar = tr_dw_similar(path);
		tr_sem_error(rv->tok, "while resolving probe point: no match%s%s%s",
			     similar ? " (similar functions: " : "", similar ? similar : "", similar ? ")" : "");
		return -1;
	}
	n = 0;
	for (unsigned i = 0; i < funcs.n; i++) {
		struct tr_dwfunc *f = funcs.items[i];
		if ((ret || call) && tr_dw_inlined(f))
			continue;   /* an inlined copy has no return to hook (as stap) */
		if (inl && !tr_dw_inlined(f))
			continue;
		n++;
		struct tr_resolved *r = tr_alloc(sizeof(*r));
		r->kind = P_MARK_USER;
		r->path = path;
		r->provider = TR_FUNC_PROVIDER;
		r->marker = tr_dw_name(f);
		r->format = "";
		r->dw = f;
		r->dw_func = true;
		r->dw_return = ret;
		r->dw_addr = tr_dw_addr(f);
		r->dw_cfa = ret ? tr_dw_cfa(f) : NULL;
		r->pp = tr_printf("process(\"%s\").%s(\"%s\")%s", path, stmt ? "statement" : "function",
				  tr_dw_pp_name(f), ret ? ".return" : call ? ".call" : inl ? ".inline" : "");
		add_match(rv, r);
	}
	free(funcs.items);
	if (!n && inl)
		tr_sem_error(rv->tok, "while resolving probe point: no match (%s has no inlined copies)",
			     comp_str(fc));
	else if (!n)
		tr_sem_error(rv->tok, "while resolving probe point: no match (%s is only inlined: "
			     "inlined copies have no .%s)", comp_str(fc), call ? "call" : "return");
	return n ? n : -1;
}

/*
 * process("P").plt["(NAME)"][.return] and .library("L").plt...: the PLT
 * entries of P, or of L (exe: P), from dwarf.c, each a function probe
 * without DWARF whose only variable is $$name, the called function's
 * name.  As stap: pp() is the entry as a statement address, pn() and -l
 * name the plt point, so ppfunc() is "" and probefunc() the address's
 * symbol.
 */
static int resolve_plt(struct resolver *rv, const struct tr_vec *comps, unsigned at, const char *exe,
		       const char *path)
{
	const struct tr_component *pc = comps->items[at];
	const char *glob = comp_str(pc) ? comp_str(pc) : "*";
	struct tr_vec ents = {0};
	char *err = NULL;
	bool ret = false;
	int n;

	if ((pc->has_arg && !comp_str(pc)) || at + 2 < comps->n)
		return 0;
	if (at + 1 < comps->n) {
		const struct tr_component *rc = comps->items[at + 1];
		if (strcmp(rc->name, "return") || rc->has_arg)
			return 0;
		ret = true;
	}
	path = tr_dw_find_library(path);
	n = tr_dw_plt(path, glob, &ents, &err);
	if (n < 0) {
		tr_sem_error(rv->tok, "%s", err);
		return -1;
	}
	if (n == 0) {
		const char *similar = tr_dw_plt_similar(path);
		tr_sem_error(rv->tok, "while resolving probe point: no match%s%s%s",
			     similar ? " (similar functions: " : "", similar ? similar : "", similar ? ")" : "");
		return -1;
	}
	for (unsigned i = 0; i < ents.n; i++) {
		const struct tr_pltent *e = ents.items[i];
		struct tr_resolved *r = tr_alloc(sizeof(*r));
		r->kind = P_MARK_USER;
		r->path = path;
		r->provider = TR_FUNC_PROVIDER;
		r->marker = tr_printf("%s@plt", e->name);
		r->format = "";
		r->plt_name = e->name;
		r->dw_func = true;
		r->dw_return = ret;
		r->dw_addr = e->addr;
		r->dw_cfa = ret ? "r7 +8" : NULL;   /* at the jmp: the caller's return address on top */
		r->pp = tr_printf("process(\"%s\").statement(0x%llx)%s", path, (unsigned long long)e->addr,
				  ret ? ".return" : "");
		r->alias_pp = exe ? tr_printf("process(\"%s\").library(\"%s\").plt(\"%s\")%s", exe, path,
					      e->name, ret ? ".return" : "")
				  : tr_printf("process(\"%s\").plt(\"%s\")%s", path, e->name, ret ? ".return" : "");
		add_match(rv, r);
	}
	free(ents.items);
	return n;
}

static int64_t timer_unit_ns(const char *unit)
{
	static const struct { const char *name; int64_t ns; } units[] = {
		{ "s", 1000000000 }, { "sec", 1000000000 }, { "ms", 1000000 },
		{ "msec", 1000000 }, { "us", 1000 }, { "usec", 1000 }, { "ns", 1 },
		{ "nsec", 1 }, { "jiffies", 4000000 }, { NULL, 0 },
	};
	for (unsigned i = 0; units[i].name; i++)
		if (!strcmp(units[i].name, unit))
			return units[i].ns;
	return 0;
}

static struct tr_resolved *new_point(enum tr_pkind kind, const char *pp)
{
	struct tr_resolved *r = tr_alloc(sizeof(*r));

	r->kind = kind;
	r->pp = pp;
	return r;
}

/* What stap says of a bad procfs path (relative to its module's
 * directory, components not empty, "." or ".."), or NULL. */
static const char *procfs_path_error(const char *path)
{
	size_t n = strlen(path);

	if (path[0] == '/')
		return "cannot start with a '/'";
	if (!n || path[n - 1] == '/')
		return "cannot end with a '/'";
	for (const char *c = path; *c; c += strcspn(c, "/"), c += *c == '/') {
		size_t len = strcspn(c, "/");
		if (!len)
			return "component cannot be empty";
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return "cannot be relative (and contain '.' or '..')";
	}
	return NULL;
}

/*
 * procfs[("F")][.umask(N)].read[.maxsize(N)] and ...write: a file stap
 * serves under /proc/systemtap/MODULE ("command" when unnamed); $value is
 * what a reader gets (set by .read) or what a writer wrote (.write).
 */
static int resolve_procfs(struct resolver *rv, const struct tr_vec *comps)
{
	const struct tr_component *c0 = comps->items[0];
	struct tr_resolved *r = new_point(P_PROCFS, NULL);
	struct tr_buf pp = {0};
	unsigned at = 1;
	int64_t v;

	if (c0->has_arg && !comp_str(c0))
		return 0;
	r->procfs_file = comp_str(c0) ? comp_str(c0) : "command";
	const char *why = procfs_path_error(r->procfs_file);
	if (why) {
		tr_sem_error(c0->tok, "while resolving probe point");
		tr_sem_error(c0->tok, "procfs path %s", why);
		return -1;
	}
	tr_buf_puts(&pp, comp_str(c0) ? tr_printf("procfs(\"%s\")", r->procfs_file) : "procfs");
	r->procfs_umask = -1;
	if (at < comps->n && !strcmp(((struct tr_component *)comps->items[at])->name, "umask")) {
		if (!comp_num(comps->items[at], &v))
			return 0;
		r->procfs_umask = v;
		tr_buf_printf(&pp, ".umask(%lld)", (long long)v);
		at++;
	}
	if (at >= comps->n)
		return 0;
	const struct tr_component *op = comps->items[at++];
	if (op->has_arg || (strcmp(op->name, "read") && strcmp(op->name, "write")))
		return 0;
	r->procfs_write = op->name[0] == 'w';
	tr_buf_printf(&pp, ".%s", op->name);
	if (!r->procfs_write && at < comps->n) {
		const struct tr_component *mx = comps->items[at++];
		if (strcmp(mx->name, "maxsize") || !comp_num(mx, &v))
			return 0;
		if (v <= 0) {
			tr_sem_error(c0->tok, "while resolving probe point");
			tr_sem_error(NULL, "maxsize must be greater than 0");
			return -1;
		}
		r->procfs_maxsize = v;
		tr_buf_printf(&pp, ".maxsize(%lld)", (long long)v);
	}
	if (at != comps->n)
		return 0;
	r->pp = tr_buf_str(&pp);
	tr_vec_push(&r->fields, "value");
	tr_vec_push(&r->field_types, (void *)(intptr_t)T_STRING);
	add_match(rv, r);
	return 1;
}

/* process[("P")][.thread].begin and .end: a process (a thread) that
 * starts or ends; with a program, those running it. */
static int resolve_process_life(struct resolver *rv, const struct tr_vec *comps, unsigned at,
				const char *path, int64_t pid)
{
	const struct tr_component *c = comps->items[at];
	bool thread = false;

	if (!strcmp(c->name, "thread") && !c->has_arg && at + 1 < comps->n) {
		thread = true;
		c = comps->items[++at];
	}
	if (at + 1 != comps->n || c->has_arg || (strcmp(c->name, "begin") && strcmp(c->name, "end")))
		return 0;
	struct tr_resolved *r = new_point(c->name[0] == 'b' ? P_PROC_BEGIN : P_PROC_END, NULL);
	r->thread = thread;
	r->path = path;
	r->proc_pid = pid;
	r->pp = tr_printf("process%s%s.%s", path ? tr_printf("(\"%s\")", path) :
			  pid ? tr_printf("(%lld)", (long long)pid) : "", thread ? ".thread" : "", c->name);
	add_match(rv, r);
	return 1;
}

/* kernel.trace("GLOB") or ("SYSTEM:GLOB"): the kernel's tracepoints
 * (ktrace.c), their parameters as $variables (all numbers: pointers and
 * integers). */
static int resolve_ktrace(struct resolver *rv, const struct tr_component *c)
{
	struct tr_vec tps = {0};
	char *err = NULL;
	const char *pat = comp_str(c);
	int found = 0;

	if (!pat)
		return 0;
	if (tr_ktrace_points(rv->s, &tps, &err)) {
		tr_sem_error(rv->tok, "%s", err);
		return -1;
	}
	for (unsigned i = 0; i < tps.n; i++) {
		const struct tr_ktrace *tp = tps.items[i];
		const char *colon = strchr(pat, ':');
		if (colon ? !tr_glob(tr_strndup(pat, (size_t)(colon - pat)), tp->system) ||
			    !tr_glob(colon + 1, tp->name) : !tr_glob(pat, tp->name))
			continue;
		struct tr_resolved *r = new_point(P_KTRACE, tr_printf("kernel.trace(\"%s:%s\")", tp->system, tp->name));
		r->ktrace = tp;
		r->marker = tp->name;
		for (unsigned k = 0; k < tp->fields.n; k++) {
			tr_vec_push(&r->fields, tp->fields.items[k]);
			tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
		}
		add_match(rv, r);
		found++;
	}
	return found;
}

/*
 * netfilter.hook("H").pf("PF")[.priority("N")] (or .pf first): stap's
 * netfilter hook, whose handler sees $hooknum, $skb, $in, $out, $okfn and
 * $verdict (the kernel's nf_hookfn arguments).  marktap.ko registers no
 * netfilter hooks: the point elaborates as stap's, as kernel.trace does
 * (its parameters are numbers; $skb->len needs the kernel's types), and
 * does not run (run.c says so at pass 5).  The netfilter.* aliases of
 * netfilter.stp stand on it.
 */
static int resolve_netfilter(struct resolver *rv, const struct tr_vec *comps)
{
	static struct tr_ktrace hook = { "netfilter", "nf_hookfn", {0}, {0} };
	static const char *const params[][2] = {
		{ "hooknum", "unsigned int" }, { "skb", "struct sk_buff *" },
		{ "in", "const struct net_device *" }, { "out", "const struct net_device *" },
		{ "okfn", "int (*)(struct net *, struct sock *, struct sk_buff *)" },
		{ "verdict", "unsigned int" },
	};
	const char *h = NULL, *pf = NULL, *prio = NULL;

	if (comps->n < 3 || comps->n > 4)
		return 0;
	for (unsigned i = 1; i < comps->n; i++) {
		const struct tr_component *c = comps->items[i];
		const char *v = comp_str(c);
		const char **slot = !strcmp(c->name, "hook") ? &h : !strcmp(c->name, "pf") ? &pf :
				    !strcmp(c->name, "priority") && i == 3 ? &prio : NULL;
		if (!v || !slot || *slot)
			return 0;
		*slot = v;
	}
	if (!h || !pf)
		return 0;
	if (!hook.fields.n)
		for (unsigned i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			tr_vec_push(&hook.fields, (void *)params[i][0]);
			tr_vec_push(&hook.ctypes, (void *)params[i][1]);
		}
	struct tr_resolved *r = new_point(P_NETFILTER, point_text(comps));
	r->ktrace = &hook;
	r->marker = "netfilter";
	for (unsigned k = 0; k < hook.fields.n; k++) {
		tr_vec_push(&r->fields, hook.fields.items[k]);
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
	}
	add_match(rv, r);
	return 1;
}

/* perf.type(T).config(C)[.sample(N)|.hz(N)][.process[("P")]][.counter("C")]:
 * a perf event, sampled every N events (1000000; a counter is not
 * sampled), of every process or of one program's; a counter's value is
 * @perf("C"). */
static int resolve_perf(struct resolver *rv, const struct tr_vec *comps)
{
	const struct tr_component *c;
	struct tr_resolved *r = new_point(P_PERF, NULL);
	unsigned at = 3;
	bool sampled = false;

	if (comps->n < 3 || strcmp(((struct tr_component *)comps->items[1])->name, "type") ||
	    !comp_num(comps->items[1], &r->perf_type) ||
	    strcmp(((struct tr_component *)comps->items[2])->name, "config") ||
	    !comp_num(comps->items[2], &r->perf_config))
		return 0;
	r->perf_sample = 1000000;
	if (at < comps->n && (!strcmp((c = comps->items[at])->name, "sample") || !strcmp(c->name, "hz"))) {
		if (!comp_num(c, &r->perf_sample))
			return 0;
		sampled = true;
		at++;
	}
	if (at < comps->n && !strcmp((c = comps->items[at])->name, "process")) {
		if (comp_str(c))
			r->path = find_in_path(comp_str(c));
		else if (!c->has_arg && rv->s->target_cmd)
			r->path = find_in_path(tr_strndup(rv->s->target_cmd, strcspn(rv->s->target_cmd, " \t")));
		else
			return 0;
		at++;
	}
	if (at < comps->n && !strcmp((c = comps->items[at])->name, "counter")) {
		if (!comp_str(c) || !r->path)
			return 0;
		r->perf_counter = comp_str(c);
		if (!sampled)
			r->perf_sample = 0;
		at++;
	}
	if (at != comps->n)
		return 0;
	r->pp = tr_printf("perf.type(%lld).config(%lld).sample(%lld)%s%s", (long long)r->perf_type,
			  (long long)r->perf_config, (long long)r->perf_sample,
			  r->path ? tr_printf(".process(\"%s\")", r->path) : "",
			  r->perf_counter ? tr_printf(".counter(\"%s\")", r->perf_counter) : "");
	add_match(rv, r);
	return 1;
}

static int resolve_process_path(struct resolver *rv, const struct tr_vec *comps, const char *path);
static int resolve_process_glob(struct resolver *rv, const struct tr_vec *comps, const char *pattern);

/* Built-in points; the number of concrete points found, -1 on error. */
static int resolve_builtin(struct resolver *rv, const struct tr_vec *comps)
{
	const struct tr_component *c0 = comps->items[0];
	struct tr_resolved *r;
	int64_t v = 0;

	if (!strcmp(c0->name, "begin") || !strcmp(c0->name, "end") || !strcmp(c0->name, "error") ||
	    !strcmp(c0->name, "never")) {
		if (comps->n != 1 || (c0->has_arg && (!comp_num(c0, &v) || !strcmp(c0->name, "never"))))
			return 0;
		r = tr_alloc(sizeof(*r));
		r->kind = c0->name[0] == 'b' ? P_BEGIN : c0->name[0] == 'e' && c0->name[1] == 'n' ? P_END :
			  c0->name[0] == 'e' ? P_ERROR : P_NEVER;
		if (c0->has_arg)
			r->priority = c0->arg->num;
		r->pp = point_text(comps);
		add_match(rv, r);
		return 1;
	}
	if (!strcmp(c0->name, "oneshot") && comps->n == 1 && !c0->has_arg) {
		/* stap's oneshot: the handler runs once, at begin, and the
		 * session ends after it (exit() asks for the end, as stap's) */
		r = tr_alloc(sizeof(*r));
		r->kind = P_BEGIN;
		r->oneshot = true;
		r->pp = point_text(comps);
		add_match(rv, r);
		return 1;
	}
	if (!strcmp(c0->name, "timer") && comps->n == 2 && !c0->has_arg &&
	    !strcmp(((struct tr_component *)comps->items[1])->name, "profile") &&
	    !((struct tr_component *)comps->items[1])->has_arg) {
		/* every CPU's scheduler tick, in whatever runs there */
		add_match(rv, new_point(P_PROFILE, "timer.profile"));
		return 1;
	}
	if (!strcmp(c0->name, "procfs") && comps->n >= 2)
		return resolve_procfs(rv, comps);
	if (!strcmp(c0->name, "perf") && !c0->has_arg)
		return resolve_perf(rv, comps);
	if (!strcmp(c0->name, "netfilter") && !c0->has_arg)
		return resolve_netfilter(rv, comps);
	if (!strcmp(c0->name, "timer") && comps->n >= 2 && comps->n <= 3) {
		const struct tr_component *c1 = comps->items[1];
		int64_t ns = timer_unit_ns(c1->name);
		if (!strcmp(c1->name, "hz")) {
			if (!comp_num(c1, &v) || v <= 0)
				return 0;
			ns = 1000000000 / v;
		} else {
			if (!ns || !comp_num(c1, &v))
				return 0;
			if (v <= 0) {
				tr_sem_error(c1->tok, "invalid timer interval");
				return -1;
			}
			ns *= v;
		}
		r = tr_alloc(sizeof(*r));
		r->kind = P_TIMER;
		r->interval_ns = ns;
		if (comps->n == 3) {
			const struct tr_component *c2 = comps->items[2];
			/* stap randomizes timer.ms/us/s/jiffies..., not timer.hz */
			if (strcmp(c2->name, "randomize") || !comp_num(c2, &v) || v < 0 ||
			    !strcmp(c1->name, "hz"))
				return 0;
			r->randomize_ns = v * (ns / (comp_num(c1, &v) && v ? v : 1));
			if (!strcmp(c1->name, "hz"))
				r->randomize_ns = c2->arg->num * 1000;
		}
		r->pp = point_text(comps);
		add_match(rv, r);
		return 1;
	}
	if (!strcmp(c0->name, "trace") && comps->n == 2 && !c0->has_arg)
		return resolve_trace_events(rv, comps->items[1]);
	if (!strcmp(c0->name, "kernel") && comps->n == 2 && !c0->has_arg &&
	    !strcmp(((struct tr_component *)comps->items[1])->name, "trace"))
		return resolve_ktrace(rv, comps->items[1]);
	if ((v = resolve_kfuncs(rv, comps)) != 0)
		return (int)v;
	if (!strcmp(c0->name, "kernel") && comps->n >= 2 && !c0->has_arg)
		return resolve_marks(rv, comps, 1, true, NULL, NULL);
	if (!strcmp(c0->name, "process") && comps->n >= 2) {
		const char *path = NULL;
		const char *c1 = ((struct tr_component *)comps->items[1])->name;
		if (!strcmp(c1, "begin") || !strcmp(c1, "end") || !strcmp(c1, "thread")) {
			if (c0->has_arg && !comp_str(c0) && !comp_num(c0, &v))
				return 0;
			return resolve_process_life(rv, comps, 1, comp_str(c0) ? find_in_path(comp_str(c0)) : NULL,
						    comp_str(c0) ? 0 : v);
		}
		if (comp_str(c0) && comp_str(c0)[strcspn(comp_str(c0), "*?[")]) {
			return resolve_process_glob(rv, comps, comp_str(c0));
		} else if (comp_str(c0)) {
			path = find_in_path(comp_str(c0));
		} else if (comp_num(c0, &v) || (!c0->has_arg && rv->s->target_pid)) {
			char buf[PATH_MAX];
			char *link = tr_printf("/proc/%lld/exe", (long long)(c0->has_arg ? v : rv->s->target_pid));
			ssize_t n = readlink(link, buf, sizeof(buf) - 1);
			if (n < 0) {
				tr_sem_error(c0->tok, "cannot find executable of process %lld",
					     (long long)(c0->has_arg ? v : rv->s->target_pid));
				return -1;
			}
			buf[n] = '\0';
			path = tr_strdup(buf);
		} else if (!c0->has_arg && rv->s->target_cmd) {
			char cmd[PATH_MAX];
			snprintf(cmd, sizeof(cmd), "%.*s", (int)strcspn(rv->s->target_cmd, " \t"),
				 rv->s->target_cmd);
			path = find_in_path(cmd);
		} else {
			return 0;
		}
		return resolve_process_path(rv, comps, path);
	}
	return 0;
}

/* process("P")... once P is a file: its marks, SDT probes, functions. */
static int resolve_process_path(struct resolver *rv, const struct tr_vec *comps, const char *path)
{
	unsigned at = 1;
	const char *provider = NULL, *exe = path;
	bool lib = false;

	/* .library("L") and .provider("P"), in either order */
	for (;;) {
		const struct tr_component *c = comps->items[at];
		if (!lib && !strcmp(c->name, "library") && comp_str(c) && at + 1 < comps->n) {
			path = find_in_path(comp_str(c));
			lib = true;
		} else if (!provider && !strcmp(c->name, "provider") && comp_str(c) && at + 1 < comps->n) {
			provider = comp_str(c);
		} else {
			break;
		}
		at++;
	}
	if (!provider && !strcmp(((struct tr_component *)comps->items[at])->name, "plt"))
		return resolve_plt(rv, comps, at, lib ? exe : NULL, path);
	if (!provider && (!strcmp(((struct tr_component *)comps->items[at])->name, "function") ||
			  !strcmp(((struct tr_component *)comps->items[at])->name, "statement")))
		return resolve_functions(rv, comps, at, path);
	return resolve_marks(rv, comps, at, false, path, provider);
}

/* process("PATTERN")... with '*', '?' or '[': each file the pattern
 * names, as stap expands it (a file reached twice through links once). */
static int resolve_process_glob(struct resolver *rv, const struct tr_vec *comps, const char *pattern)
{
	struct tr_vec seen = {0};
	glob_t g;
	int found = 0;

	if (glob(pattern, 0, NULL, &g) != 0) {
		tr_sem_error(rv->tok, "no match for the file pattern %s", pattern);
		return -1;
	}
	for (size_t i = 0; i < g.gl_pathc && found >= 0; i++) {
		char real[PATH_MAX];
		struct stat st;
		bool dup = false;
		if (!realpath(g.gl_pathv[i], real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		for (unsigned k = 0; k < seen.n && !dup; k++)
			dup = !strcmp(seen.items[k], real);
		if (dup)
			continue;
		tr_vec_push(&seen, tr_strdup(real));
		int n = resolve_process_path(rv, comps, tr_strdup(real));
		found = n < 0 ? -1 : found + n;
	}
	globfree(&g);
	free(seen.items);
	return found;
}

static int resolve_comps(struct resolver *rv, const struct tr_vec *comps, int depth);
static int resolve_point(struct resolver *rv, const struct tr_vec *comps, bool optional, int depth);

/* Alias "name.parts = points": a user point that starts with name.parts. */
/* Whether alias AL's name matches the first components of COMPS. */
static bool alias_name_matches(const struct tr_probe *al, const struct tr_vec *comps)
{
	const struct tr_probe_point *name = al->alias_names.items[0];

	if (name->comps.n > comps->n)
		return false;
	for (unsigned k = 0; k < name->comps.n; k++) {
		const struct tr_component *a = name->comps.items[k], *u = comps->items[k];
		if (!tr_glob(u->name, a->name) || a->has_arg != u->has_arg)
			return false;
		if (a->has_arg) {
			struct tr_buf x = {0}, y = {0};
			tr_print_expr(&x, a->arg);
			tr_print_expr(&y, u->arg);
			if (strcmp(tr_buf_str(&x), tr_buf_str(&y)))
				return false;
		}
	}
	return true;
}

/*
 * As stap: an alias whose name is a prefix of the point ("a" for "a.b")
 * extends with the rest ("a.b" is a's points with ".b") only where no
 * longer alias under the same name matches ("a.b" itself): nd_syscall.X
 * and nd_syscall.X.return both match "nd_syscall.X.return", and the
 * latter alone is it.
 */
static bool longer_alias_matches(struct tr_session *s, const struct tr_probe *al, const struct tr_vec *comps)
{
	const struct tr_probe_point *name = al->alias_names.items[0];

	for (unsigned i = 0; i < s->all_aliases.n; i++) {
		const struct tr_probe *o = s->all_aliases.items[i];
		const struct tr_probe_point *on = o->alias_names.items[0];
		unsigned k;
		if (on->comps.n <= name->comps.n || !alias_name_matches(o, comps))
			continue;
		for (k = 0; k < name->comps.n; k++)
			if (strcmp(((struct tr_component *)on->comps.items[k])->name,
				   ((struct tr_component *)name->comps.items[k])->name))
				break;
		if (k == name->comps.n)
			return true;
	}
	return false;
}

static int resolve_aliases(struct resolver *rv, const struct tr_vec *comps, int depth)
{
	int found = 0;

	for (unsigned i = 0; i < rv->s->all_aliases.n; i++) {
		struct tr_probe *al = rv->s->all_aliases.items[i];
		const struct tr_probe_point *name = al->alias_names.items[0];

		if (!alias_name_matches(al, comps))
			continue;
		if (name->comps.n < comps->n && longer_alias_matches(rv->s, al, comps))
			continue;
		for (unsigned p = 0; p < al->points.n; p++) {
			const struct tr_probe_point *target = al->points.items[p];
			struct tr_vec sub = {0}, got = {0};
			for (unsigned j = 0; j < target->comps.n; j++)
				tr_vec_push(&sub, target->comps.items[j]);
			for (unsigned j = name->comps.n; j < comps->n; j++)
				tr_vec_push(&sub, comps->items[j]);
			struct resolver inner = *rv;
			inner.out = &got;
			int n = resolve_point(&inner, &sub, target->optional, depth + 1);
			if (n < 0)
				return -1;
			if (n == 0 && !target->optional)
				continue;
			for (unsigned j = 0; j < got.n; j++) {
				struct match *m = got.items[j];
				/* inner aliases resolve first: the outermost name stays */
				m->r->alias_pp = point_text(&name->comps);
				tr_vec_push(al->epilogue ? &m->epilogues : &m->prologues, al);
				if (target->cond && !m->r->cond)
					m->r->cond = target->cond;
				tr_vec_push(rv->out, m);
			}
			found += n;
			if (n > 0 && target->sufficient)
				break;          /* "a !, b": b only when a resolves to nothing */
		}
	}
	return found;
}

static int resolve_comps(struct resolver *rv, const struct tr_vec *comps, int depth)
{
	int a, b;

	if (depth > ALIAS_DEPTH_MAX) {
		tr_sem_error(rv->tok, "recursion too deep in probe alias expansion");
		return -1;
	}
	a = resolve_aliases(rv, comps, depth);
	if (a < 0)
		return -1;
	b = resolve_builtin(rv, comps);
	if (b < 0)
		return -1;
	return a + b;
}

/* Build the body of a concrete probe: prologues, the user's body, epilogues. */
static struct tr_stmt *derived_body(const struct match *m, const struct tr_stmt *user)
{
	struct tr_stmt *b = tr_alloc(sizeof(*b));

	b->kind = S_BLOCK;
	b->tok = user->tok;
	/* "b = a { }" over "a = kernel.mark(..) { }": a's body, then b's,
	 * then the user's (an alias body is put before what uses the alias);
	 * "+=" epilogues the other way round */
	for (unsigned i = 0; i < m->prologues.n; i++)
		tr_vec_push(&b->list, clone_stmt(((struct tr_probe *)m->prologues.items[i])->body));
	tr_vec_push(&b->list, clone_stmt(user));
	for (unsigned i = m->epilogues.n; i-- > 0;)
		tr_vec_push(&b->list, clone_stmt(((struct tr_probe *)m->epilogues.items[i])->body));
	return b;
}

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

/* " (similar: a, b)": up to five of the candidate names nearest name
 * (each once), nearest first, as stap suggests them; "" when none is near. */
static const char *similar_names(const char *name, const struct tr_vec *cands)
{
	enum { MAX_SIMILAR = 5 };
	const char *best[MAX_SIMILAR];
	unsigned dist[MAX_SIMILAR], n = 0, limit = (unsigned)strlen(name) / 2 + 2;
	struct tr_buf b = {0};

	for (unsigned i = 0; i < cands->n; i++) {
		const char *c = cands->items[i];
		unsigned d = edit_distance(name, c), k;
		if (d > limit)
			continue;
		for (k = 0; k < n && strcmp(best[k], c); k++)
			;
		if (k < n)
			continue;
		for (k = n; k > 0 && dist[k - 1] > d; k--)
			if (k < MAX_SIMILAR) {
				best[k] = best[k - 1];
				dist[k] = dist[k - 1];
			}
		if (k < MAX_SIMILAR) {
			best[k] = c;
			dist[k] = d;
			if (n < MAX_SIMILAR)
				n++;
		}
	}
	for (unsigned k = 0; k < n; k++)
		tr_buf_printf(&b, "%s%s", k ? ", " : " (similar: ", best[k]);
	if (n)
		tr_buf_putc(&b, ')');
	return tr_buf_str(&b);
}

const char *tr_similar_names(const char *name, const struct tr_vec *cands)
{
	return similar_names(name, cands);
}

/* The first components a probe point can start with here, for "(similar:". */
static const char *similar_points(struct tr_session *s, const char *name)
{
	static const char *const builtin[] = {
		"begin", "end", "error", "never", "oneshot", "timer", "kernel", "process", "trace",
		"procfs", "perf", "netfilter",
	};
	struct tr_vec cands = {0};

	for (unsigned i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		tr_vec_push(&cands, (void *)builtin[i]);
	for (unsigned i = 0; i < s->all_aliases.n; i++) {
		struct tr_probe *al = s->all_aliases.items[i];
		for (unsigned k = 0; k < al->alias_names.n; k++) {
			struct tr_probe_point *pp = al->alias_names.items[k];
			tr_vec_push(&cands, (void *)((struct tr_component *)pp->comps.items[0])->name);
		}
	}
	const char *r = similar_names(name, &cands);
	free(cands.items);
	return r;
}

/*
 * Resolve a point; an optional one ('?') that fails for any reason (no
 * such program, no match) resolves to nothing, silently, as in stap.
 */
static int resolve_point(struct resolver *rv, const struct tr_vec *comps, bool optional, int depth)
{
	bool quiet = tr_diag.quiet_semantic;
	unsigned errors = tr_diag.errors;
	int n;

	if (optional)
		tr_diag.quiet_semantic = true;
	n = resolve_comps(rv, comps, depth);
	tr_diag.quiet_semantic = quiet;
	if (optional && n < 0) {
		tr_diag.errors = errors;
		n = 0;
	}
	return n;
}

static void resolve_probe(struct tr_session *s, struct tr_probe *pr)
{
	for (unsigned i = 0; i < pr->points.n; i++) {
		struct tr_probe_point *pp = pr->points.items[i];
		struct tr_vec got = {0};
		struct resolver rv = { .s = s, .out = &got, .tok = pp->tok };
		int n = resolve_point(&rv, &pp->comps, pp->optional, 0);

		if (n < 0)
			continue;
		if (n == 0) {
			const char *first = ((struct tr_component *)pp->comps.items[0])->name;
			if (!pp->optional)
				tr_sem_error(pp->tok, "while resolving probe point %s: no match%s",
					     point_text(&pp->comps), similar_points(s, first));
			continue;
		}
		for (unsigned k = 0; k < got.n; k++) {
			struct match *m = got.items[k];
			struct tr_probe *d = tr_alloc(sizeof(*d));
			d->tok = pr->tok;
			d->point_tok = pp->tok;
			d->file = pr->file;
			d->orig_pp = point_text(&pp->comps);
			if (pp->cond)
				m->r->cond = clone_expr(pp->cond);
			else if (m->r->cond)
				m->r->cond = clone_expr(m->r->cond);
			tr_vec_push(&d->resolved, m->r);
			d->body = derived_body(m, pr->body);
			d->id = s->probes.n;
			tr_vec_push(&s->probes, d);
		}
		if (pp->sufficient)
			break;
	}
}

/* ---- symbols ------------------------------------------------------------- */

struct scope {
	struct tr_session *s;
	struct tr_probe *probe;        /* NULL in a function */
	struct tr_func *func;
	struct tr_vec *locals;
	const struct tr_file *file;
	struct tr_resolved *rp;
	struct tr_vec unavailable;     /* alias variables it cannot give: name, reason */
	struct tr_vec iterating;       /* arrays of the foreach loops open here */
};

/* As stap: an array may not change while a foreach walks it. */
static void check_iterating(struct scope *sc, const struct tr_sym *y, const struct tr_token *tok)
{
	for (unsigned i = 0; y && i < sc->iterating.n; i++)
		if (sc->iterating.items[i] == y) {
			tr_sem_error(tok, "variable '%s' modified during 'foreach' iteration", y->name);
			return;
		}
}

/*
 * A tapset alias says which of stap's documented variables its marker
 * cannot give with
 *	name = __marktap_unavailable("why")
 * The statement is dropped; a later use of the name is a semantic error
 * that says why, where stap would have had a value (never a silent 0).
 */
#define UNAVAILABLE "__marktap_unavailable"
/* __marktap_others = __marktap_unavailable("why"): every variable the
 * alias does not set (the syscall aliases: stap's filename, flags...),
 * read by a handler that never assigns it, is that error too */
#define UNAVAILABLE_OTHERS "__marktap_others"

static bool note_unavailable(struct scope *sc, struct tr_stmt *st)
{
	struct tr_expr *e = st->e, *call;

	if (st->kind != S_EXPR || !e || e->kind != E_ASSIGN || strcmp(e->op, "=") ||
	    e->a->kind != E_SYM || e->b->kind != E_CALL || strcmp(e->b->op, UNAVAILABLE))
		return false;
	call = e->b;
	if (!st->tok->file->tapset || call->args.n != 1 ||
	    ((struct tr_expr *)call->args.items[0])->kind != E_STR) {
		tr_sem_error(call->tok, "%s takes one literal string, in a tapset alias", UNAVAILABLE);
		return true;
	}
	if (!strcmp(e->a->str, UNAVAILABLE_OTHERS) && sc->rp) {
		sc->rp->others_unavailable = tr_unescape(((struct tr_expr *)call->args.items[0])->str, NULL);
	} else {
		tr_vec_push(&sc->unavailable, (void *)e->a->str);
		tr_vec_push(&sc->unavailable, tr_unescape(((struct tr_expr *)call->args.items[0])->str, NULL));
	}
	st->kind = S_NULL;
	st->e = NULL;
	return true;
}

static const char *unavailable_reason(const struct scope *sc, const char *name)
{
	for (unsigned i = 0; i + 1 < sc->unavailable.n; i += 2)
		if (!strcmp(sc->unavailable.items[i], name))
			return sc->unavailable.items[i + 1];
	return NULL;
}

static struct tr_sym *find_sym(struct tr_vec *v, const char *name)
{
	for (unsigned i = 0; i < v->n; i++) {
		struct tr_sym *y = v->items[i];
		if (!strcmp(y->name, name))
			return y;
	}
	return NULL;
}

static bool visible(const struct tr_file *owner, bool privacy, const struct tr_file *from)
{
	return !privacy || owner == from;
}

static struct tr_sym *find_global(struct scope *sc, const char *name)
{
	struct tr_session *s = sc->s;

	for (unsigned i = 0; i < s->all_globals.n; i++) {
		struct tr_sym *g = s->all_globals.items[i];
		if (!strcmp(g->name, name) && visible(g->file, g->privacy, sc->file)) {
			if (!g->used) {
				g->used = true;
				tr_vec_push(&s->globals, g);
			}
			return g;
		}
	}
	return NULL;
}

static struct tr_sym *lookup(struct scope *sc, const char *name, const struct tr_token *tok,
			     int arity)
{
	struct tr_sym *y = find_sym(sc->locals, name);

	if (!y && sc->func)
		y = find_sym(&sc->func->params, name);
	if (!y)
		y = find_global(sc, name);
	if (!y && !sc->func && unavailable_reason(sc, name)) {
		tr_sem_error(tok, "variable '%s' is not available in %s: %s", name,
			     sc->rp && sc->rp->alias_pp ? sc->rp->alias_pp : "this probe",
			     unavailable_reason(sc, name));
		return NULL;
	}
	if (!y) {
		if (arity > 0) {
			tr_sem_error(tok, "unresolved arity-%d global array %s, missing global declaration?",
				     arity, name);
			return NULL;
		}
		y = tr_alloc(sizeof(*y));
		y->name = name;
		y->tok = tok;
		y->kind = SYM_LOCAL;
		y->arity = 0;
		tr_vec_push(sc->locals, y);
	}
	if (arity >= 0) {
		if (y->arity == -2 && arity == 0) {
			tr_sem_error(tok, "array used as scalar");
			return y;
		}
		if (y->arity < 0) {
			y->arity = arity;
		} else if (y->arity != arity) {
			if (arity == 0 || y->arity == 0)
				tr_sem_error(tok, y->arity ? "array used as scalar" : "scalar used as array");
			else
				tr_sem_error(tok, "inconsistent arity (%d vs %d)", arity, y->arity);
		}
		if (arity > 0 && !y->index_types)
			y->index_types = tr_alloc(sizeof(enum tr_type) * (size_t)arity);
	}
	return y;
}

static void bind_stmt(struct scope *sc, struct tr_stmt *st);
static void bind_expr(struct scope *sc, struct tr_expr *e);

/* "1" or "1 or 2": the arities of the functions of that name. */
static const char *func_arities(struct tr_session *s, const char *name, const struct tr_file *from)
{
	struct tr_buf b = {0};

	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		struct tr_func *f = s->all_funcs.items[i];
		if (!strcmp(f->name, name) && visible(f->file, f->privacy, from))
			tr_buf_printf(&b, "%s%u", b.len ? " or " : "", f->params.n);
	}
	return tr_buf_str(&b);
}

/* " (similar: a, b)": of visible functions, the nearest names, as stap
 * suggests them; "" when none is near. */
static const char *similar_funcs(struct tr_session *s, const char *name, const struct tr_file *from)
{
	struct tr_vec cands = {0};

	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		struct tr_func *f = s->all_funcs.items[i];
		if (f->name[0] != '_' && visible(f->file, f->privacy, from))
			tr_vec_push(&cands, (void *)f->name);
	}
	const char *r = similar_names(name, &cands);
	free(cands.items);
	return r;
}

static struct tr_func *find_func(struct tr_session *s, const char *name, unsigned arity,
				 const struct tr_file *from, bool *name_exists)
{
	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		struct tr_func *f = s->all_funcs.items[i];
		if (strcmp(f->name, name) || !visible(f->file, f->privacy, from))
			continue;
		*name_exists = true;
		if (f->params.n == arity)
			return f;
	}
	return NULL;
}

static void use_func(struct tr_session *s, struct tr_func *f)
{
	if (f->used)
		return;
	f->used = true;
	tr_vec_push(&s->funcs, f);
	if (f->body) {
		struct scope fs = { .s = s, .func = f, .locals = &f->locals, .file = f->file };
		bind_stmt(&fs, f->body);
	}
}

/* $var of a function probe: a field computed by its recipe (dwarf.c). */
static int func_target(struct tr_resolved *r, struct tr_expr *e, bool report)
{
	bool at_return;
	const char *recipe = tr_dw_target(r->dw, r->dw_return, e, report, &e->type, &at_return);

	if (!recipe)
		return -1;
	for (unsigned i = 0; i < r->dw_recipes.n; i++)
		if (!strcmp(r->dw_recipes.items[i], recipe) &&
		    (bool)(intptr_t)r->dw_at_return.items[i] == at_return) {
			e->target_arg = (int)i + 1;
			return 0;
		}
	tr_vec_push(&r->dw_recipes, (void *)recipe);
	tr_vec_push(&r->dw_at_return, (void *)(intptr_t)at_return);
	tr_vec_push(&r->fields, tr_printf("v%u", r->fields.n + 1));
	tr_vec_push(&r->field_types, (void *)(intptr_t)e->type);
	e->target_arg = (int)r->fields.n;
	return 0;
}

/* $param of kernel.trace: a number; $$parms and $$vars all of them;
 * what a pointer points to needs the kernel's types, which marktap
 * does not read. */
static int ktrace_target(const struct tr_resolved *r, struct tr_expr *e, bool report)
{
	const char *n = e->str + 1;

	if (e->str[0] == '$' && (!strcmp(n, "$parms") || !strcmp(n, "$vars")) && !e->members && !e->addr) {
		e->target_arg = -3;
		e->type = T_STRING;
		return 0;
	}
	for (unsigned i = 0; e->str[0] == '$' && i < r->fields.n; i++) {
		if (strcmp(r->fields.items[i], n))
			continue;
		if (e->members || e->addr || e->args.n) {
			if (report)
				tr_sem_error(e->tok, "unresolved target-symbol expression: %s of %s "
					     "parameter '$%s' (%s) needs the kernel's type information "
					     "(DWARF), which marktap does not read", e->addr ? "'&'" :
					     e->args.n ? "'[]'" : "'->'",
					     r->kind == P_NETFILTER ? "netfilter hook" : "tracepoint", n,
					     (const char *)r->ktrace->ctypes.items[i]);
			return -1;
		}
		e->target_arg = (int)i + 1;
		e->type = T_LONG;
		return 0;
	}
	if (report)
		tr_sem_error(e->tok, "unresolved target-symbol expression");
	return -1;
}

/* $$name of a plt probe: the called function's name, a literal; as
 * stap, $$parms and $$vars are empty (no DWARF at a PLT entry). */
static int plt_target(const struct tr_resolved *r, struct tr_expr *e, bool report)
{
	const char *n = e->str;
	bool plain = !e->members && !e->addr && !e->args.n && !e->a;

	if (plain && (!strcmp(n, "$$name") || !strcmp(n, "$$parms") || !strcmp(n, "$$vars") ||
		      !strcmp(n, "$$locals"))) {
		e->kind = E_STR;
		e->str = !strcmp(n, "$$name") ? r->plt_name : "";
		e->type = T_STRING;
		return 0;
	}
	if (report)
		tr_sem_error(e->tok, "unable to find plt variable '%s' (alternatives: $$name)", n);
	return -1;
}

/* $name in a probe: its field, or an error in stap's words. */
static int target_lookup(struct scope *sc, struct tr_expr *e, bool report)
{
	const char *n = e->str + 1;
	struct tr_resolved *r = sc->rp;
	bool marker = r && (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL);

	if (r && r->dw && !sc->func)
		return func_target(r, e, report);
	if (r && r->kfunc && !sc->func)
		return tr_btf_target(sc->s, r, e, report);
	if (!strcmp(e->str, "@cast") && e->a && e->members && !e->addr)
		return tr_btf_cast(sc->s, e, report);
	if (r && r->plt_name && !sc->func)
		return plt_target(r, e, report);
	if (r && r->kind == P_PROCFS && !sc->func && !strcmp(n, "value") && !e->args.n && !e->members &&
	    !e->addr) {
		e->target_arg = 1;
		e->type = T_STRING;
		return 0;
	}
	if (r && (r->kind == P_KTRACE || r->kind == P_NETFILTER) && !sc->func)
		return ktrace_target(r, e, report);
	if ((!strcmp(e->str, "@kregister") || !strcmp(e->str, "@uregister")) && !e->members && !e->addr) {
		/* a register of the probe's context: stap takes it at pass 2,
		 * marktap's handlers get no registers (gen.c: a run-time error) */
		e->target_arg = -6;
		e->type = T_LONG;
		return 0;
	}
	if (!strncmp(e->str, "@perf(", 6) && !e->members && !e->addr) {
		e->target_arg = -5;     /* a perf counter's value: a number, as stap */
		e->type = T_LONG;
		return 0;
	}
	bool arrow = e->members && strstr(e->members, "->");

	if (!e->str[0] || e->addr || e->str[0] == '@' || arrow || (e->str[1] != '$' && strchr(n, '$'))) {
		/* parsed as stap parses them; what they name is in DWARF */
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression: %s needs DWARF debuginfo, "
				     "and marktap's probes have only their markers' arguments",
				     e->addr ? "'&'" : e->str[0] == '@' ? e->str : arrow ? "'->'" :
				     "pretty-printing ($x$)");
		return -1;
	}
	if (!marker || sc->func) {
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression");
		return -1;
	}
	if (e->args.n) {
		if (report)
			tr_sem_error(e->tok, "marker argument may not be used as array");
		return -1;
	}
	if (!strcmp(n, "name") || !strcmp(n, "format") || !strcmp(n, "$parms") || !strcmp(n, "$vars") ||
	    !strcmp(n, "$name") || !strcmp(n, "$provider")) {
		e->target_arg = !strcmp(n, "name") || !strcmp(n, "$name") ? -1 :
				!strcmp(n, "format") ? -2 : !strcmp(n, "$provider") ? -4 : -3;
		e->type = T_STRING;
		return 0;
	}
	if (!strncmp(n, "arg", 3) && n[3] >= '0' && n[3] <= '9') {
		char *end;
		long k = strtol(n + 3, &end, 10);
		if (!*end) {
			if (k < 1 || k > (long)r->fields.n) {
				if (report)
					tr_sem_error(e->tok, "invalid marker argument number");
				return -1;
			}
			e->target_arg = (int)k;
			e->type = (enum tr_type)(intptr_t)r->field_types.items[k - 1];
			return 0;
		}
	}
	for (unsigned i = 0; i < r->fields.n; i++)
		if (!strcmp(r->fields.items[i], n)) {
			e->target_arg = (int)i + 1;
			e->type = (enum tr_type)(intptr_t)r->field_types.items[i];
			return 0;
		}
	if (report)
		tr_sem_error(e->tok, "invalid target symbol for marker, $argN, $name, $format or $$parms expected");
	return -1;
}

/* A store to $name: a procfs read probe's $value, and in guru mode a
 * function probe's variables. */
static void target_store(struct scope *sc, struct tr_expr *t)
{
	const struct tr_resolved *r = sc->rp;

	if (r && r->kind == P_PROCFS && !sc->func && !strcmp(t->str, "$value")) {
		if (r->procfs_write)
			tr_sem_error(t->tok, "procfs $value variable is read-only in a procfs write probe");
		return;
	}
	if (r && r->dw_func) {   /* a DWARF variable: written in guru mode only, as stap */
		if (!sc->s->guru)
			tr_sem_error(t->tok, "write to target variable not permitted; need stap -g");
		else if (r->dw && !sc->func)
			t->store = tr_dw_store(r->dw, r->dw_return, t);
		if (t->type == T_UNKNOWN)   /* not read: a number, as the store takes */
			t->type = T_LONG;
		return;
	}
	tr_sem_error(t->tok, "write to marker parameter not permitted");
}

static void bind_vec(struct scope *sc, struct tr_vec *v)
{
	for (unsigned i = 0; i < v->n; i++)
		if (v->items[i])
			bind_expr(sc, v->items[i]);
}

static void bind_array_base(struct scope *sc, struct tr_expr *base, int arity)
{
	if (base->kind == E_SYM)
		base->sym = lookup(sc, base->str, base->tok, arity);
	else
		bind_expr(sc, base);
}

static void bind_expr(struct scope *sc, struct tr_expr *e)
{
	if (tr_is_chain(e)) { /* left to right, with a loop down the chain */
		struct tr_vec spine = {0};
		tr_chain(e, false, &spine);
		bind_expr(sc, ((struct tr_expr *)spine.items[0])->a);
		for (unsigned i = 0; i < spine.n; i++)
			bind_expr(sc, ((struct tr_expr *)spine.items[i])->b);
		free(spine.items);
		return;
	}
	switch (e->kind) {
	case E_NUM:
	case E_STR:
		return;
	case E_SYM:
		e->sym = lookup(sc, e->str, e->tok, 0);
		if (e->sym)
			e->sym->read = true;
		return;
	case E_TARGET:
		target_lookup(sc, e, true);
		bind_vec(sc, &e->args);
		if (e->a) /* @cast(p, ...), @kderef(4, p) */
			bind_expr(sc, e->a);
		if (e->b)
			bind_expr(sc, e->b);
		return;
	case E_DEFINED: {
		int ok = 1;
		if (e->a->kind == E_TARGET)
			ok = target_lookup(sc, e->a, false) == 0;
		e->kind = E_NUM;
		e->num = ok;
		e->a = NULL;
		return;
	}
	case E_INDEX:
		bind_vec(sc, &e->args);
		if (e->a->kind != E_SYM && e->a->kind != E_HIST) {
			/* f()[2], (a[1])[2]: stap reads them and rejects them here */
			bind_expr(sc, e->a);
			tr_sem_error(e->tok, "unknown type in dereference");
			return;
		}
		if (e->a->kind == E_SYM) {
			bind_array_base(sc, e->a, (int)e->args.n);
			e->sym = e->a->sym;
			if (e->sym)
				e->sym->read = true;
		} else {
			bind_expr(sc, e->a);
		}
		return;
	case E_IN:
		bind_vec(sc, &e->args);
		bind_array_base(sc, e->a, (int)e->args.n);
		e->sym = e->a->sym;
		if (e->sym)
			e->sym->read = true;
		return;
	case E_ASSIGN: {
		/* A plain store is no read: stap prints globals only written at the end. */
		bool store = !strcmp(e->op, "=") || !strcmp(e->op, "<<<");
		struct tr_sym *y = NULL;
		bind_expr(sc, e->b);
		if (e->a->kind == E_SYM) {
			y = e->a->sym = lookup(sc, e->a->str, e->a->tok, 0);
		} else if (e->a->kind == E_INDEX && e->a->a->kind == E_SYM) {
			bind_vec(sc, &e->a->args);
			bind_array_base(sc, e->a->a, (int)e->a->args.n);
			y = e->a->sym = e->a->a->sym;
		} else if (!strcmp(e->op, "=") && e->a->kind == E_TARGET && sc->rp && sc->rp->dw && !sc->func) {
			/* a plain $x = v reads $x only to see the new value
			 * later; what a pointer leads to is not read first */
			if (!e->a->members && !e->a->args.n)
				target_lookup(sc, e->a, false);
		} else {
			bind_expr(sc, e->a);
		}
		if (y) {
			y->written = true;
			if (!store)
				y->read = true;
		}
		if (e->a->kind == E_INDEX)
			check_iterating(sc, y, e->a->tok);
		if (e->a->kind == E_TARGET)
			target_store(sc, e->a);
		return;
	}
	case E_TERN:
		if (e->a->kind == E_DEFINED) {
			/* @defined(x) ? x : y: as in stap, the side not taken is
			 * not resolved (@choose_defined) */
			bind_expr(sc, e->a);
			*e = *(e->a->num ? e->b : e->c);
			bind_expr(sc, e);
			return;
		}
		bind_expr(sc, e->a);
		bind_expr(sc, e->b);
		bind_expr(sc, e->c);
		return;
	case E_CALL: {
		bool exists = false;
		if (sc->rp && sc->rp->kfunc && !sc->func && tr_btf_register_call(sc->rp, e))
			return;   /* int_arg(1), returnval() of a kernel function: its fields */
		bind_vec(sc, &e->args);
		e->func = find_func(sc->s, e->op, e->args.n, sc->file, &exists);
		if (!e->func) {
			if (exists)
				tr_sem_error(e->tok, "arity mismatch found (function '%s' takes %s args)", e->op,
					     func_arities(sc->s, e->op, sc->file));
			else
				tr_sem_error(e->tok, "unresolved function %s%s", e->op,
					     similar_funcs(sc->s, e->op, sc->file));
			return;
		}
		use_func(sc->s, e->func);
		return;
	}
	default:
		if (e->a)
			bind_expr(sc, e->a);
		if (e->b)
			bind_expr(sc, e->b);
		if (e->c)
			bind_expr(sc, e->c);
		bind_vec(sc, &e->args);
		if ((e->kind == E_PRE || e->kind == E_POST) && e->a->kind == E_TARGET)
			target_store(sc, e->a);
		if ((e->kind == E_PRE || e->kind == E_POST) && e->a->sym) {
			e->a->sym->written = true;
			if (e->a->kind == E_INDEX)
				check_iterating(sc, e->a->sym, e->a->tok);
		}
		return;
	}
}

/* A variable the statement assigns (a foreach's keys, a catch's
 * message): bound, and no never-assigned warning for it. */
static void bind_written(struct scope *sc, struct tr_expr *e)
{
	bind_expr(sc, e);
	if (e->kind == E_SYM && e->sym)
		e->sym->written = true;
}

static void bind_stmt(struct scope *sc, struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			bind_stmt(sc, st->list.items[i]);
		return;
	case S_EXPR:
		if (note_unavailable(sc, st))
			return;
		bind_expr(sc, st->e);
		return;
	case S_FOREACH:
		if (st->base->kind == E_SYM) {
			struct tr_sym *y = lookup(sc, st->base->str, st->base->tok, (int)st->keys.n);
			st->base->sym = y;
			if (y) /* iterating reads: stap prints no such global at the end */
				y->read = true;
		} else {
			/* a slice a[*, 2]: the keys give the arity first, as in stap */
			if (st->base->kind == E_INDEX)
				lookup(sc, st->base->a->str, st->base->a->tok, (int)st->keys.n);
			bind_expr(sc, st->base);
		}
		/* the loop assigns its keys and value */
		for (unsigned i = 0; i < st->keys.n; i++)
			bind_written(sc, st->keys.items[i]);
		if (st->value)
			bind_written(sc, st->value);
		if (st->limit)
			bind_expr(sc, st->limit);
		tr_vec_push(&sc->iterating, st->base->sym);
		bind_stmt(sc, st->body);
		sc->iterating.n--;
		return;
	case S_DELETE:
		if (st->e->kind == E_SYM) {
			struct tr_sym *y = lookup(sc, st->e->str, st->e->tok, -1);
			st->e->sym = y;
			/* a local only deleted is no store stap's optimizer
			 * drops: its type stays unresolved (see tr_elab_bind) */
			if (y && y->kind != SYM_LOCAL)
				y->written = true;
		} else {
			bind_expr(sc, st->e);
		}
		check_iterating(sc, st->e->sym, st->e->tok);
		return;
	case S_TRY:
		bind_stmt(sc, st->body);
		if (st->catch_var)   /* assigned the error's message */
			bind_written(sc, st->catch_var);
		bind_stmt(sc, st->els);
		return;
	case S_EMBED:
		return;
	case S_IF:
		bind_expr(sc, st->e);
		if (st->e->kind == E_NUM && st->e->tok && !strcmp(st->e->tok->text, "@defined")) {
			/* if (@defined(x)): only the branch taken is resolved */
			if (st->e->num)
				st->els = NULL;
			else
				st->body = NULL;
		}
		bind_stmt(sc, st->body);
		bind_stmt(sc, st->els);
		return;
	default:
		if (st->e)
			bind_expr(sc, st->e);
		if (st->e2)
			bind_expr(sc, st->e2);
		if (st->e3)
			bind_expr(sc, st->e3);
		bind_stmt(sc, st->body);
		bind_stmt(sc, st->els);
		return;
	}
}

/* ---- types ----------------------------------------------------------------- */

struct infer {
	bool changed;
	bool final;                    /* last round: report what is still wrong */
	struct tr_func *func;
	/* where each type slot got its type: stap names that place */
	struct tr_vec typed_slots, typed_at;
};

static void mismatch(struct infer *in, const struct tr_token *tok, enum tr_type want, enum tr_type got)
{
	if (in->final)
		tr_sem_error(tok, "type mismatch: expected %s but found %s", tr_type_name(want),
			     tr_type_name(got));
}

/* A variable (its type slot) used as another type, as stap says it:
 * where, and where its type was first inferred. */
static void slot_mismatch(struct infer *in, const enum tr_type *slot, enum tr_type got,
			  const struct tr_token *tok)
{
	if (!in->final)
		return;
	tr_sem_error(tok, "type mismatch (%s)", tr_type_name(got));
	for (unsigned i = 0; i < in->typed_slots.n; i++)
		if (in->typed_slots.items[i] == slot) {
			tr_sem_error(in->typed_at.items[i], "type was first inferred here (%s)",
				     tr_type_name(*slot));
			return;
		}
}

/* Unify a slot (symbol type, index type, return type) with a type. */
static void unify(struct infer *in, enum tr_type *slot, enum tr_type t, const struct tr_token *tok)
{
	if (t == T_UNKNOWN)
		return;
	if (*slot == T_UNKNOWN) {
		*slot = t;
		in->changed = true;
		tr_vec_push(&in->typed_slots, slot);
		tr_vec_push(&in->typed_at, (void *)tok);
	} else if (*slot != t) {
		slot_mismatch(in, slot, t, tok);
	}
}

static enum tr_type infer_expr(struct infer *in, struct tr_expr *e, enum tr_type want);

static void expect_type(struct infer *in, struct tr_expr *e, enum tr_type want)
{
	enum tr_type got = infer_expr(in, e, want);

	if (got != T_UNKNOWN && want != T_UNKNOWN && got != want)
		mismatch(in, e->tok, want, got);
}

static void infer_indexes(struct infer *in, struct tr_sym *y, struct tr_vec *args)
{
	for (unsigned i = 0; i < args->n; i++) {
		if (!args->items[i])
			continue;
		enum tr_type t = infer_expr(in, args->items[i], y && y->index_types ? y->index_types[i] : T_UNKNOWN);
		if (y && y->index_types && (int)i < y->arity) {
			if (t == T_STATS)
				mismatch(in, ((struct tr_expr *)args->items[i])->tok, T_LONG, T_STATS);
			else
				unify(in, &y->index_types[i], t, ((struct tr_expr *)args->items[i])->tok);
		}
	}
}

static enum tr_type stats_operand(struct infer *in, struct tr_expr *op)
{
	if (op->kind == E_SYM && op->sym) {
		unify(in, &op->sym->type, T_STATS, op->tok);
		op->type = T_STATS;
	} else if (op->kind == E_INDEX && op->sym) {
		infer_indexes(in, op->sym, &op->args);
		unify(in, &op->sym->type, T_STATS, op->tok);
		op->type = T_STATS;
	} else {
		if (in->final)
			tr_sem_error(op->tok, "expected aggregate (a global variable or array element of statistics)");
	}
	return T_STATS;
}

/* One operator of a chain, its left operand's type l already known. */
static enum tr_type infer_op(struct infer *in, struct tr_expr *e, enum tr_type l)
{
	enum tr_type r, want = e->kind == E_CAT ? T_STRING : T_LONG;

	if (e->kind == E_CMP) {
		r = infer_expr(in, e->b, l);
		if (l == T_UNKNOWN && r != T_UNKNOWN) /* never a chain: those have types */
			l = infer_expr(in, e->a, r);
		if (l != T_UNKNOWN && r != T_UNKNOWN && l != r)
			mismatch(in, e->b->tok, l, r);
		if (l == T_STATS || r == T_STATS)
			mismatch(in, e->tok, T_LONG, T_STATS);
	} else {
		if (l != T_UNKNOWN && l != want)
			mismatch(in, e->a->tok, want, l);
		expect_type(in, e->b, want);
	}
	e->type = want;
	return want;
}

/* A chain of binary operators, deepest first, with a loop. */
static enum tr_type infer_chain(struct infer *in, struct tr_expr *e)
{
	struct tr_vec spine = {0};
	struct tr_expr *low;
	enum tr_type l;

	tr_chain(e, false, &spine);
	low = spine.items[0];
	l = infer_expr(in, low->a, low->kind == E_CMP ? T_UNKNOWN : low->kind == E_CAT ? T_STRING : T_LONG);
	for (unsigned i = 0; i < spine.n; i++)
		l = infer_op(in, spine.items[i], l);
	free(spine.items);
	return l;
}

static enum tr_type infer_expr(struct infer *in, struct tr_expr *e, enum tr_type want)
{
	enum tr_type t = T_UNKNOWN, l, r;

	switch (e->kind) {
	case E_NUM:
		t = T_LONG;
		break;
	case E_STR:
		t = T_STRING;
		break;
	case E_TARGET:
		t = e->type;
		break;
	case E_DEFINED:
		t = T_LONG;
		break;
	case E_EMBED: /* a long unless it says otherwise, as in stap */
		t = strstr(e->str, "/* string */") ? T_STRING : T_LONG;
		break;
	case E_SYM:
		if (!e->sym)
			break;
		if (e->sym->arity > 0 || e->sym->arity == -2) {
			break;
		}
		if (e->sym->type == T_UNKNOWN && want != T_UNKNOWN)
			unify(in, &e->sym->type, want, e->tok);
		t = e->sym->type;
		break;
	case E_INDEX:
		if (e->a->kind == E_HIST) {
			infer_expr(in, e->a, T_UNKNOWN);
			expect_type(in, e->args.items[0], T_LONG);
			t = T_LONG;
			break;
		}
		if (!e->sym)
			break;
		infer_indexes(in, e->sym, &e->args);
		if (e->sym->type == T_UNKNOWN && want != T_UNKNOWN && want != T_STATS)
			unify(in, &e->sym->type, want, e->tok);
		t = e->sym->type;
		break;
	case E_IN:
		infer_indexes(in, e->sym, &e->args);
		t = T_LONG;
		break;
	case E_CALL:
		if (!e->func)
			break;
		for (unsigned i = 0; i < e->args.n && i < e->func->params.n; i++) {
			struct tr_sym *p = e->func->params.items[i];
			struct tr_expr *a = e->args.items[i];
			enum tr_type at = infer_expr(in, a, p->type);
			if (at == T_STATS)
				mismatch(in, a->tok, T_LONG, T_STATS);
			else
				unify(in, &p->type, at, a->tok);
		}
		if (e->func->type == T_UNKNOWN && want != T_UNKNOWN && !e->func->code && want != T_STATS)
			unify(in, &e->func->type, want, e->tok);
		t = e->func->type;
		break;
	case E_PRINT: {
		/* one type per conversion, however many: at most one per '%' */
		int max = 1;
		for (const char *q = e->fmt; q && *q; q++)
			max += *q == '%';
		enum tr_type *types = tr_alloc(sizeof(*types) * (size_t)max);
		int n = 0;
		const char *err = NULL;
		if (e->print_fmt) {
			n = tr_format_types(e->fmt, types, max, &err);
			if (n < 0) {
				if (in->final)
					tr_sem_error(e->fmt_tok, "%s", err);
				n = 0;
			} else if ((unsigned)n != e->args.n && in->final) {
				tr_sem_error(e->tok, n > (int)e->args.n ? "not enough arguments to format string" :
					     "too many arguments to format string");
			}
		}
		for (unsigned i = 0; i < e->args.n; i++) {
			struct tr_expr *a = e->args.items[i];
			enum tr_type w = e->print_fmt && (int)i < n ? types[i] : T_UNKNOWN;
			enum tr_type at = infer_expr(in, a, w);
			if (a->kind == E_HIST)
				continue;
			if (at == T_STATS && in->final)
				tr_sem_error(a->tok, "cannot print a statistics value; use @count, @sum, @hist_log...");
			else if (w != T_UNKNOWN && at != T_UNKNOWN && at != w)
				mismatch(in, a->tok, w, at);
		}
		t = e->print_str ? T_STRING : T_LONG;
		break;
	}
	case E_STAT:
		stats_operand(in, e->a);
		t = T_LONG;
		break;
	case E_HIST:
		stats_operand(in, e->a);
		t = T_STRING;
		break;
	case E_BIN:
	case E_LOGIC:
	case E_CAT:
	case E_CMP:
		t = infer_chain(in, e);
		break;
	case E_REGEX:
		expect_type(in, e->a, T_STRING);
		if (in->final) { /* as stap, a bad pattern is a pass 2 error (the runtime's regcomp) */
			regex_t re;
			int rc = regcomp(&re, tr_unescape(e->b->str, NULL), REG_EXTENDED | REG_NOSUB);
			if (rc) {
				char why[128];
				regerror(rc, &re, why, sizeof(why));
				tr_sem_error(e->b->tok, "regex compilation error: %s", why);
			} else {
				regfree(&re);
			}
		}
		t = T_LONG;
		break;
	case E_UNARY:
	case E_PRE:
	case E_POST:
		expect_type(in, e->a, T_LONG);
		t = T_LONG;
		break;
	case E_TERN:
		expect_type(in, e->a, T_LONG);
		l = infer_expr(in, e->b, want);
		r = infer_expr(in, e->c, l != T_UNKNOWN ? l : want);
		if (l == T_UNKNOWN && r != T_UNKNOWN)
			l = infer_expr(in, e->b, r);
		if (l != T_UNKNOWN && r != T_UNKNOWN && l != r)
			mismatch(in, e->c->tok, l, r);
		t = l != T_UNKNOWN ? l : r;
		break;
	case E_ASSIGN:
		if (!strcmp(e->op, "<<<")) {
			stats_operand(in, e->a);
			expect_type(in, e->b, T_LONG);
			t = T_LONG;
			break;
		}
		if (!strcmp(e->op, ".=")) {
			expect_type(in, e->a, T_STRING);
			expect_type(in, e->b, T_STRING);
			t = T_STRING;
			break;
		}
		if (strcmp(e->op, "=")) {
			expect_type(in, e->a, T_LONG);
			expect_type(in, e->b, T_LONG);
			t = T_LONG;
			break;
		}
		r = infer_expr(in, e->b, T_UNKNOWN);
		l = infer_expr(in, e->a, r);
		if (r == T_UNKNOWN && l != T_UNKNOWN)
			r = infer_expr(in, e->b, l);
		if (r == T_STATS || l == T_STATS) {
			if (in->final)
				tr_sem_error(e->tok, "cannot assign to or from statistics; use <<<");
		} else if (l != T_UNKNOWN && r != T_UNKNOWN && l != r) {
			if (e->a->sym && e->a->kind == E_SYM) /* x = "s" for a long x */
				slot_mismatch(in, &e->a->sym->type, r, e->a->tok);
			else
				mismatch(in, e->tok, l, r);
		}
		t = l != T_UNKNOWN ? l : r;
		break;
	}
	e->type = t;
	return t;
}

static void infer_stmt(struct infer *in, struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			infer_stmt(in, st->list.items[i]);
		break;
	case S_EXPR:
		infer_expr(in, st->e, T_UNKNOWN);
		break;
	case S_IF:
		expect_type(in, st->e, T_LONG);
		infer_stmt(in, st->body);
		infer_stmt(in, st->els);
		break;
	case S_FOR:
		if (st->e)
			infer_expr(in, st->e, T_UNKNOWN);
		if (st->e2)
			expect_type(in, st->e2, T_LONG);
		if (st->e3)
			infer_expr(in, st->e3, T_UNKNOWN);
		infer_stmt(in, st->body);
		break;
	case S_FOREACH:
		if (st->base->kind == E_HIST) {
			infer_expr(in, st->base, T_UNKNOWN);
			if (st->keys.n != 1 && in->final)
				tr_sem_error(st->tok, "a histogram has one index");
			for (unsigned i = 0; i < st->keys.n; i++) {
				struct tr_expr *k = st->keys.items[i];
				if (k->sym)
					unify(in, &k->sym->type, T_LONG, k->tok);
				k->type = T_LONG;
			}
			if (st->value && st->value->sym)
				unify(in, &st->value->sym->type, T_LONG, st->value->tok);
		} else if (st->base->sym) {
			struct tr_sym *a = st->base->sym;
			if (st->base->kind == E_INDEX)
				infer_indexes(in, a, &st->base->args);
			for (unsigned i = 0; i < st->keys.n && a->index_types && (int)i < a->arity; i++) {
				struct tr_expr *k = st->keys.items[i];
				if (!k->sym)
					continue;
				unify(in, &k->sym->type, a->index_types[i], k->tok);
				unify(in, &a->index_types[i], k->sym->type, k->tok);
				k->type = k->sym->type;
			}
			if (st->value && st->value->sym) {
				enum tr_type vt = a->type == T_STATS ? T_LONG : a->type;
				if (a->type == T_STATS && in->final)
					tr_sem_error(st->value->tok, "cannot take the value of a statistics array in foreach");
				unify(in, &st->value->sym->type, vt, st->value->tok);
				unify(in, &a->type, st->value->sym->type == T_LONG && a->type == T_STATS ? T_STATS :
				      st->value->sym->type, st->value->tok);
			}
		}
		if (st->limit)
			expect_type(in, st->limit, T_LONG);
		infer_stmt(in, st->body);
		break;
	case S_RETURN:
		if (!in->func)
			break;
		if (st->e) {
			enum tr_type t = infer_expr(in, st->e, in->func->type);
			unify(in, &in->func->type, t, st->e->tok);
		}
		break;
	case S_DELETE:
		if (st->e->kind == E_INDEX && st->e->sym)
			infer_indexes(in, st->e->sym, &st->e->args);
		else if (st->e->kind != E_SYM)
			infer_expr(in, st->e, T_UNKNOWN);
		break;
	case S_TRY:
		infer_stmt(in, st->body);
		if (st->catch_var && st->catch_var->sym) {
			unify(in, &st->catch_var->sym->type, T_STRING, st->catch_var->tok);
			st->catch_var->type = T_STRING;
		}
		infer_stmt(in, st->els);
		break;
	default:
		break;
	}
}

static void infer_all(struct tr_session *s, struct infer *in)
{
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		in->func = NULL;
		if (r->cond)
			expect_type(in, r->cond, T_LONG);
		infer_stmt(in, p->body);
	}
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		in->func = f;
		infer_stmt(in, f->body);
	}
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *g = s->globals.items[i];
		if (g->init)
			unify(in, &g->type, g->init->type = g->init->kind == E_NUM ? T_LONG : T_STRING,
			      g->init->tok);
	}
}

static void check_resolved(struct tr_sym *y, const char *what)
{
	if (y->type == T_UNKNOWN && y->used)
		tr_sem_error(y->tok, "unresolved type for %s", what);
	for (int i = 0; i < y->arity && y->index_types; i++)
		if (y->index_types[i] == T_UNKNOWN)
			tr_sem_error(y->tok, "unresolved type for %s index %d", what, i + 1);
}

/* ---- -G var=val ----------------------------------------------------------- */

static void apply_global_settings(struct tr_session *s)
{
	for (unsigned i = 0; i < s->globals_set.n; i++) {
		const char *set = s->globals_set.items[i];
		const char *eq = strchr(set, '=');
		char *name = tr_strndup(set, (size_t)(eq - set));
		struct tr_sym *g = NULL;
		for (unsigned k = 0; k < s->all_globals.n; k++) {
			struct tr_sym *c = s->all_globals.items[k];
			/* a script's own first; a tapset's too (-G argv_1=x) */
			if (!strcmp(c->name, name) && (!g || g->file->tapset))
				g = c;
		}
		if (!g) {
			tr_sem_error(NULL, "unknown global variable '%s' in -G", name);
			continue;
		}
		struct tr_expr *v = tr_alloc(sizeof(*v));
		char *end;
		long long n = strtoll(eq + 1, &end, 0);
		v->tok = g->tok;
		if ((*end || !eq[1]) && g->init && g->init->kind == E_NUM) {
			/* a long global (its initializer says so) takes a number */
			tr_sem_error(NULL, "-G %s: '%s' is not a number, and global '%s' is a long",
				     set, eq + 1, name);
			continue;
		}
		if (*end || !eq[1] || g->type == T_STRING) {
			struct tr_buf b = {0};
			for (const char *q = eq + 1; *q; q++) {
				if (*q == '"' || *q == '\\')
					tr_buf_putc(&b, '\\');
				tr_buf_putc(&b, *q);
			}
			v->kind = E_STR;
			v->str = tr_buf_str(&b);
		} else {
			v->kind = E_NUM;
			v->num = n;
		}
		g->init = v;
	}
}

/* ---- the pass --------------------------------------------------------------- */

static void collect(struct tr_session *s, struct tr_vec *scripts)
{
	for (unsigned i = 0; i < scripts->n; i++) {
		struct tr_script *sc = scripts->items[i];
		for (unsigned k = 0; k < sc->globals.n; k++)
			tr_vec_push(&s->all_globals, sc->globals.items[k]);
		for (unsigned k = 0; k < sc->funcs.n; k++)
			tr_vec_push(&s->all_funcs, sc->funcs.items[k]);
		for (unsigned k = 0; k < sc->aliases.n; k++)
			tr_vec_push(&s->all_aliases, sc->aliases.items[k]);
	}
}

int tr_elab_resolve(struct tr_session *s)
{
	unsigned errors = tr_diag.errors;

	load_tapsets(s);
	if (tr_diag.errors > errors)
		return -1;
	collect(s, &s->user);
	collect(s, &s->tapsets);
	return 0;
}

/* Resolve one probe point given as text: for -l / -L. */
int tr_elab_points(struct tr_session *s, struct tr_probe *pr)
{
	resolve_probe(s, pr);
	return tr_diag.errors ? -1 : 0;
}

/*
 * One handler for many aliases on one marker.  The generated syscall.NAME
 * aliases all probe kernel_arch_syscall_entry, each opening with
 *	if ($syscall_id != NR) next
 * so "probe syscall.*" would run some 360 handlers at every system call.
 * The concrete probes of one user probe point that share a marker and
 * open with such a tapset selector on the same field become one probe
 * whose body picks the branch with a binary search on the field.
 */
static const struct tr_expr *selector_of(const struct tr_probe *d)
{
	const struct tr_stmt *b = d->body, *pro, *st, *next;
	const struct tr_expr *e;

	if (b->kind != S_BLOCK || b->list.n < 2 || ((struct tr_resolved *)d->resolved.items[0])->cond)
		return NULL;
	pro = b->list.items[0];
	if (pro->kind != S_BLOCK || !pro->list.n)
		return NULL;
	st = pro->list.items[0];
	if (st->kind != S_IF || st->els || !st->tok->file->tapset)
		return NULL;
	next = st->body->kind == S_BLOCK && st->body->list.n == 1 ? st->body->list.items[0] : st->body;
	e = st->e;
	if (next->kind != S_NEXT || e->kind != E_CMP || strcmp(e->op, "!=") ||
	    e->a->kind != E_TARGET || e->a->args.n || e->b->kind != E_NUM)
		return NULL;
	return e;
}

static int cmp_selector(const void *x, const void *y)
{
	int64_t a = selector_of(*(struct tr_probe *const *)x)->b->num;
	int64_t b = selector_of(*(struct tr_probe *const *)y)->b->num;
	return a < b ? -1 : a > b;
}

static struct tr_expr *mk_expr(enum tr_ekind kind, const struct tr_token *tok)
{
	struct tr_expr *e = tr_alloc(sizeof(*e));
	e->kind = kind;
	e->tok = tok;
	return e;
}

/* if ($f == K) branch, or if ($f < K_mid) lower half else upper half */
static struct tr_stmt *select_tree(struct tr_probe **v, unsigned n)
{
	const struct tr_expr *sel = selector_of(v[n / 2]);
	struct tr_stmt *st = tr_alloc(sizeof(*st));
	struct tr_expr *c = mk_expr(E_CMP, sel->tok), *k = mk_expr(E_NUM, sel->tok);

	st->kind = S_IF;
	st->tok = sel->tok;
	st->e = c;
	c->a = clone_expr(sel->a);
	c->b = k;
	k->num = sel->b->num;
	if (n == 1) {
		struct tr_stmt *body = v[0]->body, *pro = body->list.items[0];
		((struct tr_stmt *)pro->list.items[0])->kind = S_NULL;   /* the selector */
		c->op = "==";
		st->body = body;
		return st;
	}
	c->op = "<";
	st->body = select_tree(v, n / 2);
	st->els = select_tree(v + n / 2, n - n / 2);
	return st;
}

static void merge_selected(struct tr_session *s)
{
	struct tr_vec out = {0};
	unsigned i = 0;

	while (i < s->probes.n) {
		struct tr_probe *d = s->probes.items[i];
		const struct tr_resolved *r = d->resolved.items[0];
		const struct tr_expr *sel = selector_of(d);
		unsigned j = i + 1;
		while (sel && j < s->probes.n) {
			struct tr_probe *e = s->probes.items[j];
			const struct tr_expr *esel = selector_of(e);
			if (!esel || strcmp(esel->a->str, sel->a->str) || strcmp(e->orig_pp, d->orig_pp) ||
			    strcmp(((struct tr_resolved *)e->resolved.items[0])->pp, r->pp))
				break;
			j++;
		}
		if (j - i < 2) {
			tr_vec_push(&out, d);
			i++;
			continue;
		}
		struct tr_probe **v = (struct tr_probe **)&s->probes.items[i];
		qsort(v, j - i, sizeof(*v), cmp_selector);
		struct tr_stmt *body = select_tree(v, j - i);
		d->body = tr_alloc(sizeof(*d->body));
		d->body->kind = S_BLOCK;
		d->body->tok = body->tok;
		tr_vec_push(&d->body->list, body);
		tr_vec_push(&out, d);
		i = j;
	}
	for (i = 0; i < out.n; i++)
		((struct tr_probe *)out.items[i])->id = i;
	free(s->probes.items);
	s->probes = out;
}

/*
 * Alias variables that nothing reads are not computed, as stap elides
 * them: scheduler.ctxswitch's next_task_name reads /proc, and a script
 * that only counts switches must not pay for it.  A tapset statement
 * "local = expr" (tapset alias expressions have no side effects, see
 * doc/tapsets.md) whose local nothing else in the probe reads is dropped,
 * to a fixed point (lseek's argstr reads fildes), and the locals left
 * without any use leave the probe.
 */
struct sym_uses {
	const struct tr_sym *y;
	int n;
};

static void count_use(const struct tr_expr *e, void *arg)
{
	struct sym_uses *u = arg;

	if (e->kind == E_SYM && e->sym == u->y)
		u->n++;
	/* the target of a plain store is no read */
	if (e->kind == E_ASSIGN && !strcmp(e->op, "=") && e->a->kind == E_SYM && e->a->sym == u->y)
		u->n--;
}

static void count_occurrence(const struct tr_expr *e, void *arg)
{
	struct sym_uses *u = arg;

	if (e->kind == E_SYM && e->sym == u->y)
		u->n++;
}

static int sym_reads(const struct tr_stmt *body, const struct tr_sym *y)
{
	struct sym_uses u = { y, 0 };
	struct tr_walker w = { .expr = count_use, .arg = &u };

	tr_walk_stmt(&w, body);
	return u.n;
}

static bool elide_dead(struct tr_stmt *body, struct tr_stmt *st)
{
	bool dropped = false;

	if (st->kind == S_BLOCK) {
		for (unsigned i = 0; i < st->list.n; i++)
			dropped |= elide_dead(body, st->list.items[i]);
		return dropped;
	}
	if (st->kind != S_EXPR || !st->tok->file->tapset || st->e->kind != E_ASSIGN ||
	    strcmp(st->e->op, "=") || st->e->a->kind != E_SYM || !st->e->a->sym ||
	    st->e->a->sym->kind != SYM_LOCAL || sym_reads(body, st->e->a->sym) > 0)
		return false;
	st->kind = S_NULL;
	st->e = NULL;
	return true;
}

static void elide_alias_locals(struct tr_probe *p)
{
	unsigned k = 0;

	while (elide_dead(p->body, p->body))
		;
	for (unsigned i = 0; i < p->locals.n; i++) {
		struct tr_sym *y = p->locals.items[i];
		struct sym_uses u = { y, 0 };
		struct tr_walker w = { .expr = count_occurrence, .arg = &u };
		tr_walk_stmt(&w, p->body);
		if (u.n > 0)
			p->locals.items[k++] = y;
	}
	p->locals.n = k;
}

/*
 * A tapset function that only elided alias statements called (next_pid's
 * __marktap_task_tgid when the script reads prev_tid alone) leaves the
 * session with them: marktap.ko would see its Lua and refuse a chunk that
 * never calls it.  The functions kept are the user's and those a probe
 * still calls, directly or through others.
 */
struct reach {
	struct tr_vec work;
};

static void reach_call(const struct tr_expr *e, void *arg)
{
	struct reach *rc = arg;

	if (e->kind == E_CALL && e->func && !e->func->visited) {
		e->func->visited = true;
		tr_vec_push(&rc->work, e->func);
	}
}

static void prune_functions(struct tr_session *s)
{
	struct reach rc = {0};
	struct tr_walker w = { .expr = reach_call, .arg = &rc };
	unsigned i, k = 0;

	for (i = 0; i < s->funcs.n; i++)
		((struct tr_func *)s->funcs.items[i])->visited = false;
	for (i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		tr_walk_stmt(&w, p->body);
		for (unsigned r = 0; r < p->resolved.n; r++)
			if (((struct tr_resolved *)p->resolved.items[r])->cond)
				tr_walk_expr(&w, ((struct tr_resolved *)p->resolved.items[r])->cond);
	}
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (!f->file->tapset && !f->visited) {
			f->visited = true;
			tr_vec_push(&rc.work, f);
		}
	}
	while (rc.work.n) {
		struct tr_func *f = rc.work.items[--rc.work.n];
		if (f->body)
			tr_walk_stmt(&w, f->body);
	}
	free(rc.work.items);
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (f->visited)
			s->funcs.items[k++] = f;
		else
			f->used = false;
	}
	s->funcs.n = k;
}

/* A body that does nothing: empty blocks, ';' and a bare literal (after
 * the alias statements nothing reads are gone). */
static bool empty_body(const struct tr_stmt *st)
{
	if (st->kind == S_NULL || (st->kind == S_EXPR && (st->e->kind == E_NUM || st->e->kind == E_STR)))
		return true;
	if (st->kind != S_BLOCK)
		return false;
	for (unsigned i = 0; i < st->list.n; i++)
		if (!empty_body(st->list.items[i]))
			return false;
	return true;
}

/*
 * As stap's optimizer: a probe whose handler does nothing is not
 * attached at all (a warning names it), unless -u.  An empty handler
 * has no effect a script could see, and attaching it would only cost
 * the probed program.
 */
static void elide_empty_probes(struct tr_session *s)
{
	unsigned k = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		/* a perf counter is kept: @perf("C") reads it (as stap) */
		if (!empty_body(p->body) || r->perf_counter) {
			p->id = k;      /* handlers are named by their place */
			s->probes.items[k++] = p;
			continue;
		}
		tr_warn(r->alias_pp && p->point_tok ? p->point_tok : p->tok, "Probe '%.*s' has been elided",
			(int)strcspn(r->pp, ".("), r->pp);
	}
	s->probes.n = k;
}

/*
 * As stap's optimizer: "if (c) {} else {}", both branches doing nothing,
 * is reduced to the expression statement "c" before types are inferred,
 * so a condition nothing else types stays untyped ("unresolved type" for
 * a local never assigned, as stap says for "if (x) ;").
 */
static void reduce_empty_ifs(struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			reduce_empty_ifs(st->list.items[i]);
		break;
	case S_IF:
		reduce_empty_ifs(st->body);
		reduce_empty_ifs(st->els);
		if (empty_body(st->body) && (!st->els || empty_body(st->els))) {
			st->kind = S_EXPR;
			st->body = st->els = NULL;
		}
		break;
	case S_FOR:
	case S_FOREACH:
	case S_TRY:
		reduce_empty_ifs(st->body);
		reduce_empty_ifs(st->els);
		break;
	default:
		break;
	}
}

int tr_elaborate(struct tr_session *s)
{
	unsigned i;

	if (tr_elab_resolve(s))
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
			resolve_probe(s, sc->probes.items[k]);
		if (s->unoptimized)
			for (unsigned k = 0; k < sc->funcs.n; k++)
				use_func(s, sc->funcs.items[k]);
	}
	if (tr_diag.errors)
		return -1;
	if (s->probes.n == 0) {
		tr_sem_error(NULL, "no probes found");
		return -1;
	}
	merge_selected(s);
	for (i = 0; i < s->probes.n && !s->unoptimized; i++)
		reduce_empty_ifs(((struct tr_probe *)s->probes.items[i])->body);
	if (tr_elab_bind(s))
		return -1;
	if (!s->unoptimized) {
		for (i = 0; i < s->probes.n; i++)
			elide_alias_locals(s->probes.items[i]);
		elide_empty_probes(s);
		prune_functions(s);
		if (s->probes.n == 0) {
			tr_sem_error(NULL, "no probes found");
			return -1;
		}
	}
	return 0;
}

static void check_hists(struct tr_session *s);

/* Whether a global or function of tapset script SC is in use. */
static bool script_used(const struct tr_script *sc)
{
	for (unsigned k = 0; k < sc->globals.n; k++)
		if (((struct tr_sym *)sc->globals.items[k])->used)
			return true;
	for (unsigned k = 0; k < sc->funcs.n; k++)
		if (((struct tr_func *)sc->funcs.items[k])->used)
			return true;
	return false;
}

/*
 * As stap: a tapset file whose globals or functions the session uses
 * joins with its probes too (argv.stp's init probe fills argv).  Their
 * probes are resolved once, when the probes bound so far are done; they
 * may pull in more files.  False when none joined.
 */
static bool pull_tapset_probes(struct tr_session *s)
{
	bool pulled = false;

	for (unsigned i = 0; i < s->tapsets.n; i++) {
		struct tr_script *sc = s->tapsets.items[i];
		if (sc->joined || !sc->probes.n || !script_used(sc))
			continue;
		sc->joined = true;
		for (unsigned k = 0; k < sc->probes.n; k++)
			resolve_probe(s, sc->probes.items[k]);
		pulled = true;
	}
	return pulled;
}

/*
 * As stap's optimizer, before types are checked: "a <<< v" into a local
 * nothing reads is dropped (v still evaluated, with a warning), so such a
 * local is no statistics local ("a = 1; a <<< 2" elaborates, a long).
 * Statements of the user's probes and functions; not with -u.
 */
static void elide_dead_stats(struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			elide_dead_stats(st->list.items[i]);
		return;
	case S_IF: case S_FOR: case S_FOREACH: case S_TRY:
		elide_dead_stats(st->body);
		elide_dead_stats(st->els);
		return;
	case S_EXPR: {
		struct tr_expr *e = st->e;
		if (e->kind != E_ASSIGN || strcmp(e->op, "<<<") || e->a->kind != E_SYM || !e->a->sym ||
		    e->a->sym->kind != SYM_LOCAL || e->a->sym->read)
			return;
		tr_warn(e->tok, "Eliding assignment to '%s'", e->a->sym->name);
		st->e = e->b;
		return;
	}
	default:
		return;
	}
}

/* Names and types of the resolved probes (also -L's alias variables). */
int tr_elab_bind(struct tr_session *s)
{
	unsigned i;

	for (i = 0; i < s->probes.n || (!tr_diag.errors && pull_tapset_probes(s)); i++) {
		if (i >= s->probes.n)  /* the tapset probes that joined had no match */
			break;
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		struct scope sc = { .s = s, .probe = p, .locals = &p->locals, .file = p->file, .rp = r };
		if (r->cond) {
			/* A condition reads globals only. */
			struct tr_vec none = {0};
			struct scope cs = sc;
			cs.locals = &none;
			bind_expr(&cs, r->cond);
			for (unsigned k = 0; k < none.n; k++)
				tr_sem_error(((struct tr_sym *)none.items[k])->tok,
					     "probe condition must not reference local variables");
		}
		bind_stmt(&sc, p->body);
	}
	if (tr_diag.errors)
		return -1;
	for (i = 0; i < s->probes.n && !s->unoptimized; i++) {
		struct tr_probe *p = s->probes.items[i];
		if (!p->file->tapset)
			elide_dead_stats(p->body);
	}
	for (i = 0; i < s->funcs.n && !s->unoptimized; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (!f->file->tapset)
			elide_dead_stats(f->body);
	}
	apply_global_settings(s);
	/* Types: propagate until nothing changes, then report what is left. */
	struct infer in = {0};
	for (int round = 0; round < 32; round++) {
		in.changed = false;
		infer_all(s, &in);
		if (!in.changed)
			break;
	}
	/* A local of a probe that nothing typed (never assigned, read only
	 * where any type goes: println(x), y = x) is stap's "unresolved
	 * type", after its warning.  But stap's optimizer first drops stores
	 * to locals never read (c = a), and a with them: while an untyped
	 * local is only written, the probe is let through, as a long. */
	for (i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		bool dead_store = false;
		for (unsigned k = 0; k < p->locals.n; k++) {
			const struct tr_sym *y = p->locals.items[k];
			dead_store |= y->type == T_UNKNOWN && !y->read && y->written;
		}
		const struct tr_resolved *r = p->resolved.items[0];
		for (unsigned k = 0; k < p->locals.n; k++) {
			struct tr_sym *y = p->locals.items[k];
			if (y->read && !y->written && r->others_unavailable) {
				tr_sem_error(y->tok, "variable '%s' is not available in %s: %s", y->name,
					     r->alias_pp ? r->alias_pp : r->pp, r->others_unavailable);
				continue;
			}
			if (y->read && !y->written && y->type != T_UNKNOWN)
				tr_warn(y->tok, "never-assigned local variable '%s'", y->name);
			if (y->type == T_UNKNOWN) {
				tr_warn(y->tok, "never-assigned local variable '%s'", y->name);
				/* read, or neither read nor written: delete x */
				if ((y->read || !y->written) && !dead_store)
					tr_sem_error(y->tok, "unresolved type ");  /* sic: stap's space */
				y->type = T_LONG;
			}
		}
	}
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		for (unsigned k = 0; k < f->locals.n; k++) {
			struct tr_sym *y = f->locals.items[k];
			if (y->type == T_UNKNOWN)
				y->type = T_LONG;
		}
	}
	for (int round = 0; round < 32; round++) {
		in.changed = false;
		infer_all(s, &in);
		if (!in.changed)
			break;
	}
	in.final = true;
	infer_all(s, &in);
	for (i = 0; i < s->probes.n + s->funcs.n; i++) {
		struct tr_vec *locals = i < s->probes.n ? &((struct tr_probe *)s->probes.items[i])->locals :
					&((struct tr_func *)s->funcs.items[i - s->probes.n])->locals;
		for (unsigned k = 0; k < locals->n; k++) {
			struct tr_sym *y = locals->items[k];
			if (y->type == T_STATS)
				tr_sem_error(y->tok, "stat locals not supported, missing global declaration? ");
		}
	}
	for (i = 0; i < s->globals.n; i++) {
		struct tr_sym *g = s->globals.items[i];
		if (g->type == T_UNKNOWN && g->arity <= 0 && g->arity != -2)
			g->type = T_LONG; /* declared, never used: stap says long too */
		check_resolved(g, tr_printf("global '%s'", g->name));
	}
	for (i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		for (unsigned k = 0; k < f->params.n; k++) {
			struct tr_sym *a = f->params.items[k];
			if (a->type == T_UNKNOWN)
				a->type = T_LONG;
		}
	}
	check_hists(s);
	return tr_diag.errors ? -1 : 0;
}

/*
 * As stap: one statistics global has one kind of histogram, so every
 * @hist_* of it must be the same (@hist_log, or @hist_linear with the
 * same range).  The second one that differs is the error.
 */
struct hist_seen {
	struct tr_vec syms, first;      /* the global, its first E_HIST */
};

static bool same_hist(const struct tr_expr *a, const struct tr_expr *b)
{
	if (a->stat_op != b->stat_op || a->args.n != b->args.n)
		return false;
	for (unsigned i = 0; i < a->args.n; i++)
		if (((struct tr_expr *)a->args.items[i])->num != ((struct tr_expr *)b->args.items[i])->num)
			return false;
	return true;
}

static void check_hist(const struct tr_expr *e, void *arg)
{
	struct hist_seen *h = arg;
	const struct tr_expr *op;
	unsigned i;

	if (e->kind != E_HIST)
		return;
	op = e->a->kind == E_INDEX ? e->a->a : e->a;
	if (op->kind != E_SYM || !op->sym || op->sym->kind != SYM_GLOBAL)
		return;
	for (i = 0; i < h->syms.n && h->syms.items[i] != op->sym; i++)
		;
	if (i == h->syms.n) {
		tr_vec_push(&h->syms, op->sym);
		tr_vec_push(&h->first, (void *)e);
	} else if (!same_hist(h->first.items[i], e)) {
		tr_sem_error(e->tok, "multiple histogram types declared on '__global_%s'", op->sym->name);
	}
}

static void check_hists(struct tr_session *s)
{
	struct hist_seen h = {0};
	struct tr_walker w = { .expr = check_hist, .arg = &h };

	for (unsigned i = 0; i < s->probes.n; i++)
		tr_walk_stmt(&w, ((struct tr_probe *)s->probes.items[i])->body);
	for (unsigned i = 0; i < s->funcs.n; i++) {
		const struct tr_func *f = s->funcs.items[i];
		if (f->body)
			tr_walk_stmt(&w, f->body);
	}
	free(h.syms.items);
	free(h.first.items);
}

/* ---- -p2 output ---------------------------------------------------------------- */

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

void tr_print_elaborated(FILE *out, struct tr_session *s)
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
