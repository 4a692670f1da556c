/*
 * mt_lua_lib.c - what a Lua state in marktap.ko offers a script.
 *
 * Lua's base (without load, loadfile, dofile: a script cannot compile
 * more code, and Lua's binary chunks are never loaded), string and table
 * libraries, an integer math table, and stap's context functions read
 * from `current` at the hit: pid() tid() ppid() uid() euid() gid() egid()
 * execname() cpu(), the clocks, kernel_string()/user_string() (a bad
 * address is a handler error, never a fault), pid2execname(), exit().
 * printf()/print() write to the CPU's output (mt_lua_cpu.c).
 *
 * probe(marker, fn) binds fn to a kernel marker: the handler gets the
 * marker's name, its format and then its arguments, in the format's order
 * (the same call as marktap's handlers of recorded events).
 */
#include <linux/cred.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <asm/syscall.h>
#include <asm/timex.h>
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "mt_klua_int.h"
#include "mt_kregs.h"
#include "mt_kstack.h"
#include "mt_ktask.h"
#include "mt_krt_lua.h"   /* generated from mt_krt.lua (Makefile) */
#include "mt_rt_lua.h"   /* and from runtime/lua/mt_rt.lua */

#define current get_current()   /* lua.h took the kernel's away (mt_lua_kernel.h) */

static struct mt_lua_cpu *cpu_of(lua_State *L)
{
	return mt_lua_extra(L)->cpu;
}

static int l_out(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);

	luai_chargebytes(L, n);   /* the copy into the ring: the run's budget */
	mt_lua_out(cpu_of(L), s, n);
	return 0;
}

/* __mt_nest(max): enter a script function; true when past max (stap's
 * MAXNESTING).  The depth lives in C so that a hit resets it with a store
 * (it stays high after an error unwound the calls). */
static int l_nest(lua_State *L)
{
	struct mt_lua_extra *x = mt_lua_extra(L);

	if (x->depth >= luaL_checkinteger(L, 1)) {
		lua_pushboolean(L, 1);
		return 1;
	}
	x->depth++;
	return 0;
}

static int l_unnest(lua_State *L)
{
	struct mt_lua_extra *x = mt_lua_extra(L);

	if (x->depth > 0)
		x->depth--;
	return 0;
}

/* __mt_nesting(): the depth; __mt_nesting(d): back to d (a try statement
 * left by an error: the calls it unwound did not unnest) */
static int l_nesting(lua_State *L)
{
	struct mt_lua_extra *x = mt_lua_extra(L);
	lua_Integer d;

	if (lua_isnoneornil(L, 1)) {
		lua_pushinteger(L, x->depth);
		return 1;
	}
	d = luaL_checkinteger(L, 1);
	if (d >= 0 && d <= x->depth)
		x->depth = (int)d;
	return 0;
}

static int l_pid(lua_State *L) { lua_pushinteger(L, task_tgid_nr(current)); return 1; }
static int l_tid(lua_State *L) { lua_pushinteger(L, task_pid_nr(current)); return 1; }
static int l_cpu(lua_State *L) { lua_pushinteger(L, raw_smp_processor_id()); return 1; }

static int l_ppid(lua_State *L)
{
	pid_t p;

	rcu_read_lock();
	p = task_tgid_nr(rcu_dereference(current->real_parent));
	rcu_read_unlock();
	lua_pushinteger(L, p);
	return 1;
}

/* credentials as the initial user namespace numbers them, like stap */
static int l_uid(lua_State *L) { lua_pushinteger(L, from_kuid(&init_user_ns, current_uid())); return 1; }
static int l_euid(lua_State *L) { lua_pushinteger(L, from_kuid(&init_user_ns, current_euid())); return 1; }
static int l_gid(lua_State *L) { lua_pushinteger(L, from_kgid(&init_user_ns, current_gid())); return 1; }
static int l_egid(lua_State *L) { lua_pushinteger(L, from_kgid(&init_user_ns, current_egid())); return 1; }

