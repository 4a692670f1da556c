/*
 * probe.h - what the trap paths of SDT and function probes share, below
 * them and below what their handlers call.
 *
 * The trap paths (sdt.c, ufunc_trap.c, ufunc_return.c) say around each
 * hit where the probe is; the functions a handler calls (usym.c: uaddr(),
 * ubacktrace()) read it.  Their messages go to the host's error callback,
 * formatted here.
 */
#ifndef MT_SCRIPT_PROBE_H
#define MT_SCRIPT_PROBE_H

#include <stdint.h>
#include <sys/types.h>
#include "mt_event.h"
#include "mt_lib.h"

/* A hit at probe address pc whose trapped context resumes at ip; nests.
 * With its registers (uc: a ucontext_t whose rip is pc), backtraces
 * unwind from them, without the handler's own frames. */
struct probe_hit {
	uintptr_t pc, ip;
	const void *uc;
	struct probe_hit *outer;
};
void probe_enter(struct probe_hit *h, uintptr_t pc, uintptr_t ip, const void *uc);
void probe_leave(struct probe_hit *h);
/* The hit this thread runs a handler for, or NULL. */
const struct probe_hit *probe_current(void);

/* A message of a trap path to the host's error callback, if any. */
void probe_report(void (*error)(const char *msg), const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The first time code was patched with its page writable and executable
 * (text.h): a warning saying why. */
void probe_text_fallback_told(void (*error)(const char *msg));

/* The host's callbacks, for SDT probes (sdt.c) and function probes
 * (ufunc.c) alike.  Is (provider, name) of the object (dev, ino) wanted?  m and rt describe
 * the site (name, and a format "arg1 %ld ..." of its arguments); the host
 * sets rt->script and returns 1 when a handler runs there. */
typedef int (*probe_attach_fn)(struct mt_marker *m, struct mt_marker_rt *rt, const char *provider,
			       dev_t dev, ino_t ino);
/* A hit: the arguments as longs in a->v[i].u. */
typedef void (*probe_hit_fn)(struct mt_marker *m, struct mt_marker_rt *rt, const struct mt_args *a);
typedef void (*probe_error_fn)(const char *msg);

#if defined(__x86_64__)
#include <ucontext.h>
#include "mt_sdt.h"

/* Register r (MT_R_*, the numbering SDT operands and function probes'
 * recipes use) of an interrupted context: the trap paths read SDT operands
 * and function probes' recipes with it. */
static inline uint64_t probe_reg(const ucontext_t *uc, int r)
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
