/*
 * statedump.c - say where each object of the process is loaded.
 *
 * A `#p` field of a user trace holds an address in the traced process; to
 * name the function there after the process is gone, the trace must tell
 * which object was loaded at which base.  When a process records a marker
 * with a pointer field (#p or %p: record.c decides when) we walk the loaded
 * objects and write one event per object into the normal event stream;
 * again in a forked child, and for an object with markers dlopen brings:
 *
 *   marktap_statedump:bin_info: baddr=0x55d0c0a00000 memsz=16424
 *       path="/usr/bin/app" build_id="3f1c..."
 *
 * baddr is the load bias (symbol values of the file plus baddr are the
 * addresses in the process), memsz the end of the last PT_LOAD segment
 * relative to it, build_id the GNU build id in hex ("" when the object has
 * none).  A marktap_statedump:start event (no field) comes before each
 * walk of every object: the process's list starts again (after exec, the
 * pid is the same).  marktrace view keeps these per pid
 * (doc/marktrace-view.md); the same base seen again replaces the object.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mt_lib.h"

#define BIN_INFO_NAME   "marktap_statedump:bin_info"
#define BIN_INFO_FORMAT "baddr #p%lu memsz %lu path %s build_id %s"
#define BUILD_ID_MAX    64      /* bytes; sha1 ids are 20 */

#define START_NAME      "marktap_statedump:start"
#define START_FORMAT    " "     /* MARK_NOARGS */

/* The event classes in the current session (statedump runs with the
 * registry lock held, or in a forked child before it has other threads). */
static struct mt_marker_rt bin_info_rt = { .event_id = -1 };
static struct mt_marker_rt start_rt = { .event_id = -1 };
static const struct mt_session *bin_info_session;

/* What was dumped, for a forked child: it repeats these for its own pid
 * without walking the loader's list (whose lock another thread of the
 * parent may have held at fork). */
struct dumped {
	unsigned long base, memsz;
	char *path;
	char build_id[2 * BUILD_ID_MAX + 1];
};
static struct dumped *dumped;
static size_t ndumped, dumped_cap;
static pthread_mutex_t dumped_mutex = PTHREAD_MUTEX_INITIALIZER;

void mt_statedump_lock(void) { pthread_mutex_lock(&dumped_mutex); }
void mt_statedump_unlock(void) { pthread_mutex_unlock(&dumped_mutex); }

static void remember(unsigned long base, unsigned long memsz, const char *path,
		     const char *build_id)
{
	struct dumped *d = NULL;
	char *copy = strdup(path);
	size_t i;

	if (!copy)
		return;
	mt_statedump_lock();
	for (i = 0; i < ndumped; i++)
		if (dumped[i].base == base)
			d = &dumped[i];
	if (!d) {
		if (ndumped == dumped_cap) {
			size_t cap = dumped_cap ? 2 * dumped_cap : 16;
			struct dumped *n = realloc(dumped, cap * sizeof(*n));
			if (!n) {
				mt_statedump_unlock();
				free(copy);
				return;
			}
			dumped = n;
			dumped_cap = cap;
		}
		d = &dumped[ndumped++];
		d->path = NULL;
	}
	free(d->path);
	d->base = base;
	d->memsz = memsz;
	d->path = copy;
	snprintf(d->build_id, sizeof(d->build_id), "%s", build_id);
	mt_statedump_unlock();
}

static void emit(struct mt_marker_rt *rt, ...)
{
	va_list ap;

	va_start(ap, rt);
	mt_record_hit(NULL, rt, ap);
	va_end(ap);
}

/* The GNU build id of an object from its PT_NOTE segments, in hex. */
static void build_id_hex(const struct dl_phdr_info *info, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	out[0] = '\0';
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t namesz = (n->n_namesz + 3) & ~(size_t)3;
			size_t descsz = (n->n_descsz + 3) & ~(size_t)3;
			const unsigned char *desc = (const unsigned char *)(p + sizeof(*n) + namesz);

			if ((const char *)desc + descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0 && n->n_descsz <= BUILD_ID_MAX &&
			    2 * n->n_descsz < outlen) {
				size_t k;
				for (k = 0; k < n->n_descsz; k++) {
					out[2 * k] = hex[desc[k] >> 4];
					out[2 * k + 1] = hex[desc[k] & 15];
				}
				out[2 * k] = '\0';
				return;
			}
			p = (const char *)desc + descsz;
		}
	}
}

/* Does the object hold addr (NULL: every object does)? */
static int holds(const struct dl_phdr_info *info, const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	int i;

	if (!addr)
		return 1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && a >= start && a - start < ph->p_memsz)
			return 1;
	}
	return 0;
}

static int dump_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	char path[PATH_MAX];
	char build_id[2 * BUILD_ID_MAX + 1];
	unsigned long memsz = 0;
	const char *name = info->dlpi_name;
	int i;

	(void)size;
	if (!holds(info, arg))
		return 0;
	if (!name || !*name) {
		/* the main program (the first object): its file */
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (n <= 0)
			return 0;
		path[n] = '\0';
		name = path;
	}
	if (name[0] != '/')     /* the vDSO and the like: no file to read */
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > memsz)
			memsz = ph->p_vaddr + ph->p_memsz;
	}
	build_id_hex(info, build_id, sizeof(build_id));
	remember((unsigned long)info->dlpi_addr, memsz, name, build_id);
	emit(&bin_info_rt, (unsigned long)info->dlpi_addr, memsz, name, build_id);
	return 0;
}

static int event_class(struct mt_session *s, struct mt_marker_rt *rt, const char *name,
		       const char *format)
{
	struct mt_fmt_error err;

	if (!rt->format_ok) {
		if (mt_fmt_parse(format, &rt->format, &err))
			return -1;
		rt->format_ok = 1;
	}
	rt->event_id = mt_session_event_id(s, name, format);
	return rt->event_id;
}

/* The session's event classes: 0, or -1 (none). */
static int bin_info_class(struct mt_session *s)
{
	if (bin_info_session != s) {
		event_class(s, &bin_info_rt, BIN_INFO_NAME, BIN_INFO_FORMAT);
		event_class(s, &start_rt, START_NAME, START_FORMAT);
		bin_info_session = s;
	}
	return bin_info_rt.event_id < 0 || start_rt.event_id < 0 ? -1 : 0;
}

void mt_statedump(struct mt_session *s, const void *addr)
{
	if (!s || bin_info_class(s))
		return;
	if (!addr) {    /* a new list: readers forget the pid's objects (exec) */
		emit(&start_rt);
		mt_statedump_lock();
		while (ndumped)
			free(dumped[--ndumped].path);
		mt_statedump_unlock();
	}
	/* The loader's lock here is its write lock, which dlopen does not
	 * hold while it runs the constructors that take the registry lock
	 * held here: no lock-order inversion. */
	dl_iterate_phdr(dump_one, (void *)addr);
}

void mt_statedump_again(struct mt_session *s)
{
	size_t i;

	if (!s || bin_info_class(s))
		return;
	emit(&start_rt);
	for (i = 0; i < ndumped; i++)
		emit(&bin_info_rt, dumped[i].base, dumped[i].memsz, dumped[i].path,
		     dumped[i].build_id);
}
