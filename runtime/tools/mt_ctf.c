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

/*
 * Space kept allocated past the end of each stream file: room for one
 * empty packet carrying the loss count when the disk is full.  Two pages,
 * so that the page holding that packet is never in the range of a later
 * allocation that fails (tmpfs frees the not yet written pages of a
 * failed fallocate's range).
 */
#define RESERVE 8192

/* Space is allocated ahead by this much: one fallocate() per MiB written,
 * not one per packet (4 KiB sub-buffers make many).  Trimmed at the end. */
#define ALLOCATE_AHEAD (1 << 20)

static unsigned file_mode = 0600;

void mt_ctf_set_mode(unsigned mode)
{
	file_mode = mode & 0666;
}

static unsigned dir_mode(void)
{
	return file_mode | (file_mode & 0444) >> 2;
}

/* Create the missing directories of path; remember them for mt_ctf_remove. */
static int make_dirs(struct mt_ctf_trace *t, const char *path)
{
	char *p = strdup(path), *s;
	int rc = 0;

	if (!p)
		return -1;
	for (s = p + 1; !rc; s++) {
		char c = *s;
		if (c && c != '/')
			continue;
		*s = '\0';
		if (mkdir(p, dir_mode()) == 0) {
			char **made = realloc(t->made, (t->nmade + 1) * sizeof(*made));
			if (made) {
				t->made = made;
				t->made[t->nmade] = strdup(p);
				if (t->made[t->nmade])
					t->nmade++;
			}
		} else if (errno != EEXIST) {
			rc = -1;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

/* Create name in the trace directory: never through a link, never an
 * existing file (an old trace's file is removed first: unlinkat removes a
 * planted link itself, not its target). */
static int create_file(struct mt_ctf_trace *t, const char *name)
{
	int fd;

	if (unlinkat(t->dirfd, name, 0) < 0 && errno != ENOENT)
		return -1;
	fd = openat(t->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    file_mode);
	/* the mode exactly: --mode may widen what the umask narrows */
	if (fd >= 0 && fchmod(fd, file_mode) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void mt_ctf_clock_now(struct mt_ctf_clock *c)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	long long best = -1, best_offset = 0;
	int i;

	c->uuid[0] = '\0';
	c->source[0] = '\0';
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
	int made_last;

	memset(t, 0, sizeof(*t));
	t->dirfd = -1;
	t->complete_at = -1;
	t->dir = strdup(dir ? dir : "");
	t->domain = domain;
	t->compact = !strcmp(domain, "ust");
	t->clock = *clock;
	t->ncpu = ncpu;
	t->streams = calloc(ncpu ? ncpu : 1, sizeof(*t->streams));
	t->classes = calloc(MT_EVENTS_MAX, sizeof(*t->classes));
	random_uuid(t->uuid);
	if (!t->dir || !t->streams || !t->classes) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		t->streams[cpu].fd = -1;
	if (!dir)   /* only a tap (--relay without -o) */
		return 0;
	if (!*dir || make_dirs(t, dir) < 0) {
		snprintf(err, errlen, "cannot create %s: %s", dir, *dir ? strerror(errno) : "empty name");
		return -1;
	}
	/* the directory itself is not taken through a link either: in a
	 * directory others can write, a link could send the files anywhere */
	t->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t->dirfd < 0) {
		struct stat st;
		int e = errno, link = lstat(dir, &st) == 0 && S_ISLNK(st.st_mode);

		snprintf(err, errlen, "cannot open %s: %s", dir,
			 link ? "it is a symbolic link (not followed; give the directory it names)"
			      : strerror(e));
		return -1;
	}
	made_last = t->nmade && !strcmp(t->made[t->nmade - 1], dir);
	if (made_last && fchmod(t->dirfd, dir_mode()) < 0) {
		snprintf(err, errlen, "cannot set the mode of %s: %s", dir, strerror(errno));
		return -1;
	}
	unlinkat(t->dirfd, ".metadata.tmp", 0);   /* an interrupted recording's */
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct mt_ctf_stream *st = &t->streams[cpu];
		char name[32];

		snprintf(name, sizeof(name), "channel0_%u", cpu);
		st->fd = create_file(t, name);
		if (st->fd < 0) {
			snprintf(err, errlen, "cannot create %s/%s: %s", dir, name, strerror(errno));
			return -1;
		}
		/* keep room for a last packet (see RESERVE); not every file
		 * system can: then a short write is only cut back */
		st->reserve = fallocate(st->fd, FALLOC_FL_KEEP_SIZE, 0, RESERVE) == 0;
		st->allocated = st->reserve ? RESERVE : 0;
	}
	return 0;
}

void mt_ctf_remove(struct mt_ctf_trace *t)
{
	unsigned cpu;

	if (t->dirfd >= 0) {
		for (cpu = 0; t->streams && cpu < t->ncpu; cpu++) {
			char name[32];
			if (t->streams[cpu].fd < 0)
				continue;
			snprintf(name, sizeof(name), "channel0_%u", cpu);
			unlinkat(t->dirfd, name, 0);
		}
		unlinkat(t->dirfd, "metadata", 0);
		unlinkat(t->dirfd, ".metadata.tmp", 0);
	}
	while (t->nmade)   /* innermost first; one that is not empty stays */
		rmdir(t->made[--t->nmade]);
}

static void put_u32(char **p, u32 v) { memcpy(*p, &v, 4); *p += 4; }
static void put_u64(char **p, mt_u64 v) { memcpy(*p, &v, 8); *p += 8; }

/* Size of one event at data[0..size), its id in *id (clock: the compact
 * layout's, carried from event to event): 0 if it does not fit or its
 * class is unknown. */
static mt_u64 event_size(const struct mt_ctf_trace *t, const char *data, mt_u64 size, u16 *id,
			 mt_u64 *clock)
{
	const struct mt_ctf_class *c;
	mt_u64 off = MT_EVENT_PREFIX_SIZE;
	unsigned i;

	if (t->compact) {
		s32 tid;
		int n = mt_uevent_read_prefix(data, size, id, clock, &tid);
		if (n < 0)
			return 0;
		off = (mt_u64)n + mt_uevent_context_size(t->context);
	} else {
		if (size < MT_EVENT_PREFIX_SIZE)
			return 0;
		memcpy(id, data, 2);
	}
	c = *id < t->nclasses ? t->classes[*id] : NULL;
	if (!c || !c->ok)
		return 0;
	for (i = 0; i < c->fmt.nfields; i++) {
		const struct mt_field *f = &c->fmt.fields[i];
		if (off > size)
			return 0;
		if (f->store == MT_ST_STRING) {
			const char *nul = memchr(data + off, '\0', size - off);
			if (!nul)
				return 0;
			off = (mt_u64)(nul - data) + 1;
		} else {
			off += (mt_u64)f->size * (c->array_len[i] ? c->array_len[i] : 1);
		}
		if (off > size)
			return 0;
	}
	return off;
}

/* Walk a packet's events: how many (thread events not counted: the
 * writers count them with the event they precede), and the largest id
 * seen (including that of an event whose class is unknown, where the walk
 * stops). */
static mt_u64 scan_events(const struct mt_ctf_trace *t, const char *data, mt_u64 size,
			  unsigned *max_id)
{
	mt_u64 n = 0, off = 0, len, clock = 0;
	u16 id = 0;

	*max_id = 0;
	while (off < size) {
		id = 0;
		len = event_size(t, data + off, size - off, &id, &clock);
		if (id > *max_id)
			*max_id = id;
		if (!len)
			break;
		off += len;
		n += !t->classes[id]->is_thread;
	}
	return n;
}

mt_u64 mt_ctf_count_events(const struct mt_ctf_trace *t, const char *data, mt_u64 size)
{
	unsigned max_id;

	return scan_events(t, data, size, &max_id);
}

/* Marker names are C identifiers; a slot written by anyone else could hold
 * anything, which must not make the metadata unreadable. */
static void sanitize_name(char *name)
{
	char *p;

	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == ':' || *p == '-'))
			*p = '_';
	if (!*name)
		strcpy(name, "_");
}

