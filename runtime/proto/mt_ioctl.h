/*
 * mt_ioctl.h - the /dev/marktap interface, shared by marktap.ko and
 * runtime/tools/kernel.c.  Plain types only: it is included by both.
 *
 *   open("/dev/marktap")          CAP_PERFMON or CAP_SYS_ADMIN, or the group
 *                                 of module parameter gid= (all as the initial
 *                                 user namespace sees them; device mode 0660)
 *   MT_IOC_CONFIGURE  geometry -> allocate the session, total_bytes returned
 *                     (mode may carry MT_CONFIG_CREDS)
 *   MT_IOC_PATTERNS   enable patterns (globs, '\n' separated, '!' negates)
 *   mmap(0, total_bytes)          the session: struct mt_session + rings
 *   MT_IOC_START      arm the matching markers, state dump; returns #armed
 *   MT_IOC_STOP       disarm; when it returns no writer runs any more
 *   MT_IOC_BARRIER    wait (at most 1 s; -ETIMEDOUT) until the kernel's RCU
 *                     callbacks queued before the call have run: a task
 *                     reaped before it has fired sched_process_free
 *                     (any open file, with or without a session)
 *   MT_IOC_PROCFS_*   procfs files under /proc/systemtap (below)
 *   MT_IOC_KREAD      kernel memory, for root's begin, end and timer
 *                     probes (below)
 *   poll()            readable while a procfs request waits
 *   read()            the catalogue, one marker a line (see mt_main.c)
 *   close()           stops and frees the session (after munmap)
 *
 * Every open file is a session of its own (a recording, or a Lua script
 * below), side by side with the other files' sessions.  Openers without
 * CAP_SYS_ADMIN (the group, CAP_PERFMON) are bounded together: CONFIGURE
 * fails with EUSERS past the module parameter group_recordings (their
 * recordings at once) and with E2BIG past max_bytes (their recordings'
 * memory together); root's sessions are not counted.
 */
#ifndef MT_IOCTL_H
#define MT_IOCTL_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <linux/types.h>   /* __u32, __u64 as the kernel's uapi has them */
#include <sys/ioctl.h>
#endif

#define MT_DEVICE_PATH "/dev/marktap"
#define MT_IOC_MAGIC 0xb7

struct mt_ioc_config {
	__u32 subbuf_size;   /* in: power of two, >= 4096 */
	__u32 num_subbuf;    /* in: power of two, >= 2 */
	__u32 mode;          /* in: enum mt_ring_mode */
	__u32 ncpu;          /* out: rings in the session (possible CPUs) */
	__u64 total_bytes;   /* out: bytes to mmap */
};

/*
 * A flag of mt_ioc_config.mode: every event of the session ends with the
 * credentials of the task that hit the marker, as the fields of
 * MT_CREDS_FORMAT appended to the marker's own format (kernel.mark
 * handlers run by marktap read uid() ppid()... from them).  Without it
 * the events are exactly the markers' and recording costs nothing more.
 */
#define MT_CONFIG_CREDS   0x100u
#define MT_CONFIG_MODE    0xffu   /* the enum mt_ring_mode part of mode */
#define MT_CREDS_FORMAT   " ctx_ppid %d ctx_uid %d ctx_euid %d ctx_gid %d ctx_egid %d"
#define MT_CREDS_FIELDS   5

#define MT_IOC_PATTERNS_MAX 1024   /* = MT_PATTERNS_MAX, NUL included */

struct mt_ioc_patterns {
	char patterns[MT_IOC_PATTERNS_MAX];
};

#define MT_IOC_CONFIGURE _IOWR(MT_IOC_MAGIC, 1, struct mt_ioc_config)
#define MT_IOC_PATTERNS  _IOW(MT_IOC_MAGIC, 2, struct mt_ioc_patterns)
#define MT_IOC_START     _IO(MT_IOC_MAGIC, 3)
#define MT_IOC_STOP      _IO(MT_IOC_MAGIC, 4)
#define MT_IOC_BARRIER   _IO(MT_IOC_MAGIC, 5)

