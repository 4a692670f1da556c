/*
 * libpath.c - which ELF objects marktap can probe, and where the dynamic
 * linker finds a shared object by its name.
 *
 * SystemTap's examples name libraries the Fedora way: "/lib64/libc.so.6",
 * or libc.so.6 under the pattern "/lib*" (matching /lib, /lib32, /lib64).
 * On a multiarch system (Debian) the first names nothing and the second
 * only the 32-bit /usr/lib32/libc.so.6; the library a 64-bit program
 * loads is /lib/x86_64-linux-gnu/libc.so.6.
 * tr_libpath_find looks such a name up where ld.so would: LD_LIBRARY_PATH,
 * the directories of /etc/ld.so.conf (its includes followed), the
 * multiarch directories, /lib64, /usr/lib64, /lib, /usr/lib; objects of
 * another ELF class or machine are passed over as ld.so passes them.
 */
#define _GNU_SOURCE
#include "tr_points.h"

#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#define HOST_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#define HOST_MULTIARCH "aarch64-linux-gnu"
#else
#define HOST_MACHINE EM_NONE    /* any machine */
#define HOST_MULTIARCH NULL
#endif

const char *tr_libpath_foreign(const char *path)
{
	Elf64_Ehdr eh;
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (!fp)
		return "not readable";
	n = fread(&eh, 1, sizeof(eh), fp);
	fclose(fp);
	if (n < EI_NIDENT || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return "not an ELF file";
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return "a 32-bit ELF file";
	if (n < sizeof(eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return "not a little-endian ELF file";
	if (HOST_MACHINE != EM_NONE && eh.e_machine != HOST_MACHINE)
		return tr_printf("an ELF file of another machine (e_machine %u)", eh.e_machine);
	return NULL;
}

static void add_dir(struct tr_vec *dirs, const char *dir)
{
	if (dir[0] != '/')
		return;   /* ldconfig ignores relative entries too */
	for (unsigned i = 0; i < dirs->n; i++)
		if (!strcmp(dirs->items[i], dir))
			return;
	tr_vec_push(dirs, tr_strdup(dir));
}

/* The directories of an ld.so.conf file: one or more a line (blanks,
 * ':' or ',' between them; ldconfig's old "DIR=TYPE" form too), "#"
 * comments, "include GLOB" (relative to the including file's
 * directory), "hwcap" lines ignored.  depth bounds include cycles. */
static void read_conf(struct tr_vec *dirs, const char *conf, unsigned depth)
{
	FILE *fp = depth < 8 ? fopen(conf, "r") : NULL;
	char line[PATH_MAX + 64];

	while (fp && fgets(line, sizeof(line), fp)) {
		char *p = line, *tok;
		line[strcspn(line, "#\n")] = '\0';
		p += strspn(p, " \t");
		if (!strncmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
			glob_t g;
			p += 7 + strspn(p + 7, " \t");
			p[strcspn(p, " \t")] = '\0';
			const char *pat = p[0] == '/' ? p
					  : tr_printf("%.*s/%s", (int)(strrchr(conf, '/') - conf), conf, p);
			if (glob(pat, 0, NULL, &g) == 0)
				for (size_t i = 0; i < g.gl_pathc; i++)
					read_conf(dirs, g.gl_pathv[i], depth + 1);
			globfree(&g);
			continue;
		}
		if (!strncmp(p, "hwcap", 5))
			continue;
		for (tok = strtok(p, " \t:,"); tok; tok = strtok(NULL, " \t:,")) {
			tok[strcspn(tok, "=")] = '\0';
			add_dir(dirs, tok);
		}
	}
	if (fp)
		fclose(fp);
}

/* ld.so's search order, as far as it does not depend on the program. */
static const struct tr_vec *linker_dirs(void)
{
	static struct tr_vec dirs;
	static bool done;
	const char *env = getenv("LD_LIBRARY_PATH");

	if (done)
		return &dirs;
	done = true;
	while (env && *env) {
		size_t n = strcspn(env, ":;");
		add_dir(&dirs, tr_strndup(env, n));
		env += n + (env[n] != '\0');
	}
	read_conf(&dirs, "/etc/ld.so.conf", 0);
	if (HOST_MULTIARCH) {
		add_dir(&dirs, "/lib/" HOST_MULTIARCH);
		add_dir(&dirs, "/usr/lib/" HOST_MULTIARCH);
	}
	add_dir(&dirs, "/lib64");
	add_dir(&dirs, "/usr/lib64");
	add_dir(&dirs, "/lib");
	add_dir(&dirs, "/usr/lib");
	return &dirs;
}

static bool in_list(const struct tr_vec *v, const char *s)
{
	for (unsigned i = 0; i < v->n; i++)
		if (!strcmp(v->items[i], s))
			return true;
	return false;
}

/* Files of dirs (or of the directories in PATH) named by pattern. */
static unsigned find_in(const struct tr_vec *dirs, const char *pattern, bool programs, struct tr_vec *found,
			struct tr_buf *left_out)
{
	struct tr_vec names = {0}, seen = {0};

	for (unsigned d = 0; d < dirs->n; d++) {
		glob_t g;
		if (glob(tr_printf("%s/%s", (const char *)dirs->items[d], pattern), 0, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *name = strrchr(g.gl_pathv[i], '/') + 1, *why;
			char real[PATH_MAX];
			struct stat st;
			if (in_list(&names, name) || !realpath(g.gl_pathv[i], real) || in_list(&seen, real) ||
			    stat(real, &st) != 0 || !S_ISREG(st.st_mode) || (programs && access(real, X_OK)))
				continue;
			tr_vec_push(&seen, tr_strdup(real));
			if ((why = tr_libpath_foreign(real)) != NULL) {
				if (left_out)
					tr_buf_printf(left_out, "%s%s is %s", left_out->len ? "; " : "", real, why);
				continue;   /* ld.so goes on searching, as here */
			}
			tr_vec_push(&names, tr_strdup(name));   /* the first directory wins */
			tr_vec_push(found, tr_strdup(real));
		}
		globfree(&g);
	}
	free(names.items);
	free(seen.items);
	return names.n;
}

static const struct tr_vec *path_dirs(void)
{
	static struct tr_vec dirs;
	static bool done;
	const char *env = getenv("PATH");

	while (!done && env && *env) {
		size_t n = strcspn(env, ":");
		add_dir(&dirs, tr_strndup(env, n));
		env += n + (env[n] != '\0');
	}
	done = true;
	return &dirs;
}

const char *tr_libpath_where(const char *pattern)
{
	if (strstr(pattern, ".so"))
		return "where the dynamic linker looks";
	if (!pattern[strcspn(pattern, "*?[")])
		return "in PATH";
	return NULL;
}

unsigned tr_libpath_find(const char *pattern, struct tr_vec *found, struct tr_buf *left_out)
{
	if (strstr(pattern, ".so"))
		return find_in(linker_dirs(), pattern, false, found, left_out);
	if (!pattern[strcspn(pattern, "*?[")])
		return find_in(path_dirs(), pattern, true, found, left_out);
	return 0;
}

const char *tr_libpath_library(const char *name)
{
	struct tr_vec found = {0};
	const char *path = name;

	if (!strchr(name, '/') && find_in(linker_dirs(), name, false, &found, NULL))
		path = found.items[0];
	free(found.items);
	return path;
}

/* The DT_NEEDED names of the ELF file at path, pushed to names, and its
 * DT_RUNPATH (or DT_RPATH) in *runpath, "" when none. */
static void needed_names(const char *path, struct tr_vec *names, const char **runpath)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;

	*runpath = "";
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *n;
			if (!gelf_getdyn(d, (int)i, &dyn) ||
			    (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH) ||
			    !(n = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)))
				continue;
			if (dyn.d_tag == DT_NEEDED)
				tr_vec_push(names, tr_strdup(n));
			else if (dyn.d_tag == DT_RUNPATH || !**runpath)
				*runpath = tr_strdup(n);
		}
	}
	elf_end(elf);
	close(fd);
}

