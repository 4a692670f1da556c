/*
 * relay_live.c - an lttng-live viewer of lttng-relayd (see relay_live.h).
 *
 * The viewer protocol, as relayd 2.4 and later speak it on the live port
 * (every integer big-endian, every structure packed):
 *
 *   command   u64 payload size | u32 command | u32 0, then the payload
 *   connect   u64 viewer session | u32 major | u32 minor | u32 type: the
 *             same back, with relayd's version
 *   list      -> u32 count, then per session: u64 id | u32 live timer |
 *             u32 clients | u32 streams | char host[64] | char name[255]
 *   attach    u64 id | u64 0 | u32 seek -> u32 status | u32 count | streams
 *   stream    u64 id | u64 trace id | u32 is metadata | char path[4096] |
 *             char channel[255]
 *   index     u64 stream -> u64 offset | u64 packet size (bits) | u64
 *             content size | u64 ts begin | u64 ts end | u64 discarded |
 *             u64 stream | u32 status | u32 flags
 *   packet    u64 stream | u64 offset | u32 len -> u32 status | u32 len |
 *             u32 flags | data
 *   metadata  u64 stream -> u64 len | u32 status | data
 *
 * Each data packet is decoded by ctf_read.c's stream reader over the
 * packet's bytes (one ctf_stream per packet, the loss counters carried
 * from the last); each trace's metadata is the text received so far,
 * parsed again when it grows (a version before stays while a stream's
 * packet being read points into it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "relay_live.h"
#include "relay_net.h"

enum {
	V_CONNECT = 1, V_LIST = 2, V_ATTACH = 3, V_NEXT_INDEX = 4, V_GET_PACKET = 5,
	V_GET_METADATA = 6, V_NEW_STREAMS = 7, V_CREATE_SESSION = 8,
};
enum { IDX_OK = 1, IDX_RETRY, IDX_HUP, IDX_ERR, IDX_INACTIVE, IDX_EOF };
enum { FLAG_NEW_METADATA = 1, FLAG_NEW_STREAM = 2 };

#define HOST_LEN 64
#define NAME_LEN 255
#define PATH_LEN 4096
#define SESSION_SIZE (8 + 4 + 4 + 4 + HOST_LEN + NAME_LEN)
#define STREAM_SIZE (8 + 8 + 4 + PATH_LEN + NAME_LEN)
#define MAX_SESSIONS 65536
#define MAX_STREAMS 4096
#define MAX_TRACES 64
#define MAX_METADATA (64u << 20)        /* per trace */
#define MAX_PACKET (256u << 20)
#define MAX_VERSIONS 4096           /* metadata parses, per trace */
#define MAX_PARSED (1ull << 30)         /* metadata bytes parsed, all versions of a session */
#define MAX_KEPT (256ull << 20)         /* metadata bytes of the versions kept, all traces */
#define MAX_RETRIES 8               /* a packet asked for again after new metadata */
#define POLL_NS (100 * 1000 * 1000)

struct live_trace {
	uint64_t id;                    /* relayd's ctf trace id */
	uint64_t metadata_stream;       /* its metadata stream, or 0 */
	int has_metadata_stream, metadata_closed;
	char *text;                     /* metadata received so far */
	size_t len;
	struct ctf_trace *t;            /* its latest parse */
	struct ctf_trace **old;
	unsigned nold;                  /* versions kept (packets point into them) */
	unsigned versions;              /* versions parsed */
	char path[PATH_LEN + 1];
};

enum { S_WAIT, S_HAVE, S_ENDED };

struct live_stream {
	uint64_t id;
	struct live_trace *trace;
	char name[PATH_LEN + NAME_LEN + 2];
	int state;
	struct ctf_stream *cs;          /* over the packet being read */
	unsigned char *packet;
	uint64_t known_until;           /* no event before this is still to come */
};

