/*
 * mt_notes.c - list the marktap notes of an ELF file with libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mt_notes.h"

struct seen {
	char **keys;
	size_t n, cap;
};

static int seen_before(struct seen *s, const char *name, const char *format)
{
	size_t i, len = strlen(name) + strlen(format) + 2;
	char *key = malloc(len);

	if (!key)
		return 1;
	snprintf(key, len, "%s%c%s", name, '\0' + 1, format);
	for (i = 0; i < s->n; i++) {
		if (!strcmp(s->keys[i], key)) {
			free(key);
			return 1;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		char **k = realloc(s->keys, cap * sizeof(*k));
		if (!k) {
			free(key);
			return 1;
		}
		s->keys = k;
		s->cap = cap;
	}
	s->keys[s->n++] = key;
	return 0;
}

static int read_section(const char *path, Elf_Data *data, mt_note_fn fn, void *arg,
			struct seen *seen)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	int rc = 0;

	while (rc == 0 && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *owner = (const char *)data->d_buf + name_off;
		const char *desc = (const char *)data->d_buf + desc_off;
		const char *name, *format;
		size_t nlen;

		if (nh.n_type != MT_NOTE_TYPE || nh.n_namesz != sizeof(MT_NOTE_OWNER) ||
		    memcmp(owner, MT_NOTE_OWNER, sizeof(MT_NOTE_OWNER)) || nh.n_descsz < 3)
			continue;
		name = desc;
		nlen = strnlen(name, nh.n_descsz);
		if (nlen + 1 >= nh.n_descsz || !memchr(desc + nlen + 1, '\0', nh.n_descsz - nlen - 1))
			continue;  /* malformed note: skip it */
		format = desc + nlen + 1;
		if (!seen_before(seen, name, format))
			rc = fn(path, name, format, arg);
	}
	return rc;
}

int mt_notes_read(const char *path, mt_note_fn fn, void *arg, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	struct seen seen = { 0 };
	size_t i;

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) < 0) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	while (rc == 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.marktap"))
			continue;
		data = elf_getdata(scn, NULL);
		if (data)
			rc = read_section(path, data, fn, arg, &seen);
	}
	for (i = 0; i < seen.n; i++)
		free(seen.keys[i]);
	free(seen.keys);
	elf_end(elf);
	close(fd);
	return rc < 0 ? -1 : 0;
}