/* Library name as the object at path finds it: in its run path first
 * ($ORIGIN its directory), else where ld.so looks. */
static const char *needed_library(const char *path, const char *runpath, const char *name)
{
	while (*runpath) {
		size_t n = strcspn(runpath, ":");
		const char *dir = tr_printf("%.*s", (int)n, runpath), *f;
		if (!strncmp(dir, "$ORIGIN", 7))
			dir = tr_printf("%.*s%s", (int)(strrchr(path, '/') - path), path, dir + 7);
		f = tr_printf("%s/%s", dir, name);
		if (access(f, R_OK) == 0 && !tr_libpath_foreign(f))
			return f;
		runpath += n + (runpath[n] == ':');
	}
	return tr_libpath_library(name);
}

unsigned tr_libpath_needed(const char *exe, const char *pattern, struct tr_vec *found)
{
	struct tr_vec seen = {0};
	unsigned n = 0;

	tr_vec_push(&seen, (void *)exe);
	for (unsigned i = 0; i < seen.n; i++) {   /* breadth first, each object once */
		struct tr_vec names = {0};
		const char *runpath;
		needed_names(seen.items[i], &names, &runpath);
		for (unsigned k = 0; k < names.n; k++) {
			const char *lib = needed_library(seen.items[i], runpath, names.items[k]);
			if (!strchr(lib, '/') || in_list(&seen, lib))
				continue;
			tr_vec_push(&seen, (void *)lib);
			if (!fnmatch(pattern, strrchr(lib, '/') + 1, 0) || !fnmatch(pattern, names.items[k], 0)) {
				tr_vec_push(found, (void *)lib);
				n++;
			}
		}
		free(names.items);
	}
	free(seen.items);
	return n;
}
