/*
 * ring-test.c - the ring buffer core, single threaded: sub-buffer switch,
 * discard-mode loss accounting, flush, exact fill, overwrite mode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mt_ring.h"
#include "../lib/tap.h"

#define SB 4096u
#define NSB 4u

static struct mt_ring *new_ring(unsigned mode)
{
	struct mt_ring *r = aligned_alloc(4096, mt_ring_bytes(SB, NSB));
	memset(r, 0, mt_ring_bytes(SB, NSB));
	mt_ring_init(r, SB, NSB, mode, 0);
	return r;
}

/* Write an event of len bytes holding seq; 0 or -ENOSPC. */
static int put(struct mt_ring *r, unsigned len, unsigned seq)
{
	struct mt_ring_slot s;
	char *p;

	if (mt_ring_reserve(r, len, &s))
		return -1;
	p = mt_ring_slot_ptr(r, &s);
	memset(p, 0, len);
	memcpy(p, &len, 4);
	memcpy(p + 4, &seq, 4);
	mt_ring_commit(r, &s);
	return 0;
}

/* Walk a packet: count events, check seqs follow on from *next. */
static unsigned walk(const struct mt_ring_packet *pkt, unsigned *next, int *order_ok)
{
	mt_u64 off = 0;
	unsigned n = 0;

	while (off + 8 <= pkt->data_size) {
		unsigned len, seq;
		memcpy(&len, pkt->data + off, 4);
		memcpy(&seq, pkt->data + off + 4, 4);
		if (seq != *next)
			*order_ok = 0;
		*next = seq + 1;
		off += len;
		n++;
	}
	return n;
}

static void discard_mode(void)
{
	struct mt_ring *r = new_ring(MT_RING_DISCARD);
	struct mt_ring_packet pkt;
	unsigned accepted = 0, i, next = 0, got = 0, packets = 0;
	int order_ok = 1;

	for (i = 0; i < 200; i++)
		if (put(r, 100, accepted) == 0)
			accepted++;
	/* 40 events of 100 bytes per 4096-byte sub-buffer, 4 sub-buffers */
	tap_ok(accepted == 160, "discard: 160 of 200 events fit (%u)", accepted);
	tap_ok(r->lost == 40, "discard: 40 counted lost (%llu)", (unsigned long long)r->lost);
	while (mt_ring_get_packet(r, &pkt) == 0) {
		got += walk(&pkt, &next, &order_ok);
		if (packets == 0)
			tap_ok(pkt.data_size == 4000 && pkt.seq == 0 && pkt.lost == 0,
			       "first packet: 4000 bytes of events, seq 0, 0 lost");
		packets++;
		mt_ring_put_packet(r);
	}
	/* the 4th sub-buffer is full but not closed: closing needs room */
	tap_ok(packets == 3 && got == 120, "3 closed packets, 120 events (%u, %u)", packets, got);
	tap_ok(put(r, 100, accepted) == 0, "room again after the consumer released");
	accepted++;
	tap_ok(mt_ring_get_packet(r, &pkt) == 0 && pkt.lost == 40 && pkt.seq == 3 &&
	       walk(&pkt, &next, &order_ok) == 40,
	       "4th packet closed by the next writer carries lost = 40");
	mt_ring_put_packet(r);
	tap_ok(mt_ring_flush(r, 7) == 1, "flush closes the open sub-buffer");
	tap_ok(mt_ring_get_packet(r, &pkt) == 0 && pkt.data_size == 100 && pkt.ts_end == 7 &&
	       walk(&pkt, &next, &order_ok) == 1, "flushed packet holds the last event");
	mt_ring_put_packet(r);
	tap_ok(order_ok && next == accepted, "every accepted event read once, in order");
	tap_ok(mt_ring_flush(r, 8) == 0, "second flush: nothing to close");
	free(r);
}

