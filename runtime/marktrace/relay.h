/*
 * relay.h - send a trace to LTTng's relay daemon (lttng-relayd) as it is
 * recorded, over the daemon's network protocol (control and data TCP
 * connections), the way lttng-consumerd does.
 *
 * Lifecycle: mt_relay_connect() before anything is armed (a relayd that
 * cannot be reached stops the recording there), mt_relay_add_trace() for
 * each trace once it is open (one, or a kernel and a user trace) and
 * mt_relay_streams_sent(), then each trace's writer hands every packet and
 * every version of its metadata through its tap (mt_ctf.h), and
 * mt_relay_end() closes the streams.  A relayd lost on the way is said
 * once; what follows is counted as lost, never retried, and the traced
 * program never waits for it.  Nor does the recorder: the taps copy what
 * they get into a bounded queue that a thread of relay.c sends from
 * (started by mt_relay_streams_sent, ended by mt_relay_end); a relayd
 * slower than the recording loses packets, counted, not the -o copy.
 */
#ifndef MT_RELAY_H
#define MT_RELAY_H

#include <stddef.h>
#include "mt_ctf.h"

struct mt_relay;

/* Connect to net://HOST[:CTRL[:DATA]], agree on the protocol and create
 * the session SESSION of this host, live with a timer of live_us
 * microseconds (0: not live); NULL with err set. */
struct mt_relay *mt_relay_connect(const char *url, const char *session, unsigned live_us,
				  char *err, size_t errlen);
/* A trace of the session, in relayd's folder of the session (sub NULL)
 * or in its subfolder sub ("kernel", "ust"; at most two traces): its
 * metadata stream and one data stream per CPU.  The tap its writer calls
 * (t->tap), or NULL with err set. */
const struct mt_ctf_tap *mt_relay_add_trace(struct mt_relay *r, const char *sub, unsigned ncpu,
					    char *err, size_t errlen);
/* Every trace added: live readers may see the streams.  0 or -1. */
int mt_relay_streams_sent(struct mt_relay *r, char *err, size_t errlen);
/* Live: call every live timer period, after the packets: beacons at ts
 * (trace clock) for the streams that sent nothing since the last call. */
void mt_relay_tick(struct mt_relay *r, mt_u64 ts);
/* Wait (bounded) until relayd has every packet, close the streams.
 * 0, or -1 if the relay was lost (now or before). */
int mt_relay_end(struct mt_relay *r);
/* Events not delivered to relayd, and why ("" while none was lost). */
mt_u64 mt_relay_lost(const struct mt_relay *r);
const char *mt_relay_error(const struct mt_relay *r);
/* Where relayd puts the session, relative to its output directory. */
const char *mt_relay_path(const struct mt_relay *r);
void mt_relay_free(struct mt_relay *r);

#endif
