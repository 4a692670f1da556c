/*
 * relay_net.c - TCP to lttng-relayd, for the producer and the live reader
 * (see relay_net.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
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

int mt_net_send_all(int fd, struct iovec *iov, int niov)
{
	while (niov > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
		ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
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
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, (char *)buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
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
