/*
 * procs.c - marktap's side of the processes that run the script.
 *
 * Marker handlers run inside the traced processes (runtime/script/host.c);
 * begin, timer, end and error probes run here.  Each traced process is a
 * connection speaking the frames of runtime/proto/mt_wire.h.  Processes join
 *   - through the session socket "@marktap-session-PID-RANDOM", whose name
 *     the processes started by -c (and their descendants) find in
 *     MARKTAP_SESSION; anyone can reach an abstract socket, so a peer is
 *     accepted only if it runs as our user or root, or descends from us
 *     (SO_PEERCRED), and the rest are refused and logged;
 *   - through their agent socket: -x PID, and the processes that run a
 *     binary named by a process("PATH") probe, found by scanning /proc.
 * Globals travel as deltas (runtime/lua/API.md, "Several states"): before
 * a timer or the end runs here, every process sends what it changed; what
 * the handler here changed goes back to every process.
 *
 * Handler output comes back as frames ('O' to our output, 'R' lines to
 * stderr) that we write out ourselves: no traced process is ever given a
 * descriptor of ours (our terminal, the -o file), which a process of
 * another user could keep, read our terminal through and write to after
 * the session.
 *
 * No peer can stall the session loop: sockets are read without blocking
 * into a buffer per peer, a frame must arrive whole within FRAME_DEADLINE_MS
 * of its first byte, and a send that cannot proceed for SEND_TIMEOUT_S
 * fails; either way the peer is dropped, with a warning.
 */
#define _GNU_SOURCE
#include "tr_run.h"
#include "mt_lua.h"
#include "mt_agent.h"
#include "mt_wire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <linux/kcmp.h>
#include <time.h>
#include <unistd.h>

#ifndef MT_PKGLIBDIR
#define MT_PKGLIBDIR "/usr/local/lib/marktap"
#endif

enum { C_HELLO, C_RUNNING, C_DONE };
enum { FRAME_DEADLINE_MS = 10000, SEND_TIMEOUT_S = 5 };
enum { REFUSED_USERS = 64 };     /* refused(): users said by name */

struct conn {
	int fd;
	int state;
	int pid;
	bool from_scan;          /* quiet if the process refuses */
	bool want_delta;
	bool said_bye;           /* its last results arrived (B frame) */
	/* the frame being received: header, then payload */
	unsigned char hdr[8];
	size_t got;              /* bytes of header + payload so far */
	char *data;
	uint32_t len;
	int64_t since;           /* mono_ms() of the frame's first byte */
};

struct watched {                 /* a binary named by process("PATH") */
	dev_t dev;
	ino_t ino;
	const char *path;
	bool library;
	bool told;               /* a process without libmarktap was said */
	bool joined;             /* a process of it joined (a scan found it) */
};

struct tr_procs {
	struct tr_session *s;
	struct mt_lua *mt;
	char *script;                /* the S frame, built at the first hello */
	size_t script_len;
	const char *lua;
	size_t lua_len;
	long target;
	int out_fd, err_fd;
	int listen_fd;
	struct conn *conns;
	unsigned nconns;
	struct watched *watch;
	unsigned nwatch;
	int *seen;                   /* pids the scan already tried */
	unsigned nseen;
	struct { int pid; unsigned tries; } *young;   /* not answering yet */
	unsigned nyoung;
	int64_t next_scan;
	int stop;                    /* MT_LUA_STOP_* a process asked for */
	bool quitting;
	int64_t errors, skips;
	unsigned lost;               /* processes gone without their last results */
	const char *plugin;
	struct refusal { unsigned uid; unsigned long long more; } refused[REFUSED_USERS];
	unsigned nrefused;
	unsigned long long refused_others;
};

static int64_t mono_ms(void)
{
	return tr_mono_ns() / 1000000;
}

/* libmarktap: the installed one, or the build tree's. */
static const char *libmarktap_path(void)
{
	const char *lib = MT_LIBDIR "/libmarktap.so.0";

#ifdef MT_BUILDDIR
	if (access(lib, R_OK) != 0)
		lib = MT_BUILDDIR "/runtime/.libs/libmarktap.so.0";
#endif
	return lib;
}

/* <sys/sdt.h> probes of programs without libmarktap: the commands marktap
 * starts (-c) load it through LD_PRELOAD, so that they join the session. */
