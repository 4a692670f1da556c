/*
 * sdt.c - handlers at <sys/sdt.h> probes, by int3 (sdt.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>
#include "mt_sdt.h"
#include "probe.h"
#include "sdt.h"
#include "text.h"
#include "ufunc.h"

struct site {
	uintptr_t addr;                 /* the nop, now int3 while armed */
	uintptr_t bias;                 /* the object's load bias */
	uint16_t *sem;
	int armed;
	int dead;                       /* its object was unloaded */
	unsigned obj;                   /* in S.objs */
	int nargs;
	struct mt_sdt_arg args[MT_SDT_MAXARGS];
	struct mt_marker marker;
	struct mt_marker_rt rt;
};

/* An object already read: found again at the next scan, or unloaded. */
struct obj {
	uintptr_t base;
	dev_t dev;
	ino_t ino;
	int live;
};

/* The sites, sorted by address: a scan publishes a new table whole (a
 * release store of one pointer); a trap on another thread may still read
 * the old one, never freed.  (Shifting in place let a trap miss a site
 * for a moment and pass its SIGTRAP on, killing the program.) */
struct sdt_table {
	size_t n;
	struct site *v[];
};

static struct sdt_table no_sites;

static struct {
	pthread_mutex_t lock;           /* scans and stop */
	struct sdt_table *table;
	struct obj *objs;
	unsigned nobjs, capobjs, cur;
	probe_attach_fn attach;
	probe_hit_fn hit;
	probe_error_fn error;
	struct sigaction old;
	int installed, stopped;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER, .table = &no_sites };

#define sdt_report(...) probe_report(S.error, __VA_ARGS__)

/* ---- the trap ---- */

#if defined(__x86_64__)

static int64_t arg_value(const struct mt_sdt_arg *a, const ucontext_t *uc, uintptr_t bias)
{
	uint64_t raw = 0;

	switch (a->kind) {
	case MT_SDT_IMM:
		return a->disp;
	case MT_SDT_REG:
		raw = probe_reg(uc, a->base);
		break;
	default: {
		uint64_t addr = (uint64_t)a->disp;
		if (a->link_addr)
			addr += bias;
		if (a->base >= 0)
			addr += probe_reg(uc, a->base);
		if (a->index >= 0)
			addr += probe_reg(uc, a->index) * (uint64_t)a->scale;
		/* the compiler's operand for the probe's own frame: readable */
		memcpy(&raw, (const void *)(uintptr_t)addr, (size_t)a->size);
		break;
	}
	}
	if (a->size < 8) {
		unsigned bits = (unsigned)a->size * 8;
		raw &= (1ull << bits) - 1;
		if (a->is_signed && (raw >> (bits - 1)) & 1)
			raw |= ~0ull << bits;
	}
	return (int64_t)raw;
}

static struct site *find(uintptr_t addr)
{
	const struct sdt_table *t = __atomic_load_n(&S.table, __ATOMIC_ACQUIRE);
	size_t lo = 0, hi = t->n;
	struct site *const *v = t->v;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid]->addr == addr)
			return v[mid];
		if (v[mid]->addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t pc = (uintptr_t)probe_reg(uc, MT_R_RIP) - 1;
	struct site *s;
	struct mt_args a;
	struct probe_hit h;

	if (ufunc_trap(si, ctx))   /* a function probe's (ufunc_trap.c) */
		return;
	s = si->si_code == SI_KERNEL ? find(pc) : NULL;
	if (!s && si->si_code == SI_KERNEL && *(volatile unsigned char *)pc != 0xcc) {
		/* an int3 that is gone by now was one of ours, put back as the
		 * instruction between the trap and this look (a probe being
		 * disarmed, a step in place by another thread): run the
		 * instruction -- the program's own int3s are still there */
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
		return;
	}
	if (!s) {   /* not ours: as if we were not here */
		if (S.old.sa_flags & SA_SIGINFO) {
			S.old.sa_sigaction(sig, si, ctx);
		} else if (S.old.sa_handler == SIG_IGN) {
			return;
		} else if (S.old.sa_handler != SIG_DFL) {
			S.old.sa_handler(sig);
		} else {
			signal(sig, SIG_DFL);
			raise(sig);
		}
		return;
	}
	if (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE))
		return;   /* disarmed since: the nop is back, go on after it */
	for (int i = 0; i < s->nargs; i++)
		a.v[i].u = (mt_u64)arg_value(&s->args[i], uc, s->bias);
	probe_enter(&h, s->addr, s->addr + 1, NULL);   /* uaddr(), ubacktrace() (usym.c) */
	S.hit(&s->marker, &s->rt, &a);
	probe_leave(&h);
}
#endif

