/*
 * agent.c - the control socket of a process linked with libmarktap.
 *
 * "marktrace record -p PID" (and later "marktap -x PID") reach a running
 * process through the abstract unix socket "@marktap-agent-PID".  A thread
 * accepts one client at a time; only a client the kernel lets ptrace the
 * process gets past the challenge (allowed(), mt_agent.h).  Requests are
 * lines; "attach" carries the session memfd as SCM_RIGHTS.  The session
 * ends when the client hangs up.
 * "script [PLUGIN]" (marktap -x PID) hands the connection to the script
 * host (script.c), which speaks mt_wire.h frames on it from then on.
 * MARKTAP_AGENT=0 in the environment disables the agent.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "mt_agent.h"
#include "mt_lib.h"
#include "mt_wire.h"

static int listen_fd = -1;

static void reply(int fd, const char *text)
{
	size_t n = strlen(text);
	if (send(fd, text, n, MSG_NOSIGNAL) != (ssize_t)n)
		return;  /* the client is gone; nothing to tell */
}

/*
 * The challenge's page (mt_agent.h: who may use the agent).  Mapped once,
 * at a random address of its own, so that telling it to a stranger says
 * nothing of the process's layout; where the kernel refuses the address
 * (a smaller address space), wherever mmap puts it.
 */
static unsigned char *challenge_page(void)
{
	static unsigned char *page;
	long size = sysconf(_SC_PAGESIZE);

	for (int i = 0; !page && i < 8; i++) {
		uint64_t r;
		void *p;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			break;
		/* page-aligned, between 1 TiB and 64 TiB */
		r = ((uint64_t)1 << 40) + (r % ((uint64_t)63 << 40) & ~(uint64_t)(size - 1));
		p = mmap((void *)(uintptr_t)r, (size_t)size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED)
			page = p;
	}
	if (!page) {
		void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		page = p == MAP_FAILED ? NULL : p;
	}
	return page;
}

/*
 * Whether the client may ptrace this process: it read the fresh bytes of
 * the challenge out of our memory (mt_agent.h).  The kernel's check of
 * process_vm_readv() is the whole rule: real, effective and saved uids
 * and gids equal to the client's real ones and the process dumpable, or
 * CAP_SYS_PTRACE; so a setuid program, a daemon root started that dropped
 * to the client's user (not dumpable) and one whose group differs from
 * the client's (a daemon running with gid shadow) keep their user out.
 * The bytes are wiped once used: a proof serves one connection.  A client
 * that says nothing is dropped after 2 s (the agent serves one at a time).
 */
static int allowed(int fd)
{
	unsigned char *nonce = challenge_page();
	char line[2 * MT_AGENT_NONCE + 64], want[2 * MT_AGENT_NONCE + 1];
	struct timeval tv = { 2, 0 }, none = { 0, 0 };
	int ok;

	if (!nonce || getrandom(nonce, MT_AGENT_NONCE, GRND_NONBLOCK) != MT_AGENT_NONCE)
		return 0;
	for (unsigned i = 0; i < MT_AGENT_NONCE; i++)
		snprintf(want + 2 * i, 3, "%02x", nonce[i]);
	snprintf(line, sizeof(line), "%s 0x%llx %u\n", MT_AGENT_CHALLENGE,
		 (unsigned long long)(uintptr_t)nonce, (unsigned)MT_AGENT_NONCE);
	reply(fd, line);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ok = mt_agent_line(fd, line, sizeof(line)) == 0 &&
	     !strncmp(line, MT_AGENT_PROOF " ", sizeof(MT_AGENT_PROOF)) &&
	     !strcmp(line + sizeof(MT_AGENT_PROOF), want);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
	explicit_bzero(nonce, MT_AGENT_NONCE);
	explicit_bzero(want, sizeof(want));
	return ok;
}

/* One request: a line, maybe with a descriptor. */
static ssize_t receive(int fd, char *line, size_t len, int *passed_fd)
{
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { line, len - 1 };
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	ssize_t n;

	*passed_fd = -1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n;
	line[n] = '\0';
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(passed_fd, CMSG_DATA(c), sizeof(int));
	return n;
}

/* "script [PLUGIN]": the connection becomes a script session (1). */
static int script_request(int fd, char *line)
{
	char err[300], *path = line + strlen(MT_AGENT_SCRIPT);

	path += strspn(path, " ");
	path[strcspn(path, "\n")] = '\0';
	switch (mt_script_load(fd, path, err, sizeof(err))) {
	case 0:
		return 1;
	case -1:
		mt_wire_send(fd, 'E', err, strlen(err), NULL, 0);
		break;
	default:
		break;
	}
	return 0;
}

/* Serve one client; 1 when the connection now belongs to the script host. */
static int serve(int fd)
{
	char line[1200], err[200], out[256];
	int passed, attached = 0;
	ssize_t n;

	if (!allowed(fd)) {
		reply(fd, "error: permission denied: no proof that you may ptrace the process\n");
		return 0;
	}
	reply(fd, MT_AGENT_WELCOME "\n");
	while ((n = receive(fd, line, sizeof(line), &passed)) > 0) {
		if (!strncmp(line, MT_AGENT_SCRIPT, strlen(MT_AGENT_SCRIPT)) && !attached) {
			if (passed >= 0)
				close(passed);
			if (script_request(fd, line))
				return 1;
			break;
		}
		if (!strncmp(line, MT_AGENT_ATTACH, strlen(MT_AGENT_ATTACH)) && passed >= 0) {
			if (mt_record_attach(passed, err, sizeof(err)) == 0) {
				attached = 1;
				reply(fd, "ok\n");
			} else {
				snprintf(out, sizeof(out), "error: %s\n", err);
				reply(fd, out);
			}
		} else {
			reply(fd, "error: unknown request\n");
		}
		if (passed >= 0)
			close(passed);   /* the mapping keeps the session */
	}
	if (attached)
		mt_record_detach();
	return 0;
}

static void *agent_main(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	/* not SIGTRAP: this thread runs libc functions a script may probe
	 * (function and SDT probes trap), and a trap with SIGTRAP blocked
	 * makes the kernel kill the process */
	sigdelset(&all, SIGTRAP);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "marktap-agent", 0, 0, 0);
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (!serve(fd))
			close(fd);
	}
	return NULL;
}

static void __attribute__((constructor)) agent_init(void)
{
	const char *env = secure_getenv("MARKTAP_AGENT");
	struct sockaddr_un addr;
	socklen_t len;

	mt_script_join_session();
	if (env && !strcmp(env, "0"))
		return;
	len = mt_agent_address(getpid(), &addr);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		return;
	if (bind(listen_fd, (struct sockaddr *)&addr, len) < 0 || listen(listen_fd, 4) < 0) {
		close(listen_fd);
		listen_fd = -1;
		return;
	}
	if (mt_lib_thread_start(agent_main, NULL, 64 * 1024) != 0) {
		close(listen_fd);
		listen_fd = -1;
	}
}
