/*
 * kmark.c - handlers of kernel markers, run by marktap or by marktap.ko.
 *
 * marktap.ko records the kernel markers a script probes into a kernel
 * session (the rings of marktrace record -k); marktap closes the open
 * sub-buffers every 100 ms (so that rare events do not wait for a full
 * one), drains them every 10 ms and runs the handlers on each event in
 * turn, CPU by CPU, with the
 * event's own context: pid(), tid(), execname() and cpu() are those of
 * the code that hit the marker, and so are uid() euid() gid() egid() and
 * ppid() when the script uses them (the module then records them with
 * each event: MT_CONFIG_CREDS).  local_clock_ns() is the hit's time
 * (CLOCK_MONOTONIC, the writers' clock), gettimeofday_*() that time on the
 * wall clock.  Handlers thus run a little after the
 * hit, in marktap, not in the kernel: they see the marker's arguments as
 * recorded (strings copied at the hit), never kernel memory.
 *
 * That is the fallback: a module built with Lua runs the handlers itself
 * at the hit (kernel_start below).
 *
 * At start the script's markers are checked against the module's
 * catalogue: a probe whose markers this kernel cannot provide is a
 * warning naming the reason, a script left with nothing to probe an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tr_run.h"
#include "mt_lua.h"
#include <lauxlib.h>
#include "kernel.h"
#include "mt_event.h"
#include "mt_ioctl.h"

struct kprobe {
	const char *marker;
	int handler;
	unsigned probe;          /* index in s->probes */
	const char *pp;          /* kernel.mark("NAME"), for messages */
	bool kfunc;              /* kernel.function, kprobe, kernel.trace, netfilter,
				    kernel.data: bound by name */
};

struct tr_kmark {
	struct mt_kernel k;
	int started;
	struct mt_lua *mt;
	struct kprobe *probes;
	unsigned nprobes;
	struct mt_format *fmt[MT_EVENTS_MAX];   /* parsed on first sight */
	struct mt_format *own[MT_EVENTS_MAX];   /* the marker's own fields (no credentials) */
	signed char state[MT_EVENTS_MAX];      /* 0 unseen, 1 handled, 2 no handler, -1 bad */
	unsigned nscript;                      /* probes of the script, of any kind */
	unsigned nkfunc;                       /* kernel function and tracepoint probes: the module's only */
	unsigned nnetfilter;                   /* netfilter probes: the module's only too */
	unsigned nkdata;                       /* hardware watchpoints (kernel.data): so too */
	const char *module_only;               /* what only the module runs (them, syscall arguments), or NULL */
	int creds;                             /* ask for MT_CONFIG_CREDS */
	/* the event whose handlers run: the context functions read it */
	const struct mt_event_context *cur;
	unsigned cur_cpu;
	mt_u64 cur_ts;                         /* its time, CLOCK_MONOTONIC ns */
	const struct mt_args *cur_args;        /* and its credentials after nown fields */
	unsigned cur_nown;
	int cur_creds;
	int64_t wall_offset;                   /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	mt_u64 bad;
	mt_u64 runs;                           /* handler runs, for -v */
	int verbose;
	/* handlers run by marktap.ko's Lua (tr_kmark_in_kernel) */
	const char *lua;                       /* the translated chunk */
	size_t lua_len;
	FILE *out;
	int want_kernel, in_kernel, kfd;
	unsigned kncpu;
	mt_u64 kerrors, last_pull;
	mt_u64 pull_every;                     /* ns between pulls: 1 s, longer while they time out */
	int pull_late;                         /* a pull ran out of the call's bound: said once (-v) */
	unsigned arena_kib;                    /* each state's arena (MAXARENAKB, or from the maps) */
	unsigned out_kib;                      /* each CPU's output ring (-s; 0: the module's) */
	mt_u64 maxerrors;           /* MAXERRORS as the module has it */
	/* the module's time bounds, from -D (0: the module's defaults) */
	int64_t maxaction_us, maxtrylock, overload_threshold, overload_interval;
	int no_overload;
	char *kbuf;                            /* deltas and output */
	mt_u64 last_flush;                     /* CLOCK_MONOTONIC ns */
	mt_u64 own_skipped;                    /* events of marktap's own process */
	mt_u64 unhandled;                      /* left when a signal ended the session */
	struct mt_ring_packet pkt;             /* a packet a round left unfinished */
	bool pkt_held;
	unsigned pkt_cpu;
	size_t pkt_off;
	bool count_only;                       /* poll_round counts, runs nothing */
	int self_pid;
	struct mt_lua_host host;
};

static int64_t k_pid(void *ctx)
{
	struct tr_kmark *km = ctx;
	return km->cur ? km->cur->pid : mt_lua_self_pid();
}

static int64_t k_tid(void *ctx)
{
	struct tr_kmark *km = ctx;
	return km->cur ? km->cur->tid : mt_lua_self_tid();
}

static int64_t k_cpu(void *ctx)
{
	struct tr_kmark *km = ctx;
	return km->cur ? km->cur_cpu : mt_lua_self_cpu();
}

static void k_execname(void *ctx, char *buf, size_t size)
{
	struct tr_kmark *km = ctx;

	if (!km->cur) {
		mt_lua_self_execname(buf, size);
		return;
	}
	snprintf(buf, size, "%s", km->cur->procname);
}

/* A credential of the event (MT_CREDS_FORMAT order), or marktap's own
 * outside events (begin, end, timers). */
static int64_t k_cred(void *ctx, unsigned i, int64_t own)
{
	struct tr_kmark *km = ctx;

	if (!km->cur)
		return own;
	if (!km->cur_creds)
		return -1;   /* a module that did not record them */
	return (int32_t)km->cur_args->v[km->cur_nown + i].u;
}