static int push_comm(lua_State *L, const struct task_struct *t)
{
	char comm[TASK_COMM_LEN];

	/* no task_lock: a hit may come from an interrupt; a racing rename
	 * gives a mix of the two names, as stap's execname() can */
	memcpy(comm, t->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	lua_pushstring(L, comm);
	return 1;
}

static int l_execname(lua_State *L)
{
	char comm[TASK_COMM_LEN];

	/* as push_comm, through the state's last name: a hit of the same
	 * task (or a task of the same name) makes no string */
	memcpy(comm, current->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	return mt_lua_push_name(L, &cpu_of(L)->name, comm);
}

static int l_pid2execname(lua_State *L)
{
	lua_Integer pid = luaL_checkinteger(L, 1);
	struct task_struct *t;

	rcu_read_lock();
	t = pid > 0 && pid <= INT_MAX ? pid_task(find_vpid((pid_t)pid), PIDTYPE_PID) : NULL;
	if (t)
		push_comm(L, t);
	else
		lua_pushliteral(L, "");
	rcu_read_unlock();
	return 1;
}

/* Tapsets use these for the other task of an event (ctxswitch's next, a
 * signal's target): in user space they read /proc when the handler runs,
 * here the answer is the one at the hit (mt_task_of, mt_ktask.c). */
static int l_task_execname(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	struct task_struct *t;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	if (t)
		push_comm(L, t);
	else
		lua_pushliteral(L, "");
	rcu_read_unlock();
	return 1;
}

static int l_task_tgid(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	struct task_struct *t;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	lua_pushinteger(L, t ? (lua_Integer)task_tgid_nr(t) : -1);
	rcu_read_unlock();
	return 1;
}

/* task_ids(tid): the task's uid, euid, gid and egid, as /proc/TID/status
 * gives them to marktap (the initial namespace's); -1 each for a task
 * gone.  No memory of the script's choosing is read: the group's too. */
static int l_task_ids(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	lua_Integer id[4] = { -1, -1, -1, -1 };
	struct task_struct *t;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	if (t) {
		const struct cred *c = __task_cred(t);   /* rcu keeps it */

		id[0] = from_kuid_munged(&init_user_ns, c->uid);
		id[1] = from_kuid_munged(&init_user_ns, c->euid);
		id[2] = from_kgid_munged(&init_user_ns, c->gid);
		id[3] = from_kgid_munged(&init_user_ns, c->egid);
	}
	rcu_read_unlock();
	for (int i = 0; i < 4; i++)
		lua_pushinteger(L, id[i]);
	return 4;
}

static int l_time_ns(lua_State *L) { lua_pushinteger(L, ktime_get_real_fast_ns()); return 1; }
static int l_time_us(lua_State *L) { lua_pushinteger(L, ktime_get_real_fast_ns() / 1000); return 1; }
static int l_time_ms(lua_State *L) { lua_pushinteger(L, ktime_get_real_fast_ns() / 1000000); return 1; }
static int l_time_s(lua_State *L) { lua_pushinteger(L, ktime_get_real_fast_ns() / 1000000000); return 1; }
static int l_local_clock_ns(lua_State *L) { lua_pushinteger(L, local_clock()); return 1; }
static int l_hz(lua_State *L) { lua_pushinteger(L, HZ); return 1; }
static int l_get_cycles(lua_State *L) { lua_pushinteger(L, (lua_Integer)get_cycles()); return 1; }

/* A memory read's error in stap's words, without Lua's position (luaL_error
 * would name the line of the generated Lua that called us). */
static int read_error(lua_State *L, const char *msg)
{
	lua_pushstring(L, msg);
	return lua_error(L);
}

/*
 * A string at addr, cut at maxlen bytes (at most MAXSTRINGLEN - 1), read
 * page by page without faulting: an unreadable byte before the end of the
 * string is stap's copy fault error.
 */
static int read_string(lua_State *L, int user)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	u64 addr = (u64)luaL_checkinteger(L, 1);
	lua_Integer max = luaL_optinteger(L, 2, pc->script->maxstringlen - 1);
	size_t len = (size_t)clamp_t(lua_Integer, max, 0, pc->script->maxstringlen - 1);
	size_t done = 0;

	if (!pc->script->may_read_memory)
		return read_error(L, user ? "user_string: reading memory needs CAP_SYS_ADMIN "
					    "(the script was loaded without it)" :
				      "kernel_string: reading memory needs CAP_SYS_ADMIN "
				      "(the script was loaded without it)");

	while (done < len) {
		u64 at = addr + done;
		size_t chunk = min_t(size_t, PAGE_SIZE - (at & (PAGE_SIZE - 1)), len - done);
		long rc = user ? copy_from_user_nofault(pc->scratch + done, (const void __user *)at, chunk)
			       : copy_from_kernel_nofault(pc->scratch + done, (const void *)at, chunk);
		char *nul;

		if (rc) {
			char msg[80];   /* lua_pushfstring knows no %llx */

			/* stap's text for the kernel: the string's address as
			 * its runtime prints a pointer, and the man page */
			if (user)
				snprintf(msg, sizeof(msg), "user string copy fault at 0x%llx",
					 (unsigned long long)at);
			else
				snprintf(msg, sizeof(msg), "kernel string copy fault at 0x%016llx "
					 "[man error::fault]", (unsigned long long)addr);
			return read_error(L, msg);
		}
		nul = memchr(pc->scratch + done, '\0', chunk);
		if (nul) {
			done = (size_t)(nul - pc->scratch);
			break;
		}
		done += chunk;
	}
	lua_pushlstring(L, pc->scratch, done);
	return 1;
}

/* addr_to_node(addr): the NUMA node of the memory at addr, a kernel
 * address of the direct map, or the current task's user address when
 * its page is present (the lookup that neither sleeps nor faults); an
 * error otherwise.  (stap's takes __pa() of any address, meaningless
 * for a user one.)  Root's, as kernel_read's: the answer tells which
 * addresses the direct map holds and which pages another user's
 * process has present. */
static int l_addr_to_node(lua_State *L)
{
	unsigned long addr = (unsigned long)luaL_checkinteger(L, 1);
	struct page *page;
	char where[24];

	if (!cpu_of(L)->script->may_read_memory)
		return read_error(L, "addr_to_node: it needs CAP_SYS_ADMIN (the script was loaded without it)");
	if (virt_addr_valid((void *)addr)) {   /* (no read: the page's own node) */
		lua_pushinteger(L, page_to_nid(virt_to_page((void *)addr)));
		return 1;
	}
	if (addr < TASK_SIZE && current->mm && get_user_page_fast_only(addr & PAGE_MASK, 0, &page)) {
		int nid = page_to_nid(page);
		put_page(page);
		lua_pushinteger(L, nid);
		return 1;
	}
	snprintf(where, sizeof(where), "0x%lx", addr);
	lua_pushfstring(L, "addr_to_node: no page at %s (a kernel address outside the direct map, or a "
			"user page not present)", where);
	return lua_error(L);
}

/* task_addr(task): the task_struct's address of a task value (a thread
 * id, marktap's tasks; an address passes as it is), for @cast(task,
 * "task_struct")->m: what the reads then take is the script's to read
 * only with CAP_SYS_ADMIN, as kernel_read's.  An error for no such task. */
static int l_task_addr(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	lua_Integer task = luaL_checkinteger(L, 1);
	struct task_struct *t;

	if (!pc->script->may_read_memory)
		return read_error(L, "@cast(task, \"task_struct\"): reading memory needs CAP_SYS_ADMIN "
				  "(the script was loaded without it)");
	if (task < 0)   /* a kernel address */
		return 1;
	rcu_read_lock();
	t = mt_task_of(task);
	rcu_read_unlock();
	if (!t)
		return luaL_error(L, "@cast(task, \"task_struct\"): no task %d", (int)task);
	lua_pushinteger(L, (lua_Integer)(uintptr_t)t);
	return 1;
}

/* What kernel_read and user_read copied: 1, 2, 4 or 8 bytes as an
 * integer, sign-extended when signed */
union mt_read { u8 b; u16 h; u32 w; u64 d; };

static int push_read(lua_State *L, const union mt_read *v, lua_Integer size, int sign)
{
	lua_Integer r;

	switch (size) {
	case 1: r = sign ? (s8)v->b : v->b; break;
	case 2: r = sign ? (s16)v->h : v->h; break;
	case 4: r = sign ? (s32)v->w : v->w; break;
	default: r = (lua_Integer)v->d;
	}
	lua_pushinteger(L, r);
	return 1;
}

/*
 * kernel_read(addr, size, signed): the size (1, 2, 4 or 8) bytes at a
 * kernel address as an integer, sign-extended if signed; the reads
 * translator/btf.c compiles $p->member and @cast into.  Without faulting:
 * an unreadable address is stap's kernel read fault error.
 */
static int l_kernel_read(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	u64 addr = (u64)luaL_checkinteger(L, 1);
	lua_Integer size = luaL_checkinteger(L, 2);
	int sign = lua_toboolean(L, 3);
	union mt_read v;

	if (!pc->script->may_read_memory)
		return read_error(L, "kernel_read: reading memory needs CAP_SYS_ADMIN "
				  "(the script was loaded without it)");
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return luaL_error(L, "kernel_read: size %d (1, 2, 4 or 8)", (int)size);
	if (copy_from_kernel_nofault(&v, (const void *)(uintptr_t)addr, (size_t)size)) {
		char msg[48];   /* lua_pushfstring knows no %llx */
		const char *where = lua_tostring(L, 4);

		snprintf(msg, sizeof(msg), "kernel read fault at 0x%llx", (unsigned long long)addr);
		/* stap's text, without Lua's position: the place is where */
		lua_pushfstring(L, "%s%s%s", msg, where ? " near " : "", where ? where : "");
		return lua_error(L);
	}
	return push_read(L, &v, size, sign);
}

/*
 * user_read(addr, size, signed [, what]): the size (1, 2, 4 or 8) bytes
 * at an address of the current task's user memory as an integer, as
 * marktap's rt.user_read (stap's user_int and kin: a system call's
 * struct sockaddr).  Without faulting: a page not present is stap's
 * "user WHAT copy fault" error, which the tapset's user_int turns into 0.
 * Root's, as user_string.
 */
static int l_user_read(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	u64 addr = (u64)luaL_checkinteger(L, 1);
	lua_Integer size = luaL_checkinteger(L, 2);
	int sign = lua_toboolean(L, 3);
	union mt_read v;

	if (!pc->script->may_read_memory)
		return read_error(L, "user_read: reading memory needs CAP_SYS_ADMIN "
				  "(the script was loaded without it)");
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return luaL_error(L, "user_read: size %d is not 1, 2, 4 or 8", (int)size);
	if (!addr || copy_from_user_nofault(&v, (const void __user *)(uintptr_t)addr, (size_t)size)) {
		char msg[80];   /* lua_pushfstring knows no %llx */

		snprintf(msg, sizeof(msg), "user %s copy fault at 0x%llx", luaL_optstring(L, 4, "long"),
			 (unsigned long long)addr);
		return read_error(L, msg);
	}
	return push_read(L, &v, size, sign);
}

/*
 * user_bytes(addr, n): up to n bytes (at most the scratch buffer's) of the
 * current task's user memory, read page by page without faulting: fewer
 * than n say where the memory stopped (stap's buffers and wide strings,
 * as marktap's rt.user_bytes).  Root's, as user_string.
 */
static int l_user_bytes(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	u64 addr = (u64)luaL_checkinteger(L, 1);
	lua_Integer want = luaL_checkinteger(L, 2);
	size_t len = (size_t)clamp_t(lua_Integer, want, 0, MT_LUA_STRING_MAX), done = 0;

	if (!pc->script->may_read_memory)
		return read_error(L, "user_bytes: reading memory needs CAP_SYS_ADMIN "
				  "(the script was loaded without it)");
	while (addr && done < len) {
		u64 at = addr + done;
		size_t chunk = min_t(size_t, PAGE_SIZE - (at & (PAGE_SIZE - 1)), len - done);

		if (copy_from_user_nofault(pc->scratch + done, (const void __user *)at, chunk))
			break;
		done += chunk;
	}
	lua_pushlstring(L, pc->scratch, done);
	return 1;
}

static int l_kernel_string(lua_State *L) { return read_string(L, 0); }
static int l_user_string(lua_State *L) { return read_string(L, 1); }

/* marktap's runtime, Lua half: compiled when a script requires it */
static int l_load_rt(lua_State *L)
{
	if (luaL_loadbufferx(L, mt_rt_lua_source, sizeof(mt_rt_lua_source) - 1, "=mtrt", "t") != LUA_OK)
		return lua_error(L);
	return 1;
}

static int l_exit(lua_State *L)
{
	struct mt_lua_script *sc = cpu_of(L)->script;

	WRITE_ONCE(sc->exit, 1);
	WRITE_ONCE(sc->stopping, 1);
	return 0;
}

/* mt_rt.lua's rt._sync_commit: a pull's buffer is made and its base moves
 * now; a call stopped past here loses the changes, so it is reported
 * even when the caller would try again (MT_LUA_CALL_TRY, mt_lua_host.c) */
static int l_commit(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	const struct mt_lua_script *sc = pc->script;

	pc->committing = true;
	/* past here a stop would lose the pull's changes: what is left (the
	 * new base's snapshot of every map) runs to the call's bound, not a
	 * handler's, which a pull that may be tried again had */
	if (!pc->may_sleep && sc->call_clk > pc->bound) {
		pc->bound = sc->call_clk;
		pc->bound_msg = sc->call_msg;
	}
	return 0;
}

/* math: what integer scripts use (lmathlib is all floats) */
static int m_type(lua_State *L)
{
	luaL_checkany(L, 1);
	if (lua_type(L, 1) != LUA_TNUMBER)
		lua_pushnil(L);
	else
		lua_pushstring(L, lua_isinteger(L, 1) ? "integer" : "float");
	return 1;
}

static int m_tointeger(lua_State *L)
{
	int ok;
	lua_Integer n = lua_tointegerx(L, 1, &ok);

	if (ok)
		lua_pushinteger(L, n);
	else
		lua_pushnil(L);
	return 1;
}

static int m_abs(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);

	lua_pushinteger(L, n < 0 ? (lua_Integer)(0ull - (u64)n) : n);
	return 1;
}

