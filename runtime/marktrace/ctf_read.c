/*
 * ctf_read.c - read the streams of CTF traces: find the traces under a
 * directory, map their stream files, step through packets and events with
 * every size and offset checked against the packet and the file, and merge
 * all streams by time with a binary heap.  The metadata is ctf_tsdl.c's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctf_int.h"

#define MAX_DEPTH   32          /* directory nesting */

/* ---- streams ---- */

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
	const char *slash = strrchr(path, '/');

	if (!s)
		abort();
	s->trace = t;
	s->path = strdup(path);
	s->field_off = calloc(t->max_fields + 1, sizeof(*s->field_off));
	if (!s->path || !s->field_off)
		abort();
	s->file = slash ? s->path + (slash - path) + 1 : s->path;
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
	free(s->error);
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

/* Enter the packet at s->pkt_end; CTF_ITEM_LOST when it reports losses, else 0. */
static int read_packet(struct ctf_stream *s)
{
	const struct ctf_layout *L = s->trace->layout;
	size_t off = s->pkt_end, left = s->size - off;
	unsigned hsize = L->ph_size + L->pc_size;
	const unsigned char *p = s->base + off, *pc;
	uint64_t packet_bits, content_bits, seq, discarded, lost_packets = 0, lost_events = 0;

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
	if (L->seq.off >= 0) {
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
	s->pkt_off = off;
	s->pkt_seq = seq;
	s->pkt_discarded = discarded;
	s->pkt_ts_begin = rd_fixed(pc, L->ts_begin, 0);
	s->pkt_ts_end = rd_fixed(pc, L->ts_end, 0);
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
	if (!lost_events && !lost_packets)
		return 0;
	s->lost_events = lost_events;
	s->lost_packets = lost_packets;
	s->total_lost_events += lost_events;
	s->total_lost_packets += lost_packets;
	s->item = CTF_ITEM_LOST;
	return CTF_ITEM_LOST;
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

	if (avail < prefix)
		return stream_fail(s, off, "event runs past the packet content: %zu bytes left, its header and context take %u",
				   avail, prefix);
	id = rd_fixed(p, L->ev_id, 0);
	cls = id < t->nids ? t->classes[id] : NULL;
	if (!cls)
		return stream_fail(s, off, "unknown event id %llu", (unsigned long long)id);
	s->ev.cls = cls;
	s->ev.ts = rd(p + L->ev_ts.off, L->ev_ts.size);
	p += L->eh_size;
	s->ev.pid = (int32_t)rd_fixed(p, L->pid, (uint64_t)-1);
	s->ev.tid = (int32_t)rd_fixed(p, L->tid, (uint64_t)-1);
	s->ev.procname = L->procname.off >= 0 ? (const char *)p + L->procname.off : "";
	s->ev.procname_len = L->procname.off >= 0 ? L->procname.size : 0;
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

int ctf_stream_next(struct ctf_stream *s)
{
	int rc;

	if (s->error)
		return CTF_ITEM_ERROR;
	for (;;) {
		if (s->pos < s->pkt_content_end)
			return read_event(s);
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

int ctf_class_field(const struct ctf_event_class *c, const char *name)
{
	unsigned i;

	for (i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].name, name))
			return (int)i;
	return -1;
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

/* ---- finding traces on disk ---- */

static int read_file(const char *path, char **text, size_t *len, struct ctf_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t n = 0;
	char *buf;

	if (fd < 0 || fstat(fd, &st) < 0) {
		ctf_set_err(err, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		abort();
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ctf_set_err(err, "%s: %s", path, strerror(errno));
			close(fd);
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

static int map_file(const char *path, const unsigned char **data, size_t *size, struct ctf_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m;

	if (fd < 0 || fstat(fd, &st) < 0) {
		ctf_set_err(err, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*size = (size_t)st.st_size;
	*data = NULL;
	if (st.st_size > 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			ctf_set_err(err, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
		*data = m;
	}
	close(fd);
	return 0;
}

static void *grow(void *array, unsigned n, size_t elem)
{
	if (n % 16 == 0) {
		array = realloc(array, (n + 16) * elem);
		if (!array)
			abort();
	}
	return array;
}

static int stream_file_name(const struct dirent *d)
{
	return d->d_name[0] != '.' && strcmp(d->d_name, "metadata");
}

static char *join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 2);

	if (!s)
		abort();
	memcpy(s, a, na);
	s[na] = '/';
	memcpy(s + na + 1, b, nb + 1);
	if (na && a[na - 1] == '/')
		memmove(s + na, s + na + 1, nb + 1);
	return s;
}

static int open_trace(struct ctf_set *set, const char *dir, const char *rel, struct ctf_err *err)
{
	char *mpath = join(dir, "metadata"), *text;
	struct dirent **names;
	struct ctf_trace *t;
	size_t len;
	int n, i, rc = 0;

	if (read_file(mpath, &text, &len, err)) {
		free(mpath);
		return -1;
	}
	t = ctf_trace_parse(mpath, rel, text, len, err);
	free(text);
	free(mpath);
	if (!t)
		return -1;
	set->traces = grow(set->traces, set->ntraces, sizeof(*set->traces));
	set->traces[set->ntraces++] = t;
	n = scandir(dir, &names, stream_file_name, versionsort);
	if (n < 0) {
		ctf_set_err(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char *path = join(dir, names[i]->d_name);
		const unsigned char *data;
		struct stat st;
		size_t size;

		if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (map_file(path, &data, &size, err) == 0) {
				struct ctf_stream *s = ctf_stream_new(t, path, data, size);
				s->index = set->nstreams;
				set->streams = grow(set->streams, set->nstreams, sizeof(*set->streams));
				set->streams[set->nstreams++] = s;
			} else {
				rc = -1;
			}
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

static int is_dir(const char *path, const struct dirent *d)
{
	struct stat st;

	if (d->d_type == DT_DIR)
		return 1;
	if (d->d_type != DT_UNKNOWN && d->d_type != DT_LNK)
		return 0;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int not_dot(const struct dirent *d)
{
	return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

static int scan(struct ctf_set *set, const char *dir, const char *rel, unsigned depth, struct ctf_err *err)
{
	char *mpath = join(dir, "metadata");
	struct dirent **names;
	struct stat st;
	int n, i, rc = 0, has_metadata;

	has_metadata = stat(mpath, &st) == 0 && S_ISREG(st.st_mode);
	free(mpath);
	if (has_metadata)
		return open_trace(set, dir, *rel ? rel : ".", err);
	if (depth > MAX_DEPTH)
		return 0;
	n = scandir(dir, &names, not_dot, versionsort);
	if (n < 0) {
		ctf_set_err(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char *path = join(dir, names[i]->d_name);
		if (!rc && is_dir(path, names[i])) {
			char *sub = *rel ? join(rel, names[i]->d_name) : strdup(names[i]->d_name);
			rc = scan(set, path, sub, depth + 1, err);
			free(sub);
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int ctf_open(struct ctf_set *set, const char *dir, struct ctf_err *err)
{
	struct stat st;

	memset(set, 0, sizeof(*set));
	if (stat(dir, &st) < 0) {
		ctf_set_err(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		ctf_set_err(err, "%s: not a directory (give the trace directory)", dir);
		return -1;
	}
	if (scan(set, dir, "", 0, err)) {
		ctf_close(set);
		return -1;
	}
	if (!set->ntraces) {
		ctf_set_err(err, "%s: no CTF trace in it (no folder under it holds a 'metadata' file)", dir);
		ctf_close(set);
		return -1;
	}
	return 0;
}

void ctf_close(struct ctf_set *set)
{
	unsigned i;

	for (i = 0; i < set->nstreams; i++) {
		struct ctf_stream *s = set->streams[i];
		if (s->size)
			munmap((void *)s->base, s->size);
		ctf_stream_free(s);
	}
	for (i = 0; i < set->ntraces; i++)
		ctf_trace_free(set->traces[i]);
	free(set->streams);
	free(set->traces);
	free(set->heap);
	memset(set, 0, sizeof(*set));
}
