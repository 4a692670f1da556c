/* mt_lua_ctx.c - context and time tapset functions.
 *
 * Context values come from the host hooks (struct mt_lua_host); the
 * defaults describe the calling thread of this process, which is the hit's
 * context when handlers run inside the traced program.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "mt_lua_int.h"

/* pid and tid are asked for at every hit (c[tid()]++), and each is a system
 * call: cache them per thread.  fork() gives the child new ids, so the
 * child's only thread forgets its cache.  Initial-exec: no __tls_get_addr
 * call at a hit (8 bytes of the static TLS that libmarktap-script.so,
 * loaded with dlopen, may use). */
static __thread pid_t cached_tid __attribute__((tls_model("initial-exec")));
static __thread pid_t cached_pid __attribute__((tls_model("initial-exec")));
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_ids(void)
{
	cached_tid = 0;
	cached_pid = 0;
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_ids);
}

static int64_t def_pid(void *ctx)
{
	if (!cached_pid)
		cached_pid = getpid();
	return cached_pid;
}

static int64_t def_tid(void *ctx)
{
	if (!cached_tid)
		cached_tid = gettid();
	return cached_tid;
}

static int64_t def_ppid(void *ctx) { return getppid(); }
static int64_t def_uid(void *ctx) { return getuid(); }
static int64_t def_euid(void *ctx) { return geteuid(); }
static int64_t def_gid(void *ctx) { return getgid(); }
static int64_t def_egid(void *ctx) { return getegid(); }

static int64_t def_cpu(void *ctx)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : cpu;
}

/* The calling thread's comm, as the kernel's current->comm. */
static void def_execname(void *ctx, char *buf, size_t size)
{
	char comm[17] = "";
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) != 0)
		strcpy(comm, "?");
	snprintf(buf, size, "%s", comm);
}

/* Reads through the kernel so that a bad address is an error, not SIGSEGV. */
static int def_read_mem(void *ctx, uint64_t addr, void *dst, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	return got == (ssize_t)n ? 0 : -1;
}

int64_t mt_lua_self_pid(void) { return def_pid(NULL); }
int64_t mt_lua_self_tid(void) { return def_tid(NULL); }
int64_t mt_lua_self_cpu(void) { return def_cpu(NULL); }
void mt_lua_self_execname(char *buf, size_t size) { def_execname(NULL, buf, size); }

static int64_t def_clock_ns(void *ctx, int realtime);

void mt_ctx_defaults(struct mt_lua_host *h)
{
	pthread_once(&atfork_once, install_atfork);
	if (!h->pid) h->pid = def_pid;
	if (!h->tid) h->tid = def_tid;
	if (!h->ppid) h->ppid = def_ppid;
	if (!h->uid) h->uid = def_uid;
	if (!h->euid) h->euid = def_euid;
	if (!h->gid) h->gid = def_gid;
	if (!h->egid) h->egid = def_egid;
	if (!h->cpu) h->cpu = def_cpu;
	if (!h->execname) h->execname = def_execname;
	if (!h->read_mem) h->read_mem = def_read_mem;
	if (!h->clock_ns) h->clock_ns = def_clock_ns;
}

#define CTX_LONG(name) \
	static int rt_##name(lua_State *L) \
	{ \
		struct mt_lua *mt = MT_SELF(L); \
		lua_pushinteger(L, mt->host.name(mt->host.ctx)); \
		return 1; \
	}
CTX_LONG(pid)
CTX_LONG(tid)
CTX_LONG(ppid)
CTX_LONG(uid)
CTX_LONG(euid)
CTX_LONG(gid)
CTX_LONG(egid)
CTX_LONG(cpu)

