/*
 * relay.c - marktrace as a producer for lttng-relayd (see relay.h).
 *
 * The protocol, as lttng-relayd 2.x speaks it (every integer big-endian,
 * every structure packed):
 *
 *   control connection (commands, metadata, indexes):
 *     header  u64 circuit_id (0) | u64 payload size | u32 command | u32 0
 *     reply   a u32 status (LTTNG_OK = 10), or a command's own structure
 *   data connection (packets, no reply):
 *     header  u64 circuit_id (0) | u64 relay stream id | u64 net seq
 *             | u32 data size | u32 padding size (zeros relayd adds)
 *
 * We speak protocol 2.8: sessions named by (session name, host name),
 * streams by (channel name, path), indexes with the stream instance and
 * packet sequence numbers live readers use.  relayd adapts to the lower
 * of the two versions, so any relayd from 2.8 on takes us.
 *
 * relayd's files are append-only: a new metadata text that only extends
 * the last one sent is sent as its tail; one that changes what was sent
 * (recording_complete at the end) resets the metadata stream first.
 *
 * The network never holds up the recorder: its taps copy each packet
 * (each metadata text, each live tick) into a queue of at most
 * QUEUE_BYTES_MAX, and a thread of ours, the sender, does every network
 * operation from there on, in the order queued.  A relayd that takes its
 * data slowly or not at all fills the queue: packets that do not fit are
 * dropped for relayd only (counted, and in the events_discarded of that
 * stream's next packet relayd gets), while the consumer goes on draining
 * the rings into the -o copy.  Metadata is never dropped (a newer text
 * waiting replaces the older: the sender sends the difference).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "relay.h"
#include "relay_net.h"

enum {
	CMD_ADD_STREAM = 1, CMD_CREATE_SESSION = 2, CMD_START_DATA = 3, CMD_VERSION = 5,
	CMD_SEND_METADATA = 6, CMD_CLOSE_STREAM = 7, CMD_DATA_PENDING = 8,
	CMD_SEND_INDEX = 13, CMD_STREAMS_SENT = 16, CMD_RESET_METADATA = 17,
};

#define PROTO_MAJOR 2
#define PROTO_MINOR 8
#define LTTNG_OK 10
#define SESSION_NAME_LEN 255    /* the 2.4 create-session layout */
#define HOST_NAME_LEN 64
#define CHANNEL_NAME_LEN 264    /* the 2.2 add-stream layout */
#define PATH_LEN 4096
#define MAX_TRACES 2            /* kernel and user (record --kernel -- CMD) */
#define QUEUE_BYTES_MAX (64u << 20)   /* packets waiting for the sender */

struct relay_stream {
	int quiet;              /* no packet since the last tick */
	mt_u64 seq_shift;       /* live: empty packets of ours before the first */
	mt_u64 handle;          /* relayd's id */
	mt_u64 next_seq;        /* net seq of the next packet */
	mt_u64 lost;            /* events of this stream not delivered */
	mt_u64 dropped;         /* events dropped before reaching the queue since
				   the last packet queued (under the queue's lock) */
};

/* One CTF trace of the session (a folder at relayd): its metadata stream,
 * one stream per CPU, and the tap its writer calls. */
struct relay_trace {
	struct mt_relay *relay;
	char path[PATH_LEN];    /* HOST/SESSION-DATE[/SUB] */
	unsigned ncpu;
	struct relay_stream metadata, *streams;
	char *meta_sent;        /* the metadata text relayd has */
	size_t meta_len;
	mt_u64 meta_version;
	struct mt_ctf_tap tap;
	char template[MT_CTF_PACKET_HEADER_SIZE];   /* a packet header seen */
	int template_ok;
};

/* What the sender does next: a copy of what a tap was handed. */
struct relay_job {
	struct relay_job *next;
	enum { JOB_PACKET, JOB_METADATA, JOB_TICK } kind;
	struct relay_trace *rt; /* NULL for a tick */
	unsigned cpu;
	mt_u64 events, ring_lost;
	mt_u64 dropped;         /* events of the stream dropped before this packet */
	mt_u64 ts;              /* a tick's */
	char *text;             /* the metadata text (replaced while it waits) */
	size_t head_len, len;   /* bytes: the packet header then its data; or
				   text's length */
	char bytes[];
};

/*
 * Between the recorder (the taps, mt_relay_tick) and the sender thread.
 * lock orders everything here; the rest of struct mt_relay is the
 * sender's alone while it runs (before it starts and after it is joined,
 * the caller's).
 */
