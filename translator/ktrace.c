/*
 * ktrace.c - the kernel's tracepoints, for kernel.trace("NAME").
 *
 * Three places know them, each a part:
 *
 *   - the kernel's BTF (btf.c): every tracepoint of vmlinux has the
 *     typedef btf_trace_NAME, its prototype with the parameters' names
 *     and types.  A tracepoint there runs: marktap.ko probes it
 *     (kmod/mt_tracepoint.c) and its parameters resolve as a kernel
 *     function's do ($p->member too).  A module's tracepoints are in
 *     the module's BTF, which elab_point.c asks btf.c for when these
 *     lists have no runnable one of the name;
 *   - the kernel's include/trace/events/SYSTEM.h, which stap compiles;
 *     marktap reads them as text: each TRACE_EVENT*(name, TP_PROTO(params),
 *     ...) and DEFINE_EVENT*(class, name, TP_PROTO(params), ...) is one
 *     tracepoint "SYSTEM:name" (SYSTEM from the header's
 *     "#define TRACE_SYSTEM").  They give SYSTEM, and where BTF is absent
 *     (a -r kernel without it) the parameters ("struct task_struct *prev")
 *     as numbers: such a point elaborates and lists, and cannot run.  The
 *     headers are the kernel's of the session (-r KVER, else the running
 *     one): /lib/modules/KVER/source or build, whichever has them, or the
 *     directory MARKTAP_KERNEL_HEADERS names;
 *   - tracefs (events/SYSTEM/NAME, the running kernel's; MARKTAP_TRACEFS
 *     names another directory holding events/): SYSTEM where no header is
 *     installed, and the events that are no tracepoints, which
 *     kernel.trace refuses with the reason (syscalls:sys_enter_open: the
 *     kernel makes those from raw_syscalls:sys_enter).
 */
#define _GNU_SOURCE
#include "tr_points.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The include/trace/events directory, or NULL. */
static const char *events_dir(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_KERNEL_HEADERS");
	static struct utsname u;

	if (!s->kernel_vr && uname(&u) == 0)
		s->kernel_vr = u.release;
	const char *cands[] = {
		env, tr_printf("/lib/modules/%s/source", s->kernel_vr),
		tr_printf("/lib/modules/%s/build", s->kernel_vr),
	};
	struct stat st;

	for (unsigned i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		const char *d = cands[i] ? tr_printf("%s/include/trace/events", cands[i]) : NULL;
		if (d && stat(d, &st) == 0 && S_ISDIR(st.st_mode))
			return d;
	}
	return NULL;
}

/* The text between the '(' at p and its ')', or NULL. */
static char *balanced(const char *p, const char **end)
{
	int depth = 0;

	for (const char *q = p; *q; q++) {
		if (*q == '(')
			depth++;
		else if (*q == ')' && --depth == 0) {
			*end = q + 1;
			return tr_strndup(p + 1, (size_t)(q - p - 1));
		}
	}
	return NULL;
}

static char *trim(char *t)
{
	while (isspace((unsigned char)*t))
		t++;
	size_t n = strlen(t);
	while (n && isspace((unsigned char)t[n - 1]))
		t[--n] = '\0';
	return t;
}

static bool is_ident(const char *t)
{
	if (!*t || isdigit((unsigned char)*t))
		return false;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && *t != '_')
			return false;
	return true;
}

/* "struct task_struct *prev, int x": the names into tp->fields, the C
 * types ("struct task_struct*") into tp->ctypes.  false: not a list. */
static bool split_params(char *proto, struct tr_ktrace *tp)
{
	char *save = NULL;

	for (char *prm = strtok_r(proto, ",", &save); prm; prm = strtok_r(NULL, ",", &save)) {
		prm = trim(prm);
		if (!strcmp(prm, "void"))
			continue;
		size_t n = strlen(prm), k = n;
		while (k && (isalnum((unsigned char)prm[k - 1]) || prm[k - 1] == '_'))
			k--;
		if (k == n || k == 0)
			return false;
		const char *name = tr_strdup(prm + k);
		prm[k] = '\0';
		/* "struct request *" -> "struct request*" as stap -L prints */
		struct tr_buf type = {0};
		for (char *c = trim(prm); *c; c++)
			if (!(*c == ' ' && (c[1] == '*' || c[1] == ' ')))
				tr_buf_putc(&type, *c);
		if (!is_ident(name))
			return false;
		tr_vec_push(&tp->fields, (void *)name);
		tr_vec_push(&tp->ctypes, (void *)tr_buf_str(&type));
	}
	return true;
}

