/*
 * view_sym.c - symbols for `#p` fields in `marktrace view` (view_sym.h).
 *
 * Which fields are `#p`: the CTF metadata says only "64-bit hex integer",
 * so we read marktrace's comment before each event class, which keeps the
 * marker's format (`/ * marktap format: "ip #p%lu" * /`, doc/trace-format.md).
 *
 * Where objects are: marktap_statedump:bin_info events (baddr, memsz, path,
 * build_id), per pid.  A start event begins a new list; an object seen over
 * the range of another replaces it (the other was unloaded).  The trace is
 * input we do not trust: objects are bounded in number, a path is opened
 * only if it is a regular file (links followed: libraries are links to
 * their versioned files; a FIFO, a device or a link to one is never
 * opened, ctf_open_regular), read as an ELF file whose symbol table is
 * bounded by the file's size, and a file whose build id is not the
 * recorded one is not used.  An object that cannot be read is said on
 * stderr (a few times, then counted); its addresses stay bare.
 *
 * Late objects.  libmarktap notices an object dlopen'ed without markers
 * only when a hit next looks at the loader (at most once a millisecond,
 * runtime/lib/statedump.c): its addresses may be recorded before its
 * bin_info, which follows a marktap_statedump:update event (missed, since).
 * When a trace has updates, a first pass (once, when the first #p address
 * is shown) collects each pid's updates, and an address is checked
 * against the pid's next one:
 * - no known object holds it: an object of the current or next update
 *   does, if the event is after that update's since (the object was
 *   loaded after since: before since the address was not its);
 * - the object o holds it, but the next update says o was unloaded (an
 *   unload event, or another object over o's range): after since, o may
 *   have been unloaded, and another object loaded there, before the
 *   event: unsure, the address stays bare (never another object's name).
 * An unload event drops the object from the pid's list.
 * An update with missed > 0 (an object came and went unseen) names no
 * earlier address: it could have been the lost object's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctf_int.h"
#include "marktrace.h"
#include "view_sym.h"

#define BIN_INFO "marktap_statedump:bin_info"
#define DUMP_START "marktap_statedump:start"
#define DUMP_UPDATE "marktap_statedump:update"
#define DUMP_UNLOAD "marktap_statedump:unload"
#define OBJECTS_MAX 65536       /* bin_info events kept; later ones ignored */
#define PROCS_MAX OBJECTS_MAX   /* pids kept */
#define GROUPS_MAX (1u << 20)   /* start and update events kept (first pass) */
#define METADATA_MAX (64u << 20)
/* Symbol table entries read from one file: a file claims any count it
 * likes (a sparse file of 96 GiB claims 2^32 and costs no disk); the
 * largest programs have a few million. */
#define SYMBOLS_MAX (1u << 24)
#define WARNINGS_MAX 10         /* objects said; later ones only counted */

struct vsymbol {
	uint64_t value, size;
	char *name;
	int demangled;          /* name is as the source names it (C++) */
};

/* An object file, read once for every process that maps it. */
struct vfile {
	char *path, *build_id;
	int foreign;            /* named by another user's trace */
	int loaded, ok;
	struct vsymbol *syms;   /* sorted by value */
	size_t nsyms;
	struct vfile *next;
};

struct vobject {
	uint64_t base, memsz;
	struct vfile *file;
};

/* The bin_info events that follow one start or update event of a pid
 * (first pass). */
struct vgroup {
	int update;             /* an update whose objects were all kept */
	int usable;             /* ... that missed no load: names earlier addresses */
	int has_since;          /* since is in the events' time (ns) */
	uint64_t since;         /* its objects were loaded after this */
	struct vobject *objs;
	size_t n, cap;
	uint64_t *gone;         /* bases of the objects unloaded */
	size_t ngone, gone_cap;
};

/* The objects of one pid (a slot of the table by pid). */
struct vproc {
	int32_t pid;
	int used;
	struct vobject *objs;
	size_t n, cap;
	struct vgroup *groups;  /* every start and update of the trace, in order */
	size_t ngroups, gcap;
	size_t seen_groups;     /* start and update events the view met so far */
};

