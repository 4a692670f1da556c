/*
 * text.h - writing the process's own code without a writable and
 * executable page (W^X).
 *
 * Probes patch code: an int3, a jump to a stub, the bytes put back.  The
 * writes go through /proc/self/mem: the kernel writes into the private
 * mapping (breaking its copy-on-write) without changing its protection,
 * so no page of the program is ever mapped writable and executable, not
 * even for an instant (what a W^X policy, or a scanner reading
 * /proc/PID/maps, would catch).  Where /proc/self/mem cannot be opened
 * or written (no /proc, a kernel booted with proc_mem.force_override=never),
 * the page is made writable for the write and executable again after,
 * and mt_text_fallback() says why, once.
 *
 * Every function is async-signal-safe (raw system calls): traps write
 * code from the SIGTRAP handler, and a script may probe libc's own
 * functions.  A child after fork opens its own descriptor (the parent's
 * writes the parent).
 */
#ifndef MT_SCRIPT_TEXT_H
#define MT_SCRIPT_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* n bytes at addr, in one write: 0, or -1 with errno.  Only a single byte
 * is promised to be one store: the kernel may copy more in pieces (a
 * thread running them meanwhile could run a mix of old and new bytes:
 * patched marker sites, which threads run all the time, died of SIGILL
 * that way, and now switch by one byte). */
int mt_text_write(uintptr_t addr, const void *bytes, size_t n);

/* The n first bytes of one instruction at addr replaced by bytes (a jump,
 * or the instruction put back), as the kernel patches its own text: an
 * int3 first, every core serialised, the other bytes, again, the first
 * byte.  A thread that comes meanwhile traps, so the caller's SIGTRAP
 * handler must know the address (a probe's site); no thread ever runs a
 * mix of old and new bytes.  0 or -1. */
int mt_text_patch(uintptr_t addr, const unsigned char *bytes, size_t n);

/* Every thread of the process has serialised its instruction stream
 * (membarrier SYNC_CORE): none runs code decoded before the last write. */
void mt_text_sync(void);

/* A system call without libc (its functions may be probed): the result,
 * or -errno. */
long mt_syscall6(long nr, long a, long b, long c, long d, long e, long f);

/* Why code is written with the page briefly writable and executable,
 * the first time it is (then NULL): for a warning. */
const char *mt_text_fallback(void);

#endif
