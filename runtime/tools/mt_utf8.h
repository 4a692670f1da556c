/*
 * mt_utf8.h - one UTF-8 sequence, checked (trace readers' escaping: the
 * CTF reader's printable names, the JSON/HTML/XML writers).
 */
#ifndef MT_UTF8_H
#define MT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length of the well-formed sequence at s (n bytes left): 1 for
 * ASCII, 2 to 4, or 0 for a stray byte, a cut sequence, an overlong form,
 * a surrogate or a code point past U+10FFFF.  *cpp gets the code point. */
static inline unsigned mt_utf8_len(const unsigned char *s, size_t n, uint32_t *cpp)
{
	unsigned len, i;
	uint32_t cp;

	if (s[0] < 0x80) {
		*cpp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	*cpp = cp;
	return len;
}

#endif