/* One header's tracepoints. */
static void read_header(const char *path, struct tr_vec *out)
{
	static const char *const one_name[] = { "TRACE_EVENT", "TRACE_EVENT_FN", "TRACE_EVENT_CONDITION",
		"TRACE_EVENT_FN_COND", NULL };
	static const char *const two_names[] = { "DEFINE_EVENT", "DEFINE_EVENT_FN", "DEFINE_EVENT_PRINT",
		"DEFINE_EVENT_CONDITION", NULL };
	struct tr_file *f = tr_file_read(path, path);
	const char *system = NULL;

	if (!f)
		return;
	for (const char *p = f->text; (p = strstr(p, "TRACE_SYSTEM")); p++) {
		const char *def = p;
		while (def > f->text && def[-1] != '\n')
			def--;
		char word[64];
		if (sscanf(def, " #define TRACE_SYSTEM %63[A-Za-z0-9_]", word) == 1) {
			system = tr_strdup(word);
			break;
		}
	}
	if (!system)
		return;
	for (const char *p = f->text; *p; p++) {
		if (!(isalpha((unsigned char)*p) || *p == '_') || (p > f->text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
			continue;
		size_t wl = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
		int names = 0;
		for (unsigned i = 0; one_name[i] && !names; i++)
			names = strlen(one_name[i]) == wl && !strncmp(p, one_name[i], wl) ? 1 : 0;
		for (unsigned i = 0; two_names[i] && !names; i++)
			names = strlen(two_names[i]) == wl && !strncmp(p, two_names[i], wl) ? 2 : 0;
		const char *q = p + wl, *end;
		while (isspace((unsigned char)*q))
			q++;
		if (!names || *q != '(')
			continue;
		char *args = balanced(q, &end), *tp_proto, *name;
		if (!args || !(tp_proto = strstr(args, "TP_PROTO")))
			continue;
		p = end - 1;
		name = args;
		if (names == 2)
			name = strchr(args, ',') ? strchr(args, ',') + 1 : args;
		name = trim(tr_strndup(name, strcspn(name, ",")));
		const char *pe;
		char *proto = balanced(tp_proto + strcspn(tp_proto, "("), &pe);
		struct tr_ktrace *tp = tr_alloc(sizeof(*tp));
		tp->system = system;
		tp->name = name;
		if (!is_ident(name) || !proto || !split_params(proto, tp))
			continue;
		tr_vec_push(out, tp);
	}
}

static int cmp_ktrace(const void *a, const void *b)
{
	const struct tr_ktrace *x = *(struct tr_ktrace *const *)a, *y = *(struct tr_ktrace *const *)b;
	int c = strcmp(x->system ? x->system : "", y->system ? y->system : "");

	return c ? c : strcmp(x->name, y->name);
}

/* The running kernel's tracefs events directory, or NULL */
static const char *tracefs_dir(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_TRACEFS");
	const char *cands[] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
	struct utsname u;
	struct stat st;

	if (env && *env)
		return tr_printf("%s/events", env);
	if (uname(&u) || strcmp(s->kernel_vr, u.release))
		return NULL;
	for (unsigned i = 0; i < 2; i++)
		if (stat(cands[i], &st) == 0 && S_ISDIR(st.st_mode) && access(cands[i], R_OK | X_OK) == 0)
			return cands[i];
	return NULL;
}

/* tracefs's events as entries without parameters */
static void read_tracefs(const char *dir, struct tr_vec *out)
{
	DIR *d = opendir(dir), *sd;
	struct dirent *e, *se;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !(sd = opendir(tr_printf("%s/%s", dir, e->d_name))))
			continue;
		const char *system = tr_strdup(e->d_name);
		while ((se = readdir(sd))) {
			struct stat st;
			if (se->d_name[0] == '.' || !is_ident(se->d_name) ||
			    stat(tr_printf("%s/%s/%s", dir, system, se->d_name), &st) || !S_ISDIR(st.st_mode))
				continue;
			struct tr_ktrace *tp = tr_alloc(sizeof(*tp));
			tp->system = system;
			tp->name = tr_strdup(se->d_name);
			tp->not_tracepoint = true;   /* until headers or BTF know it */
			tr_vec_push(out, tp);
		}
		closedir(sd);
	}
	if (d)
		closedir(d);
}

static int cmp_name(const void *a, const void *b)
{
	const struct tr_ktrace *x = *(struct tr_ktrace *const *)a, *y = *(struct tr_ktrace *const *)b;

	return strcmp(x->name, y->name);
}

static struct tr_ktrace *find_name(const struct tr_vec *by_name, const char *name)
{
	struct tr_ktrace key = { .name = name }, *k = &key, **hit;

	hit = by_name->n ? bsearch(&k, by_name->items, by_name->n, sizeof(void *), cmp_name) : NULL;
	return hit ? *hit : NULL;
}

const char *tr_ktrace_not_tracepoint(const char *pattern)
{
	const char *colon = strchr(pattern, ':');
	const char *name = colon ? colon + 1 : pattern;
	bool syscalls = colon ? !strncmp(pattern, "syscalls:", 9) :
		!strncmp(name, "sys_enter_", 10) || !strncmp(name, "sys_exit_", 9);

	if (!syscalls)
		return NULL;
	return "the syscalls:sys_enter_* and sys_exit_* events are no tracepoints: the kernel's "
	       "syscall tracing makes them from the raw_syscalls:sys_enter and sys_exit tracepoints "
	       "for ftrace and perf; probe syscall.NAME (or nd_syscall.NAME), or "
	       "kernel.trace(\"raw_syscalls:sys_enter\") with its $id and $regs";
}

