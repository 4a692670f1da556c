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
#include <sys/stat.h>
#include <unistd.h>
#include <ucontext.h>
#include <pthread.h>
#include <lauxlib.h>
#include "mt_lua.h"
#include "probe.h"
#include "ufunc.h"
#include "usym.h"

/* ---- symbols of the loaded objects -------------------------------------------- */

struct fsym {
	uint64_t value, size;
	uint32_t name;
};

struct object {
	const struct link_map *lm;      /* the loader's, while it is loaded (a fast match) */
	const char *lm_name;
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

/* len bytes at off of a file of file_size bytes (what a header claims
 * beyond the file is refused before anything is allocated for it). */
static void *read_at(int fd, uint64_t file_size, uint64_t off, uint64_t len)
{
	char *buf;

	if (len > (256u << 20) || off > file_size || len > file_size - off)
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

/*
 * The loaded object's file, if it is a regular file: the name the loader
 * keeps may name a FIFO (an open would wait) or a device by now.  Opened
 * as O_PATH (which runs no open of the file's own), checked, and reopened
 * through /proc/self/fd: the inode checked is the inode read.  -1 if not.
 */
static int open_object(const char *path, struct stat *st)
{
	char self[32];
	int pfd = open(path, O_PATH | O_CLOEXEC), fd = -1;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, st) == 0 && S_ISREG(st->st_mode)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	}
	close(pfd);
	return fd;
}

