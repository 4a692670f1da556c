/*
 * btf.c - kernel functions and their variables from the kernel's BTF.
 *
 * kernel.function("GLOB")[.call|.return], kprobe.function("NAME")[.return]
 * and module("M").function("GLOB") resolve here without debuginfo: BTF
 * (libbpf) names every function the kernel was built with, its
 * parameters with their types, and every struct's members with their
 * offsets.  The translator keeps all of that; what crosses to marktap.ko
 * is only
 *
 *   - the binding "kprobe:[MODULE:]SYMBOL[:return[:MAXACTIVE]]", a marker
 *     name the module resolves by registering a kprobe or a kretprobe on
 *     the symbol (kmod/mt_kprobe.c); its handler gets the first
 *     MT_KPROBE_ARGS arguments of the call (and, in a return, the return
 *     value first), integers as the registers hold them;
 *   - in the handler's Lua, every member read compiled into
 *     rt.kernel_read(address, size, signed): offsets and sizes are
 *     constants here, the module only copies bytes without faulting.
 *
 * kernel.trace("NAME") resolves here too when BTF has the tracepoint
 * (ktrace.c finds the names and their SYSTEM): its prototype is the
 * typedef btf_trace_NAME, a pointer to void (void *data, TP_PROTO...);
 * the binding is "tracepoint:[MODULE:]NAME:NARGS" (kmod/mt_tracepoint.c),
 * NARGS the parameters the module passes, and the parameters' names,
 * types and members are read as a function's are.  A tracepoint vmlinux
 * lacks may be a module's: the modules' BTF (loaded, or their files as
 * for module("M").function) names those it defines.
 *
 * So the module never reads BTF and needs no build per script.
 *
 * Where the BTF comes from: /sys/kernel/btf/vmlinux for the running
 * kernel; for another release (-r) MARKTAP_BTF (raw BTF, or an ELF vmlinux
 * with a .BTF section), else /usr/lib/debug/boot/vmlinux-KVER or
 * /boot/vmlinux-KVER.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <fnmatch.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "tr_points.h"

/* Arguments the module reads at a hit (kmod/mt_kprobe.c: registers) */
#define KPROBE_ARGS 6
/* Kernel probes in one script: marktap.ko's MT_LUA_PROBES_MAX bindings */
#define KPROBES_MAX 1024
/* Parameters a tracepoint's handler gets (kmod/mt_tracepoint.h): those
 * in registers after the probe's data; past them, on the caller's stack,
 * only the tracepoint's whole count, up to TRACEPOINT_ARGS */
#define TRACEPOINT_ARGS_IN_REGS 5
#define TRACEPOINT_ARGS 12

struct tr_kfunc {
	const struct btf *btf;
	__u32 proto;                    /* its FUNC_PROTO, 0: not in BTF */
	const char *name, *module;
	bool ret, kprobe;
	bool tracepoint;                /* kernel.trace: proto's first parameter is data */
	__u32 names;                    /* a tracepoint's: the FUNC_PROTO naming proto's
					   parameters (0: none found, "argN") */
};

struct loaded {
	const char *module;             /* NULL: vmlinux */
	struct btf *btf;
};
static struct tr_vec loaded;           /* struct loaded * */
static char *btf_error;

static bool running_kernel(struct tr_session *s)
{
	struct utsname u;

	if (uname(&u))
		return false;
	if (!s->kernel_vr)
		s->kernel_vr = tr_strdup(u.release);
	return !strcmp(s->kernel_vr, u.release);
}

static const char *symbols;             /* "\n" + the table, or NULL */
static bool symbols_read, symbols_from_kallsyms;

static void read_symbols(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_SYSTEM_MAP");
	const char *path = env && *env ? env : running_kernel(s) ? "/proc/kallsyms" :
			   tr_printf("/boot/System.map-%s", s->kernel_vr);
	FILE *f = fopen(path, "r");

	symbols_read = true;
	symbols_from_kallsyms = !strcmp(path, "/proc/kallsyms");
	if (!f)
		return;
	struct tr_buf b = {0};
	char chunk[65536];
	size_t got;
	tr_buf_puts(&b, "\n");
	while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
		tr_buf_add(&b, chunk, got);
	fclose(f);
	symbols = tr_buf_str(&b);
	if (!strchr(symbols + 1, '\n') || !strchr(strchr(symbols + 1, '\n') + 1, '\n'))
		symbols = NULL;
}

/* The name's place in the table's line "ADDR TYPE NAME" (the kernel's)
 * or "ADDR TYPE NAME\t[MODULE]", or NULL */
static const char *symbol_at(const char *module, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = symbols; (p = strstr(p, name)); p += n) {
		if (p[-1] != ' ' || (p[n] != '\n' && p[n] != '\t' && p[n] != '\0'))
			continue;
		if (!module) {
			if (p[n] != '\t')
				return p;
			continue;
		}
		if (p[n] == '\t' && !strncmp(p + n + 2, module, strlen(module)) && p[n + 2 + strlen(module)] == ']')
			return p;
	}
	return NULL;
}

static unsigned long long symbol_address(const char *at)
{
	while (at[-1] != '\n')
		at--;
	return strtoull(at, NULL, 16);
}

/*
 * Is the kernel symbol NAME (of MODULE, or the kernel's) known to the
 * kernel marktap probes: 1 yes, 0 no, -1 cannot tell.  kprobe.function
 * takes symbols BTF does not describe; the running kernel's /proc/kallsyms
 * (names are shown without CAP_SYSLOG too) or the target's System.map
 * (MARKTAP_SYSTEM_MAP, /boot/System.map-KVER) says whether they exist, so
 * that "kprobe.function("gone") !, other" goes on to the other, as stap
 * does with its symbol table, instead of failing at load.  kernel.data
 * ("SYMBOL") asks too (kdata.c).  A table of one line is Debian's stub
 * System.map ("The real System.map is in the ...-dbg package"): no table.
 */
int tr_btf_kernel_symbol(struct tr_session *s, const char *module, const char *name)
{
	if (!symbols_read)
		read_symbols(s);
	if (!symbols || (module && !symbols_from_kallsyms))
		return -1;
	if (symbol_at(module, name))
		return 1;
	/* a module not loaded has no lines yet: it may come */
	if (module && !strstr(symbols, tr_printf("\t[%s]", module)))
		return -1;
	return 0;
}

/* Whether the kernel's function name is in the memory it frees after
 * boot, its init and exit text (the kernel refuses to kprobe them): by
 * the symbol table's addresses, when it has them (kallsyms, as root) */
static bool init_text(struct tr_session *s, const char *name)
{
	static const char *const bounds[][2] = {
		{ "__init_begin", "__init_end" }, { "_sinittext", "_einittext" },
	};
	static unsigned long long first[2], end[2];
	static bool known;
	const char *at;

	if (!symbols_read)
		read_symbols(s);
	if (!symbols)
		return false;
	for (unsigned i = 0; i < 2 && !known; i++) {
		const char *a = symbol_at(NULL, bounds[i][0]), *b = symbol_at(NULL, bounds[i][1]);
		if (a && b) {
			first[i] = symbol_address(a);
			end[i] = symbol_address(b);
		}
	}
	known = true;
	if (!(at = symbol_at(NULL, name)))
		return false;
	unsigned long long addr = symbol_address(at);
	for (unsigned i = 0; i < 2; i++)
		if (addr >= first[i] && addr < end[i])
			return true;
	return false;
}

