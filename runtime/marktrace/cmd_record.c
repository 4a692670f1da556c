/*
 * cmd_record.c - marktrace record: the consumer of a recording session.
 *
 *   marktrace record [-o DIR] [-e PATTERN]... [--overwrite] [--subbuf-size N]
 *                    [--num-subbuf N] [--mode MODE] [-q] (-- CMD [ARGS] | -p PID)
 *
 * We create the session (a memfd laid out as struct mt_session), start the
 * command with MARKTAP_SHM_FD naming it (or hand it to a running process's
 * agent), then move every complete sub-buffer into the CPU's stream file
 * until the command exits or we are told to stop.  Stopping closes the
 * open sub-buffers and drains them, so the trace ends with every committed
 * event.  The traced program can write the whole session: the rings are
 * read through consumer.c, which trusts none of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "marktrace.h"
#include "mt_ctf.h"
#include "mt_event.h"
#include "mt_session.h"
#include "record.h"
#include "relay.h"
#include "relay_net.h"
#include "uclock.h"

static volatile sig_atomic_t stop_signal, stop_count;

/*
 * The consumer's priority.  A sub-buffer holds a few milliseconds of a
 * busy program's events: when marktrace waits that long for a CPU, behind
 * the program's own threads or anything else, events are lost.  So it
 * records at niceness DEFAULT_NICE when it may (root, CAP_SYS_NICE or
 * RLIMIT_NICE), or at --nice N; the command runs at the niceness marktrace
 * was started with (start_nice).  bench/README.md: the paced rate recorded
 * without loss, and the losses of two busy threads on two CPUs.
 */
#define DEFAULT_NICE (-10)
static int start_nice, reniced;

/* --relay: the URL, and the relay daemon connected (relay.c) */
static const char *relay_url;
static int relay_live;
static struct mt_relay *relay;

int mt_record_stopped(void)
{
	return stop_signal != 0;
}

/* A second signal while we drain means: stop now (the trace then says
 * it is incomplete). */
static void on_stop_signal(int sig)
{
	stop_signal = sig;
	stop_count++;
}

static void on_child(int sig)
{
	(void)sig;  /* only wakes the sleep; waitpid tells the rest */
}

static int parse_size(const char *s, u32 *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	if (*end == 'k' || *end == 'K') { v <<= 10; end++; }
	else if (*end == 'm' || *end == 'M') { v <<= 20; end++; }
	else if (*end == 'g' || *end == 'G') { v <<= 30; end++; }
	if (*end || v == 0 || v > (1ull << 30))
		return -1;
	*out = (u32)v;
	return 0;
}

static int usage(FILE *out)
{
	fprintf(out,
		"usage: marktrace record [OPTIONS] -- CMD [ARGS]\n"
		"       marktrace record [OPTIONS] -p PID\n"
		"       marktrace record --kernel [OPTIONS] [-- CMD [ARGS]]\n\n"
		"  -o, --output DIR      trace directory (default ./marktap-YYYYMMDD-HHMMSS)\n"
		"  -e, --event PATTERN   record markers matching the glob (repeatable; !GLOB excludes)\n"
		"  -p, --pid PID         record a running process linked with libmarktap\n"
		"  -k, --kernel          record the kernel markers of marktap.ko\n"
		"      --overwrite       flight recorder: keep the newest events\n"
		"      --subbuf-size N   sub-buffer size, power of two, k/M suffix (default 1M)\n"
		"      --num-subbuf N    sub-buffers per CPU, power of two (default 4); they\n"
		"                        are copied when a quarter of them wait (at least one)\n"
		"      --switch-timer MS close the open sub-buffers every MS ms, so slow\n"
		"                        streams reach the trace (default 1000; 0: never)\n"
		"      --nice N          marktrace's niceness while it records (default -10\n"
		"                        where allowed); the command runs at the niceness\n"
		"                        marktrace was started with\n"
		"      --sync MODE       how the program's threads share a CPU's buffer:\n"
		"                        percpu (restartable sequences, no locked\n"
		"                        instructions; the default where the kernel has\n"
		"                        them and marktrace may run on every CPU) or locked\n"
		"      --mode MODE       permissions of the trace files, octal (default 0600;\n"
		"                        directories get x where MODE has r: 0700)\n"
		"      --relay net://HOST[:CTRL[:DATA]]\n"
		"                        send the trace to lttng-relayd as it is recorded\n"
		"                        (ports 5342 and 5343 by default); with -o, to DIR too\n"
		"      --live            with --relay: a live session, which lttng-live readers\n"
		"                        follow (at the switch timer's period)\n"
		"  -q, --quiet           no status line, no summary\n");
	return out == stdout ? 0 : 2;
}