static void preload_for_sdt(struct tr_session *s)
{
	const char *lib = libmarktap_path(), *old = getenv("LD_PRELOAD");
	bool sdt = false;

	for (unsigned i = 0; i < s->probes.n && !sdt; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++)
			sdt |= ((struct tr_resolved *)p->resolved.items[k])->provider != NULL;
	}
	if (!sdt)
		return;
	if (old && *old)
		setenv("LD_PRELOAD", tr_printf("%s:%s", lib, old), 1);
	else
		setenv("LD_PRELOAD", lib, 1);
}

/* The plugin the processes load: $MARKTAP_SCRIPT_LIB, the installed one,
 * or the build tree's. */
static const char *plugin_path(void)
{
	const char *env = getenv(MT_SCRIPT_LIB_ENV);
	const char *installed = MT_PKGLIBDIR "/libmarktap-script.so";

	if (env && *env)
		return env;
#ifdef MT_BUILDDIR
	if (access(installed, R_OK) != 0)
		return MT_BUILDDIR "/runtime/script/.libs/libmarktap-script.so";
#endif
	return installed;
}

/* A function probe (dwarf.c): where, and a recipe per field, evaluated
 * at the hit ('l' long, 's' string) or, in a .return probe, at the return
 * ('L', 'R'); runtime/script/ufunc_recipe.c reads them. */
static void func_manifest(struct tr_buf *b, unsigned id, const struct tr_resolved *r)
{
	tr_buf_printf(b, "func probe_%u %c 0x%llx %s %s\n", id, r->dw_return ? 'r' : 'e',
		      (unsigned long long)r->dw_addr, r->path, r->dw_cfa ? r->dw_cfa : "-");
	for (unsigned i = 0; i < r->dw_recipes.n; i++) {
		bool str = (enum tr_type)(intptr_t)r->field_types.items[i] == T_STRING;
		tr_buf_printf(b, "fvar probe_%u %c %s\n", id,
			      r->dw_at_return.items[i] ? (str ? 'R' : 'L') : str ? 's' : 'l',
			      (const char *)r->dw_recipes.items[i]);
	}
}

static void build_script(struct tr_procs *ss)
{
	const char *lua = ss->lua;
	size_t len = ss->lua_len;
	long target = ss->target;
	struct tr_session *s = ss->s;
	struct tr_buf b = { 0 };

	/* the limits set (mt_lua_limit_names), by name: the host's
	 * mt_lua_option_set reads them */
	for (unsigned i = 0; mt_lua_limit_names[i]; i++) {
		int64_t v = tr_define_value(s, mt_lua_limit_names[i], INT64_MIN);
		if (v != INT64_MIN)
			tr_buf_printf(&b, "option %s %lld\n", mt_lua_limit_names[i], (long long)v);
	}
	if (s->guru)
		tr_buf_puts(&b, "option guru 1\n");
	tr_buf_printf(&b, "option target %ld\n", target);
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			struct tr_resolved *r = p->resolved.items[k];
			if (r->kind != P_MARK_USER)
				continue;
			if (r->dw_func)
				func_manifest(&b, p->id, r);
			else if (r->provider)
				tr_buf_printf(&b, "sdt probe_%u %s %s %s\n", p->id, r->path ? r->path : "*",
					      r->provider, r->marker);
			else
				tr_buf_printf(&b, "bind probe_%u %s %s\n", p->id, r->path ? r->path : "*",
					      r->marker);
		}
	}
	tr_buf_puts(&b, "\n");
	ss->script_len = b.len + len;
	ss->script = malloc(ss->script_len + 1);
	memcpy(ss->script, tr_buf_str(&b), b.len);
	memcpy(ss->script + b.len, lua, len);
}

static void watch_paths(struct tr_procs *ss)
{
	struct tr_session *s = ss->s;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			struct tr_resolved *r = p->resolved.items[k];
			struct stat st;
			bool dup = false;
			if (r->kind != P_MARK_USER || !r->path || stat(r->path, &st) != 0)
				continue;
			for (unsigned j = 0; j < ss->nwatch; j++)
				dup |= ss->watch[j].dev == st.st_dev && ss->watch[j].ino == st.st_ino;
			if (dup)
				continue;
			ss->watch = realloc(ss->watch, sizeof(*ss->watch) * (ss->nwatch + 1));
			ss->watch[ss->nwatch++] = (struct watched){
				st.st_dev, st.st_ino, r->path, !(st.st_mode & S_IXUSR) || strstr(r->path, ".so"), false, false,
			};
		}
	}
}