/* ---- patching ---- */

/* One byte of code (the int3, the nop put back), the page's protection
 * unchanged (text.c). */
static int poke(uintptr_t addr, unsigned char byte)
{
	return mt_text_write(addr, &byte, 1);
}

/* Is [addr, addr + len) inside an executable (or, for !exec, writable)
 * segment of the object? */
static int in_segment(struct dl_phdr_info *info, uintptr_t addr, size_t len, int exec)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & (exec ? PF_X : PF_W)))
			continue;
		if (addr >= lo && addr + len <= lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

static int add_site(struct site *s)
{
	const struct sdt_table *old = S.table;
	struct sdt_table *t = malloc(sizeof(*t) + (old->n + 1) * sizeof(t->v[0]));
	size_t i = 0, k = 0;

	if (!t)
		return -1;
	while (i < old->n && old->v[i]->addr < s->addr)
		t->v[k++] = old->v[i++];
	t->v[k++] = s;
	while (i < old->n)
		t->v[k++] = old->v[i++];
	t->n = k;
	__atomic_store_n(&S.table, t, __ATOMIC_RELEASE);
	return 0;
}

static void arm_probe(struct dl_phdr_info *info, const char *path, const struct stat *st,
		      const struct mt_sdt_probe *p, int *armed)
{
	struct site *s;
	char err[160];
	uintptr_t addr = info->dlpi_addr + p->pc;

	if (!strcmp(p->provider, "marktap"))
		return;   /* libmarktap's own markers: the registry runs them */
	if (!strcmp(p->provider, "libc") && !strncmp(p->name, "memory_", 7)) {
		/* glibc's malloc probes fire inside malloc, some with an arena
		 * locked: a handler that allocates (Lua does) would deadlock */
		sdt_report("probe libc:%s of %s fires inside malloc; not armed", p->name, path);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->nargs = mt_sdt_parse_args(p->args, s->args, MT_SDT_MAXARGS, err, sizeof(err));
	s->marker.name = strdup(p->name);
	s->marker.rt = &s->rt;
	s->rt.event_id = -1;
	s->rt.format_ok = 1;
	s->rt.format.nfields = s->nargs > 0 ? (unsigned)s->nargs : 0;
	for (int i = 0; i < s->nargs; i++) {
		struct mt_field *f = &s->rt.format.fields[i];
		snprintf(f->name, sizeof(f->name), "arg%d", i + 1);
		f->va = MT_VA_LONG;
		f->store = MT_ST_INT;
		f->size = 8;
		f->is_signed = 1;
		f->base = 10;
		f->ctype = "long";
	}
	if (!s->marker.name || !S.attach(&s->marker, &s->rt, p->provider, st->st_dev, st->st_ino)) {
		free((char *)s->marker.name);
		free(s);
		return;
	}
	if (s->nargs < 0) {
		sdt_report("probe %s:%s of %s: %s; not armed", p->provider, p->name, path, err);
		return;   /* attached, never hit: kept, the host may point at it */
	}
	if (!in_segment(info, addr, 1, 1) || *(const unsigned char *)addr != 0x90) {
		sdt_report("probe %s:%s of %s: no nop at 0x%llx; not armed", p->provider, p->name, path,
		       (unsigned long long)p->pc);
		return;
	}
	if (p->semaphore) {
		uintptr_t sem = info->dlpi_addr + p->semaphore;
		if (in_segment(info, sem, 2, 0))
			s->sem = (uint16_t *)sem;
	}
	s->addr = addr;
	s->bias = info->dlpi_addr;
	s->obj = S.cur;
	if (add_site(s) < 0)
		return;
	if (s->sem)
		__atomic_add_fetch(s->sem, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->armed, 1, __ATOMIC_RELEASE);
	if (poke(addr, 0xcc) < 0) {
		s->armed = 0;
		if (s->sem)
			__atomic_sub_fetch(s->sem, 1, __ATOMIC_RELAXED);
		sdt_report("probe %s:%s of %s: cannot patch its code: %s", p->provider, p->name, path,
		       strerror(errno));
		return;
	}
	(*armed)++;
	probe_text_fallback_told(S.error);
}

struct scan {
	int read_new;           /* 0: only see which objects are still there */
	int armed;
};

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *sc = arg;
	const char *path = info->dlpi_name;
	struct mt_sdt_probe *probes;
	struct stat st;
	size_t n;
	char err[256];

	(void)size;
	if (!path || !*path)
		path = "/proc/self/exe";   /* the program */
	if (!strchr(path, '/') || stat(path, &st) < 0)
		return 0;                  /* the vDSO */
	for (unsigned i = 0; i < S.nobjs; i++) {
		struct obj *o = &S.objs[i];
		if (o->base == info->dlpi_addr && o->dev == st.st_dev && o->ino == st.st_ino) {
			o->live = 1;
			return 0;          /* read at an earlier scan */
		}
	}
	if (!sc->read_new)
		return 0;
	if (S.nobjs == S.capobjs) {
		unsigned cap = S.capobjs ? 2 * S.capobjs : 16;
		struct obj *no = realloc(S.objs, cap * sizeof(*no));
		if (!no)
			return 0;
		S.objs = no;
		S.capobjs = cap;
	}
	S.cur = S.nobjs;
	S.objs[S.nobjs++] = (struct obj){ info->dlpi_addr, st.st_dev, st.st_ino, 1 };
	sc->armed += ufunc_object(info, &st, S.attach, S.hit, S.error);
	if (mt_sdt_read(path, &probes, &n, err, sizeof(err)) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		arm_probe(info, path, &st, &probes[i], &sc->armed);
	mt_sdt_free(probes, n);
	return 0;
}

/* Walk the loaded objects (S.lock held), reading the new ones if
 * read_new; the sites of objects gone (dlclose) are never touched again.
 * The number of probes armed. */
static int scan(int read_new)
{
	struct scan sc = { read_new, 0 };

	for (unsigned i = 0; i < S.nobjs; i++)
		S.objs[i].live = 0;
	dl_iterate_phdr(each_object, &sc);
	for (unsigned i = 0; i < S.nobjs; i++)
		if (!S.objs[i].live)
			ufunc_forget(S.objs[i].base, S.objs[i].dev, S.objs[i].ino);
	for (size_t i = 0; i < S.table->n; i++) {
		struct site *s = S.table->v[i];
		if (!S.objs[s->obj].live && !s->dead) {
			s->dead = 1;
			__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
		}
	}
	return sc.armed;
}

int sdt_start(probe_attach_fn attach, probe_hit_fn hit, probe_error_fn error)
{
#if defined(__x86_64__)
	struct sigaction sa;
	int armed = 0;

	S.attach = attach;
	S.hit = hit;
	S.error = error;
	if (!S.installed) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_trap;
		/* SA_NODEFER: a probe hit inside a handler traps again, and is
		 * skipped by the host instead of killing the program */
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGTRAP, &sa, &S.old) < 0) {
			sdt_report("cannot handle SIGTRAP: %s", strerror(errno));
			return 0;
		}
		S.installed = 1;
	}
	ufunc_host_code(1);   /* its libc calls are not the program's */
	pthread_mutex_lock(&S.lock);
	if (!S.stopped)
		armed = scan(1);
	pthread_mutex_unlock(&S.lock);
	ufunc_host_code(0);
	return armed;
#else
	(void)attach;
	(void)hit;
	sdt_report("%s", "SDT probes of programs without libmarktap: x86-64 only");
	return 0;
#endif
}

void sdt_stop(void)
{
	ufunc_host_code(1);
	pthread_mutex_lock(&S.lock);
	S.stopped = 1;
	scan(0);   /* not the code of a library closed since the last scan */
	ufunc_stop();
	for (size_t i = 0; i < S.table->n; i++) {
		struct site *s = S.table->v[i];
		if (!__atomic_exchange_n(&s->armed, 0, __ATOMIC_ACQ_REL) || s->dead)
			continue;
		if (*(volatile unsigned char *)s->addr == 0xcc)
			poke(s->addr, 0x90);
		if (s->sem)
			__atomic_sub_fetch(s->sem, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&S.lock);
	ufunc_host_code(0);
}
