/*
 * registry.c - the markers of every loaded object.
 *
 * Each object's constructor (in <marktap/marker.h>) hands the bounds of
 * its "__markers" array to markers.c, which keeps them here; its
 * destructor takes them back at exit or dlclose.  Several translation
 * units of one object register the same bounds, so ranges are counted
 * (ranges.c).  Arming a marker raises its "enabled"
 * count, which the marker site reads: that field is also the SDT
 * semaphore, so SystemTap or bpftrace attaching to the site raise it too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "mt_lib.h"

static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct mt_range *ranges;

void mt_registry_lock(void) { pthread_mutex_lock(&registry_mutex); }
void mt_registry_unlock(void) { pthread_mutex_unlock(&registry_mutex); }

void mt_registry_for_each(mt_marker_fn fn, void *arg)
{
	struct mt_range *r;
	struct mt_marker *m;

	for (r = ranges; r; r = r->next)
		for (m = r->begin; m < (struct mt_marker *)r->end; m++)
			if (m->rt)
				fn(m, arg);
}

void mt_marker_arm(struct mt_marker *m, unsigned consumer)
{
	if (m->gate->armed & consumer)
		return;
	__atomic_or_fetch(&m->gate->armed, consumer, __ATOMIC_RELAXED);
	/* release: armed and rt are set before a site sees enabled */
	__atomic_add_fetch(&m->gate->enabled, 1, __ATOMIC_RELEASE);
	mt_sites_update(m);
}

void mt_marker_disarm(struct mt_marker *m, unsigned consumer)
{
	if (!(m->gate->armed & consumer))
		return;
	__atomic_and_fetch(&m->gate->armed, (unsigned short)~consumer, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&m->gate->enabled, 1, __ATOMIC_RELEASE);
	mt_sites_update(m);
}

static void prepare_marker(struct mt_marker *m)
{
	struct mt_marker_rt *rt;
	struct mt_fmt_error err;

	if (m->rt || !m->name || !m->gate)
		return;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return;
	rt->event_id = -1;
	if (mt_fmt_parse(m->format, &rt->format, &err) == 0) {
		rt->format_ok = 1;
	} else {
		fprintf(stderr, "libmarktap: marker '%s': bad format \"%s\" at offset %u: %s; "
			"the marker is disabled\n", m->name, m->format ? m->format : "(null)",
			err.offset, err.message);
	}
	m->rt = rt;
}

/* A new range [begin, end) of markers: their run-time parts made, 1;
 * 0 when the range was known (one more use of it) or no memory. */
int mt_registry_add(struct mt_marker *begin, struct mt_marker *end)
{
	struct mt_range *r = mt_range_add(&ranges, begin, end);
	struct mt_marker *m;

	if (!r)
		return 0;
	ranges = r;
	for (m = begin; m < end; m++)
		prepare_marker(m);
	return 1;
}

/* One use less of the range at begin: the range, unlinked, when it was
 * the last (the caller ends its markers and frees it); else NULL. */
struct mt_range *mt_registry_remove(const struct mt_marker *begin)
{
	return mt_range_drop(&ranges, begin);
}
