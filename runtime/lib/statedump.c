/*
 * statedump.c - say where each object of the process is loaded.
 *
 * A `#p` field of a user trace holds an address in the traced process; to
 * name the function there after the process is gone, the trace must tell
 * which object was loaded at which base.  When a process records a marker
 * with a pointer field (#p or %p: record.c decides when) we walk the loaded
 * objects and write one event per object into the normal event stream;
 * again in a forked child; and for every object loaded later, with or
 * without markers (see "Objects loaded later" below):
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
 * (doc/marktrace-view.md); an object seen again over the range of another
 * replaces it.
 *
 * Objects loaded later.  A plugin without markers that the program
 * dlopen()s tells us nothing: we do not wrap dlopen (the caller of dlopen
 * would become libmarktap, which changes the loader's RUNPATH search), and
 * asking the loader (dl_iterate_phdr) takes its lock, too dear for every
 * hit.  So a hit compares its timestamp, which it has anyway, with
 * mt_statedump_due (one relaxed load of a line nobody writes in between);
 * past it, one thread looks at most every POLL_PERIOD_NS: the loader's
 * counts of loads and unloads (dlpi_adds, dlpi_subs, read from the first
 * object only) against the counts at our last walk.  When they moved, we
 * walk again and write
 *
 *   marktap_statedump:update: missed=0 since=1234567890
 *   marktap_statedump:unload: baddr=0x7f... (each object gone)
 *   marktap_statedump:bin_info: ... (each object not seen before)
 *
 * missed: loads the loader counted that were unloaded again before we
 * looked (their addresses cannot be named); since: the last time (session
 * clock, ns, as event timestamps) the loader was seen to have loaded and
 * unloaded nothing: every object listed here was loaded after it, every
 * object gone was unloaded after it.  An object with markers
 * (registry.c), the end of the process (exit, not _exit) and recording's
 * start look at once.  So a #p event may come before the bin_info of its
 * object, by up to a period: marktrace view looks ahead to the pid's next
 * update for an address no known object holds (view_sym.c).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <stddef.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mt_lib.h"

#define BIN_INFO_NAME   "marktap_statedump:bin_info"
#define BIN_INFO_FORMAT "baddr #p%lu memsz %lu path %s build_id %s"
#define BUILD_ID_MAX    64      /* bytes; sha1 ids are 20 */

#define START_NAME      "marktap_statedump:start"
#define START_FORMAT    " "     /* MARK_NOARGS */

#define UPDATE_NAME     "marktap_statedump:update"
#define UPDATE_FORMAT   "missed %u since %lu"

#define UNLOAD_NAME     "marktap_statedump:unload"
#define UNLOAD_FORMAT   "baddr #p%lu"

/* How often a hit may ask the loader whether objects came or went. */
#define POLL_PERIOD_NS  1000000ull

/* The event classes in the current session (bin_info and start are set up
 * with the registry lock held; update, added later, with dumped_mutex). */
static struct mt_marker_rt bin_info_rt = { .event_id = -1 };
static struct mt_marker_rt start_rt = { .event_id = -1 };
static struct mt_marker_rt update_rt = { .event_id = -1 };
static struct mt_marker_rt unload_rt = { .event_id = -1 };
static const struct mt_session *bin_info_session, *update_session;

/* The session we dumped into and keep up to date; NULL: none.  Written
 * with dumped_mutex held; read without it only to skip a poll early. */
static struct mt_session *dump_session;

/* When a hit looks next (ns of the session clock); UINT64_MAX: never.
 * Alone on its line: hits on every CPU read it, a poll writes it once a
 * period. */
struct mt_statedump_due mt_statedump_due = { .ns = UINT64_MAX };

/* What was dumped and is still loaded: a forked child repeats these for
 * its own pid without walking the loader's list (whose lock another thread
 * of the parent may have held at fork), and a later walk writes only what
 * is not here. */
