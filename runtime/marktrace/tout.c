/*
 * tout.c - escaping for JSON, HTML and XML output (see tout.h).
 */
#include <string.h>
#include "tout.h"
#include "mt_utf8.h"

static const char xdigits[] = "0123456789abcdef";

unsigned tout_utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;

	return mt_utf8_len(s, n, &cp);
}

static void put_u4(struct vbuf *b, unsigned c)
{
	*b->p++ = '\\';
	*b->p++ = 'u';
	*b->p++ = xdigits[(c >> 12) & 15];
	*b->p++ = xdigits[(c >> 8) & 15];
	*b->p++ = xdigits[(c >> 4) & 15];
	*b->p++ = xdigits[c & 15];
}

static void put_hex_text(struct vbuf *b, unsigned char c, const char *backslash)
{
	vb_str(b, backslash);
	*b->p++ = 'x';
	*b->p++ = xdigits[c >> 4];
	*b->p++ = xdigits[c & 15];
}

void tout_json_string(struct vbuf *b, const char *str, size_t max, int html)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, n = strnlen(str, max);

	*b->p++ = '"';
	for (i = 0; i < n;) {
		unsigned char c = s[i];

		vb_check(b);
		if (c >= 0x80) {
			unsigned len = tout_utf8_len(s + i, n - i);
			if (!len) {
				put_hex_text(b, c, "\\\\");
				i++;
			} else if (html && len == 3 && c == 0xe2 && s[i + 1] == 0x80 &&
				   (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
				put_u4(b, s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
				i += 3;
			} else {
				memcpy(b->p, s + i, len);
				b->p += len;
				i += len;
			}
			continue;
		}
		i++;
		switch (c) {
		case '"': vb_put(b, "\\\"", 2); continue;
		case '\\': vb_put(b, "\\\\", 2); continue;
		case '\n': vb_put(b, "\\n", 2); continue;
		case '\t': vb_put(b, "\\t", 2); continue;
		case '\r': vb_put(b, "\\r", 2); continue;
		case '<': case '>': case '&':
			if (html) {
				put_u4(b, c);
				continue;
			}
		}
		if (c < 0x20 || c == 0x7f)
			put_u4(b, c);
		else
			*b->p++ = (char)c;
	}
	*b->p++ = '"';
}

void tout_text(struct vbuf *b, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, n = strnlen(str, max);

	for (i = 0; i < n;) {
		unsigned char c = s[i];

		vb_check(b);
		if (c >= 0x80) {
			unsigned len = tout_utf8_len(s + i, n - i);
			/* U+FFFE and U+FFFF are not XML characters either */
			if (!len || (len == 3 && c == 0xef && s[i + 1] == 0xbf && s[i + 2] >= 0xbe)) {
				put_hex_text(b, c, "\\");
				i++;
			} else {
				memcpy(b->p, s + i, len);
				b->p += len;
				i += len;
			}
			continue;
		}
		i++;
		switch (c) {
		case '&': vb_put(b, "&amp;", 5); continue;
		case '<': vb_put(b, "&lt;", 4); continue;
		case '>': vb_put(b, "&gt;", 4); continue;
		case '"': vb_put(b, "&quot;", 6); continue;
		case '\'': vb_put(b, "&#39;", 5); continue;
		}
		if (c < 0x20 || c == 0x7f)
			put_hex_text(b, c, "\\");
		else
			*b->p++ = (char)c;
	}
}

void tout_json_micros(struct vbuf *b, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);

	vb_u64(b, ns / 1000);
	*b->p++ = '.';
	*b->p++ = (char)('0' + frac / 100);
	*b->p++ = (char)('0' + frac / 10 % 10);
	*b->p++ = (char)('0' + frac % 10);
}
