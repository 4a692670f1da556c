/*
 * run.c - pass 5, live: the script's handlers on the hits of the running
 * system, in the marktap process.
 *
 * Takes the chunk of pass 3 (or of a module file, module.c).  The chunk
 * is loaded into a runtime state (libmtlua); begin probes run by
 * priority, then timers fire from one loop until exit(), SIGINT/SIGTERM,
 * -T's timeout, the end of -c's command, or too many errors; then the end
 * probes (the error probes instead, after errors) and the display of the
 * globals that were written but never read: tr_run_live's setup, loop
 * and finish.  Marker probes run in the traced processes (procs.c and
 * runtime/script/host.c) or in marktap.ko (kmark.c); process.begin/.end,
 * perf samples, procfs("__stdin") and the procfs files marktap.ko serves
 * (procfs.c) run here.  --trace runs the same
 * chunk over a stored trace instead (trace.c; main.c chooses).
 */
#define _GNU_SOURCE
#include "tr_run.h"
#include "mt_lua.h"

#include <lauxlib.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

struct timer {
	int id;
	int64_t interval, randomize, next;
};

struct host {
	FILE *out;
	pid_t child;
	int64_t target;
	/* -o FILE with -S SIZE[,N]: FILE.0, FILE.1... each up to size bytes,
	 * the last keep of them kept (0: all) */
	const char *base;
	int64_t size, keep, num;
	bool err_follows;       /* -F: stderr goes where the output goes */
};

/*
 * The next of -S's files (stap's FILE.N): opened onto the descriptor the
 * output already has, so that every writer of it (handlers in marktap,
 * the traced processes', marktap.ko's) goes on into the new file; the
 * oldest past N removed.  -1 when it cannot be opened (said; the output
 * stays where it was).
 */
static int open_output(struct host *h)
{
	const char *path = tr_printf("%s.%lld", h->base, (long long)h->num);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0) {
		fprintf(stderr, "ERROR: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (h->out) {
		fflush(h->out);
		dup2(fd, fileno(h->out));
		if (h->err_follows)
			dup2(fd, STDERR_FILENO);
		close(fd);
	} else if (!(h->out = fdopen(fd, "w"))) {
		close(fd);
		return -1;
	}
	if (h->keep && h->num >= h->keep)
		unlink(tr_printf("%s.%lld", h->base, (long long)(h->num - h->keep)));
	return 0;
}

/* switch_file(), or -S's size reached: the next file */
static void switch_output(struct host *h)
{
	h->num++;
	if (open_output(h) < 0)
		h->num--;
}

static void check_output_size(struct host *h)
{
	struct stat st;

	if (h->size && h->out && fstat(fileno(h->out), &st) == 0 && st.st_size >= h->size)
		switch_output(h);
}

static void write_out(void *ctx, const char *buf, size_t n)
{
	struct host *h = ctx;

	fwrite(buf, 1, n, h->out);
	fflush(h->out);
	check_output_size(h);
}

static struct host *switch_host;   /* rt.switch_file's (add_system) */

static struct mt_lua *system_state;   /* system()'s and switch_file()'s state */

static int l_switch_file(lua_State *L)
{
	(void)L;
	if (system_state)   /* what the handler printed before goes to this file */
		mt_lua_flush(system_state);
	if (switch_host)
		switch_output(switch_host);
	return 0;
}

/* -c CMD: a command without shell syntax is run directly, as stap does, so
 * that target() is the program itself; else through /bin/sh.  The command
 * gets a process group of its own, which the end of the session stops. */
struct command {
	pid_t pid;
	int go;          /* write end: the child execs when it reads a byte */
	int execd;       /* read end: closes at the child's exec */
};