static struct btf *parse(const char *path, struct btf *base)
{
	struct btf *b = base ? btf__parse_split(path, base) : btf__parse(path, NULL);

	if (!b)
		btf_error = tr_printf("cannot read BTF from %s: %s", path, strerror(errno));
	return b;
}

/* vmlinux's BTF, or NULL and btf_error */
static struct btf *vmlinux_btf(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_BTF");
	const char *cands[2];

	for (unsigned i = 0; i < loaded.n; i++)
		if (!((struct loaded *)loaded.items[i])->module)
			return ((struct loaded *)loaded.items[i])->btf;
	if (btf_error)
		return NULL;
	struct btf *b = NULL;
	if (running_kernel(s) && !(env && *env)) {
		b = parse("/sys/kernel/btf/vmlinux", NULL);
	} else if (env && *env) {
		b = parse(env, NULL);
	} else {
		cands[0] = tr_printf("/usr/lib/debug/boot/vmlinux-%s", s->kernel_vr);
		cands[1] = tr_printf("/boot/vmlinux-%s", s->kernel_vr);
		for (unsigned i = 0; i < 2 && !b && !btf_error; i++)
			if (access(cands[i], R_OK) == 0)
				b = parse(cands[i], NULL);
		if (!b && !btf_error)
			btf_error = tr_printf("no BTF for kernel %s: not the running kernel (whose BTF is "
					      "/sys/kernel/btf/vmlinux), no MARKTAP_BTF, no %s or %s",
					      s->kernel_vr, cands[0], cands[1]);
	}
	if (!b)
		return NULL;
	struct loaded *l = tr_alloc(sizeof(*l));
	l->btf = b;
	tr_vec_push(&loaded, l);
	return b;
}

/* NAME.ko's file, kernel module names being equal with '-' and '_' */
static const char *want_ko;
static char *found_ko;

static bool same_module(const char *file, const char *module)
{
	for (; *module; file++, module++)
		if (*file != *module && !((*file == '-' || *file == '_') && (*module == '-' || *module == '_')))
			return false;
	return !strcmp(file, ".ko");
}

static int find_ko(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	if (flag == FTW_F && same_module(path + f->base, want_ko)) {
		found_ko = tr_strdup(path);
		return 1;
	}
	return 0;
}

/* module.ko of the target kernel: in MARKTAP_MODULE_PATH's folders, then
 * under /lib/modules/KVER (the kernel's module tree), or NULL */
static const char *module_dirs(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_MODULE_PATH");
	struct tr_buf dirs = {0};

	running_kernel(s);   /* sets s->kernel_vr */
	if (env && *env)
		tr_buf_printf(&dirs, "%s:", env);
	tr_buf_printf(&dirs, "/lib/modules/%s/kernel:/lib/modules/%s/updates:/lib/modules/%s/extra",
		      s->kernel_vr, s->kernel_vr, s->kernel_vr);
	return tr_buf_str(&dirs);
}

static const char *module_file(struct tr_session *s, const char *module)
{
	want_ko = module;
	found_ko = NULL;
	for (char *d = strtok(tr_strdup(module_dirs(s)), ":"); d && !found_ko; d = strtok(NULL, ":"))
		nftw(d, find_ko, 16, FTW_PHYS);
	return found_ko;
}

/* module("GLOB"): the names of the modules it matches, loaded or not */
static const char *glob_pattern;
static struct tr_vec glob_found;

static char *module_name_of(const char *file, size_t len)
{
	char *name = tr_strndup(file, len);

	for (char *p = name; *p; p++)
		if (*p == '-')
			*p = '_';   /* the kernel's name of dccp-ipv4.ko */
	return name;
}

static void glob_add(char *name)
{
	if (!fnmatch(glob_pattern, name, 0))
		tr_vec_push(&glob_found, name);
}

static int glob_ko(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	const char *base = path + f->base;
	size_t n = strlen(base);

	(void)st;
	if (flag == FTW_F && n > 3 && !strcmp(base + n - 3, ".ko"))
		glob_add(module_name_of(base, n - 3));
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void module_glob_names(struct tr_session *s, const char *glob, struct tr_vec *names)
{
	glob_pattern = module_name_of(glob, strlen(glob));
	glob_found = (struct tr_vec){0};
	if (running_kernel(s) && !getenv("MARKTAP_BTF")) {
		DIR *d = opendir("/sys/kernel/btf");
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.' && strcmp(e->d_name, "vmlinux"))
				glob_add(tr_strdup(e->d_name));
		if (d)
			closedir(d);
	}
	for (char *d = strtok(tr_strdup(module_dirs(s)), ":"); d; d = strtok(NULL, ":"))
		nftw(d, glob_ko, 16, FTW_PHYS);
	qsort(glob_found.items, glob_found.n, sizeof(void *), by_name);
	*names = (struct tr_vec){0};
	for (unsigned i = 0; i < glob_found.n; i++)
		if (!names->n || strcmp(names->items[names->n - 1], glob_found.items[i]))
			tr_vec_push(names, glob_found.items[i]);
	free(glob_found.items);
}

/* A module's split BTF: the loaded module's (/sys/kernel/btf/MODULE, the
 * running kernel's), else the .BTF of its file (module_file), which a
 * probe waits on until the module is loaded; or NULL and *why */
static struct btf *module_btf(struct tr_session *s, const char *module, const char **why)
{
	struct btf *base = vmlinux_btf(s);

	if (!base) {
		*why = btf_error;
		return NULL;
	}
	for (unsigned i = 0; i < loaded.n; i++) {
		struct loaded *l = loaded.items[i];
		if (l->module && !strcmp(l->module, module))
			return l->btf;
	}
	const char *path = tr_printf("/sys/kernel/btf/%s", module);
	if (!running_kernel(s) || access(path, R_OK)) {
		const char *ko = module_file(s, module);
		if (!ko) {
			*why = tr_printf("no BTF for module %s: %snot found as %s.ko in MARKTAP_MODULE_PATH "
					 "or /lib/modules/%s", module, running_kernel(s) ?
					 tr_printf("not loaded (no %s), and ", path) : "", module, s->kernel_vr);
			return NULL;
		}
		path = ko;
	}
	struct btf *b = btf__parse_split(path, base);
	if (!b) {
		*why = tr_printf("cannot read BTF from %s: %s (a module built without BTF?)", path, strerror(errno));
		return NULL;
	}
	struct loaded *l = tr_alloc(sizeof(*l));
	l->module = tr_strdup(module);
	l->btf = b;
	tr_vec_push(&loaded, l);
	return b;
}

/* ---- types ---------------------------------------------------------------- */

/* t past typedefs and qualifiers */
static const struct btf_type *skip_mods(const struct btf *b, __u32 id, __u32 *out)
{
	const struct btf_type *t = btf__type_by_id(b, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		id = t->type;
		t = btf__type_by_id(b, id);
	}
	if (out)
		*out = id;
	return t;
}

/* A type as stap prints it in -L: "struct file*", "char const*", "size_t" */
static void type_name(const struct btf *b, __u32 id, struct tr_buf *out)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	const char *n;

	if (!t || id == 0) {
		tr_buf_puts(out, "void");
		return;
	}
	n = btf__name_by_offset(b, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		type_name(b, t->type, out);
		tr_buf_putc(out, '*');
		return;
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
		type_name(b, t->type, out);
		tr_buf_puts(out, btf_kind(t) == BTF_KIND_CONST ? " const" : " volatile");
		return;
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		type_name(b, t->type, out);
		return;
	case BTF_KIND_STRUCT:
		tr_buf_printf(out, "struct %s", n && *n ? n : "{...}");
		return;
	case BTF_KIND_UNION:
		tr_buf_printf(out, "union %s", n && *n ? n : "{...}");
		return;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		tr_buf_printf(out, "enum %s", n && *n ? n : "{...}");
		return;
	case BTF_KIND_FWD:
		tr_buf_printf(out, "%s %s", btf_kflag(t) ? "union" : "struct", n);
		return;
	case BTF_KIND_FUNC_PROTO:
		tr_buf_puts(out, "void (*)()");
		return;
	case BTF_KIND_ARRAY:
		type_name(b, btf_array(t)->type, out);
		tr_buf_printf(out, "[%u]", btf_array(t)->nelems);
		return;
	default:
		tr_buf_puts(out, n && *n ? n : "void");
	}
}

