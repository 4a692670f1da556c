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
 * Modes: MT_RING_DISCARD refuses to enter a sub-buffer the consumer has
 * not released and counts the event as lost; MT_RING_OVERWRITE enters it
 * anyway (flight recorder) and the lost sub-buffers show as gaps in seq.
 */
#ifndef MT_RING_H
#define MT_RING_H

#include "mt_compat.h"

#define MT_CACHELINE 64

enum mt_ring_mode { MT_RING_DISCARD = 0, MT_RING_OVERWRITE = 1 };

/* Per sub-buffer control, written by writers, read by the consumer. */
struct mt_ring_subbuf {
	mt_u64 commit;      /* cumulative bytes committed, all cycles    */
	mt_u64 seq;         /* pos / subbuf_size of the cycle it holds   */
	mt_u64 ts_begin;    /* timestamp of its first event              */
	mt_u64 ts_end;      /* timestamp of the writer that closed it    */
	mt_u64 data_size;   /* bytes of events (the rest is padding)     */
	mt_u64 lost;        /* ring's lost count when it was closed      */
	mt_u64 pad[2];
};

struct mt_ring {
	/* written by writers */
	mt_u64 write_pos __attribute__((aligned(MT_CACHELINE)));
	mt_u64 lost;            /* events not recorded: buffer full or too big */
	mt_u64 lost_too_big;    /* of which: larger than a sub-buffer          */
	/* written by the consumer */
	mt_u64 read_pos __attribute__((aligned(MT_CACHELINE)));
	/* set once at creation */
	u32 subbuf_size __attribute__((aligned(MT_CACHELINE)));  /* power of two */
	u32 num_subbuf;                                          /* power of two */
	u32 mode;
	u32 cpu;
	mt_u64 data_offset;     /* from the start of struct mt_ring */
	struct mt_ring_subbuf subbuf[];
};

/* A reservation: where to write, and what to commit. */
struct mt_ring_slot {
	mt_u64 pos;    /* absolute position of the event */
	u32 len;
	u32 closed;    /* the reservation completed the previous sub-buffer */
	mt_u64 ts;     /* timestamp taken inside the reservation */
};

/* A complete sub-buffer handed to the consumer. */
struct mt_ring_packet {
	const char *data;
	mt_u64 data_size;
	mt_u64 seq;
	mt_u64 ts_begin, ts_end;
	mt_u64 lost;
};

/* Bytes needed for a ring with these geometry parameters. */
mt_u64 mt_ring_bytes(u32 subbuf_size, u32 num_subbuf);
/* Initialise a zeroed area of mt_ring_bytes() bytes. */
void mt_ring_init(struct mt_ring *r, u32 subbuf_size, u32 num_subbuf, u32 mode, u32 cpu);

static inline char *mt_ring_data(struct mt_ring *r)
{
	return (char *)r + r->data_offset;
}

/* Reserve len bytes; 0 on success, -ENOSPC (counted as lost) otherwise. */
int mt_ring_reserve(struct mt_ring *r, u32 len, struct mt_ring_slot *slot);

static inline char *mt_ring_slot_ptr(struct mt_ring *r, const struct mt_ring_slot *s)
{
	mt_u64 size = (mt_u64)r->subbuf_size * r->num_subbuf;
	return mt_ring_data(r) + (s->pos & (size - 1));
}

/* Publish the event written at the slot.  1 when a sub-buffer became
 * complete with this event (its commit, or the padding its reservation
 * committed): the consumer may want waking. */
int mt_ring_commit(struct mt_ring *r, const struct mt_ring_slot *slot);

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
 * run (the switch timer).  now == 0: the clock, read once the sub-buffer
 * is closed, so no event of the packet is later than its end. */
int mt_ring_flush(struct mt_ring *r, mt_u64 now);
/* Overwrite mode, after writers stopped: position of the oldest
 * sub-buffer still held, to start reading from. */
void mt_ring_seek_oldest(struct mt_ring *r);

#endif
