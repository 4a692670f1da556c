/*
 * host.c - libmarktap-script.so: probe script handlers inside the traced
 * process.
 *
 * libmarktap loads this plugin when marktap runs a script here (script.c)
 * and gives it the session connection.  The plugin loads the translated
 * chunk into a Lua state (libmtlua), arms the markers the script binds and
 * runs their handlers at each hit, one at a time per process (hlock.h), so
 * globals keep stap's semantics.  Handler output and error lines go back to
 * marktap as frames on the session connection ('O', 'R'), which marktap
 * writes out itself: a traced process never holds a descriptor of
 * marktap's (its terminal, its -o file), which a process of another user
 * could keep, read from and write to long after.  Where the process's own
 * stdout (stderr) is the very file marktap writes to -- a command of
 * "marktap -c" that inherited it -- marktap says so ("write out own") and
 * the handlers write to the process's own descriptor, in order with what
 * the program writes there itself.  Globals travel as
 * deltas (mt_lua_sync_*) when marktap pulls them, and once more when the
 * process exits or the session ends.  Frames: runtime/proto/mt_wire.h.
 *
 * A hit on a marker from a signal handler that interrupted a handler of the
 * same thread is skipped and counted (stap's MAXSKIPPED), never deadlocks.
 *
 * Native handlers: a handler that only adds to long globals comes with a
 * plan (translator/native.c); its hits add into a table of the thread,
 * without the lock or Lua, and the tables are folded into the Lua globals
 * before each delta (plan.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dlfcn.h>
#include <lua.h>
#include <lauxlib.h>
#include "mt_event.h"
#include "mt_lib.h"
#include "mt_lua.h"
#include "mt_manifest.h"
#include "mt_wire.h"
#include "hlock.h"
#include "plan.h"
#include "sdt.h"
#include "ufunc.h"
#include "usym.h"

#define EXPORT __attribute__((visibility("default")))

struct binding {
	int handler;            /* id in the Lua state */
	int any_object;         /* process.mark(): any object of the process */
	dev_t dev;
	ino_t ino;
	char *marker;
	char *handler_name;     /* "probe_N" until the chunk is loaded */
	char *plan;             /* native plan, or NULL */
	char *provider;         /* an SDT probe's (sdt.c); NULL: libmarktap's */
};

/* What a marker runs: rt->script points here. */
struct attached {
	struct mt_marker *marker;
	struct attached *next;
	int name_ref, format_ref;   /* Lua strings, made at the first hit */
	int n, nnative;
	int sdt;                    /* an SDT probe's site (sdt.c) */
	struct plan **native;       /* per handler: its plan, or NULL (Lua) */
	int handlers[];
};

static struct {
	const struct mt_script_ops *ops;
	pthread_mutex_t send_lock;     /* frames from several threads */
	struct mt_lua *mt;
	int fd;
	int own_out, own_err;          /* write to our own fd 1, fd 2 */
	int active;                    /* handlers run */
	int stop_sent;
	pthread_mutex_t finish_lock;   /* one finish(); a second caller waits */
	int finished;                  /* finish() ran: bye sent (finish_lock) */
	int ended;                     /* the session is over: a next one may start */
	int traps_used;                /* sdt_start() ran: SDT or function probes */
	struct attached *retired;      /* of ended sessions (never freed: retire()) */
	struct binding *binds;
	unsigned nbinds, nsdt;
	struct attached *attached;
	int native_off;                /* MARKTAP_NATIVE=0, or no native plans here */
	uint64_t lua_hits;             /* (hlock) */
} h = {
	.send_lock = PTHREAD_MUTEX_INITIALIZER,
	.finish_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
};

/* This thread runs native plans (plan.c): a hit meanwhile is skipped. */
static __thread int in_native __attribute__((tls_model("initial-exec")));

/* This thread is the agent's (which starts the host) or the host's own:
 * what it runs (dlopen, pthread_create and libc's calls into ld.so under
 * them) is not the program's, and its hits are ignored, not counted, as
 * stap, which runs nothing in the process, never sees them. */
static __thread int agent_thread __attribute__((tls_model("initial-exec")));