struct vtrace {
	const struct ctf_trace *t;
	uint64_t *mask;         /* by class index */
	int foreign;            /* made by another user than us and root */
};

struct vsym {
	struct vtrace *traces;
	unsigned ntraces;
	struct vproc *procs;    /* open addressing by pid; size a power of 2 */
	size_t nprocs, procs_size;
	size_t nobjs;           /* over every pid: at most OBJECTS_MAX */
	size_t ngroup_objs;     /* in groups, over every pid: as many at most */
	size_t ngroups;         /* groups over every pid: at most GROUPS_MAX */
	struct vfile *files;
	const char *debug_dir;  /* separate debug files by build id, or NULL */
	const struct ctf_set *set;
	int has_update;         /* a trace has update events: late objects */
	int scanned;            /* the first pass was made */
	uint64_t now;           /* the time of the event being shown (ns) */
	unsigned warnings;      /* objects said unreadable */
};

static int ours(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The metadata text, or NULL.  ctf_trace's path names the file (the
 * folder, says ctf_read.h: both are taken).  As the reader does, a link
 * is followed only if it is ours or root's.  *foreign: the file is
 * another user's (or unreadable). */
static char *read_metadata(const char *path, size_t *len, int *foreign)
{
	struct stat st;
	char *text = NULL, *file;
	ssize_t n;
	int fd, nofollow;

	*foreign = 1;
	nofollow = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && ours(st.st_uid) ? 0 : O_NOFOLLOW;
	fd = ctf_open_regular(path, nofollow, METADATA_MAX, &st);
	if (fd == -2 && S_ISDIR(st.st_mode) && (file = malloc(strlen(path) + 10))) {
		strcat(strcpy(file, path), "/metadata");
		fd = ctf_open_regular(file, O_NOFOLLOW, METADATA_MAX, &st);
		free(file);
	}
	if (fd < 0)
		return NULL;
	*foreign = !ours(st.st_uid);
	if (st.st_size > 0 && (text = malloc((size_t)st.st_size + 1))) {
		n = read(fd, text, (size_t)st.st_size);
		if (n < 0)
			n = 0;
		text[n] = '\0';
		*len = (size_t)n;
	}
	close(fd);
	return text;
}

/* The fields of format written "NAME #p...": set their bits in c's mask. */
static uint64_t pointer_mask(const struct ctf_event_class *c, const char *fmt, size_t flen)
{
	uint64_t mask = 0;
	const char *p = fmt, *end = fmt + flen;
	const char *prev = NULL;
	size_t prevlen = 0;

	while (p < end) {
		const char *w;
		while (p < end && *p == ' ')
			p++;
		w = p;
		while (p < end && *p != ' ')
			p++;
		if (p == w)
			break;
		if (p - w >= 2 && w[0] == '#' && w[1] == 'p' && prev && !memchr(prev, '%', prevlen)) {
			unsigned i;
			for (i = 0; i < c->nfields && i < 64; i++)
				/* the metadata's word wins: only an integer is an address */
				if (c->fields[i].name_len == prevlen && c->fields[i].kind == CTF_INT &&
				    !memcmp(c->fields[i].name, prev, prevlen))
					mask |= (uint64_t)1 << i;
		}
		prev = w;
		prevlen = (size_t)(p - w);
	}
	return mask;
}

/* Each `/ * marktap format: "F" * /` comment, then the event's id. */
static void scan_metadata(struct vtrace *vt, const char *text)
{
	static const char tag[] = "/* marktap format: \"";
	const char *p = text;

	while ((p = strstr(p, tag)) != NULL) {
		const char *fmt = p + sizeof(tag) - 1;
		const char *fend = strstr(fmt, "\" */");
		const char *id, *next;
		unsigned long long n;
		char *e;

		if (!fend)
			return;
		p = fend;
		next = strstr(p, tag);
		id = strstr(p, "\tid = ");
		if (!id || (next && id > next))
			continue;
		n = strtoull(id + 6, &e, 10);
		if (*e != ';' || n >= vt->t->nids || !vt->t->classes[n])
			continue;
		vt->mask[vt->t->classes[n]->index] = pointer_mask(vt->t->classes[n], fmt, (size_t)(fend - fmt));
	}
}