static int start_command(const char *cmd, struct command *c)
{
	int go[2], exec_pipe[2];

	/* the child waits for begin (and the kernel handlers it arms) before
	 * it becomes the command, as stap's -c command does; exec_pipe closes
	 * at the exec: its end says the command is the program now
	 * (process.begin reads its name and program) */
	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(exec_pipe, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	c->pid = fork();
	if (c->pid == 0) {
		char b;
		close(exec_pipe[0]);
		close(go[1]);
		setpgid(0, 0);
		ssize_t n;
		do
			n = read(go[0], &b, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);   /* marktap ended before begin did */
		if (!cmd[strcspn(cmd, "|&;<>()$`\\\"'*?[#~=%{}\n")]) {
			char *copy = strdup(cmd), *save = NULL, *w;
			char **argv = calloc(strlen(cmd) / 2 + 2, sizeof(*argv));
			int n = 0;
			for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
				argv[n++] = w;
			if (n) {
				execvp(argv[0], argv);
				fprintf(stderr, "ERROR: cannot run %s: %s\n", argv[0], strerror(errno));
				_exit(127);
			}
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(exec_pipe[1]);
	close(go[0]);
	if (c->pid < 0) {
		close(exec_pipe[0]);
		close(go[1]);
		return -1;
	}
	setpgid(c->pid, c->pid);
	c->go = go[1];
	c->execd = exec_pipe[0];
	return 0;
}

/* Let the command go, and wait until it is the program. */
static void release_command(struct command *c)
{
	char b = 'g';

	if (c->go < 0)
		return;
	if (write(c->go, &b, 1) == 1)
		while (read(c->execd, &b, 1) < 0 && errno == EINTR)
			;
	close(c->go);
	close(c->execd);
	c->go = c->execd = -1;
}

/*
 * system(CMD) of handlers that run here (begin, end, timers, process.*,
 * input.*): CMD through /bin/sh in the background, as marktap's user,
 * with marktap's output, as stap's staprun runs it.  A grandchild runs it
 * so that nothing waits for it and no zombie is left.  Handlers in traced
 * processes and in the kernel have no rt.system: system() is an error
 * there (tapsets/logging.stp).
 */

static int l_sample_ip(lua_State *L);
static int l_sample_user(lua_State *L);
static int l_sample_kbacktrace(lua_State *L);
static int l_sample_ubacktrace(lua_State *L);

static int l_system(lua_State *L)
{
	const char *cmd = luaL_checkstring(L, 1);
	pid_t pid;

	/* stap starts it after the probe: the probe's output comes first */
	if (system_state)
		mt_lua_flush(system_state);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (fork() == 0) {
			setsid();
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return 0;
}

/* rt.self_pid(): marktap's own pid (stp_pid(), stap's stapio), whatever
 * process the running probe is about (process.begin's is the process's) */
static int l_self_pid(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)getpid());
	return 1;
}

static void add_system(struct mt_lua *mt)
{
	lua_State *L = mt_lua_state(mt);

	system_state = mt;
	lua_getglobal(L, "require");
	lua_pushstring(L, "mtrt");
	if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	lua_pushcfunction(L, l_system);
	lua_setfield(L, -2, "system");
	lua_pushcfunction(L, l_self_pid);
	lua_setfield(L, -2, "self_pid");
	lua_pushcfunction(L, l_sample_ip);
	lua_setfield(L, -2, "sample_ip");
	lua_pushcfunction(L, l_sample_user);
	lua_setfield(L, -2, "sample_user");
	lua_pushcfunction(L, l_sample_kbacktrace);
	lua_setfield(L, -2, "sample_kbacktrace");
	lua_pushcfunction(L, l_sample_ubacktrace);
	lua_setfield(L, -2, "sample_ubacktrace");
	tr_kread_add(L);
	if (switch_host) {   /* -S: switch_file() switches -o's file */
		lua_pushcfunction(L, l_switch_file);
		lua_setfield(L, -2, "switch_file");
	}
	lua_pop(L, 1);
}

/* target() in this state: the -c command or -x process. */
static void set_target(struct mt_lua *mt, long pid)
{
	lua_State *L = mt_lua_state(mt);
	char code[96];

	snprintf(code, sizeof(code), "local t = %ld; require('mtrt').target = function() return t end", pid);
	if (luaL_dostring(L, code) != LUA_OK)
		lua_pop(L, 1);
}

/*
 * process.begin and process.end run here, in marktap, for the process of
 * -c or -x: marktap sees that process start (it starts it, or attaches)
 * and end (waits for it).  While they run, pid(), tid(), ppid(), uid()...
 * and execname() are that process's, read from /proc (at the end it is
 * not reaped yet).  Other hits keep the context of the host below.
 */
struct proc_ctx {
	struct mt_lua_host host;
	const struct mt_lua_host *inner;   /* kernel markers' context, or NULL */
	long pid;                          /* the process of the running probe, or 0 */
	long tid;                          /* its thread (a thread's begin/end), or pid */
	const char *comm;                  /* its name when /proc has it no more */
	bool sample;                       /* a perf sample's: pid may be 0 (idle) */
	long cpu;                          /* the sample's CPU */
	uint64_t ip;                       /* the sample's instruction pointer */
	const struct tr_perf_sample *chain; /* the sample's callchain */
};

static struct proc_ctx proc_ctx;

static long proc_status(long pid, const char *key, int field)
{
	char path[64], line[256];
	long v = -1;
	size_t n = strlen(key);

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	FILE *fp = fopen(path, "r");
	while (fp && fgets(line, sizeof(line), fp))
		if (!strncmp(line, key, n)) {
			char *p = line + n;
			for (int i = 0; i <= field; i++)
				v = strtol(p, &p, 10);
			break;
		}
	if (fp)
		fclose(fp);
	return v;
}

#define PROC_ID(fn, self, key, field)                                           \
	static int64_t proc_##fn(void *ctx)                                     \
	{                                                                        \
		(void)ctx;                                                       \
		if (proc_ctx.pid || proc_ctx.sample)                             \
			return key ? proc_status(proc_ctx.pid, key, field) : proc_ctx.pid; \
		return proc_ctx.inner && proc_ctx.inner->fn ? proc_ctx.inner->fn(proc_ctx.inner->ctx) : self; \
	}
PROC_ID(pid, mt_lua_self_pid(), NULL, 0)
PROC_ID(ppid, getppid(), "PPid:", 0)
PROC_ID(uid, getuid(), "Uid:", 0)
PROC_ID(euid, geteuid(), "Uid:", 1)
PROC_ID(gid, getgid(), "Gid:", 0)
PROC_ID(egid, getegid(), "Gid:", 1)
/* The CPU: a sample's, else where this runs (a process probe runs here). */
static int64_t proc_cpu(void *ctx)
{
	(void)ctx;
	if (proc_ctx.sample)
		return proc_ctx.cpu;
	if (!proc_ctx.pid && proc_ctx.inner && proc_ctx.inner->cpu)
		return proc_ctx.inner->cpu(proc_ctx.inner->ctx);
	return mt_lua_self_cpu();
}

static int64_t proc_tid(void *ctx)
{
	(void)ctx;
	if (proc_ctx.sample)
		return proc_ctx.tid;
	if (proc_ctx.pid)
		return proc_ctx.tid ? proc_ctx.tid : proc_ctx.pid;
	return proc_ctx.inner && proc_ctx.inner->tid ? proc_ctx.inner->tid(proc_ctx.inner->ctx) : mt_lua_self_tid();
}

static void proc_execname(void *ctx, char *buf, size_t size)
{
	(void)ctx;
	if (proc_ctx.sample && proc_ctx.pid == 0) {
		snprintf(buf, size, "swapper/%ld", proc_ctx.cpu);   /* the CPU's idle task */
	} else if (proc_ctx.pid && proc_ctx.comm) {
		snprintf(buf, size, "%s", proc_ctx.comm);
	} else if (proc_ctx.pid) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%ld/comm", proc_ctx.pid);
		FILE *fp = fopen(path, "r");
		buf[0] = '\0';
		if (fp && fgets(buf, (int)size, fp))
			buf[strcspn(buf, "\n")] = '\0';
		if (fp)
			fclose(fp);
	} else if (proc_ctx.inner && proc_ctx.inner->execname) {
		proc_ctx.inner->execname(proc_ctx.inner->ctx, buf, size);
	} else {
		mt_lua_self_execname(buf, size);
	}
}

/* The process's memory (user_string of an address), by process_vm_readv. */
static int proc_read_mem(void *ctx, uint64_t addr, void *dst, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)addr, n };

	if (proc_ctx.pid)
		return process_vm_readv((pid_t)proc_ctx.pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
	if (proc_ctx.inner && proc_ctx.inner->read_mem)
		return proc_ctx.inner->read_mem(proc_ctx.inner->ctx, addr, dst, n);
	(void)ctx;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* A process probe's time is now, not a recorded kernel event's. */
static int64_t proc_clock_ns(void *ctx, int realtime)
{
	struct timespec ts;

	(void)ctx;
	if (!proc_ctx.pid && proc_ctx.inner && proc_ctx.inner->clock_ns)
		return proc_ctx.inner->clock_ns(proc_ctx.inner->ctx, realtime);
	clock_gettime(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const struct mt_lua_host *proc_host(const struct mt_lua_host *inner)
{
	proc_ctx.inner = inner;
	proc_ctx.host = inner ? *inner : (struct mt_lua_host){0};
	proc_ctx.host.pid = proc_pid;
	proc_ctx.host.tid = proc_tid;
	proc_ctx.host.ppid = proc_ppid;
	proc_ctx.host.uid = proc_uid;
	proc_ctx.host.euid = proc_euid;
	proc_ctx.host.gid = proc_gid;
	proc_ctx.host.egid = proc_egid;
	proc_ctx.host.cpu = proc_cpu;
	proc_ctx.host.execname = proc_execname;
	proc_ctx.host.read_mem = proc_read_mem;
	if (inner && inner->clock_ns)
		proc_ctx.host.clock_ns = proc_clock_ns;
	return &proc_ctx.host;
}

/* The program of -c's or -x's process, read while it runs (an exited
 * process has no /proc/PID/exe left for process("P").end). */
static char target_exe[PATH_MAX];

static void note_target_exe(long pid)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%ld/exe", pid);
	n = readlink(link, target_exe, sizeof(target_exe) - 1);
	target_exe[n > 0 ? n : 0] = '\0';
}

/* Which process and thread an event is about; exe and comm where /proc
 * may not have them (NULL: read it there); exec_only: a new program, for
 * process("P").begin only. */
struct proc_hit {
	long pid, tid;
	const char *exe, *comm;
	bool thread, exec_only;
};

/* Does process[("P")|(PID)][.thread].begin/.end name the process? */
static bool proc_matches(const struct tr_resolved *r, const struct proc_hit *h)
{
	if (r->thread != h->thread || (h->exec_only && !r->path))
		return false;
	if (r->proc_pid)
		return r->proc_pid == h->pid;
	return !r->path || !strcmp(h->exe ? h->exe : target_exe, r->path);
}

static void run_here(struct mt_lua *mt, struct tr_procs *ss, struct tr_kmark *km, int id);

/* The process.begin (or .end) probes of a process, in its context. */
static void run_process_hit(struct mt_lua *mt, struct tr_session *s, struct tr_procs *ss,
			    struct tr_kmark *km, enum tr_pkind kind, const struct proc_hit *h)
{
	for (unsigned i = 0; i < s->probes.n && !mt_lua_stopping(mt); i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		if (r->kind != kind || !proc_matches(r, h))
			continue;
		int id = mt_lua_handler(mt, tr_printf("probe_%u", p->id));
		proc_ctx.pid = h->pid;
		proc_ctx.tid = h->tid;
		proc_ctx.comm = h->comm;
		if (id >= 0)
			run_here(mt, ss, km, id);
		proc_ctx.pid = proc_ctx.tid = 0;
		proc_ctx.comm = NULL;
	}
}

/* -c's or -x's process (its program read at the start: target_exe). */
static void run_process_probes(struct mt_lua *mt, struct tr_session *s, struct tr_procs *ss,
			       struct tr_kmark *km, enum tr_pkind kind, long pid)
{
	struct proc_hit h = { .pid = pid, .tid = pid };

	run_process_hit(mt, s, ss, km, kind, &h);
}

/*
 * Without -c or -x: every process of the machine, from the kernel's
 * process connector (procev.c).  A process's end comes when it is gone
 * from /proc, so its name and program are kept from its start or exec,
 * in a table indexed by pid (two live processes 65536 pids apart share a
 * slot: the later one's end then reads "" as its name).
 */
enum { KNOWN_SLOTS = 65536 };
struct known {
	int pid;
	char comm[16];
	char *exe;
	bool family;    /* with -c or -x: the target or a process it made */
};
static struct known *known;
static long family_root;  /* with -c or -x: the target; 0: every process */

static const struct known *known_of(int pid);

/* What the process runs now: from /proc, or at a fork the parent's (the
 * child may have run exec already by the time /proc is read). */
static struct known *know(int pid, int parent)
{
	char path[64], exe[PATH_MAX];
	struct known *k = &known[(unsigned)pid % KNOWN_SLOTS];
	const struct known *pk = parent ? known_of(parent) : NULL;
	ssize_t n;

	free(k->exe);
	k->pid = pid;
	k->exe = NULL;
	k->comm[0] = '\0';
	k->family = pk && pk->family;   /* a child of the target's family */
	if (pk && pk != k) {
		memcpy(k->comm, pk->comm, sizeof(k->comm));
		k->exe = pk->exe ? strdup(pk->exe) : NULL;
		return k;
	}
	if (parent)
		pid = parent;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	FILE *fp = fopen(path, "r");
	if (fp && fgets(k->comm, sizeof(k->comm), fp))
		k->comm[strcspn(k->comm, "\n")] = '\0';
	if (fp)
		fclose(fp);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		k->exe = strdup(exe);
	}
	return k;
}

/* The target of -c or -x heads the family process probes follow. */
static void family_start(long target)
{
	family_root = target;
	know((int)target, 0)->family = true;
}

static const struct known *known_of(int pid)
{
	const struct known *k = &known[(unsigned)pid % KNOWN_SLOTS];

	return k->pid == pid ? k : NULL;
}

/* As stap: process.begin also runs once for each process already there
 * when the session starts (user processes: those with a program). */
static void existing_processes(struct mt_lua *mt, struct tr_session *s, struct tr_procs *ss,
			       struct tr_kmark *km)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d)) && !mt_lua_stopping(mt)) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid > 0x7fffffff)
			continue;
		const struct known *k = know((int)pid, 0);
		if (!k->exe)
			continue;
		struct proc_hit h = { .pid = pid, .tid = pid, .exe = k->exe };
		run_process_hit(mt, s, ss, km, P_PROC_BEGIN, &h);
	}
	if (d)
		closedir(d);
}

