/*
 * elab_point.c - pass 2: the built-in probe points.
 *
 * Takes the components of one probe point that no alias expanded (or an
 * alias's target, elab_probe.c) and gives the concrete points they name:
 * begin/end/error/never and oneshot, timer.*, procfs, perf, netfilter,
 * kernel.data (kdata.c), kernel.trace, trace.event (the trace of --trace, trace.c), kernel
 * markers, kernel functions (btf.c), and process("P")... with its marks,
 * SDT probes, functions and statements (dwarf.c), PLT entries
 * (dwarf_plt.c), begin and end.  Wildcards are matched against the
 * catalogues here; each point found is a struct tr_resolved whose fields
 * (a marker's format, a tracepoint's parameters) give $variables their
 * names and types in elab_bind.c.
 */
#define _GNU_SOURCE
#include "elab_int.h"
#include "mt_fmt.h"

#include <elf.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The probe point families resolved here (marktap(1), "OTHER PROBE
 * POINTS", "SDT PROBES", "FUNCTION PROBES", "KERNEL FUNCTION PROBES"),
 * as stap writes its list, (string) and (number) for the arguments:
 * --dump-probe-types prints them (cmdline.t elaborates each), and a point
 * that leaves them is stap's "probe point mismatch" (elab_probe.c).
 */
const char *const tr_point_types[] = {
	"begin", "begin(number)", "end", "end(number)", "error", "error(number)", "never",
	"oneshot",
	"kernel.data(number).length(number).rw", "kernel.data(number).length(number).write",
	"kernel.data(number).rw", "kernel.data(number).write", "kernel.data(string).rw",
	"kernel.data(string).write",
	"kernel.function(string)", "kernel.function(string).call", "kernel.function(string).return",
	"kernel.function(string).return.maxactive(number)",
	"kernel.mark(string)", "kernel.mark(string).format(string)", "kernel.trace(string)",
	"kprobe.function(string)", "kprobe.function(string).return",
	"kprobe.function(string).return.maxactive(number)", "kprobe.module(string).function(string)",
	"kprobe.module(string).function(string).return", "kprobe.statement(number).absolute",
	"kernel.statement(number).absolute",
	"module(string).function(string)", "module(string).function(string).call",
	"module(string).function(string).return",
	"netfilter.hook(string).pf(string)", "netfilter.hook(string).pf(string).priority(string)",
	"netfilter.pf(string).hook(string)", "netfilter.pf(string).hook(string).priority(string)",
	"perf.type(number).config(number)", "perf.type(number).config(number).process",
	"perf.type(number).config(number).process(string)",
	"perf.type(number).config(number).process(string).counter(string)",
	"perf.type(number).config(number).hz(number)",
	"perf.type(number).config(number).hz(number).process(string)",
	"perf.type(number).config(number).sample(number)",
	"perf.type(number).config(number).sample(number).process(string)",
	"process(number).begin", "process(number).end", "process(number).function(string)",
	"process(number).function(string).return", "process(number).mark(string)",
	"process(number).provider(string).mark(string)", "process(number).thread.begin",
	"process(number).thread.end",
	"process(string).begin", "process(string).end", "process(string).function(string)",
	"process(string).function(string).call", "process(string).function(string).inline",
	"process(string).function(string).return",
	"process(string).library(string).function(string)",
	"process(string).library(string).function(string).call",
	"process(string).library(string).function(string).return",
	"process(string).library(string).mark(string)", "process(string).library(string).plt",
	"process(string).library(string).plt(string)", "process(string).library(string).plt(string).return",
	"process(string).mark(string)", "process(string).plt", "process(string).plt.return",
	"process(string).plt(string)", "process(string).plt(string).return",
	"process(string).provider(string).mark(string)",
	"process(string).statement(string)", "process(string).thread.begin",
	"process(string).thread.end",
	"process.begin", "process.end", "process.function(string)", "process.function(string).return",
	"process.mark(string)", "process.plt", "process.thread.begin", "process.thread.end",
	"procfs(string).read", "procfs(string).read.maxsize(number)",
	"procfs(string).umask(number).read", "procfs(string).umask(number).write", "procfs(string).write",
	"procfs.read", "procfs.write",
	"timer.hz(number)", "timer.jiffies(number)", "timer.jiffies(number).randomize(number)",
	"timer.ms(number)", "timer.ms(number).randomize(number)", "timer.msec(number)",
	"timer.msec(number).randomize(number)", "timer.ns(number)", "timer.nsec(number)",
	"timer.profile", "timer.s(number)", "timer.s(number).randomize(number)", "timer.sec(number)",
	"timer.sec(number).randomize(number)", "timer.us(number)", "timer.usec(number)",
	"trace.event(string)",
	NULL
};