struct tr_procs *tr_procs_new(struct tr_session *s, struct mt_lua *mt, const char *lua, size_t len,
			    int out_fd)
{
	struct tr_procs *ss = calloc(1, sizeof(*ss));

	ss->s = s;
	ss->mt = mt;
	ss->lua = lua;
	ss->lua_len = len;
	ss->out_fd = out_fd;
	ss->err_fd = 2;
	ss->listen_fd = -1;
	ss->plugin = plugin_path();
	watch_paths(ss);
	return ss;
}

void tr_procs_set_target(struct tr_procs *ss, long pid)
{
	ss->target = pid;
}

bool tr_procs_wants_processes(struct tr_procs *ss)
{
	struct tr_session *s = ss->s;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++)
			if (((struct tr_resolved *)p->resolved.items[k])->kind == P_MARK_USER)
				return true;
	}
	return false;
}

static struct conn *add_conn(struct tr_procs *ss, int fd, bool from_scan)
{
	struct conn *c;

	struct timeval tv = { SEND_TIMEOUT_S, 0 };

	/* a peer that stops reading makes our sends fail, not wait */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ss->conns = realloc(ss->conns, sizeof(*ss->conns) * (ss->nconns + 1));
	c = &ss->conns[ss->nconns++];
	*c = (struct conn){ .fd = fd, .state = C_HELLO, .from_scan = from_scan };
	return c;
}

/* -c: the socket the command's processes join; its name goes in their
 * environment.  The random part keeps another user from binding the name
 * first (a refused bind would only stop us; see also peer_allowed). */
int tr_procs_listen(struct tr_procs *ss)
{
	char name[64];
	struct sockaddr_un addr;
	socklen_t len;
	unsigned long long nonce = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, &nonce, sizeof(nonce)) != sizeof(nonce))
		nonce = (unsigned long long)mono_ms() * 2654435761u ^ (unsigned long long)getpid();
	if (fd >= 0)
		close(fd);
	snprintf(name, sizeof(name), "marktap-session-%d-%016llx", (int)getpid(), nonce);
	len = mt_wire_address(name, &addr);
	ss->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ss->listen_fd < 0 || bind(ss->listen_fd, (struct sockaddr *)&addr, len) < 0 ||
	    listen(ss->listen_fd, 64) < 0) {
		fprintf(stderr, "ERROR: cannot create the session socket: %s\n", strerror(errno));
		return -1;
	}
	setenv(MT_SESSION_ENV, name, 1);
	setenv(MT_SCRIPT_LIB_ENV, ss->plugin, 1);
	preload_for_sdt(ss->s);
	return 0;
}

/*
 * A refused connection is said once per user, with the first process;
 * the others are counted and said at the end (refusals_said()): anyone
 * can connect, and a line per refusal let a user write megabytes into
 * our stderr.  At most REFUSED_USERS users get a line of their own; the
 * rest share one count.
 */
static void refused(struct tr_procs *ss, int pid, unsigned uid)
{
	unsigned i;

	for (i = 0; i < ss->nrefused && ss->refused[i].uid != uid; i++)
		;
	if (i < ss->nrefused) {
		ss->refused[i].more++;
		return;
	}
	if (i == REFUSED_USERS) {
		ss->refused_others++;
		return;
	}
	ss->refused[ss->nrefused++] = (struct refusal){ uid, 0 };
	fprintf(stderr, "WARNING: refused process %d (uid %u) on the session socket: "
		"not a process of this session (further refusals of uid %u are counted)\n",
		pid, uid, uid);
}

static void refusals_said(struct tr_procs *ss)
{
	for (unsigned i = 0; i < ss->nrefused; i++)
		if (ss->refused[i].more)
			fprintf(stderr, "WARNING: refused %llu more connection(s) of uid %u on the "
				"session socket\n", (unsigned long long)ss->refused[i].more,
				ss->refused[i].uid);
	if (ss->refused_others)
		fprintf(stderr, "WARNING: refused %llu connection(s) of further users on the "
			"session socket\n", (unsigned long long)ss->refused_others);
	ss->nrefused = 0;
	ss->refused_others = 0;
}

/* Does pid descend from this marktap (through live parents)? */
static bool descends_from_us(int pid)
{
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		char path[64], buf[512], *p;
		FILE *fp;
		size_t n;

		if (pid == getpid())
			return true;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		fp = fopen(path, "r");
		if (!fp)
			return false;
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		buf[n] = '\0';
		p = strrchr(buf, ')');   /* the name may hold spaces and parens */
		if (!p || sscanf(p + 1, " %*c %d", &pid) != 1)
			return false;
	}
	return false;
}

/*
 * Who may join the session: the processes -c started and their
 * descendants, which run as our user (or root), or as another user when
 * they still descend from us (a command that changes user).  Anyone else
 * would receive the script and the globals, and could feed deltas or stop
 * the session: refused, and said so (refused()).
 */
