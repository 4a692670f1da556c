/*
 * mt_ring.h - lock-free ring buffer of sub-buffers (shared with marktap.ko).
 *
 * One ring per CPU.  Writers on any CPU (or several processes sharing the
 * mapping) reserve space with a compare-and-swap on write_pos, copy their
 * event, and commit by adding its length to the sub-buffer's commit count.
 * A sub-buffer is complete when the bytes committed in it reach
 * subbuf_size: events, plus the padding the writer that switched away from
 * it committed for the unused tail.  The consumer reads complete
 * sub-buffers in order and releases them by moving read_pos.
 *
 * Positions are absolute byte counts that never wrap (64 bits):
 *   subbuf index = (pos / subbuf_size) % num_subbuf
 *   cycle        =  pos / (subbuf_size * num_subbuf)
 * A slot has received subbuf_size bytes per cycle, so the slot's cycle c
 * is complete when its cumulative commit count is (c + 1) * subbuf_size.
 *
 * Memory layout (one ring, in shared memory or kernel pages):
 *
 *   +-----------------+------------------------------+----------------------+
 *   | struct mt_ring  | struct mt_ring_subbuf [num]  | data [num * size]    |
 *   +-----------------+------------------------------+----------------------+
 *
 * A commit count also counts events: it is bytes + events * 2^36
 * (MT_RING_COMMIT_EVENT).  An event's commit adds its length plus
 * MT_RING_COMMIT_EVENT in the one locked add it makes anyway; padding and
 * flushes add bytes only.  So the consumer knows how many events a
 * complete sub-buffer holds without walking them (marktrace's status
 * line): the difference with the count it saw when it took the slot's
 * previous cycle is one sub-buffer of bytes plus the events * 2^36.
 * Completeness compares the low 36 bits (bytes modulo 2^36: 64 cycles of
 * the largest, 1 GiB, sub-buffer); every 2^36 bytes they carry into the
 * events' bits, which the difference of whole counts does not mind.
 * Events per sub-buffer are known modulo 2^28 (more than 1 GiB of the
 * smallest events).
 *
 * Modes: MT_RING_DISCARD refuses to enter a sub-buffer the consumer has
 * not released and counts the event as lost; MT_RING_OVERWRITE enters it
 * anyway (flight recorder) and the lost sub-buffers show as gaps in seq.
 *
 * Trust: the writers compute every address from a struct mt_ring_geom
 * their caller vouches for, and from positions masked by it.  User space
 * passes the ring's own (mt_ring_reserve and friends: a traced process
 * that scribbles over its mapping only hurts itself).  marktap.ko passes
 * a copy it keeps (the _g variants): the ring is mapped writable into the
 * consumer, so its header may say anything, at any moment; then the worst
 * a scribbler gets is events lost (counted in the ring).
 */
#ifndef MT_RING_H
#define MT_RING_H

#include "mt_compat.h"
#include "mt_rseq.h"
#ifndef MT_HAVE_RSEQ
struct mt_rseq_ctx;   /* never used: every ring takes locked operations */
#endif

#define MT_CACHELINE 64

#define MT_RING_COMMIT_BYTE_BITS 36
#define MT_RING_COMMIT_EVENT     (1ull << MT_RING_COMMIT_BYTE_BITS)
#define MT_RING_COMMIT_BYTES(c)  ((c) & (MT_RING_COMMIT_EVENT - 1))
#define MT_RING_COMMIT_EVENTS(c) ((c) >> MT_RING_COMMIT_BYTE_BITS)
#define MT_RING_EVENTS_UNKNOWN   (~0ull)

enum mt_ring_mode { MT_RING_DISCARD = 0, MT_RING_OVERWRITE = 1 };

/* Per sub-buffer control, written by writers, read by the consumer. */
struct mt_ring_subbuf {
	mt_u64 commit;      /* cumulative bytes and events committed     */
	mt_u64 seq;         /* pos / subbuf_size of the cycle it holds   */
	mt_u64 ts_begin;    /* timestamp of its first event              */
	mt_u64 ts_end;      /* timestamp of the writer that closed it    */
	mt_u64 data_size;   /* bytes of events (the rest is padding)     */
	mt_u64 lost;        /* ring's lost count when it was closed      */
	/* per-CPU rings (mt_rseq.h): what was committed from elsewhere than
	 * the ring's CPU, with locked adds; the sub-buffer's count is the sum */
	mt_u64 commit_far;
	mt_u64 pad[1];
};