static int rt_execname(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	char name[256];
	name[0] = 0;
	mt->host.execname(mt->host.ctx, name, sizeof name);
	lua_pushstring(L, name);
	return 1;
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t def_clock_ns(void *ctx, int realtime)
{
	(void)ctx;
	return clock_ns(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC);
}

static int64_t host_clock_ns(lua_State *L, int realtime)
{
	struct mt_lua *mt = MT_SELF(L);
	return mt->host.clock_ns(mt->host.ctx, realtime);
}

static int rt_gettimeofday_s(lua_State *L)
{
	lua_pushinteger(L, host_clock_ns(L, 1) / 1000000000);
	return 1;
}

static int rt_gettimeofday_ms(lua_State *L)
{
	lua_pushinteger(L, host_clock_ns(L, 1) / 1000000);
	return 1;
}

static int rt_gettimeofday_us(lua_State *L)
{
	lua_pushinteger(L, host_clock_ns(L, 1) / 1000);
	return 1;
}

static int rt_gettimeofday_ns(lua_State *L)
{
	lua_pushinteger(L, host_clock_ns(L, 1));
	return 1;
}

static int rt_local_clock_ns(lua_State *L)
{
	lua_pushinteger(L, host_clock_ns(L, 0));
	return 1;
}

static int rt_get_cycles(lua_State *L)
{
#if defined(__x86_64__) || defined(__i386__)
	lua_pushinteger(L, (lua_Integer)__rdtsc());
#else
	lua_pushinteger(L, clock_ns(CLOCK_MONOTONIC));
#endif
	return 1;
}

/* ctime(secs): "Thu Jan  1 00:00:00 1970", UTC, written by hand so the
 * traced program's locale cannot change it. */
static int rt_ctime(lua_State *L)
{
	static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	lua_Integer secs = luaL_checkinteger(L, 1);
	time_t t = (time_t)secs;
	struct tm tm;
	if ((lua_Integer)t != secs || !gmtime_r(&t, &tm) || tm.tm_year + 1900 > 9999
	    || tm.tm_year + 1900 < 0) {
		lua_pushliteral(L, "<invalid time>");
		return 1;
	}
	lua_pushfstring(L, "%s %s %s%d %s%d:%s%d:%s%d %d", days[tm.tm_wday], months[tm.tm_mon],
			tm.tm_mday < 10 ? " " : "", tm.tm_mday,
			tm.tm_hour < 10 ? "0" : "", tm.tm_hour,
			tm.tm_min < 10 ? "0" : "", tm.tm_min,
			tm.tm_sec < 10 ? "0" : "", tm.tm_sec, tm.tm_year + 1900);
	return 1;
}

/* rt.tz(): this machine's time zone now: seconds west of UTC (stap's
 * tz_gmtoff) and its name (tz_name), from TZ or /etc/localtime. */
static int rt_tz(lua_State *L)
{
	time_t now = time(NULL);
	struct tm tm;

	tzset();
	if (!localtime_r(&now, &tm)) {
		lua_pushinteger(L, 0);
		lua_pushliteral(L, "UTC");
		return 2;
	}
	lua_pushinteger(L, -(lua_Integer)tm.tm_gmtoff);
	lua_pushstring(L, tm.tm_zone ? tm.tm_zone : "");
	return 2;
}

/* rt.user_string(v [, n]): a marker's string argument as it is, or the
 * NUL-terminated string at address v of the traced process (an SDT probe's
 * char * operand), at most n bytes and MAXSTRINGLEN - 1. */
static int rt_user_string(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	size_t max = mt_strmax(mt), len = 0;
	lua_Integer want = luaL_optinteger(L, 2, -1);
	char buf[4096];

	if (want >= 0 && (size_t)want < max)
		max = (size_t)want;
	if (lua_type(L, 1) == LUA_TSTRING) {
		size_t n;
		const char *s = lua_tolstring(L, 1, &n);
		mt_push_trunc(L, mt, s, n < max ? n : max);
		return 1;
	}
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 1);
	if (max > sizeof(buf))
		max = sizeof(buf);
	/* in pieces that end at page boundaries: a string near the end of a
	 * mapping is read up to its NUL, not refused for the bytes after */
	while (len < max) {
		size_t piece = 4096 - (size_t)((addr + len) & 4095);
		if (piece > max - len)
			piece = max - len;
		if (mt->host.read_mem(mt->host.ctx, addr + len, buf + len, piece) != 0) {
			if (len == 0 || !addr)
				return mt_raisef(L, 0, "user string copy fault %d at 0x%" PRIx64, -14, addr);
			break;
		}
		char *nul = memchr(buf + len, '\0', piece);
		if (nul) {
			len = (size_t)(nul - buf);
			break;
		}
		len += piece;
	}
	lua_pushlstring(L, buf, len);
	return 1;
}

/*
 * Another task's name and thread group, by its thread id: the tapsets'
 * pid2execname() and the tgid of a marker's pid field (ctxswitch's next
 * task, a signal's recipient).  Read from /proc when the handler runs, so
 * a task gone by then gives "" and -1, as stap's pid2execname() gives ""
 * for a pid it cannot find.
 */
