/*
 * elab_tapset.c - pass 2, first step: the library a script may use.
 *
 * Takes the parsed user scripts (pass 1).  The tapset directories
 * (-I's, then MARKTAP_TAPSET_DIR or the installed one) are read in name
 * order, .stpm macro files before any .stp file.  A .stp file is read and
 * indexed (the functions, globals and alias names it defines, by a scan
 * that skips comments, strings and embedded code), and parsed only when
 * the next steps look up one of its names (tr_elab_tapset_need): most
 * scripts use a few of the tapsets' 500 KB.  Every global, function and
 * probe alias of the user's scripts and of the parsed tapsets is in the
 * session (s->all_globals, all_funcs, all_aliases), where the next steps
 * look names up; what is used is decided later (elab_bind.c).
 */
#define _GNU_SOURCE
#include "elab_int.h"

#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A tapset file, read, with the names it defines ("fNAME" a function,
 * "gNAME" a global, "aNAME" the first component of an alias's name) */
struct tapset_file {
	struct tr_file *f;
	struct tr_vec names;
	bool parsed;
};

static const char *skip_space(const char *p, const char *end)
{
	while (p < end) {
		if (isspace((unsigned char)*p)) {
			p++;
		} else if (*p == '#' || (*p == '/' && p + 1 < end && p[1] == '/')) {
			while (p < end && *p != '\n')
				p++;
		} else if (*p == '/' && p + 1 < end && p[1] == '*') {
			const char *e = p + 2;
			while (e + 1 < end && !(e[0] == '*' && e[1] == '/'))
				e++;
			p = e + 1 < end ? e + 2 : end;
		} else {
			break;
		}
	}
	return p;
}

static const char *word(const char *p, const char *end, size_t *len)
{
	const char *w = p;

	while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
		p++;
	*len = (size_t)(p - w);
	return w;
}

/*
 * The names a tapset's text defines at its top level: what follows
 * "function", "global" (up to the line's end) and "probe ... =" / "+=".
 * A superset is harmless (a file parsed that need not be); a name missed
 * would hide a definition, so anything unclear keeps scanning.
 */
static void index_text(struct tapset_file *t)
{
	const char *p = t->f->text, *end = p + t->f->len;
	int depth = 0;

	while ((p = skip_space(p, end)) < end) {
		size_t n;
		const char *w;
		if (*p == '"') {   /* a string: its escapes */
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && p + 1 < end)
					p++;
			p++;
			continue;
		}
		if (*p == '%' && p + 1 < end && p[1] == '{') {   /* embedded code */
			const char *e = p + 2;
			while (e + 1 < end && !(e[0] == '%' && e[1] == '}'))
				e++;
			p = e + 1 < end ? e + 2 : end;
			continue;
		}
		if (*p == '{' || *p == '}') {
			depth += *p == '{' ? 1 : -1;
			p++;
			continue;
		}
		w = word(p, end, &n);
		if (!n) {
			p++;
			continue;
		}
		p = w + n;
		if (depth > 0)
			continue;
		if (n == 8 && !memcmp(w, "function", 8)) {
			w = word(skip_space(p, end), end, &n);
			if (n)
				tr_vec_push(&t->names, tr_printf("f%.*s", (int)n, w));
		} else if (n == 6 && !memcmp(w, "global", 6)) {
			while (p < end && *p != '\n') {   /* "global a, b[10], c = 1" */
				w = word(p, end, &n);
				if (n && !isdigit((unsigned char)w[0]))
					tr_vec_push(&t->names, tr_printf("g%.*s", (int)n, w));
				p = n ? w + n : p + 1;
			}
		} else if (n == 5 && !memcmp(w, "probe", 5)) {
			/* "probe a.b, c.d = ..." an alias; "probe x { }" a probe */
			const char *q = p, *first = NULL;
			size_t fn = 0;
			struct tr_vec firsts = {0};
			bool alias = false, at_start = true;
			while ((q = skip_space(q, end)) < end && *q != '{') {
				if (*q == '=' || (*q == '+' && q + 1 < end && q[1] == '=')) {
					alias = true;
					break;
				}
				if (*q == '"') {
					for (q++; q < end && *q != '"'; q++)
						if (*q == '\\' && q + 1 < end)
							q++;
					q++;
					continue;
				}
				if (*q == ',')
					at_start = true;
				first = word(q, end, &fn);
				if (fn && at_start) {
					tr_vec_push(&firsts, tr_printf("a%.*s", (int)fn, first));
					at_start = false;
				}
				q = fn ? first + fn : q + 1;
			}
			for (unsigned i = 0; alias && i < firsts.n; i++)
				tr_vec_push(&t->names, firsts.items[i]);
			free(firsts.items);
			p = q;
		}
	}
}

