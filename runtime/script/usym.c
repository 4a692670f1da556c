/*
 * usym.c - user-space addresses, symbols and backtraces (usym.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lauxlib.h>
#include "ufunc.h"
#include "usym.h"

static __thread struct usym_hit *current __attribute__((tls_model("initial-exec")));

void usym_enter(struct usym_hit *h, uintptr_t pc, uintptr_t ip)
{
	h->pc = pc;
	h->ip = ip;
	h->outer = current;
	current = h;
}

void usym_leave(struct usym_hit *h)
{
	current = h->outer;
}

/* ---- symbols of the loaded objects -------------------------------------------- */

struct fsym {
	uint64_t value, size;
	uint32_t name;
};

struct object {
	uintptr_t bias;
	char path[PATH_MAX];
	struct fsym *syms;             /* functions, by address */
	size_t n;
	char *str;
	size_t strsize;
};

#define OBJECTS_MAX 128
static struct object objects[OBJECTS_MAX];
static unsigned nobjects;

static void *read_at(int fd, uint64_t off, uint64_t len)
{
	char *buf;

	if (len > (256u << 20))
		return NULL;
	buf = malloc(len + 1);
	if (buf && pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int by_value(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* The function symbols of the file: .symtab, else .dynsym. */
static void load_symbols(struct object *o)
{
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;

	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    !(sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr))))
		goto out;
	for (int pass = 0; pass < 2 && !o->syms; pass++) {
		for (unsigned i = 0; i < eh.e_shnum; i++) {
			Elf64_Sym *all;
			size_t n, k = 0;
			if (sh[i].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || sh[i].sh_link >= eh.e_shnum ||
			    sh[i].sh_entsize != sizeof(Elf64_Sym))
				continue;
			all = read_at(fd, sh[i].sh_offset, sh[i].sh_size);
			o->str = read_at(fd, sh[sh[i].sh_link].sh_offset, sh[sh[i].sh_link].sh_size);
			n = sh[i].sh_size / sizeof(Elf64_Sym);
			o->syms = all && o->str ? malloc((n ? n : 1) * sizeof(*o->syms)) : NULL;
			for (size_t j = 0; o->syms && j < n; j++) {
				unsigned type = ELF64_ST_TYPE(all[j].st_info);
				if ((type == STT_FUNC || type == STT_GNU_IFUNC) && all[j].st_shndx != SHN_UNDEF &&
				    all[j].st_value && all[j].st_name < sh[sh[i].sh_link].sh_size)
					o->syms[k++] = (struct fsym){ all[j].st_value, all[j].st_size, all[j].st_name };
			}
			free(all);
			if (!o->syms || !k) {
				free(o->syms);
				free(o->str);
				o->syms = NULL;
				o->str = NULL;
				continue;
			}
			o->n = k;
			o->strsize = sh[sh[i].sh_link].sh_size;
			qsort(o->syms, k, sizeof(*o->syms), by_value);
			break;
		}
	}
out:
	free(sh);
	close(fd);
}

/* The loaded object of addr, its symbols read once. */
static struct object *object_of(uintptr_t addr)
{
	struct link_map *lm = NULL;
	const char *path;
	struct object *o;
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
	/* a lookup in the loader's sorted table; dladdr scans symbols */
	struct dl_find_object fo;

	if (_dl_find_object((void *)addr, &fo) == 0)
		lm = fo.dlfo_link_map;
#else
	Dl_info info;

