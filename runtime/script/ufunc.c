/*
 * ufunc.c - handlers at a program's functions, by a jump to a stub where
 * the instruction allows, else by int3 and single-step (ufunc.h).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>
#include "mt_sdt.h"
#include "insn.h"
#include "text.h"
#include "ufunc.h"
#include "usym.h"

/* ---- recipes (translator/dwarf.c writes them) ------------------------------ */

#define RECIPE_OPS 24

struct rop {
	char op;                /* r a k + m t, or an operator (translator/dwarf.c) */
	unsigned char size;
	unsigned char is_signed;
	int64_t v;
};

struct recipe {
	unsigned n;
	struct rop op[RECIPE_OPS];
};

/* "Sname=recipe,name=?,name=!{...}": $$parms, formatted here. */
struct parm {
	char name[32];
	char literal[16];       /* "?" or "{...}": printed as it is */
	struct recipe r;
};

struct field {
	char kind;              /* 'l' long, 's' string ($$parms); in a .return probe
				 * read at the return: 'L' long, 'R' string */
	struct recipe r;
	struct parm *parms;
	unsigned nparms;
};

#define SAVED_MAX 8             /* values of a .return probe saved at the call */

struct want {
	char *name;             /* "probe_N": the binding's marker name */
	uintptr_t addr;         /* link-time */
	int ret;
	struct recipe cfa;
	int has_cfa;
	dev_t dev;
	ino_t ino;
	unsigned nf;
	struct field f[MT_FIELDS_MAX];
};

static int parse_recipe(const char *s, size_t len, struct recipe *r)
{
	const char *end = s + len;

	r->n = 0;
	while (s < end) {
		char tok[40], *e;
		size_t n;
		struct rop *o;
		while (s < end && *s == ' ')
			s++;
		n = strcspn(s, " ");
		if (s + n > end)
			n = (size_t)(end - s);
		if (!n)
			break;
		if (n >= sizeof(tok) || r->n == RECIPE_OPS)
			return -1;
		memcpy(tok, s, n);
		tok[n] = '\0';
		s += n;
		o = &r->op[r->n++];
		o->op = tok[0];
		switch (tok[0]) {
		case 'r':
			o->v = strtol(tok + 1, &e, 10);
			if (e == tok + 1 || *e || o->v < 0 || o->v >= MT_R_COUNT)
				return -1;
			break;
		case 'a':
			o->v = (int64_t)strtoull(tok + 1, &e, 16);
			if (e == tok + 1 || *e)
				return -1;
			break;
		case 'k':
		case '+':
			o->v = strtoll(tok + 1, &e, 10);
			if (e == tok + 1 || *e)
				return -1;
			break;
		case 'P': case 'S': case 'X': case '&': case '|': case '^': case '<': case '>':
		case 'R': case 'N': case '~':
			if (tok[1])
				return -1;
			break;
		case 'm':
		case 't':
			o->size = (unsigned char)(tok[1] - '0');
			o->is_signed = tok[2] == 's';
			if ((o->size != 1 && o->size != 2 && o->size != 4 && o->size != 8) ||
			    (tok[2] != 's' && tok[2] != 'u') || tok[3])
				return -1;
			break;
		default:
			return -1;
		}
	}
	return r->n ? 0 : -1;
}

static int parse_parms(const char *s, struct field *f)
{
	unsigned cap = 0;

	while (*s) {
		size_t n = strcspn(s, ","), nl;
		const char *eq = memchr(s, '=', n);
		struct parm *p;
		if (!eq || (size_t)(eq - s) >= sizeof(p->name))
			return -1;
		if (f->nparms == cap) {
			cap = cap ? 2 * cap : 8;
			p = realloc(f->parms, cap * sizeof(*p));
			if (!p)
				return -1;
			f->parms = p;
		}
		p = &f->parms[f->nparms++];
		memset(p, 0, sizeof(*p));
		memcpy(p->name, s, (size_t)(eq - s));
		nl = n - (size_t)(eq + 1 - s);
		if (eq[1] == '?' || eq[1] == '!') {
			const char *lit = eq[1] == '!' ? eq + 2 : eq + 1;
			size_t ll = nl - (size_t)(lit - eq - 1);
			snprintf(p->literal, sizeof(p->literal), "%.*s", (int)ll, lit);
		} else if (parse_recipe(eq + 1, nl, &p->r) < 0) {
			return -1;
		}
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

/* ---- the wanted functions (manifest) ---------------------------------------- */

static struct want **wants;
static unsigned nwants;

int ufunc_want(const char *line)
{
	char name[256], kind, path[PATH_MAX];
	unsigned long long addr;
	int off = 0;
	struct want *w, **nw;
	struct stat st;

	if (sscanf(line, "func %255s %c %llx %4095s %n", name, &kind, &addr, path, &off) < 4 || !off ||
	    (kind != 'e' && kind != 'r'))
		return -1;
	w = calloc(1, sizeof(*w));
	nw = realloc(wants, (nwants + 1) * sizeof(*nw));
	if (!w || !nw || !(w->name = strdup(name))) {
		free(w);
		if (nw)
			wants = nw;
		return -1;
	}
	wants = nw;
	w->addr = (uintptr_t)addr;
	w->ret = kind == 'r';
	w->has_cfa = strcmp(line + off, "-") != 0;
	if (w->has_cfa && parse_recipe(line + off, strlen(line + off), &w->cfa) < 0)
		w->has_cfa = 0;
	if (stat(path, &st) == 0) {
		w->dev = st.st_dev;
		w->ino = st.st_ino;
	}
	wants[nwants++] = w;
	return 0;
}

int ufunc_field(const char *line)
{
	char name[256], kind;
	int off = 0;
	struct want *w = NULL;
	struct field *f;

	if (sscanf(line, "fvar %255s %c %n", name, &kind, &off) < 2 || !off)
		return -1;
	for (unsigned i = 0; i < nwants && !w; i++)
		if (!strcmp(wants[i]->name, name))
			w = wants[i];
	if (!w || w->nf == MT_FIELDS_MAX)
		return -1;
	f = &w->f[w->nf];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	if ((kind == 's' || kind == 'R') && line[off] == 'S') {
		if (parse_parms(line + off + 1, f) < 0)
			return -1;
	} else if ((kind != 'l' && kind != 'L') || parse_recipe(line + off, strlen(line + off), &f->r) < 0) {
		return -1;
	}
	w->nf++;
	return 0;
}

/* ---- sites ----------------------------------------------------------------------- */

struct usite {
	uintptr_t addr;                 /* the instruction: a jump, or its first byte int3, while armed */
	uintptr_t bias;
	dev_t dev;
	ino_t ino;
	unsigned char orig;             /* the byte int3 replaced */
	int armed;
	int dead;                       /* its object was unloaded */
	unsigned steppers;              /* threads stepping over the instruction */
	uintptr_t xol;                  /* its copy and a jump back, or 0: stepped in place */
	uintptr_t stub;                 /* jump sites: the stub the jump goes to; 0: int3 */
	unsigned char orig5[5];         /* jump sites: the bytes the jump replaced */
	unsigned char jlen;             /* jump sites: 5, or 2 through the padding */
	uintptr_t pad;                  /* that padding's nop (its 5 bytes: a jump) */
	unsigned char orig_pad[5];
	const struct want *w;
	struct mt_marker marker;
	struct mt_marker_rt rt;
};

/* The sites, sorted by address.  A scan (one thread, under sdt.c's lock)
 * publishes a new table with a release store; traps on other threads may
 * still read the old one, which is never freed (a few pointers per scan
 * that arms something). */
struct site_table {
	size_t n;
	struct usite *v[];
};

static struct site_table no_sites;

static struct {
	struct site_table *table;
	sdt_hit_fn hit;
	sdt_error_fn error;
	pthread_key_t stack_key;
	int have_key;
	unsigned long missed_returns;   /* calls too deep to hook */
	unsigned long lost_returns;     /* hooked calls that never came back */
	int no_stubs;                   /* a thread got no return stubs (reported) */
	int lost_told;                  /* lost_returns reported at the end */
} U = { .table = &no_sites };

static const struct site_table *sites(void)
{
	return __atomic_load_n(&U.table, __ATOMIC_ACQUIRE);
}

#define report(...) mt_trap_report(U.error, __VA_ARGS__)

/*
 * System calls of the trap path, made here rather than through libc: a
 * script may probe libc's own functions (process("libc.so.6").function("*")),
 * and a trap inside pwrite() called by the trap handler that steps over
 * pwrite() would never end (mt_syscall6: text.h).
 */
#define SYS3(nr, a, b, c) mt_syscall6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS6(nr, a, b, c, d, e, f) \
	mt_syscall6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* One byte of our own code (an int3, the byte it replaced), with no
 * change of page protection (text.c): one system call, safe in a signal
 * handler. */
static int poke(uintptr_t addr, unsigned char byte)
{
	return mt_text_write(addr, &byte, 1);
}

/* n bytes of our own code (a stub, not running yet) in one write. */
static int poke_n(uintptr_t addr, const void *buf, size_t n)
{
	return mt_text_write(addr, buf, n);
}

/* Memory of the process that may not be mapped: no fault, an error. */
static int read_mem(uintptr_t addr, void *dst, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)addr, n };

	return SYS6(SYS_process_vm_readv, SYS3(SYS_getpid, 0, 0, 0), &local, 1, &remote, 1, 0) == (long)n ? 0 : -1;
}

