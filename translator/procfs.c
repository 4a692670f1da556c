/*
 * procfs.c - SystemTap's procfs files in a live run.
 *
 * stap serves procfs("PATH").read/.write as /proc/systemtap/MODULE/PATH;
 * here marktap.ko serves them (kmod/mt_procfs.c) for an open file of
 * /dev/marktap of their own, and hands every read and write to marktap:
 * the probes' handlers run in this process, on marktap's globals, as
 * timers do (the kernel handlers' and the traced processes' changes
 * pulled first, this state's pushed after), and the answer goes back to
 * the reader, whom the module keeps waiting meanwhile.
 *
 *   a read     every read probe of the file in turn, $value from "" (each
 *              gets the one before's), the last one's $value the answer;
 *              the module keeps it for the reader's later reads of the
 *              same open file, cut at .maxsize(N) (default MAXSTRINGLEN)
 *   a write    every write probe with $value = the bytes of one write()
 *              (at most MAXSTRINGLEN - 1, and a page: a longer one is a
 *              short write, and the writer's next write another request)
 *
 * procfs("__stdin").write is marktap's own input (run.c), not a file.
 */
#define _GNU_SOURCE
#include "tr_run.h"
#include "mt_lua.h"
#include "mt_ioctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct pf_file {
	const char *path;
	unsigned ops;                 /* MT_PROCFS_READ | MT_PROCFS_WRITE */
	int64_t umask;                /* -1: none given */
	int64_t maxsize;              /* 0: none given */
	struct tr_vec readers, writers;   /* handler ids, (void *)(intptr_t); probe ids until bound */
};

struct tr_procfs {
	int fd;
	const char *name;             /* the directory's: the session's module name */
	struct pf_file *files;
	unsigned nfiles;
	int number[MT_PROCFS_ENTRIES_MAX];   /* the module's file number -> files[], or -1 */
	char *buf;                    /* a write's bytes */
	int64_t maxstringlen;
	bool bound;                   /* handler ids looked up */
};

/* Is r a file this session serves (not marktap's input)? */
static bool served(const struct tr_resolved *r)
{
	return r->kind == P_PROCFS && strcmp(r->procfs_file, "__stdin");
}

static struct pf_file *file_of(struct tr_procfs *pf, const char *path)
{
	for (unsigned i = 0; i < pf->nfiles; i++)
		if (!strcmp(pf->files[i].path, path))
			return &pf->files[i];
	pf->files = realloc(pf->files, (pf->nfiles + 1) * sizeof(*pf->files));
	if (!pf->files)
		abort();
	struct pf_file *f = &pf->files[pf->nfiles++];
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->umask = -1;
	return f;
}

/* The files the script's probes name, with their probes (by probe id). */
static void gather(struct tr_procfs *pf, struct tr_session *s)
{
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			struct tr_resolved *r = p->resolved.items[k];
			if (!served(r))
				continue;
			struct pf_file *f = file_of(pf, r->procfs_file);
			f->ops |= r->procfs_write ? MT_PROCFS_WRITE : MT_PROCFS_READ;
			if (f->umask < 0)
				f->umask = r->procfs_umask;
			if (r->procfs_maxsize > f->maxsize)
				f->maxsize = r->procfs_maxsize;
			tr_vec_push(r->procfs_write ? &f->writers : &f->readers, (void *)(intptr_t)p->id);
		}
	}
}

/* Why the module cannot serve the directory, from the errno of step. */
static const char *refusal(const struct tr_procfs *pf, const char *step, int err)
{
	if (err == ENOENT && !strcmp(step, "open"))
		return "its file is served by marktap.ko: no " MT_DEVICE_PATH ": load the kernel module "
		       "first (insmod marktap.ko)";
	if (err == ENOTTY)
		return "marktap.ko is from another build: it serves no procfs files";
	if (err == EEXIST)
		return tr_printf("/proc/systemtap/%s is another session's (-m NAME gives this one another name)",
				 pf->name);
	if (err == ENOENT)
		return "/proc/systemtap was not marktap.ko's when it was loaded (SystemTap's runtime had it)";
	if (err == EUSERS)
		return "the device's group holds its share of procfs files already (marktap.ko's "
		       "group_procfs_entries)";
	if (err == EINVAL && !strcmp(step, "dir"))
		return tr_printf("the module name %s is not letters, digits and '_' of at most %d",
				 pf->name, MT_PROCFS_NAME_MAX - 1);
	return tr_printf("marktap.ko serves its file (%s): %s", step, strerror(err));
}

