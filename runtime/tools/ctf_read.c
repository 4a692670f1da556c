/*
 * ctf_read.c - read the streams of CTF traces: step through the packets
 * and events of a mapped stream file with every size and offset checked
 * against the packet and the file, and merge all streams by time with a
 * binary heap.  The metadata is ctf_tsdl.c's; finding the traces under a
 * directory and mapping their files, ctf_open.c's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctf_int.h"


/* ---- streams ---- */

static void gen_free(struct ctf_gen *g);

static inline uint64_t rd(const unsigned char *p, unsigned size)
{
	uint64_t v = 0;
	uint32_t v32;
	uint16_t v16;

	switch (size) {
	case 1: return p[0];
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	case 8: memcpy(&v, p, 8); return v;
	}
	while (size--)
		v = v << 8 | p[size];
	return v;
}

static inline uint64_t rd_fixed(const unsigned char *base, struct fixed f, uint64_t dflt)
{
	return f.off >= 0 ? rd(base + f.off, f.size) : dflt;
}

struct ctf_stream *ctf_stream_new(struct ctf_trace *t, const char *path,
				  const unsigned char *data, size_t size)
{
	struct ctf_stream *s = calloc(1, sizeof(*s));
	const char *slash;
	char *shown;

	if (!s)
		abort();
	s->trace = t;
	shown = malloc(4 * strlen(path) + 1);   /* for messages: printable */
	s->field_off = calloc(t->max_fields + 1, sizeof(*s->field_off));
	s->ctx_off = calloc(t->max_ctx_fields + 1, sizeof(*s->ctx_off));
	if (!shown || !s->field_off || !s->ctx_off)
		abort();
	ctf_printable(shown, path, strlen(path));
	s->path = shown;
	slash = strrchr(s->path, '/');
	s->file = slash ? slash + 1 : s->path;
	s->base = data;
	s->size = size;
	s->cpu = -1;
	/* channel0_<cpu>: known before the first packet, and for a stream without one */
	{
		const char *u = strrchr(s->file, '_');
		char *end;
		long cpu;
		if (u && u[1] >= '0' && u[1] <= '9') {
			cpu = strtol(u + 1, &end, 10);
			if (!*end && cpu < 1000000)
				s->cpu = cpu;
		}
	}
	s->ev.field_off = s->field_off;
	return s;
}

void ctf_stream_free(struct ctf_stream *s)
{
	if (!s)
		return;
	free((char *)s->path);
	free(s->field_off);
	free(s->ctx_off);
	free(s->error);
	free(s->threads);
	gen_free(s->gen);
	free(s);
}

