/*
 * ufunc_site.c - function probes: the sites, the table the traps search,
 * and the code written for them: out-of-line copies of the instructions
 * they displace, and the stubs their jumps go to (ufunc_int.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mt_manifest.h"
#include "insn.h"
#include "text.h"
#include "ufunc_int.h"

static struct site_table no_sites;
static struct site_table *table = &no_sites;

const struct site_table *usite_table(void)
{
	return __atomic_load_n(&table, __ATOMIC_ACQUIRE);
}

int usite_poke(uintptr_t addr, unsigned char byte)
{
	return mt_text_write(addr, &byte, 1);
}

/* n bytes of our own code (a stub, not running yet) in one write. */
static int poke_n(uintptr_t addr, const void *buf, size_t n)
{
	return mt_text_write(addr, buf, n);
}

size_t usite_first_at(const struct site_table *t, uintptr_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->v[mid]->addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int add_site(struct usite *s)
{
	const struct site_table *old = table;
	struct site_table *t = malloc(sizeof(*t) + (old->n + 1) * sizeof(t->v[0]));
	size_t i = 0, k = 0;

	if (!t)
		return -1;
	/* after the others of its address: a trap walks a run from its first */
	while (i < old->n && old->v[i]->addr <= s->addr)
		t->v[k++] = old->v[i++];
	t->v[k++] = s;
	while (i < old->n)
		t->v[k++] = old->v[i++];
	t->n = k;
	__atomic_store_n(&table, t, __ATOMIC_RELEASE);
	return 0;
}

uintptr_t usite_page_near(uintptr_t addr)
{
	long page = sysconf(_SC_PAGESIZE);

	for (uintptr_t d = 1u << 20; d < (1u << 30); d <<= 1) {
		for (int up = 0; up < 2; up++) {
			uintptr_t want = ((up ? addr + d : addr - d) & ~(uintptr_t)(page - 1));
			void *p = mmap((void *)want, (size_t)page, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uintptr_t)p == want)
				return (uintptr_t)p;
			munmap(p, (size_t)page);   /* an old kernel took it as a hint */
		}
	}
	return 0;
}

/* 32-byte slots of our own code (jump stubs, out-of-line copies) in
 * read-only executable pages within 1 GiB of the code they serve, so
 * that a rel32 reaches both ways; written through /proc/self/mem, so
 * that threads running earlier slots of a page never see it change. */
#define SLOT 32
static struct {
	uintptr_t page;
	unsigned used;
} SP[512];                      /* 128 slots a page */
static unsigned nslot_pages;

static uintptr_t near_slot(uintptr_t addr)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned i;

	for (i = 0; i < nslot_pages; i++) {
		intptr_t d = (intptr_t)(SP[i].page - addr);
		if (d > -(1l << 30) && d < (1l << 30) && SP[i].used + SLOT <= (unsigned)page) {
			SP[i].used += SLOT;
			return SP[i].page + SP[i].used - SLOT;
		}
	}
	if (nslot_pages < sizeof(SP) / sizeof(SP[0])) {
		uintptr_t p = usite_page_near(addr);
		if (!p || mprotect((void *)p, (size_t)page, PROT_READ | PROT_EXEC) < 0)
			return 0;
		SP[nslot_pages].page = p;
		SP[nslot_pages++].used = SLOT;
		return p;
	}
	return 0;
}

/* "OP rel32" at slot[n] (at the address at + n) aiming at target: its
 * length, 0 when out of reach. */
static unsigned put_rel32(unsigned char *slot, unsigned n, uintptr_t at, const unsigned char *op, unsigned oplen,
			  uintptr_t target)
{
	int64_t rel = (int64_t)target - (int64_t)(at + n + oplen + 4);
	int32_t rel32 = (int32_t)rel;

	if (rel != rel32)
		return 0;
	memcpy(slot + n, op, oplen);
	memcpy(slot + n + oplen, &rel32, 4);
	return oplen + 4;
}

/* "jmp *0(%rip)" to back at slot[n]: 14 bytes. */
static unsigned put_jump_back(unsigned char *slot, unsigned n, uint64_t back)
{
	slot[n] = 0xff;
	slot[n + 1] = 0x25;
	memset(slot + n + 2, 0, 4);
	memcpy(slot + n + 6, &back, 8);
	return 14;
}