static bool peer_allowed(struct tr_procs *ss, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	if (cred.uid == 0 || cred.uid == geteuid() || descends_from_us(cred.pid))
		return true;
	refused(ss, cred.pid, cred.uid);
	return false;
}

static void accept_peer(struct tr_procs *ss, bool quitting)
{
	int fd = accept4(ss->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (!peer_allowed(ss, fd)) {
		close(fd);
		return;
	}
	add_conn(ss, fd, false);
	if (quitting)
		mt_wire_send(fd, 'Q', NULL, 0, NULL, 0);
}

/* Ask a process's agent to run the script: the connection, or -1. */
/* An agent's text reply (a refusal) as one printable line: its first. */
static void one_line(char *line)
{
	line[strcspn(line, "\n")] = '\0';
	for (char *q = line; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
}

static int agent_connect(struct tr_procs *ss, int pid, char *why, size_t whylen)
{
	char req[PATH_MAX + 16];
	int fd = mt_agent_connect(pid, 5, why, whylen);

	if (fd < 0)
		return -1;
	snprintf(req, sizeof(req), "%s %s\n", MT_AGENT_SCRIPT, ss->plugin);
	if (mt_wire_write_all(fd, req, strlen(req)) < 0) {
		/* an agent that refuses answers at once and hangs up, maybe
		 * before our request went: its reason is what to say */
		char line[256];
		int e = errno;
		ssize_t k = recv(fd, line, sizeof(line) - 1, MSG_DONTWAIT);
		line[k > 0 ? (size_t)k : 0] = '\0';
		one_line(line);
		if (!strncmp(line, "error", 5))
			snprintf(why, whylen, "process %d: %s", pid, line);
		else
			snprintf(why, whylen, "process %d: %s", pid, strerror(e));
		close(fd);
		return -1;
	}
	return fd;
}

static void close_conn(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->state = C_DONE;
	c->want_delta = false;
	free(c->data);
	c->data = NULL;
	c->got = 0;
}

/* A peer that broke the protocol or stalled: drop it and say so. */
static void drop_conn(struct tr_procs *ss, struct conn *c, const char *why)
{
	if (!c->from_scan || ss->s->verbose)
		fprintf(stderr, "WARNING: process %d dropped from the session: %s\n", c->pid, why);
	close_conn(c);
}

/* Write a process's output or error line out; a closed output (a pipe
 * whose reader left) loses it, as our own output would be lost. */
static void relay(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

/* Is descriptor fd of process pid the very open file our fd is?  (kcmp:
 * the kernel asks for PTRACE_MODE_READ on pid; no means no.) */
static bool same_file(int pid, int fd, int ours)
{
	return syscall(SYS_kcmp, (pid_t)getpid(), (pid_t)pid, KCMP_FILE, (unsigned long)ours,
		       (unsigned long)fd) == 0;
}

/*
 * The script for a process that said hello.  Its handlers' output comes
 * back in frames -- unless the process's own stdout (stderr) is the very
 * file we write to, as for a command of -c that inherited it: then the
 * handlers write there themselves, in order with the program's own lines,
 * and the process uses only a descriptor it holds anyway.
 */
static int send_script(struct tr_procs *ss, struct conn *c)
{
	static const char out_own[] = "write out own\n", err_own[] = "write err own\n";
	bool out = c->pid > 0 && same_file(c->pid, 1, ss->out_fd);
	bool err = c->pid > 0 && same_file(c->pid, 2, ss->err_fd);
	size_t len = ss->script_len + (out ? sizeof(out_own) - 1 : 0) + (err ? sizeof(err_own) - 1 : 0);
	char *buf = malloc(len), *p = buf;
	int rc;

	if (!buf)
		return -1;
	if (out)
		p = mempcpy(p, out_own, sizeof(out_own) - 1);
	if (err)
		p = mempcpy(p, err_own, sizeof(err_own) - 1);
	memcpy(p, ss->script, ss->script_len);
	rc = mt_wire_send(c->fd, 'S', buf, len, NULL, 0);
	free(buf);
	return rc;
}

/* Act on one whole frame of a peer. */
static void dispatch(struct tr_procs *ss, struct conn *c, struct mt_frame f)
{
	switch (f.type) {
	case 'O':
		relay(ss->out_fd, f.data, f.len);
		break;
	case 'R': {
		/* an error line of another process (maybe another user's): on
		 * a terminal its control bytes are text, as --trace writes them */
		size_t n = f.len + 1;
		const char *line = f.data;
		f.data[f.len] = '\n';   /* the byte after the payload is ours (receive) */
		if (isatty(ss->err_fd))
			line = tr_tty_escape(f.data, f.len + 1, &n);
		relay(ss->err_fd, line, n);
		break;
	}
	case 'H':
		c->pid = atoi(f.data);
		if (strtol(strchr(f.data, ' ') ? strchr(f.data, ' ') + 1 : "0", NULL, 10) == 1) {
			c->state = C_RUNNING;    /* a fork: it has the script */
			break;
		}
		if (!ss->script)
			build_script(ss);
		if (send_script(ss, c) < 0) {
			close_conn(c);
			break;
		}
		{
			char *buf = NULL;
			size_t len = 0;
			mt_lua_sync_take(ss->mt, MT_LUA_SYNC_FULL, &buf, &len);
			if (mt_wire_send(c->fd, 'F', buf, len, NULL, 0) < 0)
				close_conn(c);
			free(buf);
		}
		break;
	case 'K':
		c->state = C_RUNNING;
		if (ss->s->verbose)
			fprintf(stderr, "marktap: process %d runs the script\n", c->pid);
		break;
	case 'E':
		/* a process that joined as the session ended was told to quit */
		if (ss->quitting && c->state == C_HELLO && strstr(f.data, "expected the script")) {
			c->said_bye = true;
			close_conn(c);
			break;
		}
		if (!c->from_scan || ss->s->verbose)
			fprintf(stderr, "ERROR: process %d: %s\n", c->pid, f.data);
		c->said_bye = true;
		close_conn(c);
		break;
	case 'D':
		if (f.len)
			mt_lua_sync_apply(ss->mt, f.data, f.len);
		c->want_delta = false;
		c->said_bye = false;
		break;
	case 'W':   /* about to exec: its delta came just before */
		c->said_bye = true;
		break;
	case 'X':
		if (!ss->stop)
			ss->stop = !strcmp(f.data, "exit") ? MT_LUA_STOP_EXIT
				 : !strcmp(f.data, "errors") ? MT_LUA_STOP_ERRORS : MT_LUA_STOP_SKIPPED;
		break;
	case 'B': {
		long long e = 0, k = 0;
		unsigned long long nat = 0, lua = 0;
		int got = sscanf(f.data, "%lld %lld %llu %llu", &e, &k, &nat, &lua);
		if (got >= 2) {
			ss->errors += e;
			ss->skips += k;
		}
		if (got == 4 && ss->s->verbose)
			fprintf(stderr, "marktap: process %d: %llu hits in native handlers, %llu in Lua\n",
				c->pid, nat, lua);
		c->said_bye = true;
		close_conn(c);
		break;
	}
	default:
		break;
	}
	free(f.data);
}

/* The peer hung up: a running process that did not say bye took its
 * last results with it (killed, or gone in a way nothing could flush). */
static void peer_gone(struct tr_procs *ss, struct conn *c)
{
	if (c->state == C_RUNNING && !c->said_bye)
		ss->lost++;
	close_conn(c);
}

/*
 * Read what a readable peer sent, without blocking: whole frames are
 * dispatched, a partial one waits in the peer's buffer.  Peers never send
 * descriptors; any that come are closed.
 */
static void receive(struct tr_procs *ss, struct conn *c)
{
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * MT_WIRE_FDS)];
			struct cmsghdr align;
		} control;
		struct iovec iov;
		struct msghdr msg = { 0 };
		struct cmsghdr *cm;
		ssize_t r;

		if (c->got < sizeof(c->hdr))
			iov = (struct iovec){ c->hdr + c->got, sizeof(c->hdr) - c->got };
		else
			iov = (struct iovec){ c->data + (c->got - sizeof(c->hdr)),
					      c->len - (c->got - sizeof(c->hdr)) };
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		r = iov.iov_len ? recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) : 0;
		for (cm = CMSG_FIRSTHDR(&msg); r > 0 && cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++)
					close(((int *)CMSG_DATA(cm))[k]);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r < 0 || (r == 0 && iov.iov_len)) {
			peer_gone(ss, c);
			return;
		}
		if (!c->got)
			c->since = mono_ms();
		c->got += (size_t)r;
		if (c->got == sizeof(c->hdr) && !c->data && c->state == C_HELLO &&
		    !memcmp(c->hdr, "error", 5)) {
			/* the agent refused with a text line, not a frame */
			char line[256];
			size_t h = sizeof(c->hdr);
			memcpy(line, c->hdr, h);
			ssize_t k = recv(c->fd, line + h, sizeof(line) - h - 1, MSG_DONTWAIT);
			line[h + (k > 0 ? (size_t)k : 0)] = '\0';
			one_line(line);
			drop_conn(ss, c, line);
			return;
		}
		if (c->got == sizeof(c->hdr) && !c->data) {
			memcpy(&c->len, c->hdr, 4);
			if (c->len > MT_WIRE_MAX || !(c->data = malloc((size_t)c->len + 1))) {
				drop_conn(ss, c, "a frame larger than the protocol allows");
				return;
			}
		}
		if (c->data && c->got == sizeof(c->hdr) + c->len) {
			struct mt_frame f = { .len = c->len, .type = c->hdr[4], .data = c->data };
			f.data[f.len] = '\0';
			f.fds[0] = f.fds[1] = -1;
			c->data = NULL;
			c->got = 0;
			dispatch(ss, c, f);
			if (c->fd < 0)
				return;
		}
	}
}

