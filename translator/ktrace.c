/*
 * ktrace.c - the kernel's tracepoints, for kernel.trace("NAME").
 *
 * stap learns a tracepoint's parameters by compiling the kernel's
 * include/trace/events/SYSTEM.h; marktap reads the same headers as text:
 * each TRACE_EVENT*(name, TP_PROTO(params), ...) and
 * DEFINE_EVENT*(class, name, TP_PROTO(params), ...) is one tracepoint
 * "SYSTEM:name" (SYSTEM from the header's "#define TRACE_SYSTEM"), whose
 * parameters ("struct task_struct *prev") are its $variables.  The
 * headers are the kernel's of the session (-r KVER, else the running
 * one): /lib/modules/KVER/source or build, whichever has them, or the
 * directory MARKTAP_KERNEL_HEADERS names.
 */
#define _GNU_SOURCE
#include "tr_points.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

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
	int c = strcmp(x->system, y->system);

	return c ? c : strcmp(x->name, y->name);
}

int tr_ktrace_points(struct tr_session *s, struct tr_vec *out, char **errmsg)
{
	static struct tr_vec all;
	static bool loaded;
	const char *dir;

	if (!loaded) {
		if (!(dir = events_dir(s))) {
			*errmsg = tr_printf("no kernel headers with include/trace/events for kernel %s "
					    "(install linux-headers-%s, or set MARKTAP_KERNEL_HEADERS)",
					    s->kernel_vr, s->kernel_vr);
			return -1;
		}
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (strlen(e->d_name) > 2 && !strcmp(e->d_name + strlen(e->d_name) - 2, ".h"))
				read_header(tr_printf("%s/%s", dir, e->d_name), &all);
		if (d)
			closedir(d);
		qsort(all.items, all.n, sizeof(void *), cmp_ktrace);
		/* a tracepoint defined twice (under #ifdef branches): the first */
		unsigned k = 0;
		for (unsigned i = 0; i < all.n; i++)
			if (!k || cmp_ktrace(&all.items[i], &all.items[k - 1]))
				all.items[k++] = all.items[i];
		all.n = k;
		loaded = true;
	}
	*out = all;
	return 0;
}