static void process_events(struct mt_lua *mt, struct tr_session *s, struct tr_procs *ss,
			   struct tr_kmark *km, int fd)
{
	static bool lost_said, gone_said;
	struct tr_procev ev[64];
	int n = tr_procev_read(fd, ev, 64);

	if (n < 0 && !lost_said) {
		fputs("WARNING: process events lost (the kernel's connector buffer overflowed): "
		      "process.begin/.end missed some processes\n", stderr);
		lost_said = true;
	}
	for (int i = 0; i < n && !mt_lua_stopping(mt); i++) {
		struct known *k = NULL;
		struct proc_hit h = { .pid = ev[i].tgid, .tid = ev[i].pid, .thread = ev[i].pid != ev[i].tgid };
		const struct known *before = known_of(ev[i].tgid);
		bool family = ev[i].kind == 'b' ? known_of(ev[i].parent) && known_of(ev[i].parent)->family
						: before && before->family;
		if (ev[i].kind == 'x' && h.thread)
			continue;
		/* with -c or -x: only the target's family, and the target's own
		 * start and end are the command's (run_process_probes) */
		if (family_root && (!family || (!h.thread && ev[i].tgid == family_root)))
			continue;
		if (ev[i].kind != 'e' && !h.thread) {  /* a new process, or a new program */
			k = know(ev[i].tgid, ev[i].kind == 'b' ? ev[i].parent : 0);
			k->family = family;
		} else {
			k = (struct known *)known_of(ev[i].tgid);
		}
		if (k && !k->exe && ev[i].kind == 'x' && family_root && !gone_said) {
			/* the exec's event names no program: a process of the
			 * command's family that ran one and ended before this
			 * read /proc is missed (without -c or -x, the machine's
			 * short-lived processes are, as marktap.1 says) */
			fputs("WARNING: process.begin/.end missed a process that ran a program and ended "
			      "before marktap could read which (the kernel's process events do not say)\n",
			      stderr);
			gone_said = true;
		}
		if (k && !k->exe)
			continue;       /* no program: a kernel thread, no user process */
		h.exe = k && k->exe ? k->exe : "";
		h.comm = ev[i].kind == 'e' ? (k ? k->comm : "") : NULL;
		h.exec_only = ev[i].kind == 'x';
		run_process_hit(mt, s, ss, km, ev[i].kind == 'e' ? P_PROC_END : P_PROC_BEGIN, &h);
	}
}

