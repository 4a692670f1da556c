/*
 * mt_ring.c - the ring buffer core (shared by libmarktap and marktap.ko).
 */
#include "mt_ring.h"

/* The data start on the first page after the sub-buffers' controls. */
static mt_u64 data_offset(u32 num_subbuf)
{
	mt_u64 head = sizeof(struct mt_ring) + (mt_u64)num_subbuf * sizeof(struct mt_ring_subbuf);

	return (head + 4095) & ~(mt_u64)4095;
}

mt_u64 mt_ring_bytes(u32 subbuf_size, u32 num_subbuf)
{
	return data_offset(num_subbuf) + (mt_u64)subbuf_size * num_subbuf;
}

void mt_ring_geom_init(struct mt_ring_geom *g, u32 subbuf_size, u32 num_subbuf, u32 mode,
		       u32 cpu)
{
	g->subbuf_size = subbuf_size;
	g->num_subbuf = num_subbuf;
	g->mode = mode;
	g->cpu = cpu;
	g->data_offset = data_offset(num_subbuf);
}

void mt_ring_init(struct mt_ring *r, u32 subbuf_size, u32 num_subbuf, u32 mode, u32 cpu)
{
	mt_ring_geom_init(&r->geom, subbuf_size, num_subbuf, mode, cpu);
	r->write_pos = 0;
	r->read_pos = 0;
}

int mt_ring_get_packet(struct mt_ring *r, struct mt_ring_packet *pkt)
{
	const mt_u64 size = r->subbuf_size;
	mt_u64 pos = r->read_pos;    /* only the consumer writes it */
	struct mt_ring_subbuf *sb = mt_ring_subbuf_at(r, pos);
	mt_u64 cycle = mt_ring_subbuf_seq(r, pos) >> __builtin_ctz(r->num_subbuf);
	/* acquire: pairs with the writers' release commits */
	mt_u64 commit = mt_ring_subbuf_committed(sb);

	if (MT_RING_COMMIT_BYTES(commit) != MT_RING_COMMIT_BYTES((cycle + 1) * size))
		return -EAGAIN;
	if (sb->seq != mt_ring_subbuf_seq(r, pos))
		return -EAGAIN;
	pkt->data = mt_ring_data(r) + (pos & (size * r->num_subbuf - 1));
	pkt->data_size = sb->data_size;
	pkt->seq = sb->seq;
	pkt->ts_begin = sb->ts_begin;
	pkt->ts_end = sb->ts_end;
	pkt->lost = sb->lost;
	pkt->events = MT_RING_EVENTS_UNKNOWN;   /* the previous cycle's count is not kept */
	return 0;
}

void mt_ring_put_packet(struct mt_ring *r)
{
	/* release: our reads of the packet are done before writers reuse it */
	mt_store_release(&r->read_pos, r->read_pos + r->subbuf_size);
}

int mt_ring_flush(struct mt_ring *r, mt_u64 now)
{
	const mt_u64 size = r->subbuf_size;
	mt_u64 old = mt_load_relaxed(&r->write_pos), off, end, clock_now = now;
	struct mt_ring_subbuf *sb;

	for (;;) {
		/* the clock read as writers read theirs (mt_ring_reserve):
		 * after write_pos, before the CAS, so the packet's end is not
		 * earlier than its events nor later than the next packet's */
		if (!now)
			clock_now = mt_clock_ns();
		off = old & (size - 1);
		if (off == 0) {
			/*
			 * Nothing open.  If events were lost since the last
			 * closed packet, close an empty one to carry the count.
			 */
			mt_u64 last = old ? mt_ring_subbuf_at(r, old - 1)->lost : 0;
			if (mt_load_relaxed(&r->lost) == last)
				return 0;
			if (r->mode == MT_RING_DISCARD &&
			    old - mt_load_acquire(&r->read_pos) >= size * r->num_subbuf)
				return 0;  /* no room: the consumer must drain first */
			end = old + size;
		} else {
			end = old + (size - off);
		}
		if (mt_cas_relaxed(&r->write_pos, &old, end))
			break;
	}
	now = clock_now;
	sb = mt_ring_subbuf_at(r, end - 1);
	if (off == 0) {
		sb->seq = mt_ring_subbuf_seq(r, old);
		sb->ts_begin = now;
	}
	mt_ring_close_subbuf(r, sb, off, now);
	mt_add_release(&sb->commit, end - old);
	return 1;
}

void mt_ring_seek_oldest(struct mt_ring *r)
{
	const mt_u64 size = r->subbuf_size;
	mt_u64 wp = mt_load_acquire(&r->write_pos);
	mt_u64 span = size * r->num_subbuf;
	/* the newest sub-buffers: all num of them once flushed (wp aligned) */
	mt_u64 first = 0;

	if (wp > span)
		first = (wp & (size - 1)) ? (mt_ring_subbuf_seq(r, wp - span) + 1) * size : wp - span;

	if (first > r->read_pos)
		r->read_pos = first;
}
