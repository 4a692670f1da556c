/*
 * mt_event.h - the event record and its serialiser (shared with marktap.ko).
 *
 * An event in a sub-buffer, packed, little endian, no alignment:
 *
 *   +--------+------------------+---------+---------+------------------+---------+
 *   | id u16 | timestamp u64 ns | pid s32 | tid s32 | procname char[16] | payload |
 *   +--------+------------------+---------+---------+------------------+---------+
 *   \------- event.header -----/ \------------ event.context ---------/
 *
 * The payload holds the marker's fields in format order: integers in their
 * stored size, doubles as binary64, strings NUL-terminated.  CTF metadata
 * (mt_ctf.c) declares exactly this layout with align = 8 (bits) throughout.
 */
#ifndef MT_EVENT_H
#define MT_EVENT_H

#include "mt_fmt.h"

#define MT_EVENT_HEADER_SIZE  10
#define MT_EVENT_CONTEXT_SIZE 24
#define MT_EVENT_PREFIX_SIZE  (MT_EVENT_HEADER_SIZE + MT_EVENT_CONTEXT_SIZE)
#define MT_PROCNAME_MAX       16
#define MT_STRING_MAX         4096  /* longer strings are cut, NUL kept */

struct mt_event_context {
	s32 pid;
	s32 tid;
	char procname[MT_PROCNAME_MAX];
} __attribute__((packed));

/* The arguments of one hit, fetched once from the varargs. */
struct mt_args {
	union {
		mt_u64 u;
		double d;
		const char *str;
	} v[MT_FIELDS_MAX];
	u32 slen[MT_FIELDS_MAX];   /* string bytes stored, NUL included */
};

/* Read the arguments from ap into a; return the payload size in bytes. */
size_t mt_event_fetch(const struct mt_format *f, va_list ap, struct mt_args *a);

/* Write the payload described by f and a at dst (payload size bytes). */
void mt_event_write_payload(const struct mt_format *f, const struct mt_args *a, char *dst);

/* Reader side, for events in a sub-buffer (n bytes left at src).
 * The prefix: 0, or -EINVAL when fewer than MT_EVENT_PREFIX_SIZE bytes. */
int mt_event_read_prefix(const char *src, size_t n, u16 *id, mt_u64 *ts,
			 struct mt_event_context *ctx);
/* The payload into a (strings point into src, slen counts their NUL;
 * signed integers sign-extended): the bytes it takes, or -EINVAL when it
 * runs past n bytes. */
long mt_event_read_payload(const struct mt_format *f, const char *src, size_t n,
			   struct mt_args *a);

/* Write header and context at dst. */
static inline void mt_event_write_prefix(char *dst, u16 id, mt_u64 ts,
					 const struct mt_event_context *ctx)
{
	memcpy(dst, &id, 2);
	memcpy(dst + 2, &ts, 8);
	memcpy(dst + MT_EVENT_HEADER_SIZE, ctx, MT_EVENT_CONTEXT_SIZE);
}

#endif
