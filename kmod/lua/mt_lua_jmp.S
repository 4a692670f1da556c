/*
 * mt_lua_jmp.S - setjmp/longjmp for Lua's errors in marktap.ko (x86-64),
 * and the switch to a state's own stack for a hit's run.
 *
 * Lua raises errors by longjmp to the lua_pcall that protects the call
 * (ldo.c, LUAI_TRY/LUAI_THROW in kinc/mt_lua_kernel.h).  The buffer keeps
 * what the SysV ABI says a callee preserves: rbx, rbp, r12-r15, the stack
 * pointer after our return, and the return address.  Nothing else: the
 * kernel uses no FPU/SSE state here, and no signal mask exists.
 *
 * longjmp pushes the return address and returns (RET: the kernel's return
 * thunk under RETHUNK) instead of an indirect jump.  objtool cannot follow
 * a stack switch, so kbuild skips it for this file
 * (OBJECT_FILES_NON_STANDARD in Kbuild).
 */
#include <linux/linkage.h>
#include <asm/asm.h>

	.text
SYM_FUNC_START(mt_lua_setjmp)
	movq %rbx, 0(%rdi)
	movq %rbp, 8(%rdi)
	movq %r12, 16(%rdi)
	movq %r13, 24(%rdi)
	movq %r14, 32(%rdi)
	movq %r15, 40(%rdi)
	leaq 8(%rsp), %rdx        /* the caller's stack pointer after ret */
	movq %rdx, 48(%rdi)
	movq (%rsp), %rdx         /* where setjmp returns */
	movq %rdx, 56(%rdi)
	xorl %eax, %eax
	RET
SYM_FUNC_END(mt_lua_setjmp)

SYM_FUNC_START(mt_lua_longjmp)
	movl %esi, %eax
	testl %eax, %eax
	jnz 1f
	incl %eax                 /* longjmp(b, 0) returns 1, as C's */
1:	movq 0(%rdi), %rbx
	movq 8(%rdi), %rbp
	movq 16(%rdi), %r12
	movq 24(%rdi), %r13
	movq 32(%rdi), %r14
	movq 40(%rdi), %r15
	movq 48(%rdi), %rsp
	pushq 56(%rdi)
	RET
SYM_FUNC_END(mt_lua_longjmp)

/*
 * void mt_lua_on_stack(void *arg, void *top): mt_lua_run_hit(arg) (a hit's
 * run, kmod/mt_lua_run.c) on the stack whose top (16-byte aligned) is
 * top, then back on the caller's stack.  A direct call: no indirect
 * branch for the kernel's mitigations to wrap.  rbp keeps the caller's
 * stack pointer (callee-saved: the C we call keeps it).  Nothing unwinds
 * across the switch: a Lua error is caught by the protected call inside.
 */
SYM_FUNC_START(mt_lua_on_stack)
	pushq %rbp
	movq %rsp, %rbp
	movq %rsi, %rsp
	call mt_lua_run_hit       /* rdi: arg, as given */
	movq %rbp, %rsp
	popq %rbp
	RET
SYM_FUNC_END(mt_lua_on_stack)
