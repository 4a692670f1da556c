/*
 * flight.c - stap's in-memory flight recorder: -F without -o, and
 * `marktap -A PID` to attach to it.
 *
 * The session (run.c's -F child) writes its output, and its stderr once
 * detached, into a pipe.  A recorder process, forked off the session
 * before its setup, keeps the last -s MB of it in a ring (1 MiB by
 * default): what stap's flight recorder keeps in the kernel's buffers.
 * It listens on the abstract unix socket @marktap-flight-PID (PID the
 * session's): `marktap -A PID` gets what the ring holds, from its oldest
 * whole line, then the output as it comes, until the session ends or
 * the user detaches (^C: the session goes on).  The recorder ends with
 * the session.
 *
 * The socket's messages (SOCK_SEQPACKET: each whole or not at all, so a
 * client that does not keep up never blocks the recorder; it is a cursor
 * into the ring, and what the ring overwrote before it took it is counted
 * and said):
 *   'O' bytes   output
 *   'L' N       N bytes of output overwritten before this client got them
 *   'E'         the session ended: nothing follows
 *   'X' text    refused (an attach by another user): the reason
 * Only the recorder's user and root may attach; the client checks that
 * the recorder is its user's or root's in turn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include "tr_run.h"

#define FLIGHT_CLIENTS 16
#define FLIGHT_PIECE (32u << 10)      /* bytes in one 'O' message */
#define FLIGHT_LAST_NS 2000000000LL   /* the end: the clients' last output, at most */

static socklen_t flight_addr(long pid, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* abstract: sun_path[0] is 0, the name follows, unterminated */
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "marktap-flight-%ld", pid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* ---- the recorder ---- */

struct client {
	int fd;
	uint64_t pos;    /* the next byte of the ring it gets */
	uint64_t lost;   /* overwritten before it got them, not said yet */
};

struct recorder {
	char *ring;
	uint64_t cap, head;   /* head: every byte ever written; the ring holds the last cap */
	struct client c[FLIGHT_CLIENTS];
	unsigned n;
	uid_t uid;
};

static void ring_add(struct recorder *r, const char *p, size_t n)
{
	if (n > r->cap) {   /* only the last cap bytes can stay */
		r->head += n - r->cap;
		p += n - r->cap;
		n = r->cap;
	}
	while (n) {
		size_t at = r->head % r->cap, k = n < r->cap - at ? n : r->cap - at;
		memcpy(r->ring + at, p, k);
		r->head += k;
		p += k;
		n -= k;
	}
}

static bool send_msg(int fd, char type, const void *p, size_t n)
{
	struct iovec iov[2] = { { &type, 1 }, { (void *)p, n } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = n ? 2 : 1 };

	return sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)(n + 1);
}

static void drop(struct recorder *r, unsigned i)
{
	close(r->c[i].fd);
	r->c[i] = r->c[--r->n];
}

/*
 * Give client i what it has not had, as far as its socket takes it now.
 * Past the ring (it came late, or fell behind): from the oldest whole
 * line the ring holds, the bytes before counted.  False: it is gone.
 */
static bool feed(struct recorder *r, unsigned i)
{
	struct client *c = &r->c[i];

	if (r->head - c->pos > r->cap) {
		uint64_t from = r->head - r->cap, p;
		for (p = from; p < r->head && r->ring[p % r->cap] != '\n'; p++)
			;
		if (p < r->head)
			from = p + 1;
		c->lost += from - c->pos;
		c->pos = from;
	}
	if (c->lost) {
		char n[24];
		int k = snprintf(n, sizeof(n), "%llu", (unsigned long long)c->lost);
		if (!send_msg(c->fd, 'L', n, (size_t)k))
			return errno == EAGAIN || errno == EWOULDBLOCK;
		c->lost = 0;
	}
	while (c->pos < r->head) {
		size_t at = c->pos % r->cap, k = r->head - c->pos;
		if (k > r->cap - at)
			k = r->cap - at;
		if (k > FLIGHT_PIECE)
			k = FLIGHT_PIECE;
		if (!send_msg(c->fd, 'O', r->ring + at, k))
			return errno == EAGAIN || errno == EWOULDBLOCK;
		c->pos += k;
	}
	return true;
}

/* A new client: the recorder's user or root, from the ring's start. */
static void welcome(struct recorder *r, int ls)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || (cr.uid != r->uid && cr.uid != 0)) {
		static const char why[] = "the session's output is its user's";
		send_msg(fd, 'X', why, sizeof(why) - 1);
		close(fd);
		return;
	}
	if (r->n == FLIGHT_CLIENTS) {
		static const char why[] = "too many attached (16)";
		send_msg(fd, 'X', why, sizeof(why) - 1);
		close(fd);
		return;
	}
	r->c[r->n++] = (struct client){ .fd = fd, .pos = 0 };
}

/* What the pipe holds now, into the ring, at most max reads of 64 KiB (a
 * session that writes without pause must not keep the clients waiting);
 * false at its end (or an error). */
static bool take_pipe(struct recorder *r, int in, unsigned max)
{
	char buf[65536];

	for (unsigned k = 0; k < max; k++) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n > 0) {
			ring_add(r, buf, (size_t)n);
			continue;
		}
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	}
	return true;
}