unsigned mt_ctf_update_classes(struct mt_ctf_trace *t, const struct mt_session *s)
{
	u32 n = mt_load_acquire(&s->nevents);
	unsigned added = 0;

	if (n > MT_EVENTS_MAX)
		n = MT_EVENTS_MAX;
	while (t->nclasses < n) {
		const struct mt_session_event *e = &s->events[t->nclasses];
		struct mt_ctf_class *c;

		/* acquire: pairs with the release that published the class */
		if (mt_load_acquire(&e->state) != MT_EV_READY)
			break;  /* published later: the next update has it */
		c = calloc(1, sizeof(*c));
		if (!c)
			break;
		/* one copy, NUL-terminated: the slot may change under us */
		memcpy(c->name, e->name, MT_EVENT_NAME_MAX);
		memcpy(c->format, e->format, MT_EVENT_FORMAT_MAX);
		sanitize_name(c->name);
		c->ok = mt_fmt_parse(c->format, &c->fmt, NULL) == 0;
		c->is_thread = !strcmp(c->name, MT_THREAD_EVENT_NAME);
		t->classes[t->nclasses++] = c;
		added++;
	}
	return added;
}

int mt_ctf_add_class(struct mt_ctf_trace *t, const char *name, const char *format,
		     const struct mt_format *fmt, const u16 *array_len)
{
	struct mt_ctf_class *c;

	if (t->nclasses >= MT_EVENTS_MAX || !(c = calloc(1, sizeof(*c))))
		return -1;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->format, sizeof(c->format), "%s", format);
	sanitize_name(c->name);
	c->fmt = *fmt;
	if (array_len)
		memcpy(c->array_len, array_len, sizeof(c->array_len));
	c->ok = 1;
	t->classes[t->nclasses] = c;
	return (int)t->nclasses++;
}

