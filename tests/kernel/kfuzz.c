/*
 * kfuzz.c - a fuzzer of /dev/marktap, run inside the qemu guest (kfuzz.t).
 *
 *   kfuzz [-s SEED] [-n OPS] [-u UID:GID:GROUP] [-v]
 *
 * As the user UID (group GID, supplementary GROUP: the device's group, not
 * root), OPS random operations on the device: open, close, configure with
 * good and bad geometry, patterns, mmap (good and bad), scribbling random
 * values over the mapped session header and ring headers (geometry,
 * positions, commit counts, event slots, patterns), draining as a consumer
 * would, START and STOP, every ioctl of mt_ioctl.h (and unknown ones) with
 * random sizes and pointers, tiny Lua scripts loaded, started, called,
 * drained; forked children keep scribbling a mapping while the parent
 * goes on, so the module's writers race with them.  Whatever happens, the
 * kernel must neither oops nor warn: the guest's dmesg says (kfuzz-body.sh).
 * Every EPOCH operations all files are closed; one epoch in three loads
 * scripts instead of configuring sessions (either owns the device).
 *
 * The seed is printed first; the same seed replays the same operations
 * (the children's timing aside).  Prints "kfuzz: done N ops" at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "mt_session.h"
#include "mt_ioctl.h"

#define SLOTS 2

/* One open file of the device and what we know of it. */
struct slot {
	int fd;
	struct mt_ioc_config cfg;   /* what CONFIGURE returned (0: not configured) */
	char *map;
	size_t maplen;
	pid_t child;                /* a scribbler sharing the mapping */
};

static struct slot slots[SLOTS];
static unsigned long long rng;
static int verbose;
/* a page followed by one we may not touch: structures that run past its
 * end make the kernel's copy fail, not write over our own variables */
static char *edge_page;
static const char *const op_names[] = {
	"open", "close", "configure", "patterns", "mmap", "scribble", "drain", "start",
	"stop", "restart", "ioctl", "lua", "child", "syscalls",
};
enum { OP_OPEN, OP_CLOSE, OP_CONFIGURE, OP_PATTERNS, OP_MMAP, OP_SCRIBBLE, OP_DRAIN,
       OP_START, OP_STOP, OP_RESTART, OP_IOCTL, OP_LUA, OP_CHILD, OP_SYSCALLS, OP_COUNT };
/* how often each is drawn, out of the sum: a session lives for many
 * operations (close is rare), started and stopped again and again */
static const unsigned weights[OP_COUNT] = { 3, 1, 4, 2, 3, 25, 6, 1, 1, 2, 6, 4, 3, 6 };
/* per operation: drawn, accepted (the device said yes), time spent */
static unsigned long counts[OP_COUNT], succeeded[OP_COUNT];
static unsigned long long op_ns[OP_COUNT];
/* Operations run in epochs, all files closed between two; an epoch of
 * scripts loads Lua where the others configure recording sessions (a
 * file with either owns the device). */
#define EPOCH 250
static int script_epoch;

/* xorshift64*: small, seedable, good enough to pick operations */
static unsigned long long rnd64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static unsigned rnd(unsigned n) { return n ? (unsigned)(rnd64() % n) : 0; }

/* A value that tends to break size and offset arithmetic. */
static unsigned long long nasty(void)
{
	static const unsigned long long v[] = {
		0, 1, 2, 3, 7, 4095, 4096, 4097, 65536, 0x7fffffff, 0x80000000, 0xffffffff,
		1ull << 32, 1ull << 40, 1ull << 47, 0x7fffffffffffffffull, ~0ull, ~0ull - 4095,
		0xffff800000000000ull, 0xffffffff80000000ull,
	};
	switch (rnd(4)) {
	case 0: return rnd64();
	case 1: return 1ull << rnd(64);
	default: return v[rnd(sizeof(v) / sizeof(v[0]))];
	}
}

/* An ioctl argument: null, small, kernel half, garbage, or a real buffer. */
static void *nasty_pointer(void *good, size_t size)
{
	switch (rnd(8)) {
	case 0: return NULL;
	case 1: return (void *)16;
	case 2: return (void *)0xffffffff81000000ul;
	case 3: return (void *)(unsigned long)(rnd64() & ~0xfffull);   /* hardly ever mapped */
	case 4:   /* the struct runs past the end of the page */
		return edge_page + 4096 - rnd(64);
	default:
		if (good) {
			for (size_t i = 0; i < size && rnd(4) == 0; i++)
				((char *)good)[rnd((unsigned)size)] = (char)rnd64();
			return good;
		}
		for (size_t i = 0; i < 4096; i += 8)
			memcpy(edge_page + i, &(unsigned long long){ rnd64() }, 8);
		return edge_page;
	}
}