static int64_t k_ppid(void *ctx) { return k_cred(ctx, 0, getppid()); }
static int64_t k_uid(void *ctx) { return k_cred(ctx, 1, getuid()); }
static int64_t k_euid(void *ctx) { return k_cred(ctx, 2, geteuid()); }
static int64_t k_gid(void *ctx) { return k_cred(ctx, 3, getgid()); }
static int64_t k_egid(void *ctx) { return k_cred(ctx, 4, getegid()); }

static int64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t k_clock_ns(void *ctx, int realtime)
{
	struct tr_kmark *km = ctx;

	if (!km->cur)
		return now_ns(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	return (int64_t)km->cur_ts + (realtime ? km->wall_offset : 0);
}

static int k_read_mem(void *ctx, uint64_t addr, void *dst, size_t n)
{
	(void)ctx; (void)addr; (void)dst; (void)n;
	return -1;   /* kernel memory is not ours to read */
}

/*
 * Do the script's functions read credentials?  Recording them costs 20
 * bytes an event, so only then.  A module file (.mtm) keeps no function
 * list: there, always.
 */
static int wants_creds(const struct tr_session *s)
{
	static const char *const reads[] = { "rt.uid(", "rt.euid(", "rt.gid(", "rt.egid(", "rt.ppid(" };

	if (!s->funcs.n)
		return 1;
	for (unsigned i = 0; i < s->funcs.n; i++) {
		const struct tr_func *f = s->funcs.items[i];
		for (unsigned k = 0; f->code && k < sizeof(reads) / sizeof(reads[0]); k++)
			if (strstr(f->code, reads[k]))
				return 1;
	}
	return 0;
}

/*
 * The arena of each of the module's states, KiB: -DMAXARENAKB when given;
 * else, when the script raised MAXMAPENTRIES or sized an array, enough
 * for every array full (its size, or MAXMAPENTRIES) and sent home whole:
 * an entry with a short string key takes some 140 bytes in a state, its
 * copy at the last exchange 70 and a pull's buffer while it is made 270
 * (Lua 5.4, measured with mt_rt.lua), and the arena's free blocks are
 * not all reusable as the tables double, so 768 bytes an entry, 1 MiB
 * for the rest, at least the module's 4 MiB (stap sizes its maps from
 * MAXMAPENTRIES the same way); else the module's 4 MiB, as before.  At
 * most the module's 256 MiB a state; its own limits (1 GiB of arenas a
 * script, group_arena_kib for the device's group) are checked at the load.
 */
static unsigned arena_kib(struct tr_session *s)
{
	int64_t set = tr_define_value(s, "MAXARENAKB", 0);
	int64_t maxmap = tr_define_value(s, "MAXMAPENTRIES", 0), entries = 0;
	bool sized = maxmap > 0;

	if (set > 0)
		return set > 256 * 1024 ? 256 * 1024 : (unsigned)set;
	for (unsigned i = 0; i < s->globals.n; i++) {
		const struct tr_sym *g = s->globals.items[i];
		if (g->arity > 0) {
			entries += g->size > 0 ? g->size : maxmap > 0 ? maxmap : 2048;
			sized |= g->size > 0;
		}
	}
	if (!sized)
		return 4096;
	if (entries > 256 * 1024 * 4 / 3)
		return 256 * 1024;
	return entries * 3 / 4 + 1024 > 4096 ? (unsigned)(entries * 3 / 4 + 1024) : 4096;
}

struct tr_kmark *tr_kmark_new(struct tr_session *s)
{
	struct tr_kmark *km = NULL;

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			struct tr_resolved *r = p->resolved.items[k];
			struct kprobe *kp;
			if (r->kind != P_MARK_KERNEL)
				continue;
			if (!km) {
				km = tr_alloc(sizeof(*km));
				km->k.fd = -1;
				km->verbose = s->verbose;
				km->self_pid = getpid();
			}
			km->probes = realloc(km->probes, (km->nprobes + 1) * sizeof(*km->probes));
			kp = &km->probes[km->nprobes++];
			kp->marker = r->marker;
			kp->handler = (int)p->id;   /* an id until start */
			kp->probe = i;
			kp->pp = r->pp;
			/* a -p4 module read back keeps the binding, not r->kfunc */
			if (r->netfilter || !strncmp(r->marker, "netfilter:", 10)) {
				kp->kfunc = true;
				km->nnetfilter++;
			} else if (!strncmp(r->marker, "hwbp:", 5)) {
				kp->kfunc = true;
				km->nkdata++;
			} else {
				kp->kfunc = r->kfunc != NULL || !strncmp(r->marker, "tracepoint:", 11);
				km->nkfunc += kp->kfunc;
			}
		}
	}
	if (km) {
		km->maxaction_us = tr_define_value(s, "MAXACTION_US", 0);
		km->maxtrylock = tr_define_value(s, "MAXTRYLOCK", 0);
		km->overload_threshold = tr_define_value(s, "STP_OVERLOAD_THRESHOLD", 0);
		km->overload_interval = tr_define_value(s, "STP_OVERLOAD_INTERVAL", 0);
		km->no_overload = tr_define_value(s, "STP_NO_OVERLOAD", 0) != 0;
		km->nscript = s->probes.n;
		km->creds = wants_creds(s);
		km->arena_kib = arena_kib(s);
		/* -s MB: at most what kdrain takes of a CPU at once */
		km->out_kib = s->buffer_mb >= 4 ? 4096 : s->buffer_mb >= 2 ? 2048 : s->buffer_mb ? 1024 : 0;
		km->host.pid = k_pid;
		km->host.tid = k_tid;
		km->host.cpu = k_cpu;
		km->host.ppid = k_ppid;
		km->host.uid = k_uid;
		km->host.euid = k_euid;
		km->host.gid = k_gid;
		km->host.egid = k_egid;
		km->host.execname = k_execname;
		km->host.read_mem = k_read_mem;
		km->host.clock_ns = k_clock_ns;
		km->host.ctx = km;
	}
	return km;
}

