/*
 * cmd_record.c - marktrace record: the consumer of a recording session.
 *
 *   marktrace record [-o DIR] [-e PATTERN]... [--overwrite] [--subbuf-size N]
 *                    [--num-subbuf N] [-q] (-- CMD [ARGS] | -p PID)
 *
 * We create the session (a memfd laid out as struct mt_session), start the
 * command with MARKTAP_SHM_FD naming it (or hand it to a running process's
 * agent), then move every complete sub-buffer into the CPU's stream file
 * until the command exits or we are told to stop.  Stopping closes the
 * open sub-buffers (mt_ring_flush) and drains them, so the trace ends
 * with every committed event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "marktrace.h"
#include "mt_ctf.h"
#include "mt_session.h"
#include "record.h"
#include "uclock.h"

static volatile sig_atomic_t stop_signal;

int mt_record_stopped(void)
{
	return stop_signal != 0;
}

static void on_stop_signal(int sig)
{
	stop_signal = sig;
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;
	size_t plen = 0;

	memset(o, 0, sizeof(*o));
	o->subbuf_size = 1u << 20;
	o->num_subbuf = 4;
	o->switch_ms = 1000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:e:p:kqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
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
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	o->command = argv + optind;
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

/* Create the user-space session memfd; its descriptor, or -1. */
int mt_record_create_session(const struct mt_record_opts *o, struct mt_session **sp, size_t *lenp)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	mt_u64 bytes;
	int fd;
	struct mt_session *s;

	if (ncpu < 1)
		ncpu = 1;
	bytes = mt_session_bytes((u32)ncpu, o->subbuf_size, o->num_subbuf);
	if (!bytes) {
		mt_error("record: invalid buffer geometry");
		return -1;
	}
	fd = memfd_create("marktap-session", 0);   /* inherited by the command */
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
	/* populated: the consumer reads every page, and a fault per 64 KiB of
	 * sub-buffer was a fifth of its work while the program ran */
	s = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (s == MAP_FAILED) {
		mt_error("record: cannot map the session buffers: %s", strerror(errno));
		close(fd);
		return -1;
	}
	mt_session_init(s, MT_DOMAIN_USER, (u32)ncpu, o->subbuf_size, o->num_subbuf,
			o->overwrite ? MT_RING_OVERWRITE : MT_RING_DISCARD);
	/*
	 * The consumer copies in batches: writers wake it when a quarter of
	 * a ring (at least one sub-buffer) is unconsumed; its timers drain
	 * the rest (record_user).  Big buffers absorb a burst of events with
	 * no copying beside it; the default 4 sub-buffers wake it at each.
	 * A flight recorder is read only at the end.
	 */
	s->wake_subbufs = o->overwrite ? 0 : o->num_subbuf >= 8 ? o->num_subbuf / 4 : 1;
	mt_uclock_setup(s);
	memcpy(s->patterns, o->patterns, sizeof(s->patterns));
	s->active = 1;
	*sp = s;
	*lenp = bytes;
	return fd;
}

/*
 * Is a ring at its wake-up mark (s->wake_subbufs unconsumed sub-buffers,
 * the first of them complete)?  The consumer copies in batches: when a
 * ring reaches the mark, at the switch timer and at the status line.
 * Copying while the traced program is busy takes CPU time from it.
 */
static int rings_at_mark(struct mt_session *s)
{
	unsigned cpu;

	for (cpu = 0; cpu < s->ncpu; cpu++) {
		struct mt_ring *r = mt_session_ring(s, cpu);
		struct mt_ring_packet pkt;

		if (mt_session_ring_at_mark(s, r) && mt_ring_get_packet(r, &pkt) == 0)
			return 1;
	}
	return 0;
}

/*
 * Sleep until a writer sees a ring at its mark (it wakes us through
 * s->consumer_wait, see mt_session.h), a signal (the command ended,
 * Ctrl-C), or `seconds` pass.  The bit is set before the rings are looked
 * at once more, so a ring that reached its mark in between is not missed.
 */