struct dumped {
	unsigned long base, memsz;
	size_t path;            /* offset in paths */
	char build_id[2 * BUILD_ID_MAX + 1];
	int seen;               /* found by the current walk */
	int fresh;              /* found by it for the first time: to write */
	int gone;               /* not found by it: unloaded, to write */
	int replaced;           /* fresh, over another object at its base */
};
/* Their memory comes from mmap, not malloc: a walk may run in a hit, and
 * a hit in a signal handler that interrupted malloc. */
static struct dumped *dumped;
static size_t ndumped, dumped_cap;
static char *paths;             /* the entries' paths, NUL-terminated */
static size_t paths_used, paths_size, paths_dead;
static unsigned long long loads_seen;   /* dlpi_adds at our last walk */
static unsigned long long unloads_seen; /* dlpi_subs at our last walk */
/* The last time (session clock) the loader had made no load or unload
 * since our walk: every object a later walk finds new was loaded after
 * it, every object it finds gone was unloaded after it. */
static mt_u64 last_look;
static pthread_mutex_t dumped_mutex = PTHREAD_MUTEX_INITIALIZER;

void mt_statedump_lock(void) { pthread_mutex_lock(&dumped_mutex); }
void mt_statedump_unlock(void) { pthread_mutex_unlock(&dumped_mutex); }

/* The recorder's writer (record.c sets it before any session). */
static mt_hit_fn writer;

void mt_statedump_set_writer(mt_hit_fn fn)
{
	writer = fn;
}

static void emit(struct mt_marker_rt *rt, ...)
{
	va_list ap;

	if (!writer)
		return;
	va_start(ap, rt);
	writer(NULL, rt, ap);
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

/* size bytes (whole pages) holding the first keep bytes of old, which
 * goes; NULL: no memory (old stays). */
static void *remap(void *old, size_t old_size, size_t keep, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (old) {
		memcpy(p, old, keep);
		munmap(old, old_size);
	}
	return p;
}

static size_t pages(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

#define PATH_OF(d) (paths + (d)->path)

/* A copy of path in paths: its offset, or (size_t)-1 (no memory). */
static size_t keep_path(const char *path)
{
	size_t len = strlen(path) + 1, off = paths_used;

	if (paths_used + len > paths_size) {
		size_t size = pages(2 * (paths_used + len) + 8192);
		char *n = remap(paths, paths_size, paths_used, size);
		if (!n)
			return (size_t)-1;
		paths = n;
		paths_size = size;
	}
	memcpy(paths + off, path, len);
	paths_used += len;
	return off;
}

/* Paths of entries gone or replaced take room: copy the others to a new
 * area when they are half of it. */
static void compact_paths(void)
{
	char *n;
	size_t i, used = 0;

	if (!paths_dead || 2 * paths_dead < paths_used ||
	    !(n = remap(NULL, 0, 0, paths_size)))
		return;
	for (i = 0; i < ndumped; i++) {
		size_t len = strlen(PATH_OF(&dumped[i])) + 1;
		memcpy(n + used, PATH_OF(&dumped[i]), len);
		dumped[i].path = used;
		used += len;
	}
	munmap(paths, paths_size);
	paths = n;
	paths_used = used;
	paths_dead = 0;
}

/* The entry for an object at base, a new one if none (NULL: no memory). */
static struct dumped *entry_at(unsigned long base)
{
	size_t i;

	for (i = 0; i < ndumped; i++)
		if (dumped[i].base == base)
			return &dumped[i];
	if (ndumped == dumped_cap) {
		size_t size = pages((2 * dumped_cap + 16) * sizeof(*dumped));
		struct dumped *n = remap(dumped, pages(dumped_cap * sizeof(*dumped)),
					 ndumped * sizeof(*dumped), size);
		if (!n)
			return NULL;
		dumped = n;
		dumped_cap = size / sizeof(*dumped);
	}
	memset(&dumped[ndumped], 0, sizeof(*dumped));
	dumped[ndumped].path = (size_t)-1;
	return &dumped[ndumped++];
}

/* One object of the loader's list (dumped_mutex held): known as it is, or
 * fresh.  An object is the same one if base, size and file are. */
static int look_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *counts = arg;       /* adds, subs */
	char exe[PATH_MAX];
	unsigned long memsz = 0;
	const char *name = info->dlpi_name;
	struct dumped *d;
	size_t path;
	int i;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		counts[0] = info->dlpi_adds;
		counts[1] = info->dlpi_subs;
	}
	if (!name || !*name) {
		/* the main program (the first object): its file */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return 0;
		exe[n] = '\0';
		name = exe;
	}
	if (name[0] != '/')     /* the vDSO and the like: no file to read */
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > memsz)
			memsz = ph->p_vaddr + ph->p_memsz;
	}
	d = entry_at((unsigned long)info->dlpi_addr);
	if (!d)
		return 0;
	if (d->path != (size_t)-1 && d->memsz == memsz && !strcmp(PATH_OF(d), name)) {
		d->seen = 1;
		return 0;
	}
	if ((path = keep_path(name)) == (size_t)-1) {
		if (d->path == (size_t)-1)      /* a new slot: give it back */
			ndumped--;
		return 0;
	}
	if (d->path != (size_t)-1) {    /* the other was unloaded */
		paths_dead += strlen(PATH_OF(d)) + 1;
		d->replaced = 1;
	}
	d->path = path;
	d->base = (unsigned long)info->dlpi_addr;
	d->memsz = memsz;
	build_id_hex(info, d->build_id, sizeof(d->build_id));
	d->seen = d->fresh = 1;
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