const struct mt_lua_host *tr_kmark_host(struct tr_kmark *km)
{
	return &km->host;
}

/*
 * The script's markers against the module's catalogue.  One the module
 * does not know is a semantic error (markers.tsv has it, the loaded module
 * not: another version); a probe none of whose markers this kernel
 * provides a warning per marker, with the module's reason, and the probe
 * is dropped; no probe left at all, an error.  Returns the markers left
 * (handler -1: dropped), or -1.
 */
static int check_catalogue(struct tr_kmark *km)
{
	struct mt_kernel_marker *v;
	size_t n;
	unsigned dropped_probes = 0, left = 0;
	int rc = mt_kernel_catalogue(&v, &n);

	if (rc < 0)
		return (int)km->nprobes;   /* no module: opening it says so */
	for (unsigned i = 0; i < km->nprobes; i++) {
		/* a kernel function or tracepoint is no catalogue marker: the
		 * module checks it at load (mt_kprobe.c, mt_tracepoint.c),
		 * with the kernel's reason */
		if (!km->probes[i].kfunc && !mt_kernel_find(v, n, km->probes[i].marker)) {
			fprintf(stderr, "semantic error: while resolving probe point %s: the loaded "
				"marktap.ko has no such marker (built from other sources?)\n",
				km->probes[i].pp);
			free(v);
			return -1;
		}
	}
	for (unsigned i = 0, end; i < km->nprobes; i = end) {
		unsigned usable = 0;
		/* the points of one probe are consecutive */
		for (end = i; end < km->nprobes && km->probes[end].probe == km->probes[i].probe; end++)
			usable += km->probes[end].kfunc ||
				  mt_kernel_find(v, n, km->probes[end].marker)->available;
		if (usable) {
			left += end - i;
			continue;
		}
		for (unsigned k = i; k < end; k++) {
			fprintf(stderr, "WARNING: probe point %s is unavailable on this kernel: %s\n",
				km->probes[k].pp, mt_kernel_find(v, n, km->probes[k].marker)->source);
			km->probes[k].handler = -1;
		}
		dropped_probes++;
	}
	free(v);
	if (dropped_probes == km->nscript) {
		fprintf(stderr, "semantic error: no probes left: every kernel marker the script "
			"probes is unavailable on this kernel\n");
		return -1;
	}
	return (int)left;
}

/* NAME cut after its first LEVEL '_'-separated words, "_*" for the rest. */
static const char *cut_name(const char *name, int level)
{
	const char *p = name;

	for (int i = 0; i < level && (p = strchr(p, '_')); i++)
		p++;
	return p ? tr_printf("%.*s*", (int)(p - name), name) : name;
}

/*
 * The module's enable patterns for the probed markers: each name once (a
 * syscall.* script has some 350 probes on one marker), and when the list
 * does not fit the module's MT_IOC_PATTERNS_MAX, coarser globs
 * (kernel_sched_*, then kernel_*, then *).  Arming more than the probed
 * markers costs events, not correctness: events without a handler are
 * skipped.
 */
static char *arm_patterns(const struct tr_kmark *km)
{
	for (int level = 8; level >= 0; level--) {
		struct tr_buf b = {0};
		struct tr_vec seen = {0};
		for (unsigned i = 0; i < km->nprobes; i++) {
			const char *pat;
			bool dup = false;
			if (km->probes[i].handler < 0)
				continue;
			pat = level ? cut_name(km->probes[i].marker, level) : "*";
			for (unsigned k = 0; k < seen.n && !dup; k++)
				dup = !strcmp(seen.items[k], pat);
			if (dup)
				continue;
			tr_vec_push(&seen, (void *)pat);
			tr_buf_printf(&b, "%s%s", seen.n > 1 ? "\n" : "", pat);
		}
		free(seen.items);
		if (strlen(tr_buf_str(&b)) < MT_IOC_PATTERNS_MAX)
			return tr_strdup(tr_buf_str(&b));
	}
	return tr_strdup("*");
}

/* ---- handlers in marktap.ko: the module's Lua runs them at the hit ----
 *
 * With a module built with Lua (and MARKTAP_KERNEL_LUA not 0), the translated
 * chunk goes to the module (MT_IOC_LUA_LOAD, after marktap's limits), with
 * a __mt_bind line per probed marker; one Lua state per CPU runs the
 * handlers where the markers fire (kmod/mt_lua_host.c, the runtime's C
 * half in kmod/mt_krt.lua, mt_rt.lua as here).  Globals move as with
 * traced processes: the states start from marktap's values, their changes
 * come home every second, before marktap's handlers and at the end, and
 * what marktap's handlers change goes back.  Output and ERROR lines are
 * drained every 10 ms, CPU by CPU.  A module without Lua, or a script it
 * refuses, falls back to recording (with a warning for the latter). */

#define KBUF_SIZE (4u << 20)