/* ---- resolving probe points ------------------------------------------------ */

static const char *comp_str(const struct tr_component *c)
{
	return c->has_arg && c->arg && c->arg->kind == E_STR ? c->arg->str : NULL;
}

static bool is(const struct tr_component *c, const char *name, bool arg)
{
	return !strcmp(c->name, name) && c->has_arg == arg;
}

struct shape {
	const char *module, *glob;
	bool kprobe, ret;
	int64_t maxactive;
	bool quiet;       /* one module of module("GLOB"): none there is no error */
};

/* kernel.function("G")[.call|.return[.maxactive(N)]], module("M").function("G")...,
 * kprobe[.module("M")].function("F")[.return[.maxactive(N)]]: 1 and *sh, or 0 */
static int shape_of(const struct tr_vec *comps, struct shape *sh)
{
	const struct tr_component *c0 = comps->items[0];
	unsigned at = 1;

	memset(sh, 0, sizeof(*sh));
	if (comps->n < 2)
		return 0;
	if (is(c0, "kprobe", false)) {
		sh->kprobe = true;
		if (is(comps->items[1], "module", true) && comp_str(comps->items[1])) {
			sh->module = comp_str(comps->items[1]);
			at = 2;
		}
	} else if (is(c0, "module", true) && comp_str(c0)) {
		sh->module = comp_str(c0);
	} else if (!is(c0, "kernel", false)) {
		return 0;
	}
	if (at >= comps->n || !is(comps->items[at], "function", true) || !comp_str(comps->items[at]))
		return 0;
	sh->glob = comp_str(comps->items[at++]);
	if (at < comps->n && !sh->kprobe && is(comps->items[at], "call", false)) {
		at++;
	} else if (at < comps->n && is(comps->items[at], "return", false)) {
		sh->ret = true;
		at++;
		if (at < comps->n && is(comps->items[at], "maxactive", true)) {
			const struct tr_component *m = comps->items[at++];
			if (m->arg->kind != E_NUM || m->arg->num < 0)
				return 0;
			sh->maxactive = m->arg->num;
		}
	}
	return at == comps->n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The FUNC_PROTOs of b's functions matching glob, their names sorted in names */
static void matching(const struct btf *b, const char *glob, struct tr_vec *names)
{
	__u32 n = btf__type_cnt(b);
	__u32 first = btf__base_btf(b) ? btf__type_cnt(btf__base_btf(b)) : 1;

	for (__u32 id = first; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!btf_is_func(t))
			continue;
		const char *name = btf__name_by_offset(b, t->name_off);
		if (!fnmatch(glob, name, 0))
			tr_vec_push(names, (void *)name);
	}
	qsort(names->items, names->n, sizeof(void *), cmp_str);
}

static __u32 proto_of(const struct btf *b, const char *name)
{
	__s32 id = btf__find_by_name_kind(b, name, BTF_KIND_FUNC);

	return id > 0 ? btf__type_by_id(b, (__u32)id)->type : 0;
}

/*
 * The kernel's kprobe blacklist, for the running kernel when debugfs shows
 * it (root): "0xSTART-0xEND\tNAME" lines, the names sorted into *out.
 * MARKTAP_KPROBE_BLACKLIST names another file ("/dev/null": none).
 */
static const struct tr_vec *blacklist(struct tr_session *s, const char **path)
{
	static struct tr_vec names;
	static bool read_once;
	const char *env = getenv("MARKTAP_KPROBE_BLACKLIST");
	char line[512];
	FILE *f;

	*path = env && *env ? env : "/sys/kernel/debug/kprobes/blacklist";
	if (read_once)
		return &names;
	read_once = true;
	if ((!env || !*env) && !running_kernel(s))
		return &names;
	if (!(f = fopen(*path, "r")))
		return &names;
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '\t');
		if (!name)
			continue;
		name++;
		name[strcspn(name, " \n")] = '\0';
		tr_vec_push(&names, tr_strdup(name));
	}
	fclose(f);
	qsort(names.items, names.n, sizeof(void *), cmp_str);
	return &names;
}

static bool blacklisted(struct tr_session *s, const char *name, const char **path)
{
	const struct tr_vec *bl = blacklist(s, path);

	return bl->n && bsearch(&name, bl->items, bl->n, sizeof(void *), cmp_str);
}

/* "no match" with why, and names BTF has that are near */
static void no_match(struct tr_session *s, const struct btf *b, const struct shape *sh,
		     const char *pp, const struct tr_token *tok)
{
	struct tr_vec cands = {0};
	__u32 n = b ? btf__type_cnt(b) : 0;
	size_t len = strcspn(sh->glob, "*?[@");

	/* the names sharing the glob's first characters, the closest of them */
	for (__u32 id = 1; id < n && len >= 3; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const char *name;
		if (btf_is_func(t) && !strncmp((name = btf__name_by_offset(b, t->name_off)), sh->glob,
						 len < 4 ? len : 4))
			tr_vec_push(&cands, (void *)name);
	}
	tr_sem_error(tok, "while resolving probe point %s: no match (no function of the kernel's BTF is "
		     "called \"%s\": inlined, or static and left out of BTF, or not in this kernel)%s",
		     pp, sh->glob, tr_similar_names(sh->glob, &cands));
	free(cands.items);
}

static const char *binding(const struct shape *sh, const char *name)
{
	struct tr_buf b = {0};

	tr_buf_printf(&b, "kprobe:%s%s%s", sh->module ? sh->module : "", sh->module ? ":" : "", name);
	if (sh->ret)
		tr_buf_puts(&b, ":return");
	if (sh->ret && sh->maxactive)
		tr_buf_printf(&b, ":%lld", (long long)sh->maxactive);
	return tr_buf_str(&b);
}

