/*
 * scripts.c - the analyses shipped with marktap (the .stp files of scripts/), found by
 * name: marktap --script NAME runs NAME.stp, --list-scripts lists them
 * with the first sentence of each one's header comment.
 *
 * Where they are: MARKTAP_SCRIPT_DIR, else the installed directory
 * ($(pkgdatadir)/scripts), else (not installed yet, run from the build
 * tree) the source tree's scripts/, as the tapsets are found
 * (elab_tapset.c).
 *
 * A script's header, the comment it opens with (after a #! line):
 *
 *   # NAME.stp - WHAT IT DOES, over as many lines as it takes.  More.
 *   # Usage: ...
 *
 * The listing's description is WHAT IT DOES up to the first sentence's
 * end (". " or a '.' ending a line).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tr_run.h"

#define DESCRIPTION_MAX 200

const char *tr_script_dir(const struct tr_session *s)
{
	const char *env = getenv("MARKTAP_SCRIPT_DIR");
	const char *dir = tr_printf("%s/scripts", s->pkgdatadir);
	struct stat st;

	if (env && *env)
		return env;
#ifdef MT_SRCDIR
	if (stat(dir, &st) != 0)
		return MT_SRCDIR "/scripts";
#else
	(void)st;
#endif
	return dir;
}

/* A name is a script's base name: no directory, nothing hidden. */
static int plain_name(const char *name)
{
	return *name && *name != '.' && !strchr(name, '/');
}

const char *tr_script_find(const struct tr_session *s, const char *name, char **errmsg)
{
	const char *dir = tr_script_dir(s);
	size_t n = strlen(name);
	const char *path;

	if (!plain_name(name)) {
		*errmsg = tr_printf("--script takes the name of an analysis (cputop), not a path: '%s'", name);
		return NULL;
	}
	if (n > 4 && !strcmp(name + n - 4, ".stp"))
		n -= 4;
	path = tr_printf("%s/%.*s.stp", dir, (int)n, name);
	if (access(path, R_OK) != 0) {
		*errmsg = tr_printf("no analysis '%.*s' in %s ('marktap --list-scripts' lists them)",
				    (int)n, name, dir);
		return NULL;
	}
	return path;
}

/* The first sentence of the header comment, on one line. */
static void describe(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t len = 0;
	int started = 0;

	*out = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && len + 1 < size) {
		char *p = line, *dash, *end;
		if (!strncmp(line, "#!", 2))
			continue;
		if (*p != '#')
			break;
		p += 1 + strspn(p + 1, " \t");
		p[strcspn(p, "\n")] = 0;
		if (!started) {
			if (!(dash = strstr(p, " - ")))
				break;
			p = dash + 3;
			started = 1;
		}
		if (!*p)
			break;
		end = strstr(p, ". ");
		if (!end && p[strlen(p) - 1] == '.')
			end = p + strlen(p) - 1;
		len += (size_t)snprintf(out + len, size - len, "%s%.*s", len ? " " : "",
					end ? (int)(end - p + 1) : (int)strlen(p), p);
		if (end)
			break;
	}
	fclose(f);
	if (len >= size - 1 && size > 4)
		memcpy(out + size - 4, "...", 4);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int tr_script_list(const struct tr_session *s, FILE *out)
{
	const char *dir = tr_script_dir(s);
	DIR *d = opendir(dir);
	struct dirent *e;
	struct tr_vec names = {0};

	if (!d) {
		fprintf(stderr, "marktap: cannot list the analyses in %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 4 && plain_name(e->d_name) && !strcmp(e->d_name + n - 4, ".stp"))
			tr_vec_push(&names, tr_strndup(e->d_name, n - 4));
	}
	closedir(d);
	if (names.n)
		qsort(names.items, names.n, sizeof(names.items[0]), by_name);
	for (unsigned i = 0; i < names.n; i++) {
		char text[DESCRIPTION_MAX];
		describe(tr_printf("%s/%s.stp", dir, (const char *)names.items[i]), text, sizeof(text));
		fprintf(out, "%-16s %s\n", (const char *)names.items[i], text);
	}
	free(names.items);
	return 0;
}