void tr_kmark_in_kernel(struct tr_kmark *km, const char *lua, size_t len, FILE *out)
{
	const char *e = getenv("MARKTAP_KERNEL_LUA");

	if (!km)
		return;
	km->lua = lua;
	km->lua_len = len;
	km->out = out;
	km->want_kernel = !(e && !strcmp(e, "0"));
	/* no recorded event carries these: the handlers run in the module or
	 * not at all (a netfilter hook's handlers are the packet's verdict,
	 * which a recorded event comes too late to give) */
	km->module_only = km->nnetfilter && memmem(lua, len, "rt.kernel_store(", 16) ?
			  "netfilter probes that give a verdict ($verdict, decided as the packet "
			  "passes: a recorded event comes after it)" :
			  km->nnetfilter ? "netfilter probes" :
			  km->nkfunc ? "kernel function and tracepoint probes" :
			  km->nkdata ? "hardware watchpoints (kernel.data)" :
			  memmem(lua, len, "rt.syscall_arg(", 15) ||
			  memmem(lua, len, "rt.syscall_store(", 17) ? "system call arguments" :
			  memmem(lua, len, "rt.kbacktrace(", 14) ? "kernel backtraces" : NULL;
}

/*
 * What the module's runtime does not have (kmod/mt_krt.lua): a chunk
 * calling any of these runs its kernel handlers on recorded events, as
 * before.  Conservative: the whole chunk is looked at, begin and end too.
 */
static const char *kernel_lacks(const char *lua, size_t len)
{
	static const char *const calls[] = {
		"rt_regmatch(", "rt.matched(",
		"%b", "%m", "%M", NULL
	};

	for (const char *const *c = calls; *c; c++)
		if (memmem(lua, len, *c, strlen(*c)))
			return *c;
	return NULL;
}

/* name(cpu, in) in the module's states (cpu < 0: all), with MT_LUA_CALL_*
 * flags; a string result in kbuf. */
static long kcall(struct tr_kmark *km, const char *name, int cpu, const char *in, size_t in_len,
		  size_t *out_len, unsigned flags)
{
	struct mt_ioc_lua_call c;
	long rc;

	memset(&c, 0, sizeof(c));
	snprintf(c.name, sizeof(c.name), "%s", name);
	c.flags = flags;
	if (cpu >= 0) {
		c.flags |= MT_LUA_CALL_CPU;
		c.cpu = (unsigned)cpu;
	}
	c.in = (uintptr_t)in;
	c.in_len = (unsigned)in_len;
	c.out = (uintptr_t)km->kbuf;
	c.out_size = KBUF_SIZE;
	rc = ioctl(km->kfd, MT_IOC_LUA_CALL, &c);
	if (out_len)
		*out_len = rc >= 0 ? c.out_len : 0;
	return rc;
}

/*
 * The handlers' output: printf to marktap's output, ERROR and WARNING
 * lines to stderr.  One read per CPU, what is there now (a CPU's ring is
 * smaller than kbuf): our own writes are system calls, whose handlers may
 * print or fail again, so a loop until the rings are empty need never
 * end, and the session's loop must get to look at -T and signals.  The
 * lines for stderr go out in one write, not one each.
 */
static void kdrain(struct tr_kmark *km)
{
	struct tr_buf err = {0};

	for (unsigned cpu = 0; cpu < km->kncpu; cpu++) {
		struct mt_ioc_lua_output o = { .buf = (uintptr_t)km->kbuf, .size = KBUF_SIZE, .cpu = cpu };
		long n = ioctl(km->kfd, MT_IOC_LUA_OUTPUT, &o);
		const char *p = km->kbuf, *end = km->kbuf + (n > 0 ? n : 0);

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t k = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			if (k > 7 && !memcmp(p, "ERROR: ", 7)) {
				tr_buf_add(&err, p, k);
				km->kerrors++;
			} else if (k > 9 && !memcmp(p, "WARNING: ", 9)) {
				tr_buf_add(&err, p, k);
			} else {
				fwrite(p, 1, k, km->out);
			}
			p += k;
		}
	}
	fflush(km->out);
	if (err.len)
		fwrite(tr_buf_str(&err), 1, err.len, stderr);
	free(err.data);
}

/*
 * One state's changes since the last pull, applied here.  The state sends
 * them in pieces of at most kbuf's size, each marked 'M' (more follow) or
 * 'E' (the last) (mt_krt.lua's __mt_take).  0, or -1 when the state could
 * not make them within the call's bound (MT_LUA_CALL_TRY: nothing taken,
 * nothing lost; the next pull sends them).
 */
static int pull_state(struct tr_kmark *km, unsigned cpu, unsigned flags)
{
	struct tr_buf all = {0};
	char piece[24];
	int rc = 0;

	snprintf(piece, sizeof(piece), "%u", KBUF_SIZE - 1);
	for (;;) {
		size_t n = 0;
		if (kcall(km, "__mt_take", (int)cpu, piece, strlen(piece), &n, flags) < 0) {
			rc = errno == ETIME ? -1 : 0;
			break;
		}
		if (n == 0)
			break;
		tr_buf_add(&all, km->kbuf + 1, n - 1);
		if (km->kbuf[0] != 'M')
			break;
	}
	if (all.len)
		mt_lua_sync_apply(km->mt, all.data, all.len);
	free(all.data);
	return rc;
}

/* flags: MT_LUA_CALL_TRY while the handlers run, MT_LUA_CALL_LONG after the stop */
static void pull(struct tr_kmark *km, unsigned flags)
{
	int late = 0;

	for (unsigned cpu = 0; cpu < km->kncpu; cpu++)
		late |= pull_state(km, cpu, flags) < 0;
	km->last_pull = (mt_u64)tr_mono_ns();
	if (!late) {
		km->pull_every = 1000000000ull;
		return;
	}
	/* arrays too large to send within a call's bound while hits wait:
	 * less often, up to every 16 s; the final pull sends them whole */
	if (km->pull_every < 16000000000ull)
		km->pull_every *= 2;
	if (km->verbose && !km->pull_late++)
		fprintf(stderr, "marktap: the kernel handlers' globals take longer to send than a call "
			"may hold a state (MAXACTION_US): marktap's own probes see them as of the "
			"last pull that finished, the end probes whole\n");
}

