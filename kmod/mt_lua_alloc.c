/*
 * mt_lua_alloc.c - the allocator of a Lua state in marktap.ko.
 *
 * Each Lua state allocates from an arena of its own, vmalloc'ed when the
 * script is loaded (process context): a handler never calls the kernel's
 * allocators, so it may run wherever its marker fires (interrupts, under
 * spinlocks, with preemption off).  An exhausted arena makes Lua raise
 * "not enough memory" (after an emergency collection), a handler error.
 *
 * Blocks carry a 16-byte header: the size of the block before it in
 * memory and its own size, bit 0 set while in use.  Free blocks sit in
 * segregated lists (one per 16-byte size below 1 KiB, one per power of
 * two above) found through a bitmap, and merge with free neighbours when
 * freed.  Untouched space beyond `top` is carved when no list fits.  One
 * state, one caller at a time (the CPU's busy flag, mt_lua_run.c): no
 * locking here.
 */
#include <linux/kernel.h>
#include <linux/bitops.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "mt_klua.h"

#define HDR 16u
#define MIN_BLOCK 32u
#define USED 1ul

struct blk {
	size_t prev_size;      /* size of the block before (0: first) */
	size_t size;           /* this block's size, header included; | USED */
	struct blk *next, *prev;   /* free blocks only: their list */
};

static inline size_t bsize(const struct blk *b) { return b->size & ~USED; }
static inline struct blk *after(struct blk *b) { return (struct blk *)((char *)b + bsize(b)); }
static inline struct blk *before(struct blk *b) { return (struct blk *)((char *)b - b->prev_size); }

static unsigned bin_of(size_t size)
{
	if (size < 1024)
		return (unsigned)(size >> 4);           /* 2..63: exact sizes */
	return 64 + (unsigned)ilog2(size) - 10;     /* 64..: [2^k, 2^k+1) */
}

static void list_put(struct mt_arena *a, struct blk *b)
{
	unsigned i = bin_of(bsize(b));

	b->prev = NULL;
	b->next = a->bins[i];
	if (b->next)
		b->next->prev = b;
	a->bins[i] = b;
	__set_bit(i, a->nonempty);
}

static void list_take(struct mt_arena *a, struct blk *b)
{
	unsigned i = bin_of(bsize(b));

	if (b->prev)
		b->prev->next = b->next;
	else
		a->bins[i] = b->next;
	if (b->next)
		b->next->prev = b->prev;
	if (!a->bins[i])
		__clear_bit(i, a->nonempty);
}

int mt_arena_init(struct mt_arena *a, size_t bytes)
{
	memset(a, 0, sizeof(*a));
	bytes = ALIGN(bytes, HDR);
	/* the consumer's size: fail quietly rather than warn or wake the OOM killer */
	a->base = __vmalloc(bytes, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN | __GFP_NORETRY);
	if (!a->base)
		return -ENOMEM;
	a->size = bytes;
	return 0;
}

void mt_arena_free(struct mt_arena *a)
{
	vfree(a->base);
	a->base = NULL;
}

static void free_block(struct mt_arena *a, struct blk *b);

/* Cut b to size; the rest, if big enough, becomes a free block. */
static void split(struct mt_arena *a, struct blk *b, size_t size)
{
	size_t rest = bsize(b) - size;
	struct blk *r;

	if (rest < MIN_BLOCK)
		return;
	b->size = size | (b->size & USED);
	r = after(b);
	r->prev_size = size;
	r->size = rest | USED;
	if ((char *)after(r) < a->base + a->top)
		after(r)->prev_size = rest;
	else
		a->last = rest;
	free_block(a, r);
}

static struct blk *find(struct mt_arena *a, size_t size)
{
	unsigned i = bin_of(size);
	struct blk *b;

