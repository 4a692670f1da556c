/*
 * ufunc.h - handlers at the functions of a program: process("P").function("F")
 * and .function("F").return (marktap resolves them with libdw, translator/dwarf.c).
 *
 * marktap sends, per probe, the function's address after its prologue and
 * a recipe per value the handler reads (translator/dwarf.c describes them);
 * this side reads no DWARF.  Where the instruction at that address is 5
 * bytes or more and relocatable, it becomes a jump to a stub that runs the
 * handlers and a copy of the instruction, without a signal (ufunc_trap.c, "The
 * jump fast path").  Elsewhere the first byte of the instruction becomes
 * int3.  At the trap the recipes run on the interrupted
 * registers, the handler runs, and the displaced instruction is executed
 * in place: the byte goes back, the trap flag steps over the instruction,
 * and the debug trap that follows puts the int3 back.  While a thread steps
 * over it, other threads run the original instruction: their hits at that
 * moment are missed (counted), never wrong.
 *
 * .return: at the same address the return address (found below the call
 * frame address, which marktap's recipe gives) is saved on a per-thread
 * shadow stack and replaced by a stub of the thread's own, one per
 * shadow entry; returning into it calls the return handler with the
 * caller's registers ($return in rax) and goes on to the saved address,
 * without a signal (an int3 in the stub with MARKTAP_UFUNC_JUMP=0).  The
 * stubs have call frame information naming the saved address, so that
 * C++ exceptions and thread cancellation unwind through hooked calls.  A
 * call left by longjmp or an exception never returns: its entry is
 * dropped (and counted) when a later call or return shows it is gone.
 * Not supported (documented in marktap(1)): stack switching
 * (swapcontext) between the call and the return, where calls on the
 * other stack take the entry (stopped with a message).
 *
 * The files, by concept: ufunc_int.h.
 */
#ifndef MT_SCRIPT_UFUNC_H
#define MT_SCRIPT_UFUNC_H

#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include "probe.h"

/* Manifest lines "func NAME e|r 0xADDR PATH CFA..." and "fvar NAME K RECIPE"
 * (translator/session.c): 0, or -1 for a malformed line or no memory. */
int ufunc_want(const char *line);
int ufunc_field(const char *line);

/* sdt.c's scan: arm the wanted functions of this object (its link-time
 * addresses plus info's bias); attach as probe_attach_fn.  Armed count. */
int ufunc_object(struct dl_phdr_info *info, const struct stat *st, probe_attach_fn attach,
		 probe_hit_fn hit, probe_error_fn error);
/* sdt.c's SIGTRAP handler: 1 if the trap was ours. */
int ufunc_trap(siginfo_t *si, void *ctx);
/* Put the original bytes back (sdt_stop); returns keep their trampoline. */
void ufunc_stop(void);
/* Around a backtrace of the calling thread: its frames hooked by .return
 * probes show their real return addresses, then the trampoline again. */
void ufunc_unhook_frames(void);
void ufunc_rehook_frames(void);
/* Around the host's own work on a thread (sdt.c's scans): traps there
 * run no handler (libc calls of marktap's, not the program's); nests. */
void ufunc_host_code(int enter);
/* Guru mode's $var = v in a handler of this thread's hit (rt.ustore,
 * usym.c): spec "m SIZE RECIPE" writes SIZE bytes at the recipe's
 * address where the program may write, "r SIZEs N" or "r SIZEu N"
 * register N of the hit, which the function resumes with, the value
 * extended as signed or unsigned (translator/dwarf.c, tr_dw_store).
 * 0, or -1 with stap's words in err. */
int ufunc_store(const char *spec, int64_t v, char *err, size_t cap);
/* An object unloaded: its sites are never touched again. */
void ufunc_forget(uintptr_t base, dev_t dev, ino_t ino);

#endif