static int named(const struct ctf_event_class *c, const char *name)
{
	return c->name_len == strlen(name) && !memcmp(c->name, name, c->name_len);
}

static int is_bin_info(const struct ctf_event_class *c)
{
	return named(c, BIN_INFO);
}

/* The base of an unload event: 0, or -1 (not one). */
static int unload_base(const struct ctf_stream *s, uint64_t *base)
{
	const struct ctf_event_class *c = s->ev.cls;
	int f;

	if (!named(c, DUMP_UNLOAD) || (f = ctf_class_field(c, "baddr")) < 0 ||
	    c->fields[f].kind != CTF_INT)
		return -1;
	*base = ctf_field_uint(&s->ev, (unsigned)f);
	return 0;
}

/* A start or update event: 1 (start), 2 (update), or 0. */
static int dump_header(const struct ctf_event_class *c)
{
	if (c->nfields == 0 && named(c, DUMP_START))
		return 1;
	return named(c, DUMP_UPDATE) ? 2 : 0;
}

/* A new list of the pid's objects begins (the process exec'ed, or the pid
 * is another process's now): forget the old one. */
static struct vproc *proc_slot(struct vproc *procs, size_t size, int32_t pid)
{
	size_t i = ((uint32_t)pid * 2654435761u) & (size - 1);

	while (procs[i].used && procs[i].pid != pid)
		i = (i + 1) & (size - 1);
	return &procs[i];
}

/* The pid's objects; NULL if none (create: a new empty list). */
static struct vproc *find_proc(struct vsym *v, int32_t pid, int create)
{
	struct vproc *p;
	size_t i;

	if (v->procs_size) {
		p = proc_slot(v->procs, v->procs_size, pid);
		if (p->used || !create)
			return p->used ? p : NULL;
	} else if (!create) {
		return NULL;
	}
	if (v->nprocs == PROCS_MAX)
		return NULL;
	if (2 * (v->nprocs + 1) > v->procs_size) {     /* grow: at most half full */
		size_t size = v->procs_size ? 2 * v->procs_size : 64;
		struct vproc *n = calloc(size, sizeof(*n));
		if (!n)
			abort();
		for (i = 0; i < v->procs_size; i++)
			if (v->procs[i].used)
				*proc_slot(n, size, v->procs[i].pid) = v->procs[i];
		free(v->procs);
		v->procs = n;
		v->procs_size = size;
	}
	p = proc_slot(v->procs, v->procs_size, pid);
	p->used = 1;
	p->pid = pid;
	v->nprocs++;
	return p;
}

static void forget_pid(struct vsym *v, int32_t pid)
{
	struct vproc *p = find_proc(v, pid, 0);

	if (p) {
		v->nobjs -= p->n;
		p->n = 0;
	}
}

struct vsym *vsym_new(const struct ctf_set *set, const char *debug_dir)
{
	struct vsym *v;
	unsigned i, k;
	int any = 0, update = 0;

	for (i = 0; i < set->ntraces; i++)
		for (k = 0; k < set->traces[i]->nclasses; k++) {
			if (is_bin_info(set->traces[i]->class_list[k]))
				any = 1;
			if (dump_header(set->traces[i]->class_list[k]) == 2)
				update = 1;
		}
	if (!any)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v || !(v->traces = calloc(set->ntraces, sizeof(*v->traces))))
		abort();
	v->debug_dir = debug_dir;
	v->set = set;
	v->has_update = update;
	elf_version(EV_CURRENT);
	for (i = 0; i < set->ntraces; i++) {
		struct vtrace *vt = &v->traces[v->ntraces++];
		size_t len = 0;
		char *text;

		vt->t = set->traces[i];
		vt->mask = calloc(vt->t->nclasses + 1, sizeof(*vt->mask));
		if (!vt->mask)
			abort();
		text = read_metadata(vt->t->path, &len, &vt->foreign);
		if (text)
			scan_metadata(vt, text);
		free(text);
	}
	return v;
}

