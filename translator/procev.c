/*
 * procev.c - processes that start, change program and end anywhere on the
 * machine, from the kernel's process connector (netlink, CN_IDX_PROC;
 * root only), for process.begin and process.end without -c or -x.
 *
 * The kernel sends an event per fork, exec and exit after the fact: a
 * process's end arrives when it is gone from /proc, so the caller keeps
 * what it wants to say about it (run.c).  Events come in order; when the
 * socket's buffer overflows, the kernel drops them and recv says ENOBUFS,
 * which is reported as lost events, never hidden.
 */
#define _GNU_SOURCE
#include "tr_run.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Ask the connector to start (or stop) sending process events. */
static int subscribe(int fd, enum proc_cn_mcast_op op)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(op))] __attribute__((aligned(8))) = {0};
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct cn_msg *cm = NLMSG_DATA(nh);

	nh->nlmsg_len = sizeof(buf);
	nh->nlmsg_type = NLMSG_DONE;
	cm->id.idx = CN_IDX_PROC;
	cm->id.val = CN_VAL_PROC;
	cm->len = sizeof(op);
	memcpy(cm->data, &op, sizeof(op));
	return send(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf) ? 0 : -1;
}

int tr_procev_open(char *why, size_t n)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || subscribe(fd, PROC_CN_MCAST_LISTEN) < 0) {
		snprintf(why, n, "the kernel's process connector: %s%s", strerror(errno),
			 errno == EPERM || errno == EACCES ? " (it needs root)" : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Up to max events now queued: their number, or -1 when events were lost
 * (the buffer overflowed; those still queued come with the next call). */
int tr_procev_read(int fd, struct tr_procev *ev, int max)
{
	int got = 0;

	while (got < max) {
		char buf[4096] __attribute__((aligned(8)));
		struct sockaddr_nl from;
		socklen_t fromlen = sizeof(from);
		int len = (int)recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fromlen);
		if (len < 0)
			return errno == ENOBUFS ? -1 : got;
		/* only the kernel's (port 0): another process could send
		 * this socket messages of the same shape */
		if (fromlen != sizeof(from) || from.nl_family != AF_NETLINK || from.nl_pid != 0)
			continue;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len) && got < max;
		     nh = NLMSG_NEXT(nh, len)) {
			struct cn_msg *cm = NLMSG_DATA(nh);
			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*cm)) || cm->id.idx != CN_IDX_PROC ||
			    cm->len < sizeof(struct proc_event) ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*cm) + sizeof(struct proc_event)))
				continue;
			const struct proc_event *pe = (const struct proc_event *)cm->data;
			struct tr_procev *e = &ev[got];
			switch (pe->what) {
			case PROC_EVENT_FORK:
				*e = (struct tr_procev){ 'b', pe->event_data.fork.child_pid,
							 pe->event_data.fork.child_tgid,
							 pe->event_data.fork.parent_tgid };
				break;
			case PROC_EVENT_EXEC:
				*e = (struct tr_procev){ 'x', pe->event_data.exec.process_pid,
							 pe->event_data.exec.process_tgid, 0 };
				break;
			case PROC_EVENT_EXIT:
				*e = (struct tr_procev){ 'e', pe->event_data.exit.process_pid,
							 pe->event_data.exit.process_tgid, 0 };
				break;
			default:
				continue;
			}
			got++;
		}
	}
	return got;
}

void tr_procev_close(int fd)
{
	if (fd >= 0) {
		subscribe(fd, PROC_CN_MCAST_IGNORE);
		close(fd);
	}
}
