/*
 * tlane.c - timeline rows in bounded memory (see tlane.h).
 */
#include <stdlib.h>
#include <string.h>
#include "tlane.h"

#define TL_STATES 32            /* states are small numbers (tstate.h) */

uint64_t tl_quantum(uint64_t span, unsigned resolution)
{
	uint64_t q = 1;

	while (q < (1ull << 62) && q * resolution < span)
		q <<= 1;
	return q;
}

static void *grow(void *p, unsigned *cap, size_t elem)
{
	*cap = *cap ? *cap * 2 : 16;
	p = realloc(p, *cap * elem);
	if (!p)
		abort();
	return p;
}

/* Append (t, state, aux) to out[0..*n): same time replaces, same value is dropped. */
static void emit(struct tl_point *out, unsigned *n, uint64_t t, unsigned state, int32_t aux)
{
	if (*n && out[*n - 1].t == t)
		(*n)--;
	if (*n && out[*n - 1].state == state && out[*n - 1].aux == aux)
		return;
	out[*n].t = t;
	out[*n].state = (unsigned char)state;
	out[*n].aux = aux;
	(*n)++;
}

/*
 * The points i..j-1 (two or more) fall in the cell [cs, ce): the state
 * covering most of it, counting the one entering it from the left.
 */
static struct tl_point dominant(const struct tl_lane *l, const struct tl_point *out, unsigned nout,
				unsigned i, unsigned j, uint64_t cs, uint64_t ce)
{
	uint64_t dur[TL_STATES] = { 0 }, longest[TL_STATES] = { 0 };
	int32_t aux[TL_STATES];
	struct tl_point best = { cs, -1, 0 };
	unsigned k, s;

	for (s = 0; s < TL_STATES; s++)
		aux[s] = -1;
	if (nout && l->p[i].t > cs) {
		s = out[nout - 1].state % TL_STATES;
		dur[s] += l->p[i].t - cs;
		longest[s] = l->p[i].t - cs;
		aux[s] = out[nout - 1].aux;
	}
	for (k = i; k < j; k++) {
		uint64_t next = k + 1 < l->n ? l->p[k + 1].t : l->end;
		uint64_t d = (next < ce ? next : ce) - l->p[k].t;
		s = l->p[k].state % TL_STATES;
		dur[s] += d;
		if (d >= longest[s]) {
			longest[s] = d;
			aux[s] = l->p[k].aux;
		}
	}
	for (s = 0; s < TL_STATES; s++)
		if (dur[s] > dur[best.state]) {
			best.state = (unsigned char)s;
		}
	best.aux = aux[best.state];
	return best;
}

void tl_coarsen(struct tl_lane *l, uint64_t t0, uint64_t q)
{
	unsigned i = 0, j, nout = 0;

	while (i < l->n) {
		uint64_t cell = (l->p[i].t - t0) / q, cs = t0 + cell * q, ce = cs + q;
		struct tl_point dom, last;
		uint64_t after;

		for (j = i + 1; j < l->n && l->p[j].t < ce; j++)
			;
		if (j == i + 1) {
			last = l->p[i];
			emit(l->p, &nout, last.t, last.state, last.aux);
			i = j;
			continue;
		}
		/* read what is needed before out overwrites points i.. */
		dom = dominant(l, l->p, nout, i, j, cs, ce);
		last = l->p[j - 1];
		after = j < l->n ? l->p[j].t : l->end;
		emit(l->p, &nout, cs, dom.state, dom.aux);
		if ((last.state != dom.state || last.aux != dom.aux) && ce < after)
			emit(l->p, &nout, ce, last.state, last.aux);
		i = j;
	}
	l->n = nout;
}

void tl_add(struct tl_lane *l, uint64_t t0, uint64_t start, uint64_t end, unsigned state,
	    int32_t aux, unsigned resolution)
{
	if (l->n && start < l->end)     /* never back in time: points stay sorted */
		start = l->end;
	if (start >= end)
		return;
	if (l->n && l->end == start && l->p[l->n - 1].state == state && l->p[l->n - 1].aux == aux) {
		l->end = end;
		return;
	}
	if (l->n + 2 > l->cap) {
		if (l->cap < 4 * resolution)
			l->p = grow(l->p, &l->cap, sizeof(*l->p));
		else
			tl_coarsen(l, t0, tl_quantum(l->end - t0, resolution));
	}
	if (l->n && l->end < start)
		emit(l->p, &l->n, l->end, 0, -1);
	emit(l->p, &l->n, start, state, aux);
	l->end = end;
}