/* Each file made in the module's directory: NULL, or why not. */
static const char *make_files(struct tr_procfs *pf)
{
	for (unsigned i = 0; i < MT_PROCFS_ENTRIES_MAX; i++)
		pf->number[i] = -1;
	for (unsigned i = 0; i < pf->nfiles; i++) {
		struct pf_file *f = &pf->files[i];
		struct mt_ioc_procfs_file a;
		int64_t max = f->maxsize > 0 ? f->maxsize : pf->maxstringlen;

		memset(&a, 0, sizeof(a));
		if (strlen(f->path) >= sizeof(a.path))
			return tr_printf("procfs(\"%s\"): a path of at most %d bytes", f->path, MT_PROCFS_PATH_MAX - 1);
		strcpy(a.path, f->path);
		a.ops = f->ops;
		a.umask = f->umask > 0 ? (unsigned)(f->umask & 0777) : 0;
		a.read_max = f->ops & MT_PROCFS_READ ? (unsigned)(max > MT_PROCFS_VALUE_MAX ? MT_PROCFS_VALUE_MAX : max) : 0;
		/* a write's bytes are a string of the script: MAXSTRINGLEN - 1 at most */
		int64_t wmax = pf->maxstringlen - 1;
		a.write_max = f->ops & MT_PROCFS_WRITE ? (unsigned)(wmax > MT_PROCFS_WRITE_MAX ? MT_PROCFS_WRITE_MAX : wmax) : 0;
		int n = ioctl(pf->fd, MT_IOC_PROCFS_FILE, &a);
		if (n < 0 && errno == EINVAL)
			return tr_printf("procfs(\"%s\"): marktap.ko takes path components of printable "
					 "characters but space and '/'", f->path);
		if (n < 0 && errno == ENOSPC)
			return tr_printf("procfs(\"%s\"): at most %d files and directories a session",
					 f->path, MT_PROCFS_ENTRIES_MAX);
		if (n < 0)
			return errno == EEXIST ? tr_printf("procfs(\"%s\"): a file is where it needs a directory, "
							   "or a directory where it needs a file", f->path)
					       : refusal(pf, "file", errno);
		if (n < MT_PROCFS_ENTRIES_MAX)
			pf->number[n] = (int)i;
	}
	return NULL;
}

struct tr_procfs *tr_procfs_open(struct tr_session *s, const char **why)
{
	struct tr_procfs *pf = tr_alloc(sizeof(*pf));
	struct mt_ioc_procfs_dir d;

	*why = NULL;
	pf->fd = -1;
	gather(pf, s);
	if (!pf->nfiles) {
		free(pf);
		return NULL;
	}
	pf->name = tr_module_name(s);
	pf->maxstringlen = tr_define_value(s, "MAXSTRINGLEN", 512);
	if (pf->maxstringlen <= 1)
		pf->maxstringlen = 512;
	pf->buf = tr_alloc(MT_PROCFS_WRITE_MAX);
	if (s->trace_dir) {
		*why = "marktap serves /proc files in live runs only, not over a stored trace (--trace)";
		return pf;
	}
	pf->fd = open(MT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (pf->fd < 0) {
		*why = errno == EACCES || errno == EPERM
			? tr_printf("its file is served by marktap.ko: cannot open " MT_DEVICE_PATH ": %s "
				    "(root, or a member of the device's group)", strerror(errno))
			: refusal(pf, "open", errno);
		return pf;
	}
	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "%s", pf->name);
	if (strlen(pf->name) >= sizeof(d.name) || ioctl(pf->fd, MT_IOC_PROCFS_DIR, &d) < 0)
		*why = refusal(pf, "dir", strlen(pf->name) >= sizeof(d.name) ? EINVAL : errno);
	else
		*why = make_files(pf);
	if (*why) {
		close(pf->fd);   /* and whatever it made goes */
		pf->fd = -1;
	}
	return pf;
}

int tr_procfs_fd(const struct tr_procfs *pf)
{
	return pf ? pf->fd : -1;
}

/* The probes' numbers become their handlers' ids, once the chunk is loaded. */
static void bind_handlers(struct tr_procfs *pf, struct mt_lua *mt)
{
	for (unsigned i = 0; i < pf->nfiles; i++) {
		struct tr_vec *lists[2] = { &pf->files[i].readers, &pf->files[i].writers };
		for (unsigned l = 0; l < 2; l++)
			for (unsigned k = 0; k < lists[l]->n; k++) {
				intptr_t id = (intptr_t)lists[l]->items[k];
				lists[l]->items[k] = (void *)(intptr_t)mt_lua_handler(mt, tr_printf("probe_%ld", (long)id));
			}
	}
	pf->bound = true;
}