static void packet_header(char *head, const struct mt_ctf_trace *t, unsigned cpu,
			  mt_u64 ts_begin, mt_u64 ts_end, mt_u64 bytes, mt_u64 seq)
{
	const struct mt_ctf_stream *st = &t->streams[cpu];
	char *p = head;

	put_u32(&p, CTF_MAGIC);
	memcpy(p, t->uuid, 16);
	p += 16;
	put_u32(&p, 0);                /* stream_id */
	put_u64(&p, cpu);              /* stream_instance_id */
	put_u64(&p, ts_begin);
	put_u64(&p, ts_end);
	put_u64(&p, bytes * 8);        /* content_size */
	put_u64(&p, bytes * 8);        /* packet_size */
	put_u64(&p, seq);
	/* events_discarded: the writers' losses and the packets we could not write */
	put_u64(&p, st->ring_lost + st->disk_lost);
	put_u32(&p, cpu);
}

/* Write len bytes of iov at offset at, whole: 0, or -1 with errno. */
static int write_whole(int fd, struct iovec *iov, int niov, off_t at, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwritev(fd, iov, niov, at + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOSPC;
			return -1;
		}
		done += (size_t)n;
		/* advance the iovecs past what was written */
		while (n > 0) {
			struct iovec *v = iov[0].iov_len ? &iov[0] : &iov[1];
			size_t k = (size_t)n < v->iov_len ? (size_t)n : v->iov_len;
			v->iov_base = (char *)v->iov_base + k;
			v->iov_len -= k;
			n -= (ssize_t)k;
		}
	}
	return 0;
}

/* Make sure bytes past the stream's end can be written, and RESERVE more
 * after them; only what lies beyond what is allocated is asked for, so a
 * failure leaves the reserve as it was. */