/* Where a ring's parts are; set once at creation.  cpu is not used by
 * the writers. */
struct mt_ring_geom {
	u32 subbuf_size;        /* power of two */
	u32 num_subbuf;         /* power of two */
	u32 mode;
	u32 cpu;
	mt_u64 data_offset;     /* from the start of struct mt_ring */
};

struct mt_ring {
	/* written by writers */
	mt_u64 write_pos __attribute__((aligned(MT_CACHELINE)));
	mt_u64 lost;            /* events not recorded: buffer full or too big */
	mt_u64 lost_too_big;    /* of which: larger than a sub-buffer          */
	mt_u64 last_ts;         /* a recent reservation's time (compact
				   headers, mt_ring_reserve_compact); in the
				   writers' line, so no offset below moves */
	/* written by the consumer */
	mt_u64 read_pos __attribute__((aligned(MT_CACHELINE)));
	char read_pos_line[MT_CACHELINE - sizeof(mt_u64)];   /* alone on its line */
	/* set once at creation: geom, or its fields by name (the union is
	 * not aligned itself: an aligned member would pad it to a line and
	 * move subbuf[]) */
	union {
		struct {
			u32 subbuf_size;
			u32 num_subbuf;
			u32 mode;
			u32 cpu;
			mt_u64 data_offset;
		};
		struct mt_ring_geom geom;
	};
	struct mt_ring_subbuf subbuf[];
};
/* the layout the consumer, libmarktap and marktap.ko share */
_Static_assert(__builtin_offsetof(struct mt_ring, subbuf_size) == 2 * MT_CACHELINE &&
	       __builtin_offsetof(struct mt_ring, subbuf) == 2 * MT_CACHELINE + 24,
	       "struct mt_ring's layout");

/* A reservation: where to write, and what to commit. */
struct mt_ring_slot {
	mt_u64 pos;    /* absolute position of the event */
	u32 len;
	u32 closed;    /* the reservation completed the previous sub-buffer */
	mt_u64 ts;     /* timestamp taken inside the reservation */
	u32 extend;    /* compact reservation: ts needs an extended header */
};

/* A complete sub-buffer handed to the consumer. */
struct mt_ring_packet {
	const char *data;
	mt_u64 data_size;
	mt_u64 seq;
	mt_u64 ts_begin, ts_end;
	mt_u64 lost;
	mt_u64 events;      /* events in it, or MT_RING_EVENTS_UNKNOWN */
};

/* Bytes needed for a ring with these geometry parameters. */
mt_u64 mt_ring_bytes(u32 subbuf_size, u32 num_subbuf);
/* The geometry mt_ring_init gives a ring, computed, not read. */
void mt_ring_geom_init(struct mt_ring_geom *g, u32 subbuf_size, u32 num_subbuf, u32 mode,
		       u32 cpu);
/* Initialise a zeroed area of mt_ring_bytes() bytes. */
void mt_ring_init(struct mt_ring *r, u32 subbuf_size, u32 num_subbuf, u32 mode, u32 cpu);

static inline char *mt_ring_data(struct mt_ring *r)
{
	return (char *)r + r->data_offset;
}

/* Where the slot's event goes: within the data whatever s->pos says. */
static inline char *
mt_ring_slot_ptr_g(struct mt_ring *r, const struct mt_ring_geom *g, const struct mt_ring_slot *s)
{
	mt_u64 size = (mt_u64)g->subbuf_size * g->num_subbuf;
	return (char *)r + g->data_offset + (s->pos & (size - 1));
}

static inline char *mt_ring_slot_ptr(struct mt_ring *r, const struct mt_ring_slot *s)
{
	return mt_ring_slot_ptr_g(r, &r->geom, s);
}

/* pos / subbuf_size as a shift (sizes are powers of two): for a size read
 * from memory the compiler would emit a 64-bit division at every commit. */
