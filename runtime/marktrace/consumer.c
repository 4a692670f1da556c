/*
 * consumer.c - marktrace's side of a session's rings, for memory that the
 * traced program can write.
 *
 * A user session is a memfd shared with the traced program: whatever that
 * program writes there (a bug, or on purpose: marktrace record -p runs as
 * root), marktrace must neither crash, nor hang, nor touch memory outside
 * the mapping.  So the consumer never takes an address, a size or a count
 * from shared memory:
 *
 *  - the geometry (CPU count, sub-buffer size and number, mode, where each
 *    ring, its sub-buffer controls and its data start) is what marktrace
 *    laid out itself, kept here from setup on;
 *  - read_pos is ours: a copy is stored for the writers, never read back;
 *  - what writers publish (write_pos, commit counts, a sub-buffer's
 *    data_size, seq, timestamps, lost counts) is read once and checked
 *    against that geometry before it is used: a position the writers cannot
 *    have reached, or a packet larger than a sub-buffer, marks the session
 *    corrupt (c->error) and ends the recording; timestamps and counts are
 *    only numbers copied into the trace;
 *  - the events of a packet are counted from the commit counts (mt_ring.h)
 *    when they are plausible (at least one event, none smaller than an
 *    event's prefix), else a packet goes uncounted and mt_ctf counts it
 *    by walking its events;
 *  - every loop is bounded: a compare-and-swap that keeps failing, or rings
 *    that complete sub-buffers faster than they can be written, yield to
 *    the caller's loop (which checks for signals) instead of spinning.
 *
 * A kernel session (marktap.ko) uses the same code with the geometry read
 * from its header once: only the kernel writes it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mt_event.h"
#include "record.h"

/* A compare-and-swap on write_pos retried this often gives up: writers
 * (or a program writing the word on purpose) move it faster than we close. */
#define MAX_CAS_TRIES 10000

/* Say (once) why the session cannot be read on; cpu < 0: the header. */
static int corrupt(struct mt_consumer *c, int cpu, const char *fmt, mt_u64 a, mt_u64 b)
{
	char what[128], where[24] = "";

	if (c->error[0])
		return -EPROTO;
	snprintf(what, sizeof(what), fmt, (unsigned long long)a, (unsigned long long)b);
	if (cpu >= 0)
		snprintf(where, sizeof(where), "cpu %d: ", cpu);
	snprintf(c->error, sizeof(c->error),
		 "the session memory is corrupted (%s%s); the traced program wrote "
		 "into the recorder's buffers, recording stops", where, what);
	return -EPROTO;
}

int mt_consumer_init(struct mt_consumer *c, struct mt_session *s, mt_u64 len, u32 ncpu,
		     u32 subbuf_size, u32 num_subbuf, u32 mode, u32 wake_subbufs)
{
	mt_u64 ring_bytes = mt_ring_bytes(subbuf_size, num_subbuf);
	mt_u64 span = (mt_u64)subbuf_size * num_subbuf;
	mt_u64 need = mt_session_bytes(ncpu, subbuf_size, num_subbuf);
	unsigned cpu;

	memset(c, 0, sizeof(*c));
	if (!need || need > len || mode > MT_RING_OVERWRITE)
		return -EINVAL;
	c->rings = calloc(ncpu, sizeof(*c->rings));
	if (!c->rings)
		return -ENOMEM;
	for (cpu = 0; cpu < ncpu; cpu++) {
		c->rings[cpu].taken = calloc(num_subbuf, sizeof(mt_u64));
		if (!c->rings[cpu].taken) {
			c->ncpu = ncpu;
			mt_consumer_free(c);
			return -ENOMEM;
		}
	}
	c->s = s;
	c->ncpu = ncpu;
	c->subbuf_size = subbuf_size;
	c->num_subbuf = num_subbuf;
	c->mode = mode;
	c->wake_subbufs = wake_subbufs;
	c->domain = s->domain;   /* read before anyone else maps it */
	c->sync = s->sync;
	{
		unsigned n = CPU_SETSIZE > ncpu ? CPU_SETSIZE : ncpu;
		c->home_size = CPU_ALLOC_SIZE(n);
		c->home = CPU_ALLOC(n);
		if (c->home && sched_getaffinity(0, c->home_size, c->home) < 0) {
			CPU_FREE(c->home);
			c->home = NULL;
		}
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		/* mt_session_init's layout: rings after the header, each ring
		 * its control block, the sub-buffer controls, then the data */
		char *base = (char *)s + mt_session_rings_offset() + (mt_u64)cpu * ring_bytes;
		struct mt_consumer_ring *cr = &c->rings[cpu];

		cr->ring = (struct mt_ring *)base;
		cr->subbuf = cr->ring->subbuf;
		cr->data = base + (ring_bytes - span);
		cr->read_pos = 0;   /* sessions are consumed from their start */
	}
	return 0;
}