/* Each byte of marktap's input to procfs("__stdin").write (input.char,
 * input.line); 0 at the end of the input. */
static int feed_stdin(struct mt_lua *mt, struct tr_session *s, struct tr_procs *ss, struct tr_kmark *km)
{
	char buf[256];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : 0;
	for (ssize_t k = 0; k < n && !mt_lua_stopping(mt); k++)
		for (unsigned i = 0; i < s->probes.n; i++) {
			struct tr_probe *p = s->probes.items[i];
			struct tr_resolved *r = p->resolved.items[0];
			if (r->kind != P_PROCFS || !r->procfs_write || strcmp(r->procfs_file, "__stdin"))
				continue;
			int id = mt_lua_handler(mt, tr_printf("probe_%u", p->id));
			lua_State *L = mt_lua_state(mt);
			if (id < 0 || !lua_checkstack(L, 3))
				continue;
			lua_pushstring(L, "__stdin");
			lua_pushstring(L, "");
			lua_pushlstring(L, buf + k, 1);
			int kernel = tr_kmark_pull(km);
			if (ss)
				tr_procs_pull(ss);
			if (ss || kernel)
				mt_lua_sync_mark(mt);
			mt_lua_run(mt, id, 3);
			tr_kmark_push(km);
			if (ss)
				tr_procs_push(ss);
		}
	return n > 0;
}

/*
 * timer.profile and perf.type(T).config(C)[.sample(N)]: their samples
 * (perfev.c) run the handler here, in the sample's context: pid(),
 * tid(), cpu(), execname() ("swapper/N" for a CPU's idle task), and
 * user_mode(), uaddr(), addr() from its instruction pointer (rt.sample_*,
 * which the context tapset asks first).
 */
struct sampled {
	struct tr_perfev *pe;
	int id;                 /* the handler */
};

