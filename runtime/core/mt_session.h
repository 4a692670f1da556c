/*
 * mt_session.h - a recording session in shared memory (shared with marktap.ko).
 *
 * The traced side (libmarktap in each traced process, or marktap.ko) and
 * the consumer (marktrace record) share one mapping laid out as:
 *
 *   +--------------------+----------------------------+------+------+-----+
 *   | struct mt_session  | events[MT_EVENTS_MAX]       | ring | ring | ... |
 *   | geometry, patterns | id -> name, format          | cpu0 | cpu1 |     |
 *   +--------------------+----------------------------+------+------+-----+
 *                                                     ^ rings_offset (page aligned)
 *
 * User space: a memfd that marktrace creates and passes to the traced
 * program (MARKTAP_SHM_FD) or to a running one over its agent socket.
 * Kernel: vmalloc'ed by marktap.ko and mmap'ed from /dev/marktap.
 * The consumer code is the same for both.
 */
#ifndef MT_SESSION_H
#define MT_SESSION_H

#include "mt_ring.h"

#define MT_SESSION_MAGIC    0x4d54534eu  /* "MTSN" */
#define MT_SESSION_VERSION  10  /* 5: commit counts count events too; 6: user
				   events in the compact layout (mt_event.h); 7:
				   sync (per-CPU rings written without locked
				   instructions); 8: processes (who joined): an
				   older libmarktap refuses the session; 9:
				   context; 10: pattern_hits */
#define MT_EVENTS_MAX       1024
#define MT_EVENT_NAME_MAX   64
#define MT_EVENT_FORMAT_MAX 256
#define MT_PATTERNS_MAX     1024

enum mt_domain { MT_DOMAIN_USER = 0, MT_DOMAIN_KERNEL = 1 };

enum mt_event_state { MT_EV_FREE = 0, MT_EV_CLAIMED = 1, MT_EV_READY = 2 };

/* One event class: its id is its index in events[]. */
struct mt_session_event {
	u32 state;      /* enum mt_event_state, READY published with release */
	u32 pad;
	char name[MT_EVENT_NAME_MAX];
	char format[MT_EVENT_FORMAT_MAX];
};

struct mt_session {
	u32 magic;
	u32 version;
	u32 domain;       /* enum mt_domain */
	u32 ncpu;         /* rings: one per possible CPU */
	u32 subbuf_size;
	u32 num_subbuf;
	u32 mode;         /* enum mt_ring_mode */
	u32 active;       /* writers record only while nonzero */
	u32 nevents;      /* events[] slots claimed so far */
	/* user sessions: a futex; bit 0 set while the consumer sleeps on it.
	 * A writer that completes a sub-buffer of a ring holding wake_subbufs
	 * or more unconsumed sub-buffers clears the bit and wakes it (the
	 * consumer batches its copying: it also drains on its own timers).
	 * wake_subbufs 0: never (a flight recorder, read at the end). */
	u32 consumer_wait;
	u32 wake_subbufs;
	/* how writers reserve and commit (enum mt_sync): MT_SYNC_LOCKED with
	 * locked instructions from any CPU; MT_SYNC_PERCPU only on the ring's
	 * own CPU, in restartable sequences (mt_rseq.h), and marktrace moves
	 * to a CPU to flush its ring.  Set before any writer attaches. */
	u32 sync;
	/* user sessions: each process that attaches adds one (libmarktap's
	 * record.c), so that marktrace can say that a command never joined
	 * (not linked with libmarktap).  Written by the traced side: a count
	 * for messages, trusted for nothing else. */
	u32 processes;
	/* user sessions: the context fields every event carries after its
	 * tid (enum mt_context, mt_event.h), set before any writer attaches;
	 * a writer that does not know a bit refuses the session (version) */
	u32 context;
	mt_u64 ring_bytes;
	mt_u64 rings_offset;
	mt_u64 total_bytes;
	mt_u64 events_dropped;  /* hits of markers with no free event slot */
	/* user sessions: bit i set once the i-th pattern (of the first 64)
	 * matched the name of a marker of a process that joined, excluded
	 * or not (libmarktap's record.c, as it arms): marktrace names the
	 * patterns that matched nothing, exclusions included, which the
	 * classes of the trace cannot tell.  Written by the traced side: for
	 * messages only. */
	mt_u64 pattern_hits;
	struct mt_uclock clock; /* user sessions: the TSC clock, if enabled */
	/* enable patterns: globs separated by '\n'; empty means every marker */
	char patterns[MT_PATTERNS_MAX];
	struct mt_session_event events[MT_EVENTS_MAX];
};

