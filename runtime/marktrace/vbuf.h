/*
 * vbuf.h - struct vbuf, the text output of `marktrace view` (and stats,
 * timeline, export): a large buffer written
 * with write(2) in 64 KiB chunks, and hand-written formatters for the values
 * of an event (printf per field costs more than the rest of the viewer).
 */
#ifndef MT_VBUF_H
#define MT_VBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VB_CHUNK  65536
#define VB_SLACK  8192          /* room for one value past a chunk: never split mid-number */

struct vbuf {
	char *p;                /* next free byte */
	int fd;
	int failed;             /* a write failed: errno kept in error */
	int error;
	char buf[VB_CHUNK + VB_SLACK];
};

void vb_init(struct vbuf *b, int fd);
/* Write what is buffered; 0 or -1 (b->error). */
int vb_flush(struct vbuf *b);

/*
 * Flush when a chunk is full.  Call it before each value: a value written
 * with the inline helpers below may then use up to VB_SLACK bytes.
 * vb_put, vb_escaped and vb_quoted check for themselves.
 */
static inline void vb_check(struct vbuf *b)
{
	if (b->p - b->buf >= VB_CHUNK)
		vb_flush(b);
}

static inline void vb_char(struct vbuf *b, char c)
{
	*b->p++ = c;
}

/* n bytes of anything; n may exceed the buffer. */
void vb_put(struct vbuf *b, const char *s, size_t n);

static inline void vb_str(struct vbuf *b, const char *s)
{
	vb_put(b, s, strlen(s));
}

void vb_u64(struct vbuf *b, uint64_t v);
void vb_i64(struct vbuf *b, int64_t v);
void vb_hex(struct vbuf *b, uint64_t v);      /* 0x1f */
void vb_oct(struct vbuf *b, uint64_t v);      /* 017 */
void vb_bin(struct vbuf *b, uint64_t v);      /* 0b101 */
void vb_double(struct vbuf *b, double d);     /* shortest text that reads back the same */
void vb_nanos(struct vbuf *b, uint64_t ns);   /* 9 digits */
/* "text" with \" \\ \n \t \r \xHH escapes; at most max bytes, stops at NUL. */
void vb_quoted(struct vbuf *b, const char *s, size_t max);
/* the same without the quotes */
void vb_escaped(struct vbuf *b, const char *s, size_t max);
/* 'c' with the same escapes */
void vb_quoted_char(struct vbuf *b, unsigned char c);

#endif