static int allocate(struct mt_ctf_stream *st, mt_u64 bytes)
{
	off_t need = st->end + RESERVE + (off_t)bytes;

	if (!st->reserve || need <= st->allocated)
		return 0;
	if (fallocate(st->fd, FALLOC_FL_KEEP_SIZE, st->allocated,
		      need - st->allocated + ALLOCATE_AHEAD) == 0) {
		st->allocated = need + ALLOCATE_AHEAD;
		return 0;
	}
	if (errno == EOPNOTSUPP || errno == ENOSYS) {
		st->reserve = 0;
		return 0;
	}
	/* nearly full: just this packet */
	if (fallocate(st->fd, FALLOC_FL_KEEP_SIZE, st->allocated, need - st->allocated) == 0) {
		st->allocated = need;
		return 0;
	}
	return -1;
}

/* The last metadata write failed: does the metadata on disk declare every
 * event class of the packet (after one more try to write it)?  Events of
 * classes it lacks would make the stream unreadable from there on. */
static int metadata_covers(struct mt_ctf_trace *t, const struct mt_session *s,
			   const struct mt_ring_packet *pkt, char *err, size_t errlen)
{
	unsigned max_id;

	scan_events(t, pkt->data, pkt->data_size, &max_id);
	if (max_id < t->metadata_events)
		return 1;
	if (s)
		mt_ctf_update_classes(t, s);
	return mt_ctf_write_metadata(t, err, errlen) == 0 && max_id < t->metadata_events;
}

/* The packet is not written: count its events as lost on its stream. */
static int packet_lost(struct mt_ctf_trace *t, unsigned cpu, const struct mt_ring_packet *pkt,
		       const char *why, char *err, size_t errlen)
{
	struct mt_ctf_stream *st = &t->streams[cpu];
	mt_u64 n = pkt->events != MT_RING_EVENTS_UNKNOWN ? pkt->events :
		   mt_ctf_count_events(t, pkt->data, pkt->data_size);

	st->disk_lost += n;
	t->disk_lost += n;
	st->loss_unwritten = 1;
	if (st->failed)
		return 0;   /* said once per stream: the summary has the count */
	st->failed = 1;
	snprintf(err, errlen, "writing %s/channel0_%u: %s; its events are counted as lost "
		 "from here on while it cannot be written", t->dir, cpu, why);
	return -1;
}

/* A packet's events: the writers' count, or a walk of them. */
static mt_u64 packet_events(const struct mt_ctf_trace *t, const struct mt_ring_packet *pkt)
{
	return pkt->events != MT_RING_EVENTS_UNKNOWN ? pkt->events :
	       mt_ctf_count_events(t, pkt->data, pkt->data_size);
}

/* The tap sees every packet, whether or not the disk takes it; without
 * files the packet is done there. */
static void tap_packet(struct mt_ctf_trace *t, unsigned cpu, const struct mt_ring_packet *pkt)
{
	mt_u64 want = MT_CTF_PACKET_HEADER_SIZE + pkt->data_size, n = packet_events(t, pkt);
	char head[MT_CTF_PACKET_HEADER_SIZE];

	packet_header(head, t, cpu, pkt->ts_begin, pkt->ts_end, want, pkt->seq);
	t->tap->packet(t->tap->ctx, cpu, head, sizeof(head), pkt->data, pkt->data_size, n,
		       t->streams[cpu].ring_lost);
	if (t->dirfd < 0) {
		t->events += n;
		t->packets++;
		t->bytes += want;
	}
}