/* The copy at `at` of the branch b at addr (code its bytes): the same
 * target, a call pushing the original's return address; its length, or 0. */
static unsigned copy_branch(const struct insn_branch *b, const unsigned char *code, uintptr_t addr, uintptr_t at,
			    unsigned char *slot)
{
	static const unsigned char jmp[] = { 0xe9 }, lea[] = { 0x48, 0x8d, 0x64, 0x24, 0xf8 };
	uintptr_t back = addr + b->len, target = back + (uintptr_t)(intptr_t)b->rel;
	unsigned char jcc[2] = { 0x0f, (unsigned char)(0x80 | b->cc) };
	uint32_t half[2];
	unsigned n;

	switch (b->kind) {
	case INSN_RET:   /* where it returns does not depend on where it is */
		memcpy(slot, code, b->len);
		return b->len;
	case INSN_JMP:
		return put_rel32(slot, 0, at, jmp, 1, target);
	case INSN_JMP_RIP: {   /* the same GOT slot, read from the copy */
		int64_t moved = (int64_t)b->rel + (int64_t)addr - (int64_t)at;
		int32_t disp = (int32_t)moved;
		if (moved != disp)
			return 0;
		memcpy(slot, code, b->len);
		memcpy(slot + b->rip_disp, &disp, 4);
		return b->len;
	}
	case INSN_JCC:
		n = put_rel32(slot, 0, at, jcc, 2, target);
		return n ? n + put_jump_back(slot, n, back) : 0;
	case INSN_CALL:   /* lea -8(%rsp),%rsp; movl $lo,(%rsp); movl $hi,4(%rsp); jmp target */
		memcpy(half, &back, 8);
		memcpy(slot, lea, sizeof(lea));
		slot[5] = 0xc7, slot[6] = 0x04, slot[7] = 0x24;
		memcpy(slot + 8, &half[0], 4);
		slot[12] = 0xc7, slot[13] = 0x44, slot[14] = 0x24, slot[15] = 0x04;
		memcpy(slot + 16, &half[1], 4);
		n = put_rel32(slot, 20, at, jmp, 1, target);
		return n ? 20 + n : 0;
	}
	return 0;
}

/* The length of the instruction at code if a copy of it can run
 * elsewhere (make_xol), else 0. */
static unsigned movable_len(const unsigned char *code, size_t avail)
{
	struct insn_branch b;
	unsigned rip_disp, len = insn_decode(code, avail, &rip_disp);

	return len ? len : (unsigned)insn_branch(code, avail, &b);
}

/* The out-of-line copy of the instruction at addr: the instruction (a
 * RIP-relative displacement moved by the copy's distance), then
 * "jmp *0(%rip)" and the address after the original; or a branch redone
 * (copy_branch).  0: none. */
static uintptr_t make_xol(uintptr_t addr)
{
	unsigned char code[16], slot[SLOT];
	unsigned len = 0, rip_disp = 0, n;
	struct insn_branch b;
	uintptr_t at;

	if (ufunc_read_mem(addr, code, sizeof(code)) < 0)
		return 0;
	len = insn_decode(code, sizeof(code), &rip_disp);
	if ((!len && !insn_branch(code, sizeof(code), &b)) || !(at = near_slot(addr)))
		return 0;
	if (!len) {
		n = copy_branch(&b, code, addr, at, slot);
		return n && poke_n(at, slot, n) == 0 ? at : 0;
	}
	memcpy(slot, code, len);
	if (rip_disp) {   /* the same target from the copy */
		int32_t disp;
		int64_t moved;
		memcpy(&disp, code + rip_disp, 4);
		moved = (int64_t)disp + (int64_t)addr - (int64_t)at;
		if (moved != (int32_t)moved)
			return 0;
		disp = (int32_t)moved;
		memcpy(slot + rip_disp, &disp, 4);
	}
	n = len + put_jump_back(slot, len, addr + len);
	return poke_n(at, slot, n) == 0 ? at : 0;
}