static int l_sample_ip(lua_State *L)
{
	if (!proc_ctx.sample)
		return 0;
	lua_pushinteger(L, (lua_Integer)proc_ctx.ip);
	return 1;
}

/* backtrace(), ubacktrace() of a sample: its callchain's halves as
 * addresses in hex, separated by spaces (mt_kstack.c's form); outside a
 * sample marktap's own handlers have no stack to give */
static int push_chain(lua_State *L, const uint64_t *ips, uint32_t n)
{
	mt_lua_push_addrs(L, ips, n);
	return 1;
}

static int l_sample_kbacktrace(lua_State *L)
{
	if (!proc_ctx.sample || !proc_ctx.chain)
		return 0;   /* not a sample's: mt_rt.lua's kbacktrace says why */
	return push_chain(L, proc_ctx.chain->kernel, proc_ctx.chain->nkernel);
}

static int l_sample_ubacktrace(lua_State *L)
{
	if (!proc_ctx.sample || !proc_ctx.chain) {
		lua_pushliteral(L, "");
		return 1;
	}
	return push_chain(L, proc_ctx.chain->user, proc_ctx.chain->nuser);
}

/* x86_64: the kernel's half of the address space has the top bit set */
static int l_sample_user(lua_State *L)
{
	if (!proc_ctx.sample)
		return 0;
	lua_pushinteger(L, !(proc_ctx.ip >> 63));
	return 1;
}

static void run_samples(struct mt_lua *mt, struct tr_procs *ss, struct tr_kmark *km, struct sampled *sp,
			unsigned n, uint64_t *lost)
{
	struct tr_perf_sample buf[256];

	for (unsigned i = 0; i < n && !mt_lua_stopping(mt); i++) {
		int got = tr_perfev_read(sp[i].pe, buf, 256, lost);
		for (int k = 0; k < got && !mt_lua_stopping(mt); k++) {
			proc_ctx.sample = true;
			proc_ctx.pid = buf[k].pid;
			proc_ctx.tid = buf[k].tid;
			proc_ctx.cpu = buf[k].cpu;
			proc_ctx.ip = buf[k].ip;
			proc_ctx.chain = &buf[k];
			run_here(mt, ss, km, sp[i].id);
			proc_ctx.chain = NULL;
			proc_ctx.sample = false;
			proc_ctx.pid = proc_ctx.tid = 0;
		}
	}
}

/* Open every sampled point's events before begin: *why when they
 * cannot be (tr_run_check says so for each point). */
static struct sampled *open_samples(struct tr_session *s, unsigned *n, const char **why)
{
	struct sampled *sp = tr_alloc(sizeof(*sp) * (s->probes.n + 1));

	*n = 0;
	for (unsigned i = 0; i < s->probes.n && !*why; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		char err[256];
		if ((r->kind != P_PROFILE && r->kind != P_PERF) || r->perf_counter || r->path)
			continue;
		sp[*n].pe = tr_perfev_open(r, -1, err, sizeof(err));
		sp[*n].id = (int)p->id;   /* the handler's number, looked up once loaded */
		if (!sp[*n].pe)
			*why = tr_strdup(err);
		else
			(*n)++;
	}
	return sp;
}

/* A handler of this process; around it, the globals of the traced ones. */
static void run_here(struct mt_lua *mt, struct tr_procs *ss, struct tr_kmark *km, int id)
{
	int kernel = tr_kmark_pull(km);   /* handlers in marktap.ko: their changes */

	if (ss)
		tr_procs_pull(ss);
	if (ss || kernel)
		mt_lua_sync_mark(mt);
	mt_lua_run(mt, id, 0);
	tr_kmark_push(km);
	if (ss)
		tr_procs_push(ss);
}

static int stop_reason(struct mt_lua *mt, struct tr_procs *ss)
{
	int why = mt_lua_stopping(mt);

	return why ? why : ss ? tr_procs_stop_reason(ss) : 0;
}

/* A live run: what its setup opens, its loop serves, its finish closes. */
struct live {
	struct tr_session *s;
	struct host h;
	struct command cmd;             /* -c's, before and after it starts */
	struct mt_lua *mt;
	struct tr_procs *ss;             /* the traced processes, or NULL */
	struct tr_kmark *km;            /* the kernel markers, or NULL */
	struct timer *timers;
	unsigned ntimers, markers;
	bool input, proc_end;           /* procfs("__stdin") probes, process.end probes */
	struct tr_procfs *pf;           /* the procfs files, or NULL */
	int procev_fd;                  /* process.begin/.end without -c or -x, or -1 */
	struct sampled *sampled;        /* timer.profile and perf probes */
	unsigned nsampled;
	uint64_t samples_lost;
	int rc;                         /* the exit code */
};

/* The kernel's events the probes need, opened before anything starts:
 * -1 (rc 1) when a point cannot run, each said (tr_run_check). */
static int open_events(struct live *lv)
{
	struct tr_session *s = lv->s;
	const char *procev_why = NULL, *perf_why = NULL, *procfs_why = NULL;

	/* process.begin/.end without -c or -x: the kernel's process events */
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		enum tr_pkind k = ((struct tr_resolved *)p->resolved.items[0])->kind;
		char why[256];
		if ((k == P_PROC_BEGIN || k == P_PROC_END) && lv->procev_fd < 0 && !procev_why) {
			lv->procev_fd = tr_procev_open(why, sizeof(why));
			if (lv->procev_fd < 0)
				procev_why = tr_strdup(why);
			else
				known = tr_alloc(sizeof(*known) * KNOWN_SLOTS);
		}
	}
	lv->sampled = open_samples(s, &lv->nsampled, &perf_why);
	/* the files are there before begin, as stap's */
	lv->pf = tr_procfs_open(s, &procfs_why);
	if (tr_run_check(s, procev_why, perf_why, procfs_why)) {
		lv->rc = 1;
		return -1;
	}
	return 0;
}

