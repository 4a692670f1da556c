/*
 * mt_agent.h - the agent socket's address and requests (library and tools).
 */
#ifndef MT_AGENT_H
#define MT_AGENT_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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

#endif
