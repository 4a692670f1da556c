/*
 * commit-count-test.c - the events of a packet counted from the commit
 * counts (mt_ring.h, runtime/marktrace/consumer.c), as marktrace's status
 * line takes them instead of walking events: two writer threads racing on
 * one small ring for hundreds of cycles while the consumer takes packets;
 * byte counts that cross 2^36 (and carry into the events' bits); overwrite mode
 * (skipped cycles: unknown, never wrong); counts a program forged.
 * Each packet's count is compared with a walk of its events.  TAP output.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mt_event.h"
#include "record.h"

#define SB 4096u
#define NSB 4u
#define PER_THREAD 10000u

static int n, failed;

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
	failed += !cond;
}

/* Test events: MT_EVENT_PREFIX_SIZE bytes or more, their length first. */
static unsigned walk(const struct mt_ring_packet *pkt)
{
	mt_u64 off = 0;
	unsigned count = 0;

	while (off + 2 <= pkt->data_size) {
		unsigned short len;
		memcpy(&len, pkt->data + off, 2);
		if (len < MT_EVENT_PREFIX_SIZE)
			return ~0u;
		off += len;
		count++;
	}
	return off == pkt->data_size ? count : ~0u;
}

static struct mt_session *session(unsigned mode, size_t *len)
{
	struct mt_session *s;

	*len = mt_session_bytes(1, SB, NSB);
	s = aligned_alloc(4096, *len);
	memset(s, 0, *len);
	mt_session_init(s, MT_DOMAIN_USER, 1, SB, NSB, mode);
	return s;
}

static int put_event(struct mt_ring *r, unsigned short len)
{
	struct mt_ring_slot slot;
	char *p;

	if (mt_ring_reserve(r, len, &slot))
		return -1;
	p = mt_ring_slot_ptr(r, &slot);
	memset(p, 0x5a, len);
	memcpy(p, &len, 2);
	mt_ring_commit(r, &slot);
	return 0;
}

static struct mt_ring *ring0;

static void *writer(void *arg)
{
	unsigned t = (unsigned)(long)arg, i;

	for (i = 0; i < PER_THREAD; i++)
		while (put_event(ring0, (unsigned short)(MT_EVENT_PREFIX_SIZE + (i * 7 + t) % 61)) < 0)
			;   /* full: the consumer frees a sub-buffer */
	return NULL;
}

struct tally {
	mt_u64 events, packets, unknown, wrong;
};

static void take(struct mt_consumer *c, struct tally *t)
{
	struct mt_ring_packet pkt;

	while (mt_consumer_get(c, 0, &pkt) == 0) {
		unsigned w = walk(&pkt);
		t->packets++;
		if (pkt.events == MT_RING_EVENTS_UNKNOWN)
			t->unknown++;
		else if (pkt.events != w)
			t->wrong++;
		if (w != ~0u)
			t->events += w;
		mt_consumer_put(c, 0);
	}
}

