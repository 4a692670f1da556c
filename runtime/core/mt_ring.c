/*
 * mt_ring.c - the ring buffer core (shared by libmarktap and marktap.ko).
 */
#include "mt_ring.h"

mt_u64 mt_ring_bytes(u32 subbuf_size, u32 num_subbuf)
{
	mt_u64 head = sizeof(struct mt_ring) + num_subbuf * sizeof(struct mt_ring_subbuf);

	head = (head + 4095) & ~(mt_u64)4095;
	return head + (mt_u64)subbuf_size * num_subbuf;
}

void mt_ring_init(struct mt_ring *r, u32 subbuf_size, u32 num_subbuf, u32 mode, u32 cpu)
{
	mt_u64 head = sizeof(struct mt_ring) + num_subbuf * sizeof(struct mt_ring_subbuf);

	r->subbuf_size = subbuf_size;
	r->num_subbuf = num_subbuf;
	r->mode = mode;
	r->cpu = cpu;
	r->data_offset = (head + 4095) & ~(mt_u64)4095;
	r->write_pos = 0;
	r->read_pos = 0;
}

static inline struct mt_ring_subbuf *subbuf_at(struct mt_ring *r, mt_u64 pos)
{
	return &r->subbuf[(pos / r->subbuf_size) & (r->num_subbuf - 1)];
}

/*
 * Close the sub-buffer that ends at or before pos: record where its events
 * end, when, and the lost count so far.  Only the writer whose reservation
 * reached the end of the sub-buffer gets here, once per sub-buffer cycle,
 * so these plain stores race with nobody; they are published by the commit
 * (release) that follows, which the consumer reads with acquire.
 */
static void close_subbuf(struct mt_ring *r, struct mt_ring_subbuf *sb,
			 mt_u64 data_size, mt_u64 ts)
{
	sb->data_size = data_size;
	sb->ts_end = ts;
	sb->lost = mt_load_relaxed(&r->lost);
}

int mt_ring_reserve(struct mt_ring *r, u32 len, struct mt_ring_slot *slot)
{
	const mt_u64 size = r->subbuf_size;
	mt_u64 old, begin, end, off, pad;
	mt_u64 ts;

	if (mt_unlikely(len > size)) {
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
		off = old & (size - 1);
		pad = off + len > size ? size - off : 0;
		begin = old + pad;
		end = begin + len;
		if ((begin & (size - 1)) == 0 && r->mode == MT_RING_DISCARD) {
			/*
			 * Entering a sub-buffer: it must have been released by
			 * the consumer.  Acquire pairs with the release in
			 * mt_ring_put_packet: its reads of the data are done.
			 */
			mt_u64 rd = mt_load_acquire(&r->read_pos);
			if (begin - rd >= size * r->num_subbuf) {
				mt_add_relaxed(&r->lost, 1);
				return -ENOSPC;
			}
		}
		if (mt_cas_relaxed(&r->write_pos, &old, end))
			break;
		/* old now holds the current write_pos: retry */
	}
	slot->closed = 0;
	if (pad) {
		struct mt_ring_subbuf *prev = subbuf_at(r, old);
		close_subbuf(r, prev, off, ts);
		/* release: the close fields before the completing commit */
		slot->closed = (mt_add_release(&prev->commit, pad) & (size - 1)) == 0;
	}
	if ((begin & (size - 1)) == 0) {
		/*
		 * First event of this sub-buffer cycle: only we write these.
		 * The close fields belong to the one writer whose reservation
		 * reaches the sub-buffer's end (possibly us, just below).
		 */
		struct mt_ring_subbuf *sb = subbuf_at(r, begin);
		sb->seq = begin / size;
		sb->ts_begin = ts;
	}
	if ((end & (size - 1)) == 0)
		close_subbuf(r, subbuf_at(r, begin), size, ts);  /* exact fill */
	slot->pos = begin;
	slot->len = len;
	slot->ts = ts;
	return 0;
}

int mt_ring_commit(struct mt_ring *r, const struct mt_ring_slot *slot)
{
	/* release: the event bytes are visible before the count says so; a
	 * sub-buffer's commits add up to whole sub-buffers, cycle after cycle */
	mt_u64 c = mt_add_release(&subbuf_at(r, slot->pos)->commit, slot->len);

	return slot->closed || (c & (r->subbuf_size - 1)) == 0;
}

int mt_ring_get_packet(struct mt_ring *r, struct mt_ring_packet *pkt)
{
	const mt_u64 size = r->subbuf_size;
	mt_u64 pos = r->read_pos;    /* only the consumer writes it */
	struct mt_ring_subbuf *sb = subbuf_at(r, pos);
	mt_u64 cycle = pos / (size * r->num_subbuf);
	/* acquire: pairs with the writers' release commits */
	mt_u64 commit = mt_load_acquire(&sb->commit);

	if (commit != (cycle + 1) * size)
		return -EAGAIN;
	if (sb->seq != pos / size)
		return -EAGAIN;
	pkt->data = mt_ring_data(r) + (pos & (size * r->num_subbuf - 1));
	pkt->data_size = sb->data_size;
	pkt->seq = sb->seq;
	pkt->ts_begin = sb->ts_begin;
	pkt->ts_end = sb->ts_end;
	pkt->lost = sb->lost;
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
	mt_u64 old = mt_load_relaxed(&r->write_pos), off, end;
	struct mt_ring_subbuf *sb;

	for (;;) {
		off = old & (size - 1);
		if (off == 0) {
			/*
			 * Nothing open.  If events were lost since the last
			 * closed packet, close an empty one to carry the count.
			 */
			mt_u64 last = old ? subbuf_at(r, old - 1)->lost : 0;
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
	if (!now)
		now = mt_clock_ns();
	sb = subbuf_at(r, end - 1);
	if (off == 0) {
		sb->seq = old / size;
		sb->ts_begin = now;
	}
	close_subbuf(r, sb, off, now);
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
		first = (wp & (size - 1)) ? ((wp - span) / size + 1) * size : wp - span;

	if (first > r->read_pos)
		r->read_pos = first;
}
