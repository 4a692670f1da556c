/*
 * mt_ctf.c - CTF 1.8 writer: metadata text and packets of the rings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "mt_ctf.h"
#include "mt_event.h"

#define CTF_MAGIC 0xC1FC1FC1u

static int mkdirs(const char *path)
{
	char *p = strdup(path), *s;
	int rc = 0;

	if (!p)
		return -1;
	for (s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				rc = -1;
			*s = '/';
		}
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

void mt_ctf_clock_now(struct mt_ctf_clock *c)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	long long best = -1, best_offset = 0;
	int i;

	c->uuid[0] = '\0';
	if (f) {
		if (!fgets(c->uuid, sizeof(c->uuid), f))
			c->uuid[0] = '\0';
		fclose(f);
		c->uuid[strcspn(c->uuid, "\n")] = '\0';
	}
	if (!c->uuid[0])
		strcpy(c->uuid, "00000000-0000-0000-0000-000000000000");
	/* realtime - monotonic, from the tightest of a few samples */
	for (i = 0; i < 10; i++) {
		struct timespec m1, r, m2;
		long long d, mono, real;
		clock_gettime(CLOCK_MONOTONIC, &m1);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m2);
		d = (m2.tv_sec - m1.tv_sec) * 1000000000LL + (m2.tv_nsec - m1.tv_nsec);
		mono = m1.tv_sec * 1000000000LL + m1.tv_nsec + d / 2;
		real = r.tv_sec * 1000000000LL + r.tv_nsec;
		if (best < 0 || d < best) {
			best = d;
			best_offset = real - mono;
		}
	}
	c->offset_s = best_offset / 1000000000LL;
	c->offset_ns = best_offset % 1000000000LL;
}

static void random_uuid(unsigned char u[16])
{
	int fd = open("/dev/urandom", O_RDONLY);
	unsigned i;

	if (fd < 0 || read(fd, u, 16) != 16) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		for (i = 0; i < 16; i++)
			u[i] = (unsigned char)((ts.tv_nsec >> (i % 8)) ^ (getpid() >> (i % 4)) ^ i);
	}
	if (fd >= 0)
		close(fd);
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
}