/*
 * The header and ring fields set once at creation: unchanged, or the
 * program has been writing where it must not.  We never use them (our
 * copies are the truth), but a session that changed them is not one to go
 * on recording: its writers now work from other numbers.
 */
int mt_consumer_check(struct mt_consumer *c)
{
	const struct mt_session *s = c->s;
	mt_u64 ring_bytes = mt_ring_bytes(c->subbuf_size, c->num_subbuf);
	mt_u64 span = (mt_u64)c->subbuf_size * c->num_subbuf;
	unsigned cpu;

	if (c->error[0])
		return -EPROTO;
	if (s->magic != MT_SESSION_MAGIC || s->version != MT_SESSION_VERSION ||
	    s->domain != c->domain || s->ncpu != c->ncpu || s->subbuf_size != c->subbuf_size ||
	    s->num_subbuf != c->num_subbuf || s->mode != c->mode || s->sync != c->sync ||
	    s->ring_bytes != ring_bytes || s->rings_offset != mt_session_rings_offset() ||
	    s->total_bytes != mt_session_bytes(c->ncpu, c->subbuf_size, c->num_subbuf))
		return corrupt(c, -1, "the session header's geometry changed (%llu CPUs, %llu-byte rings)",
			       s->ncpu, s->ring_bytes);
	for (cpu = 0; cpu < c->ncpu; cpu++) {
		const struct mt_ring *r = c->rings[cpu].ring;
		if (r->subbuf_size != c->subbuf_size || r->num_subbuf != c->num_subbuf ||
		    r->mode != c->mode || r->cpu != cpu || r->data_offset != ring_bytes - span)
			return corrupt(c, (int)cpu, "the ring header changed (sub-buffers of %llu bytes, "
				       "data at %llu)", r->subbuf_size, r->data_offset);
	}
	return 0;
}

void mt_consumer_free(struct mt_consumer *c)
{
	unsigned cpu;

	for (cpu = 0; c->rings && cpu < c->ncpu; cpu++)
		free(c->rings[cpu].taken);
	free(c->rings);
	c->rings = NULL;
	c->ncpu = 0;
	if (c->home)
		CPU_FREE(c->home);
	c->home = NULL;
}

static inline struct mt_ring_subbuf *subbuf_at(const struct mt_consumer *c,
					       const struct mt_consumer_ring *cr, mt_u64 pos)
{
	return &cr->subbuf[(pos / c->subbuf_size) & (c->num_subbuf - 1)];
}

/*
 * Is write_pos one the writers can have reached?  It only grows, it never
 * falls behind what we consumed, and in discard mode writers never enter a
 * sub-buffer we have not released, so it stays within one ring of read_pos.
 */
static int check_write_pos(struct mt_consumer *c, unsigned cpu, mt_u64 wp)
{
	const struct mt_consumer_ring *cr = &c->rings[cpu];
	mt_u64 span = (mt_u64)c->subbuf_size * c->num_subbuf;

	if (wp < cr->read_pos)
		return corrupt(c, (int)cpu, "write position %llu is behind the read position %llu",
			       wp, cr->read_pos);
	if (c->mode == MT_RING_DISCARD && wp - cr->read_pos > span)
		return corrupt(c, (int)cpu, "write position %llu is more than a ring ahead of %llu",
			       wp, cr->read_pos);
	return 0;
}