enum mt_sync { MT_SYNC_LOCKED = 0, MT_SYNC_PERCPU = 1 };

/* Where the rings start: the first page after the session header. */
static inline mt_u64 mt_session_rings_offset(void)
{
	return (sizeof(struct mt_session) + 4095) & ~(mt_u64)4095;
}

/*
 * A session's layout computed from its parameters, never read from the
 * mapping: what marktap.ko writes through (its consumer may rewrite the
 * header and the rings' at any moment).  ring is every ring's geometry
 * (its cpu 0).
 */
struct mt_session_geom {
	u32 ncpu;
	mt_u64 ring_bytes, rings_offset;
	struct mt_ring_geom ring;
};

/* 0, or -EINVAL when mt_session_bytes refuses the parameters. */
int mt_session_geom_init(struct mt_session_geom *g, u32 ncpu, u32 subbuf_size,
			 u32 num_subbuf, u32 mode);

/* Ring cpu (below g->ncpu) by g alone. */
static inline struct mt_ring *mt_session_ring_g(struct mt_session *s,
						const struct mt_session_geom *g, unsigned cpu)
{
	return (struct mt_ring *)((char *)s + g->rings_offset + (mt_u64)cpu * g->ring_bytes);
}

/* The writers' way to a ring: offsets from the header, which the traced
 * program can change.  The consumer (marktrace) does not use it: it keeps
 * the addresses it computed at setup (runtime/marktrace/consumer.c). */
static inline struct mt_ring *mt_session_ring(struct mt_session *s, unsigned cpu)
{
	return (struct mt_ring *)((char *)s + s->rings_offset + (mt_u64)cpu * s->ring_bytes);
}

/* Does the ring hold s->wake_subbufs unconsumed sub-buffers (consumer_wait)?
 * Never when wake_subbufs is 0. */
static inline int mt_session_ring_at_mark(const struct mt_session *s, struct mt_ring *r)
{
	mt_u64 unread = mt_load_relaxed(&r->write_pos) - mt_load_relaxed(&r->read_pos);

	return s->wake_subbufs && unread >= (mt_u64)s->wake_subbufs * r->subbuf_size;
}

/* Bytes needed; 0 if the geometry is invalid (sizes not powers of two...). */
mt_u64 mt_session_bytes(u32 ncpu, u32 subbuf_size, u32 num_subbuf);
/* Lay out a zeroed area of mt_session_bytes() bytes. */
void mt_session_init(struct mt_session *s, u32 domain, u32 ncpu, u32 subbuf_size,
		     u32 num_subbuf, u32 mode);
/* Check a mapping of len bytes is a session we can use; 0 or -EINVAL. */
int mt_session_check(const struct mt_session *s, mt_u64 len);
/* Does name match the session's enable patterns?  A name is taken when an
 * including glob takes it (or none is given: "!X" alone is all but X) and
 * no "!GLOB" excludes it, in whatever order they come. */
int mt_session_wants(const struct mt_session *s, const char *name);
/* The same for patterns (terminated) the caller holds: marktap.ko takes
 * a copy of the mapping's, which its consumer may be rewriting. */
int mt_patterns_want(const char *patterns, const char *name);
/* Which of the first 64 patterns (non-empty lines, in order) match name,
 * exclusions by their glob: bit i for the i-th. */
mt_u64 mt_patterns_hits(const char *patterns, const char *name);
/*
 * Find or add the event class (name, format); its id, or -ENOSPC.  Safe
 * on a session its consumer scribbles over: it writes only into the slot
 * it claims, an index checked against MT_EVENTS_MAX, and reads names and
 * formats with bounds (the ids may then be wrong, not our memory).
 */
int mt_session_event_id(struct mt_session *s, const char *name, const char *format);

/* Shell-style glob: '*' any run, '?' one character, '[...]' a class. */
int mt_glob_match(const char *pattern, const char *name);

#endif