struct relay_queue {
	pthread_mutex_t lock;
	pthread_cond_t more;    /* a job, or closing */
	struct relay_job *head, *last;
	size_t bytes;           /* of the jobs queued */
	int closing;            /* no more jobs: the sender ends when idle */
	int gone;               /* the sender lost relayd: queue nothing more */
	mt_u64 dropped;         /* events never queued (queue full, relayd gone) */
	int full;               /* a packet found the queue full */
	int stale;              /* a metadata text could not be copied */
	int started;
	pthread_t thread;
};

struct mt_relay {
	int ctrl, data;         /* -1 once lost */
	struct relay_queue q;
	char host[HOST_NAME_LEN], session[SESSION_NAME_LEN], path[PATH_LEN];
	unsigned live_us;       /* live timer (0: not a live session) */
	struct relay_trace traces[MAX_TRACES];
	unsigned ntraces;
	mt_u64 lost;
	char error[512];
	mt_u64 last_ts;         /* the latest timestamp_end sent */
	unsigned replies_due;   /* index replies not read yet (see send_index) */
	unsigned char reply_part[4];   /* a reply read in part */
	size_t reply_have;
};

/* ---- wire ---- */

#define put_be32 mt_net_put32
#define put_be64 mt_net_put64
#define get_be32 mt_net_get32
#define get_be64 mt_net_get64
static mt_u64 get_le64(const char *p) { mt_u64 v; memcpy(&v, p, 8); return le64toh(v); }
static void put_le64(char *p, mt_u64 v) { v = htole64(v); memcpy(p, &v, 8); }

/* The relay is gone: say why once, stop using it. */
static void relay_lost(struct mt_relay *r, const char *what, int e)
{
	if (!r->error[0])
		snprintf(r->error, sizeof(r->error), "%s: %s", what, strerror(e));
	if (r->ctrl >= 0)
		close(r->ctrl);
	if (r->data >= 0)
		close(r->data);
	r->ctrl = r->data = -1;
}

/*
 * Index replies are read as they come, not waited for: a packet's index
 * need not cost a round trip (over a WAN that was the limit of a host's
 * rate).  relayd answers commands in order, so before a command whose
 * reply we wait for, the replies due are read first.  Each is a status;
 * one that is not LTTNG_OK is said (relayd still has the packet).
 */
static void index_reply(struct mt_relay *r)
{
	u32 code = get_be32(r->reply_part);

	r->replies_due--;
	r->reply_have = 0;
	if (code != LTTNG_OK && !r->error[0])
		snprintf(r->error, sizeof(r->error), "relayd refused a packet index (code %u)", code);
}

/* Read the replies due: those already there (wait 0), or all of them
 * (within one deadline for them all: relay_net.h). */
static int read_replies(struct mt_relay *r, int wait)
{
	if (wait && r->replies_due && r->ctrl >= 0) {
		size_t n = 4 * (size_t)r->replies_due - r->reply_have, i;
		unsigned char *all = malloc(n + r->reply_have);
		if (!all)
			abort();
		memcpy(all, r->reply_part, r->reply_have);
		if (mt_net_recv_all(r->ctrl, all + r->reply_have, n) < 0) {
			free(all);
			relay_lost(r, "reading relayd's reply", errno);
			return -1;
		}
		for (i = 0; r->replies_due; i += 4) {
			memcpy(r->reply_part, all + i, 4);
			index_reply(r);
		}
		free(all);
	}
	while (r->replies_due && r->ctrl >= 0) {
		ssize_t n = recv(r->ctrl, r->reply_part + r->reply_have, 4 - r->reply_have,
				 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			relay_lost(r, "reading relayd's reply", n ? errno : ECONNRESET);
			return -1;
		}
		r->reply_have += (size_t)n;
		if (r->reply_have == 4)
			index_reply(r);
	}
	return r->ctrl < 0 ? -1 : 0;
}

/* One command on the control connection; its reply (reply_len bytes) if
 * reply is not NULL.  0, or -1 with the relay lost. */
static int command(struct mt_relay *r, u32 cmd, const void *payload, size_t len,
		   const void *extra, size_t extra_len, void *reply, size_t reply_len)
{
	unsigned char head[24], *p = head;
	struct iovec iov[3] = {
		{ head, sizeof(head) }, { (void *)payload, len }, { (void *)extra, extra_len }
	};

	if (r->ctrl < 0 || (reply && read_replies(r, 1) < 0))
		return -1;
	put_be64(&p, 0);
	put_be64(&p, len + extra_len);
	put_be32(&p, cmd);
	put_be32(&p, 0);
	if (mt_net_send_all(r->ctrl, iov, 3) < 0) {
		relay_lost(r, "sending to relayd", errno);
		return -1;
	}
	if (reply && mt_net_recv_all(r->ctrl, reply, reply_len) < 0) {
		relay_lost(r, "reading relayd's reply", errno);
		return -1;
	}
	return 0;
}

