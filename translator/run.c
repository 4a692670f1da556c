/*
 * run.c - pass 5 in the marktap process, and pass 4's module file.
 *
 * The chunk is loaded into a runtime state (libmtlua); begin probes run by
 * priority, then timers fire from one loop until exit(), SIGINT/SIGTERM,
 * -T's timeout, the end of -c's command, or too many errors; then the end
 * probes (the error probes instead, after errors) and the display of the
 * globals that were written but never read.  Marker probes run in the
 * traced processes (session.c and runtime/script/host.c).
 *
 * The module file (-p4) is text: a manifest of "-- key: value" lines, then
 * the chunk.  It runs without the script and the translator.
 */
#define _GNU_SOURCE
#include "tr_run.h"
#include "mt_lua.h"

#include <lauxlib.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

int64_t tr_define_value(struct tr_session *s, const char *name, int64_t dflt)
{
	size_t n = strlen(name);

	for (unsigned i = s->defines.n; i-- > 0;) {
		const char *d = s->defines.items[i];
		if (!strncmp(d, name, n) && (d[n] == '=' || d[n] == '\0'))
			return d[n] == '=' ? strtoll(d + n + 1, NULL, 0) : 1;
	}
	return dflt;
}

/* The -D limits of the script into the Lua runtime's options (the names
 * are mt_lua_limit_names: one list for marktap, --trace and the processes) */