static inline mt_u64
mt_ring_subbuf_seq_g(const struct mt_ring_geom *g, mt_u64 pos)
{
	return pos >> __builtin_ctz(g->subbuf_size);
}

static inline mt_u64 mt_ring_subbuf_seq(const struct mt_ring *r, mt_u64 pos)
{
	return mt_ring_subbuf_seq_g(&r->geom, pos);
}

/* The control of pos's sub-buffer: within subbuf[] whatever pos says. */
static inline struct mt_ring_subbuf *
mt_ring_subbuf_at_g(struct mt_ring *r, const struct mt_ring_geom *g, mt_u64 pos)
{
	return &r->subbuf[mt_ring_subbuf_seq_g(g, pos) & (g->num_subbuf - 1)];
}

static inline struct mt_ring_subbuf *mt_ring_subbuf_at(struct mt_ring *r, mt_u64 pos)
{
	return mt_ring_subbuf_at_g(r, &r->geom, pos);
}

/* A sub-buffer's commit count, for the consumer: acquire, pairing with
 * the writers' release commits, on both counts (each only grows, so the
 * sum is never more than what was committed when the second was read). */
static inline mt_u64 mt_ring_subbuf_committed(const struct mt_ring_subbuf *sb)
{
	mt_u64 c = mt_load_acquire(&sb->commit);

	return c + mt_load_acquire(&sb->commit_far);
}

/*
 * Close the sub-buffer that ends at or before pos: record where its events
 * end, when, and the lost count so far.  Only the writer whose reservation
 * reached the end of the sub-buffer gets here, once per sub-buffer cycle,
 * so these plain stores race with nobody; they are published by the commit
 * (release) that follows, which the consumer reads with acquire.
 */
static inline void mt_ring_close_subbuf(struct mt_ring *r, struct mt_ring_subbuf *sb,
			 mt_u64 data_size, mt_u64 ts)
{
	sb->data_size = data_size;
	sb->ts_end = ts;
	sb->lost = mt_load_relaxed(&r->lost);
}

#ifdef __KERNEL__
/*
 * The kernel's rings see a failed compare-and-swap only from an interrupt
 * or NMI nested on the same CPU, each of which completes its reservation,
 * or from a consumer scribbling write_pos: past this many the event is
 * lost (counted) rather than the CPU held in a probe by a user's loop.
 */
#define MT_RING_CAS_TRIES 64
#endif

/*
 * Reserve len bytes, plus extra when ts_bits is not 0 and the timestamp
 * is 2^ts_bits ns or more past r->last_ts (slot->extend says so: a
 * compact header, mt_event.h, cannot hold it).  0 on success, -ENOSPC
 * (counted as lost) otherwise.  Inline, as mt_ring_commit: together they
 * are most of a hit's time; with ts_bits and extra constant 0 this is
 * mt_ring_reserve as it always was.  The geometry is g's: positions read
 * from the ring (write_pos, read_pos) are only masked by it or compared.
 */