/* The update event (its classes set up the first time). */
static void emit_update(struct mt_session *s, unsigned missed, mt_u64 since)
{
	if (update_session != s) {
		event_class(s, &update_rt, UPDATE_NAME, UPDATE_FORMAT);
		event_class(s, &unload_rt, UNLOAD_NAME, UNLOAD_FORMAT);
		update_session = s;
	}
	if (update_rt.event_id >= 0)
		emit(&update_rt, missed, (unsigned long)since);
}

static void emit_object(const struct dumped *d)
{
	emit(&bin_info_rt, d->base, d->memsz, PATH_OF(d), d->build_id);
}

/*
 * Walk the loader's list and write what changed (dumped_mutex held): with
 * full, a start event and every object; else, if anything changed, an
 * update event, an unload event per object gone and a bin_info per object
 * not seen before.
 */
static void walk(struct mt_session *s, int full)
{
	unsigned long long counts[2] = { loads_seen, unloads_seen }, loads;
	size_t i, k, nfresh = 0, ngone = 0;
	mt_u64 since = last_look;

	for (i = 0; i < ndumped; i++)
		dumped[i].seen = dumped[i].fresh = dumped[i].gone = dumped[i].replaced = 0;
	mt_store_relaxed(&last_look, mt_clock_ns());
	/* The loader's lock here is its write lock, which dlopen does not
	 * hold while it runs the constructors that take the registry lock
	 * (held here by some callers): no lock-order inversion. */
	dl_iterate_phdr(look_one, counts);
	for (i = 0; i < ndumped; i++) {
		dumped[i].gone = !dumped[i].seen;
		ngone += dumped[i].gone + dumped[i].replaced;
		nfresh += dumped[i].fresh;
	}
	loads = counts[0] - loads_seen;
	mt_store_relaxed(&loads_seen, counts[0]);
	mt_store_relaxed(&unloads_seen, counts[1]);
	mt_store_relaxed(&mt_statedump_due.ns, mt_clock_ns() + POLL_PERIOD_NS);
	if (full)
		emit(&start_rt);
	else if (nfresh || ngone || loads)
		emit_update(s, (unsigned)(loads > nfresh ? loads - nfresh : 0), since);
	for (i = k = 0; i < ndumped; i++) {
		if ((dumped[i].gone || dumped[i].replaced) && !full && unload_rt.event_id >= 0)
			emit(&unload_rt, dumped[i].base);
		if (dumped[i].gone) {
			paths_dead += strlen(PATH_OF(&dumped[i])) + 1;
			continue;
		}
		dumped[k++] = dumped[i];
	}
	ndumped = k;
	for (i = 0; i < ndumped; i++)
		if (full || dumped[i].fresh)
			emit_object(&dumped[i]);
	compact_paths();
}