static int is_pow2(u32 v) { return v && !(v & (v - 1)); }

static int parse_options(int argc, char **argv, struct mt_record_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "event", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "kernel", no_argument, NULL, 'k' },
		{ "overwrite", no_argument, NULL, 'O' },
		{ "subbuf-size", required_argument, NULL, 'S' },
		{ "num-subbuf", required_argument, NULL, 'N' },
		{ "switch-timer", required_argument, NULL, 'W' },
		{ "mode", required_argument, NULL, 'M' },
		{ "nice", required_argument, NULL, 'n' },
		{ "sync", required_argument, NULL, 'Y' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "relay", required_argument, NULL, 'R' },
		{ "live", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;
	size_t plen = 0;

	memset(o, 0, sizeof(*o));
	o->nice = DEFAULT_NICE;
	o->sync = -1;
	o->subbuf_size = 1u << 20;
	o->num_subbuf = 4;
	o->switch_ms = 1000;
	o->mode = 0600;
	relay_url = NULL;
	relay_live = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:e:p:kqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				mt_error("record: -o '': expected a directory name");
				return -1;
			}
			o->output = optarg;
			break;
		case 'e': {
			size_t n = strlen(optarg);
			if (!n || plen + n + 2 > MT_PATTERNS_MAX) {
				mt_error("record: -e '%s': %s", optarg,
					 n ? "too many patterns" : "empty pattern");
				return -1;
			}
			memcpy(o->patterns + plen, optarg, n);
			plen += n;
			o->patterns[plen++] = '\n';
			break;
		}
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0) {
				mt_error("record: -p '%s': expected a process id", optarg);
				return -1;
			}
			o->pid = (pid_t)v;
			break;
		}
		case 'k': o->kernel = 1; break;
		case 'O': o->overwrite = 1; break;
		case 'S':
			if (parse_size(optarg, &o->subbuf_size) || !is_pow2(o->subbuf_size) ||
			    o->subbuf_size < 4096) {
				mt_error("record: --subbuf-size '%s': expected a power of two >= 4k", optarg);
				return -1;
			}
			break;
		case 'N':
			if (parse_size(optarg, &o->num_subbuf) || !is_pow2(o->num_subbuf) ||
			    o->num_subbuf < 2) {
				mt_error("record: --num-subbuf '%s': expected a power of two >= 2", optarg);
				return -1;
			}
			break;
		case 'W': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 3600000) {
				mt_error("record: --switch-timer '%s': expected milliseconds (0 to 3600000)",
					 optarg);
				return -1;
			}
			o->switch_ms = (u32)v;
			break;
		}
		case 'M': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 8);
			/* the owner must keep reading and writing what it records */
			if (*end || end == optarg || (v & ~0666ul) || (v & 0600) != 0600) {
				mt_error("record: --mode '%s': expected an octal file mode from 0600 "
					 "to 0666 (r and w for the owner, r or w for others)", optarg);
				return -1;
			}
			o->mode = (unsigned)v;
			break;
		}
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < -20 || v > 19) {
				mt_error("record: --nice '%s': expected a niceness from -20 to 19", optarg);
				return -1;
			}
			o->nice = (int)v;
			o->nice_given = 1;
			break;
		}
		case 'Y':
			if (!strcmp(optarg, "percpu"))
				o->sync = MT_SYNC_PERCPU;
			else if (!strcmp(optarg, "locked"))
				o->sync = MT_SYNC_LOCKED;
			else {
				mt_error("record: --sync '%s': expected percpu or locked", optarg);
				return -1;
			}
			break;
		case 'q': o->quiet = 1; break;
		case 'R': relay_url = optarg; break;
		case 'L': relay_live = 1; break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	o->command = argv + optind;
	if (relay_live && (!relay_url || !o->switch_ms || o->overwrite)) {
		/* live readers see closed packets: the switch timer closes them */
		mt_error("record: --live needs --relay, a switch timer (not 0) and discard mode");
		return -1;
	}
	if (!o->pid && !o->kernel && !*o->command) {
		mt_error("record: nothing to record: give -- CMD [ARGS], -p PID or --kernel");
		return -1;
	}
	if (o->pid && *o->command) {
		mt_error("record: -p PID and a command exclude each other");
		return -1;
	}
	return 0;
}

