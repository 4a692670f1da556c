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
 * marktap.ko writes it; libmarktap writes the compact layout below.
 *
 * The compact layout (user space, "mt_uevent"), packed, little endian:
 *
 *   compact:  +-------+---------------+---------+---------+
 *             | id u8 | timestamp u24 | tid s32 | payload |   id < 255
 *             +-------+---------------+---------+---------+
 *   extended: +-----+--------+------------------+---------+---------+
 *             | 255 | id u16 | timestamp u64 ns | tid s32 | payload |
 *             +-----+--------+------------------+---------+---------+
 *
 * A 24-bit timestamp is the low bits of the clock in ns; readers extend it
 * against the stream's clock as CTF 1.8 says (section 8): the previous
 * event of the packet, or the packet's timestamp_begin for the first, plus
 * 2^24 when the low bits went down.  So a writer uses it only when its
 * time is less than 2^24 ns (16.7 ms) past that of the event before it in
 * the ring (mt_ring_reserve_compact), else the extended header.
 *
 * marktrace record --context adds fields after the tid (mt_session's
 * context, bits below), in the order of the bits whatever the order
 * asked, each as LTTng-UST declares it (mt_ctf.c), so that tools which
 * need them (Trace Compass, lttng-analyses) find them in every event:
 *
 *   +--------+-----+------+---------------+--------+------------+-------+------+------+---------+
 *   | header | tid | vpid | procname      | ip u64 | pthread_id | vppid | vuid | vgid | payload |
 *   |        | s32 | s32  | char[17]      |        | u64        | s32   | u32  | u32  |         |
 *   +--------+-----+------+---------------+--------+------------+-------+------+------+---------+
 *
 * vtid takes no bytes: it names the tid _vtid, as LTTng does.  Thread
 * events carry the same context as every other event.
 *
 * Without vpid and procname, pid and the thread's name are not in every
 * event: a thread event (MT_THREAD_EVENT_NAME, payload pid s32, name
 * string) describes the tid of its context; libmarktap writes one before a thread's first event in
 * each packet it writes to (and after fork or a rename), in the same
 * reservation as that event, so every packet names the threads in it and
 * readers need nothing from another packet (flight-recorder mode
 * overwrites old packets).  Readers take pid and procname of an event from
 * the latest thread event of its tid and do not show thread events.
 */
#ifndef MT_EVENT_H
#define MT_EVENT_H

#include "mt_fmt.h"

#define MT_EVENT_HEADER_SIZE  10
#define MT_EVENT_CONTEXT_SIZE 24
#define MT_EVENT_PREFIX_SIZE  (MT_EVENT_HEADER_SIZE + MT_EVENT_CONTEXT_SIZE)
#define MT_PROCNAME_MAX       16
#define MT_STRING_MAX         4096  /* longer strings are cut, NUL kept */

#define MT_UEVENT_ID_EXTENDED   255
#define MT_UEVENT_TS_BITS       24
#define MT_UEVENT_COMPACT_SIZE  4    /* header bytes */
#define MT_UEVENT_EXTENDED_SIZE 11
#define MT_UEVENT_CONTEXT_SIZE  4    /* tid */
#define MT_UEVENT_MIN_SIZE      (MT_UEVENT_COMPACT_SIZE + MT_UEVENT_CONTEXT_SIZE)
#define MT_THREAD_EVENT_NAME    "marktap_statedump:thread"
#define MT_THREAD_EVENT_FORMAT  "pid %d name %s"

/* Context fields (mt_session.context); their bytes, mt_uevent_context_size. */
enum mt_context {
	MT_CTX_VPID = 1u << 0,        /* s32 */
	MT_CTX_VTID = 1u << 1,        /* no bytes: the tid is named _vtid */
	MT_CTX_PROCNAME = 1u << 2,    /* char[MT_CTX_PROCNAME_SIZE], NUL padded */
	MT_CTX_IP = 1u << 3,          /* u64: the address after the marker's call */
	MT_CTX_PTHREAD_ID = 1u << 4,  /* u64: pthread_self() */
	MT_CTX_VPPID = 1u << 5,       /* s32 */
	MT_CTX_VUID = 1u << 6,        /* u32 */
	MT_CTX_VGID = 1u << 7,        /* u32 */
	MT_CTX_ALL = (1u << 8) - 1
};
#define MT_CTX_PROCNAME_SIZE 17   /* LTTng-UST's: 16 bytes and a NUL */