	if (!dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
		lm = NULL;
#endif
	if (!lm)
		return NULL;
	path = lm->l_name && lm->l_name[0] ? lm->l_name : "/proc/self/exe";
	for (unsigned i = 0; i < nobjects; i++)
		if (objects[i].bias == lm->l_addr && !strcmp(objects[i].path, path))
			return &objects[i];
	if (nobjects == OBJECTS_MAX)
		return NULL;
	o = &objects[nobjects];
	memset(o, 0, sizeof(*o));
	o->bias = lm->l_addr;
	snprintf(o->path, sizeof(o->path), "%s", path);
	load_symbols(o);
	nobjects++;
	return o;
}

/* The function around addr: its name, *off into it and *size; NULL. */
static const char *symbol_of(const struct object *o, uintptr_t addr, uint64_t *off, uint64_t *size)
{
	uint64_t rel = addr - o->bias;
	size_t lo = 0, hi = o->n;

	while (lo < hi) {   /* the last symbol at or below rel */
		size_t mid = (lo + hi) / 2;
		if (o->syms[mid].value <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct fsym *s = &o->syms[lo - 1];
	if (s->size && rel >= s->value + s->size)
		return NULL;
	*off = rel - s->value;
	*size = s->size;
	return o->str + s->name;
}

/* A C++ symbol as the program's source names it ("ns::sum(int, int)"),
 * by libstdc++'s __cxa_demangle where the process has it (a C++ program
 * does), into buf; else the name as it is. */
static const char *demangled(const char *name, char *buf, size_t cap)
{
	static char *(*demangle)(const char *, char *, size_t *, int *);
	static int looked;
	int status = -1;
	char *d;

	if (strncmp(name, "_Z", 2))
		return name;
	if (!looked) {
		*(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = 1;
	}
	if (!demangle || !(d = demangle(name, NULL, NULL, &status)))
		return name;
	if (status == 0)
		snprintf(buf, cap, "%s", d);
	free(d);
	return status == 0 ? buf : name;
}

static const char *module_name(const struct object *o)
{
	static char exe[PATH_MAX];

	if (strcmp(o->path, "/proc/self/exe"))
		return o->path;
	if (!exe[0]) {   /* once: the program does not change under us (exec reloads us) */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
	}
	return exe;
}

/* ---- the Lua side ------------------------------------------------------------ */

static int l_uaddr(lua_State *L)
{
	lua_pushinteger(L, current ? (lua_Integer)current->pc : 0);
	return 1;
}

static int l_usymname(lua_State *L)
{
	uintptr_t addr = (uintptr_t)luaL_checkinteger(L, 1);
	struct object *o = object_of(addr);
	uint64_t off, size;
	const char *name = o ? symbol_of(o, addr, &off, &size) : NULL;
	char hex[24], cxx[512];

	if (name) {
		lua_pushstring(L, demangled(name, cxx, sizeof(cxx)));
	} else {   /* stap gives the address in hex */
		snprintf(hex, sizeof(hex), "0x%" PRIxPTR, addr);
		lua_pushstring(L, hex);
	}
	return 1;
}

static int l_umodname(lua_State *L)
{
	struct object *o = object_of((uintptr_t)luaL_checkinteger(L, 1));

	lua_pushstring(L, o ? module_name(o) : "<unknown>");
	return 1;
}

/* "name+0xoff/0xsize [module]", stap's usymdata() and backtrace lines. */
static void push_symdata(lua_State *L, uintptr_t addr)
{
	struct object *o = object_of(addr);
	uint64_t off = 0, size = 0;
	const char *name = o ? symbol_of(o, addr, &off, &size) : NULL;
	char buf[PATH_MAX + 640], cxx[512];

	if (name)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 "/0x%" PRIx64 " [%s]", demangled(name, cxx, sizeof(cxx)), off,
			 size, module_name(o));
	else if (o)
		snprintf(buf, sizeof(buf), "0x%" PRIxPTR " [%s+0x%" PRIxPTR "]", addr, module_name(o), addr - o->bias);
	else
		snprintf(buf, sizeof(buf), "0x%" PRIxPTR, addr);
	lua_pushstring(L, buf);
}

static int l_usymdata(lua_State *L)
{
	push_symdata(L, (uintptr_t)luaL_checkinteger(L, 1));
	return 1;
}

#define FRAMES_MAX 128

/* The probe's address, then the return addresses of its callers. */
static int backtrace_of(uintptr_t *out, int max)
{
	void *frames[FRAMES_MAX];
	int n, i, k = 0;

	if (!current || max < 1)
		return 0;
	ufunc_unhook_frames();   /* .return probes' trampolines: real addresses */
	n = backtrace(frames, FRAMES_MAX);
	ufunc_rehook_frames();
	for (i = 0; i < n && (uintptr_t)frames[i] != current->ip; i++)
		;
	out[k++] = current->pc;
	for (i++; i < n && k < max; i++)
		out[k++] = (uintptr_t)frames[i];
	return k;
}

static int l_ubacktrace(lua_State *L)
{
	uintptr_t a[FRAMES_MAX];
	int n = backtrace_of(a, FRAMES_MAX);
	luaL_Buffer b;
	char one[24];

	luaL_buffinit(L, &b);
	for (int i = 0; i < n; i++) {
		snprintf(one, sizeof(one), "%s0x%" PRIxPTR, i ? " " : "", a[i]);
		luaL_addstring(&b, one);
	}
	luaL_pushresult(&b);
	return 1;
}

/* " 0xADDR : name+0xoff/0xsize [module]" per frame, as stap prints them. */
static int l_sprint_ubacktrace(lua_State *L)
{
	uintptr_t a[FRAMES_MAX];
	int n = backtrace_of(a, FRAMES_MAX);
	luaL_Buffer b;
	char one[32];

	luaL_buffinit(L, &b);
	for (int i = 0; i < n; i++) {
		snprintf(one, sizeof(one), " 0x%" PRIxPTR " : ", a[i]);
		luaL_addstring(&b, one);
		push_symdata(L, a[i]);
		luaL_addvalue(&b);
		luaL_addchar(&b, '\n');
	}
	luaL_pushresult(&b);
	return 1;
}

void usym_register(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "uaddr", l_uaddr }, { "usymname", l_usymname }, { "umodname", l_umodname },
		{ "usymdata", l_usymdata }, { "ubacktrace", l_ubacktrace },
		{ "sprint_ubacktrace", l_sprint_ubacktrace }, { NULL, NULL },
	};
	void *prime[2];

	/* the unwinder (libgcc_s) is loaded now, not from a trap later */
	backtrace(prime, 2);
	if (lua_getglobal(L, "mtrt") != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	luaL_setfuncs(L, fns, 0);
	lua_pop(L, 1);
}