/* The first site at addr or above in t. */
static size_t first_at(const struct site_table *t, uintptr_t addr)
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
	const struct site_table *old = U.table;
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
	__atomic_store_n(&U.table, t, __ATOMIC_RELEASE);
	return 0;
}

/* An executable page within a jump's reach of addr, or 0. */
static uintptr_t page_near(uintptr_t addr)
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
		uintptr_t p = page_near(addr);
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

	if (read_mem(addr, code, sizeof(code)) < 0)
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

	return read_mem(addr, have, sizeof(have)) == 0 && !memcmp(have, code, sizeof(code));
}

#if defined(__x86_64__)
static uintptr_t make_stub(const struct dl_phdr_info *info, uintptr_t addr, struct usite *s);
#endif

/* A site of w in this object, attached and in the table, not patched
 * yet (ufunc_object patches them all at the end); NULL when not wanted
 * or not armable (reported). */
static struct usite *new_site(struct dl_phdr_info *info, const struct stat *st, const struct want *w,
			      sdt_attach_fn attach)
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
	if (!attach(&s->marker, &s->rt, UFUNC_PROVIDER, st->st_dev, st->st_ino)) {
		free(s);
		return NULL;
	}
	i = first_at(U.table, addr);
	if (i < U.table->n && U.table->v[i]->addr == addr && !U.table->v[i]->dead) {
		s->orig = U.table->v[i]->orig;   /* another probe patched it already */
		s->xol = U.table->v[i]->xol;
		s->stub = U.table->v[i]->stub;
		s->jlen = U.table->v[i]->jlen;
		s->pad = U.table->v[i]->pad;
		memcpy(s->orig5, U.table->v[i]->orig5, 5);
		memcpy(s->orig_pad, U.table->v[i]->orig_pad, 5);
	} else if (read_mem(addr, &s->orig, 1) < 0 || s->orig == 0xcc) {
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
			s->stub = make_stub(info, addr, s);
#endif
	}
	if (add_site(s) < 0)
		return NULL;
	return s;
}

static void free_stack(void *p);
#if defined(__x86_64__)
static void rs_init(void);
#endif
#if defined(__x86_64__)
static void measure_errno(void);
#endif

#if defined(__x86_64__)
/*
 * SIGTRAP must never be blocked where a probe may trap: the kernel kills
 * a process whose int3 raises it blocked.  Programs block every signal
 * (dash around vfork and in its child until exec; worker threads that
 * leave signals to the main thread).  libc's pthread_sigmask(), which
 * sigprocmask(), sigsetmask() and sigblock() call, is redirected to
 * mt_sigmask() below: the same, except that SIGTRAP stays unblocked.  A jump
 * rather than a trap: posix_spawn's child calls it with every signal
 * blocked.  glibc's inline blocking (thread and process creation) is out
 * of its reach: translator/dwarf.c refuses probes there.  Not covered:
 * a handler installed with SIGTRAP in its sa_mask, sigsuspend(),
 * ppoll()... masks (marktap(1)).
 */
static struct {
	uintptr_t at;                   /* pthread_sigmask, patched; 0: not */
	unsigned char orig[5];
	uintptr_t stub;                 /* "jmp *0(%rip)" to mt_sigmask(), near it */
} R;

#define SIGCANCEL_ 32                   /* glibc's internal signals, never blocked */
#define SIGSETXID_ 33

/* pthread_sigmask() without libc (it runs where every signal is
 * blocked, and libc's functions may be probed): 0 or an errno value. */
static int mt_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	unsigned long m = 0;

	if (set) {
		m = *(const unsigned long *)set;
		m &= ~(1ul << (SIGCANCEL_ - 1) | 1ul << (SIGSETXID_ - 1));
		if (how == SIG_BLOCK || how == SIG_SETMASK)
			m &= ~(1ul << (SIGTRAP - 1));
	}
	long r = SYS6(SYS_rt_sigprocmask, how, set ? &m : NULL, old, 8, 0, 0);
	return r < 0 ? (int)-r : 0;
}

/*
 * The n bytes at `at` in one aligned 8-byte write (the caller checks that
 * they fit one, inside one instruction), never a trap (the threads that
 * call pthread_sigmask() are those that may have SIGTRAP blocked: an int3
 * written first, as mt_text_patch() does, would kill them).  Through
 * /proc/self/mem (text.c), so the page never becomes writable; the kernel
 * may copy the word in pieces, so a thread entering pthread_sigmask() at
 * that instant (once at arming, once at the end) could run a mix: a risk
 * left open, as the one store that closes it needs the page writable and
 * executable (W^X, ufunc-plt.t).
 */
static int write_word(uintptr_t at, const unsigned char *bytes, size_t n)
{
	uintptr_t word = at & ~(uintptr_t)7;
	uint64_t v;

	if (read_mem(word, &v, 8) < 0)
		return -1;
	memcpy((unsigned char *)&v + (at - word), bytes, n);
	if (mt_text_write(word, &v, 8) < 0)
		return -1;
	mt_text_sync();   /* other threads drop what they decoded of the old bytes */
	return 0;
}

static void redirect_sigmask(void)
{
	static int done;
	uintptr_t fn = (uintptr_t)dlsym(RTLD_DEFAULT, "pthread_sigmask");
	unsigned char code[16], jump[5], stub[14] = { 0xff, 0x25, 0, 0, 0, 0 };
	uintptr_t target = (uintptr_t)mt_sigmask;
	sigset_t trap;
	int64_t rel;

	Dl_info where;

	if (done)
		return;
	done = 1;
	if (!fn || !dladdr((void *)fn, &where) || !where.dli_fbase)
		return;
	/* a mask inherited with SIGTRAP blocked (exec keeps it) */
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);
	mt_sigmask(SIG_UNBLOCK, &trap, NULL);
	/* the jump must replace one whole instruction: no thread can be
	 * inside the bytes it covers */
	if (read_mem(fn, code, sizeof(code)) < 0 || insn_relocatable_len(code, sizeof(code)) < 5 ||
	    (fn & 7) > 3 || !(R.stub = page_near(fn))) {
		report("%s", "pthread_sigmask() of libc not redirected: a program that blocks SIGTRAP "
		       "is killed by its first hit");
		return;
	}
	memcpy(stub + 6, &target, 8);
	memcpy((void *)R.stub, stub, sizeof(stub));
	mprotect((void *)R.stub, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC);
	rel = (int64_t)R.stub - (int64_t)(fn + 5);
	jump[0] = 0xe9;
	memcpy(jump + 1, &(int32_t){ (int32_t)rel }, 4);
	memcpy(R.orig, code, 5);
	__atomic_store_n(&R.at, fn, __ATOMIC_RELEASE);
	if (write_word(R.at, jump, 5) < 0)
		report("%s", "pthread_sigmask() of libc: cannot patch it");
}

/*
 * The jump fast path.  Where the instruction at a probe is 5 bytes or
 * more and relocatable (insn.c: a RIP-relative operand is moved in the
 * copy), it becomes "jmp stub" (mt_text_patch(): over part of one
 * instruction, so no branch can land inside the bytes replaced; a thread
 * that comes while they change traps on the int3 written first, and
 * ufunc_trap() runs the site).  At an
 * instruction of 2 to 4 bytes near the padding between functions, "jmp
 * stub" goes into a nop of the padding and the instruction becomes a
 * 2-byte jump to it (padding_near()).  The stub, in a page within the jump's reach:
 *
 *	lea -128(%rsp), %rsp     past the red zone of a leaf function
 *	call *0(%rip)            mt_ufunc_entry; pushes the address of:
 *	.quad mt_ufunc_entry
 *	.quad site               the first site of the address
 *
 * mt_ufunc_entry saves the registers and the extended state (xsave),
 * calls mt_ufunc_fast(), which runs the handlers as a trap would and
 * writes the address of the instruction's copy (make_xol) over its return
 * address, restores everything and leaves with "ret $128".  No signal:
 * nothing to block, and no kernel round trip.
 */
uint64_t mt_ufunc_xsave_size __attribute__((visibility("hidden")));

/* The registers and flags, pushed (struct saved_regs) and popped. */
#define PUSH_REGS \
	"\tpushfq\n" \
	"\tpush %rax\n\tpush %rbx\n\tpush %rcx\n\tpush %rdx\n\tpush %rbp\n\tpush %rsi\n\tpush %rdi\n" \
	"\tpush %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n"