/* A command whose reply is a bare status. */
static int command_ok(struct mt_relay *r, u32 cmd, const void *payload, size_t len,
		      const char *what)
{
	unsigned char reply[4];
	u32 code;

	if (command(r, cmd, payload, len, NULL, 0, reply, sizeof(reply)) < 0)
		return -1;
	code = get_be32(reply);
	if (code != LTTNG_OK) {
		if (!r->error[0])
			snprintf(r->error, sizeof(r->error), "relayd refused %s (code %u)", what, code);
		relay_lost(r, what, EPROTO);
		return -1;
	}
	return 0;
}

/* ---- connecting ---- */

/* net://HOST[:CTRL[:DATA]], HOST possibly [IPv6]; 0 or -1 with err set. */
static int parse_url(const char *url, char *host, size_t hostlen, char *ctrl, char *data,
		     char *err, size_t errlen)
{
	const char *rest = mt_net_host(url, host, hostlen);

	strcpy(ctrl, "5342");
	strcpy(data, "5343");
	if (!rest || (*rest && *rest != ':')) {
		snprintf(err, errlen, "--relay '%s': expected net://HOST[:CTRL[:DATA]]", url);
		return -1;
	}
	if (*rest == ':') {
		unsigned long c, d = 0;
		char *e;
		c = strtoul(rest + 1, &e, 10);
		if (*e == ':')
			d = strtoul(e + 1, &e, 10);
		if (*e || !c || c > 65535 || d > 65535 || (e[-1] == ':')) {
			snprintf(err, errlen, "--relay '%s': ports are numbers from 1 to 65535", url);
			return -1;
		}
		snprintf(ctrl, 8, "%lu", c);
		snprintf(data, 8, "%lu", d ? d : c + 1);
	}
	return 0;
}

/* Version, then session: relayd's replies decide whether we go on. */
static int handshake(struct mt_relay *r, const char *host, const char *port,
		     char *err, size_t errlen)
{
	unsigned char msg[SESSION_NAME_LEN + HOST_NAME_LEN + 8], reply[12], *p = msg;
	u32 major, minor;

	put_be32(&p, PROTO_MAJOR);
	put_be32(&p, PROTO_MINOR);
	if (command(r, CMD_VERSION, msg, 8, NULL, 0, reply, 8) < 0) {
		snprintf(err, errlen, "%s port %s does not answer as lttng-relayd's control port "
			 "does (%s)", host, port, r->error);
		return -1;
	}
	major = get_be32(reply);
	minor = get_be32(reply + 4);
	if (major != PROTO_MAJOR) {
		snprintf(err, errlen, "%s port %s does not answer as lttng-relayd's control port "
			 "does (version %u.%u)", host, port, major, minor);
		return -1;
	}
	if (minor < PROTO_MINOR) {
		snprintf(err, errlen, "relayd at %s port %s speaks protocol %u.%u; marktrace needs "
			 "%u.%u or later", host, port, major, minor, PROTO_MAJOR, PROTO_MINOR);
		return -1;
	}
	memset(msg, 0, sizeof(msg));
	memcpy(msg, r->session, strlen(r->session));
	memcpy(msg + SESSION_NAME_LEN, r->host, strlen(r->host));
	/* the live timer (0: not live), then snapshot 0 */
	p = msg + SESSION_NAME_LEN + HOST_NAME_LEN;
	put_be32(&p, r->live_us);
	if (command(r, CMD_CREATE_SESSION, msg, sizeof(msg), NULL, 0, reply, 12) < 0)
		goto lost;
	if (get_be32(reply + 8) != LTTNG_OK) {
		snprintf(err, errlen, "relayd refused the session '%s' of host '%s' (code %u)",
			 r->session, r->host, get_be32(reply + 8));
		return -1;
	}
	if (command_ok(r, CMD_START_DATA, NULL, 0, "start data") < 0)
		goto lost;
	return 0;
lost:
	snprintf(err, errlen, "relayd at %s port %s: %s", host, port, r->error);
	return -1;
}

static void tap_packet(void *ctx, unsigned cpu, const char *head, size_t head_len,
		       const char *data, size_t data_len, mt_u64 events, mt_u64 ring_lost);
static void tap_metadata(void *ctx, const char *text, size_t len);
static void queue_init(struct mt_relay *r);
static int start_sender(struct mt_relay *r);

