/*
 * btf_tp.c - kernel.trace through the kernel's BTF: every tracepoint
 * vmlinux has a prototype for (the typedef btf_trace_NAME), and those
 * the modules' BTF defines, loaded or in their files.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "btf_int.h"

/* The FUNC_PROTO behind the typedef td (btf_trace_NAME: a pointer to it), or 0 */
static __u32 proto_behind(const struct btf *b, const struct btf_type *td)
{
	const struct btf_type *t = btf__type_by_id(b, td->type);

	if (!t || !btf_is_ptr(t))
		return 0;
	__u32 proto = t->type;
	t = btf__type_by_id(b, proto);
	/* void (void *__data, TP_PROTO...) */
	return t && btf_is_func_proto(t) && btf_vlen(t) >= 1 ? proto : 0;
}

static __u32 tracepoint_proto(const struct btf *b, const char *name)
{
	__s32 id = btf__find_by_name_kind(b, tr_printf("btf_trace_%s", name), BTF_KIND_TYPEDEF);

	return id > 0 ? proto_behind(b, btf__type_by_id(b, (__u32)id)) : 0;
}

int tr_btf_tracepoints(struct tr_session *s, struct tr_vec *names, const char **why)
{
	const struct btf *b = tr_btf_vmlinux(s);
	static const char prefix[] = "btf_trace_";

	if (!b) {
		*why = tr_btf_load_error;
		return -1;
	}
	for (__u32 id = 1, n = btf__type_cnt(b); id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const char *name;
		if (btf_is_typedef(t) && !strncmp((name = btf__name_by_offset(b, t->name_off)), prefix,
						   sizeof(prefix) - 1) && proto_behind(b, t))
			tr_vec_push(names, (void *)(name + sizeof(prefix) - 1));
	}
	return 0;
}

/* Do FUNC_PROTOs a and b have the same parameters' types? */
static bool same_types(const struct btf *b, __u32 a, __u32 c)
{
	const struct btf_type *x = btf__type_by_id(b, a), *y = btf__type_by_id(b, c);

	if (btf_vlen(x) != btf_vlen(y))
		return false;
	for (unsigned i = 0; i < btf_vlen(x); i++)
		if (btf_params(x)[i].type != btf_params(y)[i].type)
			return false;
	return true;
}

/* Do FUNC_PROTOs a and b name their parameters alike? */
static bool same_names(const struct btf *b, __u32 a, __u32 c)
{
	const struct btf_type *x = btf__type_by_id(b, a), *y = btf__type_by_id(b, c);

	for (unsigned i = 1; i < btf_vlen(x); i++)
		if (strcmp(btf__name_by_offset(b, btf_params(x)[i].name_off),
			   btf__name_by_offset(b, btf_params(y)[i].name_off)))
			return false;
	return true;
}

/*
 * The names of tracepoint name's parameters: btf_trace_NAME's prototype
 * has none.  The functions the kernel builds around a tracepoint have
 * them: __traceiter_NAME (each tracepoint's, when BTF kept it), and per
 * event class __bpf_trace_CLASS, trace_event_raw_event_CLASS and
 * perf_trace_CLASS (CLASS is NAME for a TRACE_EVENT).  A DEFINE_EVENT
 * of another class: the classes whose probes take the same types, when
 * they all name them alike.  0: none (the parameters are $arg1...).
 */
static __u32 tracepoint_names(const struct btf *b, const char *name, __u32 proto)
{
	static const char *const around[] = { "__traceiter_", "__bpf_trace_", "trace_event_raw_event_",
		"perf_trace_" };
	__u32 found = 0;

	for (unsigned i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
		__u32 p = tr_btf_proto_of(b, tr_printf("%s%s", around[i], name));
		if (p && same_types(b, p, proto))
			return p;
	}
	for (__u32 id = 1, n = btf__type_cnt(b); id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!btf_is_func(t) || strncmp(btf__name_by_offset(b, t->name_off), "__bpf_trace_", 12) ||
		    !same_types(b, t->type, proto))
			continue;
		if (found && !same_names(b, found, t->type))
			return 0;
		found = t->type;
	}
	return found;
}

/* ---- modules' tracepoints --------------------------------------------------- */

struct module_tp {
	const char *name, *module;
};
static struct tr_vec module_tps;   /* struct module_tp *: every module's, once read */

static bool module_scanned(const char *module)
{
	for (unsigned i = module_tps.n; i-- > 0;)
		if (!strcmp(((struct module_tp *)module_tps.items[i])->module, module))
			return true;
	return false;
}