static int trace_foreign(const struct vsym *v, const struct ctf_trace *t)
{
	unsigned i;

	for (i = 0; i < v->ntraces; i++)
		if (v->traces[i].t == t)
			return v->traces[i].foreign;
	return 1;
}

uint64_t vsym_pointer_fields(struct vsym *v, const struct ctf_stream *s)
{
	unsigned i;

	for (i = 0; i < v->ntraces; i++)
		if (v->traces[i].t == s->trace)
			return s->ev.cls->index < s->trace->nclasses ?
				v->traces[i].mask[s->ev.cls->index] : 0;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	const struct vsymbol *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* The file's GNU build id in hex, or "" (none). */
static void file_build_id(Elf *e, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	Elf_Scn *scn = NULL;

	out[0] = '\0';
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;
			size_t k;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + name_off, "GNU", 4) || 2 * nh.n_descsz >= outlen)
				continue;
			for (k = 0; k < nh.n_descsz; k++) {
				out[2 * k] = hex[desc[k] >> 4];
				out[2 * k + 1] = hex[desc[k] & 15];
			}
			out[2 * k] = '\0';
			return;
		}
	}
}

/* Say (the first few times) why an object's file is not read. */
static void warn(struct vsym *v, const char *path, const char *why)
{
	char shown[4 * 256 + 1];
	size_t n = strnlen(path, 256);

	if (v->warnings++ >= WARNINGS_MAX)
		return;
	ctf_printable(shown, path, n);
	mt_error("warning: the trace names %s%s as an object: %s; its addresses stay bare%s", shown,
		 path[n] ? "..." : "", why,
		 v->warnings == WARNINGS_MAX ? " (further objects not read are counted)" : "");
}

/* The function symbols of one table (SHT_SYMTAB or SHT_DYNSYM); -1 when
 * the table claims more entries than we take. */
static int read_symbols(struct vfile *f, Elf *e, Elf_Scn *scn)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT), i, n;
	GElf_Shdr sh;

	if (!d || !entsize || !gelf_getshdr(scn, &sh))
		return 0;
	/* libelf's data is within the file: its size, not the header's
	 * entry size, counts the entries */
	n = d->d_size / entsize;
	if (n > SYMBOLS_MAX)
		return -1;
	free(f->syms);          /* a debug file's table had no function */
	f->syms = calloc(n ? n : 1, sizeof(*f->syms));
	f->nsyms = 0;
	if (!f->syms)
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!name || !*name || !(f->syms[f->nsyms].name = strdup(name)))
			continue;
		f->syms[f->nsyms].value = sym.st_value;
		f->syms[f->nsyms].size = sym.st_size;
		f->nsyms++;
	}
	qsort(f->syms, f->nsyms, sizeof(*f->syms), by_value);
	return 0;
}

/*
 * path as an ELF file we may read for f (a regular file; for another
 * user's trace one anyone may read, or it would have us show them the
 * functions of a file only we may read), or NULL.  *why: what is wrong
 * with a file that is there but not read, else NULL.
 */
static Elf *open_elf(const struct vfile *f, const char *path, int *fdp, const char **why)
{
	struct stat st;
	Elf *e = NULL;
	int fd;

	*why = NULL;
	fd = ctf_open_regular(path, 0, UINT64_MAX, &st);
	if (fd == -2)
		*why = ctf_file_kind(st.st_mode);
	if (fd < 0)
		return NULL;
	if (!f->foreign || (st.st_mode & S_IROTH))
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		*fdp = fd;
		return e;
	}
	if (e)
		elf_end(e);
	close(fd);
	return NULL;
}

