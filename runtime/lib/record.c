/*
 * record.c - the recorder consumer of marker hits, in the traced process.
 *
 * marktrace record hands us a session (a memfd, see mt_session.h) either
 * through the environment (MARKTAP_SHM_FD, inherited across fork and
 * exec, so children are recorded into the same buffers) or through the
 * agent socket (marktrace record -p PID).  Each hit is serialised into
 * the ring of the CPU we run on.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
#include <sys/rseq.h>
#define MT_HAVE_RSEQ_AREA 1
#endif
#include "mt_event.h"
#include "mt_lib.h"

static struct mt_session *session;   /* NULL: not recording */
static size_t session_len;
static unsigned session_ncpu;

/* Per-thread event context, refreshed after fork (generation changes).
 * Initial-exec TLS: a hit reads it without a __tls_get_addr call (a
 * dlopen'ed libmarktap takes its few bytes from glibc's static TLS
 * surplus). */
static unsigned context_generation = 1;
static __thread struct {
	unsigned generation;
	struct mt_event_context ctx;
} tls __attribute__((tls_model("initial-exec")));

/* The objects were dumped (statedump.c) for this session: an armed marker
 * records addresses.  Only then: a trace without addresses needs none. */
static int dumped;
static int wants_dump;          /* an armed marker has a pointer field */

/* Fork holds the statedump's lock (not the registry's: the script host's
 * fork handler holds its own lock, which dlclose takes inside the
 * registry's): the child finds the list of objects whole. */
static void after_fork_child(void)
{
	__atomic_add_fetch(&context_generation, 1, __ATOMIC_RELAXED);
	/* a new pid: readers keep objects per process (statedump.c) */
	if (session && dumped)
		mt_statedump_again(session);
	mt_statedump_unlock();
}

static int has_pointer(const struct mt_format *f)
{
	unsigned i;

	for (i = 0; i < f->nfields; i++)
		if (f->fields[i].is_pointer)
			return 1;
	return 0;
}

static const struct mt_event_context *thread_context(void)
{
	if (mt_unlikely(tls.generation != mt_load_relaxed(&context_generation))) {
		char name[MT_PROCNAME_MAX + 1] = { 0 };
		tls.ctx.pid = getpid();
		tls.ctx.tid = gettid();
		prctl(PR_GET_NAME, name, 0, 0, 0);
		memcpy(tls.ctx.procname, name, MT_PROCNAME_MAX);
		tls.generation = mt_load_relaxed(&context_generation);
	}
	return &tls.ctx;
}

/* The CPU we run on: the kernel keeps it in the thread's rseq area, which
 * glibc registers (2.35 and later); sched_getcpu() reads it too, through
 * a call.  Any ring is correct (reservation is atomic), so a stale value
 * only costs locality. */
static inline unsigned current_cpu(void)
{
#ifdef MT_HAVE_RSEQ_AREA
	if (mt_likely(__rseq_size >= 8)) {
		const struct rseq *rs = (const struct rseq *)
			((char *)__builtin_thread_pointer() + __rseq_offset);
		int cpu = (int)mt_load_relaxed(&rs->cpu_id);
		if (mt_likely(cpu >= 0))
			return (unsigned)cpu;
	}
#endif
	return (unsigned)sched_getcpu();
}

/* A sub-buffer of this ring is complete: wake marktrace if it sleeps and
 * the ring holds s->wake_subbufs unconsumed sub-buffers (mt_session.h,
 * consumer_wait).  The commit before this was a locked add, so either the
 * consumer, which sets the bit before it looks at the rings once more,
 * sees the packets, or we see the bit. */