/* The btf_trace_NAME strings of a module's raw split BTF, which holds
 * its own strings only: the tracepoints it defines (the typedefs are
 * checked when one is probed: tr_btf_tracepoint) */
static void scan_btf_strings(const void *data, size_t size, const char *module)
{
	static const char prefix[] = "btf_trace_";
	const size_t plen = sizeof(prefix) - 1;
	const struct btf_header *h = data;

	if (size < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len > size ||
	    (size_t)h->hdr_len + h->str_off + h->str_len > size || module_scanned(module))
		return;
	const char *p = (const char *)data + h->hdr_len + h->str_off, *end = p + h->str_len;
	for (; p < end; p += strnlen(p, (size_t)(end - p)) + 1) {
		if ((size_t)(end - p) <= plen || memcmp(p, prefix, plen) || !memchr(p, 0, (size_t)(end - p)))
			continue;
		struct module_tp *t = tr_alloc(sizeof(*t));
		t->name = tr_strdup(p + plen);
		t->module = module;
		tr_vec_push(&module_tps, t);
	}
}

/* A module file's .BTF section, read through libelf (only that section's
 * pages: a kernel's modules are hundreds of megabytes) */
static int scan_ko(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	const char *base = path + f->base;
	size_t n = strlen(base), shstrndx;
	int fd;

	(void)st;
	if (flag != FTW_F || n <= 3 || strcmp(base + n - 3, ".ko") || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (Elf_Scn *scn = NULL; e && !elf_getshdrstrndx(e, &shstrndx) && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		Elf_Data *d = name && !strcmp(name, ".BTF") ? elf_getdata(scn, NULL) : NULL;
		if (d && d->d_buf) {
			scan_btf_strings(d->d_buf, d->d_size, tr_btf_module_name_of(base, n - 3));
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return 0;
}

/* Every module's tracepoints: the loaded modules' BTF (the running
 * kernel's), then the module files (tr_btf_module_dirs), read once */
static void read_module_tracepoints(struct tr_session *s)
{
	static bool read;

	if (read)
		return;
	read = true;
	if (tr_btf_running_kernel(s) && !getenv("MARKTAP_BTF")) {
		DIR *d = opendir("/sys/kernel/btf");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "vmlinux"))
				continue;
			FILE *f = fopen(tr_printf("/sys/kernel/btf/%s", e->d_name), "re");
			struct tr_buf raw = {0};
			char chunk[65536];
			size_t got;
			while (f && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
				tr_buf_add(&raw, chunk, got);
			if (f)
				fclose(f);
			scan_btf_strings(raw.data, raw.len, tr_strdup(e->d_name));
		}
		if (d)
			closedir(d);
	}
	elf_version(EV_CURRENT);
	for (char *d = strtok(tr_strdup(tr_btf_module_dirs(s)), ":"); d; d = strtok(NULL, ":"))
		nftw(d, scan_ko, 16, FTW_PHYS);
}

int tr_btf_module_tracepoints(struct tr_session *s, const char *glob, struct tr_vec *names,
			      struct tr_vec *modules)
{
	int n = 0;

	if (!tr_btf_vmlinux(s))
		return 0;
	read_module_tracepoints(s);
	for (unsigned i = 0; i < module_tps.n; i++) {
		const struct module_tp *t = module_tps.items[i];
		if (fnmatch(glob, t->name, 0))
			continue;
		tr_vec_push(names, (void *)t->name);
		tr_vec_push(modules, (void *)t->module);
		n++;
	}
	return n;
}

struct tr_resolved *tr_btf_tracepoint(struct tr_session *s, const char *module, const char *name,
				      const char *pp)
{
	const char *why = NULL;
	struct btf *b = module ? tr_btf_module(s, module, &why) : tr_btf_vmlinux(s);
	__u32 proto = b ? tracepoint_proto(b, name) : 0;

	if (!proto)
		return NULL;
	struct tr_resolved *r = tr_alloc(sizeof(*r));
	struct tr_kfunc *kf = tr_alloc(sizeof(*kf));
	kf->btf = b;
	kf->proto = proto;
	kf->name = tr_strdup(name);
	kf->module = module;
	kf->tracepoint = true;
	kf->names = tracepoint_names(b, name, proto);
	r->kind = P_MARK_KERNEL;
	r->kfunc = kf;
	r->format = "";
	r->pp = pp;
	unsigned n = tr_btf_in_registers(kf);
	tr_btf_tracepoint_fields(r, n < TRACEPOINT_ARGS_IN_REGS ? n : TRACEPOINT_ARGS_IN_REGS);
	return r;
}