/*
 * Headers, tracefs and BTF into one list: an entry per name, SYSTEM from
 * the headers, else tracefs; in_btf where BTF has the prototype; why
 * for those that cannot run.
 */
static void merge(struct tr_session *s, struct tr_vec *all, const struct tr_vec *events,
		  const struct tr_vec *btf_names, const char *btf_why)
{
	struct tr_vec by_name = {0};
	unsigned k = 0, headers;

	/* a tracepoint defined twice (under #ifdef branches): the first */
	qsort(all->items, all->n, sizeof(void *), cmp_ktrace);
	for (unsigned i = 0; i < all->n; i++)
		if (!k || cmp_ktrace(&all->items[i], &all->items[k - 1]))
			all->items[k++] = all->items[i];
	all->n = headers = k;
	for (unsigned i = 0; i < headers; i++)
		tr_vec_push(&by_name, all->items[i]);
	qsort(by_name.items, by_name.n, sizeof(void *), cmp_name);
	for (unsigned i = 0; i < events->n; i++)   /* tracefs: the events no header has */
		if (!find_name(&by_name, ((struct tr_ktrace *)events->items[i])->name))
			tr_vec_push(all, events->items[i]);
	by_name.n = 0;
	for (unsigned i = 0; i < all->n; i++)
		tr_vec_push(&by_name, all->items[i]);
	qsort(by_name.items, by_name.n, sizeof(void *), cmp_name);
	for (unsigned i = 0; i < btf_names->n; i++) {
		struct tr_ktrace *tp = find_name(&by_name, btf_names->items[i]);
		if (!tp) {   /* no header, no event: its SYSTEM unknown */
			tp = tr_alloc(sizeof(*tp));
			tp->name = btf_names->items[i];
			tr_vec_push(all, tp);
		}
		tp->in_btf = true;
		tp->not_tracepoint = false;
	}
	for (unsigned i = 0; i < all->n; i++) {
		struct tr_ktrace *tp = all->items[i];
		const char *sys = tp->system ? tp->system : "";
		if (tp->in_btf)
			continue;
		if (tp->not_tracepoint)
			tp->why = tr_ktrace_not_tracepoint(tr_printf("%s:%s", sys, tp->name));
		if (tp->not_tracepoint && !tp->why)
			tp->why = btf_why ? tr_printf("the event %s:%s is no tracepoint the kernel's headers "
						      "name, and there is no BTF to say (%s)", sys, tp->name, btf_why) :
				  tr_printf("the event %s:%s is no tracepoint of vmlinux (the kernel's BTF has "
					    "no btf_trace_%s, nor does a module's): an event the kernel makes "
					    "otherwise (ftrace, kprobe or synthetic events)", sys,
					    tp->name, tp->name);
		else if (!tp->not_tracepoint)
			tp->why = btf_why ? tr_printf("no BTF for kernel %s, whose prototype marktap.ko "
						      "needs to attach it (%s)", s->kernel_vr, btf_why) :
				  tr_printf("the kernel's BTF has no btf_trace_%s: no tracepoint of "
					    "this kernel's vmlinux, nor of a module marktap found (configured "
					    "out, or in a module not in MARKTAP_MODULE_PATH or /lib/modules)",
					    tp->name);
	}
	free(by_name.items);
}

int tr_ktrace_points(struct tr_session *s, struct tr_vec *out, char **errmsg)
{
	static struct tr_vec all;
	static bool loaded;
	const char *dir, *btf_why = NULL, *tdir;
	struct tr_vec events = {0}, btf_names = {0};

	if (!loaded) {
		dir = events_dir(s);
		if (tr_btf_tracepoints(s, &btf_names, &btf_why))
			btf_names.n = 0;
		else
			btf_why = NULL;
		if (!dir && btf_why) {
			*errmsg = tr_printf("no kernel headers with include/trace/events for kernel %s "
					    "(install linux-headers-%s, or set MARKTAP_KERNEL_HEADERS), and %s",
					    s->kernel_vr, s->kernel_vr, btf_why);
			return -1;
		}
		DIR *d = dir ? opendir(dir) : NULL;
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (strlen(e->d_name) > 2 && !strcmp(e->d_name + strlen(e->d_name) - 2, ".h"))
				read_header(tr_printf("%s/%s", dir, e->d_name), &all);
		if (d)
			closedir(d);
		if ((tdir = tracefs_dir(s)))
			read_tracefs(tdir, &events);
		merge(s, &all, &events, &btf_names, btf_why);
		qsort(all.items, all.n, sizeof(void *), cmp_ktrace);
		free(events.items);
		free(btf_names.items);
		loaded = true;
	}
	/* the caller's own copy of the list: it may free it */
	*out = (struct tr_vec){0};
	for (unsigned i = 0; i < all.n; i++)
		tr_vec_push(out, all.items[i]);
	return 0;
}