static void default_output(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, len, "marktap-%Y%m%d-%H%M%S", &tm);
}

/*
 * The consumers of the sessions this process reads, found by their
 * mapping: the kernel path (record_kernel.c) hands mt_record_consume() a
 * session pointer.  A session marktrace created is registered with the
 * geometry it chose, before any other process can see it; one it did not
 * create (marktap.ko's, which only the kernel writes) on first use, from
 * its header.  A recording has at most two sessions (kernel and user).
 */
static struct mt_consumer consumers[4];

static struct mt_consumer *consumer_new(struct mt_session *s, mt_u64 len, u32 ncpu,
					u32 subbuf_size, u32 num_subbuf, u32 mode, u32 wake)
{
	unsigned i;

	for (i = 0; i < sizeof(consumers) / sizeof(consumers[0]); i++)
		if (!consumers[i].s)
			return mt_consumer_init(&consumers[i], s, len, ncpu, subbuf_size, num_subbuf,
						mode, wake) == 0 ? &consumers[i] : NULL;
	return NULL;
}

static struct mt_consumer *consumer_of(struct mt_session *s)
{
	unsigned i;

	for (i = 0; i < sizeof(consumers) / sizeof(consumers[0]); i++)
		if (consumers[i].s == s)
			return &consumers[i];
	/* only the kernel's sessions are not created (and registered) here */
	if (mt_session_check(s, s->total_bytes) < 0 || s->domain != MT_DOMAIN_KERNEL)
		return NULL;
	return consumer_new(s, s->total_bytes, s->ncpu, s->subbuf_size, s->num_subbuf,
			    s->mode, s->wake_subbufs);
}

static void consumer_release(struct mt_session *s)
{
	unsigned i;

	for (i = 0; i < sizeof(consumers) / sizeof(consumers[0]); i++)
		if (consumers[i].s == s) {
			mt_consumer_free(&consumers[i]);
			memset(&consumers[i], 0, sizeof(consumers[i]));
		}
}

/*
 * Per-CPU rings (MT_SYNC_PERCPU, mt_rseq.h) need restartable sequences
 * here (marktrace flushes a ring from its CPU) and the right to run on
 * every online CPU: the affinity widened to all of them must keep all of
 * them (a cpuset can forbid some); ours is restored after.  want: -1 for
 * the default, else --sync's.  The mode, or -1 (said why) when --sync
 * percpu cannot be had.
 */
static int choose_sync(long ncpu, int want)
{
	int ok = 0;
#ifdef MT_HAVE_RSEQ
	size_t size = CPU_ALLOC_SIZE(ncpu);
	cpu_set_t *home = CPU_ALLOC(ncpu), *all = CPU_ALLOC(ncpu), *got = CPU_ALLOC(ncpu);
	char line[256];
	FILE *f;

	if (want == MT_SYNC_LOCKED)
		goto out;
	if (!home || !all || !got || !mt_rseq_area() || sched_getaffinity(0, size, home) < 0)
		goto out;
	/* the online CPUs, as the kernel lists them: "0-3,6" */
	CPU_ZERO_S(size, all);
	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f)
		goto out;
	if (fgets(line, sizeof(line), f)) {
		char *p = line;
		ok = 1;
		while (*p && *p != '\n') {
			char *end;
			long a = strtol(p, &end, 10), b = a;
			if (end == p) {
				ok = 0;
				break;
			}
			if (*end == '-')
				b = strtol(end + 1, &end, 10);
			for (; a <= b; a++)
				if (a < ncpu)
					CPU_SET_S((size_t)a, size, all);
			p = *end == ',' ? end + 1 : end;
		}
	}
	fclose(f);
	if (ok) {
		ok = sched_setaffinity(0, size, all) == 0 && sched_getaffinity(0, size, got) == 0 &&
		     CPU_EQUAL_S(size, all, got);
		(void)sched_setaffinity(0, size, home);
	}
out:
	CPU_FREE(home);
	CPU_FREE(all);
	CPU_FREE(got);
#endif
	if (ok)
		return MT_SYNC_PERCPU;
	if (want == MT_SYNC_PERCPU) {
		mt_error("record: --sync percpu: needs restartable sequences (rseq, with "
			 "glibc 2.35 or later on x86_64) and leave for marktrace to run on every "
			 "online CPU; "
			 "use --sync locked");
		return -1;
	}
	return MT_SYNC_LOCKED;
}