static const char *point_name(const struct shape *sh, const char *name)
{
	struct tr_buf b = {0};

	if (sh->kprobe)
		tr_buf_puts(&b, "kprobe.");
	if (sh->module)
		tr_buf_printf(&b, "module(\"%s\").", sh->module);
	else if (!sh->kprobe)
		tr_buf_puts(&b, "kernel.");
	tr_buf_printf(&b, "function(\"%s\")", name);
	if (sh->ret)
		tr_buf_puts(&b, ".return");
	if (sh->ret && sh->maxactive)
		tr_buf_printf(&b, ".maxactive(%lld)", (long long)sh->maxactive);
	return tr_buf_str(&b);
}

/* The handler's fields: the parameters the module gives (the first
 * KPROBE_ARGS), then "return" in a return probe; kprobe.* has none. */
static struct tr_resolved *new_point(const struct btf *b, const struct shape *sh, const char *name)
{
	struct tr_resolved *r = tr_alloc(sizeof(*r));
	struct tr_kfunc *kf = tr_alloc(sizeof(*kf));

	kf->btf = b;
	kf->proto = b ? proto_of(b, name) : 0;
	kf->name = tr_strdup(name);
	kf->module = sh->module;
	kf->ret = sh->ret;
	kf->kprobe = sh->kprobe;
	r->kind = P_MARK_KERNEL;
	r->kfunc = kf;
	r->marker = binding(sh, name);
	r->format = "";
	r->pp = point_name(sh, name);
	for (unsigned i = 0; i < KPROBE_ARGS; i++)
		tr_vec_push(&r->fields, tr_printf("arg%u", i + 1));
	if (sh->ret)
		tr_vec_push(&r->fields, "return");
	for (unsigned i = 0; i < r->fields.n; i++)
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
	return r;
}

static int resolve_shape(struct tr_session *s, struct shape sh, const struct tr_token *tok, struct tr_vec *out);

/* module("GLOB").function(...): the function in each module GLOB names;
 * an error only when none has it */
static int resolve_module_glob(struct tr_session *s, struct shape sh, const struct tr_token *tok,
			       struct tr_vec *out)
{
	struct tr_vec mods;
	unsigned before = out->n;
	const char *glob = sh.module;

	module_glob_names(s, glob, &mods);
	for (unsigned i = 0; i < mods.n; i++) {
		struct shape one = sh;
		one.module = mods.items[i];
		one.quiet = true;
		if (resolve_shape(s, one, tok, out) < 0) {
			free(mods.items);
			return -1;
		}
	}
	if (out->n == before) {
		struct tr_buf list = {0};
		for (unsigned i = 0; i < mods.n && i < 4; i++)
			tr_buf_printf(&list, "%s%s", i ? ", " : "", (const char *)mods.items[i]);
		if (mods.n > 4)
			tr_buf_puts(&list, ", ...");
		tr_sem_error(tok, "while resolving probe point %s: no match (%s)", point_name(&sh, sh.glob),
			     mods.n ? tr_printf("no module matching %s has it: %s", glob, tr_buf_str(&list)) :
				      tr_printf("no module of the kernel matches %s, loaded or in "
						"MARKTAP_MODULE_PATH or /lib/modules/%s", glob, s->kernel_vr));
		free(list.data);
		free(mods.items);
		return -1;
	}
	free(mods.items);
	return (int)out->n;
}

/*
 * kprobe.statement(ADDR).absolute, kernel.statement(ADDR).absolute: a
 * kprobe at a kernel address the script gives (guru mode, as stap's; the
 * kernel refuses one that is not at an instruction of its text).  No
 * $variables: nothing is known of the place.
 */
static int resolve_absolute(struct tr_session *s, const struct tr_vec *comps, const struct tr_token *tok,
			    struct tr_vec *out)
{
	const struct tr_component *st;
	struct shape sh = { .kprobe = true };
	const char *c0 = ((const struct tr_component *)comps->items[0])->name;

	if (comps->n >= 2 && !strcmp(c0, "kernel") && is(comps->items[1], "statement", true) &&
	    comp_str(comps->items[1])) {
		/* stap's kernel.statement("F@FILE:LINE") is DWARF's line table */
		tr_sem_error(tok, "while resolving probe point kernel.statement(\"%s\"): no match (a source "
			     "line needs the kernel's DWARF debuginfo; marktap reads BTF, which has no lines: "
			     "kernel.function(\"F\") probes a function's entry, and with -g "
			     "kernel.statement(ADDRESS).absolute an address)", comp_str(comps->items[1]));
		return -1;
	}
	if (comps->n != 3 || (strcmp(c0, "kprobe") && strcmp(c0, "kernel")) ||
	    !is(comps->items[1], "statement", true) || !is(comps->items[2], "absolute", false))
		return 0;
	st = comps->items[1];
	if (st->arg->kind != E_NUM)
		return 0;
	const char *pp = tr_printf("%s.statement(0x%llx).absolute", c0, (unsigned long long)st->arg->num);
	if (!s->guru) {
		tr_sem_error(tok, "while resolving probe point %s: an absolute address needs guru mode (-g)", pp);
		return -1;
	}
	struct tr_resolved *r = new_point(NULL, &sh, tr_printf("0x%llx", (unsigned long long)st->arg->num));
	r->pp = pp;
	tr_vec_push(out, r);
	return 1;
}

int tr_btf_resolve(struct tr_session *s, const struct tr_vec *comps, const struct tr_token *tok,
		   struct tr_vec *out)
{
	struct shape sh;
	int n = resolve_absolute(s, comps, tok, out);

	if (n)
		return n;
	if (!shape_of(comps, &sh))
		return 0;
	if (sh.module && strpbrk(sh.module, "*?["))
		return resolve_module_glob(s, sh, tok, out);
	return resolve_shape(s, sh, tok, out);
}

