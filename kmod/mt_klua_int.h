/*
 * mt_klua_int.h - internals shared by the Lua host's files: mt_lua_host.c,
 * mt_lua_run.c, mt_lua_cpu.c, mt_lua_lib.c and mt_lua_nat.c (they include
 * Lua's headers; the rest of the module does not).
 */
#ifndef MT_KLUA_INT_H
#define MT_KLUA_INT_H

#include <linux/atomic.h>
#include <linux/sched/clock.h>
#include <linux/timex.h>
#include "mt_klua.h"
#include "mt_kstack.h"

#define MT_LUA_OUT_KIB 1024              /* output ring per CPU unless asked (stap's -s) */
#define MT_LUA_OUT_MAX_KIB 4096          /* what marktap drains of a CPU at once */
#define MT_LUA_SOURCE_MAX (4u << 20)
#define MT_LUA_ARENA_MAX_KIB (256u * 1024)
#define MT_LUA_ARENAS_MAX_KIB (1024u * 1024)   /* all CPUs' arenas together */
#define MT_LUA_STRING_MAX 4096           /* largest MAXSTRINGLEN */
#define MT_LUA_INSNS_PER_ACTION 16       /* run budget (function entries, backward jumps) per stap statement */
#define MT_LUA_GROUP_MAXACTION 1000000   /* largest maxaction without CAP_SYS_ADMIN */
/* time bounds of a run (mt_ioctl.h's load request sets them) */
#define MT_LUA_RUN_US 20000              /* a handler's, by default and without CAP_SYS_ADMIN at most */
#define MT_LUA_ROOT_RUN_US 1000000       /* a handler's with CAP_SYS_ADMIN at most */
#define MT_LUA_CALL_RUNS 10              /* a call (end, pulls) may run 10 handlers' time */
#define MT_LUA_LOAD_NS (10 * NSEC_PER_SEC)   /* loading: preemptible, nothing waits for it */
/* a call while disarmed (begin's values in, the final pull out): no hit
 * waits for it, so only the load's time bound counts */
#define MT_LUA_IDLE_BUDGET (S64_MAX / 4)
/* a hit's wait for a held state: a holder's bound (stap's MAXTRYLOCK 100 x
 * TRYLOCKDELAY 10 us is 1 ms; -DMAXTRYLOCK sets it) */
#define MT_LUA_WAIT_US MT_LUA_RUN_US
#define MT_LUA_OVERLOAD_THRESHOLD_NS 500000000ull   /* stap's STP_OVERLOAD_THRESHOLD */
#define MT_LUA_OVERLOAD_INTERVAL_NS 1000000000ull   /* stap's STP_OVERLOAD_INTERVAL */

/*
 * The C stack Lua may use (luaconf.h's LUAI_MAXCCALLS measures it).  A
 * hit's run is on its state's own stack (mt_lua_on_stack): the stack its
 * marker fired on (a task's 16 KiB, an interrupt's) may be half used
 * already, and a try/catch is a pcall, a C level of ~600 bytes (frames
 * measured with -fstack-usage, Lua 5.4.4, gcc 12; a nested statement
 * costs the parser ~400 bytes, a callback from string.gsub ~1.3 KiB).
 * Below the limit stays room for what runs without a check: the pattern
 * matcher's 32 levels (~3 KiB), a fault's frames, and on a state's stack
 * an interrupt that came on top of a hit in interrupt context.  marktap's
 * calls (load, pulls, end) run on the task's kernel stack.
 */
#define MT_LUA_STACK_SIZE (64 * 1024)
#define MT_LUA_STACK_RESERVE (12 * 1024)
#define MT_LUA_TASK_STACK_RESERVE (5 * 1024)

/* stap's overload guard of a script on a CPU (mt_lua_run.c) */
struct mt_lua_overload {
	u64 base, sum;
};

