/*
 * registry.c - the markers of every loaded object.
 *
 * Each object's constructor (in <marktap/marker.h>) hands us the bounds of
 * its "__markers" array; its destructor takes them back at exit or
 * dlclose.  Several translation units of one object register the same
 * bounds, so ranges are counted.  Arming a marker raises its "enabled"
 * count, which the marker site reads: that field is also the SDT
 * semaphore, so SystemTap or bpftrace attaching to the site raise it too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "mt_lib.h"

static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct mt_range *ranges;

void (*mt_script_hit)(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap);
void (*mt_script_added)(struct mt_marker *m);
void (*mt_script_removed)(struct mt_marker *m);

void mt_registry_lock(void) { pthread_mutex_lock(&registry_mutex); }
void mt_registry_unlock(void) { pthread_mutex_unlock(&registry_mutex); }

struct mt_range *mt_range_add(struct mt_range **list, void *begin, void *end)
{
	struct mt_range *r;

	for (r = *list; r; r = r->next) {
		if (r->begin == begin) {
			r->refs++;
			return NULL;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->begin = begin;
	r->end = end;
	r->refs = 1;
	r->next = *list;
	return r;
}

struct mt_range *mt_range_drop(struct mt_range **list, const void *begin)
{
	struct mt_range **pr, *r;

	for (pr = list; (r = *pr); pr = &r->next) {
		if (r->begin != begin)
			continue;
		if (--r->refs > 0)
			return NULL;
		*pr = r->next;
		return r;
	}
	return NULL;
}

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

MT_EXPORT void __mt_markers_register(struct mt_marker *begin, struct mt_marker *end)
{
	struct mt_range *r;
	struct mt_marker *m;

	if (!begin || begin >= end)
		return;
	mt_registry_lock();
	r = mt_range_add(&ranges, begin, end);
	if (r) {
		ranges = r;
		for (m = begin; m < end; m++) {
			prepare_marker(m);
			if (m->rt) {
				mt_record_marker_added(m);
				if (mt_script_added)
					mt_script_added(m);
			}
		}
		/* a dlopen'ed object: where it is, for symbols (statedump.c) */
		mt_record_object_added(begin);
	}
	mt_registry_unlock();
}

MT_EXPORT void __mt_markers_unregister(struct mt_marker *begin, struct mt_marker *end)
{
	struct mt_range *r;
	struct mt_marker *m;

	mt_registry_lock();
	r = mt_range_drop(&ranges, begin);
	if (r) {
		for (m = r->begin; m < end && m < (struct mt_marker *)r->end; m++) {
			if (m->rt && mt_script_removed)
				mt_script_removed(m);
			mt_marker_disarm(m, MT_ARMED_RECORD);
			mt_marker_disarm(m, MT_ARMED_SCRIPT);
			free(m->rt);
			m->rt = NULL;
		}
		free(r);
	}
	mt_registry_unlock();
}

MT_EXPORT void __mt_marker_fire(struct mt_marker *m, ...)
{
	struct mt_marker_rt *rt = m->rt;
	va_list ap;

	if (mt_unlikely(!rt || !rt->format_ok))
		return;
	va_start(ap, m);
	if (m->gate->armed & MT_ARMED_RECORD) {
		if (m->gate->armed & MT_ARMED_SCRIPT) {
			va_list copy;
			va_copy(copy, ap);
			mt_record_hit(m, rt, copy);
			va_end(copy);
		} else {
			mt_record_hit(m, rt, ap);
		}
	}
	if ((m->gate->armed & MT_ARMED_SCRIPT) && mt_script_hit)
		mt_script_hit(m, rt, ap);
	va_end(ap);
}
