/*
 * gentrace.c - write CTF traces for the viewer's tests, following
 * doc/trace-format.md byte for byte, from a small script on stdin:
 *
 *   trace REL [uuid=U] [offset_s=N] [offset=N] [domain=D]  start a trace in DIR/REL
 *   marker ID NAME FORMAT...     an event class; types come from the format
 *                                (mt_fmt_parse, the parser libmarktap uses)
 *   stream CPU                   select the stream file channel0_CPU
 *   packet [seq=N] [discarded=N] [begin=T] [end=T]   start a packet on it
 *   ev TS NAME PID TID PROCNAME [ARG...]              an event in that packet
 *        ARG: 12, -3, 0x1f, 1.5, 'c', "string with \n escapes"
 *   bulk N NCPU                  N events of marker "bench" (count %d value %ld
 *                                name %s) over NCPU streams, 64 KiB packets
 *
 * The time of a packet defaults to its first and last event.  A packet's
 * seq defaults to the previous one + 1 and discarded to the previous value.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mt_fmt.h"

#define MAX_MARKERS 64
#define MAX_STREAMS 64

struct marker {
	unsigned id;
	char name[64];
	char format[256];
	struct mt_format fmt;
};

struct buf {
	unsigned char *data;
	size_t len, cap;
};

struct stream {
	int cpu;
	FILE *file;
	struct buf pkt;         /* events of the open packet */
	int open;
	unsigned long long seq, discarded, begin, end, first_ts, last_ts;
	int begin_set, end_set, nev;
	unsigned long long next_seq;
};

static char dir[4096];
static struct marker markers[MAX_MARKERS];
static unsigned nmarkers;
static struct stream streams[MAX_STREAMS];
static unsigned nstreams;
static struct stream *cur;
static unsigned char uuid[16] = { 0x2a, 0x6b, 0x1a, 0x5e, 0x55, 0xd4, 0x4c, 0x3c,
				  0x9a, 0x1d, 0x0d, 0x8f, 0x2f, 0x7e, 0x9b, 0x10 };
static long long offset_s = 1796200000, offset_ns = 123456789;
static char domain[32] = "ust";
static int have_trace;
static unsigned lineno;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gentrace: line %u: ", lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 4096;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			die("out of memory");
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_u(struct buf *b, unsigned long long v, unsigned size)
{
	put(b, &v, size);     /* little endian host */
}

static void close_packet(struct stream *s)
{
	struct buf h = { 0 };
	unsigned long long bits;

	if (!s->open)
		return;
	bits = (32 + 52 + s->pkt.len) * 8ull;
	put_u(&h, 0xC1FC1FC1u, 4);
	put(&h, uuid, 16);
	put_u(&h, 0, 4);
	put_u(&h, (unsigned long long)s->cpu, 8);
	put_u(&h, s->begin_set ? s->begin : s->first_ts, 8);
	put_u(&h, s->end_set ? s->end : s->last_ts, 8);
	put_u(&h, bits, 8);
	put_u(&h, bits, 8);
	put_u(&h, s->seq, 8);
	put_u(&h, s->discarded, 8);
	put_u(&h, (unsigned long long)s->cpu, 4);
	if (fwrite(h.data, 1, h.len, s->file) != h.len ||
	    fwrite(s->pkt.data, 1, s->pkt.len, s->file) != s->pkt.len)
		die("write: %s", strerror(errno));
	free(h.data);
	s->pkt.len = 0;
	s->open = 0;
}

static const char *tsdl_type(const struct mt_field *f, char *buf, size_t n)
{
	if (f->store == MT_ST_STRING)
		return "string";
	if (f->store == MT_ST_DOUBLE)
		return "floating_point { exp_dig = 11; mant_dig = 53; align = 8; }";
	snprintf(buf, n, "integer { size = %u; align = 8; signed = %s; base = %u;%s }",
		 (unsigned)f->size * 8, f->is_signed ? "true" : "false", f->base,
		 f->is_char ? " encoding = UTF8;" : "");
	return buf;
}

