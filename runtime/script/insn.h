/*
 * insn.h - which x86-64 instructions may run away from their address.
 *
 * A function probe displaces the first byte of an instruction with int3;
 * ufunc_site.c then runs that instruction from a copy ("out of line") followed
 * by a jump back, so that no thread ever sees the original byte missing.
 * That is right for an instruction whose effect does not depend on where
 * it is (no jump, call or return), and for one with a RIP-relative operand
 * once its displacement is moved by the distance of the copy.  This
 * decoder knows a conservative list of such instructions (what compilers
 * put at the entry of functions and after their prologues) and their
 * length; anything else is "unknown", and ufunc_trap.c steps over it in place.
 */
#ifndef MT_SCRIPT_INSN_H
#define MT_SCRIPT_INSN_H

#include <stddef.h>
#include <stdint.h>

/* The length of the instruction at code[0 .. avail) if it may run out of
 * line, else 0. */
unsigned insn_relocatable_len(const unsigned char *code, size_t avail);

/* The same, RIP-relative operands too: *rip_disp is then the offset of
 * their 4 displacement bytes in the instruction (counted from its end,
 * so a copy elsewhere needs them moved), else 0. */
unsigned insn_decode(const unsigned char *code, size_t avail, unsigned *rip_disp);

/* Transfers of control a copy can redo: ret (runs as it is), jmp, jcc
 * and call with a relative target (rel from the end of the instruction;
 * the copy aims at the same target, and a call pushes the original's
 * return address), and a PLT entry's "[bnd] jmp *disp32(%rip)" (the copy
 * reads the same GOT slot: rel is the displacement, at rip_disp).  No
 * other prefixes but repz ret. */
enum insn_kind { INSN_RET = 1, INSN_JMP, INSN_JCC, INSN_CALL, INSN_JMP_RIP };
struct insn_branch {
	unsigned len;
	enum insn_kind kind;
	unsigned char cc;       /* INSN_JCC: the condition, 0-15 */
	unsigned char rip_disp; /* INSN_JMP_RIP: where its displacement is */
	int32_t rel;
};
/* Its length (b filled), or 0. */
int insn_branch(const unsigned char *code, size_t avail, struct insn_branch *b);

/* Is code[0 .. len), one instruction, a nop (90, 0f 1f /0, with 66 and
 * 2e prefixes: what assemblers pad with)? */
int insn_is_nop(const unsigned char *code, unsigned len);

#endif