/* Two writers and the consumer, from positions start on. */
static void race(mt_u64 start, const char *what)
{
	size_t len;
	struct mt_session *s = session(MT_RING_DISCARD, &len);
	struct mt_consumer c;
	struct tally t = { 0, 0, 0, 0 };
	pthread_t th[2];
	char desc[160];
	unsigned i;

	ring0 = mt_session_ring(s, 0);
	mt_consumer_init(&c, s, len, 1, SB, NSB, MT_RING_DISCARD, 1);
	if (start) {
		/* as if start bytes had gone by: every slot's count is that of
		 * its last complete cycle, with some events in it */
		ring0->write_pos = ring0->read_pos = c.rings[0].read_pos = start;
		for (i = 0; i < NSB; i++) {
			mt_u64 cycles = start / SB / NSB;
			ring0->subbuf[i].commit = cycles * SB + (mt_u64)(1000 + i) * MT_RING_COMMIT_EVENT;
			c.rings[0].taken[i] = ring0->subbuf[i].commit;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, writer, (void *)(long)i);
	for (i = 0; i < 2;) {
		take(&c, &t);
		if (pthread_tryjoin_np(th[i], NULL) == 0)
			i++;
	}
	take(&c, &t);
	mt_consumer_flush(&c, 0, 1);
	take(&c, &t);
	snprintf(desc, sizeof(desc), "%s: every packet's count is its events' (%llu packets)",
		 what, (unsigned long long)t.packets);
	ok(t.wrong == 0 && t.unknown == 0 && t.packets > 200, desc);
	snprintf(desc, sizeof(desc), "%s: %u events in all (%llu)", what, 2 * PER_THREAD,
		 (unsigned long long)t.events);
	ok(t.events == 2 * PER_THREAD, desc);
	if (start)
		ok(MT_RING_COMMIT_BYTES(ring0->subbuf[0].commit) < (1ull << 20) &&
		   MT_RING_COMMIT_BYTES(ring0->subbuf[NSB - 1].commit) < (1ull << 20),
		   "the sub-buffers' byte counts crossed 2^36");
	else
		ok(ring0->write_pos > (1ull << 20), "hundreds of cycles of each sub-buffer");
	mt_consumer_free(&c);
	free(s);
}

static void overwrite(void)
{
	size_t len;
	struct mt_session *s = session(MT_RING_OVERWRITE, &len);
	struct mt_consumer c;
	struct tally t = { 0, 0, 0, 0 };
	unsigned i;

	ring0 = mt_session_ring(s, 0);
	mt_consumer_init(&c, s, len, 1, SB, NSB, MT_RING_OVERWRITE, 0);
	for (i = 0; i < 1000; i++)
		put_event(ring0, 40);
	mt_consumer_flush(&c, 0, 1);
	mt_consumer_seek_oldest(&c, 0);
	take(&c, &t);
	ok(t.wrong == 0 && t.unknown > 0 && t.packets == NSB,
	   "overwrite mode: cycles skipped, the counts are unknown (walked), never wrong");
	mt_consumer_free(&c);
	free(s);
}

/* The traced program can write the counts: implausible ones are unknown. */
static void forged(void)
{
	size_t len;
	struct mt_session *s = session(MT_RING_DISCARD, &len);
	struct mt_consumer c;
	struct mt_ring_packet pkt;
	mt_u64 commit;
	unsigned i;

	ring0 = mt_session_ring(s, 0);
	mt_consumer_init(&c, s, len, 1, SB, NSB, MT_RING_DISCARD, 1);
	for (i = 0; i < 5; i++)
		put_event(ring0, 40);
	mt_consumer_flush(&c, 0, 1);
	commit = ring0->subbuf[0].commit;
	ring0->subbuf[0].commit = MT_RING_COMMIT_BYTES(commit);   /* events 0 */
	ok(mt_consumer_get(&c, 0, &pkt) == 0 && pkt.events == MT_RING_EVENTS_UNKNOWN &&
	   walk(&pkt) == 5, "no events counted in a packet of 200 bytes: unknown");
	/* more events than the smallest event (compact header and tid) fit */
	ring0->subbuf[0].commit = MT_RING_COMMIT_BYTES(commit) +
				  (200 / MT_UEVENT_MIN_SIZE + 1) * MT_RING_COMMIT_EVENT;
	ok(mt_consumer_get(&c, 0, &pkt) == 0 && pkt.events == MT_RING_EVENTS_UNKNOWN,
	   "more events than 200 bytes hold at the smallest event's size: unknown");
	ring0->subbuf[0].commit = commit;
	ok(mt_consumer_get(&c, 0, &pkt) == 0 && pkt.events == 5, "the true count: 5");
	mt_consumer_free(&c);
	free(s);
}

int main(void)
{
	race(0, "from 0");
	/* each sub-buffer's byte count crosses 2^36 and carries into the
	 * events' bits; the positions, 2^38 */
	race(((mt_u64)NSB << MT_RING_COMMIT_BYTE_BITS) - 16 * SB * NSB, "across 2^36");
	overwrite();
	forged();
	printf("1..%d\n", n);
	return failed != 0;
}
