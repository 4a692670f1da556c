/*
 * markers.c - where marker sites reach libmarktap: an object's markers
 * registered and unregistered (its constructor and destructor, from
 * <marktap/marker.h>), and a hit handed to its consumers: the recorder
 * (record.c) and the script host's hooks (set by the plugin, script.c).
 * The registry (registry.c) keeps the markers; this file only dispatches.
 */
#include <stdarg.h>
#include <stdlib.h>
#include "mt_lib.h"

void (*mt_script_hit)(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap);
void (*mt_script_added)(struct mt_marker *m);
void (*mt_script_removed)(struct mt_marker *m);

MT_EXPORT void __mt_markers_register(struct mt_marker *begin, struct mt_marker *end)
{
	struct mt_marker *m;

	if (!begin || begin >= end)
		return;
	mt_registry_lock();
	if (mt_registry_add(begin, end)) {
		for (m = begin; m < end; m++) {
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
	r = mt_registry_remove(begin);
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
			mt_record_hit(m, rt, copy, __builtin_return_address(0));
			va_end(copy);
		} else {
			mt_record_hit(m, rt, ap, __builtin_return_address(0));
		}
	}
	if ((m->gate->armed & MT_ARMED_SCRIPT) && mt_script_hit)
		mt_script_hit(m, rt, ap);
	va_end(ap);
}