/* What a trace's metadata and marktrace stats say of a session's rings. */
const char *mt_record_sync_describe(const struct mt_session *s)
{
	return s->sync == MT_SYNC_PERCPU ?
	       "per-CPU, written from their own CPU only (restartable sequences)" :
	       "per-CPU, shared with locked instructions";
}

/* Create the user-space session memfd; its descriptor, or -1. */
int mt_record_create_session(const struct mt_record_opts *o, struct mt_session **sp, size_t *lenp)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	u32 mode = o->overwrite ? MT_RING_OVERWRITE : MT_RING_DISCARD, wake;
	mt_u64 bytes;
	int fd, sync;
	struct mt_session *s;

	if (ncpu < 1)
		ncpu = 1;
	sync = choose_sync(ncpu, o->sync);
	if (sync < 0)
		return -1;
	bytes = mt_session_bytes((u32)ncpu, o->subbuf_size, o->num_subbuf);
	if (!bytes) {
		mt_error("record: invalid buffer geometry");
		return -1;
	}
	/* inherited by the command; sealed below */
	fd = memfd_create("marktap-session", MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0) {
		mt_error("record: cannot create the session buffers (%llu bytes): %s",
			 (unsigned long long)bytes, strerror(errno));
		return -1;
	}
	/* the memory now, not at the traced program's first writes to each
	 * page (as LTTng's consumer does); also no SIGBUS later for lack of it */
	if (fallocate(fd, 0, 0, (off_t)bytes) < 0 && errno != EOPNOTSUPP) {
		mt_error("record: cannot allocate the session buffers (%llu bytes): %s",
			 (unsigned long long)bytes, strerror(errno));
		close(fd);
		return -1;
	}
	/* the traced program holds the descriptor too: it must not shrink the
	 * file under our mapping (our reads would take SIGBUS) */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		mt_error("record: cannot seal the session buffers: %s", strerror(errno));
		close(fd);
		return -1;
	}
	/* populated: the consumer reads every page, and a fault per 64 KiB of
	 * sub-buffer was a fifth of its work while the program ran */
	s = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (s == MAP_FAILED) {
		mt_error("record: cannot map the session buffers: %s", strerror(errno));
		close(fd);
		return -1;
	}
	mt_session_init(s, MT_DOMAIN_USER, (u32)ncpu, o->subbuf_size, o->num_subbuf, mode);
	s->sync = (u32)sync;
	/* the thread event's class is ours, first: copied (mt_ctf_open below)
	 * before the program runs, so that nothing it writes later in the
	 * slot can change how its every packet reads (mt_event.h) */
	mt_session_event_id(s, MT_THREAD_EVENT_NAME, MT_THREAD_EVENT_FORMAT);
	/*
	 * The consumer copies in batches: writers wake it when a quarter of
	 * a ring (at least one sub-buffer) is unconsumed; its timers drain
	 * the rest (record_user).  Big buffers absorb a burst of events with
	 * no copying beside it; the default 4 sub-buffers wake it at each.
	 * A flight recorder is read only at the end.
	 */
	wake = o->overwrite ? 0 : o->num_subbuf >= 8 ? o->num_subbuf / 4 : 1;
	s->wake_subbufs = wake;
	if (!consumer_new(s, bytes, (u32)ncpu, o->subbuf_size, o->num_subbuf, mode, wake)) {
		mt_error("record: out of memory");
		munmap(s, bytes);
		close(fd);
		return -1;
	}
	mt_uclock_setup(s);
	memcpy(s->patterns, o->patterns, sizeof(s->patterns));
	s->active = 1;
	*sp = s;
	*lenp = bytes;
	return fd;
}

/*
 * Is a ring at its wake-up mark (wake_subbufs unconsumed sub-buffers,
 * the first of them complete)?  The consumer copies in batches: when a
 * ring reaches the mark, at the switch timer and at the status line.
 * Copying while the traced program is busy takes CPU time from it.
 */
static int rings_at_mark(struct mt_consumer *c)
{
	unsigned cpu;

	for (cpu = 0; cpu < c->ncpu; cpu++)
		if (mt_consumer_at_mark(c, cpu))
			return 1;
	return 0;
}

/*
 * Sleep until a writer sees a ring at its mark (it wakes us through
 * s->consumer_wait, see mt_session.h), a signal (the command ended,
 * Ctrl-C), or `seconds` pass.  The bit is set before the rings are looked
 * at once more, so a ring that reached its mark in between is not missed.
 * The futex word is the program's to write too: the timeout bounds the
 * wait whatever it holds.
 */
