/*
 * mt_ktask.h - another task's /proc/PID/stat, statm and state at the hit,
 * for handlers that run in marktap.ko (mt_ktask.c): what marktap's
 * runtime reads from /proc in user space (rt.task_stat, rt.task_state,
 * rt.task_cputime, rt.task_statm), read from the task itself.
 */
#ifndef MT_KTASK_H
#define MT_KTASK_H

struct lua_State;
struct task_struct;

/* The task with thread id tid, numbered as markers number them (the
 * initial pid namespace), under rcu_read_lock; NULL when there is none. */
struct task_struct *mt_task_of(long long tid);

/* task_stat(tid, n): field n of /proc/TID/stat in proc(5)'s numbering
 * (4 ppid, 5 pgrp, 6 session, 14 utime and 15 stime in clock ticks,
 * 18 priority, 19 nice, 20 threads, 39 processor, 40 rt_priority,
 * 41 policy), -1 when the task is gone; another field is a handler error.
 * task_state(tid): the state letter ("R", "S", "D" ...), "" when gone.
 * task_cputime(tid, system): user (or system) time in ns.
 * task_statm(tid, n): field n (1..7) of /proc/TID/statm, in pages, 0 when
 * the task or its memory is gone (or busy: its lock is never waited for). */
int mt_lua_task_stat(struct lua_State *L);
int mt_lua_task_state(struct lua_State *L);
int mt_lua_task_cputime(struct lua_State *L);
int mt_lua_task_statm(struct lua_State *L);
/* task_cmdline(tid): the NUL-separated arguments of the current process
 * (tid one of its threads), "" for a kernel thread or a task gone; of
 * another process a handler error (its memory cannot be read at a hit). */
int mt_lua_task_cmdline(struct lua_State *L);
/* task_files(tid): its open file descriptors (-1 when its table is busy)
 * and its soft RLIMIT_NOFILE; -1 each when it is gone.
 * task_rlimit(tid, n): its soft limit n (RLIMIT_CPU 0 ... RLIMIT_RTTIME
 * 15; RLIM_INFINITY is -1), -1 when it is gone. */
int mt_lua_task_files(struct lua_State *L);
int mt_lua_task_rlimit(struct lua_State *L);

/* The task a handler's task value names (mt_task_of, or a task_struct's
 * address from a script that may read memory), under rcu_read_lock. */
struct task_struct *mt_lua_task(struct lua_State *L, long long task);

#endif