struct mt_relay *mt_relay_connect(const char *url, const char *session, unsigned live_us,
				  char *err, size_t errlen)
{
	struct mt_relay *r = calloc(1, sizeof(*r));
	char host[256], ctrl[8], data[8], date[32];
	time_t now;
	struct tm tm;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->ctrl = r->data = -1;
	r->live_us = live_us;
	queue_init(r);
	if (gethostname(r->host, sizeof(r->host) - 1) < 0 || !r->host[0])
		strcpy(r->host, "unknown");
	/* names relayd makes directories of: no way up or out */
	snprintf(r->session, sizeof(r->session), "%s", session);
	if (!r->session[0] || strchr(r->session, '/') || !strcmp(r->session, ".") ||
	    !strcmp(r->session, "..") || strchr(r->host, '/')) {
		snprintf(err, errlen, "relay session name '%s' (host '%s'): not a name relayd "
			 "can store", session, r->host);
		goto fail;
	}
	/* HOST/SESSION-YYYYMMDD-HHMMSS, as LTTng names its sessions' traces:
	 * recording the same session again does not overwrite the last */
	now = time(NULL);
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
	snprintf(r->path, sizeof(r->path), "%s/%s-%s", r->host, r->session, date);
	if (parse_url(url, host, sizeof(host), ctrl, data, err, errlen) < 0)
		goto fail;
	r->ctrl = mt_net_connect(host, ctrl, err, errlen);
	if (r->ctrl < 0)
		goto fail;
	if (handshake(r, host, ctrl, err, errlen) < 0)
		goto fail;
	r->data = mt_net_connect(host, data, err, errlen);
	if (r->data < 0)
		goto fail;
	return r;
fail:
	mt_relay_free(r);
	return NULL;
}

static int add_stream(struct relay_trace *rt, const char *channel, struct relay_stream *st)
{
	struct mt_relay *r = rt->relay;
	unsigned char msg[CHANNEL_NAME_LEN + PATH_LEN + 16];
	unsigned char reply[12];

	memset(msg, 0, sizeof(msg));
	memcpy(msg, channel, strlen(channel));
	memcpy(msg + CHANNEL_NAME_LEN, rt->path, strlen(rt->path));
	/* tracefile size and count 0: one file per stream, never rotated */
	if (command(r, CMD_ADD_STREAM, msg, sizeof(msg), NULL, 0, reply, sizeof(reply)) < 0)
		return -1;
	if (get_be32(reply + 8) != LTTNG_OK) {
		snprintf(r->error, sizeof(r->error), "relayd refused the stream %s/%s (code %u)",
			 rt->path, channel, get_be32(reply + 8));
		relay_lost(r, "add stream", EPROTO);
		return -1;
	}
	st->handle = get_be64(reply);
	return 0;
}

const struct mt_ctf_tap *mt_relay_add_trace(struct mt_relay *r, const char *sub, unsigned ncpu,
					    char *err, size_t errlen)
{
	struct relay_trace *rt = &r->traces[r->ntraces];
	unsigned cpu;

	if (r->ntraces == MAX_TRACES || (sub && (strchr(sub, '/') || !strcmp(sub, "..") ||
						 strlen(r->path) + strlen(sub) + 2 > sizeof(rt->path)))) {
		snprintf(err, errlen, "relayd: no room for the trace '%s'", sub ? sub : "");
		return NULL;
	}
	rt->streams = calloc(ncpu ? ncpu : 1, sizeof(*rt->streams));
	if (!rt->streams) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->ntraces++;
	rt->relay = r;
	rt->ncpu = ncpu;
	strcpy(rt->path, r->path);
	if (sub)
		strcat(strcat(rt->path, "/"), sub);
	rt->tap.ctx = rt;
	rt->tap.packet = tap_packet;
	rt->tap.metadata = tap_metadata;
	/* a live session's metadata cannot be reset: it never says what
	 * would change at the end */
	rt->tap.append_only = r->live_us != 0;
	if (add_stream(rt, "metadata", &rt->metadata) < 0)
		goto lost;
	for (cpu = 0; cpu < ncpu; cpu++) {
		char name[32];
		snprintf(name, sizeof(name), "channel0_%u", cpu);
		if (add_stream(rt, name, &rt->streams[cpu]) < 0)
			goto lost;
	}
	return &rt->tap;
lost:
	snprintf(err, errlen, "relayd: %s", r->error);
	return NULL;
}

int mt_relay_streams_sent(struct mt_relay *r, char *err, size_t errlen)
{
	/* the streams are complete: live readers may see them */
	if (command_ok(r, CMD_STREAMS_SENT, NULL, 0, "streams sent") < 0) {
		snprintf(err, errlen, "relayd: %s", r->error);
		return -1;
	}
	if (start_sender(r) < 0) {
		snprintf(err, errlen, "relayd: cannot start the thread that sends to it");
		return -1;
	}
	return 0;
}

