/*
 * agent.c - the control socket of a process linked with libmarktap.
 *
 * "marktrace record -p PID" (and later "marktap -x PID") reach a running
 * process through the abstract unix socket "@marktap-agent-PID".  A thread
 * accepts one client at a time; only root or the process's own user may
 * connect (SO_PEERCRED).  Requests are lines; "attach" carries the session
 * memfd as SCM_RIGHTS.  The session ends when the client hangs up.
 * "script [PLUGIN]" (marktap -x PID) hands the connection to the script
 * host (script.c), which speaks mt_wire.h frames on it from then on.
 * MARKTAP_AGENT=0 in the environment disables the agent.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

/* Whether the process holds any capability (permitted set). */
static int has_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return 1;   /* cannot tell: as if it did */
	return d[0].permitted || d[1].permitted;
}

/*
 * Root, or the process's own user -- only where the kernel would let that
 * user ptrace it.  Not in a privileged process (setuid, setgid, file
 * capabilities: AT_SECURE), even while it runs with a lowered effective
 * uid: its saved ids can take root back.  Not in a process that is not
 * dumpable: the kernel makes one so when it changes credentials (a daemon
 * started by root that dropped to the user, keeping what root opened) and
 * programs make themselves so to keep their own user out (ssh-agent).
 * Not in one that holds capabilities.  A client could hand any of them
 * session memory or a script host of its own (dlopen'ed there).
 */
static int allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return 0;
	if (cred.uid == 0)
		return 1;
	if (getauxval(AT_SECURE) || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 1 || has_caps())
		return 0;
	return cred.uid == geteuid();
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
		reply(fd, "error: permission denied: not the process's user, or the process is privileged (setuid, changed credentials, not dumpable, capabilities)\n");
		return 0;
	}
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
	pthread_t thread;
	pthread_attr_t attr;

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
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (pthread_create(&thread, &attr, agent_main, NULL) != 0) {
		close(listen_fd);
		listen_fd = -1;
	}
	pthread_attr_destroy(&attr);
}