static void finish_trace(void)
{
	char path[4200];
	FILE *m;
	unsigned i, k;

	if (!have_trace)
		return;
	for (i = 0; i < nstreams; i++) {
		close_packet(&streams[i]);
		fclose(streams[i].file);
		free(streams[i].pkt.data);
	}
	snprintf(path, sizeof(path), "%s/metadata", dir);
	m = fopen(path, "w");
	if (!m)
		die("%s: %s", path, strerror(errno));
	fprintf(m, "/* CTF 1.8 */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n\n"
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"");
	for (i = 0; i < 16; i++)
		fprintf(m, "%02x%s", uuid[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
	fprintf(m, "\";\n\tbyte_order = le;\n\tpacket.header := struct {\n"
		"\t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n\t\tuint32_t stream_id;\n"
		"\t\tuint64_t stream_instance_id;\n\t};\n};\n\n"
		"env {\n\thostname = \"host\";\n\tdomain = \"%s\";\n\ttracer_name = \"marktap\";\n"
		"\ttracer_major = 0;\n\ttracer_minor = 1;\n};\n\n"
		"clock {\n\tname = \"monotonic\";\n\tuuid = \"", domain);
	for (i = 0; i < 16; i++)
		fprintf(m, "%02x%s", uuid[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
	fprintf(m, "\";\n\tdescription = \"CLOCK_MONOTONIC\";\n\tfreq = 1000000000;\n\tprecision = 1;\n"
		"\toffset_s = %lld;\n\toffset = %lld;\n\tabsolute = false;\n};\n\n"
		"typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n\n"
		"struct packet_context {\n\tuint64_clock_monotonic_t timestamp_begin;\n"
		"\tuint64_clock_monotonic_t timestamp_end;\n\tuint64_t content_size;\n\tuint64_t packet_size;\n"
		"\tuint64_t packet_seq_num;\n\tuint64_t events_discarded;\n\tuint32_t cpu_id;\n};\n\n"
		"stream {\n\tid = 0;\n\tpacket.context := struct packet_context;\n"
		"\tevent.header := struct {\n\t\tuint16_t id;\n\t\tuint64_clock_monotonic_t timestamp;\n\t};\n"
		"\tevent.context := struct {\n\t\tint32_t _pid;\n\t\tint32_t _tid;\n"
		"\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } _procname[16];\n\t};\n};\n",
		offset_s, offset_ns);
	for (i = 0; i < nmarkers; i++) {
		const struct marker *mk = &markers[i];
		fprintf(m, "\n/* marktap format: \"%s\" */\nevent {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n"
			"\tfields := struct {\n", mk->format, mk->name, mk->id);
		for (k = 0; k < mk->fmt.nfields; k++) {
			char tb[160];
			fprintf(m, "\t\t%s _%s;\n", tsdl_type(&mk->fmt.fields[k], tb, sizeof(tb)),
				mk->fmt.fields[k].name);
		}
		fprintf(m, "\t};\n};\n");
	}
	fclose(m);
	nstreams = 0;
	nmarkers = 0;
	have_trace = 0;
}

static struct stream *stream_for(int cpu)
{
	char path[4200];
	unsigned i;

	for (i = 0; i < nstreams; i++)
		if (streams[i].cpu == cpu)
			return &streams[i];
	if (nstreams == MAX_STREAMS)
		die("too many streams");
	snprintf(path, sizeof(path), "%s/channel0_%d", dir, cpu);
	memset(&streams[nstreams], 0, sizeof(streams[0]));
	streams[nstreams].cpu = cpu;
	streams[nstreams].file = fopen(path, "w");
	if (!streams[nstreams].file)
		die("%s: %s", path, strerror(errno));
	return &streams[nstreams++];
}

static void open_packet(struct stream *s)
{
	close_packet(s);
	s->open = 1;
	s->seq = s->next_seq++;
	s->begin_set = s->end_set = 0;
	s->nev = 0;
}

/* Split the line into words; "..." and '...' keep spaces and escapes. */
static int split(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;

	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (n == max)
			die("too many words");
		w[n++] = p;
		if (*p == '"' || *p == '\'') {
			char q = *p++;
			while (*p && *p != q) {
				if (*p == '\\' && p[1])
					p++;
				p++;
			}
			if (*p)
				p++;
		} else {
			while (*p && *p != ' ' && *p != '\t' && *p != '\n')
				p++;
		}
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* Unescape a quoted word in place; returns its length. */
static size_t unquote(char *w)
{
	char *o = w, *p = w + 1;

	while (*p && p[1]) {
		if (*p == '\\') {
			p++;
			switch (*p) {
			case 'n': *o++ = '\n'; p++; break;
			case 't': *o++ = '\t'; p++; break;
			case 'r': *o++ = '\r'; p++; break;
			case 'x': *o++ = (char)strtol(p + 1, &p, 16); break;
			case '0': *o++ = '\0'; p++; break;
			default: *o++ = *p++;
			}
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return (size_t)(o - w);
}

static unsigned long long kv(const char *w, const char *key, int *found)
{
	size_t n = strlen(key);

	if (strncmp(w, key, n) || w[n] != '=')
		return 0;
	*found = 1;
	return strtoull(w + n + 1, NULL, 0);
}

static void put_arg(struct buf *b, const struct mt_field *f, char *w)
{
	if (f->store == MT_ST_STRING) {
		if (w[0] != '"')
			die("expected a string for field %s", f->name);
		put(b, w, unquote(w) + 1);
	} else if (f->store == MT_ST_DOUBLE) {
		double d = strtod(w, NULL);
		put(b, &d, 8);
	} else if (w[0] == '\'') {
		unquote(w);
		put_u(b, (unsigned char)w[0], f->size);
	} else {
		unsigned long long v = w[0] == '-' ? (unsigned long long)strtoll(w, NULL, 0) : strtoull(w, NULL, 0);
		put_u(b, v, f->size);
	}
}

static void event(struct stream *s, unsigned long long ts, const struct marker *mk,
		  int pid, int tid, const char *procname, char **args, int nargs)
{
	char pn[16] = { 0 };
	int i;

	if (!s->open)
		open_packet(s);
	if (!s->nev++)
		s->first_ts = ts;
	s->last_ts = ts;
	put_u(&s->pkt, mk->id, 2);
	put_u(&s->pkt, ts, 8);
	put_u(&s->pkt, (unsigned)pid, 4);
	put_u(&s->pkt, (unsigned)tid, 4);
	memcpy(pn, procname, strnlen(procname, sizeof(pn)));
	put(&s->pkt, pn, 16);
	if (nargs != (int)mk->fmt.nfields)
		die("marker %s takes %u arguments, got %d", mk->name, mk->fmt.nfields, nargs);
	for (i = 0; i < nargs; i++)
		put_arg(&s->pkt, &mk->fmt.fields[i], args[i]);
}

static struct marker *add_marker(unsigned id, const char *name, const char *format)
{
	struct marker *mk;
	struct mt_fmt_error err;

	if (nmarkers == MAX_MARKERS)
		die("too many markers");
	mk = &markers[nmarkers++];
	mk->id = id;
	snprintf(mk->name, sizeof(mk->name), "%s", name);
	snprintf(mk->format, sizeof(mk->format), "%s", format);
	if (mt_fmt_parse(mk->format, &mk->fmt, &err))
		die("format \"%s\": %s at %u", format, err.message, err.offset);
	return mk;
}

static void bulk(unsigned long long n, int ncpu)
{
	struct marker *mk = add_marker(nmarkers, "bench", "count %d value %ld name %s");
	unsigned long long i, ts = 1000000000ull;
	char count[32], value[32], name[] = "\"hello\"", *args[3];
	char namebuf[sizeof(name)];

	for (i = 0; i < n; i++) {
		struct stream *s = stream_for((int)(i % (unsigned)ncpu));
		snprintf(count, sizeof(count), "%llu", i & 0x7fffffff);
		snprintf(value, sizeof(value), "%llu", i * 1000003ull);
		memcpy(namebuf, name, sizeof(name));
		args[0] = count;
		args[1] = value;
		args[2] = namebuf;
		ts += 50 + (i * 7919) % 100;
		event(s, ts, mk, 4242, 4242 + (int)(i % (unsigned)ncpu), "bench", args, 3);
		if (s->pkt.len >= 65536 - 84 - 128)
			close_packet(s);
	}
}

int main(int argc, char **argv)
{
	char line[8192], *w[64];
	int n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: gentrace DIR < SCRIPT\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		lineno++;
		if (line[0] == '#')
			continue;
		if (!strncmp(line, "marker ", 7)) {
			unsigned id;
			char name[64];
			int at = 0;
			/* the format is the rest of the line; none means MARK_NOARGS */
			if (sscanf(line, "marker %u %63s %n", &id, name, &at) < 2 || !at)
				die("marker ID NAME FORMAT");
			line[strcspn(line, "\n")] = '\0';
			add_marker(id, name, line[at] ? line + at : " ");
			continue;
		}
		n = split(line, w, 64);
		if (n == 0)
			continue;
		if (!strcmp(w[0], "trace")) {
			finish_trace();
			if (n < 2)
				die("trace REL");
			snprintf(dir, sizeof(dir), "%s/%s", argv[1], w[1]);
			for (i = 2; i < n; i++) {
				int f = 0;
				long long v;
				if (!strncmp(w[i], "domain=", 7)) {
					snprintf(domain, sizeof(domain), "%s", w[i] + 7);
					continue;
				}
				if (!strncmp(w[i], "uuid=", 5)) {
					uuid[15] = (unsigned char)strtoul(w[i] + 5, NULL, 0);
					continue;
				}
				v = (long long)kv(w[i], "offset_s", &f);
				if (f) { offset_s = v; continue; }
				v = (long long)kv(w[i], "offset", &f);
				if (f) { offset_ns = v; continue; }
				die("unknown trace option %s", w[i]);
			}
			{
				char cmd[8400];
				snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
				if (system(cmd))
					die("cannot create %s", dir);
			}
			have_trace = 1;
		} else if (!have_trace) {
			die("'trace' first");
		} else if (!strcmp(w[0], "stream") && n == 2) {
			cur = stream_for(atoi(w[1]));
		} else if (!strcmp(w[0], "packet")) {
			if (!cur)
				die("'stream' first");
			open_packet(cur);
			for (i = 1; i < n; i++) {
				int f = 0;
				unsigned long long v;
				v = kv(w[i], "seq", &f);
				if (f) { cur->seq = v; cur->next_seq = v + 1; continue; }
				v = kv(w[i], "discarded", &f);
				if (f) { cur->discarded = v; continue; }
				v = kv(w[i], "begin", &f);
				if (f) { cur->begin = v; cur->begin_set = 1; continue; }
				v = kv(w[i], "end", &f);
				if (f) { cur->end = v; cur->end_set = 1; continue; }
				die("unknown packet option %s", w[i]);
			}
		} else if (!strcmp(w[0], "ev") && n >= 6) {
			struct marker *mk = NULL;
			unsigned k;
			if (!cur)
				die("'stream' first");
			for (k = 0; k < nmarkers; k++)
				if (!strcmp(markers[k].name, w[2]))
					mk = &markers[k];
			if (!mk)
				die("no marker %s", w[2]);
			event(cur, strtoull(w[1], NULL, 0), mk, atoi(w[3]), atoi(w[4]), w[5], w + 6, n - 6);
		} else if (!strcmp(w[0], "bulk") && n == 3) {
			bulk(strtoull(w[1], NULL, 0), atoi(w[2]));
		} else {
			die("cannot parse: %s", w[0]);
		}
	}
	finish_trace();
	return 0;
}