#define POP_REGS \
	"\tpop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n" \
	"\tpop %rdi\n\tpop %rsi\n\tpop %rbp\n\tpop %rdx\n\tpop %rcx\n\tpop %rbx\n\tpop %rax\n" \
	"\tpopfq\n"
/* With %rbx at the pushed registers: the extended state saved below
 * them, FN(%rbx) called, the state restored; %rsp back at %rbx. */
#define CALL_WITH_XSAVE(fn) \
	"\tsub mt_ufunc_xsave_size(%rip), %rsp\n" \
	"\tand $-64, %rsp\n" \
	"\txor %eax, %eax\n" \
	"\tmov %rax, 512(%rsp)\n\tmov %rax, 520(%rsp)\n\tmov %rax, 528(%rsp)\n\tmov %rax, 536(%rsp)\n" \
	"\tmov %rax, 544(%rsp)\n\tmov %rax, 552(%rsp)\n\tmov %rax, 560(%rsp)\n\tmov %rax, 568(%rsp)\n" \
	"\tmov $-1, %eax\n\tmov $-1, %edx\n" \
	"\txsave64 (%rsp)\n" \
	"\tmov %rbx, %rdi\n" \
	"\tcall " fn "\n" \
	"\tmov $-1, %eax\n\tmov $-1, %edx\n" \
	"\txrstor64 (%rsp)\n" \
	"\tmov %rbx, %rsp\n"

__asm__(".text\n"
	".globl mt_ufunc_entry\n"
	".hidden mt_ufunc_entry\n"
	".type mt_ufunc_entry, @function\n"
	"mt_ufunc_entry:\n"
	"\t.cfi_startproc\n"
	"\tlea -8(%rsp), %rsp\n"          /* ra: the probed pc, for unwinders */
	"\t.cfi_adjust_cfa_offset 8\n"
	PUSH_REGS
	"\tcld\n"
	"\tmov %rsp, %rbx\n"
	/* the caller, for an unwinder: the probed function at ra, with the
	 * stack pointer and registers it had */
	"\t.cfi_def_cfa %rbx, 272\n"
	"\t.cfi_offset %rip, -144\n"
	"\t.cfi_offset %rbx, -168\n\t.cfi_offset %rbp, -192\n\t.cfi_offset %r12, -248\n"
	"\t.cfi_offset %r13, -256\n\t.cfi_offset %r14, -264\n\t.cfi_offset %r15, -272\n"
	CALL_WITH_XSAVE("mt_ufunc_fast")
	"\t.cfi_undefined %rip\n"         /* unwinding stops here from now on */
	POP_REGS
	"\tlea 8(%rsp), %rsp\n"
	"\tret $128\n"
	"\t.cfi_endproc\n"
	".size mt_ufunc_entry, . - mt_ufunc_entry\n");
extern const char mt_ufunc_entry[];

/* A return stub's call (".return: the jump route" below): the stub's
 * address + 6 where the return address was, the function's return
 * value in the registers.  mt_ufunc_ret_fast() replaces that slot with
 * the address to go on at before it runs anything: an unwinder from the
 * handler goes from here to the caller. */
__asm__(".text\n"
	".globl mt_ufunc_rtramp\n"
	".hidden mt_ufunc_rtramp\n"
	".type mt_ufunc_rtramp, @function\n"
	"mt_ufunc_rtramp:\n"
	"\t.cfi_startproc\n"
	PUSH_REGS
	"\tcld\n"
	"\tmov %rsp, %rbx\n"
	"\t.cfi_def_cfa %rbx, 136\n"
	"\t.cfi_offset %rbx, -32\n\t.cfi_offset %rbp, -56\n\t.cfi_offset %r12, -112\n"
	"\t.cfi_offset %r13, -120\n\t.cfi_offset %r14, -128\n\t.cfi_offset %r15, -136\n"
	CALL_WITH_XSAVE("mt_ufunc_ret_fast")
	"\t.cfi_undefined %rip\n"
	POP_REGS
	"\tret\n"
	"\t.cfi_endproc\n"
	".size mt_ufunc_rtramp, . - mt_ufunc_rtramp\n");
extern const char mt_ufunc_rtramp[];

/* What PUSH_REGS pushed, lowest first. */
struct saved_regs {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rdi, rsi, rbp, rdx, rcx, rbx, rax, flags;
};

/* What mt_ufunc_rtramp's frame holds, lowest first. */
struct rregs {
	struct saved_regs g;
	uint64_t ra;            /* the program's slot: the stub + 6, then where to go on */
};

/* The trapped context of a jump: the saved registers, with rsp and rip. */
static void regs_to_uc(const struct saved_regs *r, uintptr_t sp, uintptr_t ip, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	memset(g, 0, sizeof(uc->uc_mcontext.gregs));
	g[REG_RAX] = (greg_t)r->rax; g[REG_RBX] = (greg_t)r->rbx; g[REG_RCX] = (greg_t)r->rcx;
	g[REG_RDX] = (greg_t)r->rdx; g[REG_RSI] = (greg_t)r->rsi; g[REG_RDI] = (greg_t)r->rdi;
	g[REG_RBP] = (greg_t)r->rbp; g[REG_R8] = (greg_t)r->r8; g[REG_R9] = (greg_t)r->r9;
	g[REG_R10] = (greg_t)r->r10; g[REG_R11] = (greg_t)r->r11; g[REG_R12] = (greg_t)r->r12;
	g[REG_R13] = (greg_t)r->r13; g[REG_R14] = (greg_t)r->r14; g[REG_R15] = (greg_t)r->r15;
	g[REG_EFL] = (greg_t)r->flags;
	g[REG_RSP] = (greg_t)sp;
	g[REG_RIP] = (greg_t)ip;
}

/* Back from the context: the registers a guru-mode handler wrote
 * (ufunc_store; rsp and rip are never written there). */
static void uc_to_regs(const ucontext_t *uc, struct saved_regs *r)
{
	const greg_t *g = uc->uc_mcontext.gregs;

	r->rax = (uint64_t)g[REG_RAX]; r->rbx = (uint64_t)g[REG_RBX]; r->rcx = (uint64_t)g[REG_RCX];
	r->rdx = (uint64_t)g[REG_RDX]; r->rsi = (uint64_t)g[REG_RSI]; r->rdi = (uint64_t)g[REG_RDI];
	r->rbp = (uint64_t)g[REG_RBP]; r->r8 = (uint64_t)g[REG_R8]; r->r9 = (uint64_t)g[REG_R9];
	r->r10 = (uint64_t)g[REG_R10]; r->r11 = (uint64_t)g[REG_R11]; r->r12 = (uint64_t)g[REG_R12];
	r->r13 = (uint64_t)g[REG_R13]; r->r14 = (uint64_t)g[REG_R14]; r->r15 = (uint64_t)g[REG_R15];
}

/* What mt_ufunc_entry pushed, lowest first. */
struct jregs {
	struct saved_regs g;
	uint64_t ra;            /* the probed pc + 1, as a return address for unwinders */
	uint64_t slot;          /* stub + 11: the site at slot + 8; then the copy to go on at */
};

/* Is the extended state saveable with xsave, and how big is it? */
static int xsave_ready(void)
{
	static int known, ok;
	unsigned a, b, c, d;

	if (!known) {
		known = 1;
		if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) && __get_cpuid_count(0xd, 0, &a, &b, &c, &d) &&
		    b >= 576 && b < (1u << 20)) {
			mt_ufunc_xsave_size = b + 64;
			ok = 1;
		}
	}
	return ok;
}

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
 * A stub for the probe at addr (the first site s of it), or 0: a trap.
 * The jump to it replaces the instruction at addr when that is 5 bytes
 * or more (s->jlen 5); else, over an instruction of 2 bytes or more with
 * padding near it, a 2-byte jump to a 5-byte jump in the padding
 * (s->jlen 2, s->pad).  Each is written in one store over
 * part of one instruction.
 */
static uintptr_t make_stub(const struct dl_phdr_info *info, uintptr_t addr, struct usite *s)
{
	unsigned char code[16], stub[SLOT] = { 0x48, 0x8d, 0x64, 0x24, 0x80, 0xff, 0x15, 0, 0, 0, 0 };
	uintptr_t entry = (uintptr_t)mt_ufunc_entry, at, site = (uintptr_t)s, pad = 0;
	const char *env = secure_getenv("MARKTAP_UFUNC_JUMP");
	unsigned len;

	if ((env && !strcmp(env, "0")) || !xsave_ready() || read_mem(addr, code, sizeof(code)) < 0 ||
	    !(len = movable_len(code, sizeof(code))))
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

/* The jump to s's stub, in place of the instruction (through the
 * padding's jump, written first, for a 2-byte one: no thread runs the
 * padding, one write). */
static int write_stub_jump(struct usite *s)
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

/* A thread of this process with SIGTRAP blocked (from
 * /proc/self/task/N/status), or 0. */
static int blocked_thread(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int who = 0;

	while (d && !who && (e = readdir(d))) {
		char path[300], line[128];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigBlk:", 7)) {
				if (strtoull(line + 7, NULL, 16) & 1ull << (SIGTRAP - 1))
					who = atoi(e->d_name);
				break;
			}
		fclose(f);
	}
	if (d)
		closedir(d);
	return who;
}

