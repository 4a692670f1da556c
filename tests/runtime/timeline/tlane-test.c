/*
 * tlane-test.c - the bounded rows of the timeline (runtime/marktrace/tlane.c):
 * what a row keeps when its intervals are far more than its cells.
 */
#include <stdint.h>
#include "tap.h"
#include "tlane.h"

enum { A = 2, B = 3, C = 7 };

/* the state at time t of a lane, 0 outside it */
static unsigned state_at(const struct tl_lane *l, uint64_t t)
{
	unsigned i, s = 0;

	for (i = 0; i < l->n && l->p[i].t <= t; i++)
		s = l->p[i].state;
	return t < l->end ? s : 0;
}

static int sorted(const struct tl_lane *l)
{
	unsigned i;

	for (i = 1; i < l->n; i++)
		if (l->p[i].t <= l->p[i - 1].t)
			return 0;
	return 1;
}

int main(void)
{
	struct tl_lane l = { 0 };
	const unsigned R = 64;
	uint64_t t = 1000, q, i;

	tap_plan(12);
	/* 10^6 alternations of A for 1 ns and B for 3 ns, then C for a long time */
	for (i = 0; i < 1000000; i++) {
		tl_add(&l, 1000, t, t + 1, A, -1, R);
		tl_add(&l, 1000, t + 1, t + 4, B, 5, R);
		t += 4;
	}
	tl_add(&l, 1000, t, t + 4000000, C, 9, R);
	tap_ok(l.cap <= 4 * R, "memory stays bounded: %u points at most (4 x resolution)", l.cap);
	q = tl_quantum(l.end - 1000, R);
	tl_coarsen(&l, 1000, q);
	tap_diag("%u points after coarsening to cells of %llu ns", l.n, (unsigned long long)q);
	tap_ok(l.n <= 2 * R + 2, "at most 2 points per cell at the end (%u)", l.n);
	tap_ok(sorted(&l), "points stay in time order");
	tap_ok(state_at(&l, 1000 + 2000000) == B, "sub-cell A/B alternation shows its dominant state, B (3 ns of 4)");
	tap_ok(l.p[l.n - 1].state == C && l.p[l.n - 1].aux == 9, "the long C interval is the last point, its aux kept");
	tap_ok(l.p[l.n - 1].t >= t && l.p[l.n - 1].t - t < q,
	       "and starts within the cell where it did (that cell was busy: its end takes the change)");
	tap_ok(l.end == t + 4000000, "the row ends where its last interval did");
	tap_ok(l.p[0].t == 1000, "and starts at its first interval");

	/* a cell with one change keeps its exact time */
	tl_free(&l);
	tl_add(&l, 0, 0, 20001, A, 1, R);
	tl_add(&l, 0, 20001, 1000000, B, 2, R);
	tl_coarsen(&l, 0, tl_quantum(1000000, R));
	tap_ok(l.n == 2 && l.p[1].t == 20001 && l.p[1].state == B, "a lone change in a cell keeps its exact time");

	/* a gap becomes state 0, and intervals never go back in time */
	tl_free(&l);
	tl_add(&l, 0, 10, 20, A, 1, R);
	tl_add(&l, 0, 50, 60, B, 2, R);
	tl_add(&l, 0, 40, 70, C, 3, R);     /* overlaps what came before: clipped */
	tap_ok(state_at(&l, 30) == 0 && state_at(&l, 15) == A && state_at(&l, 55) == B,
	       "a gap between intervals is drawn as nothing");
	tap_ok(sorted(&l) && state_at(&l, 65) == C && l.end == 70, "an interval back in time is clipped, never unsorted");

	/* ticks: 10^6 events become at most a cell's worth, with their count */
	tl_free(&l);
	for (i = 0; i < 1000000; i++)
		tl_tick(&l, 0, i * 7, (uint32_t)(i % 3), R);
	tl_coarsen_ticks(&l, 0, tl_quantum(999999 * 7, R));
	uint64_t sum = 0;
	for (i = 0; i < l.nticks; i++)
		sum += l.tick[i].count;
	tap_ok(l.nticks <= R + 1 && sum == 1000000, "10^6 ticks: %u kept, counting all %llu events",
	       l.nticks, (unsigned long long)sum);
	tl_free(&l);
	return tap_done();
}