static int m_minmax(lua_State *L, int max)
{
	int n = lua_gettop(L), i, best = 1;

	luaL_checkinteger(L, 1);
	for (i = 2; i <= n; i++)
		if (max ? luaL_checkinteger(L, i) > lua_tointeger(L, best)
			: luaL_checkinteger(L, i) < lua_tointeger(L, best))
			best = i;
	lua_pushvalue(L, best);
	return 1;
}

static int m_max(lua_State *L) { return m_minmax(L, 1); }
static int m_min(lua_State *L) { return m_minmax(L, 0); }
static int m_floor(lua_State *L) { lua_pushinteger(L, luaL_checkinteger(L, 1)); return 1; }

/*
 * kernel_store(n, v, where): guru mode's store to a kernel function
 * probe's parameter n (1..6, at the call) or $return (7, at the return),
 * into the registers the function or its caller resumes with, or to a
 * netfilter hook's $verdict (n 6), the packet's fate (mt_kregs.c).
 */
static int l_kernel_store(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	lua_Integer n = luaL_checkinteger(L, 1), v = luaL_checkinteger(L, 2);
	const char *where = lua_tostring(L, 3), *why;
	int rc;

	if (!pc->script->may_read_memory)
		return luaL_error(L, "kernel_store: writing registers needs CAP_SYS_ADMIN "
				  "(the script was loaded without it)");
	rc = mt_kregs_store((int)n, (long)v);
	if (!rc)
		return 0;
	if (rc == -ERANGE) {   /* the packet passes (mt_netfilter.c) */
		lua_pushfstring(L, "netfilter verdict %d: marktap gives NF_DROP (0) or NF_ACCEPT (1) "
				"only, the packet is accepted%s%s", (int)v, where ? " near " : "",
				where ? where : "");
		return lua_error(L);
	}
	why = rc == -ENOENT ? "only a kernel.function probe's registers or a netfilter hook's "
			      "$verdict can be written" :
	      rc == -EPERM ? "a netfilter hook's parameters are read-only, but for $verdict" :
	      rc == -EINVAL ? (n == 7 ? "$return can only be written in a .return probe" :
			       "a parameter can only be written at the call, not in a .return probe") :
	      "writing registers is only implemented on x86_64";
	lua_pushfstring(L, "%s%s%s", why, where ? " near " : "", where ? where : "");
	return lua_error(L);
}