static FILE *open_task_file(lua_State *L, const char *what)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	char path[64];

	if (tid <= 0 || tid > 0x7fffffff)   /* pid_t range; 0 is the idle task */
		return NULL;
	snprintf(path, sizeof path, "/proc/%d/%s", (int)tid, what);
	return fopen(path, "re");
}

static int rt_task_execname(lua_State *L)
{
	char comm[64] = "";
	FILE *f = open_task_file(L, "comm");

	if (f) {
		if (!fgets(comm, sizeof comm, f))
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	lua_pushstring(L, comm);
	return 1;
}

/* The NUL-separated arguments of task TID (/proc/TID/cmdline, at most
 * 4 KiB), "" when it is gone or has none (a kernel thread). */
static int rt_task_cmdline(lua_State *L)
{
	char buf[4096];
	size_t n = 0;
	FILE *f = open_task_file(L, "cmdline");

	if (f) {
		n = fread(buf, 1, sizeof buf, f);
		fclose(f);
	}
	lua_pushlstring(L, buf, n);
	return 1;
}

static int rt_task_tgid(lua_State *L)
{
	char line[128];
	long long tgid = -1;
	FILE *f = open_task_file(L, "status");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %lld", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	lua_pushinteger(L, tgid);
	return 1;
}

/* Field n (proc(5)'s numbering, 3 and on) of /proc/TID/stat, -1 when the
 * task is gone; the name (field 2) may hold spaces and parentheses, so
 * the count starts after its last ')'. */
static long long task_stat_field(lua_State *L, int n)
{
	char buf[1024], *p;
	long long v = -1;
	FILE *f = open_task_file(L, "stat");
	size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;

	if (f)
		fclose(f);
	buf[len] = '\0';
	if (!(p = strrchr(buf, ')')))
		return -1;
	p++;
	for (int i = 3; i <= n && *p; i++) {
		while (*p == ' ')
			p++;
		if (i == n)
			sscanf(p, "%lld", &v);
		p += strcspn(p, " ");
	}
	return v;
}

/* rt.task_state(tid): the state letter of /proc/TID/stat ("R", "S",
 * "D"...), "" when the task is gone. */
static int rt_task_state(lua_State *L)
{
	char buf[1024], *p;
	FILE *f = open_task_file(L, "stat");
	size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;

	if (f)
		fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[2] == ' ') {
		lua_pushliteral(L, "");
		return 1;
	}
	lua_pushlstring(L, p + 2, 1);
	return 1;
}

/* rt.task_stat(tid, n): field n of its /proc stat (the parent is 4). */
static int rt_task_stat(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 2);

	lua_pushinteger(L, n >= 3 && n <= 52 ? task_stat_field(L, (int)n) : -1);
	return 1;
}

/* rt.task_cputime(tid, system): its user (or system) time in ns, as
 * stap's task_utime/task_stime give the kernel's; /proc counts clock
 * ticks, so the value moves by 1e9/_SC_CLK_TCK ns (10 ms). */
static int rt_task_cputime(lua_State *L)
{
	long long ticks = task_stat_field(L, lua_toboolean(L, 2) ? 15 : 14);
	long hz = sysconf(_SC_CLK_TCK);

	lua_pushinteger(L, ticks < 0 || hz <= 0 ? 0 : ticks * (1000000000 / hz));
	return 1;
}

/* rt.task_statm(tid, n): field n (1..7) of /proc/TID/statm, in pages;
 * 0 when the task is gone, as stap's proc_mem_* give. */