/* Peers in the middle of a frame for too long are dropped. */
static void expire_partial(struct tr_procs *ss)
{
	int64_t now = mono_ms();

	for (unsigned i = 0; i < ss->nconns; i++) {
		struct conn *c = &ss->conns[i];
		if (c->fd >= 0 && c->got && now - c->since > FRAME_DEADLINE_MS)
			drop_conn(ss, c, "a frame did not arrive whole in time");
	}
}

static bool seen(struct tr_procs *ss, int pid)
{
	for (unsigned i = 0; i < ss->nseen; i++)
		if (ss->seen[i] == pid)
			return true;
	for (unsigned i = 0; i < ss->nconns; i++)
		if (ss->conns[i].pid == pid)
			return true;
	return false;
}

/* Whether a line of pid's /proc/PID/maps holds: one that names a file
 * containing name (name), or one of w's file (its device and inode). */
static bool maps_line(int pid, const char *name, const struct watched *w)
{
	char path[64], line[PATH_MAX + 128];
	bool found = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fp = fopen(path, "r");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		unsigned long ino;
		unsigned maj, min;
		if (name)
			found = strstr(line, name) != NULL;
		else if (sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &min, &ino) == 3 &&
			 ino == w->ino && makedev(maj, min) == w->dev)
			found = true;
	}
	fclose(fp);
	return found;
}