void tr_lua_limits(struct tr_session *s, struct mt_lua_options *o)
{
	for (unsigned i = 0; mt_lua_limit_names[i]; i++) {
		int64_t v = tr_define_value(s, mt_lua_limit_names[i], INT64_MIN);
		if (v != INT64_MIN)
			mt_lua_option_set(o, mt_lua_limit_names[i], v);
	}
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timer {
	int id;
	int64_t interval, randomize, next;
};

struct host {
	FILE *out;
	pid_t child;
	int64_t target;
};

static void write_out(void *ctx, const char *buf, size_t n)
{
	struct host *h = ctx;

	fwrite(buf, 1, n, h->out);
	fflush(h->out);
}

static int cmp_priority(const void *a, const void *b)
{
	const struct tr_probe *x = *(struct tr_probe *const *)a, *y = *(struct tr_probe *const *)b;
	const struct tr_resolved *rx = x->resolved.items[0], *ry = y->resolved.items[0];

	if (rx->priority != ry->priority)
		return rx->priority < ry->priority ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void run_kind(struct mt_lua *mt, struct tr_session *s, enum tr_pkind kind)
{
	struct tr_probe **list = tr_alloc(sizeof(*list) * (s->probes.n + 1));
	unsigned n = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		if (((struct tr_resolved *)p->resolved.items[0])->kind == kind)
			list[n++] = p;
	}
	/* stable by id within a priority */
	qsort(list, n, sizeof(*list), cmp_priority);
	for (unsigned i = 0; i < n; i++) {
		int id = mt_lua_handler(mt, tr_printf("probe_%u", list[i]->id));
		if (id >= 0)
			mt_lua_run(mt, id, 0);
		if (kind == P_BEGIN && mt_lua_stopping(mt))
			break;
	}
	free(list);
}

void tr_run_probes(struct mt_lua *mt, struct tr_session *s, enum tr_pkind kind)
{
	run_kind(mt, s, kind);
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
static struct mt_lua *system_state;   /* the state whose rt.system it is */

static int l_sample_ip(lua_State *L);
static int l_sample_user(lua_State *L);

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
	lua_pushcfunction(L, l_sample_ip);
	lua_setfield(L, -2, "sample_ip");
	lua_pushcfunction(L, l_sample_user);
	lua_setfield(L, -2, "sample_user");
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

static void run_here(struct mt_lua *mt, struct tr_sess *ss, struct tr_kmark *km, int id);

/* The process.begin (or .end) probes of a process, in its context. */
static void run_process_hit(struct mt_lua *mt, struct tr_session *s, struct tr_sess *ss,
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
static void run_process_probes(struct mt_lua *mt, struct tr_session *s, struct tr_sess *ss,
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
static void existing_processes(struct mt_lua *mt, struct tr_session *s, struct tr_sess *ss,
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

static void process_events(struct mt_lua *mt, struct tr_session *s, struct tr_sess *ss,
			   struct tr_kmark *km, int fd)
{
	static bool lost_said;
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
static int feed_stdin(struct mt_lua *mt, struct tr_session *s, struct tr_sess *ss, struct tr_kmark *km)
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
				tr_sess_pull(ss);
			if (ss || kernel)
				mt_lua_sync_mark(mt);
			mt_lua_run(mt, id, 3);
			tr_kmark_push(km);
			if (ss)
				tr_sess_push(ss);
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

/* x86_64: the kernel's half of the address space has the top bit set */
static int l_sample_user(lua_State *L)
{
	if (!proc_ctx.sample)
		return 0;
	lua_pushinteger(L, !(proc_ctx.ip >> 63));
	return 1;
}

static void run_samples(struct mt_lua *mt, struct tr_sess *ss, struct tr_kmark *km, struct sampled *sp,
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
			run_here(mt, ss, km, sp[i].id);
			proc_ctx.sample = false;
			proc_ctx.pid = proc_ctx.tid = 0;
		}
	}
}

/* Open every sampled point's events before begin: NULL and *why when
 * they cannot be (run.c says so for each point). */
static struct sampled *open_samples(struct tr_session *s, unsigned *n, const char **why)
{
	struct sampled *sp = tr_alloc(sizeof(*sp) * (s->probes.n + 1));

	*n = 0;
	for (unsigned i = 0; i < s->probes.n && !*why; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		char err[256];
		if ((r->kind != P_PROFILE && r->kind != P_PERF) || r->perf_counter || r->path || s->trace_dir)
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

/*
 * Points pass 2 accepts, as stap does, that this session cannot run: an
 * error that says why, before anything starts.
 */
static int check_runnable(struct tr_session *s, const char *procev_why, const char *perf_why)
{
	int bad = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		const char *why = NULL;
		if ((r->kind == P_PROFILE || (r->kind == P_PERF && !r->perf_counter && !r->path)) && perf_why)
			why = tr_printf("its samples need %s", perf_why);
		else if (r->kind == P_PERF && r->path)
			why = "marktap samples perf events of every CPU, not of one program";
		else if (r->kind == P_PROCFS && (!r->procfs_write || strcmp(r->procfs_file, "__stdin")))
			why = "marktap serves no files under /proc (stap's /proc/systemtap/MODULE/); "
			      "only procfs(\"__stdin\").write, input.char and input.line run, on marktap's input";
		else if ((r->kind == P_PROC_BEGIN || r->kind == P_PROC_END) && r->thread &&
			 (s->target_cmd || s->target_pid) && procev_why)
			why = tr_printf("with -c or -x, marktap sees that process start and end by itself; "
					"its threads need %s", procev_why);
		else if ((r->kind == P_PROC_BEGIN || r->kind == P_PROC_END) && procev_why &&
			 !s->target_cmd && !s->target_pid)
			why = tr_printf("without -c or -x it needs %s", procev_why);
		else if (r->kind == P_KTRACE)
			why = "marktap.ko attaches only the tracepoints behind its kernel markers "
			      "(kernel.mark(\"NAME\"), the subsystem tapsets)";
		else if (r->kind == P_NETFILTER)
			why = "marktap.ko registers no netfilter hooks";
		else if (r->kind == P_PERF && r->perf_counter)
			why = "marktap reads no perf counters (@perf)";
		else if (r->kind >= P_PROFILE && s->trace_dir)
			why = "a stored trace (--trace) holds no such events";
		if (why) {
			fprintf(stderr, "ERROR: probe point %s cannot run: %s\n", r->pp, why);
			bad++;
		}
	}
	return bad;
}

/* A handler of this process; around it, the globals of the traced ones. */
static void run_here(struct mt_lua *mt, struct tr_sess *ss, struct tr_kmark *km, int id)
{
	int kernel = tr_kmark_pull(km);   /* handlers in marktap.ko: their changes */

	if (ss)
		tr_sess_pull(ss);
	if (ss || kernel)
		mt_lua_sync_mark(mt);
	mt_lua_run(mt, id, 0);
	tr_kmark_push(km);
	if (ss)
		tr_sess_push(ss);
}

static int stop_reason(struct mt_lua *mt, struct tr_sess *ss)
{
	int why = mt_lua_stopping(mt);

	return why ? why : ss ? tr_sess_stop_reason(ss) : 0;
}

int tr_run(struct tr_session *s, const char *lua, size_t len)
{
	struct host h = { .out = stdout };
	struct command cmd = { .pid = -1, .go = -1, .execd = -1 };
	struct mt_lua_options o = {0};
	struct mt_lua *mt;
	struct tr_sess *ss = NULL;
	struct tr_kmark *km = NULL;
	struct timer *timers;
	unsigned ntimers = 0, markers = 0;
	bool input = false, proc_end = false;
	char err[512];
	int rc = 0;

	/* process.begin/.end without -c or -x: the kernel's process events */
	int procev_fd = -1;
	const char *procev_why = NULL;
	for (unsigned i = 0; i < s->probes.n && !s->trace_dir; i++) {
		struct tr_probe *p = s->probes.items[i];
		enum tr_pkind k = ((struct tr_resolved *)p->resolved.items[0])->kind;
		char why[256];
		if ((k == P_PROC_BEGIN || k == P_PROC_END) && procev_fd < 0 && !procev_why) {
			procev_fd = tr_procev_open(why, sizeof(why));
			if (procev_fd < 0)
				procev_why = tr_strdup(why);
			else
				known = tr_alloc(sizeof(*known) * KNOWN_SLOTS);
		}
	}
	unsigned nsampled = 0;
	const char *perf_why = NULL;
	uint64_t samples_lost = 0;
	struct sampled *sampled = open_samples(s, &nsampled, &perf_why);
	if (check_runnable(s, procev_why, perf_why)) {
		tr_procev_close(procev_fd);
		for (unsigned i = 0; i < nsampled; i++)
			tr_perfev_close(sampled[i].pe);
		return 1;
	}
	if (s->trace_dir)
		return tr_trace_run(s, lua, len);
	if (s->output_file) {
		h.out = fopen(s->output_file, "w");
		if (!h.out) {
			fprintf(stderr, "ERROR: cannot open %s: %s\n", s->output_file, strerror(errno));
			return 1;
		}
	}
	tr_lua_limits(s, &o);
	o.write = write_out;
	o.ctx = &h;
	o.guru = s->guru;
	km = tr_kmark_new(s);
	o.host = proc_host(km ? tr_kmark_host(km) : NULL);
	mt = mt_lua_new(&o);
	if (!mt) {
		fputs("ERROR: cannot create the Lua state\n", stderr);
		tr_kmark_free(km);
		return 1;
	}
	if (mt_lua_load(mt, lua, len, "=script", err, sizeof(err))) {
		fprintf(stderr, "ERROR: loading the translated script: %s\n", err);
		tr_kmark_free(km);
		mt_lua_free(mt);
		return 1;
	}
	for (unsigned i = 0; i < nsampled; i++)
		sampled[i].id = mt_lua_handler(mt, tr_printf("probe_%d", sampled[i].id));
	timers = tr_alloc(sizeof(*timers) * (s->probes.n + 1));
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		if (r->kind == P_TIMER) {
			struct timer *t = &timers[ntimers++];
			t->id = mt_lua_handler(mt, tr_printf("probe_%u", p->id));
			t->interval = r->interval_ns;
			t->randomize = r->randomize_ns;
		} else if (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL) {
			markers++;
		} else if (r->kind == P_PROCFS) {
			input = true;
		} else if (r->kind == P_PROC_END) {
			proc_end = true;
		}
	}
	if (input)
		fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	fflush(NULL);
	ss = tr_sess_new(s, mt, lua, len, fileno(h.out));
	/* kernel.mark handlers run in marktap.ko when it has Lua and no
	 * traced process shares the globals (kmark.c) */
	if (km && !tr_sess_wants_processes(ss))
		tr_kmark_in_kernel(km, lua, len, h.out);
	if (!tr_sess_wants_processes(ss) && !s->target_cmd && !s->target_pid) {
		tr_sess_free(ss);
		ss = NULL;
	}
	if (ss && s->target_cmd && tr_sess_listen(ss) < 0)
		goto out;
	/* kernel markers armed before -c's command starts (handlers on recorded
	 * events run from the main loop, so after begin); handlers that run in
	 * marktap.ko are loaded here and armed after begin (tr_kmark_begun) */
	if (km && tr_kmark_start(km, mt) < 0) {
		rc = 1;
		goto out;
	}
	if (s->target_cmd) {
		if (start_command(s->target_cmd, &cmd) < 0) {
			fprintf(stderr, "ERROR: cannot start %s: %s\n", s->target_cmd, strerror(errno));
			goto out;
		}
		h.child = h.target = cmd.pid;
	} else if (s->target_pid) {
		h.target = s->target_pid;
	}
	set_target(mt, (long)h.target);
	add_system(mt);
	if (ss)
		tr_sess_set_target(ss, (long)h.target);
	/* begin runs before -c's command does anything: it is released
	 * after begin (and after the kernel handlers are armed), and waits in
	 * libmarktap for the script, which leaves with the globals begin set */
	run_kind(mt, s, P_BEGIN);
	if (tr_kmark_begun(km) < 0) {   /* kernel handlers armed, with begin's values */
		rc = 1;
		mt_lua_request_exit(mt);
	}
	mt_lua_sync_mark(mt);
	release_command(&cmd);
	if (ss && s->target_pid && !stop_reason(mt, ss) && tr_sess_attach(ss, (int)s->target_pid) < 0) {
		rc = 1;
		mt_lua_request_exit(mt);
	}
	if (h.target)
		note_target_exe((long)h.target);
	if (h.target && !stop_reason(mt, ss))
		run_process_probes(mt, s, ss, km, P_PROC_BEGIN, (long)h.target);
	if (procev_fd >= 0 && h.target)
		family_start((long)h.target);
	else if (procev_fd >= 0 && !stop_reason(mt, ss))
		existing_processes(mt, s, ss, km);

	int64_t start = now_ns(), deadline = s->timeout > 0 ? start + (int64_t)(s->timeout * 1e9) : 0;
	for (unsigned i = 0; i < ntimers; i++)
		timers[i].next = start + timers[i].interval;
	bool only_begin = ntimers == 0 && !markers && !input && procev_fd < 0 && !nsampled && !s->target_cmd &&
			  !s->target_pid;
	int64_t next_pull = start + 1000000000;
	while (!stop_reason(mt, ss) && !interrupted && !only_begin) {
		int64_t t = now_ns(), wake = deadline ? deadline : t + 100000000;
		if (deadline && t >= deadline)
			break;
		if (h.child > 0) {
			siginfo_t si = {0};
			/* exited, not reaped yet: process.end still reads its /proc */
			if (waitid(P_PID, (id_t)h.child, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid) {
				if (procev_fd >= 0)     /* its family's ends came first */
					process_events(mt, s, ss, km, procev_fd);
				if (proc_end)
					run_process_probes(mt, s, ss, km, P_PROC_END, (long)h.child);
				waitpid(h.child, NULL, 0);
				h.child = 0;
				break;
			}
			if (wake > t + 10000000)
				wake = t + 10000000;
		} else if (s->target_pid && proc_end && kill((pid_t)s->target_pid, 0) < 0 && errno == ESRCH) {
			/* -x's process is gone (not our child: no /proc left to read) */
			run_process_probes(mt, s, ss, km, P_PROC_END, s->target_pid);
			proc_end = false;
		}
		if (nsampled) {   /* every 10 ms: samples wait in their rings */
			run_samples(mt, ss, km, sampled, nsampled, &samples_lost);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		if (procev_fd >= 0) {   /* every 10 ms: events wait in the socket */
			process_events(mt, s, ss, km, procev_fd);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		if (input) {
			struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
			if (poll(&in, 1, 0) > 0)
				input = feed_stdin(mt, s, ss, km);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		for (unsigned i = 0; i < ntimers; i++) {
			struct timer *tm = &timers[i];
			if (tm->next <= t) {
				run_here(mt, ss, km, tm->id);
				int64_t jitter = tm->randomize ? (int64_t)(rand() % (2 * tm->randomize + 1)) - tm->randomize : 0;
				tm->next += tm->interval + jitter;
				if (tm->next < t)
					tm->next = t + tm->interval;
				if (stop_reason(mt, ss))
					break;
			}
			if (tm->next < wake)
				wake = tm->next;
		}
		/* every second, the processes' globals come home: a process that
		 * is killed or execs loses at most a second of its changes */
		if (ss && t >= next_pull) {
			tr_sess_pull(ss);
			next_pull = t + 1000000000;
		}
		if (ss && next_pull < wake)
			wake = next_pull;
		if (km) {   /* kernel markers: their rings every 10 ms */
			tr_kmark_poll(km);
			if (wake > t + 10000000)
				wake = t + 10000000;
		}
		t = now_ns();
		if (wake > t) {
			if (ss) {
				tr_sess_poll(ss, (int)((wake - t + 999999) / 1000000));
			} else {
				struct timespec ts = { (wake - t) / 1000000000, (wake - t) % 1000000000 };
				nanosleep(&ts, NULL);
			}
		}
	}
	if (ss)
		tr_sess_quit(ss);
	tr_kmark_stop(km);   /* the handlers of the last events, before end */
	bool failed = stop_reason(mt, ss) == MT_LUA_STOP_ERRORS || tr_kmark_failed(km);
	run_kind(mt, s, failed ? P_ERROR : P_END);
	int id = mt_lua_handler(mt, "__display");
	if (id >= 0)
		mt_lua_run(mt, id, 0);
	int64_t errors = mt_lua_errors(mt) + (ss ? tr_sess_errors(ss) : 0) + tr_kmark_in_kernel_errors(km);
	int64_t skips = mt_lua_skips(mt) + (ss ? tr_sess_skips(ss) : 0);
	if (errors > 0)
		rc = 1;
	mt_lua_flush(mt);
	fflush(h.out);
	if (errors || skips)
		fprintf(stderr, "WARNING: Number of errors: %lld, skipped probes: %lld\n",
			(long long)errors, (long long)skips);
	if (samples_lost)
		fprintf(stderr, "WARNING: %llu perf samples lost (their rings were full)\n",
			(unsigned long long)samples_lost);
	if (ss && tr_sess_lost(ss))
		fprintf(stderr, "WARNING: %u process(es) ended without handing their last results "
			"(killed by a signal?): their changes since the last exchange are lost\n",
			tr_sess_lost(ss));
out:
	if (cmd.go >= 0) {   /* never released: the child leaves without running */
		close(cmd.go);
		close(cmd.execd);
	}
	tr_procev_close(procev_fd);
	for (unsigned i = 0; i < nsampled; i++)
		tr_perfev_close(sampled[i].pe);
	tr_kmark_free(km);
	system_state = NULL;
	mt_lua_free(mt);
	tr_sess_free(ss);
	if (h.child > 0) {
		kill(-h.child, SIGTERM);
		waitpid(h.child, NULL, 0);
	}
	if (h.out != stdout)
		fclose(h.out);
	return rc;
}

static const char *kind_name(enum tr_pkind k)
{
	static const char *const names[] = {
		"begin", "end", "error", "never", "timer", "mark", "kernel.mark",
		"timer.profile", "procfs", "process.begin", "process.end", "kernel.trace", "perf",
		"netfilter",
	};
	return names[k];
}

int tr_module_write(struct tr_session *s, const char *path, const char *lua)
{
	FILE *fp = fopen(path, "w");

	if (!fp) {
		fprintf(stderr, "ERROR: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(fp, "-- marktap module 1\n");
	fprintf(fp, "-- name: %s\n", s->module_name ? s->module_name : "stap_module");
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			struct tr_resolved *r = p->resolved.items[k];
			fprintf(fp, "-- probe: probe_%u %s %lld %lld %lld %s", p->id, kind_name(r->kind),
				(long long)r->priority, (long long)r->interval_ns, (long long)r->randomize_ns, r->pp);
			if (r->format)
				fprintf(fp, " format=\"%s\"", r->format);
			fputc('\n', fp);
			if (r->dw_func) {   /* where, and the recipes of its values (dwarf.c) */
				fprintf(fp, "-- func: probe_%u %c 0x%llx %s %s\n", p->id, r->dw_return ? 'r' : 'e',
					(unsigned long long)r->dw_addr, r->path, r->dw_cfa ? r->dw_cfa : "-");
				for (unsigned f = 0; f < r->dw_recipes.n; f++) {
					bool str = (enum tr_type)(intptr_t)r->field_types.items[f] == T_STRING;
					fprintf(fp, "-- fvar: probe_%u %c %s\n", p->id,
						r->dw_at_return.items[f] ? (str ? 'R' : 'L') : str ? 's' : 'l',
						(const char *)r->dw_recipes.items[f]);
				}
			} else if (r->provider)
				fprintf(fp, "-- sdt: probe_%u %s %s %s\n", p->id, r->provider, r->marker,
					r->path ? r->path : "*");
			else if (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL)
				fprintf(fp, "-- mark: probe_%u %s %s\n", p->id, r->marker,
					r->path ? r->path : "*");
			else if (r->kind == P_PROCFS)
				fprintf(fp, "-- procfs: probe_%u %c %s\n", p->id, r->procfs_write ? 'w' : 'r',
					r->procfs_file);
			else if (r->kind == P_PROC_BEGIN || r->kind == P_PROC_END)
				fprintf(fp, "-- process: probe_%u %d %lld %s\n", p->id, r->thread,
					(long long)r->proc_pid, r->path ? r->path : "*");
		}
	}
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *g = s->globals.items[i];
		fprintf(fp, "-- global: %s %s %d\n", g->name, tr_type_name(g->type), g->arity > 0 ? g->arity : 0);
	}
	for (unsigned i = 0; i < s->defines.n; i++)
		fprintf(fp, "-- option: %s\n", (const char *)s->defines.items[i]);
	if (s->guru)
		fprintf(fp, "-- option: guru\n");
	fprintf(fp, "-- end of manifest\n");
	fputs(lua, fp);
	if (fclose(fp)) {
		fprintf(stderr, "ERROR: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Run a module file written by -p4 (marktap's staprun): the probes and the
 * options come from its manifest, the handlers from its chunk. */
int tr_module_run(struct tr_session *s, const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[8192];
	struct tr_buf chunk = {0};
	struct tr_probe *last = NULL;
	unsigned lineno = 0;
	bool manifest = true;

	if (!fp) {
		fprintf(stderr, "ERROR: cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!manifest) {
			tr_buf_puts(&chunk, line);
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		if (lineno == 1 && strcmp(line, "-- marktap module 1") != 0)
			break;
		unsigned id;
		char kind[32], a[4096], b[4096], prov[256], fkind;
		unsigned long long faddr;
		long long prio, interval, randomize;
		int n = 0;
		if (sscanf(line, "-- probe: probe_%u %31s %lld %lld %lld %n", &id, kind, &prio, &interval,
			   &randomize, &n) == 5 && n > 0) {
			struct tr_resolved *r = tr_alloc(sizeof(*r));
			int k;
			for (k = 0; k <= P_PERF && strcmp(kind_name((enum tr_pkind)k), kind); k++)
				;
			if (k > P_PERF)
				break;
			r->kind = (enum tr_pkind)k;
			r->priority = prio;
			r->interval_ns = interval;
			r->randomize_ns = randomize;
			r->pp = tr_strdup(line + n);
			if (!last || last->id != id) {
				last = tr_alloc(sizeof(*last));
				last->id = id;
				tr_vec_push(&s->probes, last);
			}
			tr_vec_push(&last->resolved, r);
		} else if (sscanf(line, "-- mark: probe_%u %4095s %4095[^\n]", &id, a, b) == 3 ||
			   sscanf(line, "-- sdt: probe_%u %255s %4095s %4095[^\n]", &id, prov, a, b) == 4) {
			/* the marker (or SDT probe) of the probe line before */
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r)
				break;
			r->provider = line[3] == 's' ? tr_strdup(prov) : NULL;
			r->marker = tr_strdup(a);
			r->path = strcmp(b, "*") ? tr_strdup(b) : NULL;
		} else if (sscanf(line, "-- procfs: probe_%u %c %4095s", &id, &fkind, a) == 3 ||
			   sscanf(line, "-- process: probe_%u %c %lld %4095s", &id, &fkind, &prio, a) == 4) {
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r)
				break;
			if (line[3] == 'p' && line[4] == 'r' && line[5] == 'o' && line[6] == 'c' && line[7] == 'f') {
				r->procfs_write = fkind == 'w';
				r->procfs_file = tr_strdup(a);
				tr_vec_push(&r->fields, "value");
				tr_vec_push(&r->field_types, (void *)(intptr_t)T_STRING);
			} else {
				r->thread = fkind == '1';
				r->proc_pid = prio;
				r->path = strcmp(a, "*") ? tr_strdup(a) : NULL;
			}
		} else if (sscanf(line, "-- func: probe_%u %c %llx %4095s %n", &id, &fkind, &faddr, a, &n) == 4 &&
			   n > 0) {
			/* a function probe (dwarf.c): the probe line before's */
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r)
				break;
			r->provider = TR_FUNC_PROVIDER;
			r->marker = "";
			r->path = tr_strdup(a);
			r->dw_func = true;
			r->dw_return = fkind == 'r';
			r->dw_addr = faddr;
			r->dw_cfa = strcmp(line + n, "-") ? tr_strdup(line + n) : NULL;
		} else if (sscanf(line, "-- fvar: probe_%u %c %n", &id, &fkind, &n) == 2 && n > 0) {
			struct tr_resolved *r = last && last->id == id && last->resolved.n
				? last->resolved.items[last->resolved.n - 1] : NULL;
			if (!r || !r->dw_func || !strchr("lsLR", fkind))
				break;
			tr_vec_push(&r->dw_recipes, tr_strdup(line + n));
			tr_vec_push(&r->dw_at_return, (void *)(intptr_t)(fkind == 'L' || fkind == 'R'));
			tr_vec_push(&r->field_types, (void *)(intptr_t)(fkind == 's' || fkind == 'R' ? T_STRING : T_LONG));
			tr_vec_push(&r->fields, tr_printf("v%u", r->fields.n + 1));
		} else if (!strncmp(line, "-- option: ", 11)) {
			if (!strcmp(line + 11, "guru"))
				s->guru = true;
			else
				tr_vec_push(&s->defines, tr_strdup(line + 11));
		} else if (!strcmp(line, "-- end of manifest")) {
			manifest = false;
		} else if (strncmp(line, "-- ", 3) != 0) {
			break;
		}
	}
	fclose(fp);
	if (manifest) {
		fprintf(stderr, "ERROR: %s:%u: not a marktap module (bad manifest line)\n", path, lineno);
		return 1;
	}
	return tr_run(s, tr_buf_str(&chunk), chunk.len);
}
