/*
 * ranges.c - counted ranges of descriptors that objects register: each
 * translation unit of an object registers the same "__markers" (registry.c)
 * and "__mt_sites" (sites.c) bounds, so a range is kept once and counted.
 */
#include <stdlib.h>
#include "mt_lib.h"

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