static void consumer_sleep(struct mt_session *s, double seconds)
{
	u32 v = __atomic_or_fetch(&s->consumer_wait, 1u, __ATOMIC_SEQ_CST);

	if (seconds > 0 && !rings_at_mark(s) && !stop_signal) {
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

/* Move every complete sub-buffer of every ring to its stream file. */
int mt_record_consume(struct mt_session *s, struct mt_ctf_trace *t, int *error)
{
	unsigned cpu;
	int moved = 0;
	char err[256];

	if (mt_load_acquire(&s->nevents) != t->metadata_events &&
	    mt_ctf_write_metadata(t, s, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		*error = 1;
	}
	/* flight recorder: writers may overwrite any sub-buffer until they stop */
	if (s->mode == MT_RING_OVERWRITE && mt_load_acquire(&s->active))
		return 0;
	for (cpu = 0; cpu < s->ncpu; cpu++) {
		struct mt_ring *r = mt_session_ring(s, cpu);
		struct mt_ring_packet pkt;
		while (mt_ring_get_packet(r, &pkt) == 0) {
			if (mt_ctf_write_packet(t, s, cpu, &pkt, err, sizeof(err)) < 0) {
				mt_error("record: %s", err);
				*error = 1;
			}
			mt_ring_put_packet(r);
			moved++;
		}
	}
	return moved;
}

static mt_u64 total_lost(struct mt_session *s)
{
	mt_u64 lost = 0;
	unsigned cpu;

	for (cpu = 0; cpu < s->ncpu; cpu++)
		lost += mt_load_relaxed(&mt_session_ring(s, cpu)->lost);
	return lost;
}

/*
 * Stop: writers see active == 0, every open sub-buffer is closed and the
 * rest drained.  A writer that passed the active check still completes
 * its commit, so we wait for complete sub-buffers a little; one whose
 * writer died between reserve and commit never completes and is reported.
 */
void mt_record_finish(struct mt_session *s, struct mt_ctf_trace *t, int quiet, int *error)
{
	unsigned cpu;
	int round;
	char err[256];

	mt_store_release(&s->active, 0);
	for (round = 0; round < 2; round++) {
		struct timespec pause = { 0, 2 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		if (s->mode == MT_RING_OVERWRITE && round == 0)
			for (cpu = 0; cpu < s->ncpu; cpu++)
				mt_ring_seek_oldest(mt_session_ring(s, cpu));
		for (cpu = 0; cpu < s->ncpu; cpu++) {
			struct mt_ring *r = mt_session_ring(s, cpu);
			double deadline = now_s() + 0.5;
			mt_record_consume(s, t, error);
			mt_ring_flush(r, mt_clock_ns());
			if (s->mode == MT_RING_OVERWRITE && round == 0)
				mt_ring_seek_oldest(r);
			while (mt_load_relaxed(&r->read_pos) < mt_load_relaxed(&r->write_pos)) {
				if (mt_record_consume(s, t, error))
					continue;
				if (now_s() > deadline) {
					if (!quiet)
						mt_error("record: cpu %u: a sub-buffer never completed "
							 "(a writer died between reserve and commit); "
							 "its events are not in the trace", cpu);
					break;
				}
				nanosleep(&pause, NULL);
			}
		}
	}
	if (mt_ctf_write_metadata(t, s, err, sizeof(err)) < 0) {
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
		(unsigned long long)t->events, rate, (unsigned long long)total_lost(s), now - start);
	*last_events = t->events;
	*last_time = now;
}

static int record_user(struct mt_record_opts *o, const char *dir)
{
	struct mt_session *s;
	struct mt_ctf_trace trace;
	struct mt_ctf_clock clock;
	size_t len;
	int fd, error = 0, status = 0, tty;
	pid_t child = 0;
	char err[256];
	double start, last_status, last_time, last_switch;
	mt_u64 last_events = 0;

	fd = mt_record_create_session(o, &s, &len);
	if (fd < 0)
		return 1;
	mt_ctf_clock_now(&clock);
	if (mt_ctf_open(&trace, dir, s->ncpu, "ust", &clock, err, sizeof(err)) < 0 ||
	    mt_ctf_write_metadata(&trace, s, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		return 1;
	}
	trace.uncounted = o->quiet;   /* nobody shows the count */
	if (o->pid) {
		if (mt_agent_attach(o->pid, fd, err, sizeof(err)) < 0) {
			mt_error("record: -p %d: %s", (int)o->pid, err);
			return 1;
		}
	} else {
		child = mt_record_spawn(o->command, fd);
		if (child < 0)
			return 1;
	}
	tty = !o->quiet && isatty(2);
	start = last_status = last_time = last_switch = now_s();
	/* the switch timer's period; without it, the rings are drained as often */
	double period = (o->switch_ms ? o->switch_ms : 1000) / 1000.0;
	for (;;) {
		int moved = 0, drain = rings_at_mark(s), show;
		if (stop_signal)
			break;
		if (child > 0) {
			pid_t w = waitpid(child, &status, WNOHANG);
			if (w == child)
				break;
		} else if (o->pid && mt_agent_gone(o->pid)) {
			break;
		}
		mt_uclock_steer(s);
		/* the switch timer (discard mode: in overwrite mode a closed
		 * packet would push out older data for nothing) */
		if (now_s() - last_switch > period) {
			if (o->switch_ms && !o->overwrite)
				for (unsigned cpu = 0; cpu < s->ncpu; cpu++)
					mt_ring_flush(mt_session_ring(s, cpu), 0);
			last_switch = now_s();
			drain = 1;
		}
		show = tty && now_s() - last_status > 0.5;
		if (drain || show)   /* the count shown is of the events copied */
			moved = mt_record_consume(s, &trace, &error);
		if (show) {
			status_line(s, &trace, start, &last_events, &last_time);
			last_status = now_s();
		}
		if (!moved) {
			double until = now_s() + 0.2;   /* the waitpid above, at worst */
			if (last_switch + period < until)
				until = last_switch + period;
			if (tty && last_status + 0.5 < until)
				until = last_status + 0.5;
			consumer_sleep(s, until - now_s());
		}
	}
	if (o->pid)
		mt_agent_detach(o->pid);
	mt_record_finish(s, &trace, o->quiet, &error);
	if (tty)
		fputc('\n', stderr);
	if (!o->quiet) {
		fprintf(stderr, "marktrace: %llu events recorded, %llu lost, in %s\n",
			(unsigned long long)trace.events, (unsigned long long)total_lost(s), dir);
		if (child > 0 && WIFSIGNALED(status))
			fprintf(stderr, "marktrace: %s was killed by signal %d\n",
				o->command[0], WTERMSIG(status));
		else if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status))
			fprintf(stderr, "marktrace: %s exited with status %d\n",
				o->command[0], WEXITSTATUS(status));
	}
	mt_ctf_close(&trace);
	munmap(s, len);
	close(fd);
	return error;
}

int mt_cmd_record(int argc, char **argv)
{
	struct mt_record_opts o;
	struct sigaction sa;
	char dirbuf[64];
	int rc = parse_options(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (!o.output) {
		default_output(dirbuf, sizeof(dirbuf));
		o.output = dirbuf;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.kernel)
		return mt_record_kernel(&o, o.output);
	return record_user(&o, o.output);
}