/*
 * printk(level, msg): guru mode's line in the kernel log (stap's printk),
 * at level 0..7; root's, as the loader's CAP_SYS_ADMIN says.
 */
static int l_printk(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	lua_Integer level = luaL_checkinteger(L, 1);
	size_t len;
	const char *msg = luaL_checklstring(L, 2, &len);

	if (!pc->script->may_read_memory)
		return luaL_error(L, "printk: writing the kernel log needs CAP_SYS_ADMIN "
				  "(the script was loaded without it)");
	if (len && msg[len - 1] == '\n')   /* one line: ours ends it */
		len--;
	printk(KERN_SOH "%c%.*s\n", '0' + (int)(level & 7), (int)min_t(size_t, len, 1000), msg);
	return 0;
}

/*
 * syscall_store(n, v, where): guru mode's store to argument n (0..5) of
 * the system call whose entry's markers are firing, before the call reads
 * it (mt_kregs.c); root's, as kernel_store is.
 */
static int l_syscall_store(lua_State *L)
{
	struct mt_lua_cpu *pc = cpu_of(L);
	lua_Integer n = luaL_checkinteger(L, 1), v = luaL_checkinteger(L, 2);
	const char *where = lua_tostring(L, 3);
	int rc;

	if (!pc->script->may_read_memory)
		return luaL_error(L, "syscall_store: writing registers needs CAP_SYS_ADMIN "
				  "(the script was loaded without it)");
	rc = mt_kregs_syscall_store((int)n, (long)v);
	if (!rc)
		return 0;
	lua_pushfstring(L, "%s%s%s", rc == -ENOENT ? "a system call's argument can only be "
			"written at its entry (syscall.NAME), before the call reads it" :
			rc == -EINVAL ? "a system call has arguments 0 to 5" :
			"writing registers is only implemented on x86_64",
			where ? " near " : "", where ? where : "");
	return lua_error(L);
}