static int rt_task_statm(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 2);
	long long v[7] = {0};
	FILE *f = open_task_file(L, "statm");

	if (f) {
		if (fscanf(f, "%lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6]) < 1)
			v[0] = 0;
		fclose(f);
	}
	lua_pushinteger(L, n >= 1 && n <= 7 ? v[n - 1] : 0);
	return 1;
}

/* rt.task_ids(tid): its real and effective uid and gid from /proc/TID/status
 * (uid, euid, gid, egid), -1 each for a task that is gone. */
static int rt_task_ids(lua_State *L)
{
	long long id[4] = { -1, -1, -1, -1 }, scratch;
	char line[256];
	FILE *f = open_task_file(L, "status");

	while (f && fgets(line, sizeof line, f)) {
		int at = !strncmp(line, "Uid:", 4) ? 0 : !strncmp(line, "Gid:", 4) ? 2 : -1;
		if (at >= 0 && sscanf(line + 4, "%lld %lld %lld", &id[at], &id[at + 1], &scratch) < 2)
			id[at] = id[at + 1] = -1;
	}
	if (f)
		fclose(f);
	for (int i = 0; i < 4; i++)
		lua_pushinteger(L, id[i]);
	return 4;
}

/* rt.user_read(addr, size, signed [, what]): the integer of size 1, 2, 4 or
 * 8 bytes at addr in the traced process (stap's user_int and kin); a fault
 * is the run's error in stap's words: "user WHAT copy fault at 0xADDR". */
static int rt_user_read(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 1);
	lua_Integer size = luaL_checkinteger(L, 2);
	int is_signed = lua_toboolean(L, 3);
	unsigned char raw[8] = {0};
	uint64_t v = 0;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return luaL_error(L, "user_read: size %d is not 1, 2, 4 or 8", (int)size);
	if (!addr || mt->host.read_mem(mt->host.ctx, addr, raw, (size_t)size) != 0)
		return mt_raisef(L, 0, "user %s copy fault at 0x%" PRIx64, luaL_optstring(L, 4, "long"), addr);
	for (int i = (int)size - 1; i >= 0; i--)   /* little endian, as x86 and arm64 */
		v = v << 8 | raw[i];
	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ull << (size * 8);
	lua_pushinteger(L, (lua_Integer)v);
	return 1;
}

/* rt.user_bytes(addr, n): up to n bytes at addr in the traced process,
 * read by pages, so that it stops where the memory does: fewer bytes
 * than asked for say the next one faulted (stap's utf16/utf32 strings
 * and buffers, which report the address of the fault).  At most 64 KiB. */
static int rt_user_bytes(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 1);
	lua_Integer want = luaL_checkinteger(L, 2);
	size_t max = want < 0 ? 0 : want > 65536 ? 65536 : (size_t)want, len = 0;
	luaL_Buffer b;
	char *buf = luaL_buffinitsize(L, &b, max ? max : 1);

	while (addr && len < max) {
		size_t piece = 4096 - (size_t)((addr + len) & 4095);
		if (piece > max - len)
			piece = max - len;
		if (mt->host.read_mem(mt->host.ctx, addr + len, buf + len, piece) != 0)
			break;
		len += piece;
	}
	luaL_pushresultsize(&b, len);
	return 1;
}

/* rt.user_write(addr, size, v [, what]): guru mode's store of the low size
 * bytes (1, 2, 4 or 8) of v at addr in the traced process (stap's
 * set_user_*), or of the bytes of v when it is a string (size unused),
 * through process_vm_writev so that a bad address is stap's "user WHAT
 * copy fault" error, not a crash. */
static int rt_user_write(lua_State *L)
{
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 1);
	lua_Integer size = luaL_checkinteger(L, 2);
	unsigned char raw[8];
	struct iovec local = { raw, (size_t)size };

	if (lua_type(L, 3) == LUA_TSTRING) {
		local.iov_base = (void *)lua_tolstring(L, 3, &local.iov_len);
	} else {
		uint64_t v = (uint64_t)luaL_checkinteger(L, 3);
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return luaL_error(L, "user_write: size %d is not 1, 2, 4 or 8", (int)size);
		for (int i = 0; i < (int)size; i++, v >>= 8)   /* little endian, as x86 and arm64 */
			raw[i] = (unsigned char)v;
	}
	struct iovec remote = { (void *)(uintptr_t)addr, local.iov_len };
	if (!local.iov_len)
		return 0;
	if (!addr || process_vm_writev(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)local.iov_len)
		return mt_raisef(L, 0, "user %s copy fault at 0x%" PRIx64, luaL_optstring(L, 4, "long"), addr);
	return 0;
}

/* rt.loadavg(): the 1, 5 and 15 minute load averages of /proc/loadavg,
 * each times 100 (stap reads the kernel's avenrun, fixed point); nothing
 * when the file cannot be read. */
static int rt_loadavg(lua_State *L)
{
	FILE *f = fopen("/proc/loadavg", "re");
	long long whole[3], hundredths[3];
	int n = f ? fscanf(f, "%lld.%2lld %lld.%2lld %lld.%2lld", &whole[0], &hundredths[0], &whole[1],
			   &hundredths[1], &whole[2], &hundredths[2]) : 0;

	if (f)
		fclose(f);
	if (n != 6)
		return 0;
	for (int i = 0; i < 3; i++)
		lua_pushinteger(L, whole[i] * 100 + hundredths[i]);
	return 3;
}

