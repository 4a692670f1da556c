/*
 * relay_live.h - follow a live session of lttng-relayd as it is recorded
 * (the lttng-live viewer protocol babeltrace2 speaks), for marktap --trace
 * net://HOST[:PORT]/host/HOSTNAME/SESSION.
 *
 * The session's events come out in time order over all its streams, as
 * ctf_merge_* gives them for a stored trace: an event is handed out only
 * when every other stream is known to have nothing older (a packet of its
 * own, or relayd's beacon of a quiet stream).  Until then the reader asks
 * relayd again every 100 ms.  The session ends when relayd says every
 * stream closed (the recorder ended), or when *stop turns non-zero.
 *
 * What relayd sends is untrusted: every count and length is bounded, a
 * short read or a silent peer (10 s) ends the session with an error.
 */
#ifndef MT_RELAY_LIVE_H
#define MT_RELAY_LIVE_H

#include <signal.h>
#include "ctf_read.h"

struct mt_live;

/* Connect, find the newest session SESSION of HOSTNAME, attach to it from
 * its beginning and read its metadata; NULL with err set. */
struct mt_live *mt_live_open(const char *url, struct ctf_err *err);
/* Called with each trace of the session each time its metadata is parsed
 * (new event classes), before any event decoded with it; and before each
 * wait for relayd. */
void mt_live_hooks(struct mt_live *l, void (*on_trace)(void *ctx, struct ctf_trace *t),
		   void (*on_wait)(void *ctx), void *ctx);
/* The next item (the stream's item, as ctf_stream_next leaves it); the
 * stream returned before is stepped first.  NULL at the end of the session
 * or when *stop is set; mt_live_error() then says if it failed. */
struct ctf_stream *mt_live_next(struct mt_live *l, volatile sig_atomic_t *stop);
const char *mt_live_error(const struct mt_live *l);   /* "" if none */
/* Called before a version of a trace's metadata is freed (no packet
 * points into it any more): what the caller bound to its classes goes. */
void mt_live_on_free(struct mt_live *l, void (*on_free)(void *ctx, struct ctf_trace *t));
void mt_live_close(struct mt_live *l);

/* Is this --trace argument a live session's URL? */
int mt_live_url(const char *arg);

#endif