/* ---- the tap ---- */

/* The index of the packet st->next_seq, from its header as sent.  The
 * packet went out: if its index does not, relayd still has the data (a
 * reader without indexes finds it). */
/* An index (or a beacon), its reply read later (read_replies); a few
 * thousand at most wait, so relayd never blocks on replies we do not read. */
static void index_command(struct mt_relay *r, const unsigned char *idx)
{
	if (command(r, CMD_SEND_INDEX, idx, 80, NULL, 0, NULL, 0) < 0)
		return;
	r->replies_due++;
	read_replies(r, r->replies_due > 4096);
}

static void send_index(struct mt_relay *r, struct relay_stream *st, unsigned cpu,
		       const char *head)
{
	unsigned char idx[80], *p = idx;

	put_be64(&p, st->handle);
	put_be64(&p, st->next_seq);
	put_be64(&p, get_le64(head + 56));        /* packet_size, bits */
	put_be64(&p, get_le64(head + 48));        /* content_size */
	put_be64(&p, get_le64(head + 32));        /* timestamp_begin */
	put_be64(&p, get_le64(head + 40));        /* timestamp_end */
	put_be64(&p, get_le64(head + 72));        /* events_discarded */
	put_be64(&p, 0);                          /* CTF stream class id */
	put_be64(&p, cpu);                        /* stream_instance_id */
	put_be64(&p, get_le64(head + 64));        /* packet_seq_num */
	index_command(r, idx);
}

/* The packet (our header, then the events) on the data connection, then
 * its index on the control connection: relayd pairs them by net seq. */
static void send_packet(struct relay_trace *rt, unsigned cpu, const char *head, size_t head_len,
			const char *data, size_t data_len, mt_u64 events, mt_u64 ring_lost)
{
	struct mt_relay *r = rt->relay;
	struct relay_stream *st;
	unsigned char dh[32], *p = dh;
	char myhead[MT_CTF_PACKET_HEADER_SIZE];
	struct iovec iov[3];
	mt_u64 bytes = head_len + data_len, discarded;

	if (cpu >= rt->ncpu || head_len != sizeof(myhead))
		return;
	st = &rt->streams[cpu];
	if (r->data < 0 || bytes > 0xffffffffu) {
		st->lost += events;
		r->lost += events;
		return;
	}
	st->quiet = 0;
	/* events_discarded (at 72): the rings' losses and ours, not the
	 * local files' (a disk full here loses nothing on the relay) */
	memcpy(myhead, head, sizeof(myhead));
	discarded = htole64(ring_lost + st->lost);
	memcpy(myhead + 72, &discarded, 8);
	if (!rt->template_ok) {   /* for the empty packets of mt_relay_tick */
		memcpy(rt->template, myhead, sizeof(myhead));
		rt->template_ok = 1;
	}
	if (st->seq_shift)
		put_le64(myhead + 64, get_le64(myhead + 64) + st->seq_shift);
	if (get_le64(myhead + 40) > r->last_ts)
		r->last_ts = get_le64(myhead + 40);
	put_be64(&p, 0);
	put_be64(&p, st->handle);
	put_be64(&p, st->next_seq);
	put_be32(&p, (u32)bytes);
	put_be32(&p, 0);
	iov[0] = (struct iovec){ dh, sizeof(dh) };
	iov[1] = (struct iovec){ myhead, sizeof(myhead) };
	iov[2] = (struct iovec){ (void *)data, data_len };
	if (mt_net_send_all(r->data, iov, 3) < 0) {
		relay_lost(r, "sending a packet to relayd", errno);
		st->lost += events;
		r->lost += events;
		return;
	}
	send_index(r, st, cpu, myhead);
	st->next_seq++;
}

/* A piece of metadata text.  Live readers (babeltrace2 2.0) take each
 * piece relayd hands them as a metadata text of its own, which must begin
 * with the CTF signature: a tail gets one, a comment for other readers. */
static int send_metadata(struct relay_trace *rt, const char *text, size_t len, int tail)
{
	static const char sig[] = "/* CTF 1.8 */\n";
	unsigned char head[12 + sizeof(sig) - 1], *p = head;

	put_be64(&p, rt->metadata.handle);
	put_be32(&p, 0);
	memcpy(p, sig, sizeof(sig) - 1);
	/* no reply: relayd answers metadata with nothing */
	return command(rt->relay, CMD_SEND_METADATA, head, tail ? sizeof(head) : 12, text, len, NULL, 0);
}