/*
 * procfs files, SystemTap's procfs("PATH").read/.write probes: marktap.ko
 * serves them as /proc/systemtap/NAME/PATH and asks marktap, through the
 * open file that made them, to run the probes' handlers (kmod/mt_procfs.c).
 * Any open file may make them, with or without a session, with or
 * without Lua in the module; they go away when it is closed.
 *
 *   MT_IOC_PROCFS_DIR     /proc/systemtap/NAME, once a file (EEXIST: the
 *                         name is another file's)
 *   MT_IOC_PROCFS_FILE    a file PATH in it (subdirectories made as
 *                         needed), mode 0444 read, 0222 write, 0666 both,
 *                         less umask; returns its number (0, 1, ...)
 *   poll()                POLLIN while a request waits (read() still
 *                         returns the catalogue)
 *   MT_IOC_PROCFS_NEXT    the oldest waiting request (EAGAIN: none)
 *   MT_IOC_PROCFS_ANSWER  the answer: a read's value, or the error the
 *                         reader or writer gets (ENOENT: it stopped waiting)
 *
 * A reader's first read() of an open file asks for the value, later ones
 * continue in it; each write() passes at most write_max bytes, one request
 * each.  They wait for the answer at most procfs_wait_ms (module parameter:
 * then ETIMEDOUT), and fail with EIO when the file that made the files is
 * closed.  Openers without CAP_SYS_ADMIN hold at most the module parameter
 * group_procfs_entries directories and files together (EUSERS past it).
 */
#define MT_PROCFS_NAME_MAX   64           /* NAME: letters, digits, '_'; NUL included */
#define MT_PROCFS_PATH_MAX   128          /* PATH, NUL included */
#define MT_PROCFS_ENTRIES_MAX 64          /* files and subdirectories of a directory */
#define MT_PROCFS_VALUE_MAX  (1u << 20)   /* the largest read_max */
#define MT_PROCFS_WRITE_MAX  4096         /* the largest write_max */
#define MT_PROCFS_READ       1u
#define MT_PROCFS_WRITE      2u

struct mt_ioc_procfs_dir {
	char name[MT_PROCFS_NAME_MAX];   /* in */
};

/* PATH's components are 1..MT_PROCFS_PATH_MAX printable ASCII bytes
 * but '/' (space excluded), never "." or "..", joined by single '/' */
struct mt_ioc_procfs_file {
	char path[MT_PROCFS_PATH_MAX];   /* in */
	__u32 ops;           /* in: MT_PROCFS_READ, MT_PROCFS_WRITE or both */
	__u32 umask;         /* in: permission bits taken away (0..0777) */
	__u32 read_max;      /* in, with READ: bytes of a value, 1..MT_PROCFS_VALUE_MAX */
	__u32 write_max;     /* in, with WRITE: bytes a write passes, 1..MT_PROCFS_WRITE_MAX */
};

struct mt_ioc_procfs_request {
	__u64 buf;           /* in: room for MT_PROCFS_WRITE_MAX written bytes */
	__u64 id;            /* out: to answer */
	__u32 file;          /* out: the file's number */
	__u32 op;            /* out: MT_PROCFS_READ or MT_PROCFS_WRITE */
	__u32 len;           /* out: the written bytes at buf */
	__u32 reserved;
};

struct mt_ioc_procfs_answer {
	__u64 id;            /* in: the request's */
	__u64 buf;           /* in: a read's value (cut at the file's read_max) */
	__u32 len;           /* in: its bytes */
	__s32 error;         /* in: 0, or -errno for the reader or writer */
};

#define MT_IOC_PROCFS_DIR    _IOW(MT_IOC_MAGIC, 8, struct mt_ioc_procfs_dir)
#define MT_IOC_PROCFS_FILE   _IOW(MT_IOC_MAGIC, 9, struct mt_ioc_procfs_file)
#define MT_IOC_PROCFS_NEXT   _IOWR(MT_IOC_MAGIC, 10, struct mt_ioc_procfs_request)
#define MT_IOC_PROCFS_ANSWER _IOW(MT_IOC_MAGIC, 11, struct mt_ioc_procfs_answer)