/* rt.task_start_ns(tid): when the task started, in ns since boot (field 22
 * of /proc/TID/stat, in clock ticks); 0 when it is gone, as stap's. */
static int rt_task_start_ns(lua_State *L)
{
	long long ticks = task_stat_field(L, 22);
	long hz = sysconf(_SC_CLK_TCK);

	lua_pushinteger(L, ticks < 0 || hz <= 0 ? 0 : ticks * (1000000000 / hz));
	return 1;
}

/* rt.task_files(tid): its open file descriptors (the entries of
 * /proc/TID/fd) and its soft RLIMIT_NOFILE (/proc/TID/limits); -1 each
 * when they cannot be read (a task gone, another user's). */
static int rt_task_files(lua_State *L)
{
	lua_Integer tid = luaL_checkinteger(L, 1);
	long long open_fds = -1, max_fds = -1;
	char path[64], line[256];
	DIR *d;
	FILE *f;

	if (tid > 0 && tid <= 0x7fffffff) {
		snprintf(path, sizeof path, "/proc/%d/fd", (int)tid);
		if ((d = opendir(path))) {
			struct dirent *de;
			open_fds = 0;
			while ((de = readdir(d)))
				open_fds += de->d_name[0] != '.';
			closedir(d);
		}
		if ((f = open_task_file(L, "limits"))) {
			while (fgets(line, sizeof line, f))
				if (!strncmp(line, "Max open files", 14) && sscanf(line + 14, "%lld", &max_fds) != 1)
					max_fds = -1;
			fclose(f);
		}
	}
	lua_pushinteger(L, open_fds);
	lua_pushinteger(L, max_fds);
	return 2;
}

/* rt.task_rlimit(tid, n): its soft limit n (RLIMIT_CPU 0 ... RLIMIT_RTTIME
 * 15), line n + 2 of /proc/TID/limits (the kernel lists them in that
 * order after a header); "unlimited" is RLIM_INFINITY, -1; -1 too when
 * it cannot be read. */
static int rt_task_rlimit(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 2);
	long long v = -1;
	char line[256];
	FILE *f = n >= 0 && n < 16 ? open_task_file(L, "limits") : NULL;

	for (lua_Integer i = -1; f && fgets(line, sizeof line, f); i++) {
		if (i < n)
			continue;
		/* "Max open files            1024                 1048576              files" */
		const char *soft = line + strspn(line, " ");
		if (strlen(soft) > 26)
			soft += 26;
		soft += strspn(soft, " ");
		if (strncmp(soft, "unlimited", 9) != 0 && sscanf(soft, "%lld", &v) != 1)
			v = -1;
		break;
	}
	if (f)
		fclose(f);
	lua_pushinteger(L, v);
	return 1;
}

/* rt.task_sigmask(tid, field): a signal mask of /proc/TID/status ("SigBlk",
 * "SigIgn", "SigCgt", "SigPnd", "ShdPnd"), bit n-1 for signal n; -1 when
 * the task is gone. */
static int rt_task_sigmask(lua_State *L)
{
	const char *field = luaL_checkstring(L, 2);
	size_t n = strlen(field);
	unsigned long long mask = 0;
	bool found = false;
	char line[256];
	FILE *f = open_task_file(L, "status");

	while (f && !found && fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':')
			found = sscanf(line + n + 1, "%llx", &mask) == 1;
	if (f)
		fclose(f);
	lua_pushinteger(L, found ? (lua_Integer)mask : -1);
	return 1;
}

/* rt.raise(sig): guru mode's signal to the thread the hit is for (stap's
 * raise(), the kernel's send_sig on current), in this process. */
static int rt_raise(lua_State *L)
{
	struct mt_lua *mt = MT_SELF(L);
	lua_Integer sig = luaL_checkinteger(L, 1);
	pid_t pid = (pid_t)mt->host.pid(mt->host.ctx), tid = (pid_t)mt->host.tid(mt->host.ctx);

	if (sig < 0 || sig > 64 || syscall(SYS_tgkill, pid, tid, (int)sig) != 0)
		return mt_raisef(L, 0, "raise: signal %lld to thread %d: %s", (long long)sig, (int)tid,
				 sig < 0 || sig > 64 ? "no such signal" : strerror(errno));
	return 0;
}

/* rt.delay(ns): guru mode's delay of the handler (stap's mdelay, udelay),
 * at most a second; the thread sleeps where stap's CPU spins. */