static int resolve_shape(struct tr_session *s, struct shape sh, const struct tr_token *tok, struct tr_vec *out)
{
	const char *why = NULL, *pp;
	struct btf *b;
	struct tr_vec names = {0};

	pp = point_name(&sh, sh.glob);
	/* NAME@FILE: BTF knows functions by name only, the map of the
	 * kernel's sources (ksrc.c) their files; without a map, the one
	 * function of a name is the one stap would find (its file unchecked) */
	const char *at = strchr(sh.glob, '@'), *file = NULL, *map_why = NULL;
	if (at && at > sh.glob && at[1] && !strpbrk(at + 1, ":+") && !sh.kprobe) {
		file = at + 1;
		sh.glob = tr_strndup(sh.glob, (size_t)(at - sh.glob));
	}
	if (strchr(sh.glob, '@') || strchr(sh.glob, ':')) {
		tr_sem_error(tok, "while resolving probe point %s: no match (\"%s\" names a source line: "
			     "that needs the kernel's DWARF debuginfo; marktap reads BTF, which has "
			     "functions by name only)", pp, sh.glob);
		return -1;
	}
	b = sh.module ? module_btf(s, sh.module, &why) : vmlinux_btf(s);
	if (b)
		matching(b, sh.glob, &names);
	if (b && file && tr_ksrc_filter(s, file, &names, &map_why) < 0 && strpbrk(sh.glob, "*?[")) {
		tr_sem_error(tok, "while resolving probe point %s: no match (which functions are in %s "
			     "needs the kernel's DWARF debuginfo or a map of its sources; %s)", pp, file, map_why);
		free(names.items);
		return -1;
	}
	if (b && file && !map_why && !names.n && !sh.quiet) {
		const char *where = strpbrk(sh.glob, "*?[") ? NULL : tr_ksrc_where(s, sh.glob);
		tr_sem_error(tok, "while resolving probe point %s: no match (no function of the kernel's BTF "
			     "%s defined in %s, by the map of its sources %s%s%s)", pp,
			     strpbrk(sh.glob, "*?[") ? tr_printf("matching %s is", sh.glob) :
			     tr_printf("called %s is", sh.glob), file, tr_ksrc_path(s),
			     where ? ": it is in " : "", where ? where : "");
		return -1;
	}
	if (!names.n && sh.kprobe && !strpbrk(sh.glob, "*?[")) {
		/* kprobe.function needs no types: the module finds the symbol,
		 * which the kernel's symbol table may show missing */
		if (tr_btf_kernel_symbol(s, sh.module, sh.glob) == 0) {
			if (sh.quiet)
				return 0;
			tr_sem_error(tok, "while resolving probe point %s: no match (%s is in neither the "
				     "kernel's BTF nor its symbol table)", pp, sh.glob);
			return -1;
		}
		tr_vec_push(out, new_point(NULL, &sh, sh.glob));
		return 1;
	}
	if (!b || !names.n) {
		if (sh.quiet)
			return 0;   /* another module of the glob may have it */
		if (!b)
			tr_sem_error(tok, "while resolving probe point %s: %s", pp, why ? why : btf_error);
		else
			no_match(s, b, &sh, pp, tok);
		return -1;
	}
	if (file && map_why && names.n > 1) {
		tr_sem_error(tok, "while resolving probe point %s: %u functions of the kernel are called %s; "
			     "which one is in %s needs the kernel's DWARF debuginfo or a map of its sources (%s)",
			     pp, names.n, sh.glob, file, map_why);
		free(names.items);
		return -1;
	}
	if (file && map_why && !s->listing)
		tr_warn(tok, "%s: the kernel's only function %s, its file %s not checked (BTF has no "
			"source files; %s)", pp, sh.glob, file, map_why);
	if (!sh.kprobe || b) {   /* the kprobe blacklist: refused by name, left out of globs */
		const char *path = NULL;
		unsigned kept = 0;
		unsigned init = 0;
		for (unsigned i = 0; i < names.n; i++) {
			if (blacklisted(s, names.items[i], &path))
				continue;
			if (!sh.module && names.n > 1 && init_text(s, names.items[i]))
				init++;   /* a glob leaves them out, as the blacklist's */
			else
				names.items[kept++] = names.items[i];
		}
		if (!kept && init) {
			tr_sem_error(tok, "while resolving probe point %s: no match (the functions matching are "
				     "in the kernel's init text, freed after boot)", pp);
			free(names.items);
			return -1;
		}
		if (!kept) {
			tr_sem_error(tok, "while resolving probe point %s: %s is on the kernel's kprobe blacklist "
				     "(%s): the kernel refuses to probe it, its probe could recurse into the "
				     "probe's own path", pp, (const char *)names.items[0], path);
			free(names.items);
			return -1;
		}
		names.n = kept;
	}
	if (names.n > KPROBES_MAX && !s->listing) {
		tr_sem_error(tok, "while resolving probe point %s: %u functions match; marktap.ko probes at "
			     "most %d kernel functions in one script", pp, names.n, KPROBES_MAX);
		free(names.items);
		return -1;
	}
	for (unsigned i = 0; i < names.n; i++) {
		if (i && !strcmp(names.items[i], names.items[i - 1]))
			continue;
		struct tr_resolved *r = new_point(b, &sh, names.items[i]);
		/* -l/-L: where the source defines it, as stap shows */
		const char *where = s->listing && !sh.kprobe ? tr_ksrc_where(s, names.items[i]) : NULL;
		if (where && !strchr(where, ','))
			r->pp = point_name(&sh, tr_printf("%s@%s", (const char *)names.items[i], where));
		tr_vec_push(out, r);
	}
	free(names.items);
	return (int)out->n;
}

/* ---- target variables --------------------------------------------------- */

/* A tracepoint's binding and fields for its first n parameters: NARGS
 * at most the registers' until a handler reads past them, so that a
 * handler that does not still runs where the kernel's count of the
 * parameters is unknown (kmod/mt_tracepoint.c) */
static void tracepoint_fields(struct tr_resolved *r, unsigned n)
{
	const struct tr_kfunc *kf = r->kfunc;

	r->marker = tr_printf("tracepoint:%s%s%s:%u", kf->module ? kf->module : "", kf->module ? ":" : "",
			      kf->name, n);
	r->fields = (struct tr_vec){0};
	r->field_types = (struct tr_vec){0};
	for (unsigned i = 0; i < n; i++) {
		tr_vec_push(&r->fields, tr_printf("arg%u", i + 1));
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
	}
}

/* The name of parameter i of kf's prototype (a tracepoint's: its data is 0) */
static const char *param_name(const struct tr_kfunc *kf, unsigned i)
{
	const struct btf_type *p = btf__type_by_id(kf->btf, kf->tracepoint ? kf->names : kf->proto);

	if (kf->tracepoint && !kf->names)
		return tr_printf("arg%u", i);
	return btf__name_by_offset(kf->btf, btf_params(p)[i].name_off);
}

/* The parameter called name: its index and type, or -1 */
static int param(const struct tr_kfunc *kf, const char *name, __u32 *type)
{
	const struct btf_type *p = kf->proto ? btf__type_by_id(kf->btf, kf->proto) : NULL;
	unsigned first = kf->tracepoint;

	for (unsigned i = first; p && i < btf_vlen(p); i++)
		if (!strcmp(param_name(kf, i), name)) {
			*type = btf_params(p)[i].type;
			return (int)(i - first);
		}
	return -1;
}

/* The parameters of one slot each (a register, or a stack slot), from
 * the first of kf's prototype (a tracepoint's: past its data) to a
 * parameter passed by value in several, or max */
static unsigned one_slot_each(const struct tr_kfunc *kf, unsigned max)
{
	const struct btf_type *p = btf__type_by_id(kf->btf, kf->proto);
	unsigned n = 0;

	for (unsigned i = kf->tracepoint; i < btf_vlen(p) && n < max; i++, n++) {
		const struct btf_type *t = skip_mods(kf->btf, btf_params(p)[i].type, NULL);
		if (!t || btf_is_composite(t) || btf__resolve_size(kf->btf, btf_params(p)[i].type) > 8)
			break;
	}
	return n;
}

/* The parameters the module may pass: for a function those in registers;
 * for a tracepoint those in registers, or all of them when each takes
 * one slot and they are at most TRACEPOINT_ARGS (a probe reading the
 * stack takes the tracepoint's whole count: kmod/mt_tracepoint.c);
 * either way none from a parameter passed by value in several on. */