/* The session ended: the clients get the rest (within a bound), then 'E'. */
static void last_words(struct recorder *r)
{
	int64_t end = tr_mono_ns() + FLIGHT_LAST_NS;

	for (;;) {
		struct pollfd p[FLIGHT_CLIENTS];
		unsigned n = 0;
		for (unsigned i = 0; i < r->n;) {
			if (!feed(r, i)) {
				drop(r, i);
				continue;
			}
			if (r->c[i].pos < r->head || r->c[i].lost)
				p[n++] = (struct pollfd){ .fd = r->c[i].fd, .events = POLLOUT };
			i++;
		}
		int64_t left = end - tr_mono_ns();
		if (!n || left <= 0 || poll(p, n, (int)(left / 1000000) + 1) <= 0)
			break;
	}
	for (unsigned i = 0; i < r->n; i++) {
		send_msg(r->c[i].fd, 'E', NULL, 0);
		close(r->c[i].fd);
	}
}

static void recorder(int ls, int in, pid_t session, size_t cap)
{
	struct recorder r = { .cap = cap, .uid = getuid() };
	int pidfd = (int)syscall(SYS_pidfd_open, session, 0);

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	if (!(r.ring = malloc(cap)))
		_exit(1);
	fcntl(in, F_SETFL, O_NONBLOCK);
	for (bool going = true; going;) {
		struct pollfd p[3 + FLIGHT_CLIENTS];
		unsigned n = 0;
		p[n++] = (struct pollfd){ .fd = in, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = ls, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };   /* (-1: ignored) */
		for (unsigned i = 0; i < r.n; i++)
			p[n++] = (struct pollfd){ .fd = r.c[i].fd,
				.events = r.c[i].pos < r.head || r.c[i].lost ? POLLOUT : 0 };
		if (poll(p, n, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			going = take_pipe(&r, in, 16);
		if (p[2].revents) {   /* the session is gone: what the pipe has is the last
				       * (a command of its system() may hold the pipe: a bound) */
			for (unsigned k = 0; k < 64 && take_pipe(&r, in, 16) && poll(p, 1, 0) > 0; k++)
				;
			going = false;
		}
		/* (a client is dropped when it hangs up; pollfds past it are not used again) */
		for (unsigned i = r.n; i-- > 0;)
			if ((p[3 + i].revents & (POLLHUP | POLLERR)) || !feed(&r, i))
				drop(&r, i);
		if (p[1].revents & POLLIN) {
			welcome(&r, ls);
			if (r.n && !feed(&r, r.n - 1))
				drop(&r, r.n - 1);
		}
	}
	close(ls);
	last_words(&r);
	_exit(0);
}

/*
 * In the session, before its setup: the socket bound (so that it is
 * there once the starting marktap says so), the recorder forked.  The
 * write end of its pipe, for the output; -1 after an error, said.
 * `keep` is the one descriptor besides that the recorder must not hold
 * (the word to the starting marktap: its end says the session failed).
 */
int tr_flight_open(size_t cap, int keep)
{
	struct sockaddr_un a;
	socklen_t alen = flight_addr((long)getpid(), &a);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), p[2];
	pid_t session = getpid(), pid;

	if (ls < 0 || bind(ls, (struct sockaddr *)&a, alen) < 0 || listen(ls, 8) < 0) {
		fprintf(stderr, "ERROR: -F: cannot listen on @%s: %s\n", a.sun_path + 1, strerror(errno));
		if (ls >= 0)
			close(ls);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "ERROR: -F: cannot start the flight recorder: %s\n", strerror(errno));
		close(ls);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		close(p[1]);
		if (keep >= 0)
			close(keep);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		recorder(ls, p[0], session, cap);
	}
	close(ls);
	close(p[0]);
	return p[1];
}

/* ---- marktap -A PID ---- */

static volatile sig_atomic_t detach;

static void on_detach(int sig)
{
	(void)sig;
	detach = 1;
}

void tr_flight_hint(long pid)
{
	fprintf(stderr, "Disconnecting from marktap session %ld.\nTo reconnect, type \"marktap -A %ld\"\n",
		pid, pid);
}

int tr_flight_attach(const char *arg)
{
	struct sockaddr_un a;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char *end, *buf;
	long pid = strtol(arg, &end, 10);
	int fd;

	if (*end || end == arg || pid <= 0) {
		fprintf(stderr, "marktap: -A: expected the pid of a marktap -F session, saw '%s'\n", arg);
		return 1;
	}
	socklen_t alen = flight_addr(pid, &a);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, alen) < 0) {
		fprintf(stderr, "ERROR: -A %ld: no marktap -F session of that pid keeps its output here (%s)\n",
			pid, strerror(errno));
		return 1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || (cr.uid != geteuid() && cr.uid != 0)) {
		fprintf(stderr, "ERROR: -A %ld: @%s is not a recorder of yours or root's (uid %u)\n", pid,
			a.sun_path + 1, (unsigned)cr.uid);
		close(fd);
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_detach };   /* no SA_RESTART: recv returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	buf = malloc(FLIGHT_PIECE + 1);
	for (;;) {
		ssize_t n = buf ? recv(fd, buf, FLIGHT_PIECE + 1, 0) : -1;
		if (detach) {
			tr_flight_hint(pid);
			free(buf);
			return 0;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "ERROR: -A %ld: the recorder went away before the session's end%s%s\n", pid,
				n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			free(buf);
			return 1;
		}
		switch (buf[0]) {
		case 'O':
			if (fwrite(buf + 1, 1, (size_t)n - 1, stdout) != (size_t)n - 1 || fflush(stdout)) {
				free(buf);
				return 1;   /* our reader is gone: the session goes on */
			}
			break;
		case 'L':
			fprintf(stderr, "WARNING: -A %ld: %.*s bytes of older output were overwritten before this "
				"attach took them (the recorder keeps the last -s MB)\n", pid, (int)(n - 1), buf + 1);
			break;
		case 'E':
			free(buf);
			return 0;
		case 'X':
			fprintf(stderr, "ERROR: -A %ld: refused: %.*s\n", pid, (int)(n - 1), buf + 1);
			free(buf);
			return 1;
		}
	}
}