int mt_ctf_write_packet(struct mt_ctf_trace *t, const struct mt_session *s, unsigned cpu,
			const struct mt_ring_packet *pkt, char *err, size_t errlen)
{
	struct mt_ctf_stream *st = &t->streams[cpu];
	char head[MT_CTF_PACKET_HEADER_SIZE];
	mt_u64 want = MT_CTF_PACKET_HEADER_SIZE + pkt->data_size;
	struct iovec iov[2];

	/* the cumulative lost count must not go back: sub-buffers are closed
	 * by whichever writer reaches their end, and one closing sub-buffer k
	 * can read the ring's count after another closed k + 1 */
	if (pkt->lost > st->ring_lost)
		st->ring_lost = pkt->lost;
	st->next_seq = pkt->seq + 1;
	st->last_ts = pkt->ts_end;
	if (t->tap)
		tap_packet(t, cpu, pkt);
	if (t->dirfd < 0)
		return 0;
	if (t->metadata_failed && !metadata_covers(t, s, pkt, err, errlen))
		return packet_lost(t, cpu, pkt, "the metadata cannot be written", err, errlen);
	if (allocate(st, want) < 0)
		return packet_lost(t, cpu, pkt, strerror(errno), err, errlen);
	packet_header(head, t, cpu, pkt->ts_begin, pkt->ts_end, want, pkt->seq);
	iov[0].iov_base = head;
	iov[0].iov_len = sizeof(head);
	iov[1].iov_base = (void *)pkt->data;
	iov[1].iov_len = pkt->data_size;
	if (write_whole(st->fd, iov, 2, st->end, want) < 0) {
		int e = errno;
		/* whole or not at all: a reader must not meet half a packet */
		if (ftruncate(st->fd, st->end) == 0 && st->reserve) {
			/* the truncation freed the reserve too */
			st->allocated = st->end;
			if (fallocate(st->fd, FALLOC_FL_KEEP_SIZE, st->end, RESERVE) == 0)
				st->allocated = st->end + RESERVE;
		}
		return packet_lost(t, cpu, pkt, strerror(e), err, errlen);
	}
	st->end += (off_t)want;
	st->loss_unwritten = 0;
	if (pkt->events != MT_RING_EVENTS_UNKNOWN)   /* the writers counted them */
		t->events += pkt->events;
	else if (!t->uncounted)   /* a walk of every event: nobody may need it */
		t->events += mt_ctf_count_events(t, pkt->data, pkt->data_size);
	t->packets++;
	t->bytes += want;
	return 0;
}

