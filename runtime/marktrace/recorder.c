/*
 * recorder.c - the steps of a recording, for any session mapping: the
 * consumers of the sessions this process reads, the user session's
 * creation and its command, copying packets into a trace, the end that
 * drains every committed event, and relayd's copy (--relay).  The user
 * path (cmd_record.c) and the kernel path (record_kernel.c) both drive
 * a loop of these; the traced program can write the whole session, so
 * the rings are read through consumer.c, which trusts none of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <fcntl.h>
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

/* our niceness when marktrace started, and whether we changed it
 * (MT_RECORD_NICE, record.h): the command runs at the first */
static int start_nice, reniced;

/* --relay: the relay daemon connected (relay.c) */
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

/* SIGINT, SIGTERM and SIGHUP stop the recording (mt_record_stopped). */
void mt_record_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	mt_net_stop_on(&stop_count, 2);   /* relayd: a second signal stops a stalled send */
}

/* --relay: connect before anything is armed (0, or -1 and err). */
int mt_record_relay_connect(const char *url, const char *name, unsigned live_us,
			    char *err, size_t errlen)
{
	relay = mt_relay_connect(url, name, live_us, err, errlen);
	return relay ? 0 : -1;
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

struct mt_consumer *mt_record_consumer(struct mt_session *s)
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

void mt_record_release(struct mt_session *s)
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
	s->context = o->context;
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
int mt_record_at_mark(struct mt_consumer *c)
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
void mt_record_sleep(struct mt_consumer *c, double seconds)
{
	struct mt_session *s = c->s;
	u32 v = __atomic_or_fetch(&s->consumer_wait, 1u, __ATOMIC_SEQ_CST);

	if (seconds > 0 && !mt_record_at_mark(c) && !stop_signal) {
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

double mt_record_now(void)
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
	struct mt_consumer *c = mt_record_consumer(s);
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
	struct mt_consumer *c = mt_record_consumer(s);
	unsigned cpu;

	for (cpu = 0; c && cpu < c->ncpu && !c->error[0]; cpu++)
		mt_consumer_flush(c, cpu, 0);
}

mt_u64 mt_record_lost(struct mt_session *s, const struct mt_ctf_trace *t)
{
	struct mt_consumer *c = mt_record_consumer(s);

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
		if (mt_record_now() > deadline) {
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
	struct mt_consumer *c = mt_record_consumer(s);
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
		double deadline = mt_record_now() + 0.5;

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

void mt_record_status(struct mt_session *s, struct mt_ctf_trace *t, double start,
			mt_u64 *last_events, double *last_time)
{
	double now = mt_record_now();
	double rate = now > *last_time ? (double)(t->events - *last_events) / (now - *last_time) : 0;

	fprintf(stderr, "\rmarktrace: %llu events, %.0f events/s, %llu lost, %.1f s   ",
		(unsigned long long)t->events, rate, (unsigned long long)mt_record_lost(s, t),
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

/* Record at o->nice: by default only if that is a higher priority than
 * ours and we may take it; --nice N as asked, or a warning saying why not. */
void mt_record_priority(const struct mt_record_opts *o)
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