static void end_child(struct slot *sl)
{
	if (sl->child > 0) {
		kill(sl->child, SIGKILL);
		waitpid(sl->child, NULL, 0);
		sl->child = 0;
	}
}

static void unmap(struct slot *sl)
{
	if (sl->map) {
		munmap(sl->map, sl->maplen);
		sl->map = NULL;
	}
}

static int op_open(struct slot *sl)
{
	if (sl->fd < 0)
		sl->fd = open(MT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	return sl->fd >= 0;
}

static void op_close(struct slot *sl)
{
	end_child(sl);
	unmap(sl);
	if (sl->fd >= 0)
		close(sl->fd);
	memset(sl, 0, sizeof(*sl));
	sl->fd = -1;
}

static int op_mmap(struct slot *sl);

static int op_configure(struct slot *sl)
{
	struct mt_ioc_config c = {
		.subbuf_size = 4096u << rnd(3),
		.num_subbuf = 2u << rnd(3),
		.mode = rnd(2) | (rnd(3) == 0 ? MT_CONFIG_CREDS : 0),
	};

	if (rnd(6) == 0) {
		c.subbuf_size = (u32)nasty();
		c.num_subbuf = (u32)nasty();
		c.mode = (u32)nasty();
	}
	if (ioctl(sl->fd, MT_IOC_CONFIGURE, rnd(10) ? &c : nasty_pointer(NULL, 0)) || !c.total_bytes)
		return 0;
	sl->cfg = c;
	if (rnd(3))   /* mostly mapped at once: the scribbling is where it hurts */
		op_mmap(sl);
	return 1;
}

static int op_patterns(struct slot *sl)
{
	static const char *const pats[] = {
		"", "*", "kernel_timer*\nkernel_arch_syscall*", "fs_*\n!fs_read",
		"kernel_sched_*\nkernel_irq_*", "!*", "[", "[!a-", "*?*?*?*?*?*?*?*?*?*?x",
		"kernel_arch_syscall_entry\nkernel_arch_syscall_exit\nfs_open\nfs_close",
		"statedump_*",
	};
	struct mt_ioc_patterns p;

	memset(&p, 0, sizeof(p));
	if (rnd(5) == 0) {
		for (size_t i = 0; i < sizeof(p.patterns); i++)
			p.patterns[i] = rnd(3) ? "*?[]!\na-z_"[rnd(11)] : (char)rnd64();
	} else {
		snprintf(p.patterns, sizeof(p.patterns), "%s", pats[rnd(sizeof(pats) / sizeof(pats[0]))]);
	}
	return ioctl(sl->fd, MT_IOC_PATTERNS, rnd(10) ? (void *)&p : nasty_pointer(NULL, 0)) == 0;
}

static int op_mmap(struct slot *sl)
{
	size_t len = sl->cfg.total_bytes;
	void *p;

	if (rnd(6) == 0) {   /* a wrong length, offset or protection */
		size_t bad = rnd(2) ? (size_t)(nasty() & 0xffffffffful) : len + 4096;
		p = mmap(NULL, bad ? bad : 4096, rnd(2) ? PROT_READ : PROT_READ | PROT_WRITE,
			 rnd(2) ? MAP_SHARED : MAP_PRIVATE, sl->fd, (off_t)rnd(3) * 4096);
		if (p == MAP_FAILED)
			return 0;
		munmap(p, bad ? bad : 4096);
		return 1;
	}
	if (sl->map || !len)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sl->fd, 0);
	if (p == MAP_FAILED)
		return 0;
	sl->map = p;
	sl->maplen = len;
	return 1;
}

/* Mostly the slot whose session is mapped: there the writers are. */
static unsigned pick(void)
{
	for (unsigned k = 0; k < SLOTS && rnd(5); k++)
		if (slots[k].map)
			return k;
	return rnd(SLOTS);
}

/* Where ring cpu starts, as the module laid it out (not as the header says). */
static size_t ring_offset(const struct slot *sl, unsigned cpu)
{
	return mt_session_rings_offset() +
	       (size_t)cpu * mt_ring_bytes(sl->cfg.subbuf_size, sl->cfg.num_subbuf);
}

