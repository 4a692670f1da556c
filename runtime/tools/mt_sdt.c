/*
 * mt_sdt.c - SystemTap SDT probes of an ELF file (mt_sdt.h).
 *
 * A probe is a note of owner "stapsdt", type 3, in the non-allocated
 * section .note.stapsdt: three addresses (the probe's nop, the link-time
 * address of .stapsdt.base, the semaphore or 0), then three strings
 * (provider, name, argument operands).  When the file was prelinked, the
 * section .stapsdt.base moved and the addresses move with it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mt_sdt.h"

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return -1;
}

static void *read_at(int fd, uint64_t off, uint64_t len, uint64_t file_size)
{
	char *buf;

	if (off > file_size || len > file_size - off || len > (64u << 20))
		return NULL;
	buf = malloc(len + 1);
	if (!buf)
		return NULL;
	if (pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static int count_args(const char *a)
{
	int n = 0;

	while (*a) {
		while (*a == ' ')
			a++;
		if (!*a)
			break;
		n++;
		while (*a && *a != ' ')
			a++;
	}
	return n;
}

/*
 * Provider and probe names are C identifiers in every sys/sdt.h note; the
 * file may be another user's, and the names reach terminals (marktap -L)
 * and generated code: a probe whose names hold anything but printable
 * ASCII without spaces is left out.
 */
static int plain_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

/* The notes of one section; 0, or -1 (out of memory). */
static int parse_notes(const char *d, uint64_t len, uint64_t base_addr, int have_base,
		       struct mt_sdt_probe **out, size_t *n, size_t *cap)
{
	uint64_t off = 0;

	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		uint64_t name_off, desc_off, next;
		memcpy(&nh, d + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = name_off + ((nh.n_namesz + 3u) & ~3u);
		next = desc_off + ((nh.n_descsz + 3u) & ~3u);
		if (desc_off > len || nh.n_descsz > len - desc_off)
			break;   /* truncated: what came before stands */
		if (nh.n_type == 3 && nh.n_namesz == 8 && !memcmp(d + name_off, "stapsdt", 8) &&
		    nh.n_descsz > 24) {
			const char *desc = d + desc_off, *end = desc + nh.n_descsz, *prov, *name, *args;
			uint64_t pc, note_base, sem;
			memcpy(&pc, desc, 8);
			memcpy(&note_base, desc + 8, 8);
			memcpy(&sem, desc + 16, 8);
			prov = desc + 24;
			name = memchr(prov, '\0', (size_t)(end - prov));
			args = name ? memchr(name + 1, '\0', (size_t)(end - name - 1)) : NULL;
			if (name && args && memchr(args + 1, '\0', (size_t)(end - args - 1)) &&
			    plain_name(prov) && plain_name(name + 1)) {
				struct mt_sdt_probe *p;
				name++;
				args++;
				if (*n == *cap) {
					size_t nc = *cap ? 2 * *cap : 16;
					p = realloc(*out, nc * sizeof(*p));
					if (!p)
						return -1;
					*out = p;
					*cap = nc;
				}
				p = &(*out)[*n];
				memset(p, 0, sizeof(*p));
				if (have_base && note_base) {   /* prelink moved the file */
					pc += base_addr - note_base;
					if (sem)
						sem += base_addr - note_base;
				}
				p->pc = pc;
				p->semaphore = sem;
				p->provider = strdup(prov);
				p->name = strdup(name);
				p->args = strdup(args);
				if (!p->provider || !p->name || !p->args) {
					free(p->provider);
					free(p->name);
					free(p->args);
					return -1;
				}
				p->nargs = count_args(args);
				(*n)++;
			}
		}
		if (next <= off)
			break;
		off = next;
	}
	return 0;
}

/* The symbols of the file: .symtab, else .dynsym. */
struct syms {
	Elf64_Sym *sym;
	size_t n;
	char *str;
	size_t strsize;
};

static void load_syms(int fd, uint64_t size, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
		      struct syms *y)
{
	for (int pass = 0; pass < 2 && !y->sym; pass++) {
		unsigned type = pass ? SHT_DYNSYM : SHT_SYMTAB;
		for (unsigned i = 0; i < eh->e_shnum; i++) {
			if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum ||
			    sh[i].sh_entsize != sizeof(Elf64_Sym))
				continue;
			y->sym = read_at(fd, sh[i].sh_offset, sh[i].sh_size, size);
			y->str = read_at(fd, sh[sh[i].sh_link].sh_offset, sh[sh[i].sh_link].sh_size, size);
			if (!y->sym || !y->str) {
				free(y->sym);
				free(y->str);
				y->sym = NULL;
				y->str = NULL;
				continue;
			}
			y->n = sh[i].sh_size / sizeof(Elf64_Sym);
			y->strsize = sh[sh[i].sh_link].sh_size;
			break;
		}
	}
}