/*
 * in_send: this thread is inside send_frame().  A trap path (a function
 * probe's report, run from SIGTRAP or a stub on whatever thread hit it)
 * may interrupt a thread holding send_lock: its line is dropped rather
 * than waiting for a lock its own thread holds.
 */
static __thread int in_send __attribute__((tls_model("initial-exec")));

static int send_frame(int type, const void *data, size_t len)
{
	int rc;

	if (in_send)
		return -1;
	in_send = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&h.send_lock);
	rc = h.fd >= 0 ? mt_wire_send(h.fd, type, data, len, NULL, 0) : -1;
	pthread_mutex_unlock(&h.send_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_send = 0;
	return rc;
}

/* Write to our own stdout or stderr; a closed pipe must not kill the
 * traced program with SIGPIPE: the signal is blocked for the write and a
 * pending one taken. */
static void write_fd(int fd, const char *buf, size_t n)
{
	sigset_t pipe_set, old;
	int broken = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			broken = errno == EPIPE;
			break;   /* the output is gone: nothing to do */
		}
		buf += w;
		n -= (size_t)w;
	}
	if (broken && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Handler output, to marktap, which writes it to its output: in frames
 * of at most 64 KiB (marktap buffers a frame whole before it writes it). */
static void out_write(void *ctx, const char *buf, size_t n)
{
	(void)ctx;
	if (h.own_out) {
		write_fd(1, buf, n);
		return;
	}
	while (n) {
		size_t k = n < 65536 ? n : 65536;
		if (send_frame('O', buf, k) < 0)
			return;   /* marktap is gone: nothing to do */
		buf += k;
		n -= k;
	}
}

/* An error or warning line, to marktap's stderr. */
static void err_line(void *ctx, const char *line)
{
	size_t n = strlen(line);

	(void)ctx;
	if (n > 1023)
		n = 1023;   /* as long as lines were */
	if (h.own_err) {
		char buf[1024];
		memcpy(buf, line, n);
		buf[n] = '\n';
		write_fd(2, buf, n + 1);
		return;
	}
	send_frame('R', line, n);
}

/* ---- which markers the script wants ---------------------------------- */

static int object_of(struct mt_marker *m, struct stat *st)
{
	Dl_info info;

	if (dladdr(m, &info) && info.dli_fname && strchr(info.dli_fname, '/') &&
	    stat(info.dli_fname, st) == 0)
		return 0;
	return stat("/proc/self/exe", st);   /* the main program */
}

/* The handlers of the bindings of marker m (provider NULL: libmarktap's
 * markers; else an SDT probe of that provider, in object dev/ino): rt->script
 * set, 1; or 0 when no binding wants it. */
static int attach_handlers(struct mt_marker *m, struct mt_marker_rt *rt, const char *provider,
			   int have_st, dev_t dev, ino_t ino)
{
	struct attached *a;
	struct stat st;
	int n = 0;

	a = malloc(sizeof(*a) + sizeof(int) * (h.nbinds ? h.nbinds : 1));
	if (!a)
		return 0;
	a->native = NULL;
	a->nnative = 0;
	for (unsigned i = 0; i < h.nbinds; i++) {
		struct binding *b = &h.binds[i];
		if (b->handler < 0 || strcmp(b->marker, m->name))
			continue;
		if (!b->provider != !provider || (provider && strcmp(b->provider, provider)))
			continue;
		if (!b->any_object) {
			if (!have_st) {
				have_st = object_of(m, &st) == 0 ? 1 : -1;
				dev = st.st_dev;
				ino = st.st_ino;
			}
			if (have_st < 0 || dev != b->dev || ino != b->ino)
				continue;
		}
		if (b->plan && !h.native_off) {
			if (!a->native)
				a->native = calloc(h.nbinds, sizeof(*a->native));
			if (a->native && (a->native[n] = plan_new(b->plan, &rt->format)))
				a->nnative++;
		}
		a->handlers[n++] = b->handler;
	}
	if (!n) {
		free(a->native);
		free(a);
		return 0;
	}
	a->n = n;
	a->marker = m;
	a->name_ref = a->format_ref = LUA_NOREF;
	a->sdt = provider != NULL;
	hlock();   /* SDT sites attach outside the registry lock */
	a->next = h.attached;
	h.attached = a;
	hunlock();
	rt->script = a;
	return 1;
}

static void attach_marker(struct mt_marker *m)
{
	struct mt_marker_rt *rt = m->rt;

	if (!rt || !rt->format_ok || rt->script || !m->name)
		return;
	if (attach_handlers(m, rt, NULL, 0, 0, 0))
		h.ops->arm(m, MT_ARMED_SCRIPT);
}

static int attach_sdt(struct mt_marker *m, struct mt_marker_rt *rt, const char *provider,
		      dev_t dev, ino_t ino)
{
	return attach_handlers(m, rt, provider, 1, dev, ino);
}

static void on_added(struct mt_marker *m)
{
	if (h.active)
		attach_marker(m);
}

static void detach_marker(struct mt_marker *m)
{
	struct mt_marker_rt *rt = m->rt;

	h.ops->disarm(m, MT_ARMED_SCRIPT);
	if (rt)
		rt->script = NULL;
}

/* dlclose: the descriptor goes away; forget it (registry lock held). */
static void on_removed(struct mt_marker *m)
{
	struct attached **pa, *a;

	detach_marker(m);
	hlock();   /* no handler of it still runs */
	for (pa = &h.attached; (a = *pa); pa = &a->next) {
		if (a->marker == m) {
			*pa = a->next;
			luaL_unref(mt_lua_state(h.mt), LUA_REGISTRYINDEX, a->name_ref);
			luaL_unref(mt_lua_state(h.mt), LUA_REGISTRYINDEX, a->format_ref);
			for (int i = 0; a->native && i < a->n; i++)
				plan_free(a->native[i]);
			free(a->native);
			free(a);
			break;
		}
	}
	hunlock();
}

static void arm_one(struct mt_marker *m, void *arg)
{
	(void)arg;
	attach_marker(m);
}

static void disarm_all(void)
{
	struct attached *a;

	h.ops->lock();
	h.active = 0;
	if (h.traps_used)
		sdt_stop();
	for (a = h.attached; a; a = a->next)
		if (!a->sdt)
			detach_marker(a->marker);
	h.ops->unlock();
}

/* ---- a hit -------------------------------------------------------------- */

static void push_args(lua_State *L, struct attached *at, const struct mt_format *f,
		      const struct mt_args *a)
{
	if (at->name_ref == LUA_NOREF) {
		lua_pushstring(L, at->marker->name);
		at->name_ref = luaL_ref(L, LUA_REGISTRYINDEX);
		lua_pushstring(L, at->marker->format ? at->marker->format : "");
		at->format_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, at->name_ref);
	lua_rawgeti(L, LUA_REGISTRYINDEX, at->format_ref);
	mt_lua_push_args(L, f, a);
}

static void report_stop(void)
{
	static const char *const why[] = { "", "exit", "errors", "skipped" };
	int reason = mt_lua_stopping(h.mt);

	if (!reason || h.stop_sent || reason > 3)
		return;
	h.stop_sent = 1;
	send_frame('X', why[reason], strlen(why[reason]));
}

/* The handlers of a hit whose arguments are fetched. */
static void run_hit(struct attached *a, struct mt_marker_rt *rt, const struct mt_args *args)
{
	lua_State *L;

	if (a->nnative) {
		/* mt->stop is only ever set once; a stale read runs one more hit */
		if (!mt_lua_stopping(h.mt)) {
			in_native = 1;
			for (int i = 0; i < a->n; i++)
				if (a->native[i])
					plan_run(a->native[i], &rt->format, args);
			in_native = 0;
		}
		if (a->nnative == a->n)
			return;
	}
	hlock();
	if (h.active && rt->script == a) {
		for (long skipped = hlock_skipped_take(); skipped > 0; skipped--)
			mt_lua_skipped(h.mt);
		L = mt_lua_state(h.mt);
		for (int i = 0; i < a->n; i++) {
			if (a->native && a->native[i])
				continue;
			if (!lua_checkstack(L, (int)rt->format.nfields + 4))
				break;
			push_args(L, a, &rt->format, args);
			mt_lua_run(h.mt, a->handlers[i], (int)rt->format.nfields + 2);
			h.lua_hits++;
		}
		report_stop();
	}
	/* else the session ended (or the marker was detached) while the hit
	 * waited for the lock: a hit after the end, as stap's after its
	 * module's probes are unregistered, neither run nor counted */
	hunlock();
}

/* Hits inside one of our handlers (a signal handler that interrupted it,
 * an SDT probe its code ran into) are skipped and counted. */
static int reentered(void)
{
	if (!hlock_in_handler && !in_native)
		return 0;
	hlock_skipped_add();
	return 1;
}

static void on_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap)
{
	struct attached *a = rt->script;
	struct mt_args args;

	(void)m;
	if (!a || !h.active || agent_thread || reentered())
		return;
	h.ops->fetch(&rt->format, ap, &args);
	run_hit(a, rt, &args);
}