/*
 * syscall_arg(n): argument n (0..5) of the system call the current task
 * is in, from the user registers the kernel saved at its entry.  They are
 * the task's own values, as the syscall_id of kernel_arch_syscall_entry
 * is (no memory is read: the device's group may call it).  Outside a
 * system call (a kernel thread, an interrupt) it is a handler error.
 */
static int l_syscall_arg(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);
	unsigned long args[6];
	struct pt_regs *regs;

	if (n < 0 || n > 5)
		return luaL_error(L, "syscall_arg: argument %d of a system call (0..5 expected)", (int)n);
	if (!in_task() || (current->flags & PF_KTHREAD))
		return luaL_error(L, "syscall_arg: not in a system call of a user task");
	regs = task_pt_regs(current);
	if (syscall_get_nr(current, regs) < 0)
		return luaL_error(L, "syscall_arg: not in a system call");
	syscall_get_arguments(current, regs, args);
	lua_pushinteger(L, (lua_Integer)args[n]);
	return 1;
}

static const luaL_Reg math_lib[] = {
	{ "type", m_type }, { "tointeger", m_tointeger }, { "abs", m_abs },
	{ "max", m_max }, { "min", m_min }, { "floor", m_floor }, { "ceil", m_floor },
	{ NULL, NULL }
};