int tr_kmark_pull(struct tr_kmark *km)
{
	if (!km || !km->in_kernel)
		return 0;
	pull(km, MT_LUA_CALL_TRY);
	return 1;
}

/* buf (len bytes) to fn in the states (cpu < 0: all), in pieces the
 * module takes (mt_krt.lua's __mt_put gathers all but the last) */
static void send(struct tr_kmark *km, const char *fn, int cpu, const char *buf, size_t len,
		 unsigned flags)
{
	const size_t max = 4u << 20;   /* the module's MT_LUA_SOURCE_MAX */

	for (; len > max; buf += max, len -= max)
		kcall(km, "__mt_put", cpu, buf, max, NULL, flags);
	kcall(km, fn, cpu, buf, len, NULL, flags);
}

void tr_kmark_push(struct tr_kmark *km)
{
	char *buf = NULL;
	size_t len = 0;

	if (!km || !km->in_kernel)
		return;
	if (mt_lua_sync_take(km->mt, MT_LUA_SYNC_DELTA, &buf, &len) == 0 && len)
		send(km, "__mt_apply", -1, buf, len, 0);
	free(buf);
}

int64_t tr_kmark_in_kernel_errors(struct tr_kmark *km)
{
	return km ? (int64_t)km->kerrors : 0;
}

bool tr_kmark_failed(struct tr_kmark *km)
{
	return km && km->kerrors > km->maxerrors;
}

/* A -D value as a field of the load request: 0 (the module's default) when
 * not given or not positive, max when larger. */
static mt_u64 clamp_define(int64_t v, mt_u64 max)
{
	return v > 0 && (mt_u64)v <= max ? (mt_u64)v : v > 0 ? max : 0;
}

/*
 * The time bounds of the module's runs (mt_ioctl.h), as the -D settings
 * say: MAXACTION_US a handler's, MAXTRYLOCK stap's tries of 10 us for a
 * busy state, stap's STP_OVERLOAD_THRESHOLD and STP_OVERLOAD_INTERVAL (ns)
 * and STP_NO_OVERLOAD.  The module allows the device's group no more than
 * its defaults.
 */
static void kernel_time_bounds(const struct tr_kmark *km, struct mt_ioc_lua_load *ld)
{
	ld->max_run_us = (__u32)clamp_define(km->maxaction_us, UINT32_MAX);
	ld->wait_us = (__u32)clamp_define(km->maxtrylock, UINT32_MAX / 10) * 10;
	ld->overload_threshold_ns = clamp_define(km->overload_threshold, INT64_MAX);
	ld->overload_interval_ns = clamp_define(km->overload_interval, INT64_MAX);
	if (ld->overload_interval_ns && ld->overload_threshold_ns > ld->overload_interval_ns)
		ld->overload_threshold_ns = ld->overload_interval_ns;
	ld->flags = km->no_overload ? MT_LUA_LOAD_NO_OVERLOAD : 0;
}