/* The output, and the Lua state with the chunk loaded; the timers and
 * the kinds of probe the loop serves.  -1 (rc 1) when they cannot be. */
static int load_chunk(struct live *lv, const char *lua, size_t len)
{
	struct tr_session *s = lv->s;
	struct mt_lua_options o = {0};
	char err[512];

	if (s->switch_size && !s->output_file) {
		fputs("ERROR: -S switches the files of -o FILE: give -o\n", stderr);
		lv->rc = 1;
		return -1;
	}
	if (s->output_file && s->switch_size) {
		lv->h.base = s->output_file;
		lv->h.size = s->switch_size;
		lv->h.keep = s->switch_count;
		switch_host = &lv->h;
		if (open_output(&lv->h) < 0) {
			lv->h.out = stdout;
			lv->rc = 1;
			return -1;
		}
	} else if (s->output_file) {
		lv->h.out = fopen(s->output_file, "w");
		if (!lv->h.out) {
			fprintf(stderr, "ERROR: cannot open %s: %s\n", s->output_file, strerror(errno));
			lv->h.out = stdout;
			lv->rc = 1;
			return -1;
		}
	}
	tr_define_lua_limits(s, &o);
	o.write = write_out;
	o.ctx = &lv->h;
	o.guru = s->guru;
	lv->km = tr_kmark_new(s);
	o.host = proc_host(lv->km ? tr_kmark_host(lv->km) : NULL);
	lv->mt = mt_lua_new(&o);
	if (!lv->mt) {
		fputs("ERROR: cannot create the Lua state\n", stderr);
		lv->rc = 1;
		return -1;
	}
	if (mt_lua_load(lv->mt, lua, len, "=script", err, sizeof(err))) {
		fprintf(stderr, "ERROR: loading the translated script: %s\n", err);
		lv->rc = 1;
		return -1;
	}
	for (unsigned i = 0; i < lv->nsampled; i++)
		lv->sampled[i].id = mt_lua_handler(lv->mt, tr_printf("probe_%d", lv->sampled[i].id));
	lv->timers = tr_alloc(sizeof(*lv->timers) * (s->probes.n + 1));
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		if (r->kind == P_TIMER) {
			struct timer *t = &lv->timers[lv->ntimers++];
			t->id = mt_lua_handler(lv->mt, tr_printf("probe_%u", p->id));
			t->interval = r->interval_ns;
			t->randomize = r->randomize_ns;
		} else if (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL) {
			lv->markers++;
		} else if (r->kind == P_PROCFS && r->procfs_write && !strcmp(r->procfs_file, "__stdin")) {
			lv->input = true;
		} else if (r->kind == P_PROC_END) {
			lv->proc_end = true;
		}
	}
	return 0;
}

/* Everything started in order: the traced processes' session, the
 * kernel handlers, -c's command, then begin, then the command released
 * and process.begin.  -1 when the run ends before its loop. */
static int start(struct live *lv, const char *lua, size_t len)
{
	struct tr_session *s = lv->s;
	struct mt_lua *mt = lv->mt;

	if (lv->input)
		fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	fflush(NULL);
	lv->ss = tr_procs_new(s, mt, lua, len, fileno(lv->h.out));
	/* kernel.mark handlers run in marktap.ko when it has Lua and no
	 * traced process shares the globals (kmark.c) */
	if (lv->km && !tr_procs_wants_processes(lv->ss))
		tr_kmark_in_kernel(lv->km, lua, len, lv->h.out);
	if (!tr_procs_wants_processes(lv->ss) && !s->target_cmd && !s->target_pid) {
		tr_procs_free(lv->ss);
		lv->ss = NULL;
	}
	if (lv->ss && s->target_cmd && tr_procs_listen(lv->ss) < 0)
		return -1;
	/* kernel markers armed before -c's command starts (handlers on recorded
	 * events run from the main loop, so after begin); handlers that run in
	 * marktap.ko are loaded here and armed after begin (tr_kmark_begun) */
	if (lv->km && tr_kmark_start(lv->km, mt) < 0) {
		lv->rc = 1;
		return -1;
	}
	if (s->target_cmd) {
		if (start_command(s->target_cmd, &lv->cmd) < 0) {
			fprintf(stderr, "ERROR: cannot start %s: %s\n", s->target_cmd, strerror(errno));
			return -1;
		}
		lv->h.child = lv->h.target = lv->cmd.pid;
	} else if (s->target_pid) {
		lv->h.target = s->target_pid;
	}
	set_target(mt, (long)lv->h.target);
	add_system(mt);
	if (lv->ss)
		tr_procs_set_target(lv->ss, (long)lv->h.target);
	/* begin runs before -c's command does anything: it is released
	 * after begin (and after the kernel handlers are armed), and waits in
	 * libmarktap for the script, which leaves with the globals begin set */
	tr_run_probes(mt, s, P_BEGIN);
	if (tr_kmark_begun(lv->km, (long)lv->h.target) < 0) {   /* kernel handlers armed, with begin's values */
		lv->rc = 1;
		mt_lua_request_exit(mt);
	}
	mt_lua_sync_mark(mt);
	release_command(&lv->cmd);
	/* -x PID: a script with handlers for the process joins it (its
	 * agent); one of kernel and timer probes only has target() to filter
	 * with, as stap's -x, and needs nothing of the process but that it is */
	if (lv->ss && s->target_pid && !stop_reason(mt, lv->ss) && tr_procs_wants_processes(lv->ss) &&
	    tr_procs_attach(lv->ss, (int)s->target_pid) < 0) {
		lv->rc = 1;
		mt_lua_request_exit(mt);
	} else if (lv->ss && s->target_pid && !tr_procs_wants_processes(lv->ss) && kill((pid_t)s->target_pid, 0) < 0 &&
		   errno == ESRCH) {
		fprintf(stderr, "ERROR: -x %ld: no such process\n", s->target_pid);
		lv->rc = 1;
		mt_lua_request_exit(mt);
	}
	if (lv->h.target)
		note_target_exe((long)lv->h.target);
	if (lv->h.target && !stop_reason(mt, lv->ss))
		run_process_probes(mt, s, lv->ss, lv->km, P_PROC_BEGIN, (long)lv->h.target);
	if (lv->procev_fd >= 0 && lv->h.target)
		family_start((long)lv->h.target);
	else if (lv->procev_fd >= 0 && !stop_reason(mt, lv->ss))
		existing_processes(mt, s, lv->ss, lv->km);
	return 0;
}

