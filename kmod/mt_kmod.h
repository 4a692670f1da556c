/*
 * mt_kmod.h - marktap.ko internals: kernel markers and the hooks that fire them.
 *
 * A marker (struct mt_kmarker) is one entry of the seed catalogue
 * (markers.tsv): its name and format come from the generated mt_catalog.h,
 * so they cannot drift from the TSV.  A marker is fired from one or more
 * hooks (struct mt_hook): a tracepoint probe, a kprobe, a kretprobe or the
 * inet address notifier.  Several markers may share a hook (raw_syscalls
 * sys_enter feeds a dozen); the hook is registered while at least one of
 * its markers is armed and unregistered with the last one, so a disarmed
 * marker has nothing registered on its behalf.
 *
 *   mt_catalog[] --> struct mt_kmarker { name, format, targets, hooks[] }
 *                                                              |
 *                              struct mt_hook { kind, name, refs, probe... }
 *
 * A hook's probe function calls mt_kmarker_fire(&mt_m_NAME, args...) with
 * the arguments the seed's format expects; the call returns at once when
 * the marker is not armed, else the marker's targets say where the hit
 * goes (mt_dispatch.c).
 */
#ifndef MT_KMOD_H
#define MT_KMOD_H

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/rcupdate.h>
#include <linux/tracepoint.h>
#include <linux/user_namespace.h>
#include "mt_fmt.h"
#include "mt_catalog.h"
#include "mt_session.h"

enum mt_hook_kind {
	MT_HOOK_TRACEPOINT,
	MT_HOOK_KPROBE,
	MT_HOOK_KRETPROBE,
	MT_HOOK_INETADDR,
};

struct mt_hook {
	const char *name;       /* tracepoint name or kernel symbol */
	const char *hint;       /* why it may be missing, for the listing */
	u8 kind;                /* enum mt_hook_kind */
	void *tp_probe;         /* tracepoint probe: (void *data, TP_PROTO...) */
	kprobe_pre_handler_t pre;             /* kprobe */
	kretprobe_handler_t entry, ret;       /* kretprobe */
	size_t data_size;                     /* kretprobe per-instance data */
	notifier_fn_t notify;                 /* inet address notifier */
	const int *enable;      /* if set, used only while *enable (module parameter) */
	/* state, under mt_lock */
	struct tracepoint *tp;  /* found at load */
	int error;              /* 0 if usable; -errno of the load-time check */
	unsigned refs;          /* armed markers using it */
	union {
		struct kprobe kp;
		struct kretprobe krp;
		struct notifier_block nb;
	} u;
};

#define MT_KMARKER_HOOKS 16

/*
 * Where an armed marker's hits go: a list of receivers, as many as the
 * sessions that armed it (recordings and scripts side by side, each from
 * its own open file: mt_main.c).  A hit runs each receiver in turn.
 *
 *   targets == NULL        disarmed: the hit returns at once
 *   MT_TARGET_REC, id      event id of a recording (owner: its struct
 *                          mt_rec): the recorder's writer (mt_write.c)
 *   MT_TARGET_LUA, id      binding id of a loaded script (owner: its
 *                          struct mt_lua_script): its native plan or Lua
 *                          handler (mt_lua_run.c)
 *
 * The list is replaced whole, never changed in place: under mt_lock a new
 * one is published with rcu_assign_pointer and the old one freed after a
 * grace period (kfree_rcu).  A hit reads the pointer once with preemption
 * off (mt_dispatch.c), an RCU read-side section: it walks one whole list,
 * old or new, and the list outlives the walk.  An owner whose targets
 * were taken out waits for the hits still walking an older list with
 * mt_hooks_sync() before it frees itself.
 */
enum mt_target_kind {
	MT_TARGET_REC,
	MT_TARGET_LUA,
};

struct mt_ktarget {
	void *owner;              /* struct mt_rec or struct mt_lua_script */
	u8 kind;                  /* enum mt_target_kind */
	u8 values;                /* Lua: the handler reads the marker's values */
	u32 id;                   /* event id (recorder) or binding (Lua) */
};

struct mt_ktargets {
	struct rcu_head rcu;
	unsigned n;
	struct mt_ktarget t[];
};

struct mt_kmarker {
	const char *name;
	const char *format;       /* as in the catalogue: MARK_NOARGS is " " */
	const char *recorded;     /* as in the session (gen-catalog.sh: %c) */
	const char *source;       /* how this kernel fires it, for the listing */
	const char *unavailable;  /* set if it cannot exist on this kernel: why */
	struct mt_hook *hooks[MT_KMARKER_HOOKS];
	struct mt_ktargets __rcu *targets;   /* where hits go (NULL: disarmed) */
	u32 kaddr_mask;           /* fields that may hold kernel addresses, */
	u32 pfn_mask;             /* or page frame numbers (mt_hide_kaddr) */
	struct mt_format fmt;     /* parsed at load */
};

/* Whether m is armed, read once: for the listing, and for hooks that do
 * work of their own before firing (a read of user memory, a lookup). */
static inline bool mt_kmarker_armed(const struct mt_kmarker *m)
{
	return rcu_access_pointer(m->targets) != NULL;
}

/* Define marker NAME (of the catalogue) fired by the listed hooks. */
#define MT_KMARKER(n, src, ...) \
	struct mt_kmarker mt_m_##n = { .name = #n, .format = MT_FMT_##n, \
		.recorded = MT_REC_##n, .source = src, \
		.hooks = { __VA_ARGS__ } }