static void wake_consumer(struct mt_session *s, struct mt_ring *r)
{
	if (!(mt_load_relaxed(&s->consumer_wait) & 1u) || !mt_session_ring_at_mark(s, r))
		return;
	if (__atomic_fetch_and(&s->consumer_wait, ~1u, __ATOMIC_RELAXED) & 1u)
		syscall(SYS_futex, &s->consumer_wait, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void mt_record_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap)
{
	struct mt_session *s = mt_load_relaxed(&session);
	struct mt_args args;
	struct mt_ring_slot slot;
	struct mt_ring *ring;
	size_t payload;
	unsigned cpu;
	char *p;

	(void)m;
	if (mt_unlikely(!s || !mt_load_relaxed(&s->active) || rt->event_id < 0))
		return;
	payload = mt_event_fetch(&rt->format, ap, &args);
	cpu = current_cpu();
	if (mt_unlikely(cpu >= session_ncpu))
		cpu %= session_ncpu;
	ring = mt_session_ring(s, cpu);
	if (mt_unlikely(payload > UINT32_MAX - MT_EVENT_PREFIX_SIZE)) {
		mt_ring_count_lost(ring);
		return;
	}
	if (mt_ring_reserve(ring, (u32)(MT_EVENT_PREFIX_SIZE + payload), &slot))
		return;   /* counted as lost by the ring */
	p = mt_ring_slot_ptr(ring, &slot);
	/* Large buffers are cold memory: ask for the lines a few events ahead
	 * now (for writing), so the stores of the next hits find them.  A
	 * prefetch past the end of the ring does nothing (it never faults).
	 * bench/README.md: 1 thread 50.5 -> 44.8 ns best of 6. */
	__builtin_prefetch(p + 1024, 1, 3);
	mt_event_write_prefix(p, (u16)rt->event_id, slot.ts, thread_context());
	mt_event_write_payload(&rt->format, &args, p + MT_EVENT_PREFIX_SIZE);
	if (mt_unlikely(mt_ring_commit(ring, &slot)))
		wake_consumer(s, ring);
	if (mt_unlikely(slot.ts >= mt_load_relaxed(&mt_statedump_due.ns)))
		mt_statedump_poll(s, slot.ts);  /* a plugin dlopen'ed? (statedump.c) */
}

/* Registry lock held. */
static void arm_for_session(struct mt_marker *m, void *arg)
{
	struct mt_marker_rt *rt = m->rt;
	int id;

	(void)arg;
	if (!session || !rt->format_ok || !mt_session_wants(session, m->name))
		return;
	id = mt_session_event_id(session, m->name, m->format);
	if (id < 0)
		return;
	rt->event_id = id;
	if (has_pointer(&rt->format))
		wants_dump = 1;
	mt_marker_arm(m, MT_ARMED_RECORD);
}

/* Registry lock held: dump every object once an armed marker wants it. */
static void dump_if_wanted(void)
{
	if (session && wants_dump && !dumped) {
		mt_statedump(session, NULL);
		dumped = 1;
	}
}

static void disarm_for_session(struct mt_marker *m, void *arg)
{
	(void)arg;
	mt_marker_disarm(m, MT_ARMED_RECORD);
}

void mt_record_marker_added(struct mt_marker *m)
{
	arm_for_session(m, NULL);
}

void mt_record_object_added(const void *addr)
{
	if (session && dumped)
		mt_statedump(session, addr);
	else
		dump_if_wanted();
}

int mt_record_attach(int fd, char *err, size_t errlen)
{
	struct stat st;
	struct mt_session *s;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "session descriptor %d: %s", fd, strerror(errno));
		return -errno;
	}
	/* populated: the hits do not take page faults */
	s = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (s == MAP_FAILED) {
		snprintf(err, errlen, "mapping the session: %s", strerror(errno));
		return -errno;
	}
	if (mt_session_check(s, (mt_u64)st.st_size) || s->domain != MT_DOMAIN_USER) {
		munmap(s, (size_t)st.st_size);
		snprintf(err, errlen, "descriptor %d is not a marktap session", fd);
		return -EINVAL;
	}
	mt_registry_lock();
	if (session) {
		mt_registry_unlock();
		munmap(s, (size_t)st.st_size);
		snprintf(err, errlen, "this process is already being recorded");
		return -EBUSY;
	}
	session_len = (size_t)st.st_size;
	session_ncpu = s->ncpu;
	/* the session's clock: the TSC marktrace calibrated, if it did */
	__atomic_store_n(&mt_uclock_active, s->clock.enabled ? &s->clock : NULL, __ATOMIC_RELEASE);
	mt_store_release(&session, s);
	mt_registry_for_each(arm_for_session, NULL);
	dump_if_wanted();
	mt_registry_unlock();
	return 0;
}

void mt_record_detach(void)
{
	mt_registry_lock();
	mt_registry_for_each(disarm_for_session, NULL);
	/*
	 * The mapping stays: a thread may still be between the armed check
	 * and its commit.  It is unmapped only at exit, with the process.
	 */
	mt_store_release(&session, NULL);
	mt_statedump_stop();
	dumped = wants_dump = 0;
	mt_registry_unlock();
}

/* Runs before the constructors of the objects that link us. */
static void __attribute__((constructor)) record_init(void)
{
	const char *env = secure_getenv("MARKTAP_SHM_FD");
	char err[160];

	pthread_atfork(mt_statedump_lock, mt_statedump_unlock, after_fork_child);
	if (env && *env) {
		char *end;
		long fd = strtol(env, &end, 10);

		if (*end || fd < 0 || fd > 1 << 20)
			snprintf(err, sizeof(err), "MARKTAP_SHM_FD=%s is not a descriptor", env);
		else if (mt_record_attach((int)fd, err, sizeof(err)) == 0)
			return;
		if (!secure_getenv("MARKTAP_QUIET"))
			fprintf(stderr, "libmarktap: not recording: %s\n", err);
	}
}