static void lost_after_exact_fill(void)
{
	struct mt_ring *r = new_ring(MT_RING_DISCARD);
	struct mt_ring_packet pkt;
	unsigned i, full = 0;
	mt_u64 last_lost = 0;

	for (i = 0; i < 300; i++)
		if (put(r, 64, i) == 0)
			full++;
	tap_ok(full == 256 && r->lost == 44, "64-byte events fill sub-buffers exactly (%u)", full);
	while (mt_ring_get_packet(r, &pkt) == 0) {
		if (pkt.data_size != SB)
			break;
		last_lost = pkt.lost;
		mt_ring_put_packet(r);
	}
	tap_ok(r->read_pos == 4 * SB, "all 4 packets complete without a switch");
	tap_ok(mt_ring_flush(r, 9) == 1 && mt_ring_get_packet(r, &pkt) == 0 &&
	       pkt.data_size == 0 && pkt.lost == 44 && last_lost <= 44,
	       "flush adds an empty packet carrying the lost count (44)");
	free(r);
}

static void too_big(void)
{
	struct mt_ring *r = new_ring(MT_RING_DISCARD);

	tap_ok(put(r, SB + 1, 0) != 0 && r->lost == 1 && r->lost_too_big == 1,
	       "an event larger than a sub-buffer is lost and counted");
	free(r);
}

static void overwrite_mode(void)
{
	struct mt_ring *r = new_ring(MT_RING_OVERWRITE);
	struct mt_ring_packet pkt;
	unsigned i, next = 0, n = 0, first = 0, packets = 0;
	int order_ok = 1;

	for (i = 0; i < 1000; i++)
		put(r, 100, i);
	tap_ok(r->lost == 0, "overwrite: nothing refused");
	mt_ring_flush(r, 1);
	mt_ring_seek_oldest(r);
	while (mt_ring_get_packet(r, &pkt) == 0) {
		if (packets == 0)
			memcpy(&first, pkt.data + 4, 4), next = first;
		n += walk(&pkt, &next, &order_ok);
		packets++;
		mt_ring_put_packet(r);
	}
	tap_ok(packets == 4, "overwrite: the newest 4 sub-buffers are kept (%u)", packets);
	tap_ok(order_ok && next == 1000, "overwrite: contiguous up to the newest event (%u)", next);
	/* events 40k..40k+39 fill sub-buffer k; the newest 4 are k = 21..24 */
	tap_ok(n == 1000 - first && first == 840,
	       "overwrite: %u newest events kept, oldest dropped", n);
	free(r);
}

/*
 * Compact reservations (mt_event.h): the extra bytes when the time is
 * 2^24 ns or more past the ring's last_ts, or before it; none when close.
 */
static void compact_reserve(void)
{
	struct mt_ring *r = new_ring(MT_RING_DISCARD);
	struct mt_ring_slot s;
	int close = 0, tries;
	mt_u64 total = 0;

	tap_ok(mt_ring_reserve_compact(r, 20, 7, 24, &s) == 0 && s.extend && s.len == 27 &&
	       r->last_ts == s.ts, "compact: the first reservation (last_ts 0) is extended, 27 bytes");
	mt_ring_commit(r, &s);
	total += s.len;
	r->last_ts = mt_clock_ns() - (1ull << 24) - 1000;
	tap_ok(mt_ring_reserve_compact(r, 20, 7, 24, &s) == 0 && s.extend && s.len == 27,
	       "compact: 2^24 ns after the last reservation: extended");
	mt_ring_commit(r, &s);
	total += s.len;
	r->last_ts = mt_clock_ns() + 1000000000ull;
	tap_ok(mt_ring_reserve_compact(r, 20, 7, 24, &s) == 0 && s.extend,
	       "compact: a last_ts in the future (a clock step back): extended");
	mt_ring_commit(r, &s);
	total += s.len;
	/* close in time: compact (tried a few times: a preemption of 16 ms
	 * between the two clock reads would rightly extend) */
	for (tries = 0; tries < 5 && !close; tries++) {
		r->last_ts = mt_clock_ns();
		if (mt_ring_reserve_compact(r, 20, 7, 24, &s))
			break;
		close = !s.extend && s.len == 20;
		mt_ring_commit(r, &s);
		total += s.len;
	}
	tap_ok(close, "compact: right after another: no extra bytes");
	tap_ok(r->write_pos == total && r->subbuf[0].commit == total + (3 + (mt_u64)tries) * MT_RING_COMMIT_EVENT,
	       "compact: the positions and the commit count add up (%llu)", (unsigned long long)r->write_pos);
	free(r);
}

