/*
 * ksrc.c - which source file of the kernel defines a function.
 *
 * stap reads `kernel.function("*@fs/proc*.c")` from the kernel's DWARF;
 * BTF, which marktap reads, names functions without their files.  The
 * kernel's own source says where each is defined: marktap-ksrc(1) scans
 * a tree (or a distribution's linux-source package) once and writes a
 * map of lines
 *
 *     NAME FILE LINE [init]       vfs_read fs/read_write.c 450
 *
 * one per definition (a static name may have several), FILE relative to
 * the tree's top, sorted by NAME (bytes), after "#" comment lines; "init"
 * marks a function of the init or exit text, which the kernel frees
 * after boot: a glob leaves it out (kprobes refuse it).  A FILE glob matches as stap's: fnmatch without
 * FNM_PATHNAME, so "fs/proc*.c" takes fs/proc/base.c too, and a pattern
 * not starting with '/' or '*' may match at any directory boundary.
 *
 * The map is MARKTAP_KERNEL_SOURCES, else MT_CACHEDIR/kernel-sources-KVER.
 * Only the names both the map and BTF know are probed: a definition the
 * scan missed (a macro's) is not found by its file, as a function BTF
 * lacks is not found by its name.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tr_points.h"

#ifndef MT_CACHEDIR
#define MT_CACHEDIR "/var/cache/marktap"
#endif

static const char *map_text, *map_error, *map_path;
static size_t map_len;

const char *tr_ksrc_path(const struct tr_session *s)
{
	const char *env = getenv("MARKTAP_KERNEL_SOURCES");

	return env && *env ? env : tr_printf("%s/kernel-sources-%s", MT_CACHEDIR, s->kernel_vr);
}

static bool load(const struct tr_session *s)
{
	struct stat st;
	int fd;

	if (map_text || map_error)
		return map_text != NULL;
	map_path = tr_ksrc_path(s);
	fd = open(map_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		map_error = tr_printf("no map of the kernel's sources: %s: %s (marktap-ksrc makes one "
				      "from the kernel's source)", map_path,
				      fd < 0 ? strerror(errno) : "not a non-empty file");
		if (fd >= 0)
			close(fd);
		return false;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		map_error = tr_printf("cannot map %s: %s", map_path, strerror(errno));
		return false;
	}
	map_text = p;
	map_len = (size_t)st.st_size;
	return true;
}

/* stap's file match: the pattern as given, or after any '/' of the path */
static bool file_matches(const char *glob, const char *file)
{
	if (!fnmatch(glob, file, 0))
		return true;
	if (glob[0] == '/' || glob[0] == '*')
		return false;
	for (const char *p = strchr(file, '/'); p; p = strchr(p + 1, '/'))
		if (!fnmatch(glob, p + 1, 0))
			return true;
	return false;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Each map line's fields: false at the end */
static bool next_line(const char **pos, const char *end, char *name, size_t nlen, char *file, size_t flen,
		      long *line, bool *init)
{
	while (*pos < end) {
		const char *nl = memchr(*pos, '\n', (size_t)(end - *pos));
		const char *e = nl ? nl : end, *p = *pos, *sp1, *sp2;

		*pos = nl ? nl + 1 : end;
		if (*p == '#')
			continue;
		sp1 = memchr(p, ' ', (size_t)(e - p));
		sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(e - sp1 - 1)) : NULL;
		if (!sp2 || (size_t)(sp1 - p) >= nlen || (size_t)(sp2 - sp1 - 1) >= flen)
			continue;   /* not a map line: skipped, as a comment */
		memcpy(name, p, (size_t)(sp1 - p));
		name[sp1 - p] = 0;
		memcpy(file, sp1 + 1, (size_t)(sp2 - sp1 - 1));
		file[sp2 - sp1 - 1] = 0;
		char *after;
		*line = strtol(sp2 + 1, &after, 10);
		*init = (size_t)(e - after) >= 5 && !memcmp(after, " init", 5);
		return true;
	}
	return false;
}

int tr_ksrc_filter(const struct tr_session *s, const char *file_glob, bool glob, struct tr_vec *names,
		   const char **why)
{
	struct tr_vec defined = {0};
	char name[256], file[512];
	long line;
	bool init;
	unsigned kept = 0;

	if (!load(s)) {
		*why = map_error;
		return -1;
	}
	for (const char *pos = map_text; next_line(&pos, map_text + map_len, name, sizeof(name), file,
						    sizeof(file), &line, &init);)
		if (!(glob && init) && file_matches(file_glob, file))
			tr_vec_push(&defined, tr_strdup(name));
	qsort(defined.items, defined.n, sizeof(void *), cmp_name);
	for (unsigned i = 0; i < names->n; i++)
		if (defined.n && bsearch(&names->items[i], defined.items, defined.n, sizeof(void *), cmp_name))
			names->items[kept++] = names->items[i];
	names->n = kept;
	free(defined.items);
	return 0;
}

/* The map's lines are sorted by NAME (marktap-ksrc sorts them): the
 * first line of function, by bisection, or NULL */
static const char *first_line_of(const char *function)
{
	size_t lo = 0, hi = map_len, flen = strlen(function);
	const char *found = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *p = map_text + mid;
		while (p > map_text && p[-1] != '\n')
			p--;
		if (*p == '#') {   /* the header, before every name */
			const char *nl = memchr(p, '\n', map_len - (size_t)(p - map_text));
			lo = nl ? (size_t)(nl - map_text) + 1 : map_len;
			continue;
		}
		const char *sp = memchr(p, ' ', map_len - (size_t)(p - map_text));
		size_t len = sp ? (size_t)(sp - p) : 0;
		int c = memcmp(p, function, len < flen ? len : flen);
		if (!c)
			c = len < flen ? -1 : len > flen ? 1 : 0;
		if (c < 0) {
			const char *nl = memchr(p, '\n', map_len - (size_t)(p - map_text));
			lo = nl ? (size_t)(nl - map_text) + 1 : map_len;
		} else {
			if (!c)
				found = p;
			hi = (size_t)(p - map_text);
		}
	}
	return found;
}

const char *tr_ksrc_where(const struct tr_session *s, const char *function)
{
	char name[256], file[512];
	long line;
	struct tr_buf b = {0};
	const char *pos;
	bool init;

	if (!load(s) || !(pos = first_line_of(function)))
		return NULL;
	while (next_line(&pos, map_text + map_len, name, sizeof(name), file, sizeof(file), &line, &init) &&
	       !strcmp(name, function))
		tr_buf_printf(&b, "%s%s:%ld", b.len ? ", " : "", file, line);
	return b.len ? tr_buf_str(&b) : NULL;
}