static bool maps_name(int pid, const char *name)
{
	return maps_line(pid, name, NULL);
}

static bool maps_hold(int pid, const struct watched *w)
{
	return maps_line(pid, NULL, w);
}

/* A process of some "marktap -c" session (ours included) joins that
 * session by itself, before its main(). */
static bool other_session(int pid)
{
	char path[64], env[32768];
	size_t n, k = strlen(MT_SESSION_ENV);
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fp = fopen(path, "r");
	if (!fp)
		return false;
	n = fread(env, 1, sizeof(env) - 1, fp);
	fclose(fp);
	env[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(env + i) + 1)
		if (!strncmp(env + i, MT_SESSION_ENV, k) && env[i + k] == '=')
			return true;
	return false;
}

/* A process that has just exec'd the binary may not listen yet (its
 * agent starts with libmarktap's constructor): it is tried again at the
 * next scans, SCAN_TRIES in all (200 ms apart), before it is left alone. */
#define SCAN_TRIES 15

static bool young_again(struct tr_procs *ss, int pid)
{
	unsigned i;

	for (i = 0; i < ss->nyoung && ss->young[i].pid != pid; i++)
		;
	if (i == ss->nyoung) {
		void *y = realloc(ss->young, sizeof(*ss->young) * (ss->nyoung + 1));
		if (!y)
			return false;
		ss->young = y;
		ss->young[ss->nyoung].pid = pid;
		ss->young[ss->nyoung++].tries = 0;
	}
	/* one without libmarktap a scan later (the loader has mapped the
	 * program's libraries by then) never gets an agent */
	if (ss->young[i].tries >= 1 && !maps_name(pid, "/libmarktap.so"))
		return false;
	return ++ss->young[i].tries < SCAN_TRIES;
}

/*
 * A process runs (or maps) w's file but marktap cannot reach it: started
 * outside marktap without libmarktap, it has no agent, and the probes do
 * not fire there (marktap has no uprobes: the handlers run in the
 * process).  Said once per file without -c and -x; with them the
 * session's processes join by themselves, and other processes of the
 * system running a common program or library would be noise (-v says
 * each).
 */
