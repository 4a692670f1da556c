/*
 * mt_kstack.c - a hit's kernel stack and the kernel's symbols for the
 * handlers' Lua (mt_kstack.h).
 *
 * A script that calls kbacktrace() (stap's backtrace family: the tapsets'
 * context.stp) is flagged at load (mt_lua_host.c); each of its hits then
 * saves the stack before its Lua runs (mt_lua_run.c), into the state's
 * pc->kstack: the Lua runs on a stack of its own, across which the
 * unwinder does not go.  Both the addresses and the symbols tell where
 * the kernel is laid out: like kernel_string(), they are for scripts
 * loaded with CAP_SYS_ADMIN only.
 */
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_kregs.h"
#include "mt_kstack.h"
#include "lua.h"
#include "lauxlib.h"
#include "mt_klua_int.h"

typedef unsigned int (*save_regs_fn)(struct pt_regs *regs, unsigned long *store,
				     unsigned int size, unsigned int skipnr);

/* stack_trace_save_regs is not exported: kallsyms has it */
static save_regs_fn save_regs(void)
{
	static save_regs_fn fn;
	static bool looked;

	if (!READ_ONCE(looked)) {
		WRITE_ONCE(fn, (save_regs_fn)mt_ksym("stack_trace_save_regs"));
		WRITE_ONCE(looked, true);
	}
	return READ_ONCE(fn);
}

unsigned mt_kstack_save(unsigned long *e, unsigned max)
{
	unsigned long all[MT_KSTACK_MAX + 16], addr;
	struct pt_regs *regs = mt_kregs_regs(&addr);
	save_regs_fn fn = regs ? save_regs() : NULL;
	unsigned n, i;

	if (fn) {
		n = fn(regs, e, max, 0);
		if (n && addr)   /* the first is past the kprobe's breakpoint */
			e[0] = addr;
		return n;
	}
	/* from here: this function, the dispatch and the hook are ours,
	 * the first address outside marktap.ko is the probed place's */
	n = stack_trace_save(all, ARRAY_SIZE(all), 0);
	for (i = 0; i < n && within_module((unsigned long)all[i], THIS_MODULE); i++)
		;
	n -= i;
	n = min(n, max);
	memcpy(e, all + i, n * sizeof(*e));
	return n;
}

static struct mt_lua_cpu *cpu_of(lua_State *L)
{
	return mt_lua_extra(L)->cpu;
}

static void need_right(lua_State *L, const char *fn)
{
	if (!cpu_of(L)->script->may_read_memory)
		luaL_error(L, "%s: kernel addresses need CAP_SYS_ADMIN (the script was loaded "
			   "without it)", fn);
}

/* The hit's stack, "0x... 0x..." as stap's backtrace(), innermost first. */
int mt_lua_kbacktrace(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	luaL_Buffer b;
	unsigned i;

	need_right(L, "backtrace");
	luaL_buffinit(L, &b);
	for (i = 0; i < pc->kstack_n; i++) {
		char one[24];
		int n = scnprintf(one, sizeof(one), "%s0x%lx", i ? " " : "", pc->kstack[i]);

		luaL_addlstring(&b, one, n);
	}
	luaL_pushresult(&b);
	return 1;
}

/* ksym(addr): name, offset, size and module ("kernel") of the symbol
 * around addr, as the user-space runtime's rt.ksym; nothing if none. */
int mt_lua_ksym(lua_State *L)
{
	unsigned long addr = (unsigned long)luaL_checkinteger(L, 1);
	char buf[KSYM_SYMBOL_LEN], *plus, *slash, *mod;
	unsigned long off, size;

	need_right(L, "symname");
	sprint_symbol(buf, addr);   /* "name+0xoff/0xsize [module]", or the address */
	plus = strrchr(buf, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!plus || !slash)
		return 0;
	*plus = '\0';
	*slash = '\0';
	mod = strchr(slash + 1, ' ');
	if (mod)
		*mod++ = '\0';
	if (kstrtoul(plus + 1, 16, &off) || kstrtoul(slash + 1, 16, &size))
		return 0;
	lua_pushstring(L, buf);
	lua_pushinteger(L, (lua_Integer)off);
	lua_pushinteger(L, (lua_Integer)size);
	if (mod && mod[0] == '[') {
		mod++;
		mod[strcspn(mod, "]")] = '\0';
		lua_pushstring(L, mod);
	} else {
		lua_pushliteral(L, "kernel");
	}
	return 4;
}