static const luaL_Reg context_lib[] = {
	{ "__out", l_out }, { "__mt_nest", l_nest }, { "__mt_unnest", l_unnest },
	{ "__mt_nesting", l_nesting },
	{ "pid", l_pid }, { "tid", l_tid }, { "ppid", l_ppid }, { "cpu", l_cpu },
	{ "uid", l_uid }, { "euid", l_euid }, { "gid", l_gid }, { "egid", l_egid },
	{ "execname", l_execname }, { "pid2execname", l_pid2execname },
	{ "task_execname", l_task_execname }, { "task_tgid", l_task_tgid }, { "task_addr", l_task_addr },
	{ "addr_to_node", l_addr_to_node },
	{ "task_ids", l_task_ids },
	{ "gettimeofday_ns", l_time_ns }, { "gettimeofday_us", l_time_us },
	{ "gettimeofday_ms", l_time_ms }, { "gettimeofday_s", l_time_s },
	{ "local_clock_ns", l_local_clock_ns }, { "get_cycles", l_get_cycles }, { "hz", l_hz },
	{ "kernel_string", l_kernel_string }, { "user_string", l_user_string },
	{ "user_read", l_user_read }, { "user_bytes", l_user_bytes },
	{ "kernel_read", l_kernel_read },
	{ "kernel_store", l_kernel_store }, { "syscall_arg", l_syscall_arg },
	{ "syscall_store", l_syscall_store }, { "printk", l_printk },
	{ "kbacktrace", mt_lua_kbacktrace }, { "ksym", mt_lua_ksym },
	{ "task_stat", mt_lua_task_stat }, { "task_state", mt_lua_task_state },
	{ "task_cputime", mt_lua_task_cputime }, { "task_statm", mt_lua_task_statm },
	{ "task_cmdline", mt_lua_task_cmdline }, { "task_files", mt_lua_task_files },
	{ "task_rlimit", mt_lua_task_rlimit },
	{ "exit", l_exit }, { "__mt_load_rt", l_load_rt }, { "__mt_commit", l_commit },
	{ NULL, NULL }
};

