/*
 * mt_event.c - serialise a marker hit (shared by libmarktap and marktap.ko).
 */
#include "mt_event.h"

static u32 string_bytes(const char *s)
{
	u32 n = 0;

	while (n < MT_STRING_MAX - 1 && s[n])
		n++;
	return n + 1;
}

size_t mt_event_fetch(const struct mt_format *f, va_list ap, struct mt_args *a)
{
	size_t size = 0;
	unsigned i;

	if (f->planned)
		return mt_event_fetch_planned(f, ap, a);
	for (i = 0; i < f->nfields; i++) {
		const struct mt_field *fld = &f->fields[i];

		switch (fld->va) {
		case MT_VA_INT:
			a->v[i].u = fld->is_signed ? (mt_u64)(s64)va_arg(ap, int)
						   : (mt_u64)va_arg(ap, unsigned int);
			break;
		case MT_VA_LONG:
			a->v[i].u = fld->is_signed ? (mt_u64)(s64)va_arg(ap, long)
						   : (mt_u64)va_arg(ap, unsigned long);
			break;
		case MT_VA_LLONG:
			a->v[i].u = (mt_u64)va_arg(ap, unsigned long long);
			break;
		case MT_VA_PTR:
			a->v[i].u = (mt_u64)(unsigned long)va_arg(ap, void *);
			break;
		case MT_VA_STRING:
			a->v[i].str = va_arg(ap, const char *);
			if (!a->v[i].str)
				a->v[i].str = "(null)";
			a->slen[i] = string_bytes(a->v[i].str);
			size += a->slen[i];
			continue;
#ifndef __KERNEL__
		case MT_VA_DOUBLE:
			a->v[i].d = va_arg(ap, double);
			break;
#endif
		}
		size += fld->size;
	}
	return size;
}

void mt_event_write_payload(const struct mt_format *f, const struct mt_args *a, char *dst)
{
	unsigned i;

	if (f->planned) {
		mt_event_write_planned(f, a, dst);
		return;
	}
	for (i = 0; i < f->nfields; i++) {
		const struct mt_field *fld = &f->fields[i];

		if (fld->store == MT_ST_STRING) {
			u32 n = a->slen[i], k;
			const char *src = a->v[i].str;
			if (n <= 16) {   /* short strings: no call */
				for (k = 0; k + 1 < n; k++)
					dst[k] = src[k];
			} else {
				memcpy(dst, src, n - 1);
			}
			dst[n - 1] = '\0';
			dst += n;
		} else {
			/* little endian: the low bytes of the 64-bit value; fixed
			 * sizes, so that each copy is one store */
			switch (fld->size) {
			case 1: { u8 v = (u8)a->v[i].u; memcpy(dst, &v, 1); break; }
			case 2: { u16 v = (u16)a->v[i].u; memcpy(dst, &v, 2); break; }
			case 4: { u32 v = (u32)a->v[i].u; memcpy(dst, &v, 4); break; }
			default: memcpy(dst, &a->v[i].u, 8); break;
			}
			dst += fld->size;
		}
	}
}

int mt_event_read_prefix(const char *src, size_t n, u16 *id, mt_u64 *ts,
			 struct mt_event_context *ctx)
{
	if (n < MT_EVENT_PREFIX_SIZE)
		return -EINVAL;
	memcpy(id, src, 2);
	memcpy(ts, src + 2, 8);
	memcpy(ctx, src + MT_EVENT_HEADER_SIZE, MT_EVENT_CONTEXT_SIZE);
	ctx->procname[MT_PROCNAME_MAX - 1] = '\0';
	return 0;
}

long mt_event_read_payload(const struct mt_format *f, const char *src, size_t n,
			   struct mt_args *a)
{
	size_t off = 0;
	unsigned i;

	for (i = 0; i < f->nfields; i++) {
		const struct mt_field *fld = &f->fields[i];

		if (fld->store == MT_ST_STRING) {
			size_t len = strnlen(src + off, n - off);
			if (off + len >= n)
				return -EINVAL;   /* no NUL before the end */
			a->v[i].str = src + off;
			a->slen[i] = (u32)len + 1;
			off += len + 1;
		} else {
			mt_u64 v = 0;
			if (n - off < fld->size)
				return -EINVAL;
			memcpy(&v, src + off, fld->size);
			if (fld->is_signed && fld->size < 8 && (v >> (fld->size * 8 - 1)) & 1)
				v |= ~0ull << (fld->size * 8);
			a->v[i].u = v;
			off += fld->size;
		}
	}
	return (long)off;
}

int mt_uevent_read_prefix(const char *src, size_t n, u16 *id, mt_u64 *clock, s32 *tid)
{
	const mt_u64 low = (1ull << MT_UEVENT_TS_BITS) - 1;
	size_t hsize;

	if (n < MT_UEVENT_MIN_SIZE)
		return -EINVAL;
	if ((unsigned char)src[0] != MT_UEVENT_ID_EXTENDED) {
		u32 h, ts;
		memcpy(&h, src, 4);
		*id = (u16)(h & 0xff);
		ts = h >> 8;
		if (ts < (*clock & low))
			*clock += low + 1;   /* the low bits wrapped */
		*clock = (*clock & ~low) | ts;
		hsize = MT_UEVENT_COMPACT_SIZE;
	} else {
		if (n < MT_UEVENT_EXTENDED_SIZE + MT_UEVENT_CONTEXT_SIZE)
			return -EINVAL;
		memcpy(id, src + 1, 2);
		memcpy(clock, src + 3, 8);
		hsize = MT_UEVENT_EXTENDED_SIZE;
	}
	memcpy(tid, src + hsize, 4);
	return (int)(hsize + MT_UEVENT_CONTEXT_SIZE);
}
