/*
 * agent_client.c - marktrace's side of the agent socket (see lib/agent.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "mt_agent.h"
#include "record.h"

static int agent_fd = -1;

int mt_agent_attach(pid_t pid, int session_fd, char *err, size_t errlen)
{
	char control[CMSG_SPACE(sizeof(int))], answer[256];
	struct iovec iov = { (void *)MT_AGENT_ATTACH "\n", sizeof(MT_AGENT_ATTACH) };
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	ssize_t n;

	if (kill(pid, 0) < 0 && errno == ESRCH) {
		snprintf(err, errlen, "no such process");
		return -1;
	}
	agent_fd = mt_agent_connect(pid, 5, err, errlen);
	if (agent_fd < 0) {
		if (strstr(err, "no libmarktap agent"))
			snprintf(err, errlen, "the process has no marktap agent (is it linked with "
				 "libmarktap, and not started with MARKTAP_AGENT=0?)");
		return -1;
	}
	memset(control, 0, sizeof(control));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &session_fd, sizeof(int));
	if (sendmsg(agent_fd, &msg, MSG_NOSIGNAL) < 0) {
		/* the agent may have said why before hanging up: read it */
		int e = errno;
		n = recv(agent_fd, answer, sizeof(answer) - 1, MSG_DONTWAIT);
		if (n <= 0) {
			snprintf(err, errlen, "sending the session: %s", strerror(e));
			return -1;
		}
	} else {
		n = recv(agent_fd, answer, sizeof(answer) - 1, 0);
	}
	if (n <= 0) {
		snprintf(err, errlen, "the agent hung up");
		return -1;
	}
	answer[n] = '\0';
	answer[strcspn(answer, "\n")] = '\0';
	if (strcmp(answer, "ok") != 0) {
		snprintf(err, errlen, "%s", strncmp(answer, "error: ", 7) ? answer : answer + 7);
		return -1;
	}
	return 0;
}

int mt_agent_gone(pid_t pid)
{
	struct pollfd p = { agent_fd, POLLIN, 0 };

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLIN | POLLERR));
}

void mt_agent_detach(pid_t pid)
{
	(void)pid;
	if (agent_fd >= 0)
		close(agent_fd);
	agent_fd = -1;
}