/* An empty packet carrying the stream's loss count, into the reserve. */
static int write_loss_packet(struct mt_ctf_trace *t, unsigned cpu)
{
	struct mt_ctf_stream *st = &t->streams[cpu];
	char head[MT_CTF_PACKET_HEADER_SIZE];
	struct iovec iov[2] = { { head, sizeof(head) }, { NULL, 0 } };

	/* seq follows the last packet handed to us: the packets not written
	 * show as a gap in packet_seq_num, their events in events_discarded */
	packet_header(head, t, cpu, st->last_ts, st->last_ts, sizeof(head), st->next_seq);
	if (write_whole(st->fd, iov, 1, st->end, sizeof(head)) < 0) {
		int e = errno;
		/* no half packet either (if this fails too, nothing is left to try) */
		(void)!ftruncate(st->fd, st->end);
		errno = e;
		return -1;
	}
	st->end += (off_t)sizeof(head);
	st->loss_unwritten = 0;
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

static void write_field(FILE *f, const struct mt_field *fld, unsigned array_len)
{
	char len[16] = "";

	if (array_len)
		snprintf(len, sizeof(len), "[%u]", array_len);
	switch (fld->store) {
	case MT_ST_STRING:
		fprintf(f, "\t\tstring _%s;\n", fld->name);
		break;
	case MT_ST_DOUBLE:
		fprintf(f, "\t\tfloating_point { exp_dig = 11; mant_dig = 53; align = 8; byte_order = le; } _%s;\n",
			fld->name);
		break;
	default:
		fprintf(f, "\t\tinteger { size = %u; align = 8; signed = %s; base = %u;%s } _%s%s;\n",
			fld->size * 8u, fld->is_signed ? "true" : "false", fld->base,
			fld->is_char ? " encoding = UTF8;" : "", fld->name, len);
	}
}

/*
 * The context fields of --context (mt_event.h), in the order written,
 * declared as LTTng-UST 2.13 declares them (a trace of lttng add-context
 * -u -t NAME made here): tools that know LTTng's contexts by name and type
 * read ours alike.  vtid has no declaration: it renames the tid.
 */
static const struct context_field {
	const char *name;
	u32 bit;
	const char *decl;
} context_fields[] = {
	{ "vpid", MT_CTX_VPID, "integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid" },
	{ "vtid", MT_CTX_VTID, NULL },
	{ "procname", MT_CTX_PROCNAME,
	  "integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _procname[17]" },
	{ "ip", MT_CTX_IP, "integer { size = 64; align = 8; signed = 0; encoding = none; base = 10; } _ip" },
	{ "pthread_id", MT_CTX_PTHREAD_ID,
	  "integer { size = 64; align = 8; signed = 0; encoding = none; base = 10; } _pthread_id" },
	{ "vppid", MT_CTX_VPPID, "integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vppid" },
	{ "vuid", MT_CTX_VUID, "integer { size = 32; align = 8; signed = 0; encoding = none; base = 10; } _vuid" },
	{ "vgid", MT_CTX_VGID, "integer { size = 32; align = 8; signed = 0; encoding = none; base = 10; } _vgid" },
};
#define NCONTEXT_FIELDS (sizeof(context_fields) / sizeof(context_fields[0]))

int mt_ctf_context_parse(const char *list, u32 *context, char *err, size_t errlen)
{
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < NCONTEXT_FIELDS; i++)
			if (strlen(context_fields[i].name) == n && !strncmp(p, context_fields[i].name, n))
				break;
		if (i == NCONTEXT_FIELDS) {
			size_t k = (size_t)snprintf(err, errlen, "unknown context '%.*s' (known: ", (int)n, p);
			for (i = 0; i < NCONTEXT_FIELDS && k < errlen; i++)
				k += (size_t)snprintf(err + k, errlen - k, "%s%s", i ? ", " : "",
						      context_fields[i].name);
			if (k < errlen)
				snprintf(err + k, errlen - k, ")");
			return -1;
		}
		*context |= context_fields[i].bit;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* The compact layout of mt_event.h: the id's value 255 selects the
 * extended form, a short timestamp is extended against the clock. */
static void write_compact_event_header(FILE *f, u32 context)
{
	unsigned i;

	fprintf(f, "\t/* compact: 24 bits of the clock, extended against the previous\n"
		"\t   event's time (or timestamp_begin); pid and name of a tid are in\n"
		"\t   the latest " MT_THREAD_EVENT_NAME " event of that tid, which\n"
		"\t   libmarktap writes in every packet before the thread's first event */\n"
		"\tevent.header := struct {\n"
		"\t\tenum : uint8_t { compact = 0 ... %d, extended = %d } id;\n"
		"\t\tvariant <id> {\n"
		"\t\t\tstruct { integer { size = %d; align = 8; signed = false; "
		"map = clock.monotonic.value; } timestamp; } compact;\n"
		"\t\t\tstruct { uint16_t id; uint64_clock_monotonic_t timestamp; } extended;\n"
		"\t\t} v;\n\t};\n"
		"\tevent.context := struct {\n\t\tint32_t %s;\n",
		MT_UEVENT_ID_EXTENDED - 1, MT_UEVENT_ID_EXTENDED, MT_UEVENT_TS_BITS,
		context & MT_CTX_VTID ? "_vtid" : "_tid");
	for (i = 0; i < NCONTEXT_FIELDS; i++)
		if ((context & context_fields[i].bit) && context_fields[i].decl)
			fprintf(f, "\t\t%s;\n", context_fields[i].decl);
	fprintf(f, "\t};\n");
}

/* Writes the header; the offset of recording_complete's digit. */
static long write_header(FILE *f, const struct mt_ctf_trace *t, int complete)
{
	long at;
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
	fprintf(f, "\";\n");
	if (t->clock.source[0]) {   /* the recorder's choice of clock, and why */
		fprintf(f, "\tclock_source = \"");
		write_escaped(f, t->clock.source);
		fprintf(f, "\";\n");
	}
	if (t->clock.buffers[0]) {   /* how writers shared the rings */
		fprintf(f, "\tbuffers = \"");
		write_escaped(f, t->clock.buffers);
		fprintf(f, "\";\n");
	}
	fprintf(f, "\tdomain = \"%s\";\n\ttracer_name = \"marktap\";\n"
		"\ttracer_major = 0;\n\ttracer_minor = 1;\n", t->domain);
	at = -1;
	if (complete >= 0) {   /* < 0: not said (a tap that only appends) */
		fprintf(f, "\t/* 0 until the recorder drains its buffers and ends: a recorder\n"
			"\t   killed, or stopped by an error, leaves the trace incomplete */\n"
			"\trecording_complete = ");
		at = ftell(f);
		fprintf(f, "%d;\n", complete ? 1 : 0);
	}
	fprintf(f, "};\n\n");
	/*
	 * CLOCK_MONOTONIC with offset = CLOCK_REALTIME - CLOCK_MONOTONIC at
	 * the start: value + offset is ns since the Unix epoch, as LTTng's
	 * "monotonic" clock (whose uuid is the boot id too).  absolute says
	 * so: babeltrace2 merges traces whose clocks are all absolute (it
	 * takes LTTng's as absolute), or all of one uuid, never a mix; a
	 * non-absolute clock kept our traces from merging with LTTng's.
	 */
	fprintf(f, "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n"
		"\tdescription = \"CLOCK_MONOTONIC", t->clock.uuid);
	if (t->clock.source[0]) {
		fprintf(f, ", timestamps by ");
		write_escaped(f, t->clock.source);
	}
	fprintf(f, "\";\n\tfreq = 1000000000;\n\tprecision = 1;\n"
		"\toffset_s = %lld;\n\toffset = %lld;\n\tabsolute = true;\n};\n\n",
		t->clock.offset_s, t->clock.offset_ns);
	fprintf(f, "typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n\n"
		"struct packet_context {\n"
		"\tuint64_clock_monotonic_t timestamp_begin;\n"
		"\tuint64_clock_monotonic_t timestamp_end;\n"
		"\tuint64_t content_size;\n\tuint64_t packet_size;\n\tuint64_t packet_seq_num;\n"
		"\tuint64_t events_discarded;\n\tuint32_t cpu_id;\n};\n\n"
		"stream {\n\tid = 0;\n\tpacket.context := struct packet_context;\n");
	if (t->compact)
		write_compact_event_header(f, t->context);
	else
		fprintf(f, "\tevent.header := struct {\n\t\tuint16_t id;\n"
			"\t\tuint64_clock_monotonic_t timestamp;\n\t};\n"
			"\tevent.context := struct {\n\t\tint32_t _pid;\n\t\tint32_t _tid;\n"
			"\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } _procname[16];\n"
			"\t};\n");
	fprintf(f, "};\n\n");
	return at;
}

static void write_event(FILE *f, unsigned id, const struct mt_ctf_class *c)
{
	unsigned i;

	fprintf(f, "/* marktap format: \"");
	for (i = 0; c->format[i]; i++) {
		char ch = c->format[i];
		if (ch == '*' && c->format[i + 1] == '/')
			ch = '.';   /* no end of the comment */
		fputc((unsigned char)ch < 0x20 || (unsigned char)ch > 0x7e ? '.' : ch, f);
	}
	fprintf(f, "\" */\nevent {\n\tname = \"");
	write_escaped(f, c->name);
	fprintf(f, "\";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n", id);
	for (i = 0; i < c->fmt.nfields; i++)
		write_field(f, &c->fmt.fields[i], c->array_len[i]);
	fprintf(f, "\t};\n};\n\n");
}

/* The same text to the tap (which keeps its own count of failures). */
static void tap_metadata(struct mt_ctf_trace *t, int complete)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	unsigned i;

	if (f) {
		write_header(f, t, t->tap->append_only ? -1 : complete);
		for (i = 0; i < t->nclasses; i++)
			if (t->classes[i]->ok)
				write_event(f, i, t->classes[i]);
		if (fclose(f) == 0)
			t->tap->metadata(t->tap->ctx, text, len);
	}
	free(text);
}