/* An SDT or function probe's trap (sdt.c, ufunc_trap.c): the arguments are
 * longs already.  A trap while this thread runs the host's own code (Lua,
 * native handlers: a probe on libc functions they call) is not a call of
 * the program's: ignored, not counted as skipped (function("*") on libc
 * would otherwise pass MAXSKIPPED at the first delta). */
static void on_sdt_hit(struct mt_marker *m, struct mt_marker_rt *rt, const struct mt_args *args)
{
	struct attached *a = rt->script;

	(void)m;
	if (!a || !h.active || hlock_in_handler || in_native || agent_thread)
		return;
	run_hit(a, rt, args);
}

static void sdt_error(const char *msg)
{
	char line[600];

	snprintf(line, sizeof(line), "WARNING: process %d: %s", (int)getpid(), msg);
	err_line(NULL, line);
}

/* ---- globals ------------------------------------------------------------ */

static void send_delta(void)
{
	char *buf = NULL;
	size_t len = 0;

	if (h.nsdt && h.active)   /* libraries dlopen'ed since the last pull */
		sdt_start(attach_sdt, on_sdt_hit, sdt_error);   /* traps_used already */
	hlock();
	for (long skipped = hlock_skipped_take(); skipped > 0; skipped--)
		mt_lua_skipped(h.mt);
	plan_fold_all();
	report_stop();
	if (mt_lua_sync_take(h.mt, MT_LUA_SYNC_DELTA | MT_LUA_SYNC_RESET_STATS, &buf, &len) < 0)
		len = 0;
	hunlock();
	send_frame('D', buf, len);
	free(buf);
}

