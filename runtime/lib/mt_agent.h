/*
 * mt_agent.h - the agent socket's address and requests (library and tools).
 */
#ifndef MT_AGENT_H
#define MT_AGENT_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/un.h>

#define MT_AGENT_ATTACH "attach"   /* + SCM_RIGHTS session memfd */
#define MT_AGENT_SCRIPT "script"   /* [plugin path]: run a probe script */

/* The abstract socket "@marktap-agent-PID"; returns the address length. */
static inline socklen_t mt_agent_address(pid_t pid, struct sockaddr_un *addr)
{
	int n;

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "marktap-agent-%d", (int)pid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/*
 * Connect to process pid's agent: the descriptor, or -1 with why in err.
 * The name "@marktap-agent-PID" is open to anyone: another user may have
 * bound it first (for a pid about to be used).  The listener's credentials
 * (SO_PEERCRED on our end: the process that called listen()) must be the
 * process itself, or the tool would hand its session memory, script and
 * output descriptors to whoever squats the name.  Replies are awaited for
 * at most timeout_s seconds: an agent that stalls does not hang the tool.
 */
static inline int mt_agent_connect(pid_t pid, int timeout_s, char *err, size_t errlen)
{
	struct sockaddr_un addr;
	socklen_t len = mt_agent_address(pid, &addr), clen;
	struct timeval tv = { timeout_s, 0 };
	struct ucred cred;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, len) < 0) {
		snprintf(err, errlen, "no libmarktap agent in process %d (%s)", (int)pid,
			 strerror(errno));
		goto fail;
	}
	clen = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.pid != pid) {
		snprintf(err, errlen, "the agent socket of process %d belongs to process %d: "
			 "refused", (int)pid, (int)cred.pid);
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

#endif
