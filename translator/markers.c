/*
 * markers.c - where probe points find their markers.
 *
 * Kernel markers: the catalogue markers.tsv (name TAB "format" TAB ...).
 * User markers: the ".note.marktap" notes of an ELF file (owner "marktap",
 * type 77, descriptor = name NUL format NUL), read from the file alone.
 */
#define _GNU_SOURCE
#include "tr_points.h"
#include "mt_notes.h"
#include "mt_sdt.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MT_NOTE_TYPE 77

static const char *markers_path(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_MARKERS");

	const char *path = tr_printf("%s/markers.tsv", s->pkgdatadir);

	if (env)
		return env;
#ifdef MT_SRCDIR
	if (access(path, R_OK) != 0)
		return MT_SRCDIR "/tapsets/markers.tsv";
#endif
	return path;
}

int tr_markers_kernel(struct tr_session *s, struct tr_vec *out)
{
	static struct tr_vec cache;
	static bool loaded;
	const char *path = markers_path(s);
	char line[1024];
	FILE *fp;

	if (loaded) {
		for (unsigned i = 0; i < cache.n; i++)
			tr_vec_push(out, cache.items[i]);
		return 0;
	}
	fp = fopen(path, "r");
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		char *name = line, *fmt, *end;
		struct tr_marker *m;

		line[strcspn(line, "\n")] = '\0';
		fmt = strchr(line, '\t');
		if (!fmt || !strncmp(line, "name\t", 5))
			continue;
		*fmt++ = '\0';
		end = strchr(fmt, '\t');
		if (end)
			*end = '\0';
		/* The format is quoted as in the source: "fd %d". */
		if (*fmt == '"') {
			fmt++;
			size_t n = strlen(fmt);
			if (n && fmt[n - 1] == '"')
				fmt[n - 1] = '\0';
		}
		if (!strcmp(fmt, "MARK_NOARGS"))
			fmt = " ";
		m = tr_alloc(sizeof(*m));
		m->name = tr_strdup(name);
		m->format = tr_unescape(fmt, NULL);
		m->where = "kernel";
		tr_vec_push(&cache, m);
	}
	fclose(fp);
	loaded = true;
	for (unsigned i = 0; i < cache.n; i++)
		tr_vec_push(out, cache.items[i]);
	return 0;
}

struct note_ctx {
	struct tr_vec *out;
};

/* One (name, format) of the file, from mt_notes_read (runtime/tools/mt_notes.c). */
static int add_note(const char *path, const char *name, const char *format, void *arg)
{
	struct note_ctx *c = arg;
	struct tr_marker *m;

	/* One entry per name and file, as stap lists a mark once. */
	for (unsigned i = 0; i < c->out->n; i++) {
		const struct tr_marker *o = c->out->items[i];
		if (!strcmp(o->name, name) && !strcmp(o->where, path))
			return 0;
	}
	m = tr_alloc(sizeof(*m));
	m->name = tr_strdup(name);
	m->format = tr_strdup(format);
	m->where = tr_strdup(path);
	tr_vec_push(c->out, m);
	return 0;
}

int tr_markers_elf(const char *path, struct tr_vec *out, char **errmsg)
{
	struct note_ctx c = { out };
	char err[512];

	if (mt_notes_read(path, add_note, &c, err, sizeof(err)) < 0) {
		*errmsg = tr_strdup(err);
		return -1;
	}
	return 0;
}

int tr_markers_sdt(const char *path, struct tr_vec *out, char **errmsg)
{
	struct mt_sdt_probe *p;
	size_t n;
	char err[512];
	unsigned first = out->n;

	if (mt_sdt_read(path, &p, &n, err, sizeof(err)) < 0) {
		*errmsg = tr_strdup(err);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct tr_marker *m;
		struct tr_buf fmt = {0};
		bool dup = false;

		if (!strcmp(p[i].provider, "marktap"))
			continue;
		for (unsigned k = first; k < out->n && !dup; k++) {
			const struct tr_marker *o = out->items[k];
			dup = !strcmp(o->provider, p[i].provider) && !strcmp(o->name, p[i].name);
		}
		if (dup)
			continue;
		for (int a = 0; a < p[i].nargs && a < MT_SDT_MAXARGS; a++)
			tr_buf_printf(&fmt, "%sarg%d %%ld", a ? " " : "", a + 1);
		m = tr_alloc(sizeof(*m));
		m->name = tr_strdup(p[i].name);
		m->provider = tr_strdup(p[i].provider);
		m->format = p[i].nargs ? tr_strdup(tr_buf_str(&fmt)) : " ";
		m->where = tr_strdup(path);
		free(fmt.data);
		tr_vec_push(out, m);
	}
	mt_sdt_free(p, n);
	return 0;
}
