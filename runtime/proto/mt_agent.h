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
#include <stdint.h>
#include <sys/time.h>
#include <sys/uio.h>
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
 * Who may use the agent: whom the kernel lets ptrace the process
 * (PTRACE_MODE_ATTACH_REALCREDS: the caller's real uid and gid equal the
 * process's real, effective and saved ones and the process is dumpable,
 * or the caller has CAP_SYS_PTRACE in its user namespace; plus what Yama
 * and other LSMs add).  SO_PEERCRED tells the agent only the client's
 * pid, effective uid and gid as they were at connect(), and rebuilding the
 * rest from /proc/PID races with the client's exit and pid reuse.  So the
 * client proves it instead, by doing what that very check guards:
 *
 *   agent -> client   "challenge 0xADDR LEN\n"   LEN fresh random bytes at
 *                                               ADDR in the process
 *   client -> agent   "proof HEX\n"              those bytes, read with
 *                                               process_vm_readv()
 *   agent -> client   "welcome\n" or "error: ...\n"
 *
 * process_vm_readv() runs the kernel's PTRACE_MODE_ATTACH_REALCREDS check
 * on the caller, so exactly who passes it learns the bytes.  They are
 * redrawn for every connection and wiped once used; the page they live in
 * sits at a random address of its own, so the challenge tells a stranger
 * nothing about where the process's code and data are.
 */
#define MT_AGENT_CHALLENGE "challenge"
#define MT_AGENT_PROOF "proof"
#define MT_AGENT_WELCOME "welcome"
#define MT_AGENT_NONCE 32

/* One line from the agent (at most len - 1 bytes, without its newline),
 * made printable: it comes from the traced process and may reach a
 * terminal.  0, or -1 when the connection ends or times out first. */
static inline int mt_agent_line(int fd, char *line, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = recv(fd, line + n, 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (line[n] == '\n')
			break;
		if ((unsigned char)line[n] < 0x20 || line[n] == 0x7f)
			line[n] = '?';
		n++;
	}
	line[n] = '\0';
	return 0;
}

/* Answer the agent's challenge; 0 once welcome, else -1 with why in err. */
static inline int mt_agent_prove(int fd, pid_t pid, char *err, size_t errlen)
{
	char line[256], proof[sizeof(MT_AGENT_PROOF) + 2 * MT_AGENT_NONCE + 2];
	unsigned char nonce[MT_AGENT_NONCE];
	unsigned long long addr;
	unsigned len;
	struct iovec local = { nonce, sizeof(nonce) }, remote;
	int n;

	if (mt_agent_line(fd, line, sizeof(line)) < 0) {
		snprintf(err, errlen, "the agent of process %d did not answer", (int)pid);
		return -1;
	}
	if (sscanf(line, MT_AGENT_CHALLENGE " %llx %u", &addr, &len) != 2 || len != MT_AGENT_NONCE) {
		snprintf(err, errlen, "process %d: %s", (int)pid,
			 strncmp(line, "error: ", 7) ? "the agent speaks another protocol (an older libmarktap?)"
						     : line + 7);
		return -1;
	}
	remote = (struct iovec){ (void *)(uintptr_t)addr, sizeof(nonce) };
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(nonce)) {
		snprintf(err, errlen, "permission denied: the kernel does not let you ptrace process %d "
			 "(%s: its user or group ids differ from yours, it is not dumpable, or Yama's "
			 "ptrace_scope forbids it)", (int)pid, strerror(errno));
		return -1;
	}
	n = snprintf(proof, sizeof(proof), "%s ", MT_AGENT_PROOF);
	for (unsigned i = 0; i < sizeof(nonce); i++)
		n += snprintf(proof + n, sizeof(proof) - (size_t)n, "%02x", nonce[i]);
	proof[n++] = '\n';
	if (send(fd, proof, (size_t)n, MSG_NOSIGNAL) != n || mt_agent_line(fd, line, sizeof(line)) < 0) {
		snprintf(err, errlen, "the agent of process %d hung up", (int)pid);
		return -1;
	}
	if (strcmp(line, MT_AGENT_WELCOME) != 0) {
		snprintf(err, errlen, "process %d: %s", (int)pid,
			 strncmp(line, "error: ", 7) ? line : line + 7);
		return -1;
	}
	return 0;
}

/*
 * Connect to process pid's agent: the descriptor, or -1 with why in err.
 * The name "@marktap-agent-PID" is open to anyone: another user may have
 * bound it first (for a pid about to be used).  The listener's credentials
 * (SO_PEERCRED on our end: the process that called listen()) must be the
 * process itself, or the tool would hand its session memory or script to
 * whoever squats the name.  Then the agent's challenge (above).  Replies
 * are awaited for at most timeout_s seconds: an agent that stalls does not
 * hang the tool.
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
	if (mt_agent_prove(fd, pid, err, errlen) < 0)
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

#endif
