/*
 * probe.c - what the trap paths of SDT and function probes share (probe.h).
 */
#define _GNU_SOURCE /* probe.h: ucontext_t's REG_* */
#include <stdarg.h>
#include <stdio.h>
#include "probe.h"
#include "text.h"

static __thread struct probe_hit *current __attribute__((tls_model("initial-exec")));

void probe_enter(struct probe_hit *h, uintptr_t pc, uintptr_t ip, const void *uc)
{
	h->pc = pc;
	h->ip = ip;
	h->uc = uc;
	h->outer = current;
	current = h;
}

void probe_leave(struct probe_hit *h)
{
	current = h->outer;
}

const struct probe_hit *probe_current(void)
{
	return current;
}

void probe_report(void (*error)(const char *msg), const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (error)
		error(msg);
}

/* Once: code patched the old way (text.h), and why. */
void probe_text_fallback_told(void (*error)(const char *msg))
{
	const char *why = mt_text_fallback();

	if (why)
		probe_report(error, "%s: probes patch code with its page writable and executable "
			     "for the write", why);
}