/* The script to the module: 0 running there, -1 not (record instead), -2 an error. */
static int kernel_start(struct tr_kmark *km)
{
	struct mt_ioc_lua_load ld;
	lua_State *L = mt_lua_state(km->mt);
	const char *limits = NULL;
	char *src;
	size_t cap, len = 0;
	int top = lua_gettop(L);
	const char *lacks = kernel_lacks(km->lua, km->lua_len);
	const char *nat = getenv("MARKTAP_NATIVE");
	/* the chunk's native plans (rt.native) run in the module too, unless
	 * MARKTAP_NATIVE=0 forces Lua as in the traced processes */
	const char *native;
	lua_Integer maxaction = 1000, maxstringlen = 512, maxerrors = 0;

	if (lacks && km->module_only) {
		fprintf(stderr, "ERROR: %s work only in marktap.ko, whose runtime has no %s\n",
			km->module_only, lacks);
		return -2;
	}
	if (lacks) {
		if (km->verbose)
			fprintf(stderr, "marktap: kernel handlers on recorded events: the module's runtime "
				"has no %s\n", lacks);
		return -1;
	}
	if (luaL_dostring(L, "local rt = require 'mtrt' return string.format("
			  "'__mt_limits{MAXMAPENTRIES=%d,MAXSTRINGLEN=%d,MAXACTION=%d,MAXNESTING=%d}',"
			  "rt.MAXMAPENTRIES, rt.MAXSTRINGLEN, rt.MAXACTION, rt.MAXNESTING),"
			  "rt.MAXACTION, rt.MAXSTRINGLEN, rt.MAXERRORS") == LUA_OK) {
		limits = lua_tostring(L, -4);
		maxaction = lua_tointeger(L, -3);
		maxstringlen = lua_tointeger(L, -2);
		maxerrors = lua_tointeger(L, -1);
	}
	/* string keys are cut in the module at its MAXSTRINGLEN, which is
	 * the script's only within 16..4096: else the handlers run in Lua */
	native = (nat && !strcmp(nat, "0")) || maxstringlen < 16 || maxstringlen > 4096 ? "false" : "true";
	cap = (limits ? strlen(limits) : 0) + km->lua_len + 88 * (km->nprobes + 1) + 16;
	src = tr_alloc(cap);
	len += (size_t)snprintf(src, cap, "%s\n", limits ? limits : "");
	lua_settop(L, top);
	memcpy(src + len, km->lua, km->lua_len);
	len += km->lua_len;
	for (unsigned i = 0; i < km->nprobes; i++)
		if (km->probes[i].handler >= 0)
			len += (size_t)snprintf(src + len, cap - len, "\n__mt_bind(\"%s\", \"probe_%d\", %s)",
						km->probes[i].marker, km->probes[i].handler, native);
	km->kfd = open(MT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (km->kfd < 0) {
		free(src);
		return -1;
	}
	memset(&ld, 0, sizeof(ld));
	ld.source = (uintptr_t)src;
	ld.source_len = (unsigned)len;
	ld.arena_kib = km->arena_kib;
	ld.out_kib = km->out_kib;
	/* the generated code counts stap's MAXACTION itself; the module's
	 * count of Lua instructions is the backstop, four times looser
	 * (an unlimited MAXACTION still stops, after 10^7 statements) */
	ld.maxaction = (unsigned)(maxaction <= 0 || maxaction > 2500000 ? 10000000 : 4 * maxaction);
	ld.maxstringlen = (unsigned)(maxstringlen < 16 ? 16 : maxstringlen > 4096 ? 4096 : maxstringlen);
	/* the module stops at the error past MAXERRORS (negative: never) */
	km->maxerrors = maxerrors < 0 || maxerrors > UINT32_MAX ? UINT32_MAX : (mt_u64)maxerrors;
	ld.maxerrors = (__u32)km->maxerrors;
	kernel_time_bounds(km, &ld);
	if (ioctl(km->kfd, MT_IOC_LUA_LOAD, &ld) < 0) {
		if (km->module_only && errno == ENOTTY)   /* no recorded events to fall back on */
			fprintf(stderr, "ERROR: %s work only in marktap.ko built with Lua: the loaded "
				"module has none\n", km->module_only);
		else if (km->module_only)
			fprintf(stderr, "ERROR: loading the script into marktap.ko: %s\n",
				ld.error[0] ? ld.error : strerror(errno));
		if (km->module_only) {
			free(src);
			close(km->kfd);
			km->kfd = -1;
			return -2;
		}
		if (errno != ENOTTY)
			fprintf(stderr, "WARNING: kernel handlers cannot run in marktap.ko (%s%s%s): "
				"running them on recorded events\n", strerror(errno),
				ld.error[0] ? ": " : "", ld.error);
		/* ENOTTY: a module without Lua (quietly: -v says so), or one
		 * with Lua that does not know this load request (it answers
		 * STOP with ENXIO when no script is loaded): another build */
		else if (ioctl(km->kfd, MT_IOC_LUA_STOP, 0) < 0 && errno == ENXIO)
			fprintf(stderr, "WARNING: marktap.ko and marktap are from different builds "
				"(the module does not know this load request): kernel handlers "
				"run on recorded events\n");
		free(src);
		close(km->kfd);
		km->kfd = -1;
		return -1;
	}
	free(src);
	km->kncpu = ld.ncpu;
	km->kbuf = tr_alloc(KBUF_SIZE);
	km->in_kernel = 1;
	return 0;   /* armed by tr_kmark_begun, after begin */
}

int tr_kmark_begun(struct tr_kmark *km, long target)
{
	char *buf = NULL, pid[24];
	size_t flen = 0;

	if (!km || !km->in_kernel)
		return 0;
	snprintf(pid, sizeof(pid), "%ld", target);
	kcall(km, "__mt_target", -1, pid, strlen(pid), NULL, 0);
	/* the states start from marktap's values, what begin set: no
	 * handler runs in the kernel before begin has (stap's order); not
	 * armed yet, the calls may take their time (MT_LUA_CALL_LONG) */
	if (mt_lua_sync_take(km->mt, MT_LUA_SYNC_FULL, &buf, &flen) < 0)
		flen = 0;
	send(km, "__mt_full", -1, flen ? buf : "", flen, MT_LUA_CALL_LONG);
	free(buf);
	if (ioctl(km->kfd, MT_IOC_LUA_START, 0) < 0) {
		fprintf(stderr, "ERROR: kernel markers: cannot arm them in marktap.ko: %s\n", strerror(errno));
		return -1;
	}
	km->last_pull = (mt_u64)tr_mono_ns();
	km->pull_every = 1000000000ull;
	return 0;
}

static void kernel_poll(struct tr_kmark *km)
{
	struct mt_ioc_lua_stats st;

	kdrain(km);
	if ((mt_u64)tr_mono_ns() - km->last_pull >= km->pull_every)
		tr_kmark_pull(km);   /* every second, as the processes' */
	if (ioctl(km->kfd, MT_IOC_LUA_STATS, &st) == 0 && st.stopping)
		mt_lua_request_exit(km->mt);   /* exit() or an error in the kernel */
}

static void kernel_stop(struct tr_kmark *km)
{
	struct mt_ioc_lua_stats st = {0};

	/* the releases of the tasks reaped so far (the -c command's
	 * children) fire after an RCU grace period: wait for them */
	ioctl(km->kfd, MT_IOC_BARRIER, 0);
	ioctl(km->kfd, MT_IOC_LUA_STOP, 0);
	kdrain(km);
	pull(km, MT_LUA_CALL_LONG);   /* the last hits, before end: whole, however large */
	kdrain(km);
	ioctl(km->kfd, MT_IOC_LUA_STATS, &st);
	if (st.lost_bytes)
		fprintf(stderr, "WARNING: %llu bytes of the kernel handlers' output lost\n",
			(unsigned long long)st.lost_bytes);
	if (km->verbose)
		fprintf(stderr, "marktap: kernel handlers: %llu runs in the kernel (%llu in Lua, %llu native), "
			"%llu skipped; %llu in the state of the CPU hit\n", (unsigned long long)st.runs,
			(unsigned long long)(st.runs - st.native_runs), (unsigned long long)st.native_runs,
			(unsigned long long)st.skipped, (unsigned long long)(st.own_runs + st.native_runs));
	for (mt_u64 i = 0; i < st.skipped; i++)
		mt_lua_skipped(km->mt);
	close(km->kfd);
	km->kfd = -1;
	km->in_kernel = 0;
}

int tr_kmark_start(struct tr_kmark *km, struct mt_lua *mt)
{
	char *patterns;
	int rc;

	km->mt = mt;
	km->kfd = -1;
	if ((rc = check_catalogue(km)) <= 0)
		return rc;   /* nothing to arm: 0, the other probes run */
	if (km->want_kernel && (rc = kernel_start(km)) != -1)
		return rc == 0 ? 0 : -1;
	if (km->module_only) {
		fprintf(stderr, "ERROR: %s work only in marktap.ko built with Lua%s\n", km->module_only,
			!km->want_kernel ? " (MARKTAP_KERNEL_LUA=0, or the handlers share globals with "
			"a traced process's)" : access(MT_DEVICE_PATH, F_OK) ? ": no " MT_DEVICE_PATH
			": load the kernel module first (insmod marktap.ko)" : ": cannot load the script there (see "
			MT_DEVICE_PATH ")");
		return -1;
	}
	for (unsigned i = 0; i < km->nprobes; i++) {
		char name[32];
		if (km->probes[i].handler < 0)
			continue;
		snprintf(name, sizeof(name), "probe_%d", km->probes[i].handler);
		km->probes[i].handler = mt_lua_handler(mt, name);
	}
	patterns = arm_patterns(km);
	if ((rc = mt_kernel_open(&km->k)) < 0 ||
	    (rc = mt_kernel_configure(&km->k, 1u << 20, 4,
				      MT_RING_DISCARD | (km->creds ? MT_CONFIG_CREDS : 0))) < 0 ||
	    (rc = mt_kernel_set_patterns(&km->k, patterns)) < 0 ||
	    (rc = mt_kernel_start(&km->k)) < 0) {
		fprintf(stderr, "ERROR: kernel markers: %s\n", mt_kernel_strerror(rc));
		free(patterns);
		return -1;
	}
	free(patterns);
	km->started = 1;
	return 0;
}

static int has_creds(const char *format)
{
	size_t n = strlen(format), k = strlen(MT_CREDS_FORMAT);

	return n >= k && !strcmp(format + n - k, MT_CREDS_FORMAT);
}

/* An event class on first sight: its format parsed (every class, so that
 * events of classes no probe wants can be stepped over), whether a probe
 * wants it.  1 handled, 2 not, -1 unusable (not published, bad format). */
static int class_state(struct tr_kmark *km, u16 id)
{
	struct mt_session *s = km->k.session;
	struct mt_fmt_error err;

	if (km->state[id])
		return km->state[id];
	if (mt_load_acquire(&s->events[id].state) != MT_EV_READY)
		return -1;   /* not published yet: look again next time */
	km->fmt[id] = tr_alloc(sizeof(struct mt_format));
	if (mt_fmt_parse(s->events[id].format, km->fmt[id], &err))
		return km->state[id] = -1;
	/* the handlers' arguments: the fields before the credentials, if any */
	km->own[id] = tr_alloc(sizeof(struct mt_format));
	*km->own[id] = *km->fmt[id];
	if (has_creds(s->events[id].format))
		km->own[id]->nfields -= MT_CREDS_FIELDS;
	km->state[id] = 2;
	for (unsigned i = 0; i < km->nprobes; i++)
		if (!strcmp(km->probes[i].marker, s->events[id].name))
			km->state[id] = 1;
	return km->state[id];
}

static void run_event(struct tr_kmark *km, u16 id, const struct mt_args *a)
{
	const struct mt_session_event *ev = &km->k.session->events[id];
	const struct mt_format *f = km->own[id];
	lua_State *L = mt_lua_state(km->mt);

	for (unsigned i = 0; i < km->nprobes && !mt_lua_stopping(km->mt); i++) {
		if (km->probes[i].handler < 0 || strcmp(km->probes[i].marker, ev->name))
			continue;
		if (!lua_checkstack(L, (int)f->nfields + 4))
			return;
		lua_pushstring(L, ev->name);
		lua_pushstring(L, ev->format);
		mt_lua_push_args(L, f, a);
		mt_lua_run(km->mt, km->probes[i].handler, (int)f->nfields + 2);
		km->runs++;
	}
}

#define KDRAIN_ROUND_NS 50000000ull     /* one round of tr_kmark_poll */
#define KDRAIN_END_NS 10000000000ull    /* the last events' handlers, at most */
#define KDRAIN_SIGNAL_NS 500000000ull   /* the same after SIGINT or SIGTERM */

/* The events of the packet km->pkt from km->pkt_off on, until the packet
 * ends (0) or the round's deadline passes (1: km->pkt_off says where the
 * next round goes on; a handler may take long, and a packet holds
 * thousands of events). */
static int run_packet(struct tr_kmark *km, mt_u64 deadline)
{
	const struct mt_ring_packet *pkt = &km->pkt;
	unsigned cpu = km->pkt_cpu, n_run = 0;

	while (km->pkt_off < pkt->data_size && !mt_lua_stopping(km->mt)) {
		const char *d = pkt->data + km->pkt_off;
		size_t left = pkt->data_size - km->pkt_off;
		struct mt_event_context ctx;
		struct mt_args a;
		mt_u64 ts;
		u16 id;
		long n;
		int state;

		if (++n_run % 16 == 0 && (mt_u64)tr_mono_ns() >= deadline)
			return 1;
		if (mt_event_read_prefix(d, left, &id, &ts, &ctx) < 0 || id >= MT_EVENTS_MAX)
			break;
		d += MT_EVENT_PREFIX_SIZE;
		left -= MT_EVENT_PREFIX_SIZE;
		state = class_state(km, id);
		if (state < 0 || (n = mt_event_read_payload(km->fmt[id], d, left, &a)) < 0)
			break;
		km->pkt_off += MT_EVENT_PREFIX_SIZE + (size_t)n;
		/* marktap's own system calls and reads are the reading of these
		 * events: a handler run on them makes more of them (a handler
		 * that reads /proc per event would never catch up) */
		if (state == 1 && ctx.pid == km->self_pid) {
			km->own_skipped++;
		} else if (state == 1 && km->count_only) {
			km->unhandled++;
		} else if (state == 1) {
			km->cur = &ctx;
			km->cur_cpu = cpu;
			km->cur_ts = ts;
			km->cur_args = &a;
			km->cur_nown = km->own[id]->nfields;
			km->cur_creds = km->own[id]->nfields < km->fmt[id]->nfields;
			run_event(km, id, &a);
			km->cur = NULL;
		}
	}
	if (km->pkt_off < pkt->data_size && !mt_lua_stopping(km->mt))
		km->bad++;
	return 0;
}

/* One round; 1 when it ended with events still in the rings. */
static int poll_round(struct tr_kmark *km)
{
	struct mt_session *s = km->k.session;
	mt_u64 now = (mt_u64)tr_mono_ns(), deadline = now + KDRAIN_ROUND_NS;

	/* the wall clock of the events: as it stands now (NTP steps show) */
	km->wall_offset = now_ns(CLOCK_REALTIME) - (int64_t)now;
	if (now - km->last_flush >= 100000000ull) {
		mt_kernel_flush(&km->k);   /* safe while the kernel writes */
		km->last_flush = now;
	}
	/* a bounded round (the main loop checks signals, -T and timers
	 * between rounds); the rings, and the packet begun, hold what is
	 * left for the next one */
	for (unsigned i = 0; i <= s->ncpu && !mt_lua_stopping(km->mt); i++) {
		/* first the packet a round left, then every CPU's */
		unsigned cpu = i ? i - 1 : km->pkt_cpu;
		struct mt_ring *r = mt_session_ring(s, cpu);

		if (!i && !km->pkt_held)
			continue;
		while (!mt_lua_stopping(km->mt) && (km->pkt_held || mt_ring_get_packet(r, &km->pkt) == 0)) {
			if (!km->pkt_held) {
				km->pkt_held = true;
				km->pkt_cpu = cpu;
				km->pkt_off = 0;
			}
			if (run_packet(km, deadline))
				return 1;
			mt_ring_put_packet(r);
			km->pkt_held = false;
			if (!i)
				break;   /* the CPU's others in their turn */
		}
	}
	return 0;
}

void tr_kmark_poll(struct tr_kmark *km)
{
	if (km && km->in_kernel)
		kernel_poll(km);
	else if (km && km->started)
		(void)poll_round(km);
}

/* Stop the markers, run the handlers of what they recorded, close. */
void tr_kmark_stop(struct tr_kmark *km, bool interrupted)
{
	mt_u64 lost = 0;
	int left;

	if (km && km->in_kernel) {
		kernel_stop(km);
		return;
	}
	if (!km || !km->started)
		return;
	if (interrupted)
		mt_kernel_stop_at_once(&km->k);
	else
		mt_kernel_stop(&km->k);   /* after the reaped tasks' releases */
	mt_kernel_flush(&km->k);
	/* the markers are off: what the rings hold is all there is; after
	 * SIGINT or SIGTERM half a second of it, the rest counted */
	for (mt_u64 end = (mt_u64)tr_mono_ns() + (interrupted ? KDRAIN_SIGNAL_NS : KDRAIN_END_NS);
	     (left = poll_round(km)) && (mt_u64)tr_mono_ns() < end;)
		continue;
	if (left && !mt_lua_stopping(km->mt)) {
		km->count_only = true;
		while (poll_round(km))
			continue;
	}
	if (km->unhandled)
		fprintf(stderr, "WARNING: %llu kernel marker event%s left unhandled: their handlers "
			"were still running %s\n", (unsigned long long)km->unhandled,
			km->unhandled == 1 ? "" : "s",
			interrupted ? "half a second after the signal" : "10 s after the end");
	for (unsigned cpu = 0; cpu < km->k.session->ncpu; cpu++)
		lost += mt_load_relaxed(&mt_session_ring(km->k.session, cpu)->lost);
	if (lost)
		fprintf(stderr, "WARNING: %llu kernel marker event%s lost: the handlers ran "
			"slower than the markers fired\n", (unsigned long long)lost, lost == 1 ? "" : "s");
	if (km->bad)
		fprintf(stderr, "WARNING: %llu damaged kernel packet%s skipped\n",
			(unsigned long long)km->bad, km->bad == 1 ? "" : "s");
	if (km->verbose)   /* the form of the line the module's runs print */
		fprintf(stderr, "marktap: kernel handlers: 0 runs in the kernel; handlers ran on "
			"recorded events (%llu runs; %llu events of marktap's own skipped)\n",
			(unsigned long long)km->runs, (unsigned long long)km->own_skipped);
	mt_kernel_close(&km->k);
	km->started = 0;
}

void tr_kmark_free(struct tr_kmark *km)
{
	if (!km)
		return;
	tr_kmark_stop(km, false);
	for (unsigned i = 0; i < MT_EVENTS_MAX; i++) {
		free(km->fmt[i]);
		free(km->own[i]);
	}
	free(km->kbuf);
	free(km->probes);
	free(km);
}