static void poke(char *at, unsigned width)
{
	unsigned long long v = nasty();

	memcpy(at, &v, width);
}

/* The geometry as the module wrote it, back in every header: then one
 * field changed is what a check of the others lets through. */
static void repair(const struct slot *sl)
{
	struct mt_session *ss = (struct mt_session *)sl->map;
	u32 size = sl->cfg.subbuf_size, num = sl->cfg.num_subbuf;

	ss->magic = MT_SESSION_MAGIC;
	ss->version = MT_SESSION_VERSION;
	ss->domain = MT_DOMAIN_KERNEL;
	ss->ncpu = sl->cfg.ncpu;
	ss->subbuf_size = size;
	ss->num_subbuf = num;
	ss->mode = sl->cfg.mode & MT_CONFIG_MODE;
	ss->sync = MT_SYNC_LOCKED;
	ss->ring_bytes = mt_ring_bytes(size, num);
	ss->rings_offset = mt_session_rings_offset();
	ss->total_bytes = sl->cfg.total_bytes;
	ss->nevents = 0;   /* event classes claimed again from the first slot */
	/* markers that fire all the time from few hooks (arming is slow
	 * under emulation), sometimes every one */
	snprintf(ss->patterns, sizeof(ss->patterns), "%s",
		 rnd(8) ? "kernel_arch_syscall*\nfs_*\nkernel_sched_schedule\nkernel_timer_set" : "");
	for (unsigned cpu = 0; cpu < sl->cfg.ncpu; cpu++) {
		struct mt_ring *r = (struct mt_ring *)(sl->map + ring_offset(sl, cpu));
		r->subbuf_size = size;
		r->num_subbuf = num;
		r->mode = ss->mode;
		r->cpu = cpu;
		r->data_offset = ss->ring_bytes - (mt_u64)size * num;
	}
}

/* One random write into the session's header or a ring's header. */
static void scribble_once(const struct slot *sl)
{
	static const unsigned short sfields[][2] = {
#define F(m) { offsetof(struct mt_session, m), sizeof(((struct mt_session *)0)->m) }
		F(magic), F(version), F(domain), F(ncpu), F(subbuf_size), F(num_subbuf), F(mode),
		F(active), F(nevents), F(wake_subbufs), F(sync), F(ring_bytes), F(rings_offset),
		F(total_bytes),
#undef F
	};
	static const unsigned short rfields[][2] = {
#define F(m) { offsetof(struct mt_ring, m), sizeof(((struct mt_ring *)0)->m) }
		F(write_pos), F(lost), F(lost_too_big), F(last_ts), F(read_pos), F(subbuf_size),
		F(num_subbuf), F(mode), F(cpu), F(data_offset),
#undef F
	};
	char *s = sl->map;
	unsigned cpu = rnd(sl->cfg.ncpu);
	char *r = s + ring_offset(sl, cpu);
	struct mt_session *ss = (struct mt_session *)s;

	if (rnd(3) == 0)
		repair(sl);
	switch (rnd(8)) {
	case 0: case 1: {
		unsigned k = rnd(sizeof(sfields) / sizeof(sfields[0]));
		poke(s + sfields[k][0], sfields[k][1]);
		break;
	}
	case 2: case 3: {
		unsigned k = rnd(sizeof(rfields) / sizeof(rfields[0]));
		poke(r + rfields[k][0], rfields[k][1]);
		break;
	}
	case 4: {   /* a sub-buffer's control: commit counts, seq, sizes */
		unsigned j = rnd(sl->cfg.num_subbuf + 2);
		char *sb = r + offsetof(struct mt_ring, subbuf) + j * sizeof(struct mt_ring_subbuf);
		poke(sb + rnd(sizeof(struct mt_ring_subbuf) / 8) * 8, 8);
		break;
	}
	case 5: {   /* event slots: states, unterminated names */
		struct mt_session_event *e = &ss->events[rnd(MT_EVENTS_MAX)];
		if (rnd(2))
			e->state = (u32)nasty();
		else
			memset(e->name + rnd(MT_EVENT_NAME_MAX), (int)rnd(256), rnd(MT_EVENT_NAME_MAX));
		break;
	}
	case 6:   /* patterns, the terminating byte included */
		memset(ss->patterns + rnd(MT_PATTERNS_MAX), rnd(2) ? '*' : (int)rnd(256),
		       rnd(MT_PATTERNS_MAX));
		ss->patterns[MT_PATTERNS_MAX - 1] = (char)rnd(256);
		break;
	default:   /* a byte anywhere in the session's or the ring's first page */
		(rnd(2) ? s : r)[rnd(4096)] = (char)rnd64();
	}
}

