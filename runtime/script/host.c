/*
 * host.c - libmarktap-script.so: probe script handlers inside the traced
 * process.
 *
 * libmarktap loads this plugin when marktap runs a script here (script.c)
 * and gives it the session connection.  The plugin loads the translated
 * chunk into a Lua state (libmtlua), arms the markers the script binds and
 * runs their handlers at each hit, one at a time per process (a mutex), so
 * globals keep stap's semantics.  Handler output goes straight to the
 * descriptors marktap passed (its output and its stderr); globals travel as
 * deltas (mt_lua_sync_*) when marktap pulls them, and once more when the
 * process exits or the session ends.  Frames: runtime/lib/mt_wire.h.
 *
 * A hit on a marker from a signal handler that interrupted a handler of the
 * same thread is skipped and counted (stap's MAXSKIPPED), never deadlocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
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
#include "mt_wire.h"

#define EXPORT __attribute__((visibility("default")))

struct binding {
	int handler;            /* id in the Lua state */
	int any_object;         /* process.mark(): any object of the process */
	dev_t dev;
	ino_t ino;
	char *marker;
	char *handler_name;     /* "probe_N" until the chunk is loaded */
};

/* What a marker runs: rt->script points here. */
struct attached {
	struct mt_marker *marker;
	struct attached *next;
	int name_ref, format_ref;   /* Lua strings, made at the first hit */
	int n;
	int handlers[];
};

static struct {
	const struct mt_script_ops *ops;
	int lock;                      /* one handler at a time (hlock) */
	pthread_mutex_t send_lock;     /* frames from several threads */
	struct mt_lua *mt;
	int fd, out_fd, err_fd;
	int active;                    /* handlers run */
	int stop_sent;
	struct binding *binds;
	unsigned nbinds;
	struct attached *attached;
	long skipped_pending;
} h = {
	.send_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1, .out_fd = -1, .err_fd = -1,
};

/*
 * The handler lock: handlers are short (MAXACTION bounds them), so a
 * waiter spins, then yields; a futex mutex cost twice as much per hit,
 * and much more when two threads hit at once.
 */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

static void hlock(void)
{
	for (unsigned spins = 0; __atomic_exchange_n(&h.lock, 1, __ATOMIC_ACQUIRE); spins++) {
		while (__atomic_load_n(&h.lock, __ATOMIC_RELAXED)) {
			if (++spins > 2000) {
				sched_yield();
				spins = 0;
			}
			cpu_relax();
		}
	}
}

static void hunlock(void)
{
	__atomic_store_n(&h.lock, 0, __ATOMIC_RELEASE);
}

static __thread int in_handler __attribute__((tls_model("initial-exec")));

static int send_frame(int type, const void *data, size_t len)
{
	int rc;

	pthread_mutex_lock(&h.send_lock);
	rc = h.fd >= 0 ? mt_wire_send(h.fd, type, data, len, NULL, 0) : -1;
	pthread_mutex_unlock(&h.send_lock);
	return rc;
}

/* Write marktap's output; a closed pipe must not kill the traced program
 * with SIGPIPE: the signal is blocked for the write and a pending one taken. */
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
			break;   /* marktap's output is gone: nothing to do */
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

static void out_write(void *ctx, const char *buf, size_t n)
{
	(void)ctx;
	if (h.out_fd >= 0)
		write_fd(h.out_fd, buf, n);
}