static int sym_value(const struct syms *y, const char *name, size_t len, uint64_t *v)
{
	for (size_t i = 0; i < y->n; i++) {
		uint32_t at = y->sym[i].st_name;
		if (at < y->strsize && !strncmp(y->str + at, name, len) && y->str[at + len] == '\0' &&
		    y->sym[i].st_shndx != SHN_UNDEF) {
			*v = y->sym[i].st_value;
			return 0;
		}
	}
	return -1;
}

/* "-8@16+arr(%rip)" -> "-8@=0x4030"; other operands as they are.  The
 * result is malloc'ed; NULL when out of memory. */
static char *resolve_symbols(const char *args, const struct syms *y)
{
	size_t cap = strlen(args) * 2 + 64, len = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	while (*args) {
		size_t tl = strcspn(args, " ");
		const char *at = memchr(args, '@', tl), *paren = NULL;
		char tok[160];
		int done = 0;

		if (at && tl > 6 && !strncmp(args + tl - 6, "(%rip)", 6))
			paren = args + tl - 6;
		if (paren && tl < sizeof(tok)) {
			/* terms of the displacement: numbers and one symbol */
			const char *q = at + 1;
			uint64_t addr = 0;
			int syms = 0, ok = 1, sign = 1;
			while (q < paren && ok) {
				if (*q == '+' || *q == '-') {
					sign = *q == '-' ? -1 : 1;
					q++;
					continue;
				}
				size_t n = strcspn(q, "+-(");
				if (q + n > paren)
					n = (size_t)(paren - q);
				if (*q >= '0' && *q <= '9') {
					addr += (uint64_t)((int64_t)sign * (int64_t)strtoull(q, NULL, 0));
				} else {
					uint64_t v;
					if (sign < 0 || syms++ || !y->sym || sym_value(y, q, n, &v) < 0)
						ok = 0;
					else
						addr += v;
				}
				q += n;
				sign = 1;
			}
			if (ok && syms == 1) {
				len += (size_t)snprintf(out + len, cap - len, "%s%.*s=0x%llx", len ? " " : "",
							(int)(at - args + 1), args, (unsigned long long)addr);
				done = 1;
			}
		}
		if (!done)
			len += (size_t)snprintf(out + len, cap - len, "%s%.*s", len ? " " : "", (int)tl, args);
		if (len >= cap) {
			free(out);
			return NULL;
		}
		args += tl;
		while (*args == ' ')
			args++;
	}
	out[len] = '\0';
	return out;
}

int mt_sdt_read(const char *path, struct mt_sdt_probe **out, size_t *n, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *names = NULL;
	uint64_t size, base_addr = 0;
	size_t cap = 0;
	int fd, have_base = 0, rc = -1, syms_loaded = 0;
	struct syms syms = { 0 };
	off_t end;

	*out = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	end = lseek(fd, 0, SEEK_END);
	size = end > 0 ? (uint64_t)end : 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		fail(err, errlen, path, "not an ELF file");
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		fail(err, errlen, path, "not a 64-bit little-endian ELF file");
		goto out;
	}
	if (!eh.e_shnum) {
		rc = 0;   /* no section headers (stripped to the bone): no probes */
		goto out;
	}
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
	    !(sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size))) {
		fail(err, errlen, path, "truncated or corrupt section headers");
		goto out;
	}
	names = read_at(fd, sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size, size);
	if (!names) {
		fail(err, errlen, path, "corrupt section names");
		goto out;
	}
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name < sh[eh.e_shstrndx].sh_size &&
		    !strcmp(names + sh[i].sh_name, ".stapsdt.base")) {
			base_addr = sh[i].sh_addr;
			have_base = 1;
		}
	}
	rc = 0;
	for (unsigned i = 0; i < eh.e_shnum && rc == 0; i++) {
		char *d;
		if (sh[i].sh_type != SHT_NOTE || sh[i].sh_name >= sh[eh.e_shstrndx].sh_size ||
		    strcmp(names + sh[i].sh_name, ".note.stapsdt"))
			continue;
		d = read_at(fd, sh[i].sh_offset, sh[i].sh_size, size);
		if (!d) {
			fail(err, errlen, path, "corrupt .note.stapsdt section");
			rc = -1;
			break;
		}
		if (parse_notes(d, sh[i].sh_size, base_addr, have_base, out, n, &cap) < 0) {
			fail(err, errlen, path, "out of memory");
			rc = -1;
		}
		free(d);
	}
	/* operands that name a symbol: its address, from the symbol table */
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		struct mt_sdt_probe *p = &(*out)[i];
		if (!strstr(p->args, "(%rip)"))
			continue;
		if (!syms.sym && !syms_loaded) {
			load_syms(fd, size, &eh, sh, &syms);
			syms_loaded = 1;
		}
		char *r = resolve_symbols(p->args, &syms);
		if (r) {
			free(p->args);
			p->args = r;
		}
	}
	free(syms.sym);
	free(syms.str);
	if (rc < 0) {
		mt_sdt_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
out:
	free(names);
	free(sh);
	close(fd);
	return rc;
}

void mt_sdt_free(struct mt_sdt_probe *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].provider);
		free(p[i].name);
		free(p[i].args);
	}
	free(p);
}