/* Write the metadata to .metadata.tmp and rename it over metadata. */
static int write_metadata(struct mt_ctf_trace *t, int complete, char *err, size_t errlen)
{
	unsigned i, n = t->nclasses;
	long digit;
	int fd, bad, e;
	FILE *f;

	if (t->tap)
		tap_metadata(t, complete);
	if (t->dirfd < 0) {   /* no files */
		t->metadata_events = n;
		return 0;
	}
	fd = create_file(t, ".metadata.tmp");
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(err, errlen, "cannot create %s/.metadata.tmp: %s", t->dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlinkat(t->dirfd, ".metadata.tmp", 0);
		return -1;
	}
	digit = write_header(f, t, complete);
	for (i = 0; i < n; i++)
		if (t->classes[i]->ok)   /* never armed with a bad format */
			write_event(f, i, t->classes[i]);
	bad = fflush(f) || ferror(f) || fsync(fileno(f)) < 0;
	e = errno;
	/* close in every case: a failed write must not leak the stream */
	if (fclose(f) && !bad) {
		bad = 1;
		e = errno;
	}
	/* rename: a reader (or a crash) never sees half a metadata file;
	 * renameat replaces a link named metadata, it does not follow it */
	if (!bad && renameat(t->dirfd, ".metadata.tmp", t->dirfd, "metadata") < 0) {
		snprintf(err, errlen, "renaming %s/.metadata.tmp: %s", t->dir, strerror(errno));
		unlinkat(t->dirfd, ".metadata.tmp", 0);
		return -1;
	}
	if (bad) {
		snprintf(err, errlen, "writing %s/.metadata.tmp: %s", t->dir, strerror(e));
		unlinkat(t->dirfd, ".metadata.tmp", 0);
		return -1;
	}
	t->metadata_events = n;
	t->complete_at = digit;
	return 0;
}