static void op_scribble(const struct slot *sl)
{
	unsigned n = 1 + rnd(4);

	while (n--)
		scribble_once(sl);
}

/* A consumer's moves: release what was written, or put read_pos anywhere. */
static void op_drain(const struct slot *sl)
{
	for (unsigned cpu = 0; cpu < sl->cfg.ncpu; cpu++) {
		struct mt_ring *r = (struct mt_ring *)(sl->map + ring_offset(sl, cpu));
		mt_u64 wp = __atomic_load_n(&r->write_pos, __ATOMIC_ACQUIRE);

		if (rnd(8) == 0)
			wp = nasty();
		__atomic_store_n(&r->read_pos, wp & ~(mt_u64)(sl->cfg.subbuf_size - 1),
				 __ATOMIC_RELEASE);
	}
}

/* A scribbler sharing the mapping for two seconds at most (or until the
 * slot closes): the module's writers race with it. */
static int op_child(struct slot *sl)
{
	pid_t pid;

	if (sl->child > 0)
		end_child(sl);
	pid = fork();
	if (pid == 0) {
		time_t end = time(NULL) + 2;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		rng ^= (unsigned long long)getpid() << 17;
		for (unsigned i = 0; (i & 255) || time(NULL) < end; i++) {
			/* flip a ring's geometry between right and wrong, so
			 * that it changes between a writer's reads */
			if (rnd(2)) {
				char *r = sl->map + ring_offset(sl, rnd(sl->cfg.ncpu));
				repair(sl);
				if (rnd(2))
					poke(r + offsetof(struct mt_ring, data_offset), 8);
				else
					poke(r + offsetof(struct mt_ring, subbuf_size), 4);
			}
			scribble_once(sl);
			if (rnd(16) == 0)
				op_drain(sl);
			if (rnd(64) == 0)
				sched_yield();
		}
		_exit(0);
	}
	if (pid > 0)
		sl->child = pid;
	return pid > 0;
}

/* Markers of our own on a CPU (-1: where we are): system calls, file
 * opens, a short timer.  Under emulation a CPU may not run the load for
 * a while: this makes the writers of every CPU run now. */
static void syscalls_on(int cpu)
{
	struct timespec ts = { 0, 100000 };
	cpu_set_t set, was;

	sched_getaffinity(0, sizeof(was), &was);
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	for (int i = 0; i < 4; i++) {
		int fd = open("/proc/self/stat", O_RDONLY);
		if (fd >= 0) {
			char b[64];
			(void)!read(fd, b, sizeof(b));
			close(fd);
		}
		getppid();
	}
	nanosleep(&ts, NULL);
	if (cpu >= 0)
		sched_setaffinity(0, sizeof(was), &was);
}

static void op_syscalls(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	syscalls_on(rnd(2) ? -1 : (int)rnd((unsigned)(ncpu > 0 ? ncpu : 1)));
}

/* Stop, the geometry as it was but for one field of the session's or of a
 * ring's header, start: what START must not take from the mapping. */
static int op_restart(struct slot *sl)
{
	static const unsigned short fields[][2] = {
#define S(m) { offsetof(struct mt_session, m), sizeof(((struct mt_session *)0)->m) }
#define R(m) { 0x8000 | offsetof(struct mt_ring, m), sizeof(((struct mt_ring *)0)->m) }
		S(ncpu), S(subbuf_size), S(num_subbuf), S(mode), S(ring_bytes), S(rings_offset),
		S(nevents), R(subbuf_size), R(num_subbuf), R(mode), R(data_offset), R(write_pos),
		R(read_pos),
#undef S
#undef R
	};
	unsigned k = rnd(sizeof(fields) / sizeof(fields[0]));
	char *at = sl->map + (fields[k][0] & 0x7fff);
	int rc;

	if (!sl->map)
		return 0;
	end_child(sl);   /* it would undo the change */
	ioctl(sl->fd, MT_IOC_STOP);
	repair(sl);
	if (fields[k][0] & 0x8000)
		at += ring_offset(sl, rnd(sl->cfg.ncpu));
	poke(at, fields[k][1]);
	rc = ioctl(sl->fd, MT_IOC_START);
	if (verbose) {
		unsigned long long v = 0;
		memcpy(&v, at, fields[k][1]);
		printf("kfuzz: restart: field %u of the %s header set to %#llx: start %d\n",
		       k, fields[k][0] & 0x8000 ? "ring" : "session", v, rc);
	}
	for (unsigned cpu = 0; cpu < sl->cfg.ncpu && rc > 0; cpu++)
		syscalls_on((int)cpu);
	return rc > 0;
}