static Elf_Scn *find_section(Elf *e, GElf_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

/* A stripped file's full symbol table, from its separate debug file
 * (DEBUG_DIR/.build-id/ab/cdef....debug, as Debian's -dbgsym packages
 * install them) when its build id is the same; 0 if none, -1 if too
 * large. */
static int read_debug_symbols(struct vfile *f, const char *id, const char *debug_dir)
{
	char path[4096], did[2 * 64 + 1];
	const char *why;
	Elf_Scn *scn;
	Elf *e;
	int fd, rc = 0;

	if (!debug_dir || strlen(id) < 4 ||
	    (size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dir, id,
			     id + 2) >= sizeof(path))
		return 0;
	e = open_elf(f, path, &fd, &why);
	if (!e)
		return 0;
	file_build_id(e, did, sizeof(did));
	if (!strcmp(did, id) && (scn = find_section(e, SHT_SYMTAB)))
		rc = read_symbols(f, e, scn);
	elf_end(e);
	close(fd);
	return rc < 0 ? -1 : f->nsyms > 0;
}

/* Read the file's symbols, once; ok stays 0 if it is not the recorded file. */
static void load_file(struct vsym *v, struct vfile *f)
{
	char id[2 * 64 + 1];
	const char *why;
	Elf_Scn *scn;
	Elf *e;
	int fd, rc = 0;

	f->loaded = 1;
	e = open_elf(f, f->path, &fd, &why);
	if (!e) {
		if (why)
			warn(v, f->path, why);
		return;
	}
	file_build_id(e, id, sizeof(id));
	/* a recorded id must be the file's; without one, trust the path */
	if (!*f->build_id || !strcmp(id, f->build_id)) {
		f->ok = 1;
		if ((scn = find_section(e, SHT_SYMTAB)))
			rc = read_symbols(f, e, scn);
		else if (!*id || !(rc = read_debug_symbols(f, id, v->debug_dir)))
			rc = (scn = find_section(e, SHT_DYNSYM)) ? read_symbols(f, e, scn) : 0;
	}
	if (rc < 0)
		warn(v, f->path, "its symbol table is too large to read (more than 16777216 "
		     "entries, or out of memory)");
	elf_end(e);
	close(fd);
}

static struct vfile *find_file(struct vsym *v, const char *path, const char *build_id,
			       int foreign)
{
	struct vfile *f;

	for (f = v->files; f; f = f->next)
		if (!strcmp(f->path, path) && !strcmp(f->build_id, build_id) && f->foreign == foreign)
			return f;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path)) || !(f->build_id = strdup(build_id)))
		abort();
	f->foreign = foreign;
	f->next = v->files;
	v->files = f;
	return f;
}

/* The base and size of a bin_info event's object, and the index of its
 * path field (its build_id's in *fi): 0, or -1 (not one we can read). */
static int bin_info_fields(const struct ctf_stream *s, uint64_t *base, uint64_t *memsz,
			   int *fp, int *fi)
{
	const struct ctf_event_class *c = s->ev.cls;
	int fb = ctf_class_field(c, "baddr"), fm = ctf_class_field(c, "memsz");

	*fp = ctf_class_field(c, "path");
	*fi = ctf_class_field(c, "build_id");
	if (fb < 0 || fm < 0 || *fp < 0 || *fi < 0 || c->fields[fb].kind != CTF_INT ||
	    c->fields[fm].kind != CTF_INT || c->fields[*fp].kind != CTF_STRING ||
	    c->fields[*fi].kind != CTF_STRING)
		return -1;
	*base = ctf_field_uint(&s->ev, (unsigned)fb);
	*memsz = ctf_field_uint(&s->ev, (unsigned)fm);
	return 0;
}

static struct vobject *append_object(struct vobject **objs, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		*objs = realloc(*objs, *cap * sizeof(**objs));
		if (!*objs)
			abort();
	}
	return &(*objs)[(*n)++];
}

/* Two objects cannot share an address: those over [base, base + memsz)
 * were unloaded.  Returns how many went. */