/* The function symbols of the file: .symtab, else .dynsym. */
static void load_symbols(struct object *o)
{
	struct stat st;
	int fd = open_object(o->path, &st);
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	uint64_t size;

	if (fd < 0)
		return;
	size = (uint64_t)st.st_size;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    !(sh = read_at(fd, size, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr))))
		goto out;
	for (int pass = 0; pass < 2 && !o->syms; pass++) {
		for (unsigned i = 0; i < eh.e_shnum; i++) {
			Elf64_Sym *all;
			size_t n, k = 0;
			if (sh[i].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || sh[i].sh_link >= eh.e_shnum ||
			    sh[i].sh_entsize != sizeof(Elf64_Sym))
				continue;
			all = read_at(fd, size, sh[i].sh_offset, sh[i].sh_size);
			o->str = read_at(fd, size, sh[sh[i].sh_link].sh_offset, sh[sh[i].sh_link].sh_size);
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
	for (unsigned i = 0; i < nobjects; i++)   /* frames of one object, one after the other */
		if (objects[i].lm == lm && objects[i].lm_name == lm->l_name && objects[i].bias == lm->l_addr)
			return &objects[i];
	path = lm->l_name && lm->l_name[0] ? lm->l_name : "/proc/self/exe";
	for (unsigned i = 0; i < nobjects; i++)
		if (objects[i].bias == lm->l_addr && !strcmp(objects[i].path, path)) {
			objects[i].lm = lm;
			objects[i].lm_name = lm->l_name;
			return &objects[i];
		}
	if (nobjects == OBJECTS_MAX)
		return NULL;
	o = &objects[nobjects];
	memset(o, 0, sizeof(*o));
	o->lm = lm;
	o->lm_name = lm->l_name;
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
	const struct probe_hit *current = probe_current();

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

/* Text into a buffer, without printf (backtraces format a line per
 * frame): out[*len ..], never past cap - 1. */
static void put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
	if (*len + n >= cap)
		n = *len + 1 < cap ? cap - 1 - *len : 0;
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
}

static void put_hex(char *out, size_t cap, size_t *len, uint64_t v)
{
	char digits[18];
	int i = (int)sizeof(digits);

	do
		digits[--i] = "0123456789abcdef"[v & 15];
	while ((v >>= 4) && i > 2);
	digits[--i] = 'x';
	digits[--i] = '0';
	put(out, cap, len, digits + i, sizeof(digits) - (size_t)i);
}

/* "name+0xoff/0xsize [module]", stap's usymdata() and backtrace lines,
 * appended to out. */
static void symdata(uintptr_t addr, char *out, size_t cap, size_t *len)
{
	struct object *o = object_of(addr);
	uint64_t off = 0, size = 0;
	const char *name = o ? symbol_of(o, addr, &off, &size) : NULL, *mod;
	char cxx[512];

	if (!o) {
		put_hex(out, cap, len, addr);
		return;
	}
	mod = module_name(o);
	if (name) {
		name = demangled(name, cxx, sizeof(cxx));
		put(out, cap, len, name, strlen(name));
		put(out, cap, len, "+", 1);
		put_hex(out, cap, len, off);
		put(out, cap, len, "/", 1);
		put_hex(out, cap, len, size);
		put(out, cap, len, " [", 2);
		put(out, cap, len, mod, strlen(mod));
	} else {
		put_hex(out, cap, len, addr);
		put(out, cap, len, " [", 2);
		put(out, cap, len, mod, strlen(mod));
		put(out, cap, len, "+", 1);
		put_hex(out, cap, len, addr - o->bias);
	}
	put(out, cap, len, "]", 1);
}

static void push_symdata(lua_State *L, uintptr_t addr)
{
	char buf[PATH_MAX + 640];
	size_t len = 0;

	buf[0] = '\0';
	symdata(addr, buf, sizeof(buf), &len);
	lua_pushlstring(L, buf, len);
}

static int l_usymdata(lua_State *L)
{
	push_symdata(L, (uintptr_t)luaL_checkinteger(L, 1));
	return 1;
}

#define FRAMES_MAX 128

/* ---- unwinding from the probe's registers ------------------------------------ */

/*
 * glibc's backtrace() unwinds from where it is called: through the
 * handler's own frames (Lua, the host, the stub) before it reaches the
 * probe's, half the cost of a backtrace.  This unwinds from the probe's
 * registers with the call frame information libgcc's _Unwind_Find_FDE
 * finds (.eh_frame): the common rules only (CFA = register + offset,
 * registers saved at CFA + offset); anything else (expressions: PLT
 * entries, signal frames) and backtrace_of() takes glibc's way instead.
 * Memory is read only between the probe's stack pointer and the top of
 * the thread's stack, all mapped.
 */
enum { DW_RBP = 6, DW_RSP = 7, DW_RIP = 16, NREGS = 17 };

struct eh_bases {
	void *tbase, *dbase, *func;
};
typedef const void *(*find_fde_fn)(void *pc, struct eh_bases *bases);

/* The thread's stack, [lo, hi): from the probe's stack pointer up to its
 * top everything is mapped, read there without a system call. */
static __thread uintptr_t stack_top __attribute__((tls_model("initial-exec")));

struct span {
	uintptr_t lo, hi;
};

static int peek(const struct span *st, uintptr_t addr, void *dst, size_t n)
{
	if (addr < st->lo || addr > st->hi || st->hi - addr < n)
		return -1;
	memcpy(dst, (const void *)addr, n);
	return 0;
}

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* The size of an address in encoding enc, or 0 if not one known. */
static unsigned enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x03: case 0x0b: return 4;
	case 0x02: case 0x0a: return 2;
	default: return 0;
	}
}

struct rules {
	int cfa_reg;
	int64_t cfa_off;
	int64_t off[NREGS];      /* saved at CFA + off */
	uint8_t saved[NREGS];
};

/* The CFA program [p, end) up to pc (loc: the address it starts at).
 * 0, or -1 for what this unwinder does not follow. */