static unsigned in_registers(const struct tr_kfunc *kf)
{
	if (!kf->tracepoint)
		return one_slot_each(kf, KPROBE_ARGS);
	unsigned all = btf_vlen(btf__type_by_id(kf->btf, kf->proto)) - 1;
	unsigned n = one_slot_each(kf, TRACEPOINT_ARGS);
	return n > TRACEPOINT_ARGS_IN_REGS && n < all ? TRACEPOINT_ARGS_IN_REGS : n;
}

/* One read of the chain: at the value so far plus off, size bytes (0:
 * none, the address itself), then bits [shift, shift+bits) if bits. */
struct step {
	long off;
	unsigned size, shift, bits;
	bool sign;
};

static bool scalar(const struct btf_type *t)
{
	return t && (btf_is_int(t) || btf_is_ptr(t) || btf_is_enum(t) || btf_is_enum64(t));
}

/* Member name of t, in t or in its anonymous structs and unions: its
 * type and bit offset (added to *bitoff), its bitfield size. */
static bool find_member(const struct btf *b, const struct btf_type *t, const char *name, __u32 *type,
			__u32 *bitoff, __u32 *bits)
{
	const struct btf_member *m = btf_members(t);

	for (unsigned k = 0; k < btf_vlen(t); k++) {
		const char *n = btf__name_by_offset(b, m[k].name_off);
		const struct btf_type *mt;
		__u32 inner = *bitoff + btf_member_bit_offset(t, k);

		if (n && !strcmp(n, name)) {
			*type = m[k].type;
			*bitoff = inner;
			*bits = btf_member_bitfield_size(t, k);
			return true;
		}
		if ((!n || !*n) && (mt = skip_mods(b, m[k].type, NULL)) && btf_is_composite(mt) &&
		    find_member(b, mt, name, type, &inner, bits)) {
			*bitoff = inner;
			return true;
		}
	}
	return false;
}

/* The type and size of a scalar the steps end on, in st */
static void end_on(const struct btf *b, __u32 id, struct step *st)
{
	const struct btf_type *mt = skip_mods(b, id, NULL);
	long size = btf__resolve_size(b, id);

	st->size = scalar(mt) && size > 0 && size <= 8 ? (unsigned)size : 0;
	st->sign = mt && btf_is_int(mt) && (btf_int_encoding(mt) & BTF_INT_SIGNED);
	st->shift = st->bits = 0;
}

/*
 * Walk "->a->b" (or ".a", "[]" taking the next of args) from a value of
 * type id: steps pushed (as "off:size:sign:shift:bits;" to buf), or an
 * error message.  A subscript by a number is an offset of the step; by
 * any other expression, args' Kth, it is a step of its own,
 * "I:K:SIZE:COUNT;": the address moves by the index times the element's
 * SIZE at run time, the index checked against a fixed-size array's
 * COUNT elements (0: a pointer's or a flexible array's, unbounded).
 * at_address: the value is an object's address (@cast's), not a pointer
 * to follow.  addr_of: '&' before it all, the last step is the address,
 * read from nothing.
 */
static const char *walk(const struct btf *b, __u32 id, const char *members, const struct tr_vec *args,
			bool at_address, bool addr_of, struct tr_buf *buf)
{
	struct step st = {0};
	bool pending = at_address;   /* st holds a read not yet written */
	unsigned k = 0;

	while (*members) {
		const struct btf_type *t = skip_mods(b, id, &id);

		if (members[0] == '[') {
			const struct tr_expr *ix = args && k < args->n ? args->items[k] : NULL;
			const struct btf_type *et;
			unsigned count = 0;
			long esize;
			if (!ix)
				return "a subscript without its index";
			if (t && btf_is_ptr(t)) {       /* p[N]: through the pointer */
				if (pending)
					tr_buf_printf(buf, "%ld:8:0:0:0;", st.off);
				memset(&st, 0, sizeof(st));
				pending = true;
				id = t->type;
			} else if (t && btf_is_array(t)) {   /* a member array: in place */
				id = btf_array(t)->type;
				count = btf_array(t)->nelems;
			} else if (!pending) {
				return "a subscript of a value that is no pointer or array";
			}   /* else @cast(p, "T")[N]: the Nth T from p */
			et = skip_mods(b, id, NULL);
			esize = btf__resolve_size(b, id);
			if (!et || esize <= 0)
				return "a subscript of a pointer to a type of no size";
			if (ix->kind == E_NUM)   /* as stap: read where it says */
				st.off += (long)ix->num * esize;
			else    /* before the step's offset: the sum is the same */
				tr_buf_printf(buf, "I:%u:%ld:%u;", k, esize, count);
			k++;
			end_on(b, id, &st);
			members += 2;
			continue;
		}
		bool arrow = !strncmp(members, "->", 2);
		const char *name = members + (arrow ? 2 : 1);
		size_t len = strcspn(name, "-.[");
		char *field = tr_printf("%.*s", (int)len, name);

		if (t && btf_is_ptr(t)) {       /* p->m: through the pointer */
			if (pending)
				tr_buf_printf(buf, "%ld:8:0:0:0;", st.off);
			memset(&st, 0, sizeof(st));
			pending = true;
			t = skip_mods(b, t->type, &id);
		} else if (!pending) {
			return tr_printf("'%s' is not a pointer", field);
		}
		if (!t || !btf_is_composite(t))
			return tr_printf("member '%s' of a value that is no struct or union", field);
		__u32 bitoff = 0, bits = 0;
		long base_off;
		if (!find_member(b, t, field, &id, &bitoff, &bits))
			return tr_printf("%s has no member '%s'", btf_is_union(t) ? "union" : "struct", field);
		base_off = bitoff / 8;
		long size = btf__resolve_size(b, id);
		st.off += base_off;
		end_on(b, id, &st);
		if (bits) {
			long unit = size > 0 ? size : 4;
			st.off = st.off - base_off + (long)(bitoff / (unit * 8)) * unit;
			st.size = (unsigned)unit;
			st.shift = bitoff % (unsigned)(unit * 8);
			st.bits = bits;
			st.sign = false;
		}
		members = name + len;
	}
	if (addr_of) {   /* &...: where the last step would have read */
		if (st.bits)
			return "the address of a bit field";
		if (!pending)
			return "'&' of a value that is not in memory";
		tr_buf_printf(buf, "%ld:0:0:0:0;", st.off);
		return NULL;
	}
	const struct btf_type *last = skip_mods(b, id, NULL);
	if (!st.size && last && !btf_is_array(last))
		return "the value is a struct or union, not a number (name a member)";
	tr_buf_printf(buf, "%ld:%u:%d:%u:%u;", st.off, st.size, st.sign, st.shift, st.bits);
	return NULL;
}

/* A register holding a value narrower than 64 bits: the rest is not
 * defined, so the value is cut to its type ("T:size:signed;"), or NULL */
static const char *truncation(const struct btf *b, __u32 id)
{
	const struct btf_type *t = skip_mods(b, id, NULL);
	long size = btf__resolve_size(b, id);

	if (!t || !scalar(t) || size <= 0 || size >= 8)
		return NULL;
	return tr_printf("T:%ld:%d;", size, btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED));
}