static size_t drop_overlapping(struct vproc *p, uint64_t base, uint64_t memsz)
{
	uint64_t end = base + memsz < base ? UINT64_MAX : base + memsz;
	size_t i, k, dropped;

	for (i = k = 0; i < p->n; i++) {
		const struct vobject *o = &p->objs[i];
		uint64_t oend = o->base + o->memsz < o->base ? UINT64_MAX : o->base + o->memsz;
		if (o->base != base && (o->base >= end || base >= oend))
			p->objs[k++] = *o;
	}
	dropped = p->n - k;
	p->n = k;
	return dropped;
}

/* A start or update event of pid: one more group (first pass); NULL if
 * too many were kept. */
static int uint_field(const struct ctf_stream *s, const char *name, uint64_t *value)
{
	int f = ctf_class_field(s->ev.cls, name);

	if (f < 0 || s->ev.cls->fields[f].kind != CTF_INT)
		return -1;
	*value = ctf_field_uint(&s->ev, (unsigned)f);
	return 0;
}

/* A start or update event of pid: one more group (first pass); NULL if
 * too many were kept. */
static struct vgroup *new_group(struct vsym *v, const struct ctf_stream *s, int kind)
{
	struct vproc *p;
	struct vgroup *g;
	uint64_t missed;

	if (v->ngroups == GROUPS_MAX || !(p = find_proc(v, s->ev.pid, 1)))
		return NULL;
	if (p->ngroups == p->gcap) {
		p->gcap = p->gcap ? 2 * p->gcap : 4;
		p->groups = realloc(p->groups, p->gcap * sizeof(*p->groups));
		if (!p->groups)
			abort();
	}
	v->ngroups++;
	g = &p->groups[p->ngroups++];
	memset(g, 0, sizeof(*g));
	g->update = kind == 2 && !uint_field(s, "missed", &missed);
	g->usable = g->update && missed == 0;
	/* since is a value of the session clock, as the event timestamps
	 * are: comparable when the trace's clock counts nanoseconds */
	g->has_since = g->update && s->trace->freq == 1000000000u &&
		       !uint_field(s, "since", &g->since);
	return g;
}

/* First pass, one event: the groups of every pid. */
static void scan_event(struct vsym *v, const struct ctf_stream *s)
{
	const struct ctf_event_class *c = s->ev.cls;
	int kind = dump_header(c), fp, fi;
	uint64_t base, memsz;
	struct vobject *o;
	struct vproc *p;
	struct vgroup *g;

	if (kind) {
		new_group(v, s, kind);
		return;
	}
	if (!(p = find_proc(v, s->ev.pid, 0)) || !p->ngroups || !p->groups[p->ngroups - 1].update)
		return;
	g = &p->groups[p->ngroups - 1];
	if (!unload_base(s, &base)) {
		if (v->ngroup_objs == OBJECTS_MAX) {
			g->update = g->usable = 0;
			return;
		}
		v->ngroup_objs++;
		if (g->ngone == g->gone_cap) {
			g->gone_cap = g->gone_cap ? 2 * g->gone_cap : 4;
			g->gone = realloc(g->gone, g->gone_cap * sizeof(*g->gone));
			if (!g->gone)
				abort();
		}
		g->gone[g->ngone++] = base;
		return;
	}
	if (!is_bin_info(c) || bin_info_fields(s, &base, &memsz, &fp, &fi))
		return;
	if (v->ngroup_objs == OBJECTS_MAX) {
		/* incomplete: an address could be a missing object's */
		g->update = g->usable = 0;
		return;
	}
	v->ngroup_objs++;
	o = append_object(&g->objs, &g->n, &g->cap);
	o->base = base;
	o->memsz = memsz;
	o->file = find_file(v, ctf_field_string(&s->ev, (unsigned)fp),
			    ctf_field_string(&s->ev, (unsigned)fi), trace_foreign(v, s->trace));
}

/* The first pass: the trace again, from its start, through streams of our
 * own over the same mapped files, in the same order as the view's. */