static int run_cfa(const uint8_t *p, const uint8_t *end, uintptr_t loc, uintptr_t pc, uint64_t code_align,
		   int64_t data_align, struct rules *r, const struct rules *init)
{
	struct rules stack[4];
	int depth = 0;

	while (p < end && loc <= pc) {
		uint8_t op = *p++, low = op & 0x3f;
		uint64_t reg;
		switch (op >> 6) {
		case 1: loc += low * code_align; continue;                          /* advance_loc */
		case 2:                                                               /* offset */
			if (low < NREGS)
				r->saved[low] = 1, r->off[low] = (int64_t)uleb(&p, end) * data_align;
			else
				uleb(&p, end);
			continue;
		case 3:                                                               /* restore */
			if (low < NREGS)
				r->saved[low] = init->saved[low], r->off[low] = init->off[low];
			continue;
		}
		switch (op) {
		case 0x00: break;                                                     /* nop */
		case 0x02: loc += *p++ * code_align; break;                           /* advance_loc1 */
		case 0x03: { uint16_t d; memcpy(&d, p, 2); p += 2; loc += d * code_align; break; }
		case 0x04: { uint32_t d; memcpy(&d, p, 4); p += 4; loc += d * code_align; break; }
		case 0x05:                                                            /* offset_extended */
			reg = uleb(&p, end);
			if (reg < NREGS)
				r->saved[reg] = 1, r->off[reg] = (int64_t)uleb(&p, end) * data_align;
			else
				uleb(&p, end);
			break;
		case 0x06: case 0x08:                                                 /* restore_ext, same_value */
			reg = uleb(&p, end);
			if (reg < NREGS)
				r->saved[reg] = op == 0x06 ? init->saved[reg] : 0, r->off[reg] = init->off[reg];
			break;
		case 0x07:                                                            /* undefined */
			reg = uleb(&p, end);   /* rip undefined: the stack's end (clone3, _start) */
			if (reg < NREGS)
				r->saved[reg] = 0;
			break;
		case 0x0a:                                                            /* remember_state */
			if (depth == 4)
				return -1;
			stack[depth++] = *r;
			break;
		case 0x0b:                                                            /* restore_state */
			if (!depth)
				return -1;
			*r = stack[--depth];   /* the CFA rule too, as libgcc */
			break;
		case 0x0c: r->cfa_reg = (int)uleb(&p, end); r->cfa_off = (int64_t)uleb(&p, end); break;
		case 0x0d: r->cfa_reg = (int)uleb(&p, end); break;
		case 0x0e: r->cfa_off = (int64_t)uleb(&p, end); break;
		case 0x11:                                                            /* offset_extended_sf */
			reg = uleb(&p, end);
			if (reg < NREGS)
				r->saved[reg] = 1, r->off[reg] = sleb(&p, end) * data_align;
			else
				sleb(&p, end);
			break;
		case 0x12: r->cfa_reg = (int)uleb(&p, end); r->cfa_off = sleb(&p, end) * data_align; break;
		case 0x13: r->cfa_off = sleb(&p, end) * data_align; break;
		case 0x2e: uleb(&p, end); break;                                      /* GNU_args_size */
		default:
			return -1;   /* expressions, registers in registers... */
		}
	}
	return 0;
}

/* One frame: the registers of the caller of the frame at pc (lookup: the
 * address to find its FDE at).  0; 1 at the end of the stack (no FDE,
 * no return address); -1 for a rule not followed here. */