static void consumer_sleep(struct mt_consumer *c, double seconds)
{
	struct mt_session *s = c->s;
	u32 v = __atomic_or_fetch(&s->consumer_wait, 1u, __ATOMIC_SEQ_CST);

	if (seconds > 0 && !rings_at_mark(c) && !stop_signal) {
		struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
		syscall(SYS_futex, &s->consumer_wait, FUTEX_WAIT, v, &ts, NULL, 0);
	}
	__atomic_and_fetch(&s->consumer_wait, ~1u, __ATOMIC_RELAXED);
}

pid_t mt_record_spawn(char **command, int session_fd)
{
	char env[32];
	pid_t pid;
	int ready[2];
	char errbuf[8];

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	snprintf(env, sizeof(env), "%d", session_fd);
	pid = fork();
	if (pid == 0) {
		int e;
		setenv("MARKTAP_SHM_FD", env, 1);
		/* the command runs as it would without us (raising one's own
		 * nice value is always allowed) */
		if (reniced)
			setpriority(PRIO_PROCESS, 0, start_nice);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(command[0], command);
		e = errno;
		if (write(ready[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(ready[1]);
	if (pid > 0) {
		int e;
		/* the pipe closes on exec: a read of 0 bytes means the exec worked */
		if (read(ready[0], &e, sizeof(e)) == (ssize_t)sizeof(e)) {
			mt_error("record: cannot run '%s': %s", command[0], strerror(e));
			waitpid(pid, NULL, 0);
			pid = -1;
		}
	}
	(void)errbuf;
	close(ready[0]);
	return pid;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Say once why a session cannot be consumed; the recording then ends. */
static int session_failed(struct mt_consumer *c, int *error)
{
	static int said;

	if (!said++)
		mt_error("record: %s", c ? c->error : "the session is not one marktrace can read");
	if (c)
		c->stopped = 1;
	*error = 1;
	return 0;
}

/* Move at most budget complete sub-buffers of a ring to its stream file. */
/* Packets this big are worth moving to their CPU for (a move costs some
 * 10 us; 256 KiB take 50-100 us to copy). */
#define LOCAL_COPY_BYTES (256u << 10)

static int consume_ring(struct mt_consumer *c, struct mt_ctf_trace *t, unsigned cpu,
			unsigned budget, int *error)
{
	struct mt_ring_packet pkt;
	char err[512];
	int moved = 0;

	while (budget-- && mt_consumer_get(c, cpu, &pkt) == 0) {
		/* a big packet is copied from its CPU's cache (consumer.c) */
		if (!moved && pkt.data_size >= LOCAL_COPY_BYTES)
			mt_consumer_go_to(c, cpu);
		if (mt_ctf_write_packet(t, c->s, cpu, &pkt, err, sizeof(err)) < 0) {
			mt_error("record: %s", err);
			*error = 1;
		}
		mt_consumer_put(c, cpu);
		moved++;
	}
	mt_consumer_go_home(c);
	return moved;
}

/*
 * Move the complete sub-buffers of every ring to the stream files: at
 * most a ring's worth each, so that a program completing sub-buffers as
 * fast as we copy them cannot keep us from the caller's loop.
 */
int mt_record_consume(struct mt_session *s, struct mt_ctf_trace *t, int *error)
{
	struct mt_consumer *c = consumer_of(s);
	unsigned cpu;
	int moved = 0;
	char err[512];

	if (!c || mt_consumer_check(c) < 0)
		return session_failed(c, error);
	if (mt_ctf_update_classes(t, s) && mt_ctf_write_metadata(t, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		*error = 1;
	}
	/* flight recorder: writers may overwrite any sub-buffer until they stop */
	if (c->mode == MT_RING_OVERWRITE && !c->stopped)
		return 0;
	mt_consumer_look(c);
	for (cpu = 0; cpu < c->ncpu && !c->error[0]; cpu++)
		moved += consume_ring(c, t, cpu, c->num_subbuf, error);
	if (c->error[0])
		return session_failed(c, error);
	return moved;
}

/* The switch timer: close every ring's open sub-buffer, so that slow
 * streams reach the trace (and relayd) within a period. */
void mt_record_switch(struct mt_session *s)
{
	struct mt_consumer *c = consumer_of(s);
	unsigned cpu;

	for (cpu = 0; c && cpu < c->ncpu && !c->error[0]; cpu++)
		mt_consumer_flush(c, cpu, 0);
}

static mt_u64 total_lost(struct mt_session *s, const struct mt_ctf_trace *t)
{
	struct mt_consumer *c = consumer_of(s);

	return (c ? mt_consumer_lost(c) : 0) + t->disk_lost;
}

/*
 * Drain one ring after writers were told to stop.  A writer that passed
 * the active check still completes its commit, so we wait for complete
 * sub-buffers a little; one whose writer died between reserve and commit
 * never completes and is reported.  Bounded: what writers can still
 * commit after they stop is a ring at most, the wait for sub-buffers to
 * complete ends at the deadline (one for all rings: a program could leave
 * every ring's sub-buffer incomplete), and a second SIGINT/SIGTERM ends
 * the wait.  0 if drained, -1 if not.
 */
static int drain_ring(struct mt_consumer *c, struct mt_ctf_trace *t, unsigned cpu,
		      int first_round, double deadline, int quiet, int *error)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	unsigned budget = 2 * c->num_subbuf + 2;

	budget -= (unsigned)consume_ring(c, t, cpu, budget, error);
	mt_consumer_flush(c, cpu, mt_clock_ns());
	if (c->mode == MT_RING_OVERWRITE && first_round)
		mt_consumer_seek_oldest(c, cpu);
	while (!c->error[0] && mt_consumer_pending(c, cpu)) {
		int moved;
		if (stop_count > 1)
			return -1;
		if (!budget) {
			mt_error("record: cpu %u: the traced program kept writing after recording "
				 "stopped; the trace ends here", cpu);
			return -1;
		}
		moved = consume_ring(c, t, cpu, budget, error);
		budget -= (unsigned)moved;
		if (moved)
			continue;
		if (now_s() > deadline) {
			if (!quiet)
				mt_error("record: cpu %u: a sub-buffer never completed "
					 "(a writer died between reserve and commit); "
					 "its events are not in the trace", cpu);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	return c->error[0] ? -1 : 0;
}

/*
 * Stop: writers see active == 0, every open sub-buffer is closed and the
 * rest drained; the metadata then says whether the trace is complete.
 */
void mt_record_finish(struct mt_session *s, struct mt_ctf_trace *t, int quiet, int *error)
{
	struct mt_consumer *c = consumer_of(s);
	unsigned cpu;
	int round, complete = c && mt_consumer_check(c) == 0, sane = complete;
	char err[512];

	if (c)
		c->stopped = 1;
	mt_store_release(&s->active, 0);
	for (round = 0; round < 2 && sane && !c->error[0] && stop_count < 2; round++) {
		struct timespec pause = { 0, 2 * 1000 * 1000 };
		/* writers finish a commit in microseconds: half a second
		 * for all the rings is plenty */
		double deadline = now_s() + 0.5;

		nanosleep(&pause, NULL);
		if (c->mode == MT_RING_OVERWRITE && round == 0)
			for (cpu = 0; cpu < c->ncpu; cpu++)
				mt_consumer_seek_oldest(c, cpu);
		if (mt_ctf_update_classes(t, s) && mt_ctf_write_metadata(t, err, sizeof(err)) < 0) {
			mt_error("record: %s", err);
			*error = 1;
		}
		/* a ring that does not drain leaves the trace incomplete; the
		 * others are still drained, unless the session is corrupt or a
		 * second signal says stop now */
		for (cpu = 0; cpu < c->ncpu && !c->error[0] && stop_count < 2; cpu++)
			if (drain_ring(c, t, cpu, round == 0, deadline, quiet, error) < 0)
				complete = 0;
		if (c->error[0] || stop_count >= 2)
			complete = 0;
	}
	if (!c || c->error[0])
		session_failed(c, error);
	if (mt_ctf_end(t, complete, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		*error = 1;
	}
}

static void status_line(struct mt_session *s, struct mt_ctf_trace *t, double start,
			mt_u64 *last_events, double *last_time)
{
	double now = now_s();
	double rate = now > *last_time ? (double)(t->events - *last_events) / (now - *last_time) : 0;

	fprintf(stderr, "\rmarktrace: %llu events, %.0f events/s, %llu lost, %.1f s   ",
		(unsigned long long)t->events, rate, (unsigned long long)total_lost(s, t),
		now - start);
	*last_events = t->events;
	*last_time = now;
}

/* --relay: relayd's streams of a trace (in relayd's folder sub, NULL for
 * the session's own), and the trace's packets and metadata to them; the
 * last trace of the recording tells relayd the streams are complete. */
int mt_record_relay_attach(struct mt_ctf_trace *t, const char *sub, unsigned ncpu, int last,
			   char *err, size_t errlen)
{
	if (!relay)
		return 0;
	if (!(t->tap = mt_relay_add_trace(relay, sub, ncpu, err, errlen)))
		return -1;
	return last ? mt_relay_streams_sent(relay, err, errlen) : 0;
}

/* --relay, live: no event older than ts is still to come from a stream
 * that sent nothing since the last call. */
void mt_record_relay_tick(mt_u64 ts)
{
	if (relay)
		mt_relay_tick(relay, ts);
}

const char *mt_record_relay_path(void)
{
	return relay ? mt_relay_path(relay) : "";
}

/* --relay: the streams closed; what did not reach relayd is said. */
void mt_record_relay_finish(const char *dir, int *error)
{
	if (!relay)
		return;
	if (mt_relay_end(relay) < 0) {
		mt_error("record: relayd lost (%s): %llu events were not sent to it; it has the "
			 "trace up to there in %s%s%s", mt_relay_error(relay),
			 (unsigned long long)mt_relay_lost(relay), mt_relay_path(relay),
			 dir ? "; the whole trace is in " : "", dir ? dir : "");
		*error = 1;
	}
	mt_relay_free(relay);
	relay = NULL;
}

/* Start the recording: the trace, then the command or the process.  For
 * -p the process is asked first, so that a refusal leaves no trace. */
static int record_start(struct mt_record_opts *o, const char *dir, int fd,
			struct mt_session *s, struct mt_ctf_trace *t, pid_t *child)
{
	struct mt_ctf_clock clock;
	char err[512];
	int opened;

	if (o->pid && mt_agent_attach(o->pid, fd, err, sizeof(err)) < 0) {
		mt_error("record: -p %d: %s", (int)o->pid, err);
		return -1;
	}
	mt_ctf_clock_now(&clock);
	snprintf(clock.source, sizeof(clock.source), "%s", mt_uclock_describe());
	snprintf(clock.buffers, sizeof(clock.buffers), "%s", mt_record_sync_describe(s));
	opened = mt_ctf_open(t, dir, s->ncpu, "ust", &clock, err, sizeof(err));
	if (opened == 0)
		mt_ctf_update_classes(t, s);   /* the thread event's class, at least */
	if (opened < 0 ||
	    mt_record_relay_attach(t, NULL, s->ncpu, 1, err, sizeof(err)) < 0 ||
	    mt_ctf_write_metadata(t, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		mt_ctf_remove(t);
		mt_ctf_close(t);
		if (o->pid)
			mt_agent_detach(o->pid);
		return -1;
	}
	if (!o->pid && (*child = mt_record_spawn(o->command, fd)) < 0) {
		mt_ctf_remove(t);
		mt_ctf_close(t);
		return -1;
	}
	return 0;
}

/* How marktrace exits: its own failure first (1), then as the command did
 * (its status, 128 + N when killed by signal N, like a shell). */
static int exit_status(int error, pid_t child, int waited, int status)
{
	if (error)
		return 1;
	if (child > 0 && waited && WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	if (child > 0 && waited && WIFEXITED(status))
		return WEXITSTATUS(status);
	return 0;
}

static int record_user(struct mt_record_opts *o, const char *dir)
{
	struct mt_session *s;
	struct mt_consumer *c;
	struct mt_ctf_trace trace;
	size_t len;
	int fd, error = 0, status = 0, waited = 0, tty;
	pid_t child = 0;
	double start, last_status, last_time, last_switch;
	mt_u64 last_events = 0, beacon = 0;
	char where[4200];

	fd = mt_record_create_session(o, &s, &len);
	if (fd < 0)
		return 1;
	c = consumer_of(s);
	/* the geometry is ours from here on: the program can write s */
	if (record_start(o, dir, fd, s, &trace, &child) < 0)
		return 1;
	trace.uncounted = o->quiet;   /* nobody shows the count */
	tty = !o->quiet && isatty(2);
	start = last_status = last_time = last_switch = now_s();
	/* the switch timer's period; without it, the rings are drained as often */
	double period = (o->switch_ms ? o->switch_ms : 1000) / 1000.0;
	for (;;) {
		int moved = 0, drain = rings_at_mark(c), show;
		if (stop_signal || c->error[0])
			break;
		if (child > 0) {
			pid_t w = waitpid(child, &status, WNOHANG);
			if (w == child) {
				waited = 1;
				break;
			}
		} else if (o->pid && mt_agent_gone(o->pid)) {
			break;
		}
		mt_uclock_steer(s);
		/* the switch timer (discard mode: in overwrite mode a closed
		 * packet would push out older data for nothing) */
		if (now_s() - last_switch > period) {
			/* live: nothing older than a period is still to come
			 * from a stream that sends nothing now */
			beacon = mt_clock_ns() - (mt_u64)(period * 1e9);
			if (o->switch_ms && !o->overwrite)
				mt_record_switch(s);
			last_switch = now_s();
			drain = 1;
		}
		show = tty && now_s() - last_status > 0.5;
		if (drain || show)   /* the count shown is of the events copied */
			moved = mt_record_consume(s, &trace, &error);
		if (beacon) {
			mt_record_relay_tick(beacon);
			beacon = 0;
		}
		if (show) {
			status_line(s, &trace, start, &last_events, &last_time);
			last_status = now_s();
		}
		if (!moved && !c->error[0]) {
			double until = now_s() + 0.2;   /* the waitpid above, at worst */
			if (last_switch + period < until)
				until = last_switch + period;
			if (tty && last_status + 0.5 < until)
				until = last_status + 0.5;
			consumer_sleep(c, until - now_s());
		}
	}
	if (o->pid)
		mt_agent_detach(o->pid);
	mt_record_finish(s, &trace, o->quiet, &error);
	if (tty)
		fputc('\n', stderr);
	snprintf(where, sizeof(where), "%s%s%s%s", dir ? dir : "", dir && relay ? " and " : "",
		 relay ? "relayd's " : "", relay ? mt_relay_path(relay) : "");
	mt_record_relay_finish(dir, &error);
	if (!o->quiet) {
		fprintf(stderr, "marktrace: %llu events recorded, %llu lost, in %s\n",
			(unsigned long long)trace.events, (unsigned long long)total_lost(s, &trace),
			where);
		if (trace.disk_lost)
			fprintf(stderr, "marktrace: of which %llu could not be written to %s\n",
				(unsigned long long)trace.disk_lost, dir);
		if (waited && WIFSIGNALED(status))
			fprintf(stderr, "marktrace: %s was killed by signal %d\n",
				o->command[0], WTERMSIG(status));
		else if (waited && WIFEXITED(status) && WEXITSTATUS(status))
			fprintf(stderr, "marktrace: %s exited with status %d\n",
				o->command[0], WEXITSTATUS(status));
	}
	mt_ctf_close(&trace);
	consumer_release(s);
	munmap(s, len);
	close(fd);
	return exit_status(error, child, waited, status);
}

/* Record at o->nice: by default only if that is a higher priority than
 * ours and we may take it; --nice N as asked, or a warning saying why not. */
static void consumer_priority(const struct mt_record_opts *o)
{
	errno = 0;
	start_nice = getpriority(PRIO_PROCESS, 0);
	if (errno || (!o->nice_given && start_nice <= o->nice) || start_nice == o->nice)
		return;
	if (setpriority(PRIO_PROCESS, 0, o->nice) == 0)
		reniced = 1;
	else if (o->nice_given)
		mt_error("record: --nice %d: %s; recording at niceness %d", o->nice,
			 strerror(errno), start_nice);
}

/* relayd's session: the trace directory's last name, or "marktap". */
static void relay_session_name(const char *dir, char *name, size_t len)
{
	size_t n = strlen(dir);
	const char *base;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	for (base = dir + n; base > dir && base[-1] != '/'; base--)
		;
	snprintf(name, len, "%.*s", (int)(dir + n - base), base);
}

int mt_cmd_record(int argc, char **argv)
{
	struct mt_record_opts o;
	struct sigaction sa;
	char dirbuf[64];
	int rc = parse_options(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (!o.output)
		default_output(dirbuf, sizeof(dirbuf));
	if (relay_url) {
		/* before anything is armed: no relayd, no recording */
		char err[512], name[256];
		/* relayd dates the directory: the session is the name alone */
		relay_session_name(o.output ? o.output : "marktap", name, sizeof(name));
		relay = mt_relay_connect(relay_url, name,
					 relay_live ? o.switch_ms * 1000u : 0,
					 err, sizeof(err));
		if (!relay) {
			mt_error("record: %s", err);
			return 1;
		}
	} else if (!o.output) {
		o.output = dirbuf;
	}
	mt_ctf_set_mode(o.mode);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	mt_net_stop_on(&stop_count, 2);   /* relayd: a second signal stops a stalled send */
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	consumer_priority(&o);
	if (o.kernel)
		return mt_record_kernel(&o, o.output);
	return record_user(&o, o.output);
}