/*
 * The events in the packet at pos, whose commit count is commit: the
 * count's growth since we took the slot's previous cycle (its bytes part
 * then ended one sub-buffer earlier); unknown when we did not take it
 * (overwrite mode skips cycles), or when the count cannot be right.
 */
static mt_u64 packet_events(const struct mt_consumer *c, const struct mt_consumer_ring *cr,
			    mt_u64 pos, mt_u64 commit, mt_u64 data_size)
{
	mt_u64 before = cr->taken[(pos / c->subbuf_size) & (c->num_subbuf - 1)];
	mt_u64 cycle = pos / c->subbuf_size / c->num_subbuf, n;

	if (MT_RING_COMMIT_BYTES(before) != MT_RING_COMMIT_BYTES(cycle * c->subbuf_size))
		return MT_RING_EVENTS_UNKNOWN;
	/* the whole words: bytes + events * 2^36 each, so their difference is
	 * one sub-buffer's bytes + its events * 2^36, even where the bytes
	 * carried into the events' bits */
	n = MT_RING_COMMIT_EVENTS(commit - before);
	if ((n == 0) != (data_size == 0) || n > data_size / MT_UEVENT_MIN_SIZE)
		return MT_RING_EVENTS_UNKNOWN;
	return n;
}

int mt_consumer_get(struct mt_consumer *c, unsigned cpu, struct mt_ring_packet *pkt)
{
	struct mt_consumer_ring *cr = &c->rings[cpu];
	const mt_u64 size = c->subbuf_size, pos = cr->read_pos;
	struct mt_ring_subbuf *sb = subbuf_at(c, cr, pos);
	mt_u64 cycle = pos / size / c->num_subbuf;
	/* acquire: pairs with the writers' release commits; what they
	 * wrote before committing (data, close fields) is visible */
	mt_u64 commit = mt_ring_subbuf_committed(sb);
	mt_u64 wp, data_size;

	if (c->error[0])
		return -EPROTO;
	if (MT_RING_COMMIT_BYTES(commit) != MT_RING_COMMIT_BYTES((cycle + 1) * size))
		return -EAGAIN;
	if (mt_load_relaxed(&sb->seq) != pos / size)
		return -EAGAIN;
	/* a complete sub-buffer was reserved to its end before its commit */
	wp = mt_load_relaxed(&cr->ring->write_pos);
	if (check_write_pos(c, cpu, wp))
		return -EPROTO;
	if (wp < pos + size)
		return -EAGAIN;
	/* read once: the copy checked is the copy used */
	data_size = mt_load_relaxed(&sb->data_size);
	if (data_size > size)
		return corrupt(c, (int)cpu, "a sub-buffer says it holds %llu bytes, it has room for %llu",
			       data_size, size);
	pkt->data = cr->data + (pos & (size * c->num_subbuf - 1));
	pkt->data_size = data_size;
	pkt->seq = pos / size;
	pkt->ts_begin = mt_load_relaxed(&sb->ts_begin);
	pkt->ts_end = mt_load_relaxed(&sb->ts_end);
	pkt->lost = mt_load_relaxed(&sb->lost);
	pkt->events = packet_events(c, cr, pos, commit, data_size);
	cr->got = commit;
	return 0;
}

void mt_consumer_put(struct mt_consumer *c, unsigned cpu)
{
	struct mt_consumer_ring *cr = &c->rings[cpu];

	/* the next cycle of this slot counts its events from here */
	cr->taken[(cr->read_pos / c->subbuf_size) & (c->num_subbuf - 1)] = cr->got;
	cr->read_pos += c->subbuf_size;
	/* release: our reads of the packet are done before writers reuse it */
	mt_store_release(&cr->ring->read_pos, cr->read_pos);
}