	if (i >= 64) {  /* a power-of-two list: first fit in it */
		for (b = a->bins[i]; b; b = b->next)
			if (bsize(b) >= size)
				goto found;
		i++;
	}
	i = find_next_bit(a->nonempty, MT_ARENA_BINS, i);
	if (i >= MT_ARENA_BINS)
		return NULL;
	b = a->bins[i];
found:
	list_take(a, b);
	b->size |= USED;
	split(a, b, size);
	return b;
}

static struct blk *carve(struct mt_arena *a, size_t size, size_t last_size)
{
	struct blk *b;

	if (a->size - a->top < size)
		return NULL;
	b = (struct blk *)(a->base + a->top);
	b->prev_size = last_size;
	b->size = size | USED;
	a->top += size;
	a->last = size;
	return b;
}

static void *arena_alloc(struct mt_arena *a, size_t n)
{
	size_t size = ALIGN(n + HDR, HDR);
	struct blk *b;

	if (size < MIN_BLOCK)
		size = MIN_BLOCK;
	if (n > a->size)
		return NULL;
	b = find(a, size);
	if (!b)
		b = carve(a, size, a->last);
	if (!b)
		return NULL;
	a->used += bsize(b);
	if (a->used > a->peak)
		a->peak = a->used;
	return (char *)b + HDR;
}

/* b, in use, becomes free: merged with free neighbours, or given back to the top. */
static void free_block(struct mt_arena *a, struct blk *b)
{
	struct blk *n;

	b->size &= ~USED;
	if (b->prev_size && !(before(b)->size & USED)) {  /* merge with the one before */
		struct blk *p0 = before(b);

		list_take(a, p0);
		p0->size += b->size;
		b = p0;
	}
	n = after(b);
	if ((char *)n == a->base + a->top) {  /* the last block: back to the top */
		a->top -= bsize(b);
		a->last = b->prev_size;
		return;
	}
	if (!(n->size & USED)) {  /* merge with the one after */
		list_take(a, n);
		b->size += n->size;
		n = after(b);
		if ((char *)n == a->base + a->top) {
			a->top -= bsize(b);
			a->last = b->prev_size;
			return;
		}
	}
	n->prev_size = bsize(b);
	list_put(a, b);
}

static void arena_release(struct mt_arena *a, void *p)
{
	struct blk *b = (struct blk *)((char *)p - HDR);

	a->used -= bsize(b);
	free_block(a, b);
}

/* lua_Alloc over the arena (ud): Lua's contract, without the kernel's allocators. */
/*
 * The run's budget pays for memory: the bytes of a block (its filling and
 * a copy into it follow), or after a refusal the whole heap, which Lua
 * then walks in an emergency collection.  A debit only: an allocator may
 * not raise errors; the next check of the budget does.
 */
static void charge(struct mt_arena *a, void *q, size_t nsize)
{
	size_t bytes = q ? nsize : a->used;

	if (!q)
		a->failed++;
	if (a->charge)
		*a->charge -= (int)min_t(size_t, bytes >> MT_ARENA_BYTES_PER_UNIT_SHIFT, 1u << 28);
}

void *mt_arena_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct mt_arena *a = ud;
	struct blk *b;
	size_t size;
	void *q;

	if (nsize == 0) {
		if (ptr)
			arena_release(a, ptr);
		return NULL;
	}
	if (!ptr) {
		q = arena_alloc(a, nsize);
		charge(a, q, nsize);
		return q;
	}
	b = (struct blk *)((char *)ptr - HDR);
	size = ALIGN(nsize + HDR, HDR);
	if (size < MIN_BLOCK)
		size = MIN_BLOCK;
	if (size <= bsize(b)) {  /* shrink in place */
		a->used -= bsize(b);
		split(a, b, size);
		a->used += bsize(b);
		return ptr;
	}
	q = arena_alloc(a, nsize);
	charge(a, q, nsize);
	if (!q)
		return NULL;  /* Lua keeps the old block */
	memcpy(q, ptr, min(osize, nsize));
	arena_release(a, ptr);
	return q;
}
