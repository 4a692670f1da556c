/*
 * mt_ktask.c - another task's stat, statm and state (mt_ktask.h).
 *
 * Tasks are numbered as markers number them (the initial pid namespace).
 * Everything is read under rcu_read_lock with no lock waited for: a hit
 * may run with preemption or interrupts off.  The values are the ones
 * /proc computes, from the same fields.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/fdtable.h>
#include <linux/resource.h>
#include "lua.h"
#include "lauxlib.h"
#include "mt_klua_int.h"
#include "mt_ktask.h"

#define current get_current()   /* lua.h took the kernel's away (mt_lua_kernel.h) */

struct task_struct *mt_task_of(long long tid)
{
	if (tid <= 0 || tid > INT_MAX)   /* 0 is the idle task: no name */
		return NULL;
	return pid_task(find_pid_ns((pid_t)tid, &init_pid_ns), PIDTYPE_PID);
}

/*
 * A task value of a handler: a thread id (marktap's tasks), or, from a
 * script that may read kernel memory, the address of a task_struct (what
 * stap's task functions take: a tracepoint's or a function's $p).  The
 * address is believed only when it is the task of the pid read from it
 * (read without faulting): a wrong address is no task, never a read of
 * what it points to.  Under rcu_read_lock.
 */
struct task_struct *mt_lua_task(lua_State *L, long long task)
{
	struct task_struct *at = (struct task_struct *)(uintptr_t)task;
	pid_t pid;

	if (task >= 0)
		return mt_task_of(task);
	if (!mt_lua_extra(L)->cpu->script->may_read_memory ||
	    copy_from_kernel_nofault(&pid, &at->pid, sizeof(pid)) || pid <= 0)
		return NULL;
	return mt_task_of(pid) == at ? at : NULL;
}

static long long stat_field(struct task_struct *t, int n, bool *known)
{
	*known = true;
	switch (n) {
	case 4:
		return task_tgid_nr_ns(rcu_dereference(t->real_parent), &init_pid_ns);
	case 5:
		return task_pgrp_nr_ns(t, &init_pid_ns);
	case 6:
		return task_session_nr_ns(t, &init_pid_ns);
	case 14:
		return div_u64(t->utime, NSEC_PER_SEC / USER_HZ);
	case 15:
		return div_u64(t->stime, NSEC_PER_SEC / USER_HZ);
	case 18:
		return t->prio - MAX_RT_PRIO;
	case 19:
		return task_nice(t);
	case 20:
		return get_nr_threads(t);
	case 39:
		return task_cpu(t);
	case 40:
		return t->rt_priority;
	case 41:
		return t->policy;
	}
	*known = false;
	return -1;
}

int mt_lua_task_stat(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1), n = luaL_checkinteger(L, 2);
	struct task_struct *t;
	long long v = -1;
	bool known = true;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	if (t && n >= 3 && n <= 52)
		v = stat_field(t, (int)n, &known);
	rcu_read_unlock();
	if (!known)
		return luaL_error(L, "field %d of /proc/PID/stat is not read in the kernel "
				  "(marktap.ko reads 4-6, 14, 15, 18-20, 39-41)", (int)n);
	lua_pushinteger(L, v);
	return 1;
}

int mt_lua_task_state(lua_State *L)
{
	static const char letters[] = "RSDTtXZPI";   /* as /proc's, by task_state_index */
	lua_Integer tid = luaL_checkinteger(L, 1);
	struct task_struct *t;
	char c = 0;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	if (t) {
		unsigned i = task_state_index(t);
		c = i < sizeof(letters) - 1 ? letters[i] : '?';
	}
	rcu_read_unlock();
	lua_pushlstring(L, &c, c ? 1 : 0);
	return 1;
}

int mt_lua_task_cputime(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	int system = lua_toboolean(L, 2);
	struct task_struct *t;
	u64 ns = 0;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	if (t)
		ns = system ? t->stime : t->utime;
	rcu_read_unlock();
	lua_pushinteger(L, (lua_Integer)ns);
	return 1;
}

/* /proc/PID/statm's fields from the task's mm, held by its alloc_lock
 * (exit_mm clears t->mm under it): tried, never waited for. */
