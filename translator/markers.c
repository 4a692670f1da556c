/*
 * markers.c - where probe points find their markers.
 *
 * Kernel markers: the catalogue markers.tsv (name TAB "format" TAB ...).
 * User markers: the ".note.marktap" notes of an ELF file (owner "marktap",
 * type 77, descriptor = name NUL format NUL), read from the file alone.
 */
#define _GNU_SOURCE
#include "tr.h"

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

static void scan_notes(Elf_Data *data, const char *path, struct tr_vec *out)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *owner = (const char *)data->d_buf + name_off;
		const char *desc = (const char *)data->d_buf + desc_off;
		size_t nlen;

		if (nh.n_type != MT_NOTE_TYPE || nh.n_namesz != 8 || memcmp(owner, "marktap", 8))
			continue;
		nlen = strnlen(desc, nh.n_descsz);
		if (nlen + 1 >= nh.n_descsz)
			continue;
		struct tr_marker *m = tr_alloc(sizeof(*m));
		m->name = tr_strndup(desc, nlen);
		m->format = tr_strndup(desc + nlen + 1, strnlen(desc + nlen + 1, nh.n_descsz - nlen - 1));
		m->where = path;
		/* One note per site: a marker used twice is listed once. */
		bool dup = false;
		for (unsigned i = 0; i < out->n && !dup; i++) {
			const struct tr_marker *o = out->items[i];
			dup = !strcmp(o->name, m->name) && !strcmp(o->where, path);
		}
		if (!dup)
			tr_vec_push(out, m);
	}
}

int tr_markers_elf(const char *path, struct tr_vec *out, char **errmsg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (fd < 0) {
		*errmsg = tr_printf("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		*errmsg = tr_printf("%s is not an ELF file", path);
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.marktap"))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (data)
			scan_notes(data, path, out);
	}
	elf_end(elf);
	close(fd);
	return 0;
}
