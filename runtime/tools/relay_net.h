/*
 * relay_net.h - the TCP plumbing both ends of our lttng-relayd code share:
 * the producer (relay.c, marktrace record --relay) and the lttng-live
 * reader (relay_live.c, marktap --trace net://...).
 *
 * relayd is another machine's program: every read is bounded (a timeout
 * on each socket, lengths checked by the callers) and a short read or a
 * closed connection is an error, never a wait for ever.
 */
#ifndef MT_RELAY_NET_H
#define MT_RELAY_NET_H

#include <endian.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#define MT_NET_TIMEOUT_S 10     /* a relayd that stops answering is lost */
#define MT_NET_MIN_RATE 65536   /* bytes/s: a transfer of N bytes has
				   MT_NET_TIMEOUT_S + N / MT_NET_MIN_RATE s,
				   and MT_NET_TIMEOUT_S for its first byte */

/* net://HOST...: HOST (possibly [IPv6]) into host; what follows it, or
 * NULL when url is not net:// or HOST is empty or too long. */
const char *mt_net_host(const char *url, char *host, size_t hostlen);
/* A TCP connection with MT_NET_TIMEOUT_S on connect, send and receive;
 * the descriptor, or -1 with err set ("cannot connect to relayd at..."). */
int mt_net_connect(const char *host, const char *port, char *err, size_t errlen);
/*
 * Every byte of the iovecs (which are modified); 0 or -1 with errno.
 * Never longer than the deadline above, however the peer trickles its
 * window open (EAGAIN: no progress at all, ETIMEDOUT: too slow).
 */
int mt_net_send_all(int fd, struct iovec *iov, int niov);
/* Exactly len bytes, within the same deadline; 0 or -1 with errno
 * (ECONNRESET: the peer closed; EAGAIN, ETIMEDOUT as above). */
int mt_net_recv_all(int fd, void *buf, size_t len);
/*
 * A send or receive waiting on a peer gives up (EINTR) once *count >= at:
 * the caller's signal handler counts SIGINT/SIGTERM there (read a few
 * times a second, also by a thread that blocks the signals).  A relayd that
 * trickles bytes must not keep the user's ^C from working.
 */
void mt_net_stop_on(volatile sig_atomic_t *count, int at);

static inline void mt_net_put32(unsigned char **p, uint32_t v)
{
	v = htobe32(v);
	memcpy(*p, &v, 4);
	*p += 4;
}

static inline void mt_net_put64(unsigned char **p, uint64_t v)
{
	v = htobe64(v);
	memcpy(*p, &v, 8);
	*p += 8;
}

static inline uint32_t mt_net_get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline uint64_t mt_net_get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return be64toh(v);
}

#endif