/* One point being resolved: the concrete points found go to out. */
struct resolver {
	struct tr_session *s;
	struct tr_vec *out;                     /* struct tr_resolved * */
	const struct tr_token *tok;
	bool quiet;                             /* no warnings, no errors */
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

static void add_match(struct resolver *rv, struct tr_resolved *r)
{
	tr_vec_push(rv->out, r);
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
	const struct tr_dwfunc *uncalled = NULL;
	for (unsigned i = 0; i < funcs.n; i++) {
		struct tr_dwfunc *f = funcs.items[i];
		if ((ret || call) && tr_dw_inlined(f))
			continue;   /* an inlined copy has no return to hook (as stap) */
		if (ret && tr_dw_entered_without_call(f)) {
			uncalled = f;   /* _start: no return address, argc there */
			continue;
		}
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
	if (!n && uncalled)
		tr_sem_error(rv->tok, "while resolving probe point: no match (%s is entered without a call, "
			     "as a program's entry point is: it has no return to probe)", tr_dw_name(uncalled));
	else if (!n && inl)
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

/* Does tp match kernel.trace's pattern "GLOB" or "SYSTEM:GLOB"? */
static bool ktrace_matches(const struct tr_ktrace *tp, const char *pat)
{
	const char *colon = strchr(pat, ':');

	if (!colon)
		return tr_glob(pat, tp->name);
	return tp->system && tr_glob(tr_strndup(pat, (size_t)(colon - pat)), tp->system) &&
	       tr_glob(colon + 1, tp->name);
}

/*
 * kernel.trace("GLOB") or ("SYSTEM:GLOB"): the kernel's tracepoints
 * (ktrace.c).  Those BTF has run (btf.c: a P_MARK_KERNEL bound to
 * "tracepoint:[MODULE:]NAME:NARGS", $p->member through BTF; a module's
 * when vmlinux has none of the name); those only the headers know
 * elaborate with their parameters as numbers (P_KTRACE: pass 5 says
 * why they cannot run).  Events that are no tracepoints
 * (syscalls:sys_enter_open) are left out of a glob that matches
 * tracepoints too, and refused with the reason when they are all it
 * matches.
 */
/* Tracepoints renamed since stap's examples were written: the old name,
 * where the kernel has no such tracepoint, probes the new one (a warning
 * says so); the handler's $variables are the new one's. */
static const struct { const char *old, *now, *since; } ktrace_renames[] = {
	{ "mm_vmscan_writepage", "mm_vmscan_write_folio", "6.0" },
	{ NULL, NULL, NULL }
};

static int resolve_ktrace_pattern(struct resolver *rv, const char *pat);

/* The point of a module's tracepoint name that the kernel's headers
 * name too (vsock:virtio_transport_alloc_pkt), or NULL */
static struct tr_resolved *module_tracepoint(struct tr_session *s, const char *name, const char *pp)
{
	struct tr_vec names = {0}, modules = {0};
	struct tr_resolved *r = NULL;

	if (tr_btf_module_tracepoints(s, name, &names, &modules) > 0)
		r = tr_btf_tracepoint(s, modules.items[0], name, pp);
	free(names.items);
	free(modules.items);
	return r;
}

/*
 * kernel.trace("[SYSTEM:]GLOB") that names none of vmlinux's: the
 * modules' tracepoints (btf.c reads their BTF, loaded or not; the
 * module's binding waits for it to come, as module("M").function does).
 * SYSTEM is known where tracefs shows the event (a module loaded): only
 * there does it select.
 */
static int resolve_module_ktrace(struct resolver *rv, const char *pat, const struct tr_vec *tps)
{
	const char *colon = strchr(pat, ':');
	const char *system = colon ? tr_strndup(pat, (size_t)(colon - pat)) : NULL;
	struct tr_vec names = {0}, modules = {0};
	int found = 0;

	tr_btf_module_tracepoints(rv->s, colon ? colon + 1 : pat, &names, &modules);
	for (unsigned i = 0; i < names.n; i++) {
		const char *name = names.items[i], *sys = NULL;
		for (unsigned k = 0; k < tps->n && !sys; k++) {
			const struct tr_ktrace *tp = tps->items[k];
			if (tp->system && !strcmp(tp->name, name))
				sys = tp->system;
		}
		if (system && sys && !tr_glob(system, sys))
			continue;
		const char *pp = sys ? tr_printf("kernel.trace(\"%s:%s\")", sys, name) :
			tr_printf("kernel.trace(\"%s\")", name);
		struct tr_resolved *r = tr_btf_tracepoint(rv->s, modules.items[i], name, pp);
		if (r) {
			add_match(rv, r);
			found++;
		}
	}
	free(names.items);
	free(modules.items);
	return found;
}

static int resolve_ktrace(struct resolver *rv, const struct tr_component *c)
{
	const char *pat = comp_str(c);

	if (!pat)
		return 0;
	return resolve_ktrace_pattern(rv, pat);
}

static int resolve_ktrace_pattern(struct resolver *rv, const char *pat)
{
	struct tr_vec tps = {0};
	char *err = NULL;
	const char *refused = NULL;
	int found = 0;

	if (tr_ktrace_points(rv->s, &tps, &err)) {
		tr_sem_error(rv->tok, "%s", err);
		return -1;
	}
	for (unsigned i = 0; i < tps.n; i++) {
		const struct tr_ktrace *tp = tps.items[i];
		if (!ktrace_matches(tp, pat))
			continue;
		if (tp->not_tracepoint) {
			refused = refused ? refused : tr_printf("kernel.trace(\"%s:%s\"): %s", tp->system,
								tp->name, tp->why);
			continue;
		}
		const char *pp = tp->system ? tr_printf("kernel.trace(\"%s:%s\")", tp->system, tp->name) :
			tr_printf("kernel.trace(\"%s\")", tp->name);
		struct tr_resolved *r = tp->in_btf ? tr_btf_tracepoint(rv->s, NULL, tp->name, pp) :
					module_tracepoint(rv->s, tp->name, pp);
		if (!r) {
			r = new_point(P_KTRACE, pp);
			r->ktrace = tp;
			r->marker = tp->name;
			for (unsigned k = 0; k < tp->fields.n; k++) {
				tr_vec_push(&r->fields, tp->fields.items[k]);
				tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
			}
		}
		add_match(rv, r);
		found++;
	}
	if (!found && !refused && tr_ktrace_not_tracepoint(pat))
		refused = tr_printf("kernel.trace(\"%s\"): %s", pat, tr_ktrace_not_tracepoint(pat));
	if (!found && !tr_ktrace_not_tracepoint(pat))
		found = resolve_module_ktrace(rv, pat, &tps);
	if (!found && refused) {
		tr_sem_error(rv->tok, "while resolving probe point %s", refused);
		return -1;
	}
	for (unsigned i = 0; !found && ktrace_renames[i].old; i++)
		if (!strcmp(pat, ktrace_renames[i].old)) {
			if (!rv->quiet)
				tr_warn(rv->tok, "kernel.trace(\"%s\"): the kernel calls it %s since Linux %s: "
					"probing that", pat, ktrace_renames[i].now, ktrace_renames[i].since);
			return resolve_ktrace_pattern(rv, ktrace_renames[i].now);
		}
	return found;
}

/* The number a netfilter hook, family or priority is written as: one of
 * the kernel's names (what stap pastes into C), or a decimal number. */
struct nf_name {
	const char *name;
	int value;
};

static const struct nf_name nf_hooks[] = {
	{ "NF_INET_PRE_ROUTING", 0 }, { "NF_INET_LOCAL_IN", 1 }, { "NF_INET_FORWARD", 2 },
	{ "NF_INET_LOCAL_OUT", 3 }, { "NF_INET_POST_ROUTING", 4 },
	{ "NF_IP_PRE_ROUTING", 0 }, { "NF_IP_LOCAL_IN", 1 }, { "NF_IP_FORWARD", 2 },
	{ "NF_IP_LOCAL_OUT", 3 }, { "NF_IP_POST_ROUTING", 4 },
	{ "NF_IP6_PRE_ROUTING", 0 }, { "NF_IP6_LOCAL_IN", 1 }, { "NF_IP6_FORWARD", 2 },
	{ "NF_IP6_LOCAL_OUT", 3 }, { "NF_IP6_POST_ROUTING", 4 },
	{ "NF_ARP_IN", 0 }, { "NF_ARP_OUT", 1 }, { "NF_ARP_FORWARD", 2 },
	{ "NF_BR_PRE_ROUTING", 0 }, { "NF_BR_LOCAL_IN", 1 }, { "NF_BR_FORWARD", 2 },
	{ "NF_BR_LOCAL_OUT", 3 }, { "NF_BR_POST_ROUTING", 4 }, { NULL, 0 }
};

static const struct nf_name nf_families[] = {
	{ "NFPROTO_IPV4", 2 }, { "NFPROTO_ARP", 3 }, { "NFPROTO_BRIDGE", 7 },
	{ "NFPROTO_IPV6", 10 }, { "PF_INET", 2 }, { "PF_INET6", 10 }, { "AF_INET", 2 },
	{ "AF_INET6", 10 }, { NULL, 0 }
};

static const struct nf_name nf_priorities[] = {
	{ "NF_IP_PRI_FIRST", INT_MIN }, { "NF_IP_PRI_LAST", INT_MAX },
	{ "NF_IP6_PRI_FIRST", INT_MIN }, { "NF_IP6_PRI_LAST", INT_MAX },
	{ "NF_BR_PRI_FIRST", INT_MIN }, { "NF_BR_PRI_LAST", INT_MAX }, { NULL, 0 }
};

static bool nf_number(const char *text, const struct nf_name *names, int *out)
{
	char *end;
	long v;

	for (; names->name; names++)
		if (!strcmp(text, names->name)) {
			*out = names->value;
			return true;
		}
	errno = 0;
	v = strtol(text, &end, 10);
	if (!*text || *end || errno || v < INT_MIN || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

/*
 * netfilter.hook("H").pf("PF")[.priority("N")] (or .pf first): stap's
 * netfilter hook, whose handler sees $hooknum, $skb, $in, $out, $okfn and
 * $verdict (the kernel's nf_hookfn arguments as stap gave them), and
 * marktap's $pf, $indev_name, $outdev_name and $length, the values the
 * module reads for it.  A P_MARK_KERNEL bound to
 * "netfilter:HOOK:PF:PRIORITY", run by marktap.ko's hook
 * (kmod/mt_netfilter.c); the pointers' members are read through BTF
 * (elab_bind.c).  The netfilter.* aliases of netfilter.stp stand on it.
 */
static int resolve_netfilter(struct resolver *rv, const struct tr_vec *comps)
{
	/* in the module's order (MT_NETFILTER_FORMAT) */
	static struct tr_ktrace hook = { .system = "netfilter", .name = "nf_hookfn" };
	static const char *const params[][2] = {
		{ "hooknum", "unsigned int" }, { "skb", "struct sk_buff *" },
		{ "in", "const struct net_device *" }, { "out", "const struct net_device *" },
		{ "okfn", "int (*)(struct net *, struct sock *, struct sk_buff *)" },
		{ "verdict", "unsigned int" }, { "pf", "u_int8_t" },
		{ "indev_name", "string" }, { "outdev_name", "string" }, { "length", "unsigned int" },
	};
	const char *h = NULL, *pf = NULL, *prio = NULL;
	int hook_nr, pf_nr, prio_nr = 0;

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
	const char *what = NULL, *seen = NULL, *expected = NULL;
	if (!nf_number(h, nf_hooks, &hook_nr) || hook_nr < 0)
		what = "hook", seen = h, expected = "NF_INET_*, NF_IP6_*, NF_ARP_*, NF_BR_*";
	else if (!nf_number(pf, nf_families, &pf_nr) || pf_nr < 0)
		what = "protocol family", seen = pf,
		expected = "NFPROTO_IPV4, NFPROTO_IPV6, NFPROTO_ARP, NFPROTO_BRIDGE";
	else if (prio && !nf_number(prio, nf_priorities, &prio_nr))
		what = "priority", seen = prio, expected = "NF_IP_PRI_FIRST, NF_IP_PRI_LAST";
	if (what) {
		tr_sem_error(rv->tok, "while resolving probe point %s: unknown netfilter %s \"%s\" "
			     "(expected %s or a number)", tr_elab_point_text(comps), what, seen, expected);
		return -1;
	}
	if (!hook.fields.n)
		for (unsigned i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			tr_vec_push(&hook.fields, (void *)params[i][0]);
			tr_vec_push(&hook.ctypes, (void *)params[i][1]);
		}
	struct tr_resolved *r = new_point(P_MARK_KERNEL, tr_elab_point_text(comps));
	r->netfilter = true;
	r->ktrace = &hook;
	r->marker = tr_printf("netfilter:%d:%d:%d", hook_nr, pf_nr, prio_nr);
	r->format = "";
	for (unsigned k = 0; k < hook.fields.n; k++) {
		bool str = !strcmp(hook.ctypes.items[k], "string");
		tr_vec_push(&r->fields, hook.fields.items[k]);
		tr_vec_push(&r->field_types, (void *)(intptr_t)(str ? T_STRING : T_LONG));
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
		r->pp = tr_elab_point_text(comps);
		add_match(rv, r);
		return 1;
	}
	if (!strcmp(c0->name, "oneshot") && comps->n == 1 && !c0->has_arg) {
		/* stap's oneshot: the handler runs once, at begin, and the
		 * session ends after it (exit() asks for the end, as stap's) */
		r = tr_alloc(sizeof(*r));
		r->kind = P_BEGIN;
		r->oneshot = true;
		r->pp = tr_elab_point_text(comps);
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
		r->pp = tr_elab_point_text(comps);
		add_match(rv, r);
		return 1;
	}
	if (!strcmp(c0->name, "trace") && comps->n == 2 && !c0->has_arg)
		return resolve_trace_events(rv, comps->items[1]);
	if (!strcmp(c0->name, "kernel") && comps->n == 2 && !c0->has_arg &&
	    !strcmp(((struct tr_component *)comps->items[1])->name, "trace"))
		return resolve_ktrace(rv, comps->items[1]);
	if ((v = tr_kdata_resolve(rv->s, comps, rv->tok, rv->out)) != 0)
		return (int)v;
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

/* The files a glob pattern names, each once (a file reached twice
 * through links once): the 64-bit objects of this machine pushed to
 * objects, the others described in left_out; their number. */
static unsigned glob_objects(const char *pattern, struct tr_vec *objects, struct tr_buf *left_out)
{
	struct tr_vec seen = {0};
	glob_t g;

	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char real[PATH_MAX];
			struct stat st;
			const char *why;
			if (!realpath(g.gl_pathv[i], real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			bool dup = false;
			for (unsigned k = 0; k < seen.n && !dup; k++)
				dup = !strcmp(seen.items[k], real);
			if (dup)
				continue;
			tr_vec_push(&seen, tr_strdup(real));
			if ((why = tr_libpath_foreign(real)) != NULL)
				tr_buf_printf(left_out, "%s%s is %s", left_out->len ? "; " : "", real, why);
			else
				tr_vec_push(objects, tr_strdup(real));
		}
	}
	globfree(&g);
	free(seen.items);
	return seen.n;
}

/*
 * The objects process("WRITTEN") or .library("WRITTEN") probes, pushed
 * to objects: a file pattern's 64-bit objects of this machine (files of
 * another class left out, as no process here runs them with marktap), a
 * path's file, a plain name found in PATH or where the dynamic linker
 * finds it (a library's plain name: there only).
 *
 * When that names no such object (Fedora's "/lib*" on Debian names the
 * 32-bit /usr/lib32/libc.so.6, "/lib64/libc.so.6" nothing), the file
 * name, or the pattern's, is looked up where the program would find it
 * (libpath.c): what it finds is probed, with a warning saying what was
 * written, what it named and what is probed instead (once a pattern:
 * report() prints a message once).  Their number, or -1 after an error
 * (none with rv->quiet).  A path naming no file at all is given as it
 * is, for the object reader's "cannot read" error.
 */
static int process_objects(struct resolver *rv, const char *written, bool library, struct tr_vec *objects)
{
	bool pattern = written[strcspn(written, "*?[")] != '\0';
	const char *base = strrchr(written, '/') ? strrchr(written, '/') + 1 : written;
	const char *where = tr_libpath_where(base), *path = written;
	struct tr_buf left_out = {0}, probed = {0};
	unsigned named = 0;   /* files written names */

	if (!strchr(written, '/') && !library && !pattern)
		path = find_in_path(written);   /* a program in PATH */
	if (!strchr(path, '/')) {
		if (!tr_libpath_find(written, objects, NULL))
			tr_vec_push(objects, (void *)written);
		return (int)objects->n;
	}
	if (pattern) {
		named = glob_objects(written, objects, &left_out);
	} else if (access(path, F_OK) == 0) {
		const char *why = tr_libpath_foreign(path);
		named = 1;
		if (!why)
			tr_vec_push(objects, (void *)path);
		else
			tr_buf_printf(&left_out, "%s is %s", path, why);
	}
	if (objects->n)
		return (int)objects->n;
	/* a library only: a program's path that names nothing stays an
	 * error, not another program of that name */
	if (where && strstr(base, ".so") && tr_libpath_find(base, objects, NULL)) {
		for (unsigned i = 0; i < objects->n; i++)
			tr_buf_printf(&probed, "%s%s", i ? ", " : "", (const char *)objects->items[i]);
		const char *what = !named ? tr_printf("%s %s", written, pattern ? "matches no file" : "does not exist")
				 : pattern ? tr_printf("%s names no 64-bit object of this machine (%s)", written,
						       tr_buf_str(&left_out))
				 : tr_buf_str(&left_out);
		if (!rv->quiet)
			tr_warn(rv->tok, "%s: probing %s instead, the %s found %s", what, tr_buf_str(&probed), base, where);
		return (int)objects->n;
	}
	const char *nor = where && strstr(base, ".so") ? tr_printf(", nor is %s found %s", base, where) : "";
	if (pattern) {
		if (!rv->quiet)
			tr_sem_error(rv->tok, "no match for the file pattern %s%s%s%s%s", written,
				     named ? " (" : "", named ? tr_buf_str(&left_out) : "",
				     named ? ": marktap probes 64-bit objects of this machine)" : "", nor);
		return -1;
	}
	if (named) {
		if (!rv->quiet)
			tr_sem_error(rv->tok, "%s: marktap probes 64-bit objects of this machine%s",
				     tr_buf_str(&left_out), nor);
		return -1;
	}
	tr_vec_push(objects, (void *)path);
	return 1;
}

/* process("P")... once P names a file (a library's name: one or more):
 * the marks, SDT probes, functions of that object. */
static int resolve_process_path(struct resolver *rv, const struct tr_vec *comps, const char *path)
{
	unsigned at = 1;
	const char *provider = NULL, *exe = path, *library = NULL;
	struct tr_vec objects = {0};
	int found = 0, n;

	/* .library("L") and .provider("P"), in either order */
	for (;;) {
		const struct tr_component *c = comps->items[at];
		if (!library && !strcmp(c->name, "library") && comp_str(c) && at + 1 < comps->n)
			library = comp_str(c);
		else if (!provider && !strcmp(c->name, "provider") && comp_str(c) && at + 1 < comps->n)
			provider = comp_str(c);
		else
			break;
		at++;
	}
	const char *name = ((struct tr_component *)comps->items[at])->name;
	if (library && !strchr(library, '/') && library[strcspn(library, "*?[")]) {
		/* a pattern of library names: the libraries the program loads */
		if (!tr_libpath_needed(exe, library, &objects)) {
			if (!rv->quiet)
				tr_sem_error(rv->tok, "no library %s loads matches %s", exe, library);
			return -1;
		}
	} else if (process_objects(rv, library ? library : path, library != NULL, &objects) < 0)
		return -1;
	for (unsigned i = 0; i < objects.n && found >= 0; i++) {
		path = objects.items[i];
		if (!provider && !strcmp(name, "plt"))
			n = resolve_plt(rv, comps, at, library ? exe : NULL, path);
		else if (!provider && (!strcmp(name, "function") || !strcmp(name, "statement")))
			n = resolve_functions(rv, comps, at, path);
		else
			n = resolve_marks(rv, comps, at, false, path, provider);
		found = n < 0 ? -1 : found + n;
	}
	free(objects.items);
	return found;
}

/* process("PATTERN")... with '*', '?' or '[': each object the pattern
 * names (process_objects), as stap expands it. */
static int resolve_process_glob(struct resolver *rv, const struct tr_vec *comps, const char *pattern)
{
	struct tr_vec objects = {0};
	int found = process_objects(rv, pattern, false, &objects) < 0 ? -1 : 0;

	for (unsigned i = 0; i < objects.n && found >= 0; i++) {
		int n = resolve_process_path(rv, comps, objects.items[i]);
		found = n < 0 ? -1 : found + n;
	}
	free(objects.items);
	return found;
}

/* The names of the markers (and SDT probes) a catalogue holds. */
static void marker_names(const struct tr_vec *markers, struct tr_vec *names)
{
	for (unsigned i = 0; i < markers->n; i++)
		tr_vec_push(names, (void *)((const struct tr_marker *)markers->items[i])->name);
}

/*
 * Why a point of a known shape named nothing, for its "no match": the
 * names near the one asked for in the catalogue it was looked up in
 * (kernel.trace: "(similar tracepoints: ...)", as stap; kernel.mark and
 * process("PATH").mark: "(similar markers: ...)"), or "".
 */
const char *tr_elab_no_match_why(struct tr_session *s, const struct tr_vec *comps)
{
	const struct tr_component *c0 = comps->items[0], *last = comps->items[comps->n - 1];
	struct tr_vec found = {0}, names = {0};
	const char *why = "";
	char *err = NULL;

	if (comps->n == 2 && !strcmp(c0->name, "kernel") && !c0->has_arg && comp_str(last) &&
	    !strcmp(last->name, "trace")) {
		const char *pat = comp_str(last);
		struct tr_vec tps = {0};   /* the cache's own: not freed */
		if (tr_ktrace_points(s, &tps, &err) == 0) {
			for (unsigned i = 0; i < tps.n; i++) {
				const struct tr_ktrace *tp = tps.items[i];
				tr_vec_push(&names, strchr(pat, ':') ? (void *)tr_printf("%s:%s", tp->system, tp->name)
								     : (void *)tp->name);
			}
			why = tr_similar_as("similar tracepoints", pat, &names);
		}
	} else if (comps->n >= 2 && !strcmp(c0->name, "kernel") && !c0->has_arg &&
		   !strcmp(((struct tr_component *)comps->items[1])->name, "mark") && comp_str(comps->items[1])) {
		if (tr_markers_kernel(s, &found) == 0) {
			marker_names(&found, &names);
			why = tr_similar_as("similar markers", comp_str(comps->items[1]), &names);
		}
	} else if (comps->n == 2 && !strcmp(c0->name, "process") && comp_str(c0) && comp_str(last) &&
		   !strcmp(last->name, "mark")) {
		struct resolver rv = { .s = s, .quiet = true };
		struct tr_vec objects = {0};
		const char *path = process_objects(&rv, comp_str(c0), false, &objects) == 1 ? objects.items[0] : "";
		free(objects.items);
		if (*path && !tr_markers_elf(path, &found, &err) && !tr_markers_sdt(path, &found, &err)) {
			marker_names(&found, &names);
			why = found.n ? tr_similar_as("similar markers", comp_str(last), &names)
				      : tr_printf(" (%s has no markers and no SDT probes)", path);
		}
	}
	free(found.items);
	free(names.items);
	return why;
}

/* The concrete points comps names, pushed to out (struct tr_resolved *):
 * their number, 0 when comps is no built-in point, -1 after an error at
 * tok (out may then hold those found before it). */
int tr_elab_builtin_points(struct tr_session *s, const struct tr_token *tok, const struct tr_vec *comps,
			   struct tr_vec *out)
{
	struct resolver rv = { .s = s, .out = out, .tok = tok };

	return resolve_builtin(&rv, comps);
}