struct mt_live {
	int fd;
	char where[320];                /* "relayd at HOST port P" */
	uint64_t session;
	struct live_trace traces[MAX_TRACES];
	unsigned ntraces;
	struct live_stream *streams;
	unsigned nstreams;
	struct live_stream *last;       /* returned by mt_live_next */
	int no_more_streams;
	char error[640];
	uint64_t parsed;                /* metadata bytes parsed so far */
	void (*on_trace)(void *ctx, struct ctf_trace *t);
	void (*on_free)(void *ctx, struct ctf_trace *t);
	void (*on_wait)(void *ctx);
	void *ctx;
};

int mt_live_url(const char *arg)
{
	return !strncmp(arg, "net://", 6);
}

static int fail(struct mt_live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct mt_live *l, const char *fmt, ...)
{
	va_list ap;
	char what[300];

	if (l->error[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(l->error, sizeof(l->error), "%s: %s", l->where, what);
	return -1;
}

/* ---- wire ---- */

static int request(struct mt_live *l, uint32_t cmd, const void *payload, size_t len)
{
	unsigned char head[16], *p = head;
	struct iovec iov[2] = { { head, sizeof(head) }, { (void *)payload, len } };

	mt_net_put64(&p, len);
	mt_net_put32(&p, cmd);
	mt_net_put32(&p, 0);
	if (mt_net_send_all(l->fd, iov, len ? 2 : 1) < 0)
		return fail(l, "sending: %s", strerror(errno));
	return 0;
}

static int reply(struct mt_live *l, void *buf, size_t len)
{
	if (mt_net_recv_all(l->fd, buf, len) < 0)
		return fail(l, "reading its reply: %s", errno == EAGAIN ? "no answer in 10 s" :
			    errno == ETIMEDOUT ? "too slow (a trickle of bytes)" :
			    errno == EINTR ? "interrupted" : strerror(errno));
	return 0;
}

static int command(struct mt_live *l, uint32_t cmd, const void *payload, size_t len,
		   void *out, size_t outlen)
{
	return request(l, cmd, payload, len) < 0 ? -1 : reply(l, out, outlen);
}

/* A fixed-size text field of relayd's: at most n bytes, NUL-terminated
 * here; control bytes (it goes into messages on a terminal) become '?'. */
static void field(char *dst, const unsigned char *src, size_t n)
{
	size_t k = strnlen((const char *)src, n), i;

	memcpy(dst, src, k);
	dst[k] = '\0';
	for (i = 0; i < k; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = '?';
}

/* ---- metadata ---- */

static void free_version(struct mt_live *l, struct ctf_trace *t)
{
	if (t && l->on_free)
		l->on_free(l->ctx, t);
	ctf_trace_free(t);
}

static void trace_free(struct mt_live *l, struct live_trace *tr)
{
	for (unsigned i = 0; i < tr->nold; i++)
		free_version(l, tr->old[i]);
	free(tr->old);
	free_version(l, tr->t);
	free(tr->text);
}

/* Whether a stream's current packet was decoded with version t. */
static int in_use(const struct mt_live *l, const struct ctf_trace *t)
{
	for (unsigned i = 0; i < l->nstreams; i++)
		if (l->streams[i].cs && l->streams[i].cs->trace == t)
			return 1;
	return 0;
}

/* Free the old versions of tr no packet points into; the metadata bytes
 * of what every trace keeps. */
static uint64_t prune(struct mt_live *l, struct live_trace *tr)
{
	uint64_t kept = 0;
	unsigned i, k = 0;

	for (i = 0; i < tr->nold; i++)
		if (in_use(l, tr->old[i]))
			tr->old[k++] = tr->old[i];
		else
			free_version(l, tr->old[i]);
	tr->nold = k;
	for (i = 0; i < l->ntraces; i++)
		kept += (uint64_t)l->traces[i].len * (l->traces[i].nold + 1);
	return kept;
}

/*
 * Parse the trace's metadata as received so far, keep the version before
 * while packets point into it.  A relayd can make the metadata grow a
 * little before every poll: the bytes parsed in all (CPU) and the bytes
 * of the versions kept (memory) are bounded, not only their number.
 */
static int reparse(struct mt_live *l, struct live_trace *tr)
{
	struct ctf_err e;
	struct ctf_trace *t;

	if (l->parsed + tr->len > MAX_PARSED)
		return fail(l, "the metadata of %s: %llu MiB parsed in %u versions, and it grows again: "
			    "refused (at most %llu MiB)", tr->path, (unsigned long long)(l->parsed >> 20),
			    tr->versions, MAX_PARSED >> 20);
	l->parsed += tr->len;
	tr->versions++;
	t = ctf_trace_parse(tr->path, tr->path, tr->text, tr->len, &e);
	if (!t)
		return fail(l, "the metadata of %s: %s", tr->path, e.msg);
	if (tr->versions > MAX_VERSIONS) {
		ctf_trace_free(t);
		return fail(l, "the metadata of %s grew more than %u times", tr->path, MAX_VERSIONS);
	}
	if (tr->t) {
		struct ctf_trace **old = realloc(tr->old, (tr->nold + 1) * sizeof(*old));
		if (!old)
			abort();
		old[tr->nold++] = tr->t;
		tr->old = old;
	}
	tr->t = t;
	if (prune(l, tr) > MAX_KEPT)
		return fail(l, "the metadata of %s: more than %llu MiB of versions in use", tr->path,
			    MAX_KEPT >> 20);
	if (l->on_trace)
		l->on_trace(l->ctx, t);
	return 0;
}

/* Ask for the trace's new metadata until there is none; parse it again if
 * it grew.  relayd says "error" for a metadata stream it closed. */
static int fetch_metadata(struct mt_live *l, struct live_trace *tr)
{
	unsigned char req[8], head[12], *p = req;
	size_t before = tr->len;

	if (!tr->has_metadata_stream || tr->metadata_closed)
		return tr->t ? 0 : fail(l, "the trace %s has no metadata", tr->path);
	mt_net_put64(&p, tr->metadata_stream);
	for (;;) {
		uint64_t len;
		uint32_t status;
		char *text;

		if (command(l, V_GET_METADATA, req, sizeof(req), head, sizeof(head)) < 0)
			return -1;
		len = mt_net_get64(head);
		status = mt_net_get32(head + 8);
		if (status != 1) {
			tr->metadata_closed = status != 2;
			break;
		}
		if (len > MAX_METADATA - tr->len)
			return fail(l, "the metadata of %s grows past %u MiB", tr->path,
				    MAX_METADATA >> 20);
		text = realloc(tr->text, tr->len + len + 1);
		if (!text)
			abort();
		tr->text = text;
		if (reply(l, tr->text + tr->len, len) < 0)
			return -1;
		tr->len += len;
		tr->text[tr->len] = '\0';
	}
	if (tr->len == before)
		return tr->t ? 0 : fail(l, "the trace %s has no metadata yet", tr->path);
	return reparse(l, tr);
}

/* ---- streams ---- */

static struct live_trace *trace_of(struct mt_live *l, uint64_t id, const char *path)
{
	unsigned i;

	for (i = 0; i < l->ntraces; i++)
		if (l->traces[i].id == id)
			return &l->traces[i];
	if (l->ntraces == MAX_TRACES)
		return NULL;
	memset(&l->traces[i], 0, sizeof(l->traces[i]));
	l->traces[i].id = id;
	snprintf(l->traces[i].path, sizeof(l->traces[i].path), "%s", path);
	l->ntraces++;
	return &l->traces[i];
}

/* count streams of an attach or new-streams reply, read and kept */
static int read_streams(struct mt_live *l, uint32_t count)
{
	unsigned char *buf;
	struct live_stream *more;

	if (count > MAX_STREAMS - l->nstreams)
		return fail(l, "more than %u streams", MAX_STREAMS);
	buf = malloc(STREAM_SIZE);
	more = realloc(l->streams, (l->nstreams + count + 1) * sizeof(*more));
	if (!buf || !more)
		abort();
	l->streams = more;
	l->last = NULL;   /* (it pointed into the array moved) */
	for (uint32_t i = 0; i < count; i++) {
		char path[PATH_LEN + 1], channel[NAME_LEN + 1];
		struct live_trace *tr;
		if (reply(l, buf, STREAM_SIZE) < 0)
			break;
		field(path, buf + 20, PATH_LEN);
		field(channel, buf + 20 + PATH_LEN, NAME_LEN);
		if (!(tr = trace_of(l, mt_net_get64(buf + 8), path))) {
			fail(l, "more than %u traces in the session", MAX_TRACES);
			break;
		}
		if (mt_net_get32(buf + 16)) {
			tr->metadata_stream = mt_net_get64(buf);
			tr->has_metadata_stream = 1;
			continue;
		}
		struct live_stream *st = &l->streams[l->nstreams++];
		memset(st, 0, sizeof(*st));
		st->id = mt_net_get64(buf);
		st->trace = tr;
		snprintf(st->name, sizeof(st->name), "%s/%s", path, channel);
	}
	free(buf);
	return l->error[0] ? -1 : 0;
}

/* New streams of the session, if relayd has any; 1 when the session is
 * closed (no more will come). */
static int new_streams(struct mt_live *l)
{
	unsigned char req[8], head[8], *p = req;
	uint32_t status;

	mt_net_put64(&p, l->session);
	if (command(l, V_NEW_STREAMS, req, sizeof(req), head, sizeof(head)) < 0)
		return -1;
	status = mt_net_get32(head);
	if (status == 1 && read_streams(l, mt_net_get32(head + 4)) < 0)
		return -1;
	for (unsigned i = 0; i < l->ntraces; i++)
		if (!l->traces[i].t && l->traces[i].has_metadata_stream &&
		    fetch_metadata(l, &l->traces[i]) < 0)
			return -1;
	if (status == 3)
		return fail(l, "it could not list the session's new streams");
	return status == 4;
}

/* ---- packets ---- */

static uint64_t trace_time(const struct ctf_trace *t, uint64_t value)
{
	uint64_t ns = t->freq == 1000000000 || !t->freq ? value :
		(uint64_t)((unsigned __int128)value * 1000000000u / t->freq);
	return ns + (uint64_t)t->offset_ns;
}

/* The packet of an index, read and entered: the stream HAVE an item, or
 * WAIT again after an empty packet. */
static int take_packet(struct mt_live *l, struct live_stream *st, uint64_t offset, uint64_t bits)
{
	unsigned char req[20], head[12], *p = req;
	uint32_t status, len, flags;
	struct ctf_stream *cs;
	int item;

	if (bits % 8 || bits / 8 > MAX_PACKET || bits == 0)
		return fail(l, "%s: a packet of %llu bits (at most %u MiB, whole bytes)", st->name,
			    (unsigned long long)bits, MAX_PACKET >> 20);
	mt_net_put64(&p, st->id);
	mt_net_put64(&p, offset);
	mt_net_put32(&p, (uint32_t)(bits / 8));
	if (command(l, V_GET_PACKET, req, sizeof(req), head, sizeof(head)) < 0)
		return -1;
	status = mt_net_get32(head);
	len = mt_net_get32(head + 4);
	flags = mt_net_get32(head + 8);
	if (status != 1) {
		if (flags & FLAG_NEW_METADATA)   /* asked again once it is in */
			return fetch_metadata(l, st->trace) < 0 ? -1 : 1;
		return fail(l, "%s: it could not send a packet (status %u)", st->name, status);
	}
	if (len != bits / 8)
		return fail(l, "%s: a packet of %u bytes where the index says %llu", st->name, len,
			    (unsigned long long)(bits / 8));
	free(st->packet);
	if (!(st->packet = malloc(len)))
		abort();
	if (reply(l, st->packet, len) < 0)
		return -1;
	cs = ctf_stream_new(st->trace->t, st->name, st->packet, len);
	if (st->cs) {   /* losses are measured against the last packet */
		cs->have_packet = st->cs->have_packet;
		cs->prev_seq = st->cs->prev_seq;
		cs->prev_discarded = st->cs->prev_discarded;
		ctf_stream_free(st->cs);
	}
	st->cs = cs;
	item = ctf_stream_next(cs);
	/* its first event's time, or an empty packet's beginning */
	if (cs->time > st->known_until)
		st->known_until = cs->time;
	st->state = item == CTF_ITEM_END ? S_WAIT : S_HAVE;
	return 0;
}

/* Ask relayd what comes next on the waiting stream i. */
static int poll_stream(struct mt_live *l, unsigned i)
{
	unsigned char req[8], idx[64], *p = req;
	struct live_stream *st = &l->streams[i];
	uint32_t status, flags;
	int rc;

	mt_net_put64(&p, st->id);
	if (command(l, V_NEXT_INDEX, req, sizeof(req), idx, sizeof(idx)) < 0)
		return -1;
	status = mt_net_get32(idx + 56);
	flags = mt_net_get32(idx + 60);
	if (flags & FLAG_NEW_METADATA && fetch_metadata(l, st->trace) < 0)
		return -1;
	if (flags & FLAG_NEW_STREAM && new_streams(l) < 0)
		return -1;
	st = &l->streams[i];   /* (new streams may have moved the array) */
	switch (status) {
	case IDX_OK:
		if (!st->trace->t && fetch_metadata(l, st->trace) < 0)
			return -1;
		for (int tries = 0; tries < MAX_RETRIES; tries++)
			if ((rc = take_packet(l, st, mt_net_get64(idx), mt_net_get64(idx + 8))) != 1)
				return rc;
		return fail(l, "%s: it keeps asking to read new metadata before a packet", st->name);
	case IDX_INACTIVE:
		if (st->trace->t && trace_time(st->trace->t, mt_net_get64(idx + 32)) > st->known_until)
			st->known_until = trace_time(st->trace->t, mt_net_get64(idx + 32));
		return 0;
	case IDX_RETRY:
		return 0;
	case IDX_HUP:
	case IDX_EOF:
		st->state = S_ENDED;
		return 0;
	default:
		return fail(l, "%s: it could not give the next packet (status %u)", st->name, status);
	}
}

/* ---- time order ---- */

/* Time, then the stream's path in version order: ties go as ctf_open's
 * streams (sorted by name) would have them. */
static int before(const struct ctf_stream *a, const struct ctf_stream *b)
{
	return a->time < b->time || (a->time == b->time && strverscmp(a->path, b->path) < 0);
}

/* The stream with the oldest item, if no waiting stream may still have an
 * older one; NULL otherwise (*any: some stream has an item). */
static struct live_stream *oldest(struct mt_live *l, int *any)
{
	struct live_stream *best = NULL;
	unsigned i;

	for (i = 0; i < l->nstreams; i++)
		if (l->streams[i].state == S_HAVE && (!best || before(l->streams[i].cs, best->cs)))
			best = &l->streams[i];
	*any = best != NULL;
	for (i = 0; best && i < l->nstreams; i++)
		if (l->streams[i].state == S_WAIT && l->streams[i].known_until < best->cs->time)
			return NULL;
	return best;
}

/*
 * The stream's next item.  At the end of its packet, what is known of the
 * next one is that its events are not older than the last event of this
 * one (a ring's timestamps grow in reservation order), not that they
 * follow the packet's timestamp_end: the recorder's switch timer closes a
 * packet at a time read after writers may have read theirs.
 */
static void step(struct live_stream *st)
{
	if (ctf_stream_next(st->cs) == CTF_ITEM_END)
		st->state = S_WAIT;
	else if (st->cs->time > st->known_until)
		st->known_until = st->cs->time;
}

/* Every stream closed and no new one: 1 (the session ended), 0, -1. */
static int session_over(struct mt_live *l)
{
	unsigned i, before_n = l->nstreams;
	int rc;

	for (i = 0; i < l->nstreams; i++)
		if (l->streams[i].state != S_ENDED)
			return 0;
	rc = new_streams(l);
	if (rc < 0)
		return -1;
	return l->nstreams == before_n && (rc == 1 || before_n > 0);
}

struct ctf_stream *mt_live_next(struct mt_live *l, volatile sig_atomic_t *stop)
{
	if (l->last)
		step(l->last);
	l->last = NULL;
	while (!*stop && !l->error[0]) {
		struct live_stream *st;
		struct timespec pause = { 0, POLL_NS };
		int any, over;

		for (unsigned i = 0; i < l->nstreams; i++)
			if (l->streams[i].state == S_WAIT && poll_stream(l, i) < 0)
				return NULL;
		if ((st = oldest(l, &any))) {
			l->last = st;
			return st->cs;
		}
		if (!any && (over = session_over(l)) != 0)
			return NULL;
		if (l->on_wait)
			l->on_wait(l->ctx);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* ---- the session ---- */

/* net://HOST[:PORT]/host/HOSTNAME/SESSION; 0 or -1 with err set. */
static int parse_url(const char *url, char *host, size_t hostlen, char *port, char *hostname,
		     char *session, struct ctf_err *err)
{
	const char *rest = mt_net_host(url, host, hostlen), *h, *slash;

	strcpy(port, "5344");
	if (rest && *rest == ':') {
		char *end;
		unsigned long v = strtoul(rest + 1, &end, 10);
		if (end == rest + 1 || !v || v > 65535)
			rest = NULL;
		else
			snprintf(port, 8, "%lu", v), rest = end;
	}
	if (!rest || strncmp(rest, "/host/", 6))
		goto bad;
	h = rest + 6;
	slash = strchr(h, '/');
	if (!slash || slash == h || (size_t)(slash - h) >= HOST_LEN || !slash[1] ||
	    strchr(slash + 1, '/') || strlen(slash + 1) >= NAME_LEN)
		goto bad;
	memcpy(hostname, h, (size_t)(slash - h));
	hostname[slash - h] = '\0';
	strcpy(session, slash + 1);
	return 0;
bad:
	snprintf(err->msg, sizeof(err->msg),
		 "'%s': expected net://HOST[:PORT]/host/HOSTNAME/SESSION (an lttng-relayd live session)",
		 url);
	return -1;
}

/* Version: relayd's major must be ours. */
static int viewer_connect(struct mt_live *l)
{
	unsigned char msg[20], back[20], *p = msg, status[4];

	mt_net_put64(&p, 0);
	mt_net_put32(&p, 2);
	mt_net_put32(&p, 4);
	mt_net_put32(&p, 1);   /* a command connection */
	if (command(l, V_CONNECT, msg, sizeof(msg), back, sizeof(back)) < 0)
		return -1;
	if (mt_net_get32(back + 8) != 2)
		return fail(l, "not lttng-relayd's live port (it answers version %u.%u)",
			    mt_net_get32(back + 8), mt_net_get32(back + 12));
	if (command(l, V_CREATE_SESSION, NULL, 0, status, sizeof(status)) < 0)
		return -1;
	if (mt_net_get32(status) != 1)
		return fail(l, "it refused a viewer session (status %u)", mt_net_get32(status));
	return 0;
}

/* The newest session of that host and name: its id, or 0. */
static uint64_t find_session(struct mt_live *l, const char *hostname, const char *name)
{
	unsigned char count[4], one[SESSION_SIZE];
	uint64_t id = 0;
	uint32_t n;

	if (command(l, V_LIST, NULL, 0, count, sizeof(count)) < 0)
		return 0;
	n = mt_net_get32(count);
	if (n > MAX_SESSIONS) {
		fail(l, "it lists %u sessions (at most %u are read)", n, MAX_SESSIONS);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		char h[HOST_LEN + 1], s[NAME_LEN + 1];
		if (reply(l, one, sizeof(one)) < 0)
			return 0;
		field(h, one + 20, HOST_LEN);
		field(s, one + 20 + HOST_LEN, NAME_LEN);
		if (!strcmp(h, hostname) && !strcmp(s, name) && mt_net_get64(one) >= id)
			id = mt_net_get64(one);
	}
	if (!id)
		fail(l, "it has no live session '%s' of host '%s'", name, hostname);
	return id;
}

static int attach(struct mt_live *l)
{
	static const char *const why[] = { "", "", "another viewer is attached", "unknown session",
					   "not a live session", "cannot seek", "no viewer session" };
	unsigned char msg[20], back[8], *p = msg;
	uint32_t status;

	mt_net_put64(&p, l->session);
	mt_net_put64(&p, 0);
	mt_net_put32(&p, 1);   /* from the beginning */
	if (command(l, V_ATTACH, msg, sizeof(msg), back, sizeof(back)) < 0)
		return -1;
	status = mt_net_get32(back);
	if (status != 1)
		return fail(l, "it refused to attach to the session: %s (status %u)",
			    status < 7 ? why[status] : "", status);
	if (read_streams(l, mt_net_get32(back + 4)) < 0)
		return -1;
	for (unsigned i = 0; i < l->ntraces; i++)
		if (l->traces[i].has_metadata_stream && fetch_metadata(l, &l->traces[i]) < 0)
			return -1;
	return 0;
}

struct mt_live *mt_live_open(const char *url, struct ctf_err *err)
{
	struct mt_live *l = calloc(1, sizeof(*l));
	char host[256], port[8], hostname[HOST_LEN], session[NAME_LEN];

	if (!l)
		abort();
	l->fd = -1;
	if (parse_url(url, host, sizeof(host), port, hostname, session, err) < 0)
		goto out;
	snprintf(l->where, sizeof(l->where), "relayd at %s port %s", host, port);
	l->fd = mt_net_connect(host, port, err->msg, sizeof(err->msg));
	if (l->fd < 0)
		goto out;
	if (viewer_connect(l) == 0 && (l->session = find_session(l, hostname, session)))
		attach(l);
	if (!l->error[0])
		return l;
	snprintf(err->msg, sizeof(err->msg), "%s", l->error);
out:
	mt_live_close(l);
	return NULL;
}

void mt_live_on_free(struct mt_live *l, void (*on_free)(void *ctx, struct ctf_trace *t))
{
	l->on_free = on_free;
}

void mt_live_hooks(struct mt_live *l, void (*on_trace)(void *ctx, struct ctf_trace *t),
		   void (*on_wait)(void *ctx), void *ctx)
{
	l->on_trace = on_trace;
	l->on_wait = on_wait;
	l->ctx = ctx;
	for (unsigned i = 0; i < l->ntraces && on_trace; i++)
		if (l->traces[i].t)
			on_trace(ctx, l->traces[i].t);
}

const char *mt_live_error(const struct mt_live *l)
{
	return l->error;
}

void mt_live_close(struct mt_live *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	for (unsigned i = 0; i < l->nstreams; i++) {
		ctf_stream_free(l->streams[i].cs);
		free(l->streams[i].packet);
	}
	for (unsigned i = 0; i < l->ntraces; i++)
		trace_free(l, &l->traces[i]);
	free(l->streams);
	free(l);
}