static long statm_field(struct task_struct *t, int n)
{
	struct mm_struct *mm;
	long v = 0;

	if (!spin_trylock(&t->alloc_lock))
		return 0;
	mm = t->mm;
	if (mm) {
		unsigned long file = get_mm_counter(mm, MM_FILEPAGES);
		unsigned long shmem = get_mm_counter(mm, MM_SHMEMPAGES);
		unsigned long anon = get_mm_counter(mm, MM_ANONPAGES);

		switch (n) {
		case 1: v = (long)mm->total_vm; break;
		case 2: v = (long)(file + shmem + anon); break;
		case 3: v = (long)(file + shmem); break;
		case 4: v = (long)((PAGE_ALIGN(mm->end_code) - (mm->start_code & PAGE_MASK)) >> PAGE_SHIFT); break;
		case 6: v = (long)(mm->data_vm + mm->stack_vm); break;
		default: v = 0; break;   /* 5 and 7: always 0 since Linux 2.6 */
		}
	}
	spin_unlock(&t->alloc_lock);
	return v;
}

int mt_lua_task_statm(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1), n = luaL_checkinteger(L, 2);
	struct task_struct *t;
	long v = 0;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	if (t && n >= 1 && n <= 7)
		v = statm_field(t, (int)n);
	rcu_read_unlock();
	lua_pushinteger(L, v);
	return 1;
}

/* The current process's arguments from its own memory, never faulted in
 * (a hit may not sleep): what /proc/PID/cmdline gives, cut at 4 KiB. */
int mt_lua_task_cmdline(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	struct task_struct *t;
	struct mm_struct *mm = current->mm;
	bool mine, kthread;
	unsigned long start, end;
	char *buf;
	size_t n;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	mine = t && same_thread_group(t, current);
	kthread = t && (t->flags & PF_KTHREAD);
	rcu_read_unlock();
	if (!t || kthread || (mine && !mm)) {
		lua_pushliteral(L, "");   /* gone, or a kernel thread: none */
		return 1;
	}
	if (!mine)
		return luaL_error(L, "the command line of task %d is not read in the kernel: "
				  "marktap.ko reads the current process's only", (int)tid);
	start = READ_ONCE(mm->arg_start);
	end = READ_ONCE(mm->arg_end);
	n = end > start ? min_t(unsigned long, end - start, 4096) : 0;
	buf = lua_newuserdatauv(L, n ? n : 1, 0);   /* the state's memory, bounded */
	if (n && copy_from_user_nofault(buf, (const void __user *)start, n))
		n = 0;   /* not resident: as a process whose memory is gone */
	lua_pushlstring(L, buf, n);
	return 1;
}

/* The open descriptors of a task: the bits of its fd table, read under
 * its alloc_lock (exit_files clears t->files under it), tried, never
 * waited for; -1 when busy or gone. */
static long open_files(struct task_struct *t)
{
	struct files_struct *files;
	long n = -1;

	if (!spin_trylock(&t->alloc_lock))
		return -1;
	files = t->files;
	if (files) {
		struct fdtable *fdt = files_fdtable(files);   /* RCU-freed: rcu_read_lock */

		n = (long)bitmap_weight(fdt->open_fds, fdt->max_fds);
	}
	spin_unlock(&t->alloc_lock);
	return n;
}

int mt_lua_task_files(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	struct task_struct *t;
	long long open_fds = -1, max_fds = -1;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	if (t) {
		open_fds = open_files(t);
		max_fds = (long long)task_rlimit(t, RLIMIT_NOFILE);
	}
	rcu_read_unlock();
	lua_pushinteger(L, open_fds);
	lua_pushinteger(L, max_fds);
	return 2;
}

int mt_lua_task_rlimit(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1), n = luaL_checkinteger(L, 2);
	struct task_struct *t;
	long long v = -1;

	rcu_read_lock();
	t = mt_lua_task(L, tid);
	/* signal_struct lives as long as the task_struct rcu keeps here */
	if (t && n >= 0 && n < RLIM_NLIMITS)
		v = (long long)task_rlimit(t, (unsigned)n);
	rcu_read_unlock();
	lua_pushinteger(L, v);
	return 1;
}