static void set_format(struct usite *s)
{
	s->rt.event_id = -1;
	s->rt.format_ok = 1;
	s->rt.format.nfields = s->w->nf;
	for (unsigned i = 0; i < s->w->nf; i++) {
		struct mt_field *f = &s->rt.format.fields[i];
		int str = s->w->f[i].kind == 's' || s->w->f[i].kind == 'R';
		snprintf(f->name, sizeof(f->name), "v%u", i + 1);
		f->va = str ? MT_VA_STRING : MT_VA_LONG;
		f->store = str ? MT_ST_STRING : MT_ST_INT;
		f->size = str ? 0 : 8;
		f->is_signed = 1;
		f->base = 10;
		f->ctype = str ? "const char *" : "long";
	}
}

/* "mov $15, %rax; syscall": rt_sigreturn, libc's __restore_rt. */
static int is_sigreturn(uintptr_t addr)
{
	static const unsigned char code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	unsigned char have[sizeof(code)];

	return ufunc_read_mem(addr, have, sizeof(have)) == 0 && !memcmp(have, code, sizeof(code));
}


#if defined(__x86_64__)
/* An address encoded as in .eh_frame (the encodings GCC and gas use):
 * its value, the bytes it took in *len; 0 for an encoding not known. */
static uintptr_t eh_pointer(const unsigned char *p, unsigned char enc, unsigned *len)
{
	uintptr_t v;

	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: { uint64_t x; memcpy(&x, p, 8); v = (uintptr_t)x; *len = 8; break; }
	case 0x03: { uint32_t x; memcpy(&x, p, 4); v = x; *len = 4; break; }
	case 0x0b: { int32_t x; memcpy(&x, p, 4); v = (uintptr_t)(intptr_t)x; *len = 4; break; }
	default: return 0;
	}
	if ((enc & 0x70) == 0x10)   /* pcrel */
		v += (uintptr_t)p;
	else if (enc & 0x70)
		return 0;
	return v;
}

/* The end of the code an FDE covers (its CIE says how it is encoded), or 0. */
static uintptr_t fde_end(const unsigned char *fde)
{
	uint32_t len, cie_off;
	const unsigned char *cie, *aug, *q;
	unsigned char enc = 0;
	unsigned n;
	uintptr_t begin, range;

	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	if (len == 0xffffffffu || !cie_off)
		return 0;
	cie = fde + 4 - cie_off;
	aug = cie + 9;   /* length, id, version */
	if (aug[0] != 'z' || strlen((const char *)aug) > 8)
		return 0;
	q = aug + strlen((const char *)aug) + 1;
	while (*q++ & 0x80)   /* code alignment, uleb */
		;
	while (*q++ & 0x80)   /* data alignment, sleb */
		;
	if (cie[8] == 1)
		q++;          /* return address register, a byte */
	else
		while (*q++ & 0x80)
			;
	while (*q++ & 0x80)   /* augmentation data length */
		;
	for (const unsigned char *c = aug + 1; *c; c++) {
		if (*c == 'R') {
			enc = *q++;
			break;
		} else if (*c == 'P') {
			unsigned char penc = *q++;
			if (!eh_pointer(q, penc & 0x0f, &n) && (penc & 0x0f) != 0x00)
				return 0;
			q += (penc & 0x0f) == 0x00 ? 8 : n;
		} else if (*c == 'L') {
			q++;
		} else if (*c != 'S' && *c != 'B') {
			return 0;
		}
	}
	begin = eh_pointer(fde + 8, enc, &n);
	range = eh_pointer(fde + 8 + n, enc & 0x0f, &n);
	return begin && range ? begin + range : 0;
}

/* Padding nops that hold a jump already (one each), sorted. */
static struct {
	uintptr_t *v;
	size_t n, cap;
} PADS;