/*
 * Before the first int3 of an object: no thread may have SIGTRAP
 * blocked.  Threads that block it through pthread_sigmask() lose it at
 * their next call (redirect_sigmask()): wait for them a little.  A thread
 * that keeps it blocked (marktap -x into a process whose threads block
 * every signal for good) keeps the probes from being armed.  The thread
 * id, or 0.
 */
static int trap_blocker(void)
{
	int who = 0;

	for (int tries = 0; tries < 50 && (who = blocked_thread()); tries++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return who;
}

int ufunc_object(struct dl_phdr_info *info, const struct stat *st, sdt_attach_fn attach, sdt_hit_fn hit,
		 sdt_error_fn error)
{
	int armed = 0;

	U.hit = hit;
	U.error = error;
#if defined(__x86_64__)
	measure_errno();
#endif
	if (!U.have_key && nwants)
		U.have_key = pthread_key_create(&U.stack_key, free_stack) == 0;
	/*
	 * Two passes: every site is attached first, then patched.  Attaching
	 * runs libc (the host matches names with strcmp): patched as it went,
	 * function("*") on libc trapped in strcmp for each of the 7000 sites
	 * after it, 30 million traps before the program started.
	 */
	struct usite **mine = calloc(nwants ? nwants : 1, sizeof(*mine));
	unsigned n = 0, route[4] = { 0 };
	const char *stats;
	int blocker;

	if (!mine)
		return 0;
#if defined(__x86_64__)
	if (nwants)
		redirect_sigmask();
	for (unsigned i = 0; i < nwants; i++)
		if (wants[i]->ret) {   /* the return stubs, before a call is hooked */
			rs_init();
			break;
		}
#endif
	for (unsigned i = 0; i < nwants; i++)
		if (wants[i]->dev == st->st_dev && wants[i]->ino == st->st_ino &&
		    (mine[n] = new_site(info, st, wants[i], attach)))
			n++;
	if (n && (blocker = trap_blocker()) > 0) {
		report("thread %d blocks SIGTRAP: the %u probes of %s are not armed (a trap there "
		       "would make the kernel kill the process)", blocker, n,
		       info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program");
		for (unsigned i = 0; i < n; i++)
			__atomic_store_n(&mine[i]->dead, 1, __ATOMIC_RELEASE);
		n = 0;
	}
	for (unsigned i = 0; i < n; i++) {
		struct usite *s = mine[i];
		__atomic_store_n(&s->armed, 1, __ATOMIC_RELEASE);
#if defined(__x86_64__)
		if (s->stub) {   /* the jump, once per address */
			unsigned char first = 0;
			if (read_mem(s->addr, &first, 1) == 0 && first != (s->jlen == 5 ? 0xe9 : 0xeb) &&
			    write_stub_jump(s) < 0) {
				__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
				report("%s of %s: cannot patch its code", s->w->name, info->dlpi_name);
				continue;
			}
			armed++;
			route[s->jlen == 5 ? 0 : 1]++;
			continue;
		}
#endif
		if (poke(s->addr, 0xcc) < 0) {
			__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
			report("%s of %s: cannot patch its code: %s", s->w->name, info->dlpi_name, strerror(errno));
			continue;
		}
		armed++;
		route[s->xol ? 2 : 3]++;
	}
	free(mine);
	text_fallback_told(U.error);
	/* how the probes run: MARKTAP_UFUNC_STATS=1 (marktap(1)) */
	if (armed && (stats = secure_getenv("MARKTAP_UFUNC_STATS")) && !strcmp(stats, "1"))
		report("%s: %d probes: %u jump, %u jump through padding, %u trap out of line, %u trap in place",
		       info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program", armed, route[0],
		       route[1], route[2], route[3]);
	return armed;
}

void ufunc_forget(uintptr_t base, dev_t dev, ino_t ino)
{
	const struct site_table *t = U.table;

	for (size_t i = 0; i < t->n; i++) {
		struct usite *s = t->v[i];
		if (s->bias == base && s->dev == dev && s->ino == ino && !s->dead) {
			s->dead = 1;
			__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
		}
	}
}

void ufunc_stop(void)
{
	const struct site_table *t = U.table;

	for (size_t i = 0; i < t->n; i++) {
		struct usite *s = t->v[i];
		if (!__atomic_exchange_n(&s->armed, 0, __ATOMIC_ACQ_REL) || s->dead)
			continue;
		/* the run of one address: every site of it is disarmed first */
		size_t k = i + 1;
		while (k < t->n && t->v[k]->addr == s->addr)
			__atomic_store_n(&t->v[k++]->armed, 0, __ATOMIC_RELEASE);
#if defined(__x86_64__)
		if (s->stub) {   /* a thread in the stub goes on to the copy */
			mt_text_patch(s->addr, s->orig5, s->jlen);
			if (s->pad)   /* a thread past the 2-byte jump finds the nop, or
				       * traps there and goes to the stub (ufunc_trap) */
				mt_text_patch(s->pad, s->orig_pad, 5);
			continue;
		}
#endif
		poke(s->addr, s->orig);
	}
#if defined(__x86_64__)
	/* last: a probe of pthread_sigmask's own put back the jump's first
	 * byte above; the stub and mt_sigmask() stay (a thread may be on
	 * its way) */
	if (R.at)
		write_word(R.at, R.orig, 5);
#endif
	/* found late (at a later call or return of the thread): a lower bound */
	if (U.lost_returns && !__atomic_exchange_n(&U.lost_told, 1, __ATOMIC_RELAXED))
		report("at least %lu call(s) hooked by .return probes ended without a return (longjmp, an "
		       "exception, the thread's end): their return probes did not fire", U.lost_returns);
}

/* ---- evaluation ------------------------------------------------------------------- */

#if defined(__x86_64__)

static uint64_t extend(uint64_t v, unsigned size, int is_signed)
{
	unsigned bits = size * 8;

	if (size >= 8)
		return v;
	v &= (1ull << bits) - 1;
	if (is_signed && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

/* The recipe on the registers of uc: 0 and *out, or -1 with *fault the
 * address that could not be read. */
static int eval(const struct recipe *r, const ucontext_t *uc, uintptr_t bias, uint64_t *out, uint64_t *fault)
{
	uint64_t stack[RECIPE_OPS];
	unsigned sp = 0;

	for (unsigned i = 0; i < r->n; i++) {
		const struct rop *o = &r->op[i];
		switch (o->op) {
		case 'r': stack[sp++] = mt_trap_reg(uc, (int)o->v); break;
		case 'a': stack[sp++] = (uint64_t)o->v + bias; break;
		case 'k': stack[sp++] = (uint64_t)o->v; break;
		case '+':
			if (!sp)
				return -1;
			stack[sp - 1] += (uint64_t)o->v;
			break;
		case 'm': {
			uint64_t v = 0;
			if (!sp)
				return -1;
			if (read_mem((uintptr_t)stack[sp - 1], &v, o->size) < 0) {
				*fault = stack[sp - 1];
				return -1;
			}
			stack[sp - 1] = extend(v, o->size, o->is_signed);
			break;
		}
		case 't':
			if (!sp)
				return -1;
			stack[sp - 1] = extend(stack[sp - 1], o->size, o->is_signed);
			break;
		case 'N':
		case '~':
			if (!sp)
				return -1;
			stack[sp - 1] = o->op == 'N' ? (uint64_t)-(int64_t)stack[sp - 1] : ~stack[sp - 1];
			break;
		default: {   /* two operands: the one below the top, then the top */
			uint64_t b, a;
			if (sp < 2)
				return -1;
			b = stack[--sp];
			a = stack[sp - 1];
			switch (o->op) {
			case 'P': a += b; break;
			case 'S': a -= b; break;
			case 'X': a *= b; break;
			case '&': a &= b; break;
			case '|': a |= b; break;
			case '^': a ^= b; break;
			case '<': a = b < 64 ? a << b : 0; break;
			case '>': a = b < 64 ? a >> b : 0; break;
			case 'R': a = (uint64_t)((int64_t)a >> (b < 64 ? b : 63)); break;
			}
			stack[sp - 1] = a;
		}
		}
	}
	if (!sp)
		return -1;
	*out = stack[sp - 1];
	return 0;
}

/* $$parms as stap prints it: "a=0x1 b=0x2", unreadable values "?". */
static size_t format_parms(const struct field *f, const ucontext_t *uc, uintptr_t bias, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < f->nparms && len < cap; i++) {
		const struct parm *p = &f->parms[i];
		uint64_t v, fault;
		int n;
		if (p->literal[0])
			n = snprintf(buf + len, cap - len, "%s%s=%s", i ? " " : "", p->name, p->literal);
		else if (eval(&p->r, uc, bias, &v, &fault) == 0)
			n = snprintf(buf + len, cap - len, "%s%s=0x%" PRIx64, i ? " " : "", p->name, v);
		else
			n = snprintf(buf + len, cap - len, "%s%s=?", i ? " " : "", p->name);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	return len < cap ? len : cap - 1;
}

/* ---- guru mode: writes to the variables ($x = v) ------------------------------------- */

/* The hit whose handler runs on this thread: the registers it resumes
 * with (a trap's context, or a copy that the jump routes put back) and
 * the object's bias.  Nests as handlers do. */
struct store_hit {
	ucontext_t *uc;
	uintptr_t bias;
	struct store_hit *outer;
};
static __thread struct store_hit *store_hit __attribute__((tls_model("initial-exec")));

static void store_enter(struct store_hit *h, ucontext_t *uc, uintptr_t bias)
{
	h->uc = uc;
	h->bias = bias;
	h->outer = store_hit;
	store_hit = h;
}

static void store_leave(struct store_hit *h)
{
	store_hit = h->outer;
}

/* Memory of the process, written only where the program could write it
 * (process_vm_writev honours the pages' protection): no fault, an error. */
static int write_mem(uintptr_t addr, const void *src, size_t n)
{
	struct iovec local = { (void *)(uintptr_t)src, n }, remote = { (void *)addr, n };

	return SYS6(SYS_process_vm_writev, SYS3(SYS_getpid, 0, 0, 0), &local, 1, &remote, 1, 0) == (long)n ? 0 : -1;
}

int ufunc_store(const char *spec, int64_t v, char *err, size_t cap)
{
	static const int greg_of[MT_R_COUNT] = {
		[MT_R_RAX] = REG_RAX, [MT_R_RDX] = REG_RDX, [MT_R_RCX] = REG_RCX, [MT_R_RBX] = REG_RBX,
		[MT_R_RSI] = REG_RSI, [MT_R_RDI] = REG_RDI, [MT_R_RBP] = REG_RBP, [MT_R_RSP] = REG_RSP,
		[MT_R_R8] = REG_R8, [MT_R_R9] = REG_R9, [MT_R_R10] = REG_R10, [MT_R_R11] = REG_R11,
		[MT_R_R12] = REG_R12, [MT_R_R13] = REG_R13, [MT_R_R14] = REG_R14, [MT_R_R15] = REG_R15,
		[MT_R_RIP] = REG_RIP,
	};
	struct store_hit *h = store_hit;
	unsigned size = 0;
	int off = 0;
	char kind = 0;

	if (!h) {
		snprintf(err, cap, "write to target variable outside its probe's hit");
		return -1;
	}
	if (sscanf(spec, "%c %u%n", &kind, &size, &off) < 2 || !off ||
	    (size != 1 && size != 2 && size != 4 && size != 8)) {
		snprintf(err, cap, "malformed target variable store '%s'", spec);
		return -1;
	}
	if (kind == 'r') {   /* the saved register: the function goes on with it */
		char sign = spec[off];
		long r = strtol(spec + off + 1, NULL, 10);
		if ((sign != 's' && sign != 'u') || r < 0 || r >= MT_R_COUNT || r == MT_R_RSP || r == MT_R_RIP) {
			snprintf(err, cap, "malformed target variable store '%s'", spec);
			return -1;
		}
		h->uc->uc_mcontext.gregs[greg_of[r]] = (greg_t)extend((uint64_t)v, size, sign == 's');
		return 0;
	}
	if (kind == 'm') {
		struct recipe rc;
		uint64_t addr = 0, fault = 0;
		unsigned char bytes[8];
		if (spec[off] != ' ' || parse_recipe(spec + off, strlen(spec + off), &rc) < 0) {
			snprintf(err, cap, "malformed target variable store '%s'", spec);
			return -1;
		}
		if (eval(&rc, h->uc, h->bias, &addr, &fault) < 0) {
			snprintf(err, cap, "user read fault at 0x%" PRIx64, fault);
			return -1;
		}
		memcpy(bytes, &v, sizeof(bytes));   /* little-endian: the low bytes first */
		if (write_mem((uintptr_t)addr, bytes, size) < 0) {
			snprintf(err, cap, "user write fault at 0x%" PRIx64, addr);
			return -1;
		}
		return 0;
	}
	snprintf(err, cap, "malformed target variable store '%s'", spec);
	return -1;
}

#define SAVED_STR 256             /* strings of a .return probe saved at the call */

/* A call hooked by a .return probe (the shadow stack's entries). */
struct ret_frame {
	uintptr_t ret;                  /* where the function returns to: the caller, or
					 * the trampoline of another probe of the call */
	uintptr_t real;                 /* the caller (the end of such a chain) */
	uintptr_t hook;                 /* what the slot holds instead: a trampoline */
	uintptr_t slot;                 /* where its return address was */
	struct usite *s;
	uint64_t saved[SAVED_MAX];      /* its 'l' values, read at the call */
	char strs[SAVED_STR];           /* its 's' values, one after the other */
};

enum phase { PH_ENTRY, PH_CALL, PH_RETURN };

/* The fields of a hit.  At an entry probe: all ('l' 's').  At the call of
 * a .return probe: the 'l' and 's' ones, into rf.  At its return: those
 * from rf, and the 'L' and 'R' ones read now.  0, or -1 after a report. */
static int fetch(const struct usite *s, const ucontext_t *uc, enum phase ph, struct ret_frame *rf,
		 struct mt_args *a, char *strbuf, size_t strcap)
{
	unsigned k = 0;
	size_t saved_off = 0;

	for (unsigned i = 0; i < s->w->nf; i++) {
		const struct field *f = &s->w->f[i];
		int str = f->kind == 's' || f->kind == 'R';
		uint64_t fault = 0, v = 0;
		if (ph == PH_CALL && (f->kind == 'L' || f->kind == 'R'))
			continue;
		if (ph == PH_RETURN && f->kind == 's') {   /* saved at the call */
			size_t len = strnlen(rf->strs + saved_off, SAVED_STR - saved_off);
			a->v[i].str = rf->strs + saved_off;
			a->slen[i] = (u32)len + 1;
			saved_off += len + 1;
		} else if (ph == PH_RETURN && f->kind == 'l') {
			a->v[i].u = rf->saved[k++];
		} else if (str) {
			char *out = ph == PH_CALL ? rf->strs + saved_off : strbuf;
			size_t cap = ph == PH_CALL ? SAVED_STR - saved_off : strcap;
			size_t len = cap ? format_parms(f, uc, s->bias, out, cap) : 0;
			if (ph == PH_CALL) {
				saved_off += cap ? len + 1 : 0;
				continue;
			}
			a->v[i].str = out;
			a->slen[i] = (u32)len + 1;
			strbuf += len + 1;
			strcap -= len + 1;
		} else if (eval(&f->r, uc, s->bias, &v, &fault) < 0) {
			report("ERROR: user read fault at 0x%" PRIx64 " for value %u of %s (skipped)", fault, i + 1,
			       s->w->name);
			return -1;
		} else if (ph == PH_CALL) {
			rf->saved[k++] = v;
		} else {
			a->v[i].u = v;
		}
	}
	return 0;
}

static void run_entry(struct usite *s, ucontext_t *uc)
{
	struct mt_args a;
	char strbuf[1024];
	struct usym_hit h;
	struct store_hit sh;

	if (fetch(s, uc, PH_ENTRY, NULL, &a, strbuf, sizeof(strbuf)) == 0) {
		usym_enter_regs(&h, s->addr, (uintptr_t)mt_trap_reg(uc, MT_R_RIP), uc);
		store_enter(&sh, uc, s->bias);
		U.hit(&s->marker, &s->rt, &a);
		store_leave(&sh);
		usym_leave(&h);
	}
}

/* ---- .return: the shadow stack and the trampolines ---------------------------------- */

/* For a thread that got no return stubs (more than RS_CHUNKS threads, or
 * no pool): a return goes here instead of to its caller, the int3 traps
 * with the caller's stack pointer, and on_return() resumes at the saved
 * address.  Unwinders stop here: a C++ exception through such a call ends
 * the program. */
__asm__(".text\n"
	".globl mt_ufunc_tramp\n"
	".hidden mt_ufunc_tramp\n"
	".type mt_ufunc_tramp, @function\n"
	"mt_ufunc_tramp:\n"
	"\tint3\n"
	"\tnop\n"
	".size mt_ufunc_tramp, . - mt_ufunc_tramp\n");
extern const char mt_ufunc_tramp[];

#define RET_MAX 190             /* calls deep per thread */
#define STACK_BYTES ((RET_MAX * sizeof(struct ret_frame) + 64 + 4095) & ~(size_t)4095)
#define SAME_STACK (1u << 20)   /* frames this close belong to one stack */

struct ret_stack {
	unsigned n;
	int chunk;              /* its return stubs (RS), or -1: the int3 trampoline */
	struct ret_frame f[];
};

static __thread struct ret_stack *ret_stack __attribute__((tls_model("initial-exec")));

/* Calls whose return ran no handler: left by longjmp or an exception,
 * by a thread's exit, or returned on another thread's stack. */
static void lost_returns(unsigned long n, const struct usite *s)
{
	if (n && __atomic_fetch_add(&U.lost_returns, n, __ATOMIC_RELAXED) == 0 && s)
		report("%s: a call hooked by a .return probe ended without a return (longjmp, an "
		       "exception, the thread's end): its return probe does not fire (counted)", s->w->name);
}

/*
 * The jump route for returns.  The return address becomes a stub of the
 * thread's own, one per shadow stack entry, in a pool of executable
 * pages (RS.code):
 *
 *	RS.code:     .quad mt_ufunc_rtramp
 *	stub k:      call *RS.code(%rip); xchg %ax, %ax      (8 bytes)
 *
 * (eight int3 instead where the jumps are off, MARKTAP_UFUNC_JUMP=0 or
 * no xsave: on_rstub() does the same from the SIGTRAP.)
 *
 * A return into stub k calls mt_ufunc_rtramp, which saves the registers
 * and the extended state and calls mt_ufunc_ret_fast(): the entry of the
 * shadow stack is k's (thread RS chunk k / RET_MAX, entry k % RET_MAX),
 * the handler runs with the caller's registers, and the address pushed by
 * the stub's call is replaced by the real return address for the final
 * "ret".  No signal.
 *
 * RS.cells[k] holds the real return address of stub k's call too, for
 * unwinders: the call frame information registered for the pool
 * (rs_register()) says that in a stub the caller's rsp is rsp and its
 * rip is at ([rsp - 8] & -8) - RS.code - 8 + RS.cells, i.e. cells[k]
 * when the slot still holds stub k.  A C++ exception (or a thread cancellation)
 * unwinding through a .return-probed call so finds the caller, its
 * handlers and its cleanups; the return probe of that call does not fire
 * (counted as lost).  Needs libgcc_s's unwinder in the process when the
 * pool is made (C++ programs have it from the start).
 */
#define RS_CHUNKS 1024                  /* threads with return stubs at one time */
#define RS_STUB 8
static struct {
	uintptr_t code;                 /* 8 + RS_CHUNKS * RET_MAX stubs, read-only */
	uintptr_t *cells;
	uintptr_t *slots;               /* where each stub's call kept its return address */
	size_t nstubs;
	unsigned char busy[RS_CHUNKS];  /* a live thread's */
	unsigned char written[RS_CHUNKS];
	int registered;                 /* the call frame information, with libgcc_s */
	int trap;                       /* the stubs are int3s (no jumps, or no xsave) */
	unsigned char eh[96];           /* a CIE, an FDE, the end */
} RS;

static int is_rstub(uintptr_t a)
{
	return RS.code && a >= RS.code + 8 && a < RS.code + 8 + RS.nstubs * RS_STUB && !((a - RS.code) & 7);
}

static int is_tramp(uintptr_t a)
{
	return a == (uintptr_t)mt_ufunc_tramp || is_rstub(a);
}

static size_t rstub_index(uintptr_t a)
{
	return (a - RS.code - 8) / RS_STUB;
}

/* The .eh_frame of the pool: a CIE with the rule above, an FDE over the
 * whole pool, a zero word (libgcc's __register_frame reads such a list). */
static size_t rs_eh_frame(unsigned char *eh)
{
	uint64_t delta = (uint64_t)(uintptr_t)RS.cells - RS.code - 8, begin = RS.code,
		 range = 8 + RS.nstubs * RS_STUB;
	static const unsigned char cie_head[] = {
		0, 0, 0, 0,                     /* CIE id */
		1, 'z', 'R', 0,                 /* version, augmentation */
		1, 0x78, 16,                    /* code align 1, data align -8, ra column rip */
		1, 0x00,                        /* augmentation data: FDE addresses absolute */
		/* CFA = rsp + 8, not the probed function's (rsp): libgcc
		 * tells frames apart by their CFA, and takes the stub for the
		 * caller's frame if they are equal (an abort in _Unwind_Resume) */
		0x0c, 7, 8,                     /* DW_CFA_def_cfa rsp, 8 */
		0x14, 7, 1,                     /* DW_CFA_val_offset rsp, -8: the caller's rsp */
		0x10, 16, 16,                   /* DW_CFA_expression rip, 16 bytes: */
		0x40, 0x1c, 0x06,               /* CFA, 16, minus, deref: what the slot holds */
		0x09, 0xf8, 0x1a,               /* -8, and: its stub (whose call pushed stub + 6) */
		0x0e,                           /* const8u delta, plus: the stub's cell */
	};
	size_t n = 4, fde;
	uint32_t len;

	memcpy(eh + n, cie_head, sizeof(cie_head));
	n += sizeof(cie_head);
	memcpy(eh + n, &delta, 8);
	n += 8;
	eh[n++] = 0x22;                         /* DW_OP_plus */
	while (n % 8)
		eh[n++] = 0;                    /* DW_CFA_nop */
	len = (uint32_t)(n - 4);
	memcpy(eh, &len, 4);
	fde = n;
	n += 4;
	len = (uint32_t)(n - 0);                /* the CIE pointer: back to the CIE */
	memcpy(eh + n, &len, 4);
	n += 4;
	memcpy(eh + n, &begin, 8);
	memcpy(eh + n + 8, &range, 8);
	n += 16;
	eh[n++] = 0;                            /* no augmentation data */
	while (n % 8)
		eh[n++] = 0;
	len = (uint32_t)(n - fde - 4);
	memcpy(eh + fde, &len, 4);
	memset(eh + n, 0, 4);                   /* the end */
	return n + 4;
}

/* The pool's call frame information, given to libgcc_s's unwinder (the
 * one C++ exceptions and pthread_cancel use) once it is in the process. */
static void rs_register(void)
{
	void (*reg)(const void *);
	Dl_info where;

	if (!RS.code || RS.registered)
		return;
	*(void **)&reg = dlsym(RTLD_DEFAULT, "__register_frame");
	if (!reg) {   /* loaded privately (glibc's backtrace(), pthread_cancel): its handle */
		void *gcc = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (gcc)
			*(void **)&reg = dlsym(gcc, "__register_frame");
	}
	if (!reg || !dladdr(*(void **)&reg, &where) || !where.dli_fname || !strstr(where.dli_fname, "libgcc_s"))
		return;
	rs_eh_frame(RS.eh);
	reg(RS.eh);
	RS.registered = 1;
}

/* Before any .return probe is armed (not in a trap: mmap, dlsym). */
static void rs_init(void)
{
	const char *env = secure_getenv("MARKTAP_UFUNC_JUMP");
	long page = sysconf(_SC_PAGESIZE);
	size_t size;
	void *code, *cells, *slots;
	uintptr_t entry = (uintptr_t)mt_ufunc_rtramp;

	if (RS.code) {
		rs_register();
		return;
	}
	RS.trap = (env && !strcmp(env, "0")) || !xsave_ready();
	RS.nstubs = RS_CHUNKS * RET_MAX;
	size = ((8 + RS.nstubs * RS_STUB) + (size_t)page - 1) & ~(size_t)(page - 1);
	/* pages are taken only as threads write their stubs */
	code = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cells = mmap(NULL, RS.nstubs * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	slots = mmap(NULL, RS.nstubs * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (code == MAP_FAILED || cells == MAP_FAILED || slots == MAP_FAILED || poke_n((uintptr_t)code, &entry, 8) < 0) {
		if (code != MAP_FAILED)
			munmap(code, size);
		if (cells != MAP_FAILED)
			munmap(cells, RS.nstubs * 8);
		if (slots != MAP_FAILED)
			munmap(slots, RS.nstubs * 8);
		return;
	}
	RS.cells = cells;
	RS.slots = slots;
	RS.code = (uintptr_t)code;
	rs_register();
}

/* A chunk of stubs for this thread, or -1 (the int3 trampoline then).
 * In a trap too: atomics and raw system calls only. */
static int rs_claim(void)
{
	unsigned char code[RET_MAX * RS_STUB];

	for (int c = 0; RS.code && c < RS_CHUNKS; c++) {
		if (__atomic_load_n(&RS.busy[c], __ATOMIC_RELAXED) || __atomic_exchange_n(&RS.busy[c], 1, __ATOMIC_ACQUIRE))
			continue;
		if (!RS.written[c]) {   /* its stubs: written once, kept */
			for (size_t d = 0; d < RET_MAX; d++) {
				uintptr_t at = RS.code + 8 + ((size_t)c * RET_MAX + d) * RS_STUB;
				int32_t rel = (int32_t)((int64_t)RS.code - (int64_t)(at + 6));
				unsigned char *p = code + d * RS_STUB;
				p[0] = 0xff, p[1] = 0x15;   /* call *RS.code(%rip) */
				memcpy(p + 2, &rel, 4);
				p[6] = 0x66, p[7] = 0x90;   /* xchg %ax, %ax */
				if (RS.trap)
					memset(p, 0xcc, RS_STUB);   /* int3: on_rstub() */
			}
			if (poke_n(RS.code + 8 + (size_t)c * RET_MAX * RS_STUB, code, sizeof(code)) < 0) {
				__atomic_store_n(&RS.busy[c], 0, __ATOMIC_RELEASE);
				return -1;
			}
			RS.written[c] = 1;
		}
		return c;
	}
	return -1;
}

static void free_stack(void *p)
{
	struct ret_stack *rs = p;

	/* calls still hooked never return here: the thread ends */
	lost_returns(rs->n, NULL);
	if (rs->chunk >= 0)
		__atomic_store_n(&RS.busy[rs->chunk], 0, __ATOMIC_RELEASE);
	if (rs == ret_stack)   /* a later destructor's hooked call gets a new one */
		ret_stack = NULL;
	munmap(p, STACK_BYTES);
}

/* The thread's stack: mmap, safe in the trap handler. */
static struct ret_stack *my_stack(void)
{
	struct ret_stack *rs;
	void *p;

	if (ret_stack)
		return ret_stack;
	p = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	rs = p;
	rs->chunk = rs_claim();
	if (RS.code && rs->chunk < 0 && !__atomic_exchange_n(&U.no_stubs, 1, __ATOMIC_RELAXED))
		report("more than %d threads with .return-probed calls: the others' returns trap, and a "
		       "C++ exception through them ends the program", RS_CHUNKS);
	ret_stack = rs;
	if (U.have_key)
		pthread_setspecific(U.stack_key, p);
	return rs;
}

/* The entries above n go: their calls were left without a return. */
static void drop_frames(struct ret_stack *rs, unsigned n, const struct usite *s)
{
	if (rs->n > n) {
		lost_returns(rs->n - n, s);
		rs->n = n;
	}
}

/* A .return site's hit: its return address is swapped for a trampoline. */
static void hook_return(struct usite *s, const ucontext_t *uc)
{
	struct ret_stack *rs = my_stack();
	uint64_t cfa, fault, sp = mt_trap_reg(uc, MT_R_RSP);
	uintptr_t slot, ret, real, hook;
	struct ret_frame *f;
	unsigned n;

	if (!rs || eval(&s->w->cfa, uc, s->bias, &cfa, &fault) < 0)
		return;
	slot = (uintptr_t)cfa - 8;
	/* between the stack pointer and the frame's top: the live stack,
	 * mapped; read without a system call */
	if (slot < sp || slot - sp > SAME_STACK || (slot & 7)) {
		report("%s: no return address at 0x%llx (skipped)", s->w->name, (unsigned long long)slot);
		return;
	}
	ret = real = *(const uintptr_t *)slot;
	/* frames deeper than this one, on this stack, were left by longjmp */
	for (n = rs->n; n && rs->f[n - 1].slot && rs->f[n - 1].slot < slot && slot - rs->f[n - 1].slot < SAME_STACK;)
		n--;
	drop_frames(rs, n, s);
	if (!is_tramp(ret)) {
		while (n && rs->f[n - 1].slot == slot)   /* an old call's, same place */
			n--;
		drop_frames(rs, n, s);
	} else {
		/* hooked already: by another probe of this address, or by this
		 * one when the body jumps back to its first line */
		for (unsigned i = rs->n; i-- > 0 && rs->f[i].slot == slot;)
			if (rs->f[i].s == s)
				return;
		real = rs->n && rs->f[rs->n - 1].slot == slot ? rs->f[rs->n - 1].real
		       : is_rstub(ret) ? RS.cells[rstub_index(ret)] : 0;
		if (!real)
			return;   /* not ours to chain onto */
	}
	if (rs->n == RET_MAX) {
		if (__atomic_fetch_add(&U.missed_returns, 1, __ATOMIC_RELAXED) == 0)
			report("%s: .return probes miss calls nested deeper than %u in one thread",
			       s->w->name, (unsigned)RET_MAX);
		return;
	}
	/*
	 * A signal handler may run between any two of these steps and hook
	 * (and unhook) calls of its own: the entry is reserved first, with
	 * slot 0 (in the making: matched by no return, and the cleanup above
	 * stops at it), filled, then given its slot, then the return address
	 * is swapped.  The signal fences keep the compiler to that order (a
	 * signal runs on this thread: no CPU fence is needed).
	 */
	f = &rs->f[rs->n];
	f->slot = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rs->n++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	hook = rs->chunk < 0 ? (uintptr_t)mt_ufunc_tramp
	       : RS.code + 8 + ((size_t)rs->chunk * RET_MAX + (size_t)(f - rs->f)) * RS_STUB;
	f->ret = ret;
	f->real = real;
	f->hook = hook;
	f->s = s;
	f->strs[0] = '\0';
	/* values read at the call, kept for the return */
	if (fetch(s, uc, PH_CALL, f, NULL, NULL, 0) < 0) {
		if (rs->n && &rs->f[rs->n - 1] == f)
			rs->n--;
		return;
	}
	if (rs->chunk >= 0) {   /* for unwinders (rs_eh_frame), and returns on other threads */
		RS.cells[rstub_index(hook)] = real;
		RS.slots[rstub_index(hook)] = slot;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	f->slot = slot;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*(uintptr_t *)slot = hook;
}

/* The return handlers of f (popped), on the caller's registers in uc. */
static void run_return(struct ret_frame *f, ucontext_t *uc)
{
	struct mt_args a;
	char strbuf[512];

	if (__atomic_load_n(&f->s->armed, __ATOMIC_ACQUIRE) &&
	    fetch(f->s, uc, PH_RETURN, f, &a, strbuf, sizeof(strbuf)) == 0) {
		struct usym_hit h;   /* stap's uaddr() in a .return: where it returns to */
		struct store_hit sh;
		usym_enter_regs(&h, f->real, f->real, uc);
		store_enter(&sh, uc, f->s->bias);
		U.hit(&f->s->marker, &f->s->rt, &a);
		store_leave(&sh);
		usym_leave(&h);
	}
}

/* Nowhere to go back to: the stack was switched under us (a shadow entry
 * taken for a call on another stack of the thread).  Stopped with a
 * message rather than sent to a wrong address. */
static void __attribute__((noreturn)) lost_address(void)
{
	static const char msg[] = "marktap: a .return probe lost its return address "
				  "(stack switched between call and return?)\n";

	if (SYS3(SYS_write, 2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	abort();
}

static void on_return(ucontext_t *uc)
{
	struct ret_stack *rs = ret_stack;
	uintptr_t slot = (uintptr_t)mt_trap_reg(uc, MT_R_RSP) - 8;
	unsigned i = rs ? rs->n : 0;
	struct ret_frame f;

	while (i > 0 && rs->f[i - 1].slot != slot)
		i--;
	if (!i)
		lost_address();
	f = rs->f[i - 1];
	drop_frames(rs, i, f.s);   /* the frames above it, left by longjmp */
	rs->n = i - 1;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)f.ret;
	run_return(&f, uc);
}

/* Backtraces (usym.c): the unwinder finds the return addresses on the
 * stack, and stops at the trampoline's.  The thread's own hooked frames
 * get their real addresses back while it unwinds, newest entry first, one
 * per slot, only where the slot still holds the entry's trampoline (a slot
 * left by longjmp holds something else now, and is not touched). */
#define UNHOOK_MAX 64
static __thread struct {
	unsigned n;
	uintptr_t slot[UNHOOK_MAX], hook[UNHOOK_MAX];
} unhooked __attribute__((tls_model("initial-exec")));

void ufunc_unhook_frames(void)
{
	struct ret_stack *rs = ret_stack;

	unhooked.n = 0;
	for (unsigned i = rs ? rs->n : 0; i-- > 0 && unhooked.n < UNHOOK_MAX;) {
		const struct ret_frame *f = &rs->f[i];
		if (!f->slot || *(uintptr_t *)f->slot != f->hook)
			continue;
		*(uintptr_t *)f->slot = f->real;
		unhooked.slot[unhooked.n] = f->slot;
		unhooked.hook[unhooked.n++] = f->hook;
	}
}

void ufunc_rehook_frames(void)
{
	for (unsigned k = 0; k < unhooked.n; k++)
		*(uintptr_t *)unhooked.slot[k] = unhooked.hook[k];
	unhooked.n = 0;
}

/* ---- the trap --------------------------------------------------------------------- */

/* Sites this thread is stepping over (nested when a signal handler hits
 * a probe during a step), innermost last. */
#define STEPS_MAX 8
static __thread struct {
	unsigned n;
	uintptr_t addr[STEPS_MAX];
} steps __attribute__((tls_model("initial-exec")));

#define TF 0x100   /* EFLAGS trap flag */

/* Traps of this thread being handled: a trap inside the trap handler (a
 * script that probes libc functions the handler or its Lua call) only
 * runs the displaced instruction, never handlers again. */
static __thread unsigned trap_depth __attribute__((tls_model("initial-exec")));

/*
 * errno without libc's __errno_location(), a function a script may probe
 * (function("*") on libc): a trap inside it taken while the trap path
 * saves errno recursed until the stack overflowed.  errno is in libc's
 * static TLS block, at one offset from the thread pointer in every
 * thread: measured once, before anything is armed (ufunc_object).
 */
static intptr_t errno_off;
static int errno_off_ok;

static uintptr_t thread_pointer(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

static void measure_errno(void)
{
	if (!errno_off_ok) {
		errno_off = (intptr_t)((uintptr_t)&errno - thread_pointer());
		errno_off_ok = 1;
	}
}

static int *my_errno(void)
{
	static int scratch;   /* never measured: nothing is armed either */

	return errno_off_ok ? (int *)(thread_pointer() + (uintptr_t)errno_off) : &scratch;
}

void ufunc_host_code(int enter)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (enter)
		trap_depth++;
	else
		trap_depth--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void on_site(const struct site_table *t, size_t first, uintptr_t addr, ucontext_t *uc)
{
	struct usite *s0 = t->v[first];

	if (steps.n && steps.addr[steps.n - 1] == addr) {
		/* our step ran into an int3 another thread put back: again */
		poke(addr, s0->orig);
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)addr;
		return;
	}
	for (size_t i = first; i < t->n && t->v[i]->addr == addr && trap_depth == 1; i++) {
		struct usite *s = t->v[i];
		if (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE))
			continue;
		if (s->w->ret)
			hook_return(s, uc);
		else
			run_entry(s, uc);
	}
	if (s0->xol) {   /* run the displaced instruction from its copy */
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s0->xol;
		return;
	}
	/* step over the displaced instruction in place */
	__atomic_add_fetch(&s0->steppers, 1, __ATOMIC_ACQ_REL);
	poke(addr, s0->orig);
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)addr;
	if (steps.n == STEPS_MAX) {   /* too deep: the site stays open from now on */
		__atomic_store_n(&s0->armed, 0, __ATOMIC_RELEASE);
		report("%s: steps nested deeper than %d in one thread; probe disarmed", s0->w->name, STEPS_MAX);
		return;
	}
	{   /* reserved before it is written: a nested trap takes the next */
		unsigned k = steps.n++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		steps.addr[k] = addr;
	}
	uc->uc_mcontext.gregs[REG_EFL] |= TF;
}

static int on_step(ucontext_t *uc)
{
	const struct site_table *t = sites();
	uintptr_t addr;
	size_t i;

	if (!steps.n)
		return 0;
	addr = steps.addr[--steps.n];
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TF;
	i = first_at(t, addr);
	if (i < t->n && t->v[i]->addr == addr) {
		struct usite *s0 = t->v[i];
		if (__atomic_sub_fetch(&s0->steppers, 1, __ATOMIC_ACQ_REL) == 0) {
			int any = 0;
			for (size_t k = i; k < t->n && t->v[k]->addr == addr; k++)
				any |= __atomic_load_n(&t->v[k]->armed, __ATOMIC_ACQUIRE);
			if (any)
				poke(addr, 0xcc);
		}
	}
	return 1;
}

/* From mt_ufunc_entry (a jump site's stub): the handlers, as on_site()
 * runs them for a trap, on a context made of the saved registers. */
void mt_ufunc_fast(struct jregs *r) __attribute__((visibility("hidden"), used));
void mt_ufunc_fast(struct jregs *r)
{
	const struct usite *s0 = *(struct usite *const *)(uintptr_t)(r->slot + 8);
	uintptr_t addr = s0->addr;
	int nested = trap_depth++ > 0, saved_errno = 0;
	int *err = my_errno();
	const struct site_table *t = sites();
	ucontext_t uc;

	r->ra = addr + 1;
	if (!nested) {
		saved_errno = *err;
		/* past the slot and the red zone; where an int3 would leave it */
		regs_to_uc(&r->g, (uintptr_t)(r + 1) + 128, addr + 1, &uc);
		for (size_t i = first_at(t, addr); i < t->n && t->v[i]->addr == addr; i++) {
			struct usite *s = t->v[i];
			if (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE))
				continue;
			if (s->w->ret)
				hook_return(s, &uc);
			else
				run_entry(s, &uc);
		}
		uc_to_regs(&uc, &r->g);
		*err = saved_errno;
	}
	r->slot = s0->xol;   /* "ret $128" goes on there */
	trap_depth--;
}

/* The entry of return stub k whose call's slot was at slot, popped into
 * *f; 0 when it is not this thread's (a stack that changed threads) or
 * gone (counted). */
static int take_frame(size_t k, uintptr_t slot, struct ret_frame *f)
{
	struct ret_stack *rs = ret_stack;
	unsigned d = (unsigned)(k % RET_MAX);

	if (!rs || rs->chunk != (int)(k / RET_MAX) || d >= rs->n || rs->f[d].slot != slot) {
		lost_returns(1, NULL);
		return 0;
	}
	*f = rs->f[d];
	drop_frames(rs, d + 1, f->s);   /* the frames above it, left by longjmp */
	rs->n = d;
	return 1;
}

/* From mt_ufunc_rtramp (a return stub's call; r->ra holds the stub +
 * 6): the return handlers of the stub's entry, then r->ra is where to
 * go on: the caller, or another probe's stub for the same call. */
void mt_ufunc_ret_fast(struct rregs *r) __attribute__((visibility("hidden"), used));
void mt_ufunc_ret_fast(struct rregs *r)
{
	size_t k = rstub_index(r->ra & ~(uintptr_t)7);
	uintptr_t slot = (uintptr_t)&r->ra;
	int nested = trap_depth++ > 0, saved_errno;
	int *err = my_errno();
	struct ret_frame f;
	ucontext_t uc;

	/* first, for unwinders from here on (and if the entry is gone) */
	if (RS.slots[k] != slot)
		lost_address();
	r->ra = RS.cells[k];
	if (take_frame(k, slot, &f)) {
		r->ra = f.ret;
		if (!nested) {
			saved_errno = *err;
			regs_to_uc(&r->g, slot + 8, f.real, &uc);
			run_return(&f, &uc);
			uc_to_regs(&uc, &r->g);
			*err = saved_errno;
		}
	}
	trap_depth--;
}

/* The int3 of return stub k (the trap route): as mt_ufunc_ret_fast. */
static void on_rstub(ucontext_t *uc, size_t k)
{
	uintptr_t slot = (uintptr_t)mt_trap_reg(uc, MT_R_RSP) - 8;
	struct ret_frame f;

	if (RS.slots[k] != slot)
		lost_address();
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)RS.cells[k];
	if (take_frame(k, slot, &f)) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)f.ret;
		if (trap_depth == 1)
			run_return(&f, uc);
	}
}

/* The int3 of a padding's jump being put back (ufunc_stop): the thread
 * was on its way to the stub through it; it goes there. */
static int on_pad(const struct site_table *t, uintptr_t pc, ucontext_t *uc)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i]->pad == pc && t->v[i]->stub) {
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)t->v[i]->stub;
			return 1;
		}
	return 0;
}