static void scan(struct vsym *v)
{
	const struct ctf_set *set = v->set;
	struct ctf_set shadow;
	struct ctf_stream *s;
	unsigned i;

	v->scanned = 1;
	memset(&shadow, 0, sizeof(shadow));
	shadow.streams = calloc(set->nstreams + 1, sizeof(*shadow.streams));
	if (!shadow.streams)
		abort();
	for (i = 0; i < set->nstreams; i++) {
		const struct ctf_stream *o = set->streams[i];
		s = ctf_stream_new(o->trace, o->path, o->base, o->size);
		s->index = o->index;
		shadow.streams[shadow.nstreams++] = s;
	}
	ctf_merge_start(&shadow);
	while ((s = ctf_merge_peek(&shadow)) != NULL && s->item != CTF_ITEM_ERROR) {
		if (s->item == CTF_ITEM_EVENT)
			scan_event(v, s);
		ctf_merge_advance(&shadow);
	}
	for (i = 0; i < shadow.nstreams; i++)
		ctf_stream_free(shadow.streams[i]);
	free(shadow.streams);
	free(shadow.heap);
}

void vsym_event(struct vsym *v, const struct ctf_stream *s)
{
	const struct ctf_event_class *c = s->ev.cls;
	int kind = dump_header(c), fp, fi;
	uint64_t base, memsz;
	struct vproc *p;
	struct vobject *o;

	v->now = s->ev.ts;
	if (kind) {
		if (kind == 1)
			forget_pid(v, s->ev.pid);
		/* where the first pass's groups of this pid stand */
		if (v->has_update && (p = find_proc(v, s->ev.pid, 1)))
			p->seen_groups++;
		return;
	}
	if (!unload_base(s, &base)) {
		if ((p = find_proc(v, s->ev.pid, 0)))
			v->nobjs -= drop_overlapping(p, base, 1);
		return;
	}
	if (!is_bin_info(c) || bin_info_fields(s, &base, &memsz, &fp, &fi) ||
	    !(p = find_proc(v, s->ev.pid, 1)))
		return;
	/* a later dump over an object's range: the newer object replaces it */
	v->nobjs -= drop_overlapping(p, base, memsz);
	if (v->nobjs == OBJECTS_MAX)
		return;
	o = append_object(&p->objs, &p->n, &p->cap);
	v->nobjs++;
	o->base = base;
	o->memsz = memsz;
	o->file = find_file(v, ctf_field_string(&s->ev, (unsigned)fp),
			    ctf_field_string(&s->ev, (unsigned)fi), trace_foreign(v, s->trace));
}

static struct vobject *holder(struct vobject *objs, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (addr >= objs[i].base && addr - objs[i].base < objs[i].memsz)
			return &objs[i];
	return NULL;
}

/* The event is at or after the group's since (unknown: assume so). */
static int after_since(const struct vsym *v, const struct vgroup *g)
{
	return !g->has_since || v->now >= g->since;
}

/* Does g say o was unloaded, or list another object over o's range? */
static int replaced_in(const struct vgroup *g, const struct vobject *o)
{
	uint64_t end = o->base + o->memsz < o->base ? UINT64_MAX : o->base + o->memsz;
	size_t i;

	for (i = 0; i < g->ngone; i++)
		if (g->gone[i] == o->base)
			return 1;
	for (i = 0; i < g->n; i++) {
		const struct vobject *n = &g->objs[i];
		uint64_t nend = n->base + n->memsz < n->base ? UINT64_MAX : n->base + n->memsz;
		if (n->base < end && o->base < nend && (n->base != o->base || n->file != o->file))
			return 1;
	}
	return 0;
}

/*
 * The object that held addr when the event was recorded, from the pid's
 * groups (see "Late objects" above): o, the one the list holds now; NULL
 * when unsure.  The pid's next update (the first pass read it) tells what
 * libmarktap found at its next look: an object that replaces o there and
 * may have been loaded before the event makes o unsure; without o, an
 * object of the current or next update loaded before the event holds it.
 */