static void apply(const struct mt_frame *f)
{
	hlock();
	mt_lua_sync_apply(h.mt, f->data, f->len);
	hunlock();
}

static void finish_once(void);

/* The session ends for this process: last delta, bye.  Once: the serve
 * thread (Q), atexit and _exit/abort (on_final) may all get here, and a
 * second caller waits until the first is done: a main thread that exits
 * while the serve thread says bye must not end the process mid-frame. */
static void finish(void)
{
	pthread_mutex_lock(&h.finish_lock);
	if (!h.finished && h.fd >= 0) {
		h.finished = 1;
		finish_once();
	}
	pthread_mutex_unlock(&h.finish_lock);
}

static void finish_once(void)
{
	char bye[64];
	int fd;

	disarm_all();
	send_delta();
	hlock();
	for (long skipped = hlock_skipped_take(); skipped > 0; skipped--)
		mt_lua_skipped(h.mt);
	mt_lua_flush(h.mt);
	snprintf(bye, sizeof(bye), "%lld %lld %llu %llu", (long long)mt_lua_errors(h.mt),
		 (long long)mt_lua_skips(h.mt), (unsigned long long)plan_hits(),
		 (unsigned long long)h.lua_hits);
	hunlock();
	send_frame('B', bye, strlen(bye));
	pthread_mutex_lock(&h.send_lock);
	fd = h.fd;
	h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	shutdown(fd, SHUT_WR);
	__atomic_store_n(&h.ended, 1, __ATOMIC_RELEASE);
}