static int step(find_fde_fn find, const struct span *st, uint64_t *reg, uint8_t *have, uintptr_t lookup)
{
	struct eh_bases bases;
	const uint8_t *fde = find ? find((void *)lookup, &bases) : NULL, *cie, *p, *end, *aug;
	uint32_t len, cie_off;
	uint64_t code_align, ra, cfa;
	int64_t data_align;
	uint8_t enc = 0, signal = 0;
	struct rules init, r;
	unsigned n;

	if (!fde)
		return 1;
	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	if (len == 0xffffffffu)
		return -1;
	cie = fde + 4 - cie_off;
	memcpy(&len, cie, 4);
	end = cie + 4 + len;
	if (cie[8] != 1 && cie[8] != 3)
		return -1;
	aug = cie + 9;
	p = aug + strlen((const char *)aug) + 1;
	code_align = uleb(&p, end);
	data_align = sleb(&p, end);
	ra = cie[8] == 1 ? *p++ : uleb(&p, end);
	if (ra != DW_RIP)
		return -1;
	if (aug[0] == 'z') {
		uint64_t alen = uleb(&p, end);
		const uint8_t *data = p;
		for (const uint8_t *c = aug + 1; *c; c++) {
			if (*c == 'R')
				enc = *data++;
			else if (*c == 'P')
				data += 1 + enc_size(*data);
			else if (*c == 'L')
				data++;
			else if (*c == 'S')
				signal = 1;
			else
				return -1;
		}
		p += alen;
	} else if (aug[0]) {
		return -1;
	}
	if (signal || !(n = enc_size(enc)))
		return -1;
	memset(&init, 0, sizeof(init));
	init.cfa_reg = -1;
	if (run_cfa(p, end, 0, UINTPTR_MAX, code_align, data_align, &init, &init) < 0)
		return -1;
	r = init;
	memcpy(&len, fde, 4);
	end = fde + 4 + len;
	p = fde + 8 + 2 * n;
	if (aug[0] == 'z')
		p += uleb(&p, end);
	if (run_cfa(p, end, (uintptr_t)bases.func, lookup, code_align, data_align, &r, &init) < 0 ||
	    r.cfa_reg < 0 || r.cfa_reg >= NREGS || !have[r.cfa_reg])
		return -1;
	if (!r.saved[DW_RIP])
		return 1;   /* _start, a thread's start: undefined */
	cfa = reg[r.cfa_reg] + (uint64_t)r.cfa_off;
	/* the saved registers, read at once (a block below the CFA) */
	{
		int64_t lo = 0, hi = -8;
		uint64_t block[32];
		for (int i = 0; i < NREGS; i++)
			if (r.saved[i]) {
				lo = r.off[i] < lo ? r.off[i] : lo;
				hi = r.off[i] > hi ? r.off[i] : hi;
			}
		if (hi - lo + 8 > (int64_t)sizeof(block) || (lo & 7) || (hi & 7) ||
		    peek(st, (uintptr_t)(cfa + (uint64_t)lo), block, (size_t)(hi - lo + 8)) < 0)
			return -1;
		for (int i = 0; i < NREGS; i++)
			if (r.saved[i]) {
				reg[i] = block[(r.off[i] - lo) / 8];
				have[i] = 1;
			}
	}
	reg[DW_RSP] = cfa;
	have[DW_RSP] = 1;
	return reg[DW_RIP] ? 0 : 1;
}

/* From the hit's registers: the probe's address, then its callers'
 * return addresses; how many, or 0 (glibc's way then). */
static find_fde_fn find_fde;   /* libgcc_s's, found by usym_register() */

static int unwind_regs(const ucontext_t *uc, uintptr_t pc, uintptr_t *out, int max)
{
	find_fde_fn find = find_fde;
	static const int from_uc[NREGS] = { [0] = REG_RAX, [1] = REG_RDX, [2] = REG_RCX, [3] = REG_RBX,
		[4] = REG_RSI, [5] = REG_RDI, [6] = REG_RBP, [7] = REG_RSP, [8] = REG_R8, [9] = REG_R9,
		[10] = REG_R10, [11] = REG_R11, [12] = REG_R12, [13] = REG_R13, [14] = REG_R14, [15] = REG_R15,
		[16] = REG_RIP };
	uint64_t reg[NREGS];
	uint8_t have[NREGS];
	struct span st;
	int k = 0, rc = 1;

	if (!find || !uc)
		return 0;
	if (!stack_top) {   /* once per thread */
		pthread_attr_t a;
		void *lo;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &a) != 0)
			return 0;
		if (pthread_attr_getstack(&a, &lo, &size) == 0)
			stack_top = (uintptr_t)lo + size;
		pthread_attr_destroy(&a);
	}
	st.lo = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	st.hi = stack_top;
	if (st.lo >= st.hi || st.hi - st.lo > (1u << 30))
		return 0;   /* another stack (sigaltstack, a coroutine's): glibc's way */
	for (int i = 0; i < NREGS; i++) {
		reg[i] = (uint64_t)uc->uc_mcontext.gregs[from_uc[i]];
		have[i] = 1;
	}
	reg[DW_RIP] = pc;
	out[k++] = pc;
	/* the probe's own frame: pc is where it is, not a return address */
	for (uintptr_t lookup = pc; k < max && (rc = step(find, &st, reg, have, lookup)) == 0; lookup = reg[DW_RIP] - 1)
		out[k++] = (uintptr_t)reg[DW_RIP];
	return k < max && rc < 0 ? 0 : k;
}

