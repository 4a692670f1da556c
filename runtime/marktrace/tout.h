/*
 * tout.h - text for the timeline's HTML and SVG and for export's JSON:
 * strings from a trace (names, procnames, string fields) escaped so that
 * whatever bytes a traced program put in them, the output stays valid
 * JSON, valid XML and inert inside an HTML <script>.
 */
#ifndef TOUT_H
#define TOUT_H

#include <stddef.h>
#include <stdint.h>
#include "vbuf.h"

/*
 * A JSON string with its quotes: at most max bytes of s, up to a NUL.
 * Valid UTF-8 is kept; an invalid byte becomes the text \xHH (as
 * `marktrace view` shows it); control characters become \uXXXX escapes.
 * html: also < > & and U+2028/U+2029 as \uXXXX, for JSON inside <script>.
 */
void tout_json_string(struct vbuf *b, const char *s, size_t max, int html);

/* XML character data or attribute value (no quotes): entities for & < > " ',
 * \xHH text for bytes XML cannot hold (controls, invalid UTF-8). */
void tout_text(struct vbuf *b, const char *s, size_t max);

/* ns as microseconds with 3 decimals ("12.345"), as trace-event JSON wants. */
void tout_json_micros(struct vbuf *b, uint64_t ns);

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
unsigned tout_utf8_len(const unsigned char *s, size_t n);

#endif