/*
 * Kernel memory for the handlers marktap runs itself (begin, end, timer
 * and procfs probes: kernel_string(), kernel_long(), @cast(p, "T")->m):
 * len bytes at addr, read page by page without faulting; with
 * MT_KREAD_STRING up to the first NUL (included).  Root's only: the
 * caller and the file's opener with CAP_SYS_ADMIN (EPERM otherwise), as
 * kernel handlers read memory.  got: the bytes copied to buf; EFAULT when
 * a byte before the end (or the NUL) could not be read.  With
 * MT_KREAD_TASK, addr is a thread id (the initial pid namespace) and buf
 * gets the address of its task_struct (8 bytes; ESRCH for no such task):
 * what @cast(task_current(), "task_struct") reads from, marktap's tasks
 * being thread ids.
 */
#define MT_KREAD_MAX 4096
#define MT_KREAD_STRING 1u
#define MT_KREAD_TASK 2u

struct mt_ioc_kread {
	__u64 addr;
	__u64 buf;           /* user address of len bytes */
	__u32 len;           /* at most MT_KREAD_MAX */
	__u32 flags;         /* MT_KREAD_STRING */
	__u32 got;           /* out */
	__u32 pad;
};

#define MT_IOC_KREAD _IOWR(MT_IOC_MAGIC, 12, struct mt_ioc_kread)

/*
 * Lua scripts (marktap.ko built with Lua; without it these are -ENOTTY):
 * kernel.mark handlers run in the module at the probe point.  See
 * kmod/mt_klua.h.  One script per open file (which then records nothing);
 * scripts of several files run side by side, each in its own states.
 * Loaders without CAP_SYS_ADMIN are bounded together: at most the module
 * parameter group_scripts scripts at once (E2BIG, error[] naming it) and
 * group_arena_kib of arenas.
 *
 *   MT_IOC_LUA_LOAD    Lua source -> one state per possible CPU, chunk run
 *                      (it binds handlers with probe(marker, fn)); on
 *                      failure -errno and the reason in error[]
 *   MT_IOC_LUA_START   arm the bound markers; returns #armed
 *   MT_IOC_LUA_STOP    disarm; when it returns no handler runs any more
 *   MT_IOC_LUA_CALL    run global function name(cpu) in each state (or the
 *                      first CPU's only); returns #states that had it
 *   MT_IOC_LUA_OUTPUT  drain a CPU's output (printf, ERROR: lines) into
 *                      buf; returns the bytes copied
 *   MT_IOC_LUA_STATS   counters summed over the CPUs
 */
#define MT_LUA_ERROR_MAX 256

struct mt_ioc_lua_load {
	__u64 source;        /* in: address of the Lua source text */
	__u32 source_len;    /* in: its bytes (at most 4 MiB) */
	__u32 arena_kib;     /* in: memory of each CPU's state (0: 4096 KiB) */
	__u32 maxaction;     /* in: statements per hit (0: 1000), x16 units of the run budget */
	__u32 maxstringlen;  /* in: kernel_string()/user_string() cut (0: 512) */
	__u32 maxerrors;     /* in: handler errors let pass before the session stops (stap's MAXERRORS) */
	__u32 out_kib;       /* in: each CPU's ring of handler output, KiB: a power of two,
			      * 64..4096 (0: 1024); counted with the arenas of the group */
	__u32 ncpu;          /* out: states made */
	__u32 nprobes;       /* out: markers bound */
	char error[MT_LUA_ERROR_MAX];   /* out: why the load failed */
	/* Time bounds (0: the default named).  Without CAP_SYS_ADMIN, the
	 * defaults are also the most one may ask, and overload cannot be
	 * turned off. */
	__u32 max_run_us;    /* in: a handler's run time (0: 20000); a call's is 10 times it */
	__u32 wait_us;       /* in: a hit's wait for a state another CPU holds (stap's MAXTRYLOCK; 0: 20000) */
	__u64 overload_threshold_ns;   /* in: handler time per interval (STP_OVERLOAD_THRESHOLD; 0: 500000000) */
	__u64 overload_interval_ns;    /* in: STP_OVERLOAD_INTERVAL (0: 1000000000) */
	__u32 flags;         /* in: MT_LUA_LOAD_* */
	__u32 reserved2;     /* in: 0 */
};

