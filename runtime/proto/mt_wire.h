/*
 * mt_wire.h - frames between marktap and the script host in a traced process.
 *
 * A frame is an 8-byte header (u32 payload length, u8 type, 3 zero bytes)
 * and the payload.  Descriptors may travel as SCM_RIGHTS with the header
 * (the agent's "attach" request); script frames carry none.
 *
 *   marktap -> process                 process -> marktap
 *   S script (manifest, chunk)         H hello "PID FORKED EXE"
 *   F full state of the globals        K script loaded; E error text
 *   P pull: send your delta            D delta of the globals (reply to P,
 *   A apply this delta                   and once more at exit or quit)
 *   Q quit: disarm, last delta, bye    X stop the session: "exit" |
 *                                        "errors" | "skipped"
 *                                      O handler output, for marktap's
 *                                        output; R an error or warning
 *                                        line (no newline), for its stderr
 *                                      B bye "ERRORS SKIPS"
 *                                      W about to exec: the D before it
 *                                        holds everything so far
 *
 * marktap passes no descriptor: a traced process may belong to another
 * user, who would keep marktap's terminal or output file open.
 *
 * The same header serves both ends: libmarktap's script host
 * (runtime/script/) and marktap's session (translator/procs.c).
 */
#ifndef MT_WIRE_H
#define MT_WIRE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#define MT_WIRE_MAX (64u << 20)   /* largest payload accepted */
#define MT_WIRE_FDS 2
/* Environment of processes started by "marktap -c": the session socket. */
#define MT_SESSION_ENV "MARKTAP_SESSION"
#define MT_SCRIPT_LIB_ENV "MARKTAP_SCRIPT_LIB"

struct mt_frame {
	uint32_t len;
	uint8_t type;
	char *data;                 /* malloc'ed, NUL-terminated after len bytes */
	int fds[MT_WIRE_FDS];       /* -1 when absent */
};

/* The abstract socket "@NAME" as an address; returns its length. */
static inline socklen_t mt_wire_address(const char *name, struct sockaddr_un *addr)
{
	size_t n = strlen(name);

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (n > sizeof(addr->sun_path) - 2)
		n = sizeof(addr->sun_path) - 2;
	memcpy(addr->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/*
 * Join the session socket "@NAME" of a "marktap -c": the connection, or
 * -1.  Anyone may bind an abstract name, e.g. after marktap has exited
 * while a descendant still carries MARKTAP_SESSION: the listener must run
 * as root or as this process's (real or effective) user, else whoever
 * bound the name would run a script of their choosing in this process.
 */
static inline int mt_wire_join(const char *name)
{
	struct sockaddr_un addr;
	socklen_t len = mt_wire_address(name, &addr), clen;
	struct ucred cred;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	clen = sizeof(cred);
	if (connect(fd, (struct sockaddr *)&addr, len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
	    (cred.uid != 0 && cred.uid != getuid() && cred.uid != geteuid())) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int mt_wire_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Send one frame, with up to MT_WIRE_FDS descriptors (nfds may be 0). */
static inline int mt_wire_send(int fd, int type, const void *data, size_t len,
			       const int *fds, int nfds)
{
	unsigned char hdr[8] = { 0 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * MT_WIRE_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { hdr, sizeof(hdr) };
	struct msghdr msg = { 0 };
	ssize_t w;

	if (len > MT_WIRE_MAX)
		return -1;
	memcpy(hdr, &(uint32_t){ (uint32_t)len }, 4);
	hdr[4] = (unsigned char)type;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		struct cmsghdr *c;
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	do
		w = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)sizeof(hdr))
		return -1;   /* a partial 8-byte header only happens on a dead peer */
	return len ? mt_wire_write_all(fd, data, len) : 0;
}

static inline int mt_wire_read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Receive one frame (blocking): 0, or -1 at end of stream or on a bad frame. */
static inline int mt_wire_recv(int fd, struct mt_frame *f)
{
	unsigned char hdr[8];
	union {
		char buf[CMSG_SPACE(sizeof(int) * MT_WIRE_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { hdr, sizeof(hdr) };
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	ssize_t r;

	f->fds[0] = f->fds[1] = -1;
	f->data = NULL;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	do
		r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (r < 0 && errno == EINTR);
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(f->fds, CMSG_DATA(c), sizeof(int) * (n < MT_WIRE_FDS ? n : MT_WIRE_FDS));
		}
	}
	if (r != (ssize_t)sizeof(hdr))
		goto bad;
	memcpy(&f->len, hdr, 4);
	f->type = hdr[4];
	if (f->len > MT_WIRE_MAX)
		goto bad;
	f->data = malloc((size_t)f->len + 1);
	if (!f->data || mt_wire_read_all(fd, f->data, f->len) < 0)
		goto bad;
	f->data[f->len] = '\0';
	return 0;
bad:
	free(f->data);
	f->data = NULL;
	for (int i = 0; i < MT_WIRE_FDS; i++)
		if (f->fds[i] >= 0)
			close(f->fds[i]);
	f->fds[0] = f->fds[1] = -1;
	return -1;
}

static inline void mt_wire_free(struct mt_frame *f)
{
	free(f->data);
	f->data = NULL;
	for (int i = 0; i < MT_WIRE_FDS; i++)
		if (f->fds[i] >= 0)
			close(f->fds[i]);
}

#endif