int ufunc_trap(siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	const struct site_table *t;
	uintptr_t pc;
	size_t i;
	int nested = trap_depth++ > 0, saved_errno = 0, ours = 0;
	int *err = my_errno();

	/* the handlers may change errno; a nested trap makes raw system
	 * calls only */
	if (!nested)
		saved_errno = *err;
	if (si->si_code == TRAP_TRACE) {
		ours = on_step(uc);
	} else if (si->si_code == SI_KERNEL) {
		pc = (uintptr_t)mt_trap_reg(uc, MT_R_RIP) - 1;
		if (pc == (uintptr_t)mt_ufunc_tramp) {
			on_return(uc);
			ours = 1;
		} else if (is_rstub(pc)) {
			on_rstub(uc, rstub_index(pc));
			ours = 1;
		} else if ((t = sites())->n && (i = first_at(t, pc)) < t->n && t->v[i]->addr == pc) {
			on_site(t, i, pc, uc);
			ours = 1;
		} else if (t->n) {
			ours = on_pad(t, pc, uc);
		}
	}
	if (!nested)
		*err = saved_errno;
	trap_depth--;
	return ours;
}
#else
int ufunc_store(const char *spec, int64_t v, char *err, size_t cap)
{
	(void)spec;
	(void)v;
	snprintf(err, cap, "write to target variable: not supported on this architecture");
	return -1;
}

void ufunc_host_code(int enter)
{
	(void)enter;
}

int ufunc_trap(siginfo_t *si, void *ctx)
{
	(void)si;
	(void)ctx;
	return 0;
}
#endif