/* Run on cpu only: 0, or -1 if we may not run there. */
static int move_to(unsigned cpu)
{
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	cpu_set_t *set = CPU_ALLOC(cpu + 1);
	int rc;

	if (!set)
		return -1;
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	rc = sched_setaffinity(0, size, set);
	CPU_FREE(set);
	return rc;
}

/* A look at every ring, once per round of the consumer: which were
 * written to since the last. */
void mt_consumer_look(struct mt_consumer *c)
{
	unsigned cpu;

	for (cpu = 0; cpu < c->ncpu; cpu++) {
		struct mt_consumer_ring *cr = &c->rings[cpu];
		mt_u64 wp = mt_load_relaxed(&cr->ring->write_pos);
		cr->active = wp != cr->last_wp;
		cr->last_wp = wp;
	}
}

/*
 * The consumer copies a ring's sub-buffers from the ring's CPU, when
 * the CPU it runs on is busy with the program too: they were just written
 * there and are in its cache, where from another CPU each line is fetched
 * across (bench/README.md: 2 threads on 2 CPUs, 43.4 -> 39.9 ns per
 * event).  Only to CPUs our affinity at setup allowed: a marktrace kept
 * off the program's CPUs (taskset) stays off them.
 */
void mt_consumer_go_to(struct mt_consumer *c, unsigned cpu)
{
	int here = sched_getcpu();

	/* where we are, a program's thread writes too (its ring moved since
	 * our last look): the time we copy is taken from one of its threads
	 * whichever CPU we run on, and the ring's own CPU copies fastest;
	 * otherwise we stay on the CPU the scheduler found free for us */
	if (here < 0 || (unsigned)here == cpu || (unsigned)here >= c->ncpu ||
	    !c->rings[here].active)
		return;
	if (c->home && cpu < c->home_size * 8 && CPU_ISSET_S(cpu, c->home_size, (cpu_set_t *)c->home) &&
	    move_to(cpu) == 0)
		c->away = 1;
}

void mt_consumer_go_home(struct mt_consumer *c)
{
	if (c->away && c->home)
		(void)sched_setaffinity(0, c->home_size, (cpu_set_t *)c->home);
	c->away = 0;
}

/*
 * Close the open sub-buffer (mt_ring_flush, with our geometry and read
 * position): 1 if a packet was closed, 0 if nothing was (or writers kept
 * moving write_pos, or we may not run on the CPU of a per-CPU ring),
 * -EPROTO if the session is corrupt.
 */
int mt_consumer_flush(struct mt_consumer *c, unsigned cpu, mt_u64 now)
{
	struct mt_consumer_ring *cr = &c->rings[cpu];
	struct mt_ring *r = cr->ring;
	const mt_u64 size = c->subbuf_size, span = size * c->num_subbuf;
	mt_u64 old, off, end, clock_now = now;
	struct mt_ring_subbuf *sb;
	int tries, moved = 0;
#ifdef MT_HAVE_RSEQ
	struct mt_rseq_ctx rq = { NULL, cpu };

	if (c->sync == MT_SYNC_PERCPU) {
		/* from the ring's CPU, in a sequence as its writers: nothing
		 * else may write write_pos (mt_rseq.h); a CPU we may not run
		 * on (offline) has no writers either, nor anything to flush
		 * that they could add to.  Outside our setup affinity too:
		 * briefly, once per switch timer period. */
		rq.rs = mt_rseq_area();
		if (!c->home || !rq.rs || move_to(cpu) < 0)
			return 0;
		moved = c->away = 1;
	}
#endif
	old = mt_load_relaxed(&r->write_pos);
	for (tries = 0;; tries++) {
		if (c->error[0] || check_write_pos(c, cpu, old) || tries == MAX_CAS_TRIES) {
			end = 0;   /* -EPROTO, or the next flush tries again */
			break;
		}
		if (!now)   /* read as writers read theirs: see mt_ring_flush */
			clock_now = mt_clock_ns();
		off = old & (size - 1);
		if (off == 0) {
			/* nothing open: close an empty packet only to carry
			 * events lost since the last one */
			mt_u64 last = old ? mt_load_relaxed(&subbuf_at(c, cr, old - 1)->lost) : 0;
			if (mt_load_relaxed(&r->lost) == last ||
			    (c->mode == MT_RING_DISCARD && old - cr->read_pos >= span)) {
				end = 0;   /* nothing to close, or no room: drain first */
				break;
			}
			end = old + size;
		} else {
			end = old + (size - off);
		}
#ifdef MT_HAVE_RSEQ
		if (moved) {
			int rc = mt_rseq_cas(&r->write_pos, old, end, &rq);
			if (rc > 0)
				break;
			if (rc < 0 && mt_load_relaxed(&rq.rs->cpu_id) != cpu && move_to(cpu) < 0) {
				end = 0;
				break;
			}
			old = mt_load_relaxed(&r->write_pos);
			continue;
		}
#endif
		/* the CAS orders against writers' reservations exactly as in
		 * mt_ring_flush: whoever moves write_pos first owns the bytes */
		if (mt_cas_relaxed(&r->write_pos, &old, end))
			break;
	}
	if (moved)
		mt_consumer_go_home(c);   /* back where we were allowed to run */
	if (!end)
		return c->error[0] ? -EPROTO : 0;
	now = clock_now;
	sb = subbuf_at(c, cr, end - 1);
	if (off == 0) {
		sb->seq = old / size;
		sb->ts_begin = now;
	}
	sb->data_size = off;
	sb->ts_end = now;
	sb->lost = mt_load_relaxed(&r->lost);
	/* release: the close fields before the completing commit; a per-CPU
	 * ring takes it on the count others add to with locked adds */
	mt_add_release(c->sync == MT_SYNC_PERCPU ? &sb->commit_far : &sb->commit, end - old);
	return 1;
}