static void *serve(void *arg)
{
	struct mt_frame f;
	int fd = (int)(long)arg;

	agent_thread = 1;
	while (mt_wire_recv(fd, &f) == 0) {
		switch (f.type) {
		case 'P':
			send_delta();
			break;
		case 'A':
			apply(&f);
			break;
		case 'Q':
			mt_wire_free(&f);
			finish();
			close(fd);
			return NULL;
		default:
			break;
		}
		mt_wire_free(&f);
	}
	/* marktap went away without "quit": stop running handlers */
	disarm_all();
	pthread_mutex_lock(&h.send_lock);
	if (h.fd == fd)
		h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	__atomic_store_n(&h.ended, 1, __ATOMIC_RELEASE);
	close(fd);
	return NULL;
}

/* libmarktap's own work on this thread (mt_thread_start): its calls are
 * not the program's */
static void own_work(int on)
{
	in_native += on ? 1 : -1;
}

static int start_thread(int fd)
{
	return mt_thread_start(serve, (void *)(long)fd, 0) ? -1 : 0;
}

static void at_exit(void)
{
	finish();
}

/*
 * _exit or abort: as at exit.  exec: the image goes, and the connection
 * with it (close-on-exec); the new image joins anew if it carries
 * libmarktap.  Send the delta and say it is complete ('W'), but stay: if
 * exec fails, the process goes on running the script.
 */
static void on_final(int why)
{
	if (!h.active || h.fd < 0 || hlock_in_handler)
		return;
	if (why == MT_FINAL_EXIT) {
		finish();
		return;
	}
	send_delta();
	send_frame('W', NULL, 0);
}

/* ---- fork --------------------------------------------------------------- */

/* finish_lock before hlock before send_lock, as finish() and a handler's
 * output take them: the child must not inherit a lock another thread held
 * mid-frame (its own frames would wait for ever) */
static void fork_prepare(void)
{
	pthread_mutex_lock(&h.finish_lock);
	hlock();
	pthread_mutex_lock(&h.send_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&h.send_lock);
	hunlock();
	pthread_mutex_unlock(&h.finish_lock);
}

/* The child has a copy of the state; under "marktap -c" it joins the
 * session as a process of its own, counting only its own changes. */
static void fork_child(void)
{
	const char *name = secure_getenv(MT_SESSION_ENV);
	char hello[64];
	int fd;

	/* what the parent's threads added is the parent's to report */
	plan_fork_child();
	h.lua_hits = 0;
	pthread_mutex_unlock(&h.send_lock);
	hunlock();
	pthread_mutex_unlock(&h.finish_lock);
	if (h.fd < 0 || !h.active)
		return;
	close(h.fd);
	h.fd = -1;
	h.stop_sent = 0;
	fd = name ? mt_wire_join(name) : -1;
	if (fd < 0) {   /* marktap -x traces the parent only */
		disarm_all();
		h.ended = 1;
		return;
	}
	mt_lua_sync_mark(h.mt);
	h.fd = fd;
	snprintf(hello, sizeof(hello), "%d 1", (int)getpid());
	in_native++;   /* the new thread's start is ours, not the program's */
	if (send_frame('H', hello, strlen(hello)) < 0 || start_thread(fd) < 0)
		disarm_all();
	in_native--;
}

/* ---- start -------------------------------------------------------------- */

/* A binding of handler `handler` to marker `marker` of the object at
 * path ("*": any), an SDT probe's when provider is not NULL; 0, or -1 when
 * out of memory.  An object not on this system binds nothing. */
static int add_binding(const char *handler, const char *path, const char *provider, const char *marker)
{
	struct binding *nb = realloc(h.binds, sizeof(*nb) * (h.nbinds + 1));
	struct stat st;

	if (!nb)
		return -1;
	h.binds = nb;
	nb = &h.binds[h.nbinds];
	memset(nb, 0, sizeof(*nb));
	nb->handler = -1;
	nb->any_object = !strcmp(path, "*");
	if (!nb->any_object) {
		if (stat(path, &st) != 0)
			return 0;
		nb->dev = st.st_dev;
		nb->ino = st.st_ino;
	}
	nb->marker = strdup(marker);
	nb->handler_name = strdup(handler);
	nb->provider = provider ? strdup(provider) : NULL;
	if (!nb->marker || !nb->handler_name || (provider && !nb->provider))
		return -1;
	h.nsdt += provider != NULL;
	h.nbinds++;
	return 0;
}