static void unreachable(struct tr_procs *ss, struct watched *w, int pid, const char *why)
{
	struct tr_session *s = ss->s;

	if (!w->told && !s->target_cmd && !s->target_pid) {
		w->told = true;
		if (maps_name(pid, "/libmarktap.so"))
			fprintf(stderr, "WARNING: %s: the script's probes in %s do not fire there\n", why, w->path);
		else
			fprintf(stderr, "WARNING: process %d %s %s without libmarktap (started outside marktap): "
				"the script's probes there do not fire; start it with -c, or with LD_PRELOAD=%s\n",
				pid, w->library ? "maps" : "runs", w->path, libmarktap_path());
	} else if (s->verbose) {
		fprintf(stderr, "marktap: %s\n", why);
	}
}

/*
 * At the end, without -c and -x: a watched program no process of which
 * joined, and none was said unreachable.  Its probes' zeros may be no
 * news (it never ran), or a run marktap could not see: started outside
 * marktap without libmarktap and ended between two scans.  Said, not
 * left a silent zero.
 */
static void unjoined_said(struct tr_procs *ss)
{
	struct tr_session *s = ss->s;

	for (unsigned i = 0; i < ss->nwatch && !s->target_cmd && !s->target_pid; i++) {
		const struct watched *w = &ss->watch[i];
		if (!w->joined && !w->told && !w->library)
			fprintf(stderr, "WARNING: no process running %s joined the session: one started "
				"outside marktap without libmarktap is not traced (it is said when a scan, "
				"every 200 ms, finds it running); start it with -c\n", w->path);
	}
}

/* Processes running a watched binary (or mapping a watched library) that
 * have an agent: ask them to run the script. */
static void scan(struct tr_procs *ss)
{
	DIR *d;
	struct dirent *e;
	char why[300];

	if (!ss->nwatch || mono_ms() < ss->next_scan)
		return;
	ss->next_scan = mono_ms() + 200;
	d = opendir("/proc");
	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name);
		char exe[64];
		struct stat st;
		struct watched *match = NULL;
		if (pid <= 0 || pid == getpid() || seen(ss, pid))
			continue;
		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		if (stat(exe, &st) != 0)
			continue;
		for (unsigned i = 0; i < ss->nwatch && !match; i++) {
			struct watched *w = &ss->watch[i];
			if (w->library ? maps_hold(pid, w) : (w->dev == st.st_dev && w->ino == st.st_ino))
				match = w;
		}
		if (!match || other_session(pid))
			continue;
		int fd = agent_connect(ss, pid, why, sizeof(why));
		if (fd < 0 && young_again(ss, pid))
			continue;
		ss->seen = realloc(ss->seen, sizeof(int) * (ss->nseen + 1));
		ss->seen[ss->nseen++] = pid;
		if (fd >= 0) {
			add_conn(ss, fd, true)->pid = pid;
			match->joined = true;
		}
		else if (kill(pid, 0) == 0 || errno == EPERM)   /* (one that ended meanwhile is no news) */
			unreachable(ss, match, pid, why);
	}
	closedir(d);
}

int tr_procs_attach(struct tr_procs *ss, int pid)
{
	char why[300];
	int fd = agent_connect(ss, pid, why, sizeof(why));
	int64_t deadline = mono_ms() + 5000;
	struct conn *c;

	if (fd < 0) {
		fprintf(stderr, "ERROR: -x %d: %s\n", pid, why);
		return -1;
	}
	c = add_conn(ss, fd, false);
	c->pid = pid;
	ss->seen = realloc(ss->seen, sizeof(int) * (ss->nseen + 1));
	ss->seen[ss->nseen++] = pid;
	/* the script is armed in the target before its begin-time hits count */
	while (ss->conns[0].state == C_HELLO && mono_ms() < deadline)
		tr_procs_poll(ss, 100);
	if (ss->conns[0].state != C_RUNNING) {
		if (ss->conns[0].fd >= 0)
			fprintf(stderr, "ERROR: -x %d: the process did not answer\n", pid);
		return -1;
	}
	return 0;
}