int mt_ctf_write_metadata(struct mt_ctf_trace *t, char *err, size_t errlen)
{
	int rc = write_metadata(t, 0, err, errlen);

	t->metadata_failed = rc < 0;
	return rc;
}

/* The disk may be full: the metadata written before differs only by the
 * digit of recording_complete, changed in place (no new block needed). */
static int mark_complete_in_place(struct mt_ctf_trace *t)
{
	int fd, rc;

	if (t->complete_at < 0)
		return -1;
	fd = openat(t->dirfd, "metadata", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = pwrite(fd, "1", 1, t->complete_at) == 1 && fsync(fd) == 0 ? 0 : -1;
	close(fd);
	return rc;
}

int mt_ctf_end(struct mt_ctf_trace *t, int complete, char *err, size_t errlen)
{
	unsigned cpu;
	int rc = 0;

	for (cpu = 0; cpu < t->ncpu; cpu++) {
		if (!t->streams[cpu].loss_unwritten || t->streams[cpu].fd < 0)
			continue;
		if (write_loss_packet(t, cpu) < 0 && !rc) {
			snprintf(err, errlen, "writing %s/channel0_%u: %s: %llu lost events are "
				 "not in the trace", t->dir, cpu, strerror(errno),
				 (unsigned long long)t->streams[cpu].disk_lost);
			rc = -1;
		}
	}
	if (write_metadata(t, complete, err, errlen) == 0)
		return rc;
	/* the classes on disk are those of the last metadata written: the
	 * packets with others were counted as lost (metadata_failed) */
	t->metadata_failed = 1;
	if (complete && t->metadata_events == t->nclasses && mark_complete_in_place(t) == 0)
		return rc;
	return -1;
}

void mt_ctf_close(struct mt_ctf_trace *t)
{
	unsigned cpu, i;

	for (cpu = 0; t->streams && cpu < t->ncpu; cpu++) {
		struct mt_ctf_stream *st = &t->streams[cpu];
		if (st->fd < 0)
			continue;
		/* give back the space allocated ahead, past the end */
		if (st->reserve && ftruncate(st->fd, st->end) < 0)
			st->reserve = 0;
		close(st->fd);
	}
	for (i = 0; t->classes && i < t->nclasses; i++)
		free(t->classes[i]);
	for (i = 0; i < t->nmade; i++)
		free(t->made[i]);
	if (t->dirfd >= 0)
		close(t->dirfd);
	free(t->classes);
	free(t->streams);
	free(t->made);
	free(t->dir);
	memset(t, 0, sizeof(*t));
	t->dirfd = -1;
}