static int parse_manifest(char *text, struct mt_lua_options *o, long long *target)
{
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[32], a[PATH_MAX], b[256], c[256], prov[256];
		long long v;

		if (sscanf(line, "option %31s %lld", key, &v) == 2) {
			if (mt_lua_option_set(o, key, v) == 0)
				continue;   /* a -D limit (mt_lua_limit_names) */
			if (!strcmp(key, "guru")) o->guru = (int)v;
			else if (!strcmp(key, "target")) *target = v;
		} else if (!strcmp(line, "write out own")) {
			h.own_out = 1;
		} else if (!strcmp(line, "write err own")) {
			h.own_err = 1;
		} else if (sscanf(line, "bind %255s %4095s %255s", b, a, c) == 3) {
			if (add_binding(b, a, NULL, c) < 0)
				return -1;
		} else if (sscanf(line, "sdt %255s %4095s %255s %255s", b, a, prov, c) == 4) {
			if (add_binding(b, a, prov, c) < 0)
				return -1;
		} else if (!strncmp(line, "func ", 5)) {
			/* "func probe_N e|r ADDR PATH CFA" (ufunc.h): an SDT probe of
			 * provider MT_FUNC_PROVIDER named probe_N to sdt.c */
			if (ufunc_want(line) < 0 || sscanf(line, "func %255s %*c %*s %4095s", b, a) != 2 ||
			    add_binding(b, a, MT_FUNC_PROVIDER, b) < 0)
				return -1;
		} else if (!strncmp(line, "fvar ", 5)) {   /* its values */
			if (ufunc_field(line) < 0)
				return -1;
		}
	}
	return 0;
}

/* A session that could not start: the connection is the agent's to close
 * (not ours to write to again), and a next session may try. */
static void abandon(void)
{
	pthread_mutex_lock(&h.send_lock);
	h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	__atomic_store_n(&h.ended, 1, __ATOMIC_RELEASE);
}

static int fail(const char *fmt, const char *arg)
{
	char msg[600];

	snprintf(msg, sizeof(msg), fmt, arg);
	send_frame('E', msg, strlen(msg));
	abandon();
	return -1;
}

/*
 * Make room for a next session once one has ended (marktap -x again on
 * the same process).  Every marker was disarmed when it ended and
 * rt->script cleared, but a thread that read rt->script just before may
 * still be in on_hit() with it: the script's struct attached and native
 * plans are kept (a few hundred bytes per bound marker and session), so
 * that such a thread reads memory still valid; its Lua part finds
 * rt->script changed under hlock and runs nothing, its native part finds
 * the plan's session is not its table's (plan.c) and adds nothing.
 * The Lua state goes (under hlock: every Lua run holds it).  The threads'
 * tables are unlinked: each thread frees its own at its next native hit
 * or its end.
 */
static void retire(void)
{
	struct attached *a;

	pthread_mutex_lock(&h.finish_lock);   /* exit and fork paths */
	h.ops->lock();                        /* dlopen, dlclose */
	hlock();
	while ((a = h.attached)) {
		h.attached = a->next;
		a->next = h.retired;
		h.retired = a;
	}
	for (unsigned i = 0; i < h.nbinds; i++) {
		free(h.binds[i].marker);
		free(h.binds[i].handler_name);
		free(h.binds[i].plan);
		free(h.binds[i].provider);
	}
	free(h.binds);
	h.binds = NULL;
	h.nbinds = h.nsdt = 0;
	plan_retire();
	h.own_out = h.own_err = 0;   /* output still buffered was the ended session's */
	mt_lua_free(h.mt);
	h.mt = NULL;
	h.lua_hits = 0;
	(void)hlock_skipped_take();
	h.stop_sent = 0;
	h.finished = 0;
	h.ended = 0;
	hunlock();
	h.ops->unlock();
	pthread_mutex_unlock(&h.finish_lock);
}