static int stream_fail(struct ctf_stream *s, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int stream_fail(struct ctf_stream *s, size_t off, const char *fmt, ...)
{
	char what[400];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	n = strlen(s->path) + strlen(what) + 48;
	s->error = malloc(n);
	if (!s->error)
		abort();
	snprintf(s->error, n, "%s: byte %zu: %s", s->path, off, what);
	s->item = CTF_ITEM_ERROR;
	return CTF_ITEM_ERROR;
}

static inline uint64_t to_time(const struct ctf_trace *t, uint64_t value)
{
	uint64_t ns = t->freq == 1000000000 ? value :
		(uint64_t)((unsigned __int128)value * 1000000000u / t->freq);
	return ns + (uint64_t)t->offset_ns;
}

/* The recorder died writing the packet at off (an incomplete trace): the
 * rest of the file is one lost packet, and the stream's end. */
static int cut_short(struct ctf_stream *s, size_t off)
{
	s->pkt_off = off;
	s->pos = s->pkt_content_end = s->pkt_end = s->size;
	s->lost_events = 0;
	s->lost_packets = 1;
	s->total_lost_packets++;
	s->cut = s->cut_packet = 1;
	if (s->have_packet && s->trace->layout->ts_end.off >= 0)
		s->time = to_time(s->trace, s->pkt_ts_end);
	s->item = CTF_ITEM_LOST;
	return CTF_ITEM_LOST;
}

/* ---- generic decoding: walk the TSDL types (LTTng's traces) ---- */

#define MAX_SCRATCH (64u << 20) /* widened values and text of one event */
#define MAX_ELEMS   (1u << 22)  /* values decoded in one event or packet header */
#define MAX_NEST    64          /* nested values while decoding */

/* A named integer (or string) decoded so far: sequences and variants refer to them. */
struct gval {
	const char *name;
	uint64_t v;
	const struct ctf_type *type;
	uint64_t bit;           /* where it was, in the file */
	size_t text;            /* strings: offset of the copy in buf, else (size_t)-1 */
};

struct ctf_gen {
	char *buf;
	size_t len, cap;
	struct gval *vals;
	unsigned nvals, cap_vals;
	unsigned elems, nest;
};

struct cur {
	const unsigned char *base;
	uint64_t bit, end;      /* bits from base */
};

static struct ctf_gen *gen_of(struct ctf_stream *s)
{
	if (!s->gen) {
		s->gen = calloc(1, sizeof(*s->gen));
		if (!s->gen)
			abort();
	}
	s->gen->len = 0;
	s->gen->nvals = 0;
	s->gen->elems = 0;
	s->gen->nest = 0;
	return s->gen;
}

static void gen_free(struct ctf_gen *g)
{
	if (g) {
		free(g->buf);
		free(g->vals);
		free(g);
	}
}

static int put(struct ctf_stream *s, const void *p, size_t n)
{
	struct ctf_gen *g = s->gen;

	if (!n)
		return 0;       /* nothing to copy, and buf may not exist yet */
	if (g->cap - g->len < n) {
		size_t cap = g->cap ? g->cap : 256;
		while (cap - g->len < n)
			cap *= 2;
		if (cap > MAX_SCRATCH)
			return -1;
		g->buf = realloc(g->buf, cap);
		if (!g->buf)
			abort();
		g->cap = cap;
	}
	memcpy(g->buf + g->len, p, n);
	g->len += n;
	return 0;
}

static int puts_(struct ctf_stream *s, const char *str)
{
	return put(s, str, strlen(str));
}

static int too_big(struct ctf_stream *s, const struct cur *c)
{
	return stream_fail(s, (size_t)(c->bit / 8), "event too large to decode (more than %u MiB as text)",
			   MAX_SCRATCH >> 20);
}

static int g_align(struct ctf_stream *s, struct cur *c, unsigned align, const char *name)
{
	uint64_t a = align ? align : 1;
	uint64_t bit = (c->bit + a - 1) / a * a;

	if (bit > c->end)
		return stream_fail(s, (size_t)(c->bit / 8), "field '%s' runs past the packet content", name);
	c->bit = bit;
	return 0;
}

/* size bits (at most 64) at the cursor, in the type's byte order */
static uint64_t get_bits(const struct cur *c, unsigned size, int big_endian)
{
	uint64_t v = 0;
	unsigned i;

	if (c->bit % 8 == 0 && size % 8 == 0) {
		const unsigned char *p = c->base + c->bit / 8;
		unsigned n = size / 8;
		if (big_endian)
			for (i = 0; i < n; i++)
				v = v << 8 | p[i];
		else
			while (n--)
				v = v << 8 | p[n];
		return v;
	}
	for (i = 0; i < size; i++) {
		uint64_t b = c->bit + (big_endian ? i : size - 1 - i);
		v = v << 1 | ((c->base[b / 8] >> (big_endian ? 7 - b % 8 : b % 8)) & 1);
	}
	return v;
}

/* An integer or enum value, sign extended */
static int g_int(struct ctf_stream *s, struct cur *c, const struct ctf_type *t, const char *name, uint64_t *out)
{
	uint64_t v;

	if (t->kind == TY_ENUM)
		t = t->elem;
	if (g_align(s, c, t->align, name))
		return -1;
	if (t->size > 64 || t->size == 0)
		return stream_fail(s, (size_t)(c->bit / 8), "field '%s': integers of %u bits are not supported (1 to 64)",
				   name, t->size);
	if (c->end - c->bit < t->size)
		return stream_fail(s, (size_t)(c->bit / 8), "field '%s' runs past the packet content (%llu bits left, it takes %u)",
				   name, (unsigned long long)(c->end - c->bit), t->size);
	v = get_bits(c, t->size, t->big_endian);
	c->bit += t->size;
	if (t->is_signed && t->size < 64) {
		uint64_t sign = (uint64_t)1 << (t->size - 1);
		v = (v ^ sign) - sign;
	}
	*out = v;
	return 0;
}

static int g_float(struct ctf_stream *s, struct cur *c, const struct ctf_type *t, const char *name, double *out)
{
	uint64_t raw;

	if (t->size != 32 && t->size != 64)
		return stream_fail(s, (size_t)(c->bit / 8), "field '%s': floats of %u bits are not supported (32, 64)",
				   name, t->size);
	if (g_align(s, c, t->align, name))
		return -1;
	if (c->end - c->bit < t->size)
		return stream_fail(s, (size_t)(c->bit / 8), "field '%s' runs past the packet content", name);
	raw = get_bits(c, t->size, t->big_endian);
	c->bit += t->size;
	if (t->size == 32) {
		uint32_t r32 = (uint32_t)raw;
		float f;
		memcpy(&f, &r32, 4);
		*out = f;
	} else {
		memcpy(out, &raw, 8);
	}
	return 0;
}

static int is_char(const struct ctf_type *t)
{
	return t->kind == TY_INT && t->size == 8 && t->encoded;
}

/* A NUL-terminated string at the cursor: its bytes (without the NUL) */
static int g_string(struct ctf_stream *s, struct cur *c, const char *name, const char **str, size_t *n)
{
	const unsigned char *p, *z;

	if (g_align(s, c, 8, name))
		return -1;
	p = c->base + c->bit / 8;
	z = memchr(p, 0, (size_t)((c->end - c->bit) / 8));
	if (!z)
		return stream_fail(s, (size_t)(c->bit / 8), "string field '%s' has no NUL before the end of the packet content",
				   name);
	*str = (const char *)p;
	*n = (size_t)(z - p);
	c->bit += (uint64_t)(*n + 1) * 8;
	return 0;
}

/* The named integer a sequence or variant refers to (its last dotted part), innermost first */
static const struct gval *find_val(const struct ctf_gen *g, const char *ref)
{
	const char *dot = strrchr(ref, '.');
	unsigned i = g->nvals;

	if (dot)
		ref = dot + 1;
	while (i--)
		if (!strcmp(g->vals[i].name, ref))
			return &g->vals[i];
	return NULL;
}

static void keep_val(struct ctf_gen *g, const char *name, const struct ctf_type *t, uint64_t v,
		     uint64_t bit, size_t text)
{
	struct gval *gv;

	if (g->nvals == g->cap_vals) {
		g->cap_vals = g->cap_vals ? g->cap_vals * 2 : 32;
		g->vals = realloc(g->vals, g->cap_vals * sizeof(*g->vals));
		if (!g->vals)
			abort();
	}
	gv = &g->vals[g->nvals++];
	gv->name = name;
	gv->type = t;
	gv->v = v;
	gv->bit = bit;
	gv->text = text;
}

static int put_quoted(struct ctf_stream *s, const char *str, size_t n)
{
	size_t i;

	if (put(s, "\"", 1))
		return -1;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)str[i];
		char esc[8];
		if (ch == '"' || ch == '\\')
			snprintf(esc, sizeof(esc), "\\%c", ch);
		else if (ch == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (ch == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", ch);
		else
			esc[0] = (char)ch, esc[1] = '\0';
		if (puts_(s, esc))
			return -1;
	}
	return put(s, "\"", 1);
}

/* v in decimal into buf (at least 24 bytes): its length.  snprintf costs
 * a third of decoding an LTTng event with arrays. */
static size_t fmt_dec(char *buf, uint64_t v, int is_signed)
{
	char tmp[24], *q = tmp + sizeof(tmp);
	size_t n = 0;

	if (is_signed && (int64_t)v < 0) {
		buf[n++] = '-';
		v = -v;
	}
	do
		*--q = (char)('0' + v % 10);
	while (v /= 10);
	memcpy(buf + n, q, (size_t)(tmp + sizeof(tmp) - q));
	n += (size_t)(tmp + sizeof(tmp) - q);
	buf[n] = '\0';
	return n;
}

static int put_int(struct ctf_stream *s, const struct ctf_type *t, uint64_t v)
{
	const struct ctf_type *it = t->kind == TY_ENUM ? t->elem : t;
	char num[80];

	switch (it->base) {
	case 16: snprintf(num, sizeof(num), "0x%llx", (unsigned long long)v); break;
	case 8: snprintf(num, sizeof(num), "0%llo", (unsigned long long)v); break;
	case 2: {
		char *q = num + sizeof(num) - 1;
		unsigned bits = it->size ? it->size : 1;
		*q = '\0';
		while (bits-- && q > num + 2)
			*--q = (char)('0' + (v >> (it->size - 1 - bits) & 1));
		memmove(num + 2, q, strlen(q) + 1);
		num[0] = '0', num[1] = 'b';
		break;
	}
	default:
		if (t->kind != TY_ENUM)
			return put(s, num, fmt_dec(num, v, it->is_signed));
		fmt_dec(num, v, it->is_signed);
	}
	if (t->kind != TY_ENUM)
		return puts_(s, num);
	{
		const char *label = ctf_enum_label(t, v);
		if (puts_(s, "( ") || (label ? put_quoted(s, label, strlen(label)) : puts_(s, "<unknown>")) ||
		    puts_(s, " : container = ") || puts_(s, num) || puts_(s, " )"))
			return -1;
	}
	return 0;
}

static int g_value(struct ctf_stream *s, struct cur *c, const struct ctf_type *t, const char *name,
		   int named, int render);

/* The elements of an array or sequence: "[ [0] = 1, [1] = 2 ]", or a quoted string of chars */
static int g_elems(struct ctf_stream *s, struct cur *c, const struct ctf_type *t, const char *name,
		   uint64_t n, int render)
{
	struct ctf_gen *g = s->gen;
	uint64_t i, start;
	char idx[32];

	if (n > MAX_ELEMS - g->elems)
		return stream_fail(s, (size_t)(c->bit / 8), "field '%s': %llu elements are too many", name,
				   (unsigned long long)n);
	g->elems += (unsigned)n;
	if (g_align(s, c, t->elem->align, name))
		return -1;
	start = c->bit;
	if (is_char(t->elem)) {
		const char *p = (const char *)c->base + c->bit / 8;
		size_t len;
		if (c->bit % 8 || (c->end - c->bit) / 8 < n)
			return stream_fail(s, (size_t)(c->bit / 8), "field '%s' runs past the packet content", name);
		c->bit += n * 8;
		len = strnlen(p, (size_t)n);
		if (render)
			return put_quoted(s, p, len);
		keep_val(g, name, t, 0, start, g->len);
		return put(s, p, len) || put(s, "", 1) ? too_big(s, c) : 0;
	}
	if (!render) {
		keep_val(g, name, t, n, start, (size_t)-1);
		for (i = 0; i < n; i++)
			if (g_value(s, c, t->elem, name, 0, 0))
				return -1;
		return 0;
	}
	if (puts_(s, n ? "[ " : "[ ]"))
		return too_big(s, c);
	for (i = 0; i < n; i++) {
		size_t n0 = 0;
		if (i)
			idx[n0++] = ',', idx[n0++] = ' ';
		idx[n0++] = '[';
		n0 += fmt_dec(idx + n0, i, 0);
		memcpy(idx + n0, "] = ", 4);
		if (put(s, idx, n0 + 4))
			return too_big(s, c);
		if (g_value(s, c, t->elem, name, 0, 1))
			return -1;
	}
	return n && puts_(s, " ]") ? too_big(s, c) : 0;
}

static int g_struct(struct ctf_stream *s, struct cur *c, const struct ctf_type *t, const char *name, int render)
{
	unsigned i;

	if (g_align(s, c, t->align, name))
		return -1;
	if (render && puts_(s, t->ndecls ? "{ " : "{ }"))
		return too_big(s, c);
	for (i = 0; i < t->ndecls; i++) {
		const char *fname = t->decls[i].name;
		if (render && (puts_(s, i ? ", " : "") || puts_(s, fname[0] == '_' && fname[1] ? fname + 1 : fname) ||
			       puts_(s, " = ")))
			return too_big(s, c);
		if (g_value(s, c, t->decls[i].type, fname, 1, render))
			return -1;
	}
	return render && t->ndecls && puts_(s, " }") ? too_big(s, c) : 0;
}

static int g_variant(struct ctf_stream *s, struct cur *c, const struct ctf_type *t, const char *name, int render)
{
	const struct gval *tag = t->ref ? find_val(s->gen, t->ref) : NULL;
	const char *label;
	unsigned i;

	if (!tag || tag->type->kind != TY_ENUM)
		return stream_fail(s, (size_t)(c->bit / 8), "variant '%s': its tag '%s' is not an enum decoded before it",
				   name, t->ref ? t->ref : "");
	label = ctf_enum_label(tag->type, tag->v);
	for (i = 0; label && i < t->ndecls; i++) {
		const char *o = t->decls[i].name;
		if (!strcmp(o, label) || (o[0] == '_' && !strcmp(o + 1, label))) {
			/* shown as babeltrace2 does: { VALUE } */
			if (render && puts_(s, "{ "))
				return too_big(s, c);
			if (g_value(s, c, t->decls[i].type, o, 1, render))
				return -1;
			return render && puts_(s, " }") ? too_big(s, c) : 0;
		}
	}
	return stream_fail(s, (size_t)(c->bit / 8), "variant '%s': no option for tag value %lld (%s)", name,
			   (long long)tag->v, label ? label : "no label");
}

/*
 * Decode one value of type t at the cursor.  render: append its text to
 * the scratch buffer; else only keep the named integers and strings that
 * later fields refer to (and the header fields the reader wants).
 */
static int g_value(struct ctf_stream *s, struct cur *c, const struct ctf_type *t, const char *name,
		   int named, int render)
{
	struct ctf_gen *g = s->gen;
	uint64_t v = 0, bit;
	const struct gval *len;
	const char *str;
	size_t n;
	double d;
	int rc;

	if (++g->elems > MAX_ELEMS || g->nest >= MAX_NEST)
		return stream_fail(s, (size_t)(c->bit / 8), "field '%s': too many or too deeply nested values", name);
	g->nest++;
	switch (t->kind) {
	case TY_INT:
	case TY_ENUM:
		rc = g_int(s, c, t, name, &v);
		if (!rc && named)
			keep_val(g, name, t, v, c->bit - (t->kind == TY_ENUM ? t->elem->size : t->size), (size_t)-1);
		if (!rc && render && put_int(s, t, v))
			rc = too_big(s, c);
		break;
	case TY_FLOAT:
		rc = g_float(s, c, t, name, &d);
		if (!rc && render) {
			char num[40];
			snprintf(num, sizeof(num), "%.17g", d);
			if (puts_(s, num))
				rc = too_big(s, c);
		}
		break;
	case TY_STRING:
		bit = c->bit;
		rc = g_string(s, c, name, &str, &n);
		if (!rc && render && put_quoted(s, str, n))
			rc = too_big(s, c);
		if (!rc && !render && named) {
			keep_val(g, name, t, 0, bit, g->len);
			if (put(s, str, n) || put(s, "", 1))
				rc = too_big(s, c);
		}
		break;
	case TY_ARRAY:
		rc = g_elems(s, c, t, name, t->length, render);
		break;
	case TY_SEQ:
		len = find_val(g, t->ref);
		if (!len || (len->type->kind != TY_INT && len->type->kind != TY_ENUM) ||
		    (len->type->kind == TY_INT ? len->type : len->type->elem)->is_signed)
			rc = stream_fail(s, (size_t)(c->bit / 8), "sequence '%s': its length '%s' is not an unsigned integer decoded before it",
					 name, t->ref);
		else
			rc = g_elems(s, c, t, name, len->v, render);
		break;
	case TY_STRUCT:
		rc = g_struct(s, c, t, name, render);
		break;
	default:
		rc = g_variant(s, c, t, name, render);
	}
	g->nest--;
	return rc;
}

/* A header or context struct: decoded, its named values kept */
static int g_scope(struct ctf_stream *s, struct cur *c, const struct ctf_type *t)
{
	return t ? g_value(s, c, t, "header", 0, 0) : 0;
}

static const struct gval *g_find(struct ctf_stream *s, unsigned from, const char *name)
{
	struct ctf_gen *g = s->gen;
	unsigned i = g->nvals;

	while (i-- > from) {
		const char *n = g->vals[i].name;
		if (n[0] == '_' && n[1])
			n++;
		if (!strcmp(n, name))
			return &g->vals[i];
	}
	return NULL;
}

static uint64_t g_get(struct ctf_stream *s, unsigned from, const char *name, uint64_t dflt, int *found)
{
	const struct gval *v = g_find(s, from, name);

	if (found)
		*found = v != NULL;
	return v ? v->v : dflt;
}

/* After a packet's header: losses since the previous packet, CTF_ITEM_LOST or 0 */
static int packet_losses(struct ctf_stream *s, int has_seq, uint64_t seq, uint64_t discarded)
{
	uint64_t lost_packets = 0, lost_events = 0;

	if (has_seq) {
		/* seq counts packets since recording began: a first packet after 0 or a jump is loss */
		if (!s->have_packet)
			lost_packets = seq;
		else if (seq > s->prev_seq + 1)
			lost_packets = seq - s->prev_seq - 1;
		s->prev_seq = seq;
	}
	/* events_discarded is cumulative per stream */
	if (discarded > s->prev_discarded)
		lost_events = discarded - s->prev_discarded;
	s->prev_discarded = discarded;
	s->have_packet = 1;
	s->packets++;
	s->pkt_seq = seq;
	s->pkt_discarded = discarded;
	if (!lost_events && !lost_packets)
		return 0;
	s->lost_events = lost_events;
	s->lost_packets = lost_packets;
	s->total_lost_events += lost_events;
	s->total_lost_packets += lost_packets;
	s->item = CTF_ITEM_LOST;
	return CTF_ITEM_LOST;
}

/* The packet header and context of a generic trace: its sizes checked */
static int g_packet_sizes(struct ctf_stream *s, size_t off, uint64_t hbits, uint64_t *packet, uint64_t *content)
{
	size_t left = s->size - off;
	int found;
	const struct gval *magic = g_find(s, 0, "magic"), *uuid = g_find(s, 0, "uuid");

	if (magic && magic->v != 0xC1FC1FC1u)
		return stream_fail(s, off, "bad packet magic 0x%08llx (expected 0xc1fc1fc1)", (unsigned long long)magic->v);
	if (uuid && s->trace->has_uuid && uuid->type->kind == TY_ARRAY && uuid->type->length == 16 &&
	    uuid->bit % 8 == 0 && memcmp(s->base + uuid->bit / 8, s->trace->uuid, 16))
		return stream_fail(s, (size_t)(uuid->bit / 8), "the packet's uuid is not the trace's");
	*packet = g_get(s, 0, "packet_size", (uint64_t)left * 8, NULL);
	*content = g_get(s, 0, "content_size", *packet, &found);
	if (*packet % 8 || *content % 8)
		return stream_fail(s, off, "content_size %llu or packet_size %llu (bits) is not a whole number of bytes",
				   (unsigned long long)*content, (unsigned long long)*packet);
	if (*content > *packet)
		return stream_fail(s, off, "content_size %llu bits is larger than packet_size %llu bits",
				   (unsigned long long)*content, (unsigned long long)*packet);
	if (*packet / 8 > left && s->trace->incomplete)
		return cut_short(s, off);
	if (*packet / 8 > left)
		return stream_fail(s, off, "packet_size %llu bytes runs past the end of the file (%zu bytes left): truncated?",
				   (unsigned long long)(*packet / 8), left);
	if (*content < hbits || *packet == 0)
		return stream_fail(s, off, "content_size %llu bits is smaller than the packet header and context (%llu bits)",
				   (unsigned long long)*content, (unsigned long long)hbits);
	return 0;
}

/* The packet header's stream_id: which stream class its packets are of. */
static int select_sclass(struct ctf_stream *s, size_t off)
{
	const struct ctf_layout *L = s->trace->layout;
	uint64_t id;
	int found;

	if (L->nsc == 1) {
		s->sclass = &L->sc[0];
		return 0;
	}
	id = g_get(s, 0, "stream_id", 0, &found);
	for (unsigned k = 0; k < L->nsc; k++)
		if (L->sc[k].id == id) {
			s->sclass = &L->sc[k];
			return 0;
		}
	return stream_fail(s, off, "stream class %llu is not in the metadata", (unsigned long long)id);
}

static int read_packet_generic(struct ctf_stream *s)
{
	const struct ctf_layout *L = s->trace->layout;
	size_t off = s->pkt_end;
	struct cur c = { s->base, (uint64_t)off * 8, (uint64_t)s->size * 8 };
	uint64_t packet = 0, content = 0;
	int has_seq, rc;

	gen_of(s);
	if (g_scope(s, &c, L->ph) || select_sclass(s, off) || g_scope(s, &c, s->sclass->pc)) {
		if (!s->trace->incomplete)
			return CTF_ITEM_ERROR;
		free(s->error);         /* the recorder died writing it */
		s->error = NULL;
		return cut_short(s, off);
	}
	rc = g_packet_sizes(s, off, c.bit - (uint64_t)off * 8, &packet, &content);
	if (rc)
		return rc;
	s->pkt_off = off;
	s->pkt_ts_begin = g_get(s, 0, "timestamp_begin", 0, NULL);
	s->pkt_ts_end = g_get(s, 0, "timestamp_end", 0, NULL);
	s->clock = s->pkt_ts_begin;
	if (g_find(s, 0, "timestamp_begin"))
		s->time = to_time(s->trace, s->pkt_ts_begin);
	if (g_find(s, 0, "cpu_id"))
		s->cpu = (int64_t)g_get(s, 0, "cpu_id", 0, NULL);
	else if (g_find(s, 0, "stream_instance_id"))
		s->cpu = (int64_t)g_get(s, 0, "stream_instance_id", 0, NULL);
	s->bitpos = c.bit;
	s->pos = (size_t)((c.bit + 7) / 8);
	s->pkt_content_end = off + (size_t)(content / 8);
	s->pkt_end = off + (size_t)(packet / 8);
	if (s->pos > s->pkt_content_end)
		s->pos = s->pkt_content_end;
	{
		uint64_t seq = g_get(s, 0, "packet_seq_num", 0, &has_seq);
		return packet_losses(s, has_seq, seq, g_get(s, 0, "events_discarded", 0, NULL));
	}
}

/* A timestamp field of size bits updates the low bits of the clock (CTF 1.8, 8.) */
static void clock_update(struct ctf_stream *s, uint64_t v, unsigned size)
{
	uint64_t mask;

	if (size >= 64) {
		s->clock = v;
		return;
	}
	mask = ((uint64_t)1 << size) - 1;
	if (v < (s->clock & mask))
		s->clock += mask + 1;       /* the low bits wrapped */
	s->clock = (s->clock & ~mask) | v;
}

/* Widen a top-level field into the scratch buffer (CTF_INT, CTF_FLOAT: 8 bytes) */
static int g_field(struct ctf_stream *s, struct cur *c, const struct ctf_field *f, const struct ctf_decl *d)
{
	uint64_t v;
	double x;

	switch (f->kind) {
	case CTF_INT:
		if (g_value(s, c, d->type, d->name, 1, 0))
			return -1;
		v = s->gen->vals[s->gen->nvals - 1].v;
		return put(s, &v, 8) ? too_big(s, c) : 0;
	case CTF_FLOAT:
		if (g_float(s, c, d->type, d->name, &x))
			return -1;
		return put(s, &x, 8) ? too_big(s, c) : 0;
	case CTF_STRING:
		if (d->type->kind == TY_STRING) {
			const char *str;
			size_t n;
			if (g_string(s, c, d->name, &str, &n))
				return -1;
			return put(s, str, n) || put(s, "", 1) ? too_big(s, c) : 0;
		}
		/* a char array or sequence: its text up to a NUL */
		if (g_value(s, c, d->type, d->name, 1, 0))
			return -1;
		return 0;
	default:
		if (g_value(s, c, d->type, d->name, 1, 1))
			return -1;
		return put(s, "", 1) ? too_big(s, c) : 0;
	}
}

/*
 * The event context when it has fields beyond pid, tid and procname:
 * those widened into the scratch buffer as payload fields are (their
 * offsets in s->ctx_off), the others kept as named values only.
 */
static int g_context(struct ctf_stream *s, struct cur *c, const struct ctf_sclass *sc)
{
	const struct ctf_type *ec = sc->ec;

	if (g_align(s, c, ec->align, "event.context"))
		return -1;
	for (unsigned i = 0; i < ec->ndecls; i++) {
		const struct ctf_decl *d = &ec->decls[i];
		int k = sc->ctx_of_decl[i];

		if (k < 0) {
			if (g_value(s, c, d->type, d->name, 1, 0))
				return -1;
			continue;
		}
		s->ctx_off[k] = (uint32_t)s->gen->len;
		if (g_field(s, c, &sc->ctx->fields[k], d))
			return -1;
	}
	return 0;
}

static int read_event_generic(struct ctf_stream *s)
{
	const struct ctf_trace *t = s->trace;
	const struct ctf_sclass *sc = s->sclass;
	const struct ctf_event_class *cls;
	struct cur c = { s->base, s->bitpos, (uint64_t)s->pkt_content_end * 8 };
	const struct gval *ts, *pn;
	struct ctf_gen *g = gen_of(s);
	uint64_t id, start = c.bit;
	unsigned i, ctx;
	size_t procname = (size_t)-1;

	if (g_scope(s, &c, sc->eh))
		return CTF_ITEM_ERROR;
	id = g_get(s, 0, "id", 0, NULL);
	cls = id < sc->nids ? sc->classes[id] : NULL;
	if (!cls)
		return stream_fail(s, (size_t)(start / 8), "unknown event id %llu", (unsigned long long)id);
	ts = g_find(s, 0, "timestamp");
	if (ts)
		clock_update(s, ts->v, ts->type->kind == TY_ENUM ? ts->type->elem->size : ts->type->size);
	ctx = g->nvals;
	if (sc->ctx ? g_context(s, &c, sc) : g_scope(s, &c, sc->ec))
		return CTF_ITEM_ERROR;
	s->ev.cls = cls;
	s->ev.ts = s->clock;
	s->ev.pid = (int32_t)g_get(s, ctx, "pid", g_get(s, ctx, "vpid", (uint64_t)-1, NULL), NULL);
	s->ev.tid = (int32_t)g_get(s, ctx, "tid", g_get(s, ctx, "vtid", (uint64_t)-1, NULL), NULL);
	pn = g_find(s, ctx, "procname");
	if (pn && pn->text != (size_t)-1)
		procname = pn->text;
	for (i = 0; i < cls->nfields; i++) {
		s->field_off[i] = (uint32_t)g->len;
		if (g_field(s, &c, &cls->fields[i], &cls->type->decls[i]))
			return CTF_ITEM_ERROR;
	}
	if (c.bit == start)
		return stream_fail(s, (size_t)(start / 8), "event of no size (an event header is needed)");
	/* 8 bytes of room after the last field: a reader that takes a text
	 * field for an integer (ctf_field_int) stays inside the buffer */
	if (put(s, "\0\0\0\0\0\0\0\0", 8))
		return too_big(s, &c);
	s->ev.payload = (const unsigned char *)g->buf;
	s->ev.ctx = NULL;
	if (sc->ctx) {
		s->ctx_ev.cls = sc->ctx;
		s->ctx_ev.payload = s->ev.payload;
		s->ctx_ev.field_off = s->ctx_off;
		s->ev.ctx = &s->ctx_ev;
	}
	s->ev.procname = procname != (size_t)-1 ? g->buf + procname : "";
	s->ev.procname_len = procname != (size_t)-1 ? (unsigned)strlen(g->buf + procname) : 0;
	s->bitpos = c.bit;
	s->pos = (size_t)((c.bit + 7) / 8);
	s->time = to_time(t, s->ev.ts);
	s->events++;
	s->item = CTF_ITEM_EVENT;
	return CTF_ITEM_EVENT;
}

/* Enter the packet at s->pkt_end; CTF_ITEM_LOST when it reports losses, else 0. */
static int read_packet(struct ctf_stream *s)
{
	const struct ctf_layout *L = s->trace->layout;
	size_t off = s->pkt_end, left = s->size - off;
	unsigned hsize = L->ph_size + L->pc_size;
	const unsigned char *p = s->base + off, *pc;
	uint64_t packet_bits, content_bits, seq, discarded;

	if (L->generic)
		return read_packet_generic(s);
	if (left < hsize && s->trace->incomplete)
		return cut_short(s, off);
	if (left < hsize)
		return stream_fail(s, off, "truncated packet: %zu bytes left, the packet header and context take %u",
				   left, hsize);
	if (L->magic.off >= 0 && rd(p + L->magic.off, 4) != 0xC1FC1FC1u)
		return stream_fail(s, off, "bad packet magic 0x%08llx (expected 0xc1fc1fc1)",
				   (unsigned long long)rd(p + L->magic.off, 4));
	if (L->uuid.off >= 0 && s->trace->has_uuid && memcmp(p + L->uuid.off, s->trace->uuid, 16))
		return stream_fail(s, off + (size_t)L->uuid.off, "the packet's uuid is not the trace's");
	pc = p + L->ph_size;
	packet_bits = rd_fixed(pc, L->packet_size, (uint64_t)left * 8);
	content_bits = rd_fixed(pc, L->content_size, packet_bits);
	if (packet_bits % 8 || content_bits % 8)
		return stream_fail(s, off, "content_size %llu or packet_size %llu (bits) is not a whole number of bytes",
				   (unsigned long long)content_bits, (unsigned long long)packet_bits);
	if (content_bits > packet_bits)
		return stream_fail(s, off, "content_size %llu bits is larger than packet_size %llu bits",
				   (unsigned long long)content_bits, (unsigned long long)packet_bits);
	if (packet_bits / 8 > left && s->trace->incomplete)
		return cut_short(s, off);
	if (packet_bits / 8 > left)
		return stream_fail(s, off, "packet_size %llu bytes runs past the end of the file (%zu bytes left): truncated?",
				   (unsigned long long)(packet_bits / 8), left);
	if (content_bits / 8 < hsize || packet_bits == 0)
		return stream_fail(s, off, "content_size %llu bytes is smaller than the packet header and context (%u bytes)",
				   (unsigned long long)(content_bits / 8), hsize);

	seq = rd_fixed(pc, L->seq, 0);
	discarded = rd_fixed(pc, L->discarded, 0);
	s->pkt_off = off;
	s->pkt_ts_begin = rd_fixed(pc, L->ts_begin, 0);
	s->pkt_ts_end = rd_fixed(pc, L->ts_end, 0);
	s->clock = s->pkt_ts_begin;     /* compact timestamps extend it */
	/* a failure inside the packet then sorts after what came before it */
	if (L->ts_begin.off >= 0)
		s->time = to_time(s->trace, s->pkt_ts_begin);
	if (L->cpu_id.off >= 0)
		s->cpu = (int64_t)rd(pc + L->cpu_id.off, L->cpu_id.size);
	else if (L->instance.off >= 0)
		s->cpu = (int64_t)rd(p + L->instance.off, L->instance.size);
	s->pos = off + hsize;
	s->pkt_content_end = off + (size_t)(content_bits / 8);
	s->pkt_end = off + (size_t)(packet_bits / 8);
	return packet_losses(s, L->seq.off >= 0, seq, discarded);
}

static int read_event(struct ctf_stream *s)
{
	const struct ctf_trace *t = s->trace;
	const struct ctf_layout *L = t->layout;
	const struct ctf_event_class *cls;
	size_t off = s->pos, avail = s->pkt_content_end - off;
	const unsigned char *p = s->base + off, *q, *end = s->base + s->pkt_content_end;
	unsigned prefix = L->eh_size + L->ec_size, i;
	uint64_t id;

	if (L->generic)
		return read_event_generic(s);
	if (L->compact) {
		/* mt_event.h: 255 then u16 id, u64 time; else id, 24 bits of time */
		prefix = (p[0] == 255 ? 11 : 4) + L->ec_size;
		if (avail < prefix)
			return stream_fail(s, off, "event runs past the packet content: %zu bytes left, its %s header and context take %u",
					   avail, p[0] == 255 ? "extended" : "compact", prefix);
	} else if (avail < prefix) {
		return stream_fail(s, off, "event runs past the packet content: %zu bytes left, its header and context take %u",
				   avail, prefix);
	}
	id = L->compact ? (p[0] == 255 ? rd(p + 1, 2) : p[0]) : rd_fixed(p, L->ev_id, 0);
	cls = id < t->nids ? t->classes[id] : NULL;
	if (!cls)
		return stream_fail(s, off, "unknown event id %llu", (unsigned long long)id);
	s->ev.cls = cls;
	if (!L->compact) {
		s->ev.ts = rd(p + L->ev_ts.off, L->ev_ts.size);
		p += L->eh_size;
	} else if (p[0] == 255) {
		s->clock = s->ev.ts = rd(p + 3, 8);
		p += 11;
	} else {
		clock_update(s, rd(p, 4) >> 8, 24);
		s->ev.ts = s->clock;
		p += 4;
	}
	s->ev.pid = (int32_t)rd_fixed(p, L->pid, (uint64_t)-1);
	s->ev.tid = (int32_t)rd_fixed(p, L->tid, (uint64_t)-1);
	s->ev.procname = L->procname.off >= 0 ? (const char *)p + L->procname.off : "";
	s->ev.procname_len = L->procname.off >= 0 ? L->procname.size : 0;
	s->ev.ctx = NULL;
	if (cls->context) {
		s->ctx_ev.cls = cls->context;
		s->ctx_ev.payload = p;
		s->ctx_ev.field_off = L->sc[0].ctx_off;
		s->ev.ctx = &s->ctx_ev;
	}
	q = s->ev.payload = p + L->ec_size;
	for (i = 0; i < cls->nfields; i++) {
		const struct ctf_field *f = &cls->fields[i];

		s->field_off[i] = (uint32_t)(q - s->ev.payload);
		if (f->kind == CTF_STRING) {
			const unsigned char *z = memchr(q, 0, (size_t)(end - q));
			if (!z)
				return stream_fail(s, (size_t)(q - s->base),
						   "string field '%s' of event '%s' has no NUL before the end of the packet content",
						   f->name, cls->name);
			q = z + 1;
		} else {
			if ((size_t)(end - q) < f->size)
				return stream_fail(s, (size_t)(q - s->base),
						   "field '%s' of event '%s' runs past the packet content (%zu bytes left, it takes %u)",
						   f->name, cls->name, (size_t)(end - q), f->size);
			q += f->size;
		}
	}
	s->pos = (size_t)(q - s->base);
	s->time = to_time(t, s->ev.ts);
	s->events++;
	s->item = CTF_ITEM_EVENT;
	return CTF_ITEM_EVENT;
}

/*
 * Thread events (mt_event.h): tid -> pid, name, the latest of each tid.
 * Each stream keeps its own: a packet names its threads before their
 * first event in it, and the merge reads every stream ahead of the events
 * it hands out (a thread's later name, read early in another stream, must
 * not rename this stream's earlier events).  The trace's table, of every
 * stream, serves a tid a stream has not named (the writer's guess of the
 * packet was wrong, or the packet that named it was lost).
 */
struct ctf_thread {
	int32_t tid, pid;
	char name[17];
	unsigned char used;
};

struct ctf_threads {
	size_t cap, n;          /* cap: a power of two */
	struct ctf_thread slot[];
};

static struct ctf_thread *thread_slot(struct ctf_threads *h, int32_t tid)
{
	size_t i = ((uint32_t)tid * 2654435761u) & (h->cap - 1);

	while (h->slot[i].used && h->slot[i].tid != tid)
		i = (i + 1) & (h->cap - 1);
	return &h->slot[i];
}

/* The entry of tid in *hp, made if need be; NULL out of memory (the
 * thread then stays unnamed there). */
static struct ctf_thread *thread_entry(struct ctf_threads **hp, int32_t tid)
{
	struct ctf_threads *h = *hp, *n;
	struct ctf_thread *e;
	size_t cap, i;

	if (!h || 2 * (h->n + 1) > h->cap) {
		cap = h ? 2 * h->cap : 16;
		n = calloc(1, sizeof(*n) + cap * sizeof(n->slot[0]));
		if (!n)
			return NULL;
		n->cap = cap;
		for (i = 0; h && i < h->cap; i++)
			if (h->slot[i].used) {
				*thread_slot(n, h->slot[i].tid) = h->slot[i];
				n->n++;
			}
		free(h);
		*hp = h = n;
	}
	e = thread_slot(h, tid);
	if (!e->used) {
		h->n++;
		e->used = 1;
		e->tid = tid;
	}
	return e;
}

static void set_thread(struct ctf_threads **hp, int32_t tid, int32_t pid, const char *name)
{
	struct ctf_thread *e = thread_entry(hp, tid);

	if (!e)
		return;
	e->pid = pid;
	/* at most 16 bytes, as a thread's name: a longer one is cut */
	memset(e->name, 0, sizeof(e->name));
	memcpy(e->name, name, strnlen(name, 16));
}

static void note_thread(struct ctf_stream *s)
{
	struct ctf_trace *t = s->trace;
	const char *name = ctf_field_string(&s->ev, (unsigned)t->thread_name);
	int32_t pid = (int32_t)ctf_field_int(&s->ev, (unsigned)t->thread_pid);

	if (!t->show_thread_events)
		s->events--;    /* not an item */
	s->thread_events++;
	set_thread(&s->threads, s->ev.tid, pid, name);
	set_thread(&t->threads, s->ev.tid, pid, name);
}

static const struct ctf_thread *find_thread(const struct ctf_threads *h, int32_t tid)
{
	const struct ctf_thread *e;

	if (!h)
		return NULL;
	e = thread_slot((struct ctf_threads *)h, tid);
	return e->used ? e : NULL;
}

/* An event without pid or name of its own (a marktap trace recorded
 * with --context vpid alone has no name): those of its tid's latest
 * thread event, copied (the table may grow before the caller looks). */
static int with_thread(struct ctf_stream *s)
{
	const struct ctf_thread *e;

	if (s->ev.procname_len && s->ev.pid != -1)
		return CTF_ITEM_EVENT;
	e = find_thread(s->threads, s->ev.tid);
	if (!e)
		e = find_thread(s->trace->threads, s->ev.tid);
	if (!e)
		return CTF_ITEM_EVENT;
	if (s->ev.pid == -1)
		s->ev.pid = e->pid;
	if (!s->ev.procname_len) {
		memcpy(s->procname, e->name, sizeof(s->procname));
		s->ev.procname = s->procname;
		s->ev.procname_len = (unsigned)strlen(s->procname);
	}
	return CTF_ITEM_EVENT;
}

int ctf_stream_next(struct ctf_stream *s)
{
	int rc;

	if (s->error)
		return CTF_ITEM_ERROR;
	for (;;) {
		if (s->pos < s->pkt_content_end) {
			rc = read_event(s);
			if (rc != CTF_ITEM_EVENT || !s->trace->thread_class)
				return rc;
			if (s->ev.cls != s->trace->thread_class)
				return with_thread(s);
			note_thread(s);
			if (s->trace->show_thread_events)
				return with_thread(s);
			continue;
		}
		if (s->pkt_end >= s->size && s->trace->incomplete && !s->cut) {
			/* say where the stream stops: later events are missing */
			s->cut = 1;
			s->lost_events = s->lost_packets = 0;
			if (s->have_packet && s->trace->layout->ts_end.off >= 0)
				s->time = to_time(s->trace, s->pkt_ts_end);
			s->item = CTF_ITEM_LOST;
			return CTF_ITEM_LOST;
		}
		if (s->pkt_end >= s->size) {
			s->item = CTF_ITEM_END;
			return CTF_ITEM_END;
		}
		rc = read_packet(s);
		if (rc)
			return rc;
	}
}

/* ---- field values ---- */

uint64_t ctf_field_uint(const struct ctf_event *ev, unsigned i)
{
	return rd(ev->payload + ev->field_off[i], ev->cls->fields[i].size);
}

int64_t ctf_field_int(const struct ctf_event *ev, unsigned i)
{
	unsigned size = ev->cls->fields[i].size;
	uint64_t v = rd(ev->payload + ev->field_off[i], size);

	if (ev->cls->fields[i].is_signed && size < 8) {
		uint64_t sign = (uint64_t)1 << (size * 8 - 1);
		v = (v ^ sign) - sign;
	}
	return (int64_t)v;
}

double ctf_field_float(const struct ctf_event *ev, unsigned i)
{
	const unsigned char *p = ev->payload + ev->field_off[i];

	if (ev->cls->fields[i].size == 4) {
		float f;
		memcpy(&f, p, 4);
		return f;
	} else {
		double d;
		memcpy(&d, p, 8);
		return d;
	}
}

const char *ctf_field_string(const struct ctf_event *ev, unsigned i)
{
	return (const char *)ev->payload + ev->field_off[i];
}

const char *ctf_field_label(const struct ctf_event *ev, unsigned i)
{
	const struct ctf_type *t = ev->cls->fields[i].enum_type;

	return t ? ctf_enum_label(t, ctf_field_uint(ev, i)) : NULL;
}

/* ---- the merge: a binary min-heap of streams keyed by (time, index) ---- */

static inline int before(const struct ctf_stream *a, const struct ctf_stream *b)
{
	return a->time < b->time || (a->time == b->time && a->index < b->index);
}

static void sift_down(struct ctf_stream **h, unsigned n, unsigned i)
{
	struct ctf_stream *s = h[i];

	for (;;) {
		unsigned c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(h[c + 1], h[c]))
			c++;
		if (!before(h[c], s))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = s;
}

static void sift_up(struct ctf_stream **h, unsigned i)
{
	struct ctf_stream *s = h[i];

	while (i) {
		unsigned parent = (i - 1) / 2;
		if (!before(s, h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = s;
}

void ctf_merge_start(struct ctf_set *set)
{
	unsigned i;

	free(set->heap);
	set->heap = calloc(set->nstreams + 1, sizeof(*set->heap));
	if (!set->heap)
		abort();
	set->nheap = 0;
	for (i = 0; i < set->nstreams; i++) {
		struct ctf_stream *s = set->streams[i];
		if (ctf_stream_next(s) == CTF_ITEM_END)
			continue;
		set->heap[set->nheap] = s;
		sift_up(set->heap, set->nheap++);
	}
}

struct ctf_stream *ctf_merge_peek(struct ctf_set *set)
{
	return set->nheap ? set->heap[0] : NULL;
}

void ctf_merge_advance(struct ctf_set *set)
{
	struct ctf_stream *s;

	if (!set->nheap)
		return;
	s = set->heap[0];
	if (ctf_stream_next(s) == CTF_ITEM_END)
		set->heap[0] = set->heap[--set->nheap];
	if (set->nheap)
		sift_down(set->heap, set->nheap, 0);
}