/* ---- operands ---- */

static const struct {
	const char *name;
	int reg;
} regs[] = {
	{ "rax", MT_R_RAX }, { "eax", MT_R_RAX }, { "ax", MT_R_RAX }, { "al", MT_R_RAX },
	{ "rbx", MT_R_RBX }, { "ebx", MT_R_RBX }, { "bx", MT_R_RBX }, { "bl", MT_R_RBX },
	{ "rcx", MT_R_RCX }, { "ecx", MT_R_RCX }, { "cx", MT_R_RCX }, { "cl", MT_R_RCX },
	{ "rdx", MT_R_RDX }, { "edx", MT_R_RDX }, { "dx", MT_R_RDX }, { "dl", MT_R_RDX },
	{ "rsi", MT_R_RSI }, { "esi", MT_R_RSI }, { "si", MT_R_RSI }, { "sil", MT_R_RSI },
	{ "rdi", MT_R_RDI }, { "edi", MT_R_RDI }, { "di", MT_R_RDI }, { "dil", MT_R_RDI },
	{ "rbp", MT_R_RBP }, { "ebp", MT_R_RBP }, { "bp", MT_R_RBP }, { "bpl", MT_R_RBP },
	{ "rsp", MT_R_RSP }, { "esp", MT_R_RSP }, { "sp", MT_R_RSP }, { "spl", MT_R_RSP },
	{ "rip", MT_R_RIP },
};

/* "%r12d" at *p: the register, *p past it; -1 if none. */
static int parse_reg(const char **p)
{
	const char *s = *p;
	char name[8];
	size_t len;

	if (*s != '%')
		return -1;
	s++;
	len = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789");
	if (!len || len >= sizeof(name))
		return -1;
	memcpy(name, s, len);
	name[len] = '\0';
	*p = s + len;
	if (name[0] == 'r' && name[1] >= '0' && name[1] <= '9') {   /* r8 .. r15, r8d r8w r8b */
		char *end;
		long r = strtol(name + 1, &end, 10);
		if (r < 8 || r > 15 || (*end && strcmp(end, "d") && strcmp(end, "w") && strcmp(end, "b")))
			return -1;
		return MT_R_R8 + (int)(r - 8);
	}
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (!strcmp(regs[i].name, name))
			return regs[i].reg;
	return -1;
}

static int parse_one(const char *s, size_t len, struct mt_sdt_arg *a)
{
	char buf[128], *end;
	const char *p;
	long size;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(a, 0, sizeof(*a));
	a->base = a->index = -1;
	a->scale = 1;
	size = strtol(buf, &end, 10);
	if (*end == '@') {
		p = end + 1;
	} else {   /* an operand without size: a signed long */
		size = -8;
		p = buf;
	}
	a->is_signed = size < 0;
	a->size = (int)(size < 0 ? -size : size);
	if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)
		return -1;
	if (*p == '%') {
		a->kind = MT_SDT_REG;
		a->base = parse_reg(&p);
		return a->base < 0 || a->base == MT_R_RIP || *p ? -1 : 0;
	}
	if (*p == '$') {
		a->kind = MT_SDT_IMM;
		a->disp = strtoll(p + 1, &end, 0);
		return end == p + 1 || *end ? -1 : 0;
	}
	a->kind = MT_SDT_MEM;
	if (*p == '=') {   /* a link-time address (mt_sdt_read's rewrite) */
		a->disp = (int64_t)strtoull(p + 1, &end, 0);
		a->link_addr = 1;
		return end == p + 1 || *end ? -1 : 0;
	}
	if (*p != '(') {
		a->disp = strtoll(p, &end, 0);
		if (end == p)
			return -1;   /* a symbol: not decoded here */
		p = end;
	}
	if (*p != '(')
		return -1;
	p++;
	if (*p != ',') {
		a->base = parse_reg(&p);
		if (a->base < 0 || a->base == MT_R_RIP)   /* sym(%rip) needs the symbol */
			return -1;
	}
	if (*p == ',') {
		p++;
		a->index = parse_reg(&p);
		if (a->index < 0 || a->index == MT_R_RIP)
			return -1;
		if (*p == ',') {
			a->scale = (int)strtol(p + 1, &end, 10);
			p = end;
			if (a->scale != 1 && a->scale != 2 && a->scale != 4 && a->scale != 8)
				return -1;
		}
	}
	return *p == ')' && !p[1] ? 0 : -1;
}

int mt_sdt_parse_args(const char *args, struct mt_sdt_arg *a, int max, char *err, size_t errlen)
{
	int n = 0;

	while (*args) {
		size_t len;
		while (*args == ' ')
			args++;
		if (!*args)
			break;
		len = strcspn(args, " ");
		if (n == max) {
			snprintf(err, errlen, "more than %d arguments", max);
			return -1;
		}
		if (parse_one(args, len, &a[n]) < 0) {
			snprintf(err, errlen, "cannot decode argument %d, \"%.*s\"", n + 1, (int)len, args);
			return -1;
		}
		n++;
		args += len;
	}
	return n;
}