/* Every command of mt_ioctl.h, unknown numbers, random sizes and pointers. */
static int op_ioctl(struct slot *sl)
{
	static const unsigned long cmds[] = {
		MT_IOC_CONFIGURE, MT_IOC_PATTERNS, MT_IOC_START, MT_IOC_STOP, MT_IOC_LUA_LOAD,
		MT_IOC_LUA_START, MT_IOC_LUA_STOP, MT_IOC_LUA_CALL, MT_IOC_LUA_OUTPUT,
		MT_IOC_LUA_STATS,
	};
	unsigned long cmd = cmds[rnd(sizeof(cmds) / sizeof(cmds[0]))];
	char buf[2048] __attribute__((aligned(8)));

	if (rnd(3) == 0)   /* any direction, number and size */
		cmd = _IOC(rnd(4), rnd(8) ? MT_IOC_MAGIC : rnd(256), rnd(32), rnd(_IOC_SIZEMASK + 1));
	for (size_t i = 0; i < sizeof(buf); i += 8)
		memcpy(buf + i, &(unsigned long long){ rnd(2) ? rnd64() : rnd(64) }, 8);
	if (cmd == MT_IOC_LUA_LOAD)   /* a random source would be sent: keep it small */
		((struct mt_ioc_lua_load *)buf)->source_len &= 0xfff;
	return ioctl(sl->fd, cmd, nasty_pointer(buf, sizeof(buf))) >= 0;
}

static const char *const lua_sources[] = {
	"probe(\"fs_open\", function(name, fmt, fd, filename) n = (n or 0) + 1 end)",
	"probe(\"kernel_arch_syscall_entry\", function(name, fmt, id) c = (c or 0) + 1 end)\n"
	"function finish(cpu) return tostring(c) end",
	"probe(\"kernel_timer_set\", function() error(\"boom\") end)",
	"probe(\"fs_open\", function( end)",
	"probe(\"no_such_marker\", function() end)",
	"probe(\"kernel_arch_syscall_exit\", function() local t = {} for i = 1, 50 do t[i] = i end end)",
	"probe(\"kernel_sched_schedule\", function() while true do end end)",
	"function finish(cpu, s) return string.rep(\"x\", 100) end",
	"x = 1.5",
	"",
};

static int lua_load(struct slot *sl)
{
	const char *src = lua_sources[rnd(sizeof(lua_sources) / sizeof(lua_sources[0]))];
	struct mt_ioc_lua_load ld;

	memset(&ld, 0, sizeof(ld));
	ld.source = (unsigned long)src;
	ld.source_len = (u32)strlen(src);
	ld.arena_kib = rnd(2) ? 0 : 64 + rnd(512);
	ld.out_kib = rnd(2) ? 0 : rnd(2) ? 32u << rnd(9) : rnd(9000);
	ld.maxaction = rnd(2) ? 0 : rnd(5000);
	ld.maxstringlen = rnd(2) ? 0 : rnd(1024);
	ld.maxerrors = rnd(4);
	if (rnd(8) == 0)
		ld.source_len = (u32)nasty();
	return ioctl(sl->fd, MT_IOC_LUA_LOAD, &ld) >= 0;
}

/* Tiny scripts through the Lua ioctls, with plausible arguments. */
static int op_lua(struct slot *sl)
{
	char out[512];

	switch (rnd(6)) {
	case 0: return lua_load(sl);
	case 1: return ioctl(sl->fd, MT_IOC_LUA_START) >= 0;
	case 2: return ioctl(sl->fd, MT_IOC_LUA_STOP) >= 0;
	case 3: {
		struct mt_ioc_lua_call c = { .flags = rnd(4), .cpu = rnd(4) };
		snprintf(c.name, sizeof(c.name), "%s", rnd(2) ? "finish" : "nothing");
		c.out = (unsigned long)out;
		c.out_size = rnd(2) ? sizeof(out) : rnd(8);
		c.in = (unsigned long)"in";
		c.in_len = rnd(3);
		return ioctl(sl->fd, MT_IOC_LUA_CALL, &c) >= 0;
	}
	case 4: {
		struct mt_ioc_lua_output o = { .buf = (unsigned long)out, .size = rnd(sizeof(out) + 1),
					       .cpu = rnd(4) };
		return ioctl(sl->fd, MT_IOC_LUA_OUTPUT, &o) >= 0;
	}
	default: {
		struct mt_ioc_lua_stats st;
		return ioctl(sl->fd, MT_IOC_LUA_STATS, &st) >= 0;
	}
	}
}