/*
 * Lua side of the library: probe() keeps the bindings in declaration
 * order, several handlers of one marker run in turn; printf and print.
 * It returns the names and the handler lists, kept in the registry.
 */
static const char prelude[] =
	"local names, probes = {}, {}\n"
	"local format, concat, out = string.format, table.concat, __out\n"
	"function probe(name, fn)\n"
	"  if type(name) ~= 'string' or type(fn) ~= 'function' then\n"
	"    error('probe(marker name, function) expected', 2)\n"
	"  end\n"
	"  local list = probes[name]\n"
	"  if not list then list = {}; probes[name] = list; names[#names + 1] = name end\n"
	"  list[#list + 1] = fn\n"
	"end\n"
	"function printf(fmt, ...) out(format(fmt, ...)) end\n"
	/* Lua runs __gc finalizers with hooks off: one could loop forever
	 * where MAXACTION cannot stop it (in a handler, with preemption off).
	 * An object is finalized only if its metatable had __gc when set. */
	"local rawsetmt, rawget = setmetatable, rawget\n"
	"function setmetatable(t, mt)\n"
	"  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then\n"
	"    error('__gc metamethods are not allowed in the kernel', 2)\n"
	"  end\n"
	"  return rawsetmt(t, mt)\n"
	"end\n"
	"function print(...)\n"
	"  local t = table.pack(...)\n"
	"  for i = 1, t.n do t[i] = tostring(t[i]) end\n"
	"  out(concat(t, '\\t', 1, t.n) .. '\\n')\n"
	"end\n"
	"local function handler(list)\n"
	"  if #list == 1 then return list[1] end\n"
	"  return function(...) for i = 1, #list do list[i](...) end end\n"
	"end\n"
	"return names, probes, handler\n";