static inline __attribute__((always_inline)) int
mt_ring_reserve_core_g(struct mt_ring *r, const struct mt_ring_geom *g, u32 len0, u32 extra,
		       unsigned ts_bits, struct mt_ring_slot *slot, const struct mt_rseq_ctx *rq)
{
	const mt_u64 size = g->subbuf_size;
	mt_u64 old, begin, end, off, pad;
	mt_u64 ts;
	u32 len = len0;
	int extend = 0;
#ifdef MT_RING_CAS_TRIES
	unsigned tries = 0;
#endif

	if (mt_unlikely(len0 + (mt_u64)extra > size)) {
		mt_add_relaxed(&r->lost_too_big, 1);
		mt_add_relaxed(&r->lost, 1);
		return -ENOSPC;
	}
	old = mt_load_relaxed(&r->write_pos);
	for (;;) {
		/*
		 * The timestamp is read after write_pos and before the CAS: a
		 * CAS that succeeds proves no reservation happened in between,
		 * so timestamps increase in reservation order, per ring.
		 */
		ts = mt_clock_ns();
		/*
		 * last_ts is the time of a reservation before ours (its CAS
		 * preceded our load of write_pos: a later one would make our
		 * CAS fail; x86's locked CAS keeps this load before it), so
		 * never later than that of the event just before ours: the gap
		 * measured here is never smaller than the true one.  A value
		 * from the future (a clock step back) gives a huge gap:
		 * extended too.  A branch (taken once in a long while), not a
		 * select: the CAS's operand then does not wait for the clock.
		 */
		if (ts_bits && mt_unlikely(!extend &&
					   ts - mt_load_relaxed(&r->last_ts) >= (1ull << ts_bits))) {
			extend = 1;
			len = len0 + extra;
			continue;       /* the clock again, later still: still far */
		}
		off = old & (size - 1);
		pad = off + len > size ? size - off : 0;
		begin = old + pad;
		end = begin + len;
		if ((begin & (size - 1)) == 0 && g->mode == MT_RING_DISCARD) {
			/*
			 * Entering a sub-buffer: it must have been released by
			 * the consumer.  Acquire pairs with the release in
			 * mt_ring_put_packet: its reads of the data are done.
			 */
			mt_u64 rd = mt_load_acquire(&r->read_pos);
			if (begin - rd >= size * g->num_subbuf) {
				mt_add_relaxed(&r->lost, 1);
				return -ENOSPC;
			}
		}
#ifdef MT_HAVE_RSEQ
		if (rq) {
			/* a compare-and-store on the ring's CPU (mt_rseq.h) */
			int rc = mt_rseq_cas(&r->write_pos, old, end, rq);
			if (mt_likely(rc > 0))
				break;
			if (rc < 0)
				return -EAGAIN;   /* not on the ring's CPU now */
			old = mt_load_relaxed(&r->write_pos);
			continue;
		}
#endif
		if (mt_cas_relaxed(&r->write_pos, &old, end))
			break;
		/* old now holds the current write_pos: retry */
#ifdef MT_RING_CAS_TRIES
		if (++tries == MT_RING_CAS_TRIES) {
			mt_add_relaxed(&r->lost, 1);
			return -ENOSPC;
		}
#endif
	}
	/* may go back in time when two writers store out of order: later
	 * writers then measure a larger gap, which is safe */
	if (ts_bits)
		mt_store_relaxed(&r->last_ts, ts);
	slot->closed = 0;
	if (pad) {
		struct mt_ring_subbuf *prev = mt_ring_subbuf_at_g(r, g, old);
		mt_ring_close_subbuf(r, prev, off, ts);
		/* release: the close fields before the completing commit */
		if (rq)   /* rare enough for a locked add, wherever we run */
			slot->closed = ((mt_add_release(&prev->commit_far, pad) +
					 mt_load_relaxed(&prev->commit)) & (size - 1)) == 0;
		else
			slot->closed = (mt_add_release(&prev->commit, pad) & (size - 1)) == 0;
	}
	if ((begin & (size - 1)) == 0) {
		/*
		 * First event of this sub-buffer cycle: only we write these.
		 * The close fields belong to the one writer whose reservation
		 * reaches the sub-buffer's end (possibly us, just below).
		 */
		struct mt_ring_subbuf *sb = mt_ring_subbuf_at_g(r, g, begin);
		sb->seq = mt_ring_subbuf_seq_g(g, begin);
		sb->ts_begin = ts;
	}
	if ((end & (size - 1)) == 0)
		mt_ring_close_subbuf(r, mt_ring_subbuf_at_g(r, g, begin), size, ts);  /* exact fill */
	slot->pos = begin;
	slot->len = len;
	slot->extend = (u32)extend;
	slot->ts = ts;
	return 0;
}

/* mt_ring_reserve_core_g with the ring's own geometry. */
static inline __attribute__((always_inline)) int
mt_ring_reserve_core(struct mt_ring *r, u32 len0, u32 extra, unsigned ts_bits,
		     struct mt_ring_slot *slot, const struct mt_rseq_ctx *rq)
{
	return mt_ring_reserve_core_g(r, &r->geom, len0, extra, ts_bits, slot, rq);
}