int mt_ctf_open(struct mt_ctf_trace *t, const char *dir, unsigned ncpu, const char *domain,
		const struct mt_ctf_clock *clock, char *err, size_t errlen)
{
	unsigned cpu;

	memset(t, 0, sizeof(*t));
	t->dir = strdup(dir);
	t->domain = domain;
	t->clock = *clock;
	t->ncpu = ncpu;
	t->fds = calloc(ncpu, sizeof(int));
	t->lost = calloc(ncpu, sizeof(*t->lost));
	random_uuid(t->uuid);
	if (!t->dir || !t->fds || !t->lost) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (mkdirs(dir) < 0) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		t->fds[cpu] = -1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/channel0_%u", dir, cpu);
		t->fds[cpu] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (t->fds[cpu] < 0) {
			snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void put_u32(char **p, u32 v) { memcpy(*p, &v, 4); *p += 4; }
static void put_u64(char **p, mt_u64 v) { memcpy(*p, &v, 8); *p += 8; }

/* Size of one event at data[0..size): 0 if it does not fit. */
static mt_u64 event_size(const struct mt_session *s, const char *data, mt_u64 size,
			 struct mt_format *cache, int *cache_ok)
{
	u16 id;
	mt_u64 off = MT_EVENT_PREFIX_SIZE;
	unsigned i;

	if (size < MT_EVENT_PREFIX_SIZE)
		return 0;
	memcpy(&id, data, 2);
	if (id >= MT_EVENTS_MAX || id >= s->nevents)
		return 0;
	if (cache_ok[id] == 0)
		cache_ok[id] = mt_fmt_parse(s->events[id].format, &cache[id], NULL) == 0 ? 1 : -1;
	if (cache_ok[id] < 0)
		return 0;
	for (i = 0; i < cache[id].nfields; i++) {
		const struct mt_field *f = &cache[id].fields[i];
		if (f->store == MT_ST_STRING) {
			const char *nul = memchr(data + off, '\0', size - off);
			if (!nul)
				return 0;
			off = (mt_u64)(nul - data) + 1;
		} else {
			off += f->size;
		}
		if (off > size)
			return 0;
	}
	return off;
}

mt_u64 mt_ctf_count_events(const struct mt_session *s, const char *data, mt_u64 size)
{
	static __thread struct mt_format *cache;
	static __thread int *cache_ok;
	static __thread const struct mt_session *cache_session;
	static __thread u32 cache_n;
	mt_u64 n = 0, off = 0, len;

	if (!cache) {
		cache = calloc(MT_EVENTS_MAX, sizeof(*cache));
		cache_ok = calloc(MT_EVENTS_MAX, sizeof(int));
		if (!cache || !cache_ok)
			return 0;
	}
	if (cache_session != s || cache_n > s->nevents) {
		memset(cache_ok, 0, MT_EVENTS_MAX * sizeof(int));
		cache_session = s;
	}
	cache_n = s->nevents;
	while (off < size && (len = event_size(s, data + off, size - off, cache, cache_ok))) {
		off += len;
		n++;
	}
	return n;
}

int mt_ctf_write_packet(struct mt_ctf_trace *t, const struct mt_session *s, unsigned cpu,
			const struct mt_ring_packet *pkt, char *err, size_t errlen)
{
	char head[MT_CTF_PACKET_HEADER_SIZE], *p = head;
	mt_u64 bits = (MT_CTF_PACKET_HEADER_SIZE + pkt->data_size) * 8;
	struct iovec iov[2];
	ssize_t want = (ssize_t)(MT_CTF_PACKET_HEADER_SIZE + pkt->data_size), done = 0;
	/*
	 * The cumulative lost count must not go back: sub-buffers are closed
	 * by whichever writer reaches their end, and one closing sub-buffer k
	 * can read the ring's count after another closed k + 1.
	 */
	mt_u64 lost = pkt->lost > t->lost[cpu] ? pkt->lost : t->lost[cpu];

	t->lost[cpu] = lost;
	put_u32(&p, CTF_MAGIC);
	memcpy(p, t->uuid, 16);
	p += 16;
	put_u32(&p, 0);                /* stream_id */
	put_u64(&p, cpu);              /* stream_instance_id */
	put_u64(&p, pkt->ts_begin);
	put_u64(&p, pkt->ts_end);
	put_u64(&p, bits);             /* content_size */
	put_u64(&p, bits);             /* packet_size */
	put_u64(&p, pkt->seq);
	put_u64(&p, lost);
	put_u32(&p, cpu);
	iov[0].iov_base = head;
	iov[0].iov_len = sizeof(head);
	iov[1].iov_base = (void *)pkt->data;
	iov[1].iov_len = pkt->data_size;
	while (done < want) {
		ssize_t n = writev(t->fds[cpu], iov, 2);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "writing %s/channel0_%u: %s", t->dir, cpu, strerror(errno));
			return -1;
		}
		done += n;
		/* advance the iovecs past what was written */
		while (n > 0) {
			struct iovec *v = iov[0].iov_len ? &iov[0] : &iov[1];
			size_t k = (size_t)n < v->iov_len ? (size_t)n : v->iov_len;
			v->iov_base = (char *)v->iov_base + k;
			v->iov_len -= k;
			n -= (ssize_t)k;
		}
	}
	if (!t->uncounted)   /* the count costs the consumer a walk of every event */
		t->events += mt_ctf_count_events(s, pkt->data, pkt->data_size);
	t->packets++;
	t->bytes += (mt_u64)want;
	return 0;
}

static void write_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

static void write_field(FILE *f, const struct mt_field *fld)
{
	switch (fld->store) {
	case MT_ST_STRING:
		fprintf(f, "\t\tstring _%s;\n", fld->name);
		break;
	case MT_ST_DOUBLE:
		fprintf(f, "\t\tfloating_point { exp_dig = 11; mant_dig = 53; align = 8; byte_order = le; } _%s;\n",
			fld->name);
		break;
	default:
		fprintf(f, "\t\tinteger { size = %u; align = 8; signed = %s; base = %u;%s } _%s;\n",
			fld->size * 8u, fld->is_signed ? "true" : "false", fld->base,
			fld->is_char ? " encoding = UTF8;" : "", fld->name);
	}
}