/* Keep the texts of the ticks that still have one, in their order. */
static void compact_texts(struct tl_lane *l)
{
	size_t len = 0;
	unsigned i;

	for (i = 0; i < l->nticks; i++) {
		struct tl_tick *k = &l->tick[i];
		size_t n;
		if (!k->text)
			continue;
		n = strlen(l->texts + k->text - 1) + 1;
		memmove(l->texts + len, l->texts + k->text - 1, n);   /* offsets only grow */
		k->text = (uint32_t)len + 1;
		len += n;
	}
	l->texts_len = len;
}

void tl_coarsen_ticks(struct tl_lane *l, uint64_t t0, uint64_t q)
{
	unsigned i, n = 0;

	for (i = 0; i < l->nticks; i++) {
		if (n && (l->tick[n - 1].t - t0) / q == (l->tick[i].t - t0) / q) {
			uint64_t c = (uint64_t)l->tick[n - 1].count + l->tick[i].count;
			l->tick[n - 1].count = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
			l->tick[n - 1].text = 0;        /* several events: none's text */
			continue;
		}
		l->tick[n++] = l->tick[i];
	}
	l->nticks = n;
	if (l->texts_len)
		compact_texts(l);
}

void tl_tick_text(struct tl_lane *l, const char *text)
{
	struct tl_tick *k = l->nticks ? &l->tick[l->nticks - 1] : NULL;
	size_t n = strnlen(text, TL_TEXT_MAX - 1);

	if (!k || k->count != 1 || k->text || !n || l->texts_len + n + 1 > UINT32_MAX)
		return;
	if (l->texts_len + n + 1 > l->texts_cap) {
		l->texts_cap = l->texts_cap ? 2 * l->texts_cap : 4096;
		while (l->texts_len + n + 1 > l->texts_cap)
			l->texts_cap *= 2;
		l->texts = realloc(l->texts, l->texts_cap);
		if (!l->texts)
			abort();
	}
	memcpy(l->texts + l->texts_len, text, n);
	l->texts[l->texts_len + n] = '\0';
	k->text = (uint32_t)l->texts_len + 1;
	l->texts_len += n + 1;
}

const char *tl_text(const struct tl_lane *l, const struct tl_tick *k)
{
	return k->text ? l->texts + k->text - 1 : NULL;
}

void tl_tick(struct tl_lane *l, uint64_t t0, uint64_t t, uint32_t name, unsigned resolution)
{
	if (l->nticks && t < l->tick[l->nticks - 1].t)  /* streams out of order: keep ticks sorted */
		t = l->tick[l->nticks - 1].t;
	if (l->nticks && l->tick[l->nticks - 1].t == t && l->tick[l->nticks - 1].count < UINT32_MAX) {
		l->tick[l->nticks - 1].count++;
		l->tick[l->nticks - 1].text = 0;  /* (its bytes go at the next compaction) */
		return;
	}
	if (l->nticks == l->tick_cap) {
		if (l->tick_cap < 2 * resolution)
			l->tick = grow(l->tick, &l->tick_cap, sizeof(*l->tick));
		else
			tl_coarsen_ticks(l, t0, tl_quantum(t - t0, resolution));
	}
	if (l->nticks == l->tick_cap)   /* every tick in a cell of its own: coarser */
		tl_coarsen_ticks(l, t0, 2 * tl_quantum(t - t0, resolution));
	l->tick[l->nticks].t = t;
	l->tick[l->nticks].count = 1;
	l->tick[l->nticks].name = name;
	l->tick[l->nticks].text = 0;
	l->nticks++;
}

void tl_free(struct tl_lane *l)
{
	free(l->p);
	free(l->tick);
	free(l->texts);
	memset(l, 0, sizeof(*l));
}