/* One handler with $value = (value, len): MT_LUA_*; a read probe's new
 * $value in *out (tr_alloc'ed) when it returned one. */
static int run_one(struct mt_lua *mt, struct tr_procs *ss, struct tr_kmark *km, int id,
		   const char *path, const char *value, size_t len, char **out, size_t *out_len)
{
	lua_State *L = mt_lua_state(mt);
	int rc;

	if (id < 0 || !lua_checkstack(L, 4))
		return MT_LUA_SKIP;
	lua_pushstring(L, path);
	lua_pushstring(L, "");
	lua_pushlstring(L, value, len);
	/* as a timer: the globals of the kernel handlers and processes first */
	int kernel = tr_kmark_pull(km);
	if (ss)
		tr_procs_pull(ss);
	if (ss || kernel)
		mt_lua_sync_mark(mt);
	rc = mt_lua_run_results(mt, id, 3, 1);
	if (rc == MT_LUA_OK) {
		size_t n = 0;
		const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
		if (v && out) {
			*out = tr_alloc(n + 1);
			memcpy(*out, v, n);
			*out_len = n;
		}
		lua_pop(L, 1);
	}
	tr_kmark_push(km);
	if (ss)
		tr_procs_push(ss);
	return rc;
}

/* A request answered: a read with its file's probes' $value. */
static void serve_one(struct tr_procfs *pf, struct mt_lua *mt, struct tr_procs *ss, struct tr_kmark *km,
		      const struct mt_ioc_procfs_request *q)
{
	struct mt_ioc_procfs_answer a = { .id = q->id };
	const struct pf_file *f;
	const char *value = "";
	char *owned = NULL;
	size_t len = 0;

	if (q->file >= MT_PROCFS_ENTRIES_MAX || pf->number[q->file] < 0) {
		a.error = -EIO;
		ioctl(pf->fd, MT_IOC_PROCFS_ANSWER, &a);
		return;
	}
	f = &pf->files[pf->number[q->file]];
	if (q->op == MT_PROCFS_READ) {
		for (unsigned i = 0; i < f->readers.n && !a.error; i++) {
			char *nv = NULL;
			size_t nlen = 0;
			if (run_one(mt, ss, km, (int)(intptr_t)f->readers.items[i], f->path, value, len, &nv, &nlen) !=
			    MT_LUA_OK)
				a.error = -EIO;   /* the handler failed (said), or the session ends */
			else if (nv) {
				free(owned);
				value = owned = nv;
				len = nlen;
			}
		}
		if (!a.error) {
			a.buf = (uintptr_t)value;
			a.len = (unsigned)(len > MT_PROCFS_VALUE_MAX ? MT_PROCFS_VALUE_MAX : len);
		}
	} else {
		size_t n = q->len > MT_PROCFS_WRITE_MAX ? MT_PROCFS_WRITE_MAX : q->len;
		for (unsigned i = 0; i < f->writers.n && !a.error; i++)
			if (run_one(mt, ss, km, (int)(intptr_t)f->writers.items[i], f->path, pf->buf, n, NULL, NULL) !=
			    MT_LUA_OK)
				a.error = -EIO;
	}
	/* ENOENT: the reader stopped waiting meanwhile; nothing to do */
	ioctl(pf->fd, MT_IOC_PROCFS_ANSWER, &a);
	free(owned);
}

void tr_procfs_serve(struct tr_procfs *pf, struct mt_lua *mt, struct tr_procs *ss, struct tr_kmark *km)
{
	if (!pf || pf->fd < 0)
		return;
	if (!pf->bound)
		bind_handlers(pf, mt);
	/* a bounded round: the loop has -T, signals and other sources to see to */
	for (int round = 0; round < 64; round++) {
		struct mt_ioc_procfs_request q = { .buf = (uintptr_t)pf->buf };
		if (ioctl(pf->fd, MT_IOC_PROCFS_NEXT, &q) < 0)
			break;   /* EAGAIN: none waits */
		serve_one(pf, mt, ss, km, &q);
	}
}

void tr_procfs_close(struct tr_procfs *pf)
{
	if (!pf)
		return;
	if (pf->fd >= 0)
		close(pf->fd);   /* the files go; their waiting readers get EIO */
	for (unsigned i = 0; i < pf->nfiles; i++) {
		free(pf->files[i].readers.items);
		free(pf->files[i].writers.items);
	}
	free(pf->files);
	free(pf->buf);
	free(pf);
}