#define MT_LUA_LOAD_NO_OVERLOAD 1u   /* stap's STP_NO_OVERLOAD (CAP_SYS_ADMIN only) */

#define MT_LUA_CALL_FIRST 1u   /* only the first CPU's state */
#define MT_LUA_CALL_CPU   2u   /* only the state of CPU cpu */
/* while armed, the call holds a state no longer than a handler may
 * (MAXACTION_US), and a run out of its budget or time before it changed
 * anything is no error (nothing reported or counted): the call fails
 * with ETIME, to be tried again later */
#define MT_LUA_CALL_TRY   4u
/* before START or after STOP: the call runs preemptible, bounded by time
 * alone (10 s, as a load), not by the budget of a call made while hits
 * wait for the state (the first values in, the final pull of large
 * arrays out); while armed it is an ordinary call */
#define MT_LUA_CALL_LONG  8u

/*
 * name(cpu, in) is called; a string it returns is copied to out (when it
 * fits: else -ENOSPC, out_len saying how much was needed).
 */
struct mt_ioc_lua_call {
	char name[64];       /* in: a global function of the script */
	__u32 flags;         /* in: MT_LUA_CALL_* */
	__u32 cpu;           /* in: with MT_LUA_CALL_CPU */
	__u64 in;            /* in: address of a string argument (or 0) */
	__u64 out;           /* in: where the returned string goes (or 0) */
	__u32 in_len;        /* in */
	__u32 out_size;      /* in */
	__u32 out_len;       /* out: bytes returned */
	__u32 errors;        /* out: calls that raised an error */
};

struct mt_ioc_lua_output {
	__u64 buf;           /* in: where to copy */
	__u32 size;          /* in: room at buf */
	__u32 cpu;           /* in: whose output */
};

struct mt_ioc_lua_stats {
	__u64 runs;          /* handlers run */
	__u64 skipped;       /* hits skipped: their CPU's state was busy */
	__u64 errors;        /* handler errors */
	__u64 lost_bytes;    /* output dropped: a CPU's ring was full */
	__u64 pending_bytes; /* output not drained yet */
	__u64 arena_peak;    /* largest use of one CPU's arena, bytes */
	__u64 arena_failed;  /* allocations refused (arenas full) */
	__u32 ncpu;
	__u32 stopping;      /* no more handlers: exit() or an error */
	__u32 exit;          /* exit() was called */
	__u32 pad;
	__u64 native_runs;   /* of runs, those by a native plan (no Lua) */
	__u64 max_run_ns;    /* the longest run of a handler, any CPU */
	__u64 max_call_ns;   /* the longest MT_IOC_LUA_CALL run in one state (and the load's) */
	__u64 own_runs;      /* of the runs in Lua, those in the state of the CPU hit, not the shared one */
};

/* numbers 16.. so that other additions above keep theirs */
#define MT_IOC_LUA_LOAD   _IOWR(MT_IOC_MAGIC, 16, struct mt_ioc_lua_load)
#define MT_IOC_LUA_START  _IO(MT_IOC_MAGIC, 17)
#define MT_IOC_LUA_STOP   _IO(MT_IOC_MAGIC, 18)
#define MT_IOC_LUA_CALL   _IOW(MT_IOC_MAGIC, 19, struct mt_ioc_lua_call)
#define MT_IOC_LUA_OUTPUT _IOW(MT_IOC_MAGIC, 20, struct mt_ioc_lua_output)
#define MT_IOC_LUA_STATS  _IOR(MT_IOC_MAGIC, 21, struct mt_ioc_lua_stats)

#endif