/* Overwrite mode, writers stopped: skip to the oldest sub-buffer held
 * (mt_ring_seek_oldest, with our geometry). */
void mt_consumer_seek_oldest(struct mt_consumer *c, unsigned cpu)
{
	struct mt_consumer_ring *cr = &c->rings[cpu];
	const mt_u64 size = c->subbuf_size, span = size * c->num_subbuf;
	mt_u64 wp = mt_load_acquire(&cr->ring->write_pos), first = 0;

	if (check_write_pos(c, cpu, wp))
		return;
	if (wp > span)
		first = (wp & (size - 1)) ? ((wp - span) / size + 1) * size : wp - span;
	if (first > cr->read_pos) {
		cr->read_pos = first;
		mt_store_release(&cr->ring->read_pos, first);
	}
}

/* Does the ring hold wake_subbufs unconsumed sub-buffers, the first of
 * them complete (mt_session_ring_at_mark, with our numbers)? */
int mt_consumer_at_mark(struct mt_consumer *c, unsigned cpu)
{
	struct mt_consumer_ring *cr = &c->rings[cpu];
	struct mt_ring_packet pkt;
	mt_u64 wp = mt_load_relaxed(&cr->ring->write_pos);

	if (!c->wake_subbufs || wp < cr->read_pos ||
	    wp - cr->read_pos < (mt_u64)c->wake_subbufs * c->subbuf_size)
		return 0;
	return mt_consumer_get(c, cpu, &pkt) == 0;
}

/* Has the ring unconsumed bytes (the drain at the end waits for them)? */
int mt_consumer_pending(struct mt_consumer *c, unsigned cpu)
{
	return mt_load_relaxed(&c->rings[cpu].ring->write_pos) > c->rings[cpu].read_pos;
}

/* Events lost by the writers, over every ring: the counts only grow, so a
 * ring's count that goes back (written by the program) is not believed. */
mt_u64 mt_consumer_lost(struct mt_consumer *c)
{
	mt_u64 total = 0;
	unsigned cpu;

	for (cpu = 0; cpu < c->ncpu; cpu++) {
		struct mt_consumer_ring *cr = &c->rings[cpu];
		mt_u64 lost = mt_load_relaxed(&cr->ring->lost);

		if (lost > cr->lost)
			cr->lost = lost;
		total += cr->lost;
	}
	return total;
}