/* @cast(p, "struct NAME"[, "module"]): its type in *bp, or 0.  The
 * module "kernel" (or a header, "kernel<linux/x.h>") is vmlinux's BTF,
 * "kernel:NAME" (stap's) module NAME's split BTF. */
static __u32 cast_type(struct tr_session *s, const char *spec, struct btf **bp, const char **why)
{
	char type[256], module[128] = "";
	struct btf *b;
	const char *name = type;
	int kind = BTF_KIND_STRUCT;

	if (sscanf(spec, " , \"%255[^\"]\" , \"%127[^\"]\"", type, module) < 1) {
		*why = "@cast needs a type name";
		return 0;
	}
	if (module[0] && strcmp(module, "kernel") && !strchr(module, '<') && strncmp(module, "kernel:", 7)) {
		*why = tr_printf("@cast's module \"%s\": only the kernel's types are read here "
				 "(\"kernel\", \"kernel:MODULE\")", module);
		return 0;
	}
	if (!strncmp(name, "struct ", 7)) {
		name += 7;
	} else if (!strncmp(name, "union ", 6)) {
		name += 6;
		kind = BTF_KIND_UNION;
	}
	if (!strncmp(module, "kernel:", 7)) {
		b = module_btf(s, module + 7, why);
		if (!b)
			return 0;
	} else {
		b = vmlinux_btf(s);
		if (!b) {
			*why = btf_error;
			return 0;
		}
	}
	__s32 id = btf__find_by_name_kind(b, name, kind);
	if (id <= 0) {
		*why = tr_printf("type \"%s\" is not in the %s's BTF", type,
				 module[6] == ':' ? tr_printf("module %s", module + 7) : "kernel");
		return 0;
	}
	*bp = b;
	return (__u32)id;
}

int tr_btf_cast(struct tr_session *s, struct tr_expr *e, bool report)
{
	const char *why = NULL;
	struct btf *b = NULL;
	__u32 id = cast_type(s, e->fmt ? e->fmt : "", &b, &why);
	struct tr_buf buf = {0};

	if (id && ((e->members && e->members[0]) || e->addr))
		why = walk(b, id, e->members ? e->members : "", &e->args, true, e->addr, &buf);
	else if (id)
		why = "@cast of the kernel's types: name a member, @cast(p, \"T\")->m";
	if (why) {
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression: %s", why);
		return -1;
	}
	e->kread = tr_buf_str(&buf);
	/* a task_struct read from a task value: marktap's tasks are thread
	 * ids (task_current()), which the runtime turns into the task's
	 * address first ("K;": rt.task_addr; an address passes unchanged) */
	if (!e->addr && !strcmp(btf__name_by_offset(b, btf__type_by_id(b, id)->name_off), "task_struct"))
		e->kread = tr_printf("K;%s", e->kread);
	e->type = T_LONG;
	e->target_arg = 0;
	return 0;
}

/*
 * @entry($param) in a return probe: the call's value, which the module
 * kept at entry; @entry($p)->m reads through it at the return, as stap.
 * (@entry of a member read would need a read at the call: not yet.)
 */
static int entry(struct tr_session *s, struct tr_resolved *r, struct tr_expr *e, bool report)
{
	struct tr_expr *in = e->a;

	e->str = in->str;
	e->a = NULL;
	if (tr_btf_target(s, r, e, report))
		return -1;
	return 0;
}

/* $param, $param->m..., $return, $$parms, $$vars, $$return of r: 0, or
 * -1 (none such), -2 (a parameter marktap cannot read) after an error */
int tr_btf_target(struct tr_session *s, struct tr_resolved *r, struct tr_expr *e, bool report)
{
	const struct tr_kfunc *kf = r->kfunc;
	const char *n = e->str + 1, *why = NULL;
	__u32 type = 0;
	int i = -1;
	bool unreadable = false;

	if (e->str[0] == '@' && !strcmp(e->str, "@cast"))
		return tr_btf_cast(s, e, report);
	if (!strcmp(e->str, "@entry") && kf->ret && e->a && e->a->kind == E_TARGET && e->a->str[0] == '$' &&
	    !e->a->members && !e->addr)
		return entry(s, r, e, report);
	if (!strcmp(e->str, "@entry") && kf->ret && !kf->kprobe && !kf->tracepoint && e->a &&
	    !e->addr && !e->members && !e->args.n) {
		/* any other expression: evaluated at the call, when the module
		 * fires the return's marker there too (tr_btf_entry_points) */
		e->target_arg = TR_TARGET_ENTRY;
		e->type = T_UNKNOWN;   /* its operand's (elab_type.c) */
		return 0;
	}
	if (e->str[0] != '$' || (e->addr && !e->members) || (e->args.n && !e->members)) {
		why = e->addr ? "'&' of a parameter: it is in a register, not in memory" :
		      !strcmp(e->str, "@entry") && !kf->ret ? "@entry is only in a .return probe" :
		      !strcmp(e->str, "@entry") ? "@entry of anything but a parameter (a read at the call) "
						  "is not in marktap yet" : e->str[0] == '@' ?
		      tr_printf("%s is not in marktap yet", e->str) : "array subscripts are not in marktap yet";
	} else if (kf->kprobe) {
		why = !strncmp(kf->name, "0x", 2) ? "a probe at an absolute address has no variables (stap's "
						    "neither)" :
		      "kprobe.function probes have no variables (stap's neither): use kernel.function";
	} else if (kf->tracepoint && (!strcmp(n, "$return") || !strcmp(n, "return"))) {
		why = "a tracepoint has no return value";
	} else if (!kf->proto) {
		why = "the function is not in the kernel's BTF";
	} else if (!strcmp(n, "$parms") || !strcmp(n, "$vars") || !strcmp(n, "$return")) {
		if (e->members || (!strcmp(n, "$return") && !kf->ret))
			why = "unresolved target-symbol expression";
		e->target_arg = !strcmp(n, "$return") ? -7 : -3;
		e->type = T_STRING;
	} else if (!strcmp(n, "return")) {
		i = KPROBE_ARGS;
		type = btf__type_by_id(kf->btf, kf->proto)->type;
		if (!kf->ret || !type)
			why = !kf->ret ? "$return is only in a .return probe" : "the function returns void";
	} else if ((i = param(kf, n, &type)) < 0) {
		why = tr_printf("unable to find local '%s', [man error::dwarf] dieoffset %s in kernel, "
				"near the parameters of %s: %s", n, "(BTF)", kf->name, tr_btf_vars(r));
	} else if ((unsigned)i >= in_registers(kf) && kf->tracepoint) {
		unreadable = true;
		why = (unsigned)i >= one_slot_each(kf, TRACEPOINT_ARGS) ?
		      tr_printf("parameter '%s' of tracepoint %s comes after a struct passed by "
				"value: marktap.ko passes the parameters before it", n, kf->name) :
		      tr_printf("parameter '%s' of tracepoint %s is on the stack, and the tracepoint "
				"passes a struct by value or more than %d parameters: marktap.ko "
				"passes the %d in registers", n, kf->name, TRACEPOINT_ARGS,
				TRACEPOINT_ARGS_IN_REGS);
	} else if ((unsigned)i >= in_registers(kf)) {
		unreadable = true;
		why = tr_printf("parameter '%s' of %s is passed on the stack or after a struct passed "
				"by value: marktap reads the first %d register arguments", n, kf->name,
				KPROBE_ARGS);
	}
	if (!why && kf->tracepoint && (i >= (int)r->fields.n || e->target_arg == -3))
		tracepoint_fields(r, in_registers(kf));   /* past the registers, or $$parms */
	if (!why && i >= 0) {
		struct tr_buf buf = {0};
		e->target_arg = i + 1;
		e->type = T_LONG;
		if (e->members && (why = walk(kf->btf, type, e->members, &e->args, false, e->addr, &buf)) == NULL)
			e->kread = tr_buf_str(&buf);
		else if (!e->members)
			e->kread = truncation(kf->btf, type);
	}
	if (why) {
		if (report)
			tr_sem_error(e->tok, "%s%s", strncmp(why, "unresolved", 10) && strncmp(why, "unable", 6) ?
				     "unresolved target-symbol expression: " : "", why);
		/* a parameter marktap cannot pass still exists: @defined() is
		 * true, and its use says why it cannot be read */
		return unreadable ? -2 : -1;
	}
	return 0;
}