static inline unsigned mt_uevent_context_size(u32 ctx)
{
	return (ctx & MT_CTX_VPID ? 4 : 0) + (ctx & MT_CTX_PROCNAME ? MT_CTX_PROCNAME_SIZE : 0) +
	       (ctx & MT_CTX_IP ? 8 : 0) + (ctx & MT_CTX_PTHREAD_ID ? 8 : 0) +
	       (ctx & MT_CTX_VPPID ? 4 : 0) + (ctx & MT_CTX_VUID ? 4 : 0) +
	       (ctx & MT_CTX_VGID ? 4 : 0);
}

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

/* mt_event_fetch for a planned format (mt_fmt_plan), inline for the hot
 * path of the user recorder (record.c). */
static inline __attribute__((always_inline)) size_t
mt_event_fetch_planned(const struct mt_format *f, va_list ap, struct mt_args *a)
{
	unsigned i, n = f->nfields;
	size_t size = f->fixed;

	for (i = 0; i < n; i++) {
		switch (f->op[i] >> 4) {
		case MT_TAKE_INT: a->v[i].u = (mt_u64)(s64)va_arg(ap, int); break;
		case MT_TAKE_UINT: a->v[i].u = va_arg(ap, unsigned int); break;
		case MT_TAKE_WORD: a->v[i].u = va_arg(ap, unsigned long); break;
		case MT_TAKE_STRING: {
			const char *s = va_arg(ap, const char *);
			u32 k = 0;
			if (__builtin_expect(!s, 0)) {
				s = "(null)";
				k = sizeof("(null)") - 1;
			} else {
				while (k < 16 && s[k])   /* short ones without a call */
					k++;
				if (k == 16)
					k = (u32)strnlen(s, MT_STRING_MAX - 1);
			}
			a->v[i].str = s;
			a->slen[i] = k + 1;
			size += k + 1;
			break;
		}
#ifndef __KERNEL__
		default: a->v[i].d = va_arg(ap, double); break;   /* MT_TAKE_DOUBLE */
#endif
		}
	}
	return size;
}

/* Write the payload described by f and a at dst (payload size bytes). */
void mt_event_write_payload(const struct mt_format *f, const struct mt_args *a, char *dst);

/* mt_event_write_payload for a planned format, inline as the fetch. */
static inline __attribute__((always_inline)) void
mt_event_write_planned(const struct mt_format *f, const struct mt_args *a, char *dst)
{
	unsigned i, n = f->nfields;

	for (i = 0; i < n; i++) {
		mt_u64 v = a->v[i].u;
		switch (f->op[i] & 15) {
		case MT_PUT_1: { u8 x = (u8)v; memcpy(dst, &x, 1); dst += 1; break; }
		case MT_PUT_2: { u16 x = (u16)v; memcpy(dst, &x, 2); dst += 2; break; }
		case MT_PUT_4: { u32 x = (u32)v; memcpy(dst, &x, 4); dst += 4; break; }
		case MT_PUT_8: memcpy(dst, &v, 8); dst += 8; break;
		default: {   /* MT_PUT_STRING */
			u32 k = a->slen[i], j;
			if (k <= 16) {   /* short strings: no call */
				for (j = 0; j + 1 < k; j++)
					dst[j] = a->v[i].str[j];
			} else {
				memcpy(dst, a->v[i].str, k - 1);
			}
			dst[k - 1] = '\0';
			dst += k;
		}
		}
	}
}

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

/* The header bytes of an event of this id: compact unless the id or the
 * timestamp (extend: too far from the previous event's) needs more. */
static inline unsigned mt_uevent_header_size(unsigned id, int extend)
{
	return id >= MT_UEVENT_ID_EXTENDED || extend ? MT_UEVENT_EXTENDED_SIZE
						      : MT_UEVENT_COMPACT_SIZE;
}

/* Write a compact-layout header and tid at dst; where the payload goes. */
static inline char *mt_uevent_write_prefix(char *dst, u16 id, mt_u64 ts, int extend, s32 tid)
{
	if (mt_likely(id < MT_UEVENT_ID_EXTENDED && !extend)) {
		u32 h = (u32)id | (u32)(ts << 8);   /* little endian: id first */
		memcpy(dst, &h, 4);
		dst += MT_UEVENT_COMPACT_SIZE;
	} else {
		dst[0] = (char)MT_UEVENT_ID_EXTENDED;
		memcpy(dst + 1, &id, 2);
		memcpy(dst + 3, &ts, 8);
		dst += MT_UEVENT_EXTENDED_SIZE;
	}
	memcpy(dst, &tid, 4);
	return dst + MT_UEVENT_CONTEXT_SIZE;
}

/* Reader side of the compact layout: the header and tid at src (n bytes
 * left), the timestamp extended against *clock, which it updates.  The
 * bytes taken, or -EINVAL when they run past n. */
int mt_uevent_read_prefix(const char *src, size_t n, u16 *id, mt_u64 *clock, s32 *tid);

#endif