static void collect_script(struct tr_session *s, struct tr_script *sc);

/* Was kind/name asked for before?  Then every file it names is parsed
 * already: resolving syscall.* asks for "kernel" and the like thousands
 * of times, and each ask matched every name of every file not parsed. */
static bool asked_before(struct tr_session *s, char kind, const char *name)
{
	const char *key = tr_printf("%c%s", kind, name ? name : "");
	uint32_t h = 2166136261u;

	for (const char *c = key; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	if (2 * (s->tapset_asked_n + 1) > s->tapset_asked_cap) {   /* grow: at most half full */
		unsigned cap = s->tapset_asked_cap ? 2 * s->tapset_asked_cap : 256;
		const char **old = s->tapset_asked, **t = tr_alloc(cap * sizeof(*t));
		for (unsigned i = 0; i < s->tapset_asked_cap; i++) {
			if (!old[i])
				continue;
			uint32_t g = 2166136261u;
			for (const char *c = old[i]; *c; c++)
				g = (g ^ (unsigned char)*c) * 16777619u;
			unsigned j = g & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = old[i];
		}
		free(old);
		s->tapset_asked = t;
		s->tapset_asked_cap = cap;
	}
	unsigned j = h & (s->tapset_asked_cap - 1);
	for (; s->tapset_asked[j]; j = (j + 1) & (s->tapset_asked_cap - 1))
		if (!strcmp(s->tapset_asked[j], key))
			return true;
	s->tapset_asked[j] = key;
	s->tapset_asked_n++;
	return false;
}

void tr_elab_tapset_need(struct tr_session *s, char kind, const char *name)
{
	if (s->tapsets_loaded && asked_before(s, kind, name))
		return;
	for (unsigned i = 0; i < s->tapset_index.n; i++) {
		struct tapset_file *t = s->tapset_index.items[i];
		bool want = kind == '*';
		for (unsigned k = 0; !want && !t->parsed && k < t->names.n; k++) {
			const char *n = t->names.items[k];
			want = n[0] == kind && (kind == 'a' ? !fnmatch(name, n + 1, 0) : !strcmp(n + 1, name));
		}
		if (!want || t->parsed)
			continue;
		t->parsed = true;
		struct tr_script *sc = tr_parse(s, t->f);
		tr_vec_push(&s->tapsets, sc);
		collect_script(s, sc);
	}
}

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
				struct tapset_file *t = tr_alloc(sizeof(*t));
				t->f = f;
				index_text(t);
				tr_vec_push(&s->tapset_index, t);
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
void tr_elab_load_macros(struct tr_session *s)
{
	for (unsigned i = 0; i < s->include_dirs.n; i++)
		load_dir(s, s->include_dirs.items[i], 0, 0);
	load_path(s, 0, 0);
}

static void collect_script(struct tr_session *s, struct tr_script *sc)
{
	for (unsigned k = 0; k < sc->globals.n; k++)
		tr_vec_push(&s->all_globals, sc->globals.items[k]);
	for (unsigned k = 0; k < sc->funcs.n; k++)
		tr_vec_push(&s->all_funcs, sc->funcs.items[k]);
	for (unsigned k = 0; k < sc->aliases.n; k++)
		tr_vec_push(&s->all_aliases, sc->aliases.items[k]);
}

/* The tapsets read and indexed, and every global, function and alias of
 * the user's scripts, for the steps that look names up. */
int tr_elab_load_tapsets(struct tr_session *s)
{
	unsigned errors = tr_diag.errors;

	load_tapsets(s);
	if (tr_diag.errors > errors)
		return -1;
	for (unsigned i = 0; i < s->user.n; i++)
		collect_script(s, s->user.items[i]);
	return 0;
}