static void send_metadata_text(struct relay_trace *rt, const char *text, size_t len)
{
	struct mt_relay *r = rt->relay;
	char *copy;

	if (r->ctrl < 0 || (len == rt->meta_len && !memcmp(text, rt->meta_sent, len)))
		return;
	if (len >= rt->meta_len && (!rt->meta_len || !memcmp(text, rt->meta_sent, rt->meta_len))) {
		if (send_metadata(rt, text + rt->meta_len, len - rt->meta_len, rt->meta_len != 0) < 0)
			return;
	} else {
		unsigned char msg[16], *p = msg;
		put_be64(&p, rt->metadata.handle);
		put_be64(&p, ++rt->meta_version);
		if (command_ok(r, CMD_RESET_METADATA, msg, sizeof(msg), "a metadata reset") < 0 ||
		    send_metadata(rt, text, len, 0) < 0)
			return;
	}
	copy = realloc(rt->meta_sent, len ? len : 1);
	if (!copy) {
		relay_lost(r, "keeping the metadata sent", ENOMEM);
		return;
	}
	memcpy(copy, text, len);
	rt->meta_sent = copy;
	rt->meta_len = len;
}

/* An index of no packet: no events of this stream before ts. */
static void send_beacon(struct mt_relay *r, struct relay_stream *st, mt_u64 ts)
{
	unsigned char idx[80], *p = idx;

	memset(idx, 0, sizeof(idx));
	put_be64(&p, st->handle);
	put_be64(&p, st->next_seq);
	p = idx + 40;   /* sizes and timestamp_begin 0 */
	put_be64(&p, ts);
	index_command(r, idx);
}

/*
 * Live: a stream with no packet since the last tick gets a beacon, so
 * that readers go on with the other streams instead of waiting on it.
 * relayd takes beacons only on a stream that has had a packet: one that
 * never had one gets an empty packet first (from a header seen on another
 * stream; its later packets' packet_seq_num are shifted by one, in
 * relayd's copy only).
 */
static void tick_trace(struct relay_trace *rt, mt_u64 ts)
{
	struct mt_relay *r = rt->relay;
	unsigned cpu;

	for (cpu = 0; cpu < rt->ncpu && r->ctrl >= 0; cpu++) {
		struct relay_stream *st = &rt->streams[cpu];
		if (st->quiet && st->next_seq) {
			send_beacon(r, st, ts);
		} else if (st->quiet && rt->template_ok && !st->seq_shift) {
			char head[MT_CTF_PACKET_HEADER_SIZE];
			memcpy(head, rt->template, sizeof(head));
			put_le64(head + 24, cpu);               /* stream_instance_id */
			put_le64(head + 32, ts);                /* timestamp_begin */
			put_le64(head + 40, ts);                /* timestamp_end */
			put_le64(head + 48, sizeof(head) * 8);  /* content_size */
			put_le64(head + 56, sizeof(head) * 8);  /* packet_size */
			put_le64(head + 64, 0);                 /* packet_seq_num */
			put_le64(head + 72, st->lost);          /* events_discarded */
			memcpy(head + 80, &(u32){ htole32(cpu) }, 4);
			send_packet(rt, cpu, head, sizeof(head), NULL, 0, 0, 0);
			st->seq_shift = 1;   /* after tap_packet: this one is seq 0 */
		}
		st->quiet = 1;
	}
}

static void send_tick(struct mt_relay *r, mt_u64 ts)
{
	unsigned i;

	for (i = 0; i < r->ntraces && r->live_us; i++)
		tick_trace(&r->traces[i], ts);
}

/* ---- the queue and the sender ---- */

static void queue_init(struct mt_relay *r)
{
	pthread_mutex_init(&r->q.lock, NULL);
	pthread_cond_init(&r->q.more, NULL);
}

static void run_job(struct mt_relay *r, struct relay_job *j)
{
	switch (j->kind) {
	case JOB_PACKET:
		/* in events_discarded from this packet on */
		j->rt->streams[j->cpu].lost += j->dropped;
		send_packet(j->rt, j->cpu, j->bytes, j->head_len, j->bytes + j->head_len,
			    j->len - j->head_len, j->events, j->ring_lost);
		break;
	case JOB_METADATA:
		send_metadata_text(j->rt, j->text, j->len);
		break;
	case JOB_TICK:
		send_tick(r, j->ts);
		break;
	}
}

/* The next job, waited for; NULL once closing and nothing is left.
 * Tells the recorder when relayd is gone (it then queues nothing more). */
static struct relay_job *take(struct mt_relay *r)
{
	struct relay_job *j;

	pthread_mutex_lock(&r->q.lock);
	if (r->ctrl < 0)
		r->q.gone = 1;
	while (!r->q.head && !r->q.closing)
		pthread_cond_wait(&r->q.more, &r->q.lock);
	j = r->q.head;
	if (j) {
		r->q.head = j->next;
		if (!r->q.head)
			r->q.last = NULL;
		r->q.bytes -= j->len;
	}
	pthread_mutex_unlock(&r->q.lock);
	return j;
}

