/*
 * mt_session.c - session layout, enable patterns, event classes.
 */
#include "mt_session.h"

static int is_pow2(u32 v) { return v && !(v & (v - 1)); }

mt_u64 mt_session_bytes(u32 ncpu, u32 subbuf_size, u32 num_subbuf)
{
	mt_u64 head = mt_session_rings_offset();

	if (!ncpu || ncpu > 4096 || !is_pow2(subbuf_size) || !is_pow2(num_subbuf) ||
	    subbuf_size < 4096 || num_subbuf < 2 || subbuf_size > (1u << 30))
		return 0;
	return head + (mt_u64)ncpu * mt_ring_bytes(subbuf_size, num_subbuf);
}

#ifndef __KERNEL__
const struct mt_uclock *mt_uclock_active;
#endif

int mt_session_geom_init(struct mt_session_geom *g, u32 ncpu, u32 subbuf_size,
			 u32 num_subbuf, u32 mode)
{
	if (!mt_session_bytes(ncpu, subbuf_size, num_subbuf))
		return -EINVAL;
	g->ncpu = ncpu;
	g->ring_bytes = mt_ring_bytes(subbuf_size, num_subbuf);
	g->rings_offset = mt_session_rings_offset();
	mt_ring_geom_init(&g->ring, subbuf_size, num_subbuf, mode, 0);
	return 0;
}

void mt_session_init(struct mt_session *s, u32 domain, u32 ncpu, u32 subbuf_size,
		     u32 num_subbuf, u32 mode)
{
	unsigned cpu;

	s->magic = MT_SESSION_MAGIC;
	s->version = MT_SESSION_VERSION;
	s->domain = domain;
	s->ncpu = ncpu;
	s->subbuf_size = subbuf_size;
	s->num_subbuf = num_subbuf;
	s->mode = mode;
	s->ring_bytes = mt_ring_bytes(subbuf_size, num_subbuf);
	s->rings_offset = mt_session_rings_offset();
	s->total_bytes = mt_session_bytes(ncpu, subbuf_size, num_subbuf);
	for (cpu = 0; cpu < ncpu; cpu++)
		mt_ring_init(mt_session_ring(s, cpu), subbuf_size, num_subbuf, mode, cpu);
}

int mt_session_check(const struct mt_session *s, mt_u64 len)
{
	if (len < sizeof(*s) || s->magic != MT_SESSION_MAGIC ||
	    s->version != MT_SESSION_VERSION)
		return -EINVAL;
	if (mt_session_bytes(s->ncpu, s->subbuf_size, s->num_subbuf) != s->total_bytes ||
	    s->total_bytes > len || s->mode > MT_RING_OVERWRITE || s->sync > MT_SYNC_PERCPU ||
	    (s->sync == MT_SYNC_PERCPU && s->domain != MT_DOMAIN_USER))
		return -EINVAL;
	return 0;
}

int mt_glob_match(const char *p, const char *n)
{
	const char *star_p = NULL, *star_n = NULL;

	while (*n) {
		if (*p == '*') {
			star_p = ++p;
			star_n = n;
			continue;
		}
		if (*p == '[') {
			const char *q = p + 1;
			int neg = 0, hit = 0;
			if (*q == '!' || *q == '^') { neg = 1; q++; }
			while (*q && *q != ']') {
				if (q[1] == '-' && q[2] && q[2] != ']') {
					if (*n >= q[0] && *n <= q[2]) hit = 1;
					q += 3;
				} else {
					if (*n == *q) hit = 1;
					q++;
				}
			}
			if (*q == ']' && hit != neg) {
				p = q + 1;
				n++;
				continue;
			}
		} else if (*p == '?' || *p == *n) {
			p++;
			n++;
			continue;
		}
		if (!star_p)
			return 0;
		p = star_p;
		n = ++star_n;
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

int mt_session_wants(const struct mt_session *s, const char *name)
{
	return mt_patterns_want(s->patterns, name);
}

/* The next non-empty line of patterns at *p into one (cut to its size,
 * terminated); 0 at the end. */
static int next_pattern(const char **p, char *one, unsigned size)
{
	unsigned n;

	do {
		n = 0;
		if (!**p)
			return 0;
		while (**p && **p != '\n') {
			if (n < size - 1)
				one[n++] = **p;
			(*p)++;
		}
		one[n] = '\0';
		if (**p == '\n')
			(*p)++;
	} while (!n);
	return 1;
}

/*
 * The patterns as LTTng's event rules with exclusions read them, whatever
 * their order: a name is taken when a pattern takes it (or when every
 * pattern is an exclusion: "!X" alone is "all but X") and no "!GLOB"
 * excludes it.  Empty patterns take every name.
 */
int mt_patterns_want(const char *patterns, const char *name)
{
	const char *p = patterns;
	char one[MT_EVENT_NAME_MAX + 64];
	int includes = 0, included = 0;

	while (next_pattern(&p, one, sizeof(one))) {
		int negate = one[0] == '!';
		if (mt_glob_match(one + negate, name)) {
			if (negate)
				return 0;       /* an exclusion wins wherever it is */
			included = 1;
		}
		includes += !negate;
	}
	return included || !includes;
}

mt_u64 mt_patterns_hits(const char *patterns, const char *name)
{
	const char *p = patterns;
	char one[MT_EVENT_NAME_MAX + 64];
	mt_u64 hits = 0;
	unsigned i;

	for (i = 0; i < 64 && next_pattern(&p, one, sizeof(one)); i++)
		if (mt_glob_match(one + (one[0] == '!'), name))
			hits |= (mt_u64)1 << i;
	return hits;
}

static int same_event(const struct mt_session_event *e, const char *name, const char *format)
{
	return strncmp(e->name, name, MT_EVENT_NAME_MAX) == 0 &&
	       strncmp(e->format, format, MT_EVENT_FORMAT_MAX) == 0;
}

int mt_session_event_id(struct mt_session *s, const char *name, const char *format)
{
	u32 i, n = mt_load_acquire(&s->nevents);
	u32 slot;

	for (i = 0; i < n && i < MT_EVENTS_MAX; i++) {
		/* acquire: pairs with the release that made the slot READY */
		if (mt_load_acquire(&s->events[i].state) == MT_EV_READY &&
		    same_event(&s->events[i], name, format))
			return (int)i;
	}
	/*
	 * Claim a new slot.  Two processes adding the same class at once may
	 * both get a slot: the trace then has two ids for one name, which
	 * readers accept.  Registration is rare (once per class and process).
	 */
	slot = __atomic_fetch_add(&s->nevents, 1, __ATOMIC_ACQ_REL);
	if (slot >= MT_EVENTS_MAX) {
		mt_add_relaxed(&s->events_dropped, 1);
		return -ENOSPC;
	}
	s->events[slot].state = MT_EV_CLAIMED;
	strncpy(s->events[slot].name, name, MT_EVENT_NAME_MAX - 1);
	strncpy(s->events[slot].format, format, MT_EVENT_FORMAT_MAX - 1);
	/* release: name and format are written before READY is seen */
	mt_store_release(&s->events[slot].state, MT_EV_READY);
	return (int)slot;
}