void tr_procs_poll(struct tr_procs *ss, int timeout_ms)
{
	struct pollfd *p;
	unsigned n = 0, *map;

	scan(ss);   /* first: it may add connections (sized for below) */
	p = calloc(ss->nconns + 1, sizeof(*p));
	map = calloc(ss->nconns + 1, sizeof(*map));
	if (!p || !map) {
		free(p);
		free(map);
		return;
	}
	if (ss->listen_fd >= 0) {
		p[n].fd = ss->listen_fd;
		p[n++].events = POLLIN;
	}
	for (unsigned i = 0; i < ss->nconns; i++) {
		if (ss->conns[i].fd < 0)
			continue;
		map[n] = i;
		p[n].fd = ss->conns[i].fd;
		p[n++].events = POLLIN;
	}
	if (ss->nwatch && (timeout_ms < 0 || timeout_ms > 200))
		timeout_ms = 200;
	if ((timeout_ms < 0 || timeout_ms > 1000) && n > (ss->listen_fd >= 0))
		timeout_ms = 1000;   /* to see partial frames expire */
	if (poll(p, n, timeout_ms) > 0) {
		unsigned first = 0;
		if (ss->listen_fd >= 0) {
			first = 1;
			if (p[0].revents & POLLIN)
				accept_peer(ss, false);
		}
		for (unsigned k = first; k < n; k++)
			if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
				receive(ss, &ss->conns[map[k]]);
	}
	expire_partial(ss);
	free(p);
	free(map);
}

/* Every running process sends its delta; wait up to two seconds. */
void tr_procs_pull(struct tr_procs *ss)
{
	int64_t deadline = mono_ms() + 2000;
	bool waiting = false;

	for (unsigned i = 0; i < ss->nconns; i++) {
		struct conn *c = &ss->conns[i];
		if (c->state != C_RUNNING)
			continue;
		c->want_delta = mt_wire_send(c->fd, 'P', NULL, 0, NULL, 0) == 0;
		waiting |= c->want_delta;
	}
	while (waiting && mono_ms() < deadline) {
		tr_procs_poll(ss, 50);
		waiting = false;
		for (unsigned i = 0; i < ss->nconns; i++)
			waiting |= ss->conns[i].want_delta;
	}
}

/* What a handler here changed goes to every process. */
void tr_procs_push(struct tr_procs *ss)
{
	char *buf = NULL;
	size_t len = 0;

	if (mt_lua_sync_take(ss->mt, MT_LUA_SYNC_DELTA, &buf, &len) < 0 || !len) {
		free(buf);
		return;
	}
	for (unsigned i = 0; i < ss->nconns; i++)
		if (ss->conns[i].state == C_RUNNING)
			mt_wire_send(ss->conns[i].fd, 'A', buf, len, NULL, 0);
	free(buf);
}

/* The end: every process disarms and sends its last delta; wait up to
 * five seconds for them. */
void tr_procs_quit(struct tr_procs *ss)
{
	int64_t deadline = mono_ms() + 5000;
	bool open = false;

	ss->quitting = true;
	for (unsigned i = 0; i < ss->nconns; i++) {
		struct conn *c = &ss->conns[i];
		if (c->fd < 0)
			continue;
		/* a peer that is gone still has its last frames to read */
		mt_wire_send(c->fd, 'Q', NULL, 0, NULL, 0);
		open = true;
	}
	if (ss->listen_fd >= 0) {
		/* processes that connected and are not accepted yet count too */
		struct pollfd lp = { .fd = ss->listen_fd, .events = POLLIN };
		for (int k = 0; k < 1024 && poll(&lp, 1, 0) > 0 && (lp.revents & POLLIN); k++)
			accept_peer(ss, true);
		for (unsigned i = 0; i < ss->nconns; i++)
			open |= ss->conns[i].fd >= 0;
		close(ss->listen_fd);
		ss->listen_fd = -1;
	}
	refusals_said(ss);
	unjoined_said(ss);
	ss->nwatch = 0;
	while (open && mono_ms() < deadline) {
		tr_procs_poll(ss, 50);
		open = false;
		for (unsigned i = 0; i < ss->nconns; i++)
			open |= ss->conns[i].fd >= 0;
	}
	for (unsigned i = 0; i < ss->nconns; i++)
		close_conn(&ss->conns[i]);
}

int tr_procs_stop_reason(struct tr_procs *ss) { return ss->stop; }
int64_t tr_procs_errors(struct tr_procs *ss) { return ss->errors; }
int64_t tr_procs_skips(struct tr_procs *ss) { return ss->skips; }
unsigned tr_procs_lost(struct tr_procs *ss) { return ss->lost; }

void tr_procs_free(struct tr_procs *ss)
{
	if (!ss)
		return;
	if (ss->listen_fd >= 0)
		close(ss->listen_fd);
	refusals_said(ss);
	for (unsigned i = 0; i < ss->nconns; i++)
		free(ss->conns[i].data);
	free(ss->conns);
	free(ss->watch);
	free(ss->seen);
	free(ss->young);
	free(ss->script);
	free(ss);
}
