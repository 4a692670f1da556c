/*
 * record.h - pieces of marktrace record shared by its user and kernel paths.
 */
#ifndef MT_RECORD_H
#define MT_RECORD_H

#include <sys/types.h>
#include "mt_ctf.h"

struct mt_record_opts {
	const char *output;
	unsigned mode;          /* trace files' permissions (--mode, default 0600) */
	char patterns[MT_PATTERNS_MAX];
	char functions[MT_PATTERNS_MAX];   /* --function: NAME[%entry|%return], a line each */
	pid_t pid;
	int kernel, overwrite, quiet;
	u32 subbuf_size, num_subbuf;
	u32 switch_ms;          /* close open sub-buffers this often (0: never) */
	int nice, nice_given;   /* our niceness while recording (--nice) */
	int sync;               /* --sync: enum mt_sync, or -1: per-CPU where it can be */
	u32 context;            /* --context: enum mt_context (mt_event.h) */
	char **command;
};

/*
 * consumer.c: marktrace's view of a session's rings.  The geometry is
 * fixed at setup and every value read from the shared memory is checked
 * against it (see consumer.c for why); error[] says why a session was
 * found corrupt.
 */
struct mt_consumer_ring {
	struct mt_ring *ring;           /* shared: writers' fields, read checked */
	struct mt_ring_subbuf *subbuf;  /* shared: num_subbuf controls */
	const char *data;               /* shared: subbuf_size * num_subbuf bytes */
	mt_u64 read_pos;                /* ours; ring->read_pos is a copy for writers */
	mt_u64 last_wp;                 /* write_pos at our last look */
	int active;                     /* it moved since the look before */
	mt_u64 lost;                    /* the highest lost count seen */
	mt_u64 *taken;                  /* per sub-buffer: its commit count when
					   we last took it (events per packet) */
	mt_u64 got;                     /* commit count of the packet got, for put */
};

struct mt_consumer {
	struct mt_session *s;           /* shared */
	u32 ncpu, subbuf_size, num_subbuf, mode, wake_subbufs, domain;
	u32 sync;                       /* enum mt_sync, as created */
	void *home;                     /* cpu_set_t: our affinity at setup, or NULL */
	size_t home_size;
	int away;                       /* moved to a ring's CPU since */
	struct mt_consumer_ring *rings;
	int stopped;                    /* writers were told to stop */
	char error[384];                /* "" while the session looks sane */
};

int mt_consumer_init(struct mt_consumer *c, struct mt_session *s, mt_u64 len, u32 ncpu,
		     u32 subbuf_size, u32 num_subbuf, u32 mode, u32 wake_subbufs);
void mt_consumer_free(struct mt_consumer *c);
/* Are the fields set once at creation still as created?  0 or -EPROTO. */
int mt_consumer_check(struct mt_consumer *c);
/* A complete packet at the ring's read position: 0, -EAGAIN, or -EPROTO. */
int mt_consumer_get(struct mt_consumer *c, unsigned cpu, struct mt_ring_packet *pkt);
void mt_consumer_put(struct mt_consumer *c, unsigned cpu);
int mt_consumer_flush(struct mt_consumer *c, unsigned cpu, mt_u64 now);
/* Copy a ring's packets from its CPU, where they are in cache, if our
 * affinity at setup allowed that CPU; back to that affinity. */
void mt_consumer_go_to(struct mt_consumer *c, unsigned cpu);
void mt_consumer_go_home(struct mt_consumer *c);
void mt_consumer_look(struct mt_consumer *c);
void mt_consumer_seek_oldest(struct mt_consumer *c, unsigned cpu);
int mt_consumer_at_mark(struct mt_consumer *c, unsigned cpu);
int mt_consumer_pending(struct mt_consumer *c, unsigned cpu);
mt_u64 mt_consumer_lost(struct mt_consumer *c);