/* The probe's address, then the return addresses of its callers. */
static int backtrace_of(uintptr_t *out, int max)
{
	const struct probe_hit *current = probe_current();
	void *frames[FRAMES_MAX];
	int n, i, k = 0;

	if (!current || max < 1)
		return 0;
	ufunc_unhook_frames();   /* .return probes' trampolines: real addresses */
	if ((n = unwind_regs(current->uc, current->pc, out, max)) > 0) {
		ufunc_rehook_frames();
		return n;
	}
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
	uint64_t w[FRAMES_MAX];
	int n = backtrace_of(a, FRAMES_MAX);

	for (int i = 0; i < n; i++)
		w[i] = a[i];
	mt_lua_push_addrs(L, w, n > 0 ? (size_t)n : 0);
	return 1;
}

/* " 0xADDR : name+0xoff/0xsize [module]" per frame, as stap prints them. */
static int l_sprint_ubacktrace(lua_State *L)
{
	uintptr_t a[FRAMES_MAX];
	int n = backtrace_of(a, FRAMES_MAX);
	luaL_Buffer b;
	char line[PATH_MAX + 700];

	luaL_buffinit(L, &b);
	for (int i = 0; i < n; i++) {
		size_t len = 0;
		put(line, sizeof(line), &len, " ", 1);
		put_hex(line, sizeof(line), &len, a[i]);
		put(line, sizeof(line), &len, " : ", 3);
		symdata(a[i], line, sizeof(line), &len);
		put(line, sizeof(line), &len, "\n", 1);
		luaL_addlstring(&b, line, len);
	}
	luaL_pushresult(&b);
	return 1;
}

/* rt.ustore(spec, v): nil, or the error for the script to raise. */
static int l_ustore(lua_State *L)
{
	char err[128];

	if (ufunc_store(luaL_checkstring(L, 1), (int64_t)luaL_checkinteger(L, 2), err, sizeof(err)) == 0)
		return 0;
	lua_pushstring(L, err);
	return 1;
}

void usym_register(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "uaddr", l_uaddr }, { "usymname", l_usymname }, { "umodname", l_umodname },
		{ "usymdata", l_usymdata }, { "ubacktrace", l_ubacktrace },
		{ "sprint_ubacktrace", l_sprint_ubacktrace }, { "ustore", l_ustore }, { NULL, NULL },
	};
	void *prime[2];
	const char *env;

	/* the unwinder (libgcc_s) is loaded now, not from a trap later;
	 * glibc loads it privately: its FDE lookup through the handle */
	backtrace(prime, 2);
	env = secure_getenv("MARKTAP_UNWIND");   /* "backtrace": glibc's way only */
	if (!find_fde && !(env && !strcmp(env, "backtrace"))) {
		void *gcc = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (gcc)
			*(void **)&find_fde = dlsym(gcc, "_Unwind_Find_FDE");
	}
	if (lua_getglobal(L, "mtrt") != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	luaL_setfuncs(L, fns, 0);
	lua_pop(L, 1);
}