struct mt_lua_script {
	struct mt_lua_cpu **cpu;     /* [nr_cpu_ids], NULL for impossible CPUs */
	struct mt_lua_overload __percpu *overload;
	unsigned first;              /* first possible CPU: its state binds */
	unsigned nprobes;
	struct mt_kmarker *probes[MT_LUA_PROBES_MAX];
	u32 arena_kib, maxaction, maxstringlen;
	u32 out_size;                /* bytes of each CPU's output ring, a power of two */
	u64 group_arena_kib;         /* counted in mt_lua_host.c's group total (or 0) */
	bool group;                  /* counted in the group's scripts */
	int may_read_memory;         /* loaded with CAP_SYS_ADMIN: kernel_string()... */
	int hide_kaddr;              /* kernel addresses hashed (mt_hide_kaddr) */
	bool wants_kstack;           /* it calls kbacktrace(): hits save their stack */
	int armed;
	int stopping;                /* exit() or too many errors: no more handlers */
	u32 maxerrors;               /* errors let pass (stap's MAXERRORS) */
	atomic_t nerrors;            /* errors so far, all CPUs */
	int exit;                    /* exit() was called */
	struct mt_lua_nat_plan *nat[MT_LUA_PROBES_MAX];   /* native plans (mt_lua_nat.c) or NULL */
	bool percpu[MT_LUA_PROBES_MAX];   /* its Lua runs in the hit CPU's state, else the shared one */
	int nparams[MT_LUA_PROBES_MAX];   /* parameters its handler reads (-1: all) */
	/* in the units of the run clock (mt_lua_clock): */
	u64 run_clk, call_clk;       /* time bounds of a handler's run and of a call's */
	u64 wait_clk;                /* a hit's wait for a state held elsewhere */
	u64 overload_threshold_clk, overload_interval_clk;
	bool no_overload;
	char run_msg[96], call_msg[96];   /* said of a run past its time bound */
};

struct mt_lua_cpu {
	lua_State *L;
	struct mt_lua_extra *extra;
	struct mt_lua_script *script;
	unsigned cpu;
	atomic_t busy;               /* 1 while a handler or the consumer is in L */
	struct task_struct *holder;  /* the task busy's owner runs on (or interrupted) */
	bool contended;              /* a hit gave up waiting: the next ones do not wait */
	atomic64_t skipped;          /* hits that found busy set */
	/* the current run (mt_lua_cpu.c): budget units beyond the
	 * slice in extra->budget, its start and time bound */
	s64 left;
	u64 start, bound;            /* local_clock ns for a load, else the run clock */
	const char *bound_msg;       /* what mt_lua_report adds when the time ran out */
	bool timed_out;              /* the run passed its time bound */
	bool may_sleep;              /* process context: the run may reschedule */
	bool committing;             /* the call's pull moved its base (l_commit) */
	u64 max_run_clk, max_call_ns; /* the longest so far (run clock units, ns) */
	u64 runs, errors;
	struct mt_arena arena;
	int ref[MT_LUA_PROBES_MAX];  /* registry references of the handlers */
	int sref[MT_LUA_PROBES_MAX][2];   /* ... of their markers' name and format */
	struct mt_lua_nat_tab *nat;  /* native plans' adds, in L's arena (or NULL) */
	u64 nat_runs;                /* hits run by a native plan */
	u64 own_runs;                /* of runs, in the state of the CPU hit (__mt_percpu) */
	/* output: head written by the busy owner, tail by the consumer */
	char *out;
	u64 head, tail, lost;
	struct mt_lua_name name;     /* execname()'s last string */
	void *stack;                 /* MT_LUA_STACK_SIZE bytes: where a hit's Lua runs */
	char scratch[MT_LUA_STRING_MAX];   /* kernel_string()/user_string() */
	unsigned long kstack[MT_KSTACK_MAX];   /* the hit's stack, if the script asks (mt_kstack.c) */
	unsigned kstack_n;
};