/* A catalogue marker this kernel has no place for. */
#define MT_KMARKER_NONE(n, why) \
	struct mt_kmarker mt_m_##n = { .name = #n, .format = MT_FMT_##n, \
		.recorded = MT_REC_##n, .source = "none", .unavailable = why }

#define MT_TP_HOOK(var, tpname, probe, why) \
	struct mt_hook var = { .name = tpname, .hint = why, \
		.kind = MT_HOOK_TRACEPOINT, .tp_probe = (void *)(probe) }
#define MT_KPROBE_HOOK(var, sym, handler, why) \
	struct mt_hook var = { .name = sym, .hint = why, \
		.kind = MT_HOOK_KPROBE, .pre = handler }
#define MT_KRETPROBE_HOOK(var, sym, on_entry, on_return, size, why) \
	struct mt_hook var = { .name = sym, .hint = why, \
		.kind = MT_HOOK_KRETPROBE, .entry = on_entry, .ret = on_return, \
		.data_size = size }

#define MT_DECLARE(n, f) extern struct mt_kmarker mt_m_##n;
MT_CATALOG(MT_DECLARE)
/* Markers of the state dump beyond the catalogue's statedump_swap_files. */
#define MT_EXTRA(X) \
	X(statedump_process_state, "pid %d parent_pid %d tgid %d name %s") \
	X(statedump_end, " ")
#define MT_FMT_statedump_process_state "pid %d parent_pid %d tgid %d name %s"
#define MT_FMT_statedump_end " "
#define MT_REC_statedump_process_state MT_FMT_statedump_process_state
#define MT_REC_statedump_end MT_FMT_statedump_end
MT_EXTRA(MT_DECLARE)
#undef MT_DECLARE

struct mt_args;
struct file;

/* mt_dispatch.c: a hit of m, the arguments following m's format; to each
 * of m's targets in turn, or nothing when m is disarmed. */
void mt_kmarker_fire(struct mt_kmarker *m, ...);
/* The same, to owner's targets only (the state dump of one recording). */
void mt_kmarker_fire_to(const void *owner, struct mt_kmarker *m, ...);

/*
 * mt_write.c: a recording, owned by the open file that configured it
 * (mt_main.c).  Its session is mapped writable into the consumer: the
 * writer takes every address from geom, the module's own copy.  live
 * starts and stops its writers at one instant for all its markers.
 */
struct mt_rec {
	struct mt_session *session;
	struct mt_session_geom geom;
	int creds;                /* events end with MT_CREDS_FIELDS credentials (mt_ioctl.h) */
	bool hide_kaddr;          /* kernel addresses hashed (mt_hide_kaddr) */
	int live;                 /* the writers record (store-release, load-acquire) */
};
/* Record a hit of m as event id of r, its values read from ap (the
 * dispatcher's, preemption disabled). */
void mt_write_hit(struct mt_rec *r, struct mt_kmarker *m, u32 event_id, va_list ap);

/* mt_main.c: arming and the group's counts (see there) */
extern struct mutex mt_lock;
/* CAP_SYS_ADMIN in the initial namespace, as the caller and as file's
 * opener: root's sessions, not counted with the group's.  A descriptor the
 * group opened and handed to root stays the group's (perf and BPF look at
 * the file's credentials the same way). */
static inline bool mt_is_root(struct file *file)
{
	return capable(CAP_SYS_ADMIN) && file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN);
}

/* mt_kaddr.c: the key of the hash, drawn at load */
void mt_kaddr_init(void);
/* Find the fields of m that mt_hide_kaddr hashes (the format parsed). */
void mt_kaddr_fields(struct mt_kmarker *m);
/* Kernel addresses and frame numbers in m's fields replaced by a keyed hash. */
void mt_hide_kaddr(const struct mt_kmarker *m, struct mt_args *a);
static inline bool mt_kmarker_has_kaddr(const struct mt_kmarker *m)
{
	return m->kaddr_mask | m->pfn_mask;
}
/* Whether the caller and the opener of file may see kernel addresses. */
bool mt_may_see_kaddr(struct file *file);

/* mt_hooks.c */
int mt_hooks_init(void);                /* parse formats, check every hook */
void mt_hooks_exit(void);
/* m's hits also to t (its hooks registered with the first target): 1 if
 * armed, 0 if not (unavailable, no hook registers, no memory) */
int mt_kmarker_arm(struct mt_kmarker *m, const struct mt_ktarget *t);
/* owner's targets of m taken out (NULL: every target); hooks left without
 * a target unregistered.  Hits may still run for owner until mt_hooks_sync. */
void mt_kmarker_disarm(struct mt_kmarker *m, const void *owner);
void mt_hooks_sync(void);               /* no probe runs after it returns */
int mt_kmarker_available(const struct mt_kmarker *m);
/* Why m is unavailable, in buf. */
void mt_kmarker_why(const struct mt_kmarker *m, char *buf, size_t len);
extern struct mt_kmarker *const mt_catalog[];
extern const unsigned mt_catalog_size;

/* mt_ksym.c: a kernel symbol's address (kallsyms), 0 if unknown. */
unsigned long mt_ksym(const char *name);

/* mt_src_syscall.c: copy a user string without faulting, cut at len-1. */
const char *mt_user_string(const char __user *p, char *buf, size_t len);

/* mt_src_kernel.c */
int mt_src_kernel_init(void);

/* mt_statedump.c */
int mt_statedump_init(void);
void mt_statedump(struct mt_rec *r);   /* to r's targets only */
unsigned long mt_swap_file_of_type(unsigned type);

#endif