#define REG_NAMES "marktap.names"
#define REG_PROBES "marktap.probes"
#define REG_HANDLER "marktap.handler"

static int open_libs(lua_State *L)
{
	static const char *const unsafe[] = { "load", "loadfile", "dofile", NULL };
	const char *const *u;

	luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
	luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
	luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
	lua_settop(L, 0);
	for (u = unsafe; *u; u++) {
		lua_pushnil(L);
		lua_setglobal(L, *u);
	}
	lua_getglobal(L, LUA_STRLIBNAME);
	lua_pushnil(L);
	lua_setfield(L, -2, "dump");   /* binary chunks are never loaded: none made */
	lua_pop(L, 1);
	luaL_newlib(L, math_lib);
	lua_pushinteger(L, LUA_MAXINTEGER);
	lua_setfield(L, -2, "maxinteger");
	lua_pushinteger(L, LUA_MININTEGER);
	lua_setfield(L, -2, "mininteger");
	lua_pushinteger(L, LUA_MAXINTEGER);
	lua_setfield(L, -2, "huge");
	lua_setglobal(L, "math");
	lua_pushglobaltable(L);
	luaL_setfuncs(L, context_lib, 0);
	lua_pop(L, 1);
	if (luaL_loadbufferx(L, prelude, sizeof(prelude) - 1, "=marktap", "t") != LUA_OK)
		return lua_error(L);
	lua_call(L, 0, 3);
	lua_setfield(L, LUA_REGISTRYINDEX, REG_HANDLER);
	lua_setfield(L, LUA_REGISTRYINDEX, REG_PROBES);
	lua_setfield(L, LUA_REGISTRYINDEX, REG_NAMES);
	/* marktap's runtime, C half (the Lua half comes with its scripts) */
	if (luaL_loadbufferx(L, mt_krt_lua_source, sizeof(mt_krt_lua_source) - 1, "=mtrt", "t") != LUA_OK)
		return lua_error(L);
	lua_call(L, 0, 0);
	return 0;
}

int mt_lua_open_libs(lua_State *L)
{
	lua_pushcfunction(L, open_libs);
	return lua_pcall(L, 0, 0, 0);
}

unsigned mt_lua_probe_count(lua_State *L)
{
	unsigned n;

	lua_getfield(L, LUA_REGISTRYINDEX, REG_NAMES);
	n = (unsigned)lua_rawlen(L, -1);
	lua_pop(L, 1);
	return n;
}

const char *mt_lua_probe_name(lua_State *L, unsigned i)
{
	const char *s;

	lua_getfield(L, LUA_REGISTRYINDEX, REG_NAMES);
	lua_rawgeti(L, -1, (lua_Integer)i + 1);
	s = lua_tostring(L, -1);   /* the names table keeps the string */
	lua_pop(L, 2);
	return s ? s : "";
}

/* Handler i: the marker's function, or one that runs its several in turn. */
int mt_lua_probe_ref(lua_State *L, unsigned i)
{
	lua_getfield(L, LUA_REGISTRYINDEX, REG_HANDLER);
	lua_getfield(L, LUA_REGISTRYINDEX, REG_PROBES);
	lua_getfield(L, LUA_REGISTRYINDEX, REG_NAMES);
	lua_rawgeti(L, -1, (lua_Integer)i + 1);
	lua_rawget(L, -3);          /* probes[name] */
	lua_replace(L, -3);
	lua_pop(L, 1);              /* handler, list */
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		lua_pop(L, 1);
		return LUA_NOREF;
	}
	return luaL_ref(L, LUA_REGISTRYINDEX);
}