#ifdef MT_HAVE_RSEQ
#include <sched.h>

/* Per-CPU rings (mt_rseq.h): the sequences on this thread's CPU; a
 * context naming another CPU is refused and changes nothing; a commit
 * from elsewhere goes to commit_far, which the consumer adds in. */
static void percpu(void)
{
	struct mt_ring *r = new_ring(MT_RING_DISCARD);
	struct mt_rseq_ctx rq, other;
	struct mt_ring_slot s, s2, s3;
	struct mt_ring_packet pkt;
	unsigned n = 0, next = 0, zero = 0;
	int order_ok = 1, rc, tries;

	rq.rs = mt_rseq_area();
	if (!rq.rs) {
		for (int i = 0; i < 6; i++)
			tap_ok(1, "# SKIP no rseq area for this thread");
		free(r);
		return;
	}
	/* the CPU read, then the sequence there: retried if we moved */
	for (tries = 0; tries < 100; tries++) {
		rq.cpu = mt_load_relaxed(&rq.rs->cpu_id);
		rc = mt_ring_reserve_percpu(r, 100, 0, 0, &s, &rq);
		if (rc != -EAGAIN)
			break;
	}
	tap_ok(rc == 0 && s.pos == 0 && r->write_pos == 100, "percpu: a reservation on our CPU");
	other = rq;
	other.cpu = 0xffffffu;   /* a CPU nobody runs on */
	tap_ok(mt_ring_reserve_percpu(r, 100, 0, 0, &s2, &other) == -EAGAIN && r->write_pos == 100,
	       "percpu: a context for another CPU is refused, write_pos unchanged");
	memset(mt_ring_slot_ptr(r, &s), 0, 100);
	memcpy(mt_ring_slot_ptr(r, &s), &s.len, 4);
	memcpy((char *)mt_ring_slot_ptr(r, &s) + 4, &zero, 4);
	/* committed "from another CPU": the locked count */
	mt_ring_commit_percpu(r, &s, &other);
	tap_ok(r->subbuf[0].commit == 0 && r->subbuf[0].commit_far == 100 + MT_RING_COMMIT_EVENT,
	       "percpu: a commit from another CPU goes to commit_far");
	/* fill the sub-buffer from our CPU: the next one's first event pads it */
	for (unsigned seq = 1; seq < 45; seq++) {
		do {
			rq.cpu = mt_load_relaxed(&rq.rs->cpu_id);
			rc = mt_ring_reserve_percpu(r, 100, 0, 0, &s3, &rq);
		} while (rc == -EAGAIN);
		if (rc)
			break;
		memset(mt_ring_slot_ptr(r, &s3), 0, 100);
		memcpy(mt_ring_slot_ptr(r, &s3), &s3.len, 4);
		memcpy((char *)mt_ring_slot_ptr(r, &s3) + 4, &seq, 4);
		mt_ring_commit_percpu(r, &s3, &rq);   /* locked if we moved since */
	}
	tap_ok(r->write_pos == SB + 500 && MT_RING_COMMIT_BYTES(r->subbuf[0].commit + r->subbuf[0].commit_far) == SB,
	       "percpu: 45 events of 100 bytes: the first sub-buffer complete (its padding counted far)");
	rc = mt_ring_get_packet(r, &pkt);
	if (rc == 0)
		n = walk(&pkt, &next, &order_ok);
	tap_ok(rc == 0 && pkt.data_size == 4000 && n == 40 && order_ok,
	       "percpu: the consumer reads it whole: 40 events in order (%u)", n);
	mt_ring_put_packet(r);
	tap_ok(mt_ring_get_packet(r, &pkt) == -EAGAIN, "percpu: the open sub-buffer is not handed out");
	free(r);
}
#endif

int main(void)
{
	tap_plan(10 + 3 + 1 + 4 + 5 + 6);
	discard_mode();
	lost_after_exact_fill();
	too_big();
	overwrite_mode();
	compact_reserve();
#ifdef MT_HAVE_RSEQ
	percpu();
#else
	for (int i = 0; i < 6; i++)
		tap_ok(1, "# SKIP built without restartable sequences");
#endif
	return tap_done();
}
