/*
 * elab_tapset.c - pass 2, first step: the library a script may use.
 *
 * Takes the parsed user scripts (pass 1).  The tapset directories
 * (-I's, then MARKTAP_TAPSET_DIR or the installed one) are read in name
 * order, .stpm macro files before any .stp file, and every .stp file is
 * parsed whole.  Then every global, function and probe alias of the
 * user's scripts and the tapsets is collected into the session
 * (s->all_globals, all_funcs, all_aliases), where the next steps look
 * names up; what is used is decided later (elab_bind.c).
 */
#define _GNU_SOURCE
#include "elab_int.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
void tr_elab_load_macros(struct tr_session *s)
{
	for (unsigned i = 0; i < s->include_dirs.n; i++)
		load_dir(s, s->include_dirs.items[i], 0, 0);
	load_path(s, 0, 0);
}

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

/* The tapsets, and every global, function and alias of the scripts and
 * the tapsets, for the steps that look names up. */
int tr_elab_load_tapsets(struct tr_session *s)
{
	unsigned errors = tr_diag.errors;

	load_tapsets(s);
	if (tr_diag.errors > errors)
		return -1;
	collect(s, &s->user);
	collect(s, &s->tapsets);
	return 0;
}