/*
 * A .return probe with @entry(expr): its points' bindings become
 * "kprobe:...:return[:N]:entry", whose marker fires at the call too with
 * two more fields, the call's cookie and 1 (at the return: 0); the
 * handler keeps expr's values under the cookie (gen.c).
 */
void tr_btf_entry_points(struct tr_probe *p)
{
	for (unsigned i = 0; i < p->resolved.n; i++) {
		struct tr_resolved *r = p->resolved.items[i];
		if (!r->kfunc || !r->kfunc->ret || r->kfunc_entry)
			continue;
		r->kfunc_entry = true;
		r->marker = tr_printf("%s:entry", r->marker);
		tr_vec_push(&r->fields, "cookie");
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
		tr_vec_push(&r->fields, "entry");
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
	}
}

const char *tr_btf_store_refusal(const struct tr_resolved *r)
{
	const struct tr_kfunc *kf = r->kfunc;

	return !kf ? "not a kernel function probe" :
	       kf->tracepoint ? "a tracepoint's parameters are values the kernel passed, not "
				"registers a function resumes with" :
	       kf->kprobe ? "kprobe.function probes have no variables (stap's neither)" : NULL;
}

/* -L: " $file:struct file* $buf:char* ..." */
const char *tr_btf_vars(const struct tr_resolved *r)
{
	const struct tr_kfunc *kf = r->kfunc;
	const struct btf_type *p = kf && kf->proto ? btf__type_by_id(kf->btf, kf->proto) : NULL;
	struct tr_buf b = {0};

	if (!p || kf->kprobe)
		return "";
	for (unsigned i = kf->tracepoint; i < btf_vlen(p); i++) {
		const char *name = param_name(kf, i);
		if (!name || !*name)
			continue;
		tr_buf_printf(&b, " $%s:", name);
		type_name(kf->btf, btf_params(p)[i].type, &b);
	}
	if (kf->ret && p->type) {
		tr_buf_puts(&b, " $return:");
		type_name(kf->btf, p->type, &b);
	}
	return tr_buf_str(&b);
}

/* The parameter names of r in register order, for $$parms ("" past the last) */
const char *tr_btf_param_name(const struct tr_resolved *r, unsigned i)
{
	const struct tr_kfunc *kf = r->kfunc;
	const struct btf_type *p = kf && kf->proto ? btf__type_by_id(kf->btf, kf->proto) : NULL;

	if (!p || kf->kprobe || i >= (kf->tracepoint ? r->fields.n : in_registers(kf)))
		return NULL;
	return param_name(kf, i + kf->tracepoint);
}

/*
 * stap's register helpers in a kernel function's handler: the arguments
 * the module gives (the first six, as the registers hold them) and the
 * return value, cut to the helper's type.  In a function the script
 * calls, or with an argument number not a literal 1..6, they stay the
 * tapset's (registers.stp: an error at the call).
 */
bool tr_btf_register_call(struct tr_resolved *r, struct tr_expr *e)
{
	static const struct { const char *name, *cut; } helpers[] = {
		{ "int_arg", "T:4:1;" }, { "s32_arg", "T:4:1;" }, { "uint_arg", "T:4:0;" },
		{ "u32_arg", "T:4:0;" }, { "long_arg", NULL }, { "ulong_arg", NULL },
		{ "pointer_arg", NULL }, { "s64_arg", NULL }, { "u64_arg", NULL },
		{ "longlong_arg", NULL }, { "ulonglong_arg", NULL }, { "returnval", NULL },
	};
	const struct tr_expr *n = e->args.n == 1 ? e->args.items[0] : NULL;
	bool ret = !strcmp(e->op, "returnval");
	/* a tracepoint's handler gets its parameters (no return), a function's six */
	int64_t max = r->kfunc->tracepoint ? (int64_t)in_registers(r->kfunc) : KPROBE_ARGS;

	for (unsigned i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		if (strcmp(e->op, helpers[i].name))
			continue;
		if (ret ? e->args.n || !r->kfunc->ret : !n || n->kind != E_NUM || n->num < 1 || n->num > max)
			return false;
		if (r->kfunc->tracepoint && n->num > (int64_t)r->fields.n)
			tracepoint_fields(r, (unsigned)max);
		e->kind = E_TARGET;
		e->str = tr_printf("%s(%lld)", e->op, ret ? 0LL : (long long)n->num);
		e->target_arg = ret ? KPROBE_ARGS + 1 : (int)n->num;
		e->kread = helpers[i].cut;
		e->type = T_LONG;
		e->args = (struct tr_vec){0};
		return true;
	}
	return false;
}

/* ---- tracepoints (kernel.trace) -------------------------------------------- */

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
	const struct btf *b = vmlinux_btf(s);
	static const char prefix[] = "btf_trace_";

	if (!b) {
		*why = btf_error;
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
		__u32 p = proto_of(b, tr_printf("%s%s", around[i], name));
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
			scan_btf_strings(d->d_buf, d->d_size, module_name_of(base, n - 3));
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return 0;
}

/* Every module's tracepoints: the loaded modules' BTF (the running
 * kernel's), then the module files (module_dirs), read once */
static void read_module_tracepoints(struct tr_session *s)
{
	static bool read;

	if (read)
		return;
	read = true;
	if (running_kernel(s) && !getenv("MARKTAP_BTF")) {
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
	for (char *d = strtok(tr_strdup(module_dirs(s)), ":"); d; d = strtok(NULL, ":"))
		nftw(d, scan_ko, 16, FTW_PHYS);
}

int tr_btf_module_tracepoints(struct tr_session *s, const char *glob, struct tr_vec *names,
			      struct tr_vec *modules)
{
	int n = 0;

	if (!vmlinux_btf(s))
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
	struct btf *b = module ? module_btf(s, module, &why) : vmlinux_btf(s);
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
	unsigned n = in_registers(kf);
	tracepoint_fields(r, n < TRACEPOINT_ARGS_IN_REGS ? n : TRACEPOINT_ARGS_IN_REGS);
	return r;
}
