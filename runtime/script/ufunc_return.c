/*
 * ufunc_return.c - function probes: .return, the shadow stacks of hooked
 * calls and the trampolines their returns go through (ufunc_int.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include "text.h"
#include "ufunc_int.h"

#if defined(__x86_64__)

/* For a thread that got no return stubs (more than RS_CHUNKS threads, or
 * no pool): a return goes here instead of to its caller, the int3 traps
 * with the caller's stack pointer, and ret_on_tramp() resumes at the saved
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

#define RET_MAX 190             /* calls deep per thread */
#define STACK_BYTES ((RET_MAX * sizeof(struct ret_frame) + 64 + 4095) & ~(size_t)4095)
#define SAME_STACK (1u << 20)   /* frames this close belong to one stack */

struct ret_stack {
	unsigned n;
	int chunk;              /* its return stubs (RS), or -1: the int3 trampoline */
	struct ret_frame f[];
};

static __thread struct ret_stack *ret_stack __attribute__((tls_model("initial-exec")));

static struct {
	pthread_key_t stack_key;        /* frees a thread's stack at its end */
	int have_key;
	unsigned long missed_returns;   /* calls too deep to hook */
	unsigned long lost_returns;     /* hooked calls that never came back */
	int no_stubs;                   /* a thread got no return stubs (reported) */
	int lost_told;                  /* lost_returns reported at the end */
} U;

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
 * no xsave: ufunc_trap.c's on_rstub() does the same from the SIGTRAP.)
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

int ret_is_stub(uintptr_t a)
{
	return RS.code && a >= RS.code + 8 && a < RS.code + 8 + RS.nstubs * RS_STUB && !((a - RS.code) & 7);
}

static int is_tramp(uintptr_t a)
{
	return a == (uintptr_t)mt_ufunc_tramp || ret_is_stub(a);
}

size_t ret_stub_index(uintptr_t a)
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

void ret_init(uintptr_t entry, int trap)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size;
	void *code, *cells, *slots;

	if (RS.code) {
		rs_register();
		return;
	}
	RS.trap = trap;
	RS.nstubs = RS_CHUNKS * RET_MAX;
	size = ((8 + RS.nstubs * RS_STUB) + (size_t)page - 1) & ~(size_t)(page - 1);
	/* pages are taken only as threads write their stubs */
	code = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cells = mmap(NULL, RS.nstubs * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	slots = mmap(NULL, RS.nstubs * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (code == MAP_FAILED || cells == MAP_FAILED || slots == MAP_FAILED || mt_text_write((uintptr_t)code, &entry, 8) < 0) {
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
			if (mt_text_write(RS.code + 8 + (size_t)c * RET_MAX * RS_STUB, code, sizeof(code)) < 0) {
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

void ret_key_init(void)
{
	if (!U.have_key)
		U.have_key = pthread_key_create(&U.stack_key, free_stack) == 0;
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

void ret_hook(struct usite *s, const ucontext_t *uc)
{
	struct ret_stack *rs = my_stack();
	uint64_t cfa, fault, sp = probe_reg(uc, MT_R_RSP);
	uintptr_t slot, ret, real, hook;
	struct ret_frame *f;
	unsigned n;

	if (!rs || recipe_eval(&s->w->cfa, uc, s->bias, &cfa, &fault) < 0)
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
		       : ret_is_stub(ret) ? RS.cells[ret_stub_index(ret)] : 0;
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
	if (ufunc_fetch(s, uc, PH_CALL, f, NULL, NULL, 0) < 0) {
		if (rs->n && &rs->f[rs->n - 1] == f)
			rs->n--;
		return;
	}
	if (rs->chunk >= 0) {   /* for unwinders (rs_eh_frame), and returns on other threads */
		RS.cells[ret_stub_index(hook)] = real;
		RS.slots[ret_stub_index(hook)] = slot;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	f->slot = slot;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*(uintptr_t *)slot = hook;
}

void ret_run(struct ret_frame *f, ucontext_t *uc)
{
	struct mt_args a;
	char strbuf[512];

	if (__atomic_load_n(&f->s->armed, __ATOMIC_ACQUIRE) &&
	    ufunc_fetch(f->s, uc, PH_RETURN, f, &a, strbuf, sizeof(strbuf)) == 0) {
		struct probe_hit h;   /* stap's uaddr() in a .return: where it returns to */
		struct store_hit sh;
		probe_enter(&h, f->real, f->real, uc);
		ufunc_store_enter(&sh, uc, f->s->bias);
		ufunc_hit(&f->s->marker, &f->s->rt, &a);
		ufunc_store_leave(&sh);
		probe_leave(&h);
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

void ret_on_tramp(ucontext_t *uc)
{
	struct ret_stack *rs = ret_stack;
	uintptr_t slot = (uintptr_t)probe_reg(uc, MT_R_RSP) - 8;
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
	ret_run(&f, uc);
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

int ret_take(size_t k, uintptr_t slot, struct ret_frame *f, uint64_t *go_on)
{
	if (RS.slots[k] != slot)
		lost_address();
	*go_on = RS.cells[k];
	if (!take_frame(k, slot, f))
		return 0;
	*go_on = f->ret;
	return 1;
}

void ret_report_lost(void)
{
	/* found late (at a later call or return of the thread): a lower bound */
	if (U.lost_returns && !__atomic_exchange_n(&U.lost_told, 1, __ATOMIC_RELAXED))
		report("at least %lu call(s) hooked by .return probes ended without a return (longjmp, an "
		       "exception, the thread's end): their return probes did not fire", U.lost_returns);
}
#endif