static void *sender(void *arg)
{
	struct mt_relay *r = arg;
	struct relay_job *j;

	while ((j = take(r)) != NULL) {
		run_job(r, j);
		free(j->text);
		free(j);
	}
	return NULL;
}

/* The sender runs from here on.  It takes no signal: they stay the
 * recorder's (its sleeps end on SIGCHLD; a second ^C is seen by the
 * sender's waits through mt_net_stop_on's count). */
static int start_sender(struct mt_relay *r)
{
	sigset_t all, old;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&r->q.thread, NULL, sender, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		return -e;
	r->q.started = 1;
	return 0;
}

/* Every job queued is done (or counted lost); the sender ended.  After
 * this, the caller owns the whole of r again. */
static void stop_sender(struct mt_relay *r)
{
	pthread_mutex_lock(&r->q.lock);
	r->q.closing = 1;
	pthread_cond_signal(&r->q.more);
	pthread_mutex_unlock(&r->q.lock);
	if (r->q.started)
		pthread_join(r->q.thread, NULL);
	else
		sender(r);      /* never started: what was queued, here */
	r->q.started = 0;
}

/* j at the queue's end; the lock is held. */
static void put(struct mt_relay *r, struct relay_job *j)
{
	j->next = NULL;
	if (r->q.last)
		r->q.last->next = j;
	else
		r->q.head = j;
	r->q.last = j;
	r->q.bytes += j->len;
	pthread_cond_signal(&r->q.more);
}

static struct relay_job *new_job(int kind, struct relay_trace *rt, size_t len)
{
	struct relay_job *j = malloc(sizeof(*j) + len);

	if (j) {
		memset(j, 0, sizeof(*j));
		j->kind = kind;
		j->rt = rt;
		j->len = len;
	}
	return j;
}

/* The recorder's tap: a copy of the packet for the sender, unless the
 * queue is full or relayd gone (then the events are dropped for relayd,
 * counted, and said in the stream's next packet it gets). */
static void tap_packet(void *ctx, unsigned cpu, const char *head, size_t head_len,
		       const char *data, size_t data_len, mt_u64 events, mt_u64 ring_lost)
{
	struct relay_trace *rt = ctx;
	struct mt_relay *r = rt->relay;
	size_t len = head_len + data_len;
	struct relay_job *j = NULL;
	int full;

	if (cpu >= rt->ncpu)
		return;
	pthread_mutex_lock(&r->q.lock);
	full = r->q.gone || r->q.bytes + len > QUEUE_BYTES_MAX;
	pthread_mutex_unlock(&r->q.lock);
	/* the copy outside the lock: the sender is not held up by it (only
	 * we add to the queue, so it has no less room when we are back) */
	if (!full && (j = new_job(JOB_PACKET, rt, len))) {
		memcpy(j->bytes, head, head_len);
		if (data_len)
			memcpy(j->bytes + head_len, data, data_len);
		j->cpu = cpu;
		j->head_len = head_len;
		j->events = events;
		j->ring_lost = ring_lost;
	}
	pthread_mutex_lock(&r->q.lock);
	if (j) {
		j->dropped = rt->streams[cpu].dropped;
		rt->streams[cpu].dropped = 0;
		put(r, j);
	} else {
		rt->streams[cpu].dropped += events;
		r->q.dropped += events;
		r->q.full |= !r->q.gone;
	}
	pthread_mutex_unlock(&r->q.lock);
}

/* The recorder's tap: the text for the sender, never dropped; one still
 * waiting at the queue's end is replaced. */
static void tap_metadata(void *ctx, const char *text, size_t len)
{
	struct relay_trace *rt = ctx;
	struct mt_relay *r = rt->relay;
	struct relay_job *j = new_job(JOB_METADATA, rt, 0);
	char *copy = malloc(len ? len : 1);

	if (!j || !copy) {
		free(j);
		free(copy);
		pthread_mutex_lock(&r->q.lock);
		r->q.stale = 1;
		pthread_mutex_unlock(&r->q.lock);
		return;
	}
	memcpy(copy, text, len);
	pthread_mutex_lock(&r->q.lock);
	if (r->q.last && r->q.last->kind == JOB_METADATA && r->q.last->rt == rt) {
		struct relay_job *last = r->q.last;
		r->q.bytes = r->q.bytes - last->len + len;
		free(last->text);
		last->text = copy;
		last->len = len;
		copy = NULL;
	} else {
		j->text = copy;
		j->len = len;
		put(r, j);
		j = NULL;
	}
	pthread_mutex_unlock(&r->q.lock);
	free(j);
}

