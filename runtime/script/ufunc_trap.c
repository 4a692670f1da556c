/*
 * ufunc_trap.c - function probes: the ways in from the program (a
 * SIGTRAP, a jump site's stub, a return stub's call) and the handlers
 * run there (ufunc_int.h).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "ufunc_int.h"

#if defined(__x86_64__)

/*
 * The jump fast path.  Where the instruction at a probe is 5 bytes or
 * more and relocatable (insn.c: a RIP-relative operand is moved in the
 * copy), it becomes "jmp stub" (mt_text_patch(): over part of one
 * instruction, so no branch can land inside the bytes replaced; a thread
 * that comes while they change traps on the int3 written first, and
 * ufunc_trap() runs the site).  At an
 * instruction of 2 to 4 bytes near the padding between functions, "jmp
 * stub" goes into a nop of the padding and the instruction becomes a
 * 2-byte jump to it (ufunc_site.c, padding_near()).  The stub, in a page
 * within the jump's reach:
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

int trap_jumps(void)
{
	const char *env = secure_getenv("MARKTAP_UFUNC_JUMP");

	return !(env && !strcmp(env, "0")) && xsave_ready();
}

/* The handlers of an entry probe's hit. */
static void run_entry(struct usite *s, ucontext_t *uc)
{
	struct mt_args a;
	char strbuf[1024];
	struct probe_hit h;
	struct store_hit sh;

	if (ufunc_fetch(s, uc, PH_ENTRY, NULL, &a, strbuf, sizeof(strbuf)) == 0) {
		probe_enter(&h, s->addr, (uintptr_t)probe_reg(uc, MT_R_RIP), uc);
		ufunc_store_enter(&sh, uc, s->bias);
		ufunc_hit(&s->marker, &s->rt, &a);
		ufunc_store_leave(&sh);
		probe_leave(&h);
	}
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

void trap_measure_errno(void)
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
		usite_poke(addr, s0->orig);
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)addr;
		return;
	}
	for (size_t i = first; i < t->n && t->v[i]->addr == addr && trap_depth == 1; i++) {
		struct usite *s = t->v[i];
		if (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE))
			continue;
		if (s->w->ret)
			ret_hook(s, uc);
		else
			run_entry(s, uc);
	}
	if (s0->xol) {   /* run the displaced instruction from its copy */
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s0->xol;
		return;
	}
	/* step over the displaced instruction in place */
	__atomic_add_fetch(&s0->steppers, 1, __ATOMIC_ACQ_REL);
	usite_poke(addr, s0->orig);
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

/* Is a site of the run at t->v[first] (one address) armed? */
static int run_armed(const struct site_table *t, size_t first)
{
	int any = 0;

	for (size_t k = first; k < t->n && t->v[k]->addr == t->v[first]->addr; k++)
		any |= __atomic_load_n(&t->v[k]->armed, __ATOMIC_ACQUIRE);
	return any;
}

static int on_step(ucontext_t *uc)
{
	const struct site_table *t = usite_table();
	uintptr_t addr;
	size_t i;

	if (!steps.n)
		return 0;
	addr = steps.addr[--steps.n];
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TF;
	i = usite_first_at(t, addr);
	if (i < t->n && t->v[i]->addr == addr) {
		struct usite *s0 = t->v[i];
		if (__atomic_sub_fetch(&s0->steppers, 1, __ATOMIC_ACQ_REL) == 0 && run_armed(t, i)) {
			usite_poke(addr, 0xcc);
			/* ufunc_stop() may have disarmed the site and put the
			 * byte back between our look and our int3: look again
			 * after it and undo it; else the int3 outlives the
			 * session, until a thread traps there (and puts the
			 * byte back, the site disarmed) */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (!run_armed(t, i))
				usite_poke(addr, s0->orig);
		}
	}
	return 1;
}

/*
 * Is this SIGTRAP the end of one of this thread's steps?  The kernel says
 * TRAP_TRACE when the debug status register has its single-step bit; a
 * hypervisor may lose that bit (under a nested one, about one step in
 * 20000), and the kernel, reading nothing there, reports the trap as an
 * int1's: TRAP_BRKPT.  Passed on, that SIGTRAP killed the program.  So a
 * trap the kernel raised (si_code > 0: not kill() or tgkill()), not an
 * int3 (SI_KERNEL), taken with the trap flag set while this thread steps
 * is the step's: the flag is ours then, set by on_site() for the one
 * instruction.
 */
static int is_step(const siginfo_t *si, const ucontext_t *uc)
{
	if (si->si_code == TRAP_TRACE)
		return 1;
	return si->si_code > 0 && si->si_code != SI_KERNEL && steps.n && (uc->uc_mcontext.gregs[REG_EFL] & TF);
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
	const struct site_table *t = usite_table();
	ucontext_t uc;

	r->ra = addr + 1;
	if (!nested) {
		saved_errno = *err;
		/* past the slot and the red zone; where an int3 would leave it */
		regs_to_uc(&r->g, (uintptr_t)(r + 1) + 128, addr + 1, &uc);
		for (size_t i = usite_first_at(t, addr); i < t->n && t->v[i]->addr == addr; i++) {
			struct usite *s = t->v[i];
			if (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE))
				continue;
			if (s->w->ret)
				ret_hook(s, &uc);
			else
				run_entry(s, &uc);
		}
		uc_to_regs(&uc, &r->g);
		*err = saved_errno;
	}
	r->slot = s0->xol;   /* "ret $128" goes on there */
	trap_depth--;
}

/* From mt_ufunc_rtramp (a return stub's call; r->ra holds the stub +
 * 6): the return handlers of the stub's entry, then r->ra is where to
 * go on: the caller, or another probe's stub for the same call. */
void mt_ufunc_ret_fast(struct rregs *r) __attribute__((visibility("hidden"), used));
void mt_ufunc_ret_fast(struct rregs *r)
{
	size_t k = ret_stub_index(r->ra & ~(uintptr_t)7);
	uintptr_t slot = (uintptr_t)&r->ra;
	int nested = trap_depth++ > 0, saved_errno;
	int *err = my_errno();
	struct ret_frame f;
	ucontext_t uc;

	/* r->ra first, for unwinders from here on (and if the entry is gone) */
	if (ret_take(k, slot, &f, &r->ra)) {
		if (!nested) {
			saved_errno = *err;
			regs_to_uc(&r->g, slot + 8, f.real, &uc);
			ret_run(&f, &uc);
			uc_to_regs(&uc, &r->g);
			*err = saved_errno;
		}
	}
	trap_depth--;
}

/* The int3 of return stub k (the trap route): as mt_ufunc_ret_fast. */
static void on_rstub(ucontext_t *uc, size_t k)
{
	uintptr_t slot = (uintptr_t)probe_reg(uc, MT_R_RSP) - 8;
	struct ret_frame f;
	uint64_t go_on;
	int run = ret_take(k, slot, &f, &go_on);

	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)go_on;
	if (run && trap_depth == 1)
		ret_run(&f, uc);
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
	if (is_step(si, uc)) {
		ours = on_step(uc);
	} else if (si->si_code == SI_KERNEL) {
		pc = (uintptr_t)probe_reg(uc, MT_R_RIP) - 1;
		if (pc == (uintptr_t)mt_ufunc_tramp) {
			ret_on_tramp(uc);
			ours = 1;
		} else if (ret_is_stub(pc)) {
			on_rstub(uc, ret_stub_index(pc));
			ours = 1;
		} else if ((t = usite_table())->n && (i = usite_first_at(t, pc)) < t->n && t->v[i]->addr == pc) {
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
