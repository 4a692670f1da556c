/*
 * tlane.h - a row of the timeline in bounded memory: the intervals of one
 * thread or CPU as change points, and its user events as ticks.
 *
 * A trace of any length must give a picture of bounded size, so a lane
 * keeps at most a few points per cell of a grid of R cells over the trace
 * (R = the resolution).  The grid's cell is a power of two nanoseconds,
 * from the trace's first time t0, so grids of growing spans nest.  When a
 * lane fills up it is coarsened to the grid of the span seen so far: a
 * cell with several changes becomes its dominant state (the one covering
 * most of the cell) then the state it ends in; a cell with one change
 * keeps it exactly.  Ticks in one cell merge into one with their count;
 * a tick of one event may keep a short text (its fields, for a tooltip),
 * which a merge drops.
 *
 *     t0         cell k                 cell k+1
 *     |  ...  |a|b|a|c|  b  |   ->   |  a (dominant)  |c|  b ...
 */
#ifndef TLANE_H
#define TLANE_H

#include <stdint.h>

struct tl_point {
	uint64_t t;             /* from here on ... */
	int32_t aux;
	unsigned char state;    /* ... the lane is in this state (0: nothing) */
};

struct tl_tick {
	uint64_t t;             /* the first event of the cell */
	uint32_t count;         /* events merged into it */
	uint32_t name;          /* index of the first one's name (caller's table) */
	uint32_t text;          /* its text: offset + 1 in the lane's texts, 0 none */
};

#define TL_TEXT_MAX 200         /* bytes of a tick's text, with its NUL */

struct tl_lane {
	struct tl_point *p;
	unsigned n, cap;
	uint64_t end;           /* where the last point's interval ends */
	struct tl_tick *tick;
	unsigned nticks, tick_cap;
	char *texts;            /* the ticks' texts, NUL terminated */
	size_t texts_len, texts_cap;
};

/* The grid: cells of 2^k ns covering span in at most resolution cells. */
uint64_t tl_quantum(uint64_t span, unsigned resolution);

/* Add [start, end) in (state, aux); intervals come in time order. */
void tl_add(struct tl_lane *l, uint64_t t0, uint64_t start, uint64_t end, unsigned state,
	    int32_t aux, unsigned resolution);
void tl_tick(struct tl_lane *l, uint64_t t0, uint64_t t, uint32_t name, unsigned resolution);
/* The text of the tick just added, if it holds one event (at most
 * TL_TEXT_MAX - 1 bytes of it are kept). */
void tl_tick_text(struct tl_lane *l, const char *text);
/* A tick's text, or NULL. */
const char *tl_text(const struct tl_lane *l, const struct tl_tick *k);

/* Coarsen to the grid of cell q (at the end, with the whole trace's q). */
void tl_coarsen(struct tl_lane *l, uint64_t t0, uint64_t q);
void tl_coarsen_ticks(struct tl_lane *l, uint64_t t0, uint64_t q);

void tl_free(struct tl_lane *l);

#endif