static void write_header(FILE *f, const struct mt_ctf_trace *t)
{
	char host[256] = "unknown";
	const unsigned char *u = t->uuid;

	gethostname(host, sizeof(host) - 1);
	fprintf(f, "/* CTF 1.8 */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n\n");
	fprintf(f, "trace {\n\tmajor = 1;\n\tminor = 8;\n"
		"\tuuid = \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\";\n"
		"\tbyte_order = le;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n"
		"\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		u[12], u[13], u[14], u[15]);
	fprintf(f, "env {\n\thostname = \"");
	write_escaped(f, host);
	fprintf(f, "\";\n\tdomain = \"%s\";\n\ttracer_name = \"marktap\";\n"
		"\ttracer_major = 0;\n\ttracer_minor = 1;\n};\n\n", t->domain);
	fprintf(f, "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n"
		"\tdescription = \"CLOCK_MONOTONIC\";\n\tfreq = 1000000000;\n\tprecision = 1;\n"
		"\toffset_s = %lld;\n\toffset = %lld;\n\tabsolute = false;\n};\n\n",
		t->clock.uuid, t->clock.offset_s, t->clock.offset_ns);
	fprintf(f, "typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n\n"
		"struct packet_context {\n"
		"\tuint64_clock_monotonic_t timestamp_begin;\n"
		"\tuint64_clock_monotonic_t timestamp_end;\n"
		"\tuint64_t content_size;\n\tuint64_t packet_size;\n\tuint64_t packet_seq_num;\n"
		"\tuint64_t events_discarded;\n\tuint32_t cpu_id;\n};\n\n"
		"stream {\n\tid = 0;\n\tpacket.context := struct packet_context;\n"
		"\tevent.header := struct {\n\t\tuint16_t id;\n"
		"\t\tuint64_clock_monotonic_t timestamp;\n\t};\n"
		"\tevent.context := struct {\n\t\tint32_t _pid;\n\t\tint32_t _tid;\n"
		"\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } _procname[16];\n"
		"\t};\n};\n\n");
}

static void write_event(FILE *f, unsigned id, const struct mt_session_event *e)
{
	struct mt_format fmt;
	char name[MT_EVENT_NAME_MAX + 1], format[MT_EVENT_FORMAT_MAX + 1];
	unsigned i;

	memcpy(name, e->name, MT_EVENT_NAME_MAX);
	name[MT_EVENT_NAME_MAX] = '\0';
	memcpy(format, e->format, MT_EVENT_FORMAT_MAX);
	format[MT_EVENT_FORMAT_MAX] = '\0';
	if (mt_fmt_parse(format, &fmt, NULL))
		return;  /* never armed with a bad format */
	fprintf(f, "/* marktap format: \"");
	for (i = 0; format[i]; i++)
		fputc(format[i] == '*' && format[i + 1] == '/' ? '.' : format[i], f);
	fprintf(f, "\" */\nevent {\n\tname = \"");
	write_escaped(f, name);
	fprintf(f, "\";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n", id);
	for (i = 0; i < fmt.nfields; i++)
		write_field(f, &fmt.fields[i]);
	fprintf(f, "\t};\n};\n\n");
}

int mt_ctf_write_metadata(struct mt_ctf_trace *t, const struct mt_session *s,
			  char *err, size_t errlen)
{
	char path[4096], tmp[4200];
	unsigned i, n = mt_load_acquire(&s->nevents);
	FILE *f;

	if (n > MT_EVENTS_MAX)
		n = MT_EVENTS_MAX;
	snprintf(path, sizeof(path), "%s/metadata", t->dir);
	snprintf(tmp, sizeof(tmp), "%s/.metadata.tmp", t->dir);
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	write_header(f, t);
	for (i = 0; i < n; i++) {
		/* acquire: pairs with the release that published the class */
		if (mt_load_acquire(&s->events[i].state) != MT_EV_READY)
			break;  /* written later: the next rewrite has it */
		write_event(f, i, &s->events[i]);
	}
	t->metadata_events = i;
	{
		int bad = fflush(f) || ferror(f) || fsync(fileno(f)) < 0;
		int e = errno;

		/* close in every case: a failed write must not leak the stream */
		if (fclose(f) || bad) {
			snprintf(err, errlen, "writing %s: %s", tmp, strerror(bad ? e : errno));
			return -1;
		}
	}
	/* rename: a reader (or a crash) never sees half a metadata file */
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "renaming %s: %s", tmp, strerror(errno));
		return -1;
	}
	return 0;
}

void mt_ctf_close(struct mt_ctf_trace *t)
{
	unsigned cpu;

	for (cpu = 0; t->fds && cpu < t->ncpu; cpu++)
		if (t->fds[cpu] >= 0)
			close(t->fds[cpu]);
	free(t->fds);
	free(t->lost);
	t->lost = NULL;
	free(t->dir);
	t->fds = NULL;
	t->dir = NULL;
}
