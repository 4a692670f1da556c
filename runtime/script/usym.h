/*
 * usym.h - user-space addresses, symbols and backtraces for the handlers
 * of function and SDT probes: uaddr(), usymname(), umodname(), usymdata(),
 * ubacktrace(), print_ubacktrace() (tapsets/ucontext.stp).
 *
 * The trap paths (sdt.c, ufunc_trap.c, ufunc_return.c) say where the probe
 * is around each hit (probe.h); the Lua functions read it.  Backtraces unwind from the probe's
 * registers with the call frame information of .eh_frame (usym.c), else
 * from the handler with glibc's backtrace() (libgcc's unwinder, which goes
 * through signal frames), keeping the frames past the probe's; symbols
 * come from each object's .symtab (else .dynsym), read from its file the
 * first time one of its addresses is asked for.  Plain C, no DWARF.
 */
#ifndef MT_SCRIPT_USYM_H
#define MT_SCRIPT_USYM_H

#include <lua.h>

/* rt.uaddr, rt.usymname, rt.umodname, rt.usymdata, rt.ubacktrace,
 * rt.sprint_ubacktrace in the state's "mtrt" table; and rt.ustore,
 * guru mode's writes to a function probe's variables (ufunc_store). */
void usym_register(lua_State *L);

#endif