static int pad_taken(uintptr_t at)
{
	size_t lo = 0, hi = PADS.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (PADS.v[mid] == at)
			return 1;
		if (PADS.v[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int take_pad(uintptr_t at)
{
	size_t i = PADS.n;

	if (PADS.n == PADS.cap) {
		size_t cap = PADS.cap ? 2 * PADS.cap : 64;
		uintptr_t *v = realloc(PADS.v, cap * sizeof(*v));
		if (!v)
			return -1;
		PADS.v = v;
		PADS.cap = cap;
	}
	while (i > 0 && PADS.v[i - 1] > at) {
		PADS.v[i] = PADS.v[i - 1];
		i--;
	}
	PADS.v[i] = at;
	PADS.n++;
	return 0;
}

/* In the padding [from, to) (nothing but nops, or 0), the free nop of 5
 * bytes or more nearest to addr that a 2-byte jump at addr reaches, its
 * 5 bytes inside an aligned 8-byte word; or keeps *best. */
static int nop_in(uintptr_t from, uintptr_t to, uintptr_t addr, uintptr_t *best)
{
	for (uintptr_t at = from; at < to;) {
		unsigned char code[16];
		size_t avail = to - at < sizeof(code) ? to - at : sizeof(code);
		unsigned len;
		intptr_t rel = (intptr_t)at - (intptr_t)(addr + 2);
		memcpy(code, (const void *)at, avail);
		len = insn_relocatable_len(code, avail);
		if (!len || !insn_is_nop(code, len))
			return 0;
		if (len >= 5 && (at & 7) <= 3 && rel >= -128 && rel <= 127 && !pad_taken(at) &&
		    (!*best || (at > addr ? at - addr : addr - at) < (*best > addr ? *best - addr : addr - *best)))
			*best = at;
		at += len;
	}
	return 1;
}

/*
 * Padding near the probe at addr where a 5-byte jump can go: one nop of
 * 5 bytes or more (so that no thread can be inside the bytes it replaces,
 * and one that was sliding through the padding finds the nop again
 * after), in the gap before or after the function around addr, between
 * the code of two functions as .eh_frame_hdr gives them (every function
 * GCC or glibc's assembly emits has an FDE), within reach of a 2-byte
 * jump at addr.  Its address, or 0.
 */
static uintptr_t padding_near(const struct dl_phdr_info *info, uintptr_t addr)
{
	const unsigned char *hdr = NULL;
	const int32_t *table;
	uint32_t count;
	uintptr_t before = 0, start, end, next, best = 0;
	size_t lo = 0, hi;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = (const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	/* version 1, eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
	if (!hdr || hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return 0;
	memcpy(&count, hdr + 8, 4);
	table = (const int32_t *)(hdr + 12);
	for (hi = count; lo < hi;) {   /* the first entry above addr */
		size_t mid = (lo + hi) / 2;
		if ((uintptr_t)(hdr + table[2 * mid]) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < 2)
		return 0;
	/* the function around addr: [start, end); the code before it ends
	 * at the furthest end of the FDEs just below */
	start = (uintptr_t)(hdr + table[2 * (lo - 1)]);
	end = fde_end(hdr + table[2 * (lo - 1) + 1]);
	if (!end || end <= addr)
		return 0;
	for (size_t k = lo - 1; k-- > 0 && k + 8 > lo;) {
		uintptr_t e = fde_end(hdr + table[2 * k + 1]);
		if (!e)
			return 0;
		if (e > before)
			before = e;
	}
	next = lo < count ? (uintptr_t)(hdr + table[2 * lo]) : end;
	if (before <= start && start - before <= 256 && addr - start <= 130)
		nop_in(before, start, addr, &best);
	if (before <= end && next >= end && next - end <= 256 && end - addr <= 130)
		nop_in(end, next, addr, &best);   /* (no FDE below reaches past end) */
	return best;
}

/*
 * A stub for the probe at addr (the first site s of it) that calls entry
 * (ufunc_trap.c, "The jump fast path", says what it holds), or 0: a trap.
 * The jump to it replaces the instruction at addr when that is 5 bytes
 * or more (s->jlen 5); else, over an instruction of 2 bytes or more with
 * padding near it, a 2-byte jump to a 5-byte jump in the padding
 * (s->jlen 2, s->pad).  Each is written in one store over
 * part of one instruction.
 */
static uintptr_t make_stub(const struct dl_phdr_info *info, uintptr_t addr, struct usite *s, uintptr_t entry)
{
	unsigned char code[16], stub[SLOT] = { 0x48, 0x8d, 0x64, 0x24, 0x80, 0xff, 0x15, 0, 0, 0, 0 };
	uintptr_t at, site = (uintptr_t)s, pad = 0;
	unsigned len;

	if (!entry || ufunc_read_mem(addr, code, sizeof(code)) < 0 || !(len = movable_len(code, sizeof(code))))
		return 0;
	if (len < 5 && (len < 2 || !(pad = padding_near(info, addr))))
		return 0;
	if (!(at = near_slot(pad ? pad : addr)) || (pad && take_pad(pad) < 0))
		return 0;
	memcpy(stub + 11, &entry, 8);
	memcpy(stub + 19, &site, 8);
	s->jlen = pad ? 2 : 5;
	s->pad = pad;
	memcpy(s->orig5, code, 5);
	if (pad)
		memcpy(s->orig_pad, (const void *)pad, 5);
	return poke_n(at, stub, 27) == 0 ? at : 0;
}

/* Through the padding's jump, written first, for a 2-byte one: no thread
 * runs the padding, one write. */
int usite_write_jump(struct usite *s)
{
	unsigned char jump[5] = { 0xe9 }, near[2] = { 0xeb };
	uintptr_t from = s->pad ? s->pad : s->addr;
	int32_t rel = (int32_t)((int64_t)s->stub - (int64_t)(from + 5));

	memcpy(jump + 1, &rel, 4);
	if (!s->pad)
		return mt_text_patch(s->addr, jump, 5);
	if (mt_text_write(s->pad, jump, 5) < 0)
		return -1;
	near[1] = (unsigned char)(int8_t)((intptr_t)s->pad - (intptr_t)(s->addr + 2));
	return mt_text_patch(s->addr, near, 2);
}
#endif

struct usite *usite_new(struct dl_phdr_info *info, const struct stat *st, const struct want *w,
			probe_attach_fn attach, uintptr_t entry)
{
	struct usite *s = calloc(1, sizeof(*s));
	uintptr_t addr = info->dlpi_addr + w->addr;
	size_t i;
	unsigned saved = 0;

	if (!s)
		return NULL;
	for (unsigned k = 0; k < w->nf; k++)
		saved += w->f[k].kind == 'l';
	if (w->ret && (!w->has_cfa || saved > SAVED_MAX)) {
		report("%s of %s: %s; not armed", w->name, info->dlpi_name,
		       w->has_cfa ? "more than 8 values saved at the call" : "no call frame address for .return");
		free(s);
		return NULL;
	}
	s->w = w;
	s->addr = addr;
	s->bias = info->dlpi_addr;
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->marker.name = w->name;
	s->marker.rt = &s->rt;
	set_format(s);
	if (!attach(&s->marker, &s->rt, MT_FUNC_PROVIDER, st->st_dev, st->st_ino)) {
		free(s);
		return NULL;
	}
	i = usite_first_at(table, addr);
	if (i < table->n && table->v[i]->addr == addr && !table->v[i]->dead) {
		s->orig = table->v[i]->orig;   /* another probe patched it already */
		s->xol = table->v[i]->xol;
		s->stub = table->v[i]->stub;
		s->jlen = table->v[i]->jlen;
		s->pad = table->v[i]->pad;
		memcpy(s->orig5, table->v[i]->orig5, 5);
		memcpy(s->orig_pad, table->v[i]->orig_pad, 5);
	} else if (ufunc_read_mem(addr, &s->orig, 1) < 0 || s->orig == 0xcc) {
		report("%s of %s: no instruction to patch at 0x%llx; not armed", w->name, info->dlpi_name,
		       (unsigned long long)w->addr);
		return NULL;
	} else if (is_sigreturn(addr)) {
		/* every signal handler returns through it, ours too: a trap
		 * there would trap again on its own way back */
		report("%s of %s: the signal return trampoline at 0x%llx cannot be probed; not armed",
		       w->name, info->dlpi_name, (unsigned long long)w->addr);
		return NULL;
	} else {
		s->xol = make_xol(addr);
#if defined(__x86_64__)
		if (s->xol)
			s->stub = make_stub(info, addr, s, entry);
#endif
	}
	if (add_site(s) < 0)
		return NULL;
	return s;
}
