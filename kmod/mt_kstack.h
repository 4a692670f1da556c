/*
 * mt_kstack.h - the kernel stack of a hit, for stap's backtrace(),
 * print_backtrace() and the symbol functions (symname, symdata) in
 * handlers that run in marktap.ko (mt_kstack.c).
 */
#ifndef MT_KSTACK_H
#define MT_KSTACK_H

#define MT_KSTACK_MAX 32   /* frames kept of a hit's stack */

struct lua_State;

/*
 * The return addresses of the current hit, innermost first, into e (at
 * most max): from a kernel function probe's registers where the hit has
 * them (mt_kregs.h), else from here with marktap.ko's own frames (the
 * hook, the dispatch) left out, so that the first is the probed place's
 * caller chain.  Called on the stack the marker fired on, before the
 * handler's Lua runs on its state's own (the unwinder stops there).
 */
unsigned mt_kstack_save(unsigned long *e, unsigned max);

/* Lua: kbacktrace() the hit's stack as stap's backtrace() gives it,
 * ksym(addr) the symbol around addr (name, offset, size, module). */
int mt_lua_kbacktrace(struct lua_State *L);
int mt_lua_ksym(struct lua_State *L);

#endif