/* mt_lua_cpu.c: the state's extra space (struct mt_lua_extra) */
struct mt_lua_extra *mt_lua_extra(lua_State *L);
/* mt_lua_cpu.c: Lua runs in pc on the current task's kernel stack (an
 * ioctl's call): the C-stack limit there */
void mt_lua_task_stack(struct mt_lua_cpu *pc);
/* lua/mt_lua_jmp.S: mt_lua_run_hit(arg) (mt_lua_run.c: a hit's run) on
 * the stack whose top is top (16-byte aligned) */
void mt_lua_on_stack(void *arg, void *top);
void mt_lua_run_hit(void *arg);
/* the output ring: n bytes written by the busy flag's owner, whole or
 * counted as lost; up to size bytes drained to the consumer's buf */
void mt_lua_out(struct mt_lua_cpu *pc, const char *s, size_t n);
long mt_lua_out_drain(struct mt_lua_cpu *pc, char __user *buf, size_t size);
/*
 * The clock of runs: the TSC where the kernel knows its rate (a hit's or
 * a call's run starts and ends on one CPU, preemption off: rdtsc's cost,
 * not local_clock's, twice a hit), else local_clock; a load, which may
 * move between CPUs, reads local_clock.  Bounds are kept in its units.
 * mt_lua_clock_init: at each load, before the bounds are converted.
 */
extern bool mt_lua_tsc;
static inline u64 mt_lua_clock(void)
{
	return mt_lua_tsc ? (u64)get_cycles() : local_clock();
}
void mt_lua_clock_init(void);
u64 mt_lua_ns_to_clock(u64 ns);
u64 mt_lua_clock_to_ns(u64 c);
/* A run's budget (MAXACTION's units) and time bound, from now (msg: what
 * an error of the run says when the time ran out); a call's (the
 * consumer's, or the load's while pc->may_sleep).  The state's
 * luai_budgetspent then calls mt_lua_budget_refill (mt_klua.h). */
void mt_lua_set_bound(struct mt_lua_cpu *pc, s64 budget, u64 bound, const char *msg);
void mt_lua_set_call_bound(struct mt_lua_cpu *pc, s64 budget);

/* mt_lua_run.c: no handler of sc runs: each CPU's overload guard starts afresh */
void mt_lua_overload_reset(struct mt_lua_script *sc);
/* The consumer owns pc (process context; returns with preemption off),
 * waiting out a hit; and gives it back. */
void mt_lua_enter(struct mt_lua_cpu *pc);
/* The same while no hit can come (the script disarmed): preemption stays
 * on, the call may reschedule.  leave: idle as entered. */
void mt_lua_enter_idle(struct mt_lua_cpu *pc);
void mt_lua_leave(struct mt_lua_cpu *pc, bool idle);
/* The error on top of L's stack, of a run in pc (owned), to pc's output
 * as stap prints it; past the script's MAXERRORS the session stops. */
void mt_lua_report(struct mt_lua_script *sc, struct mt_lua_cpu *pc, lua_State *L);

/* mt_lua_lib.c */
int mt_lua_open_libs(lua_State *L);        /* LUA_OK, or an error on the stack */
unsigned mt_lua_probe_count(lua_State *L);
const char *mt_lua_probe_name(lua_State *L, unsigned i);   /* valid while the state lives */
int mt_lua_probe_ref(lua_State *L, unsigned i);           /* handler i, in the registry */

/* mt_lua_nat.c: native plans */
struct mt_args;
int mt_lua_nat_load(struct mt_lua_script *sc);            /* after binding: 0 or -ENOMEM */
void mt_lua_nat_free(struct mt_lua_script *sc);
bool mt_lua_nat_run(struct mt_lua_script *sc, struct mt_lua_cpu *pc, const struct mt_lua_nat_plan *p,
		    const struct mt_kmarker *m, const struct mt_args *a);   /* false: run Lua */
int mt_lua_nat_fold(struct mt_lua_cpu *pc);               /* LUA_OK or an error on L */

#endif