static void err_line(void *ctx, const char *line)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s\n", line);

	(void)ctx;
	if (h.err_fd >= 0)
		write_fd(h.err_fd, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
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

static void attach_marker(struct mt_marker *m)
{
	struct mt_marker_rt *rt = m->rt;
	struct attached *a;
	struct stat st;
	int have_st = 0, n = 0;

	if (!rt || !rt->format_ok || rt->script || !m->name)
		return;
	a = malloc(sizeof(*a) + sizeof(int) * (h.nbinds ? h.nbinds : 1));
	if (!a)
		return;
	for (unsigned i = 0; i < h.nbinds; i++) {
		struct binding *b = &h.binds[i];
		if (b->handler < 0 || strcmp(b->marker, m->name))
			continue;
		if (!b->any_object) {
			if (!have_st)
				have_st = object_of(m, &st) == 0 ? 1 : -1;
			if (have_st < 0 || st.st_dev != b->dev || st.st_ino != b->ino)
				continue;
		}
		a->handlers[n++] = b->handler;
	}
	if (!n) {
		free(a);
		return;
	}
	a->n = n;
	a->marker = m;
	a->name_ref = a->format_ref = LUA_NOREF;
	a->next = h.attached;
	h.attached = a;
	rt->script = a;
	h.ops->arm(m, MT_ARMED_SCRIPT);
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
	for (a = h.attached; a; a = a->next)
		detach_marker(a->marker);
	h.ops->unlock();
}

/* marktap's output and stderr: ours no longer, so that a pipe from
 * marktap ends when marktap does, not when this process does. */
static void drop_output(void)
{
	hlock();
	if (h.mt)
		mt_lua_flush(h.mt);
	if (h.out_fd >= 0)
		close(h.out_fd);
	if (h.err_fd >= 0)
		close(h.err_fd);
	h.out_fd = h.err_fd = -1;
	hunlock();
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
	for (unsigned i = 0; i < f->nfields; i++) {
		const struct mt_field *fld = &f->fields[i];
		if (fld->store == MT_ST_STRING)
			lua_pushlstring(L, a->v[i].str, a->slen[i] - 1);
		else if (fld->store == MT_ST_DOUBLE)
			lua_pushinteger(L, (lua_Integer)a->v[i].d);
		else
			lua_pushinteger(L, (lua_Integer)a->v[i].u);
	}
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

static void on_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap)
{
	struct attached *a = rt->script;
	struct mt_args args;
	lua_State *L;

	(void)m;
	if (!a || !h.active)
		return;
	if (in_handler) {   /* a signal handler interrupted one of ours */
		__atomic_add_fetch(&h.skipped_pending, 1, __ATOMIC_RELAXED);
		return;
	}
	h.ops->fetch(&rt->format, ap, &args);
	hlock();
	in_handler = 1;
	if (h.active && rt->script == a) {
		if (__atomic_load_n(&h.skipped_pending, __ATOMIC_RELAXED)) {
			long skipped = __atomic_exchange_n(&h.skipped_pending, 0, __ATOMIC_RELAXED);
			while (skipped-- > 0)
				mt_lua_skipped(h.mt);
		}
		L = mt_lua_state(h.mt);
		for (int i = 0; i < a->n; i++) {
			if (!lua_checkstack(L, (int)rt->format.nfields + 4))
				break;
			push_args(L, a, &rt->format, &args);
			mt_lua_run(h.mt, a->handlers[i], (int)rt->format.nfields + 2);
		}
		report_stop();
	}
	in_handler = 0;
	hunlock();
}

/* ---- globals ------------------------------------------------------------ */

static void send_delta(void)
{
	char *buf = NULL;
	size_t len = 0;

	hlock();
	if (mt_lua_sync_take(h.mt, MT_LUA_SYNC_DELTA | MT_LUA_SYNC_RESET_STATS, &buf, &len) < 0)
		len = 0;
	hunlock();
	send_frame('D', buf, len);
	free(buf);
}

static void apply(const struct mt_frame *f)
{
	hlock();
	in_handler = 1;
	mt_lua_sync_apply(h.mt, f->data, f->len);
	in_handler = 0;
	hunlock();
}

/* The session ends for this process: last delta, bye. */
static void finish(void)
{
	char bye[64];
	int fd;

	if (h.fd < 0)
		return;
	disarm_all();
	send_delta();
	hlock();
	mt_lua_flush(h.mt);
	snprintf(bye, sizeof(bye), "%lld %lld", (long long)mt_lua_errors(h.mt),
		 (long long)mt_lua_skips(h.mt));
	hunlock();
	send_frame('B', bye, strlen(bye));
	drop_output();
	pthread_mutex_lock(&h.send_lock);
	fd = h.fd;
	h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	shutdown(fd, SHUT_WR);
}

static void *serve(void *arg)
{
	struct mt_frame f;
	int fd = (int)(long)arg;

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
	drop_output();
	pthread_mutex_lock(&h.send_lock);
	if (h.fd == fd)
		h.fd = -1;
	pthread_mutex_unlock(&h.send_lock);
	close(fd);
	return NULL;
}

static int start_thread(int fd)
{
	pthread_t t;
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, serve, (void *)(long)fd);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc ? -1 : 0;
}

static void at_exit(void)
{
	finish();
}

