/*
 * sdt.h - handlers at the <sys/sdt.h> probes of a program that does not use
 * libmarktap (marktap -c preloads libmarktap into it).
 *
 * Each probe site is a one-byte nop; sdt.c replaces the nops of the probes
 * the script wants with int3 and runs the handlers from the SIGTRAP that
 * follows, with the arguments decoded from the note's operands (registers
 * and memory of the interrupted code).  The trap leaves the program counter
 * after the int3, where the nop ended: the program goes on as if nothing
 * happened.  Semaphores (probes guarded by PROVIDER_NAME_ENABLED()) are
 * raised while armed.
 */
#ifndef MT_SCRIPT_SDT_H
#define MT_SCRIPT_SDT_H

#include <sys/types.h>
#include "mt_event.h"
#include "mt_lib.h"

/* Is (provider, name) of the object (dev, ino) wanted?  m and rt describe
 * the site (name, and a format "arg1 %ld ..." of its arguments); the host
 * sets rt->script and returns 1 when a handler runs there. */
typedef int (*sdt_attach_fn)(struct mt_marker *m, struct mt_marker_rt *rt, const char *provider,
			     dev_t dev, ino_t ino);
/* A hit: the arguments as longs in a->v[i].u. */
typedef void (*sdt_hit_fn)(struct mt_marker *m, struct mt_marker_rt *rt, const struct mt_args *a);
typedef void (*sdt_error_fn)(const char *msg);

/* Arm the wanted probes of every loaded object not read before (call it
 * again to find the libraries dlopen'ed since, and forget those closed);
 * the number armed by this call. */
int sdt_start(sdt_attach_fn attach, sdt_hit_fn hit, sdt_error_fn error);
/* Put the nops back and lower the semaphores; traps still on their way
 * are recognised and ignored. */
void sdt_stop(void);

#if defined(__x86_64__)
#include <stdint.h>
#include <ucontext.h>
#include "mt_sdt.h"

/* Register r (MT_R_*, the numbering SDT operands and function probes'
 * recipes use) of an interrupted context: the trap paths of sdt.c and
 * ufunc_recipe.c read operands and recipes with it. */
static inline uint64_t mt_trap_reg(const ucontext_t *uc, int r)
{
	static const int greg_of[MT_R_COUNT] = {
		[MT_R_RAX] = REG_RAX, [MT_R_RDX] = REG_RDX, [MT_R_RCX] = REG_RCX,
		[MT_R_RBX] = REG_RBX, [MT_R_RSI] = REG_RSI, [MT_R_RDI] = REG_RDI,
		[MT_R_RBP] = REG_RBP, [MT_R_RSP] = REG_RSP, [MT_R_R8] = REG_R8,
		[MT_R_R9] = REG_R9, [MT_R_R10] = REG_R10, [MT_R_R11] = REG_R11,
		[MT_R_R12] = REG_R12, [MT_R_R13] = REG_R13, [MT_R_R14] = REG_R14,
		[MT_R_R15] = REG_R15, [MT_R_RIP] = REG_RIP,
	};

	return (uint64_t)uc->uc_mcontext.gregs[greg_of[r]];
}
#endif

#endif