static struct vobject *at_event(struct vsym *v, int32_t pid, uint64_t addr,
				struct vobject *o)
{
	struct vgroup *cur = NULL, *next = NULL;
	struct vobject *late = NULL;
	struct vproc *p;

	if (!v->scanned)
		scan(v);
	if (!(p = find_proc(v, pid, 0)))
		return o;
	if (p->seen_groups && p->seen_groups - 1 < p->ngroups)
		cur = &p->groups[p->seen_groups - 1];
	if (p->seen_groups < p->ngroups)
		next = &p->groups[p->seen_groups];
	/* after since, o may have been unloaded (and another object loaded
	 * there) before the event */
	if (o)
		return next && next->update && after_since(v, next) && replaced_in(next, o) ? NULL : o;
	if (cur && cur->usable)
		late = holder(cur->objs, cur->n, addr);
	if (!late && next && next->usable && after_since(v, next))
		late = holder(next->objs, next->n, addr);
	return late;
}

/*
 * A C++ name as its source says it ("ns::sum(int, int)"), as the script
 * runtime's usymname() shows it: by libstdc++'s __cxa_demangle, loaded
 * the first time a mangled name is shown (marktrace is C and does not
 * link it); without libstdc++, the name as it is.
 */
static void demangle(struct vsymbol *sym)
{
	static char *(*cxa_demangle)(const char *, char *, size_t *, int *);
	static int looked;
	int status = -1;
	char *d;

	sym->demangled = 1;
	if (strncmp(sym->name, "_Z", 2))
		return;
	if (!looked) {
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
		looked = 1;
		if (h)
			*(void **)&cxa_demangle = dlsym(h, "__cxa_demangle");
	}
	if (!cxa_demangle || !(d = cxa_demangle(sym->name, NULL, NULL, &status)))
		return;
	if (status == 0) {
		free(sym->name);
		sym->name = d;
	} else {
		free(d);
	}
}

void vsym_put(struct vsym *v, struct vbuf *b, int32_t pid, uint64_t addr)
{
	struct vsymbol *best = NULL;
	struct vproc *p = find_proc(v, pid, 0);
	struct vobject *o = p ? holder(p->objs, p->n, addr) : NULL;
	size_t lo, hi;
	uint64_t off;

	if (v->has_update)
		o = at_event(v, pid, addr, o);
	if (!o)
		return;
	if (!o->file->loaded)
		load_file(v, o->file);
	if (!o->file->ok)
		return;
	off = addr - o->base;
	/* the last symbol at or below off */
	for (lo = 0, hi = o->file->nsyms; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->file->syms[mid].value <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		best = &o->file->syms[lo - 1];
	if (!best || (best->size && off - best->value >= best->size))
		return;
	if (!best->demangled)
		demangle(best);
	vb_put(b, " <", 2);
	vb_escaped(b, best->name, (size_t)-1);
	vb_char(b, '+');
	vb_hex(b, off - best->value);
	vb_char(b, '>');
}

void vsym_free(struct vsym *v)
{
	struct vfile *f, *next;
	unsigned i;
	size_t k;

	if (!v)
		return;
	if (v->warnings > WARNINGS_MAX)
		mt_error("warning: %u more objects of the trace not read", v->warnings - WARNINGS_MAX);
	for (f = v->files; f; f = next) {
		next = f->next;
		for (k = 0; k < f->nsyms; k++)
			free(f->syms[k].name);
		free(f->syms);
		free(f->path);
		free(f->build_id);
		free(f);
	}
	for (i = 0; i < v->ntraces; i++)
		free(v->traces[i].mask);
	free(v->traces);
	for (k = 0; k < v->procs_size; k++) {
		size_t g;
		for (g = 0; g < v->procs[k].ngroups; g++) {
			free(v->procs[k].groups[g].objs);
			free(v->procs[k].groups[g].gone);
		}
		free(v->procs[k].groups);
		free(v->procs[k].objs);
	}
	free(v->procs);
	free(v);
}