/* ---- fork --------------------------------------------------------------- */

static void fork_prepare(void) { hlock(); }
static void fork_parent(void) { hunlock(); }

/* The child has a copy of the state; under "marktap -c" it joins the
 * session as a process of its own, counting only its own changes. */
static void fork_child(void)
{
	const char *name = getenv(MT_SESSION_ENV);
	struct sockaddr_un addr;
	char hello[64];
	int fd;

	hunlock();
	if (h.fd < 0 || !h.active)
		return;
	close(h.fd);
	h.fd = -1;
	h.stop_sent = 0;
	fd = name ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, mt_wire_address(name, &addr)) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {   /* marktap -x traces the parent only */
		disarm_all();
		drop_output();
		return;
	}
	mt_lua_sync_mark(h.mt);
	h.fd = fd;
	snprintf(hello, sizeof(hello), "%d 1", (int)getpid());
	if (send_frame('H', hello, strlen(hello)) < 0 || start_thread(fd) < 0)
		disarm_all();
}

/* ---- start -------------------------------------------------------------- */

static int parse_manifest(char *text, struct mt_lua_options *o, long long *target)
{
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[32], a[PATH_MAX], b[256], c[256];
		long long v;

		if (sscanf(line, "option %31s %lld", key, &v) == 2) {
			if (!strcmp(key, "maxmapentries")) o->maxmapentries = v;
			else if (!strcmp(key, "maxstringlen")) o->maxstringlen = v;
			else if (!strcmp(key, "maxaction")) o->maxaction = v;
			else if (!strcmp(key, "maxerrors")) o->maxerrors = v;
			else if (!strcmp(key, "maxskipped")) o->maxskipped = v;
			else if (!strcmp(key, "maxnesting")) o->maxnesting = v;
			else if (!strcmp(key, "guru")) o->guru = (int)v;
			else if (!strcmp(key, "target")) *target = v;
		} else if (sscanf(line, "bind %255s %4095s %255s", b, a, c) == 3) {
			struct binding *nb = realloc(h.binds, sizeof(*nb) * (h.nbinds + 1));
			struct stat st;
			if (!nb)
				return -1;
			h.binds = nb;
			nb = &h.binds[h.nbinds];
			memset(nb, 0, sizeof(*nb));
			nb->handler = -1;
			nb->any_object = !strcmp(a, "*");
			if (!nb->any_object) {
				if (stat(a, &st) != 0)
					continue;   /* not on this system: nothing to match */
				nb->dev = st.st_dev;
				nb->ino = st.st_ino;
			}
			nb->marker = strdup(c);
			nb->handler_name = strdup(b);
			if (!nb->marker || !nb->handler_name)
				return -1;
			h.nbinds++;
		}
	}
	return 0;
}

static int fail(const char *fmt, const char *arg)
{
	char msg[600];

	snprintf(msg, sizeof(msg), fmt, arg);
	send_frame('E', msg, strlen(msg));
	return -1;
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
	if (h.mt) {   /* another marktap session got here first */
		static const char busy[] = "the process already runs a marktap script";
		mt_wire_send(fd, 'E', busy, sizeof(busy) - 1, NULL, 0);
		return -2;
	}
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
	h.out_fd = f.fds[0];
	h.err_fd = f.fds[1];
	f.fds[0] = f.fds[1] = -1;
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
	o.write = out_write;
	o.error = err_line;
	h.mt = mt_lua_new(&o);
	if (!h.mt || mt_lua_load(h.mt, chunk, f.len - (size_t)(chunk - f.data), "=script",
				 err, sizeof(err))) {
		mt_wire_free(&f);
		return fail("cannot load the script: %s", h.mt ? err : "out of memory");
	}
	mt_wire_free(&f);
	for (unsigned i = 0; i < h.nbinds; i++) {
		struct binding *b = &h.binds[i];
		b->handler = mt_lua_handler(h.mt, b->handler_name);
	}
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

	*ops->hit = on_hit;
	*ops->added = on_added;
	*ops->removed = on_removed;
	ops->lock();
	h.active = 1;
	ops->for_each(arm_one, NULL);
	ops->unlock();
	if (!atfork_done) {
		atfork_done = 1;
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		atexit(at_exit);
	}
	if (send_frame('K', NULL, 0) < 0 || start_thread(fd) < 0) {
		disarm_all();
		return -1;
	}
	return 0;
}
