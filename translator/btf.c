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
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "btf_int.h"

/* Kernel probes in one script: marktap.ko's MT_LUA_PROBES_MAX bindings */
#define KPROBES_MAX 1024



struct loaded {
	const char *module;             /* NULL: vmlinux */
	struct btf *btf;
};
static struct tr_vec loaded;           /* struct loaded * */

/* The BTF read for module (NULL: vmlinux; "<h.h>": headers), or NULL */
static struct btf *loaded_btf(const char *module)
{
	for (unsigned i = 0; i < loaded.n; i++) {
		struct loaded *l = loaded.items[i];
		if (module ? l->module && !strcmp(l->module, module) : !l->module)
			return l->btf;
	}
	return NULL;
}

static struct btf *keep_loaded(const char *module, struct btf *b)
{
	struct loaded *l = tr_alloc(sizeof(*l));

	l->module = module ? tr_strdup(module) : NULL;
	l->btf = b;
	tr_vec_push(&loaded, l);
	return b;
}
char *tr_btf_load_error;

bool tr_btf_running_kernel(struct tr_session *s)
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
	const char *path = env && *env ? env : tr_btf_running_kernel(s) ? "/proc/kallsyms" :
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
		tr_btf_load_error = tr_printf("cannot read BTF from %s: %s", path, strerror(errno));
	return b;
}

/* vmlinux's BTF, or NULL and tr_btf_load_error */
struct btf *tr_btf_vmlinux(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_BTF");
	const char *cands[2];
	struct btf *b = loaded_btf(NULL);

	if (b || tr_btf_load_error)
		return b;
	if (tr_btf_running_kernel(s) && !(env && *env)) {
		b = parse("/sys/kernel/btf/vmlinux", NULL);
	} else if (env && *env) {
		b = parse(env, NULL);
	} else {
		cands[0] = tr_printf("/usr/lib/debug/boot/vmlinux-%s", s->kernel_vr);
		cands[1] = tr_printf("/boot/vmlinux-%s", s->kernel_vr);
		for (unsigned i = 0; i < 2 && !b && !tr_btf_load_error; i++)
			if (access(cands[i], R_OK) == 0)
				b = parse(cands[i], NULL);
		if (!b && !tr_btf_load_error)
			tr_btf_load_error = tr_printf("no BTF for kernel %s: not the running kernel (whose BTF is "
					      "/sys/kernel/btf/vmlinux), no MARKTAP_BTF, no %s or %s",
					      s->kernel_vr, cands[0], cands[1]);
	}
	return b ? keep_loaded(NULL, b) : NULL;
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
const char *tr_btf_module_dirs(struct tr_session *s)
{
	const char *env = getenv("MARKTAP_MODULE_PATH");
	struct tr_buf dirs = {0};

	tr_btf_running_kernel(s);   /* sets s->kernel_vr */
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
	for (char *d = strtok(tr_strdup(tr_btf_module_dirs(s)), ":"); d && !found_ko; d = strtok(NULL, ":"))
		nftw(d, find_ko, 16, FTW_PHYS);
	return found_ko;
}

/* module("GLOB"): the names of the modules it matches, loaded or not */
static const char *glob_pattern;
static struct tr_vec glob_found;

char *tr_btf_module_name_of(const char *file, size_t len)
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
		glob_add(tr_btf_module_name_of(base, n - 3));
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void module_glob_names(struct tr_session *s, const char *glob, struct tr_vec *names)
{
	glob_pattern = tr_btf_module_name_of(glob, strlen(glob));
	glob_found = (struct tr_vec){0};
	if (tr_btf_running_kernel(s) && !getenv("MARKTAP_BTF")) {
		DIR *d = opendir("/sys/kernel/btf");
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.' && strcmp(e->d_name, "vmlinux"))
				glob_add(tr_strdup(e->d_name));
		if (d)
			closedir(d);
	}
	for (char *d = strtok(tr_strdup(tr_btf_module_dirs(s)), ":"); d; d = strtok(NULL, ":"))
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
struct btf *tr_btf_module(struct tr_session *s, const char *module, const char **why)
{
	struct btf *base = tr_btf_vmlinux(s);

	if (!base) {
		*why = tr_btf_load_error;
		return NULL;
	}
	struct btf *b = loaded_btf(module);

	if (b)
		return b;
	const char *path = tr_printf("/sys/kernel/btf/%s", module);
	if (!tr_btf_running_kernel(s) || access(path, R_OK)) {
		const char *ko = module_file(s, module);
		if (!ko) {
			*why = tr_printf("no BTF for module %s: %snot found as %s.ko in MARKTAP_MODULE_PATH "
					 "or /lib/modules/%s", module, tr_btf_running_kernel(s) ?
					 tr_printf("not loaded (no %s), and ", path) : "", module, s->kernel_vr);
			return NULL;
		}
		path = ko;
	}
	b = btf__parse_split(path, base);
	if (!b) {
		*why = tr_printf("cannot read BTF from %s: %s (a module built without BTF?)", path, strerror(errno));
		return NULL;
	}
	return keep_loaded(module, b);
}

/*
 * The types of C headers, as stap's @cast(p, "T", "<stdio.h>"): the
 * headers (one or more "<...>") compiled by cc with -gbtf into an object
 * whose BTF (GCC 12's) holds every type they declare; once per module
 * string.  NULL with the reason.
 */
struct btf *tr_btf_header(const char *module, const char **why)
{
	char dir[] = "/tmp/marktap-header-XXXXXX", src[64], obj[64], err[64], line[240] = "";
	struct tr_buf text = {0};
	struct btf *b = loaded_btf(module);
	int status = -1;
	FILE *f;

	if (b)
		return b;
	for (const char *p = module; *p;) {   /* "<a.h><b/c.h>" */
		size_t n = *p == '<' ? strcspn(p + 1, "<>\n\"") : 0;
		if (*p != '<' || !n || p[1 + n] != '>') {
			*why = tr_printf("@cast's module \"%s\": headers are written <name.h>, one or more", module);
			return NULL;
		}
		tr_buf_printf(&text, "#include <%.*s>\n", (int)n, p + 1);
		p += n + 2;
	}
	if (!mkdtemp(dir)) {
		*why = tr_printf("cannot make a directory for compiling %s: %s", module, strerror(errno));
		return NULL;
	}
	snprintf(src, sizeof(src), "%s/t.c", dir);
	snprintf(obj, sizeof(obj), "%s/t.o", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	if ((f = fopen(src, "w")) && fputs(tr_buf_str(&text), f) >= 0 && !fclose(f)) {
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
			}
			execlp("cc", "cc", "-gbtf", "-fno-eliminate-unused-debug-types", "-c", "-o", obj, src,
			       (char *)NULL);
			_exit(127);
		}
		while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (status == 0)
		b = btf__parse(obj, NULL);
	else if ((f = fopen(err, "r"))) {   /* cc's first complaint */
		while (fgets(line, sizeof(line), f) && !strstr(line, "error"))
			;
		fclose(f);
		line[strcspn(line, "\n")] = 0;
		char *e = strstr(line, "fatal error: ");   /* past the temporary file's name */
		if (!e)
			e = strstr(line, "error: ");
		if (e)
			memmove(line, e, strlen(e) + 1);
	}
	if (!b)
		*why = status == 0 ? tr_printf("cannot read the BTF cc made of %s: %s", module, strerror(errno)) :
		       tr_printf("cannot compile %s with cc -gbtf (GCC 12 or later)%s%s", module,
				 line[0] ? ": " : "", line);
	unlink(src);
	unlink(obj);
	unlink(err);
	rmdir(dir);
	free(text.data);
	return b ? keep_loaded(module, b) : NULL;
}

/* ---- types ---------------------------------------------------------------- */

/* t past typedefs and qualifiers */
const struct btf_type *tr_btf_skip_mods(const struct btf *b, __u32 id, __u32 *out)
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
void tr_btf_type_name(const struct btf *b, __u32 id, struct tr_buf *out)
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
		tr_btf_type_name(b, t->type, out);
		tr_buf_putc(out, '*');
		return;
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
		tr_btf_type_name(b, t->type, out);
		tr_buf_puts(out, btf_kind(t) == BTF_KIND_CONST ? " const" : " volatile");
		return;
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		tr_btf_type_name(b, t->type, out);
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
		tr_btf_type_name(b, btf_array(t)->type, out);
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

static int tr_btf_cmp_str(const void *a, const void *b)
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
	qsort(names->items, names->n, sizeof(void *), tr_btf_cmp_str);
}

__u32 tr_btf_proto_of(const struct btf *b, const char *name)
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
	if ((!env || !*env) && !tr_btf_running_kernel(s))
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
	qsort(names.items, names.n, sizeof(void *), tr_btf_cmp_str);
	return &names;
}