/* Set up a run; -1 when it ends before its loop (lv->rc says how). */
static int run_setup(struct live *lv, const char *lua, size_t len)
{
	if (open_events(lv) || load_chunk(lv, lua, len))
		return -1;
	return start(lv, lua, len);
}

/* -c's command ended: its family's process.end, then its own (it is not
 * reaped yet: process.end still reads its /proc).  False while it runs. */
static bool child_ended(struct live *lv)
{
	siginfo_t si = {0};

	if (waitid(P_PID, (id_t)lv->h.child, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || !si.si_pid)
		return false;
	if (lv->procev_fd >= 0)     /* its family's ends came first */
		process_events(lv->mt, lv->s, lv->ss, lv->km, lv->procev_fd);
	if (lv->proc_end)
		run_process_probes(lv->mt, lv->s, lv->ss, lv->km, P_PROC_END, (long)lv->h.child);
	waitpid(lv->h.child, NULL, 0);
	lv->h.child = 0;
	return true;
}

/* The timers due at t, run; the next one's time lowers *wake. */
static void run_timers(struct live *lv, int64_t t, int64_t *wake)
{
	for (unsigned i = 0; i < lv->ntimers; i++) {
		struct timer *tm = &lv->timers[i];
		if (tm->next <= t) {
			run_here(lv->mt, lv->ss, lv->km, tm->id);
			int64_t jitter = tm->randomize ? (int64_t)(rand() % (2 * tm->randomize + 1)) - tm->randomize : 0;
			tm->next += tm->interval + jitter;
			if (tm->next < t)
				tm->next = t + tm->interval;
			if (stop_reason(lv->mt, lv->ss))
				break;
		}
		if (tm->next < *wake)
			*wake = tm->next;
	}
}

/*
 * The loop: timers, samples, process events, input, the traced
 * processes' globals and the kernel markers' rings, until exit(), a
 * signal, -T's timeout, the end of -c's command, or too many errors.
 * Sources that wait in a buffer are looked at every 10 ms.
 */
static void run_loop(struct live *lv)
{
	struct tr_session *s = lv->s;
	struct mt_lua *mt = lv->mt;
	int64_t start = tr_mono_ns(), deadline = s->timeout > 0 ? start + (int64_t)(s->timeout * 1e9) : 0;
	/* nothing to wait for: begin and end probes only (a script whose
	 * optional points named nothing still waits, as stap's does) */
	bool only_begin = lv->ntimers == 0 && !lv->markers && !lv->input && lv->procev_fd < 0 && !lv->nsampled &&
			  !s->target_cmd && !s->target_pid && !s->absent_points && !lv->pf;
	int pf_fd = tr_procfs_fd(lv->pf);
	int64_t next_pull = start + 1000000000;

	for (unsigned i = 0; i < lv->ntimers; i++)
		lv->timers[i].next = start + lv->timers[i].interval;
	while (!stop_reason(mt, lv->ss) && !interrupted && !only_begin) {
		int64_t t = tr_mono_ns(), wake = deadline ? deadline : t + 100000000;
		if (deadline && t >= deadline)
			break;
		if (lv->h.child > 0) {
			if (child_ended(lv))
				break;
			if (wake > t + 10000000)
				wake = t + 10000000;
		} else if (s->target_pid && lv->proc_end && kill((pid_t)s->target_pid, 0) < 0 && errno == ESRCH) {
			/* -x's process is gone (not our child: no /proc left to read) */
			run_process_probes(mt, s, lv->ss, lv->km, P_PROC_END, s->target_pid);
			lv->proc_end = false;
		}
		if (lv->nsampled) {   /* samples wait in their rings */
			run_samples(mt, lv->ss, lv->km, lv->sampled, lv->nsampled, &lv->samples_lost);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		if (lv->procev_fd >= 0) {   /* events wait in the socket */
			process_events(mt, s, lv->ss, lv->km, lv->procev_fd);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		if (lv->input) {
			struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
			if (poll(&in, 1, 0) > 0)
				lv->input = feed_stdin(mt, s, lv->ss, lv->km);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		/* readers and writers of the procfs files, waiting in marktap.ko */
		tr_procfs_serve(lv->pf, mt, lv->ss, lv->km);
		run_timers(lv, t, &wake);
		/* every second, the processes' globals come home: a process that
		 * is killed or execs loses at most a second of its changes */
		if (lv->ss && t >= next_pull) {
			tr_procs_pull(lv->ss);
			next_pull = t + 1000000000;
		}
		if (lv->ss && next_pull < wake)
			wake = next_pull;
		if (lv->km) {   /* kernel markers: their rings */
			tr_kmark_poll(lv->km);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		/* -S: what the processes and marktap.ko wrote counts too */
		check_output_size(&lv->h);
		t = tr_mono_ns();
		if (wake > t) {
			if (lv->ss) {
				/* (its own descriptors only: a request waits 10 ms at most) */
				if (pf_fd >= 0 && wake > t + 10000000)
					wake = t + 10000000;
				tr_procs_poll(lv->ss, (int)((wake - t + 999999) / 1000000));
			} else if (pf_fd >= 0) {
				/* a request wakes the loop at once */
				struct pollfd pfd = { .fd = pf_fd, .events = POLLIN };
				poll(&pfd, 1, (int)((wake - t + 999999) / 1000000));
			} else {
				struct timespec ts = { (wake - t) / 1000000000, (wake - t) % 1000000000 };
				nanosleep(&ts, NULL);
			}
		}
	}
}

/* The end: the last hits handled, end (or error) probes, the display of
 * the globals written and never read, and what went wrong, counted. */
static void run_finish(struct live *lv)
{
	struct mt_lua *mt = lv->mt;
	struct tr_procs *ss = lv->ss;

	if (ss)
		tr_procs_quit(ss);
	/* the files go before end runs: their waiting readers get EIO now */
	tr_procfs_close(lv->pf);
	lv->pf = NULL;
	tr_kmark_stop(lv->km, interrupted);   /* the handlers of the last events, before end */
	bool failed = stop_reason(mt, ss) == MT_LUA_STOP_ERRORS || tr_kmark_failed(lv->km);
	tr_run_probes(mt, lv->s, failed ? P_ERROR : P_END);
	int id = mt_lua_handler(mt, "__display");
	if (id >= 0)
		mt_lua_run(mt, id, 0);
	int64_t errors = mt_lua_errors(mt) + (ss ? tr_procs_errors(ss) : 0) + tr_kmark_in_kernel_errors(lv->km);
	int64_t skips = mt_lua_skips(mt) + (ss ? tr_procs_skips(ss) : 0);
	if (errors > 0)
		lv->rc = 1;
	mt_lua_flush(mt);
	fflush(lv->h.out);
	if (errors || skips)
		fprintf(stderr, "WARNING: Number of errors: %lld, skipped probes: %lld\n",
			(long long)errors, (long long)skips);
	if (lv->samples_lost)
		fprintf(stderr, "WARNING: %llu perf samples lost (their rings were full)\n",
			(unsigned long long)lv->samples_lost);
	if (ss && tr_procs_lost(ss))
		fprintf(stderr, "WARNING: %u process(es) ended without handing their last results "
			"(killed by a signal?): their changes since the last exchange are lost\n",
			tr_procs_lost(ss));
}

/* Whatever the setup opened, closed; -c's command stopped. */
static void run_close(struct live *lv)
{
	if (lv->cmd.go >= 0) {   /* never released: the child leaves without running */
		close(lv->cmd.go);
		close(lv->cmd.execd);
	}
	tr_procev_close(lv->procev_fd);
	tr_procfs_close(lv->pf);
	for (unsigned i = 0; i < lv->nsampled; i++)
		tr_perfev_close(lv->sampled[i].pe);
	tr_kmark_free(lv->km);
	system_state = NULL;
	mt_lua_free(lv->mt);
	tr_procs_free(lv->ss);
	if (lv->h.child > 0) {
		kill(-lv->h.child, SIGTERM);
		waitpid(lv->h.child, NULL, 0);
	}
	if (lv->h.out != stdout)
		fclose(lv->h.out);
}

/*
 * -F: stap's flight recorder.  marktap forks before the setup; the child,
 * in a session of its own, sets up the run while its errors still reach
 * the terminal, then says so on a pipe and leaves the terminal (its
 * stderr goes into the output: -o's file, or without -o the in-memory
 * recorder of flight.c that `marktap -A PID` reads).  The parent waits
 * for that word and prints the child's pid, as stap does (kill PID ends
 * the session, its end probes run), and without -o how to reattach; a
 * child that fails before gives the parent its exit status.  Returns the
 * pipe's end in the child.
 */
static int flight_fork(bool in_memory)
{
	int p[2], status;
	pid_t pid;
	char c;

	fflush(NULL);
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "ERROR: -F: cannot start the background session: %s\n", strerror(errno));
		_exit(1);
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		return p[1];
	}
	close(p[1]);
	ssize_t n;
	while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1) {
		printf("%ld\n", (long)pid);
		fflush(stdout);
		if (in_memory)
			tr_flight_hint((long)pid);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* -F's child, set up: off the terminal, and the parent told */
static void flight_detach(struct live *lv, int ready)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	fflush(NULL);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		if (fileno(lv->h.out) != STDOUT_FILENO)   /* (-S's files are on it) */
			dup2(null, STDOUT_FILENO);
		close(null);
	}
	dup2(fileno(lv->h.out), STDERR_FILENO);
	lv->h.err_follows = true;
	if (write(ready, "R", 1) != 1)
		fprintf(stderr, "WARNING: -F: the starting marktap was not told (%s)\n", strerror(errno));
	close(ready);
}

int tr_run_live(struct tr_session *s, const char *lua, size_t len)
{
	struct live lv = {
		.s = s, .h = { .out = stdout }, .cmd = { .pid = -1, .go = -1, .execd = -1 }, .procev_fd = -1,
	};
	int ready = s->flight ? flight_fork(!s->output_file) : -1;

	if (ready >= 0 && !s->output_file) {   /* the output into the recorder's ring */
		int fd = tr_flight_open((size_t)(s->buffer_mb ? s->buffer_mb : 1) << 20, ready);
		if (fd < 0 || !(lv.h.out = fdopen(fd, "w")))
			return 1;
	}
	if (!run_setup(&lv, lua, len)) {
		if (ready >= 0)
			flight_detach(&lv, ready);
		run_loop(&lv);
		run_finish(&lv);
	}
	run_close(&lv);
	return lv.rc;
}