/*
 * The consumer's priority.  A sub-buffer holds a few milliseconds of a
 * busy program's events: when marktrace waits that long for a CPU, behind
 * the program's own threads or anything else, events are lost.  So it
 * records at niceness MT_RECORD_NICE when it may (root, CAP_SYS_NICE or
 * RLIMIT_NICE), or at --nice N (mt_record_priority); the command runs at
 * the niceness marktrace was started with.  bench/README.md: the paced
 * rate recorded without loss, and the losses of two busy threads on two
 * CPUs.
 */
#define MT_RECORD_NICE (-10)

/* recorder.c: the consumer loop's steps, for any session mapping. */
int mt_record_consume(struct mt_session *s, struct mt_ctf_trace *t, int *error);
void mt_record_switch(struct mt_session *s);
const char *mt_record_sync_describe(const struct mt_session *s);
void mt_record_finish(struct mt_session *s, struct mt_ctf_trace *t, int quiet, int *error);

/* The consumer of a session (created here, or the kernel's on first use),
 * and its end; are its rings at their wake-up mark; sleep until a writer
 * wakes us or seconds pass. */
struct mt_consumer *mt_record_consumer(struct mt_session *s);
void mt_record_release(struct mt_session *s);
int mt_record_at_mark(struct mt_consumer *c);
void mt_record_sleep(struct mt_consumer *c, double seconds);
double mt_record_now(void);   /* CLOCK_MONOTONIC, in seconds */
/* Events lost so far (rings and disk); the terminal's status line. */
mt_u64 mt_record_lost(struct mt_session *s, const struct mt_ctf_trace *t);
void mt_record_status(struct mt_session *s, struct mt_ctf_trace *t, double start,
		      mt_u64 *last_events, double *last_time);
/* Stop signals (SIGINT, SIGTERM, SIGHUP), and our niceness (--nice). */
void mt_record_signals(void);
void mt_record_priority(const struct mt_record_opts *o);
int mt_record_relay_connect(const char *url, const char *name, unsigned live_us,
			    char *err, size_t errlen);

/* recorder.c, --relay (each does nothing without it): a trace's streams
 * at relayd (sub: its folder in the session's, or NULL; last: the streams
 * are complete), the live timer's beacons, the end (what was lost said). */
int mt_record_relay_attach(struct mt_ctf_trace *t, const char *sub, unsigned ncpu, int last,
			   char *err, size_t errlen);
void mt_record_relay_tick(mt_u64 ts);
void mt_record_relay_finish(const char *dir, int *error);
/* relayd's folder of the session ("" without --relay). */
const char *mt_record_relay_path(void);

/* Create a user session memfd (its descriptor, or -1), start a command. */
int mt_record_create_session(const struct mt_record_opts *o, struct mt_session **sp, size_t *lenp);
pid_t mt_record_spawn(char **command, int session_fd);
int mt_record_stopped(void);   /* SIGINT, SIGTERM or SIGHUP seen */

/* agent_client.c: hand a session to a running process's agent. */
int mt_agent_attach(pid_t pid, int session_fd, char *err, size_t errlen);
int mt_agent_gone(pid_t pid);
void mt_agent_detach(pid_t pid);

/* record_kernel.c: marktrace record --kernel. */
int mt_record_kernel(struct mt_record_opts *o, const char *dir);
/* cmd_record.c: the -e patterns that took nothing of a user recording,
 * each said, and how many (with kernel, elsewhere: those that matched
 * kernel markers, not said). */
/* record_say.c: whether c is a marker's class (not libmarktap's own);
 * who the user side of a recording is, for messages */
int mt_record_is_marker_class(const struct mt_ctf_class *c);
void mt_record_who(const struct mt_record_opts *o, char *who, size_t size);
unsigned mt_record_say_patterns(const struct mt_record_opts *o, const struct mt_session *s,
				const struct mt_ctf_trace *t, int kernel, mt_u64 elsewhere);

#endif
