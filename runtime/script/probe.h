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

#endif
