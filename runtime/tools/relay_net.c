/*
 * relay_net.c - TCP to lttng-relayd, for the producer and the live reader
 * (see relay_net.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "relay_net.h"

const char *mt_net_host(const char *url, char *host, size_t hostlen)
{
	const char *h, *end, *rest;
	size_t n;

	if (strncmp(url, "net://", 6))
		return NULL;
	h = url + 6;
	if (*h == '[') {
		end = strchr(++h, ']');
		rest = end ? end + 1 : NULL;
	} else {
		end = h + strcspn(h, ":/");
		rest = end;
	}
	n = end ? (size_t)(end - h) : 0;
	if (!end || !n || n >= hostlen)
		return NULL;
	memcpy(host, h, n);
	host[n] = '\0';
	return rest;
}

/* See mt_net_stop_on(): the caller's signal count and when it means stop. */
static volatile sig_atomic_t *stop_count;
static sig_atomic_t stop_at;

void mt_net_stop_on(volatile sig_atomic_t *count, int at)
{
	stop_count = count;
	stop_at = (sig_atomic_t)at;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Wait until fd is ready for events, at most until the deadline, and
 * without progress (no byte of the transfer yet) at most
 * MT_NET_TIMEOUT_S from start: a peer that takes nothing is given up as
 * soon, however large the transfer.  0, or -1 with errno: EINTR when a
 * signal said stop, else progress ? ETIMEDOUT (bytes came, too slowly)
 * : EAGAIN (nothing came).  The wait is cut in slices: relay.c's sender
 * thread takes no signal, and sees the count of them only here.
 */
static int wait_ready(int fd, short events, double start, double deadline, int progress)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	if (!progress && start + MT_NET_TIMEOUT_S < deadline)
		deadline = start + MT_NET_TIMEOUT_S;
	for (;;) {
		double left = deadline - now_s();
		int n;
		/* another thread's signal handler writes the count: a word
		 * read again each slice, a stale value costs one slice */
		if (stop_count && *stop_count >= stop_at) {
			errno = EINTR;
			return -1;
		}
		if (left <= 0) {
			errno = progress ? ETIMEDOUT : EAGAIN;
			return -1;
		}
		n = poll(&pfd, 1, left > 0.25 ? 250 : (int)(left * 1000) + 1);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/* The time a transfer of len bytes may take, from now. */
static double deadline_for(size_t len)
{
	return now_s() + MT_NET_TIMEOUT_S + (double)len / MT_NET_MIN_RATE;
}

int mt_net_send_all(int fd, struct iovec *iov, int niov)
{
	size_t total = 0, sent = 0;
	double start, deadline;
	int i;

	for (i = 0; i < niov; i++)
		total += iov[i].iov_len;
	start = now_s();
	deadline = deadline_for(total);
	while (niov > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
		ssize_t n;
		if (wait_ready(fd, POLLOUT, start, deadline, sent > 0) < 0)
			return -1;
		n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n < 0)
			return -1;
		sent += (size_t)n;
		while (niov > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			niov--;
		}
		if (niov > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

int mt_net_recv_all(int fd, void *buf, size_t len)
{
	double start = now_s(), deadline = deadline_for(len);
	size_t got = 0;

	while (got < len) {
		ssize_t n;
		if (wait_ready(fd, POLLIN, start, deadline, got > 0) < 0)
			return -1;
		n = recv(fd, (char *)buf + got, len - got, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;   /* the peer closed the connection */
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

/* One address: connected within the timeout, or errno's reason in *e. */
static int try_connect(const struct addrinfo *a, int *e)
{
	struct pollfd pfd;
	socklen_t len = sizeof(*e);
	int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	*e = 0;
	if (fd < 0) {
		*e = errno;
		return -1;
	}
	if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
		*e = errno;
	} else {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, MT_NET_TIMEOUT_S * 1000) <= 0)
			*e = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, e, &len) < 0)
			*e = errno;
	}
	if (*e) {
		close(fd);
		return -1;
	}
	return fd;
}

int mt_net_connect(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	struct timeval tv = { MT_NET_TIMEOUT_S, 0 };
	int rc = getaddrinfo(host, port, &hints, &ai), fd = -1, e = 0;

	if (rc) {
		snprintf(err, errlen, "relayd at %s: %s", host, gai_strerror(rc));
		return -1;
	}
	for (a = ai; a && fd < 0; a = a->ai_next)
		fd = try_connect(a, &e);
	freeaddrinfo(ai);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to relayd at %s port %s: %s", host, port,
			 strerror(e ? e : ECONNREFUSED));
		return -1;
	}
	/* blocking from here on, but never for ever */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}