EXPORT int mt_script_plugin_start(const struct mt_script_ops *ops, int fd, int forked)
{
	static int atfork_done;
	struct mt_lua_options o = { 0 };
	struct mt_frame f;
	char hello[PATH_MAX + 64], exe[PATH_MAX], err[512], *chunk;
	long long target = 0;
	ssize_t n;

	if (!ops || ops->version != MT_SCRIPT_OPS_VERSION)
		return -1;
	if (h.ops && !__atomic_load_n(&h.ended, __ATOMIC_ACQUIRE)) {
		/* another marktap session got here first, and runs */
		static const char busy[] = "the process already runs a marktap script";
		mt_wire_send(fd, 'E', busy, sizeof(busy) - 1, NULL, 0);
		return -2;
	}
	if (h.ops)
		retire();
	(void)forked;
	h.ops = ops;
	h.fd = fd;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(hello, sizeof(hello), "%d 0 %s", (int)getpid(), exe);
	if (send_frame('H', hello, strlen(hello)) < 0)
		return -1;
	if (mt_wire_recv(fd, &f) < 0 || f.type != 'S')
		return fail("%s", "expected the script from marktap");
	chunk = strstr(f.data, "\n\n");
	if (!chunk) {
		mt_wire_free(&f);
		return fail("%s", "malformed script frame");
	}
	*chunk = '\0';
	chunk += 2;
	if (parse_manifest(f.data, &o, &target) < 0) {
		mt_wire_free(&f);
		return fail("%s", "out of memory");
	}
	if (h.nsdt && h.traps_used) {
		/* sdt.c and ufunc.c arm their sites once per process */
		mt_wire_free(&f);
		return fail("%s", "SDT and function probes run in one marktap session per process, "
			    "and an earlier session ran them here; markers of libmarktap still work");
	}
	o.write = out_write;
	o.error = err_line;
	h.mt = mt_lua_new(&o);
	if (!h.mt || mt_lua_load(h.mt, chunk, f.len - (size_t)(chunk - f.data), "=script",
				 err, sizeof(err))) {
		mt_wire_free(&f);
		return fail("cannot load the script: %s", h.mt ? err : "out of memory");
	}
	mt_wire_free(&f);
	usym_register(mt_lua_state(h.mt));   /* uaddr(), ubacktrace()... (usym.c) */
	{
		const char *env = secure_getenv("MARKTAP_NATIVE");
		h.native_off = env && !strcmp(env, "0");
	}
	for (unsigned i = 0; i < h.nbinds; i++) {
		struct binding *b = &h.binds[i];
		const char *plan;
		b->handler = mt_lua_handler(h.mt, b->handler_name);
		plan = mt_lua_native_plan(h.mt, b->handler_name);
		b->plan = plan ? strdup(plan) : NULL;
	}
	/* string keys cut at MAXSTRINGLEN - 1 bytes, as Lua cuts them */
	if (plan_start(h.mt, (size_t)(o.maxstringlen > 0 ? o.maxstringlen : 512) - 1) < 0)
		h.native_off = 1;
	{
		lua_State *L = mt_lua_state(h.mt);
		char code[96];
		snprintf(code, sizeof(code), "local t = %lld; require('mtrt').target = function() return t end", target);
		if (luaL_dostring(L, code) != LUA_OK)
			lua_pop(L, 1);
	}
	if (mt_wire_recv(fd, &f) < 0 || f.type != 'F')
		return fail("%s", "expected the globals from marktap");
	mt_lua_sync_apply(h.mt, f.data, f.len);
	mt_lua_sync_mark(h.mt);
	mt_wire_free(&f);

	*ops->own = own_work;
	*ops->hit = on_hit;
	*ops->added = on_added;
	*ops->removed = on_removed;
	__atomic_store_n(ops->final, on_final, __ATOMIC_RELEASE);
	in_native++;   /* until the host's thread runs: our calls, not the program's */
	ops->lock();
	h.active = 1;
	ops->for_each(arm_one, NULL);
	ops->unlock();
	/* outside the registry lock: dl_iterate_phdr takes the loader's, and
	 * a dlopen holds that one when it registers markers */
	if (h.nsdt) {
		h.traps_used = 1;
		sdt_start(attach_sdt, on_sdt_hit, sdt_error);
	}
	if (!atfork_done) {
		atfork_done = 1;
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		atexit(at_exit);
	}
	if (send_frame('K', NULL, 0) < 0 || start_thread(fd) < 0) {
		in_native--;
		disarm_all();
		abandon();
		return -1;
	}
	in_native--;
	return 0;
}
