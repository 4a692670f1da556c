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
 *   mt_catalog[] --> struct mt_kmarker { name, format, target, hooks[] }
 *                                                              |
 *                              struct mt_hook { kind, name, refs, probe... }
 *
 * A hook's probe function calls mt_kmarker_fire(&mt_m_NAME, args...) with
 * the arguments the seed's format expects; the call returns at once when
 * the marker is not armed, else the marker's target says where the hit
 * goes (mt_dispatch.c).
 */
#ifndef MT_KMOD_H
#define MT_KMOD_H

#include <linux/kprobes.h>
#include <linux/notifier.h>
#include <linux/tracepoint.h>
#include "mt_fmt.h"
#include "mt_catalog.h"

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
 * Where an armed marker's hits go: its target, one int, stored once to
 * arm or disarm (WRITE_ONCE, under mt_lock) and read once per hit
 * (READ_ONCE, mt_dispatch.c), so a hit sees one whole target.
 *
 *   MT_TARGET_NONE               disarmed: the hit returns at once
 *   0 ... MT_EVENTS_MAX - 1      an event id of the recording session:
 *                                the recorder's writer (mt_write.c)
 *   MT_TARGET_LUA + binding      a binding of the loaded Lua script: its
 *                                native plan or Lua handler (mt_lua_run.c)
 *
 * The two kinds never mix: a Lua script's file owns the device, so no
 * recording session exists while a script is loaded (mt_main.c).
 */
#define MT_TARGET_NONE (-1)
#define MT_TARGET_LUA 0x10000     /* above every event id (mt_dispatch.c checks) */

static inline int mt_target_event(int event_id)
{
	return event_id;
}

static inline int mt_target_lua(unsigned binding)
{
	return MT_TARGET_LUA + (int)binding;
}

static inline bool mt_target_armed(int target)
{
	return target >= 0;
}

static inline bool mt_target_is_lua(int target)
{
	return target >= MT_TARGET_LUA;
}

/* The event id of a recorder's target, the binding of a Lua target. */
static inline int mt_target_event_id(int target)
{
	return target;
}

static inline unsigned mt_target_binding(int target)
{
	return (unsigned)(target - MT_TARGET_LUA);
}

struct mt_kmarker {
	const char *name;
	const char *format;       /* as in the catalogue: MARK_NOARGS is " " */
	const char *recorded;     /* as in the session (gen-catalog.sh: %c) */
	const char *source;       /* how this kernel fires it, for the listing */
	const char *unavailable;  /* set if it cannot exist on this kernel: why */
	struct mt_hook *hooks[MT_KMARKER_HOOKS];
	int target;               /* where hits go (MT_TARGET_NONE: disarmed) */
	int lua_values;           /* bound to Lua: its handler reads the values */
	u32 kaddr_mask;           /* fields that may hold kernel addresses, */
	u32 pfn_mask;             /* or page frame numbers (mt_hide_kaddr) */
	struct mt_format fmt;     /* parsed at load */
};

/* Whether m is armed, read once: for the listing, and for hooks that do
 * work of their own before firing (a read of user memory, a lookup). */
static inline bool mt_kmarker_armed(const struct mt_kmarker *m)
{
	return mt_target_armed(READ_ONCE(m->target));
}

/* Define marker NAME (of the catalogue) fired by the listed hooks. */
#define MT_KMARKER(n, src, ...) \
	struct mt_kmarker mt_m_##n = { .name = #n, .format = MT_FMT_##n, \
		.recorded = MT_REC_##n, .source = src, .target = MT_TARGET_NONE, \
		.hooks = { __VA_ARGS__ } }
/* A catalogue marker this kernel has no place for. */
#define MT_KMARKER_NONE(n, why) \
	struct mt_kmarker mt_m_##n = { .name = #n, .format = MT_FMT_##n, \
		.recorded = MT_REC_##n, .source = "none", .unavailable = why, \
		.target = MT_TARGET_NONE }

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

struct mt_session;
struct mt_session_geom;
struct mt_args;
struct file;

/* mt_dispatch.c: a hit of m, the arguments following m's format; to m's
 * target, or nothing when m is disarmed. */
void mt_kmarker_fire(struct mt_kmarker *m, ...);

/* mt_write.c: record a hit of m as event id of the live session, its
 * values read from ap (the dispatcher's, preemption disabled). */
void mt_write_hit(struct mt_kmarker *m, int event_id, va_list ap);
/* Publish the session writers record into (NULL: none), and its geometry
 * as the module computed it (g, copied: never read from the mapping). */
void mt_write_set_session(struct mt_session *s, const struct mt_session_geom *g,
			  int creds, bool hide_kaddr);
int mt_write_init(void);

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
/* m's hits to target (mt_target_event or mt_target_lua), its hooks
 * registered: 1 if armed, 0 if not (unavailable, armed already, no hook
 * registers) */
int mt_kmarker_arm(struct mt_kmarker *m, int target);
void mt_kmarker_disarm(struct mt_kmarker *m);
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
void mt_statedump(void);
unsigned long mt_swap_file_of_type(unsigned type);

#endif