static unsigned draw(void)
{
	unsigned sum = 0, k, x;

	for (k = 0; k < OP_COUNT; k++)
		sum += weights[k];
	x = rnd(sum);
	for (k = 0; x >= weights[k]; k++)
		x -= weights[k];
	return k;
}

/* 1 when the device (or the kernel) accepted it */
static int run_op(unsigned op, struct slot *sl)
{
	switch (op) {
	case OP_OPEN: return op_open(sl);
	case OP_CLOSE: op_close(sl); return 1;
	case OP_CONFIGURE: return op_configure(sl);
	case OP_PATTERNS: return op_patterns(sl);
	case OP_MMAP: return op_mmap(sl);
	case OP_SCRIBBLE: if (sl->map) op_scribble(sl); return sl->map != NULL;
	case OP_DRAIN: if (sl->map) op_drain(sl); return sl->map != NULL;
	case OP_START: return ioctl(sl->fd, MT_IOC_START) > 0;   /* armed markers */
	case OP_STOP: return ioctl(sl->fd, MT_IOC_STOP) >= 0;
	case OP_RESTART: return op_restart(sl);
	case OP_IOCTL: return op_ioctl(sl);
	case OP_LUA: return op_lua(sl);
	case OP_CHILD: return sl->map && op_child(sl);
	default: op_syscalls(); return 1;
	}
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Our ids from now on: the user UID, group GID, and the device's GROUP. */
static int become(const char *ids)
{
	unsigned uid, gid, group;
	gid_t groups[1];

	if (sscanf(ids, "%u:%u:%u", &uid, &gid, &group) != 3) {
		fprintf(stderr, "kfuzz: -u wants UID:GID:GROUP, not %s\n", ids);
		return -1;
	}
	groups[0] = group;
	if (setgroups(1, groups) || setgid(gid) || setuid(uid)) {
		perror("kfuzz: cannot change ids");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
	unsigned long ops = 3000, i;
	unsigned long long t0;
	int opt;

	while ((opt = getopt(argc, argv, "s:n:u:v")) != -1) {
		if (opt == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (opt == 'n')
			ops = strtoul(optarg, NULL, 0);
		else if (opt == 'u' && become(optarg))
			return 2;
		else if (opt == 'v')
			verbose = 1;
		else if (opt != 'u')
			return 2;
	}
	printf("kfuzz: seed %llu, %lu ops, uid %d gid %d\n", seed, ops, (int)getuid(), (int)getgid());
	fflush(stdout);
	rng = seed ? seed : 1;
	edge_page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (edge_page == MAP_FAILED || mprotect(edge_page + 4096, 4096, PROT_NONE)) {
		perror("kfuzz: mmap");
		return 1;
	}
	for (i = 0; i < SLOTS; i++)
		slots[i].fd = -1;
	for (i = 0; i < ops; i++) {
		unsigned op, s;

		if (i % EPOCH == 0) {
			for (s = 0; s < SLOTS; s++)
				op_close(&slots[s]);
			script_epoch = rnd(3) == 0;
		}
		op = draw();
		if (script_epoch && op == OP_CONFIGURE)
			op = OP_LUA;
		s = pick();

		if (verbose || i % 500 == 0) {
			printf("kfuzz: op %lu %s slot %u\n", i, op_names[op], s);
			fflush(stdout);
		}
		counts[op]++;
		t0 = now_ns();
		succeeded[op] += run_op(op, &slots[s]);
		op_ns[op] += now_ns() - t0;
	}
	for (i = 0; i < SLOTS; i++)
		op_close(&slots[i]);
	printf("kfuzz: ms spent:");
	for (i = 0; i < OP_COUNT; i++)
		printf(" %s %llu", op_names[i], op_ns[i] / 1000000);
	printf("\nkfuzz: done %lu ops (accepted/drawn):", ops);
	for (i = 0; i < OP_COUNT; i++)
		printf(" %s %lu/%lu", op_names[i], succeeded[i], counts[i]);
	printf("\n");
	return 0;
}