void mt_relay_tick(struct mt_relay *r, mt_u64 ts)
{
	struct relay_job *j;

	if (!r->live_us || !(j = new_job(JOB_TICK, NULL, 0)))
		return;
	j->ts = ts;
	pthread_mutex_lock(&r->q.lock);
	put(r, j);
	pthread_mutex_unlock(&r->q.lock);
}

/* ---- the end ---- */

/* relayd writes a stream's packets as they come; before we close, ask
 * until it has the last (a second at most: then closing loses nothing
 * either, relayd keeps a stream open until its last packet is in). */
static void wait_written(struct mt_relay *r, struct relay_stream *st)
{
	unsigned char msg[16], *p = msg, reply[4];
	struct timespec pause = { 0, 5 * 1000 * 1000 };
	int tries;

	if (!st->next_seq)
		return;
	put_be64(&p, st->handle);
	put_be64(&p, st->next_seq - 1);
	for (tries = 0; tries < 200; tries++) {
		if (command(r, CMD_DATA_PENDING, msg, sizeof(msg), NULL, 0, reply, 4) < 0 ||
		    get_be32(reply) == 0)
			return;
		nanosleep(&pause, NULL);
	}
}

static void close_stream(struct mt_relay *r, struct relay_stream *st)
{
	unsigned char msg[16], *p = msg;

	put_be64(&p, st->handle);
	put_be64(&p, st->next_seq - 1);   /* the last packet's seq (-1: none) */
	command_ok(r, CMD_CLOSE_STREAM, msg, sizeof(msg), "closing a stream");
}

static void close_trace(struct relay_trace *rt)
{
	struct mt_relay *r = rt->relay;
	unsigned cpu;

	for (cpu = 0; cpu < rt->ncpu && r->ctrl >= 0; cpu++)
		wait_written(r, &rt->streams[cpu]);
	for (cpu = 0; cpu < rt->ncpu && r->ctrl >= 0; cpu++)
		close_stream(r, &rt->streams[cpu]);
	if (r->ctrl >= 0)
		close_stream(r, &rt->metadata);
}

int mt_relay_end(struct mt_relay *r)
{
	unsigned i, cpu;

	/* what was queued goes first (or is counted lost) */
	stop_sender(r);
	r->lost += r->q.dropped;
	r->q.dropped = 0;
	if (r->q.full && !r->error[0])
		snprintf(r->error, sizeof(r->error), "relayd took the data slower than it came: "
			 "packets that found the %u MiB queue for it full were dropped",
			 QUEUE_BYTES_MAX >> 20);
	if (r->q.stale && !r->error[0])
		snprintf(r->error, sizeof(r->error), "out of memory: relayd's metadata is not the last");
	/* live: the other streams are past the last packet, so that readers
	 * show its events before they see the streams close */
	if (r->live_us && r->last_ts) {
		struct timespec pause = { 0, 0 };
		for (i = 0; i < r->ntraces; i++)
			for (cpu = 0; cpu < r->traces[i].ncpu; cpu++)
				r->traces[i].streams[cpu].quiet = 1;
		send_tick(r, r->last_ts);
		pause.tv_sec = r->live_us * 2 / 1000000;
		pause.tv_nsec = (long)(r->live_us * 2 % 1000000) * 1000;
		nanosleep(&pause, NULL);
	}
	for (i = 0; i < r->ntraces; i++)
		close_trace(&r->traces[i]);
	read_replies(r, 1);
	if (r->error[0] || r->lost)
		return -1;
	return 0;
}

mt_u64 mt_relay_lost(const struct mt_relay *r)
{
	return r->lost + r->q.dropped;
}

const char *mt_relay_error(const struct mt_relay *r)
{
	return r->error;
}

const char *mt_relay_path(const struct mt_relay *r)
{
	return r->path;
}

void mt_relay_free(struct mt_relay *r)
{
	struct relay_job *j;

	if (!r)
		return;
	if (r->q.started)
		stop_sender(r);         /* what it has is sent or counted */
	if (r->ctrl >= 0)
		close(r->ctrl);
	if (r->data >= 0)
		close(r->data);
	while ((j = r->q.head) != NULL) {   /* never started: never sent */
		r->q.head = j->next;
		free(j->text);
		free(j);
	}
	for (unsigned i = 0; i < r->ntraces; i++) {
		free(r->traces[i].streams);
		free(r->traces[i].meta_sent);
	}
	pthread_cond_destroy(&r->q.more);
	pthread_mutex_destroy(&r->q.lock);
	free(r);
}