/* Reserve len bytes; 0 on success, -ENOSPC (counted as lost) otherwise. */
static inline int mt_ring_reserve(struct mt_ring *r, u32 len, struct mt_ring_slot *slot)
{
	return mt_ring_reserve_core(r, len, 0, 0, slot, NULL);
}

/* Reserve for an event whose first header is compact (ts_bits of time)
 * unless its time is too far from the previous event's: then extra more
 * bytes, and slot->extend set. */
static inline int mt_ring_reserve_compact(struct mt_ring *r, u32 len, u32 extra,
					  unsigned ts_bits, struct mt_ring_slot *slot)
{
	return mt_ring_reserve_core(r, len, extra, ts_bits, slot, NULL);
}

/* Publish the event written at the slot.  1 when a sub-buffer became
 * complete with this event (its commit, or the padding its reservation
 * committed): the consumer may want waking. */
static inline __attribute__((always_inline)) int
mt_ring_commit_g(struct mt_ring *r, const struct mt_ring_geom *g, const struct mt_ring_slot *slot)
{
	/* release: the event bytes are visible before the count says so; a
	 * sub-buffer's commits add up to whole sub-buffers, cycle after cycle
	 * (the event count above the bytes costs nothing: the same add) */
	mt_u64 c = mt_add_release(&mt_ring_subbuf_at_g(r, g, slot->pos)->commit,
				  slot->len + MT_RING_COMMIT_EVENT);

	return slot->closed || (c & (g->subbuf_size - 1)) == 0;
}

static inline int mt_ring_commit(struct mt_ring *r, const struct mt_ring_slot *slot)
{
	return mt_ring_commit_g(r, &r->geom, slot);
}

#ifdef MT_HAVE_RSEQ
/*
 * Per-CPU rings (mt_rseq.h): reserve on the CPU rq names, whose ring r
 * is; -EAGAIN when the thread is no longer there (the caller takes its
 * CPU's ring), -ENOSPC as mt_ring_reserve_compact.
 */
static inline int mt_ring_reserve_percpu(struct mt_ring *r, u32 len, u32 extra,
					 unsigned ts_bits, struct mt_ring_slot *slot,
					 const struct mt_rseq_ctx *rq)
{
	return mt_ring_reserve_core(r, len, extra, ts_bits, slot, rq);
}

/* Commit on the ring's CPU when the writer is still there, from anywhere
 * else with a locked add to commit_far; as mt_ring_commit.  A sub-buffer
 * completed by two commits at once, one on each count, may be seen
 * complete by neither writer: the consumer's timers read it then. */
static inline int mt_ring_commit_percpu(struct mt_ring *r, const struct mt_ring_slot *slot,
					const struct mt_rseq_ctx *rq)
{
	struct mt_ring_subbuf *sb = mt_ring_subbuf_at(r, slot->pos);
	mt_u64 n = slot->len + MT_RING_COMMIT_EVENT, c;

	if (mt_likely(mt_rseq_add(&sb->commit, n, rq, &c) == 0))
		c += mt_load_relaxed(&sb->commit_far);
	else
		c = mt_add_release(&sb->commit_far, n) + mt_load_relaxed(&sb->commit);
	return slot->closed || (c & (r->subbuf_size - 1)) == 0;
}
#endif

/* Count an event that was never reserved (e.g. a writer-side failure). */
static inline void mt_ring_count_lost(struct mt_ring *r)
{
	mt_add_relaxed(&r->lost, 1);
}

/* Consumer side (one consumer per ring). */
int mt_ring_get_packet(struct mt_ring *r, struct mt_ring_packet *pkt);
void mt_ring_put_packet(struct mt_ring *r);
/* Close the current sub-buffer so the consumer can read it; 1 if a
 * packet was closed, 0 if there was nothing to close.  Safe while writers
 * run (the switch timer).  now == 0: the clock, read as writers read
 * theirs (after write_pos, before the CAS that closes), so no event of the
 * packet is later than its end and none of the next one earlier. */
int mt_ring_flush(struct mt_ring *r, mt_u64 now);
/* Overwrite mode, after writers stopped: position of the oldest
 * sub-buffer still held, to start reading from. */
void mt_ring_seek_oldest(struct mt_ring *r);

#endif