static int rt_delay(lua_State *L)
{
	lua_Integer ns = luaL_checkinteger(L, 1);
	struct timespec ts;

	if (ns <= 0)
		return 0;
	if (ns > 1000000000)
		ns = 1000000000;
	ts.tv_sec = (time_t)(ns / 1000000000);
	ts.tv_nsec = (long)(ns % 1000000000);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return 0;
}

/* rt.printk(level, msg): guru mode's line in the kernel log (stap's
 * printk), through /dev/kmsg: root's, as the device's mode makes it. */
static int rt_printk(lua_State *L)
{
	lua_Integer level = luaL_checkinteger(L, 1);
	size_t len;
	const char *msg = luaL_checklstring(L, 2, &len);
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	char line[1024];
	int n;

	if (fd < 0)
		return mt_raisef(L, 0, "printk: /dev/kmsg: %s", strerror(errno));
	if (len > sizeof(line) - 8)
		len = sizeof(line) - 8;
	if (len && msg[len - 1] == '\n')   /* one line: the kernel's newline ends it */
		len--;
	n = snprintf(line, sizeof(line), "<%d>%.*s\n", (int)(level & 7), (int)len, msg);
	if (write(fd, line, (size_t)n) != n) {
		int e = errno;
		close(fd);
		return mt_raisef(L, 0, "printk: /dev/kmsg: %s", strerror(e));
	}
	close(fd);
	return 0;
}

/* rt.env_var(name): the variable in the environment of the process the
 * handler runs in ("" when unset) */
static int rt_env_var(lua_State *L)
{
	const char *v = getenv(luaL_checkstring(L, 1));

	lua_pushstring(L, v ? v : "");
	return 1;
}

/* rt.ktime_get_ns(): CLOCK_MONOTONIC, as the kernel's ktime_get_ns() */
static int rt_ktime_get_ns(lua_State *L)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	lua_pushinteger(L, (lua_Integer)ts.tv_sec * 1000000000 + ts.tv_nsec);
	return 1;
}

/* rt.task_list(): the processes /proc lists now, by pid, as a sequence
 * (target_set_report walks their parents). */
static int rt_task_list(lua_State *L)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	lua_Integer n = 0;

	lua_newtable(L);
	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		lua_pushinteger(L, pid);
		lua_rawseti(L, -2, ++n);
	}
	if (d)
		closedir(d);
	return 1;
}

static int rt_page_size(lua_State *L)
{
	lua_pushinteger(L, sysconf(_SC_PAGESIZE));
	return 1;
}

static const luaL_Reg ctx_funcs[] = {
	{"task_execname", rt_task_execname}, {"task_tgid", rt_task_tgid},
	{"task_cmdline", rt_task_cmdline},
	{"task_stat", rt_task_stat}, {"task_state", rt_task_state},
	{"task_cputime", rt_task_cputime},
	{"task_statm", rt_task_statm}, {"page_size", rt_page_size}, {"task_list", rt_task_list},
	{"task_ids", rt_task_ids}, {"user_read", rt_user_read}, {"env_var", rt_env_var},
	{"user_bytes", rt_user_bytes}, {"user_write", rt_user_write}, {"loadavg", rt_loadavg},
	{"task_start_ns", rt_task_start_ns}, {"task_files", rt_task_files},
	{"task_sigmask", rt_task_sigmask}, {"task_rlimit", rt_task_rlimit}, {"raise", rt_raise},
	{"delay", rt_delay}, {"printk", rt_printk},
	{"ktime_get_ns", rt_ktime_get_ns},
	{"user_string", rt_user_string},
	{"pid", rt_pid}, {"tid", rt_tid}, {"ppid", rt_ppid}, {"uid", rt_uid},
	{"euid", rt_euid}, {"gid", rt_gid}, {"egid", rt_egid}, {"cpu", rt_cpu},
	{"execname", rt_execname},
	{"gettimeofday_s", rt_gettimeofday_s}, {"gettimeofday_ms", rt_gettimeofday_ms},
	{"gettimeofday_us", rt_gettimeofday_us}, {"gettimeofday_ns", rt_gettimeofday_ns},
	{"local_clock_ns", rt_local_clock_ns}, {"get_cycles", rt_get_cycles},
	{"ctime", rt_ctime}, {"ksym", mt_rt_ksym}, {"tz", rt_tz},
	{NULL, NULL}
};

void mt_open_ctx(lua_State *L, struct mt_lua *mt)
{
	lua_pushlightuserdata(L, mt);
	luaL_setfuncs(L, ctx_funcs, 1);
}
