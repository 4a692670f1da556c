/*
 * vbuf.c - struct vbuf: buffered output and value formatting for `marktrace`
 * view, stats, timeline and export (vbuf.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vbuf.h"

void vb_init(struct vbuf *b, int fd)
{
	b->p = b->buf;
	b->fd = fd;
	b->failed = 0;
	b->error = 0;
}

int vb_flush(struct vbuf *b)
{
	const char *q = b->buf;

	while (q < b->p && !b->failed) {
		ssize_t n = write(b->fd, q, (size_t)(b->p - q));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			b->failed = 1;
			b->error = n < 0 ? errno : EIO;
			break;
		}
		q += n;
	}
	b->p = b->buf;
	return b->failed ? -1 : 0;
}

void vb_put(struct vbuf *b, const char *s, size_t n)
{
	while (n) {
		size_t room = (size_t)(b->buf + sizeof(b->buf) - b->p), k = n < room ? n : room;
		memcpy(b->p, s, k);
		b->p += k;
		s += k;
		n -= k;
		if (n)
			vb_flush(b);
	}
}

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline unsigned count_digits(uint64_t v)
{
	unsigned n = 1;

	for (;;) {
		if (v < 10) return n;
		if (v < 100) return n + 1;
		if (v < 1000) return n + 2;
		if (v < 10000) return n + 3;
		v /= 10000;
		n += 4;
	}
}

/* Write the digits backwards from their end: no temporary, no memcpy. */
void vb_u64(struct vbuf *b, uint64_t v)
{
	unsigned n = count_digits(v);
	char *q = b->p + n;

	b->p = q;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		*--q = digit_pairs[d + 1];
		*--q = digit_pairs[d];
	}
	if (v >= 10) {
		*--q = digit_pairs[v * 2 + 1];
		*--q = digit_pairs[v * 2];
	} else {
		*--q = (char)('0' + v);
	}
}

void vb_i64(struct vbuf *b, int64_t v)
{
	if (v < 0) {
		*b->p++ = '-';
		vb_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		vb_u64(b, (uint64_t)v);
	}
}

static void vb_radix(struct vbuf *b, uint64_t v, unsigned shift)
{
	static const char xdigits[] = "0123456789abcdef";
	char tmp[64], *q = tmp + sizeof(tmp);
	uint64_t mask = (1u << shift) - 1;
	size_t n;

	do {
		*--q = xdigits[v & mask];
		v >>= shift;
	} while (v);
	n = (size_t)(tmp + sizeof(tmp) - q);
	memcpy(b->p, q, n);
	b->p += n;
}

void vb_hex(struct vbuf *b, uint64_t v)
{
	*b->p++ = '0';
	*b->p++ = 'x';
	vb_radix(b, v, 4);
}

void vb_oct(struct vbuf *b, uint64_t v)
{
	*b->p++ = '0';
	if (v)
		vb_radix(b, v, 3);
}

void vb_bin(struct vbuf *b, uint64_t v)
{
	*b->p++ = '0';
	*b->p++ = 'b';
	vb_radix(b, v, 1);
}

static int reads_back(const char *s, double d)
{
	return strtod(s, NULL) == d;
}

void vb_double(struct vbuf *b, double d)
{
	char tmp[40];
	int prec, n = 0;

	/* the shortest %.Ng that reads back exactly: rare enough for snprintf */
	for (prec = 15; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (d != d || reads_back(tmp, d))
			break;
	}
	memcpy(b->p, tmp, (size_t)n);
	b->p += n;
}

void vb_nanos(struct vbuf *b, uint64_t ns)
{
	unsigned v = (unsigned)(ns % 1000000000u), i, d;
	char *q = b->p + 9;

	for (i = 0; i < 4; i++) {
		d = (v % 100) * 2;
		v /= 100;
		*--q = digit_pairs[d + 1];
		*--q = digit_pairs[d];
	}
	*--q = (char)('0' + v);
	b->p += 9;
}

/* One byte of a string or char, escaped; the caller guarantees 4 bytes of room. */
static inline void put_escaped(struct vbuf *b, unsigned char c, char quote)
{
	static const char xdigits[] = "0123456789abcdef";

	if (c >= 0x20 && c != 0x7f && c != '\\' && c != (unsigned char)quote) {
		*b->p++ = (char)c;
		return;
	}
	*b->p++ = '\\';
	switch (c) {
	case '\n': *b->p++ = 'n'; break;
	case '\t': *b->p++ = 't'; break;
	case '\r': *b->p++ = 'r'; break;
	case '\\': case '"': case '\'': *b->p++ = (char)c; break;
	default:
		*b->p++ = 'x';
		*b->p++ = xdigits[c >> 4];
		*b->p++ = xdigits[c & 15];
	}
}

/*
 * Bytes of 0x80 and up in a string: UTF-8 is shown as it is, except the
 * C1 controls (U+0080-U+009F: CSI is U+009B, which xterm obeys as ESC [)
 * and bytes 0x80-0x9F outside a sequence (C1 itself on an 8-bit
 * terminal); other bytes as before.  How many bytes of s it took.
 */
static size_t put_high(struct vbuf *b, const unsigned char *s, size_t max)
{
	static const char xd[] = "0123456789abcdef";
	size_t len = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 :
		     s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 1, i;
	int c1 = s[0] == 0xc2 && max >= 2 && s[1] >= 0x80 && s[1] <= 0x9f;

	for (i = 1; i < len; i++)
		if (i >= max || (s[i] & 0xc0) != 0x80)
			len = 1;   /* not a sequence: this byte alone */
	if (len == 1 && s[0] >= 0xa0) {
		*b->p++ = (char)s[0];
		return 1;
	}
	if (len > 1 && !c1) {
		memcpy(b->p, s, len);
		b->p += len;
		return len;
	}
	for (i = 0; i < (c1 ? 2u : 1u); i++) {
		*b->p++ = '\\';
		*b->p++ = 'x';
		*b->p++ = xd[s[i] >> 4];
		*b->p++ = xd[s[i] & 15];
	}
	return i;
}

void vb_escaped(struct vbuf *b, const char *s, size_t max)
{
	const char *end = b->buf + sizeof(b->buf) - 8;
	size_t i;

	for (i = 0; i < max && s[i];) {
		if (b->p >= end)
			vb_flush(b);
		if ((unsigned char)s[i] >= 0x80) {
			i += put_high(b, (const unsigned char *)s + i, strnlen(s + i, max - i));
			continue;
		}
		put_escaped(b, (unsigned char)s[i++], '"');
	}
}

void vb_quoted(struct vbuf *b, const char *s, size_t max)
{
	*b->p++ = '"';
	vb_escaped(b, s, max);
	*b->p++ = '"';
}

void vb_quoted_char(struct vbuf *b, unsigned char c)
{
	*b->p++ = '\'';
	put_escaped(b, c, '\'');
	*b->p++ = '\'';
}