void mt_statedump(struct mt_session *s, const void *addr)
{
	if (!s || bin_info_class(s))
		return;
	mt_statedump_lock();
	if (!addr) {    /* a new list: readers forget the pid's objects (exec) */
		ndumped = paths_used = paths_dead = 0;
		dump_session = s;
	}
	if (dump_session == s)
		walk(s, !addr);
	mt_statedump_unlock();
}

/* The counts of loads and unloads the loader made, from its first object. */
static int first_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *counts = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		counts[0] = info->dlpi_adds;
		counts[1] = info->dlpi_subs;
	}
	return 1;       /* the first object is enough */
}

static int objects_changed(void)
{
	unsigned long long counts[2] = { mt_load_relaxed(&loads_seen),
					 mt_load_relaxed(&unloads_seen) };

	/* Between the two writes of a dlopen or dlclose (r_state RT_ADD or
	 * RT_DELETE, perhaps this very thread in a signal handler) the list
	 * is not whole: look next time. */
	if (mt_load_relaxed(&_r_debug.r_state) != RT_CONSISTENT)
		return 0;
	dl_iterate_phdr(first_counts, counts);
	return counts[0] != mt_load_relaxed(&loads_seen) ||
	       counts[1] != mt_load_relaxed(&unloads_seen);
}

void mt_statedump_poll(struct mt_session *s, mt_u64 now)
{
	mt_u64 due = mt_load_relaxed(&mt_statedump_due.ns);

	/* One thread per period looks; the others go on.  Relaxed: the
	 * compare-and-swap orders nothing but itself. */
	if (now < due || !__atomic_compare_exchange_n(&mt_statedump_due.ns, &due,
						      now + POLL_PERIOD_NS, 0,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (s != mt_load_relaxed(&dump_session)) {
		/* another session, which dumps nothing: hits stop asking */
		if (!mt_load_relaxed(&dump_session))
			mt_store_relaxed(&mt_statedump_due.ns, UINT64_MAX);
		return;
	}
	if (!objects_changed()) {
		/* no load or unload up to now (the loader was asked after
		 * it): nothing found new or gone later changed before.  Racing a walk, the larger
		 * value is not always kept; a smaller one only widens the
		 * window the viewer treats as unsure. */
		if (now > mt_load_relaxed(&last_look))
			mt_store_relaxed(&last_look, now);
		return;
	}
	/* trylock: a hit can come from a signal handler, or from the walk's
	 * own events (the walk holds the lock); then the next period looks */
	if (pthread_mutex_trylock(&dumped_mutex))
		return;
	if (dump_session == s)
		walk(s, 0);
	mt_statedump_unlock();
}

void mt_statedump_stop(void)
{
	mt_statedump_lock();
	dump_session = NULL;
	mt_store_relaxed(&mt_statedump_due.ns, UINT64_MAX);
	mt_statedump_unlock();
}

/* At exit, objects loaded since the last look: a short program may load a
 * plugin, use it and end within one period. */
static void __attribute__((destructor)) statedump_at_exit(void)
{
	struct mt_session *s = mt_load_relaxed(&dump_session);

	if (!s || !objects_changed() || pthread_mutex_trylock(&dumped_mutex))
		return;
	if (dump_session == s)
		walk(s, 0);
	mt_statedump_unlock();
}

void mt_statedump_again(struct mt_session *s)
{
	size_t i;

	if (!s || bin_info_class(s))
		return;
	emit(&start_rt);
	for (i = 0; i < ndumped; i++)
		emit_object(&dumped[i]);
}