static bool blacklisted(struct tr_session *s, const char *name, const char **path)
{
	const struct tr_vec *bl = blacklist(s, path);

	return bl->n && bsearch(&name, bl->items, bl->n, sizeof(void *), tr_btf_cmp_str);
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
static struct tr_resolved *tr_btf_new_point(const struct btf *b, const struct shape *sh, const char *name)
{
	struct tr_resolved *r = tr_alloc(sizeof(*r));
	struct tr_kfunc *kf = tr_alloc(sizeof(*kf));

	kf->btf = b;
	kf->proto = b ? tr_btf_proto_of(b, name) : 0;
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
	struct tr_resolved *r = tr_btf_new_point(NULL, &sh, tr_printf("0x%llx", (unsigned long long)st->arg->num));
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
	b = sh.module ? tr_btf_module(s, sh.module, &why) : tr_btf_vmlinux(s);
	if (b)
		matching(b, sh.glob, &names);
	if (b && file && tr_ksrc_filter(s, file, strpbrk(sh.glob, "*?[") != NULL, &names, &map_why) < 0 && strpbrk(sh.glob, "*?[")) {
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
		tr_vec_push(out, tr_btf_new_point(NULL, &sh, sh.glob));
		return 1;
	}
	if (!b || !names.n) {
		if (sh.quiet)
			return 0;   /* another module of the glob may have it */
		if (!b)
			tr_sem_error(tok, "while resolving probe point %s: %s", pp, why ? why : tr_btf_load_error);
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
		struct tr_resolved *r = tr_btf_new_point(b, &sh, names.items[i]);
		/* -l/-L: where the source defines it, as stap shows */
		const char *where = s->listing && !sh.kprobe ? tr_ksrc_where(s, names.items[i]) : NULL;
		if (where && !strchr(where, ','))
			r->pp = point_name(&sh, tr_printf("%s@%s", (const char *)names.items[i], where));
		tr_vec_push(out, r);
	}
	free(names.items);
	return (int)out->n;
}
