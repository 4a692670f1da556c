/*
 * usym.h - user-space addresses, symbols and backtraces for the handlers
 * of function and SDT probes: uaddr(), usymname(), umodname(), usymdata(),
 * ubacktrace(), print_ubacktrace() (tapsets/ucontext.stp).
 *
 * The trap handlers (ufunc.c, sdt.c) say where the probe is around each
 * hit; the Lua functions read it.  Backtraces unwind from the probe's
 * registers with the call frame information of .eh_frame (usym.c), else
 * from the handler with glibc's backtrace() (libgcc's unwinder, which goes
 * through signal frames), keeping the frames past the probe's; symbols
 * come from each object's .symtab (else .dynsym), read from its file the
 * first time one of its addresses is asked for.  Plain C, no DWARF.
 */
#ifndef MT_SCRIPT_USYM_H
#define MT_SCRIPT_USYM_H

#include <stdint.h>
#include <lua.h>

/* A hit at probe address pc whose trapped context resumes at ip; nests.
 * With its registers (usym_enter_regs: a ucontext_t whose rip is pc),
 * backtraces unwind from them, without the handler's own frames. */
struct usym_hit {
	uintptr_t pc, ip;
	const void *uc;
	struct usym_hit *outer;
};
void usym_enter(struct usym_hit *h, uintptr_t pc, uintptr_t ip);
void usym_enter_regs(struct usym_hit *h, uintptr_t pc, uintptr_t ip, const void *uc);
void usym_leave(struct usym_hit *h);

/* rt.uaddr, rt.usymname, rt.umodname, rt.usymdata, rt.ubacktrace,
 * rt.sprint_ubacktrace in the state's "mtrt" table; and rt.ustore,
 * guru mode's writes to a function probe's variables (ufunc_store). */
void usym_register(lua_State *L);

#endif
