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
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "mt_event.h"
#include "mt_lib.h"

static struct mt_session *session;   /* NULL: not recording */
static size_t session_len;
static unsigned session_ncpu;
static int session_percpu;           /* s->sync == MT_SYNC_PERCPU at attach */
/* s->context at attach (mt_event.h) in the low half, its bytes in every
 * event in the high half: one word, which a hit loads once, so that the
 * bytes it reserves and the fields it writes agree even when a detach and
 * an attach with other fields (mt_record_attach) change it meanwhile */
static mt_u64 session_context;
#define CONTEXT_FIELDS(word) ((u32)(word))
#define CONTEXT_SIZE(word) ((u32)((word) >> 32))

/*
 * Per-thread context: tid in every event, pid and name in the thread
 * events (mt_event.h) written before the thread's first event in each
 * packet.  Refreshed when context_generation moves: after fork, at
 * attach, after a rename (prctl, pthread_setname_np below).  A rename the
 * wrappers do not see (a write to /proc/.../comm, a raw syscall, a
 * libmarktap loaded by dlopen) still shows from the thread's next packet:
 * each thread event reads the name again.  Initial-exec TLS: a hit reads
 * it without a __tls_get_addr call (a dlopen'ed libmarktap takes its few
 * bytes from glibc's static TLS surplus).
 */
static unsigned context_generation = 1;
static __thread struct {
	unsigned generation;
	s32 pid, tid;
	const struct mt_ring *ring;   /* where the thread said who it is last */
	mt_u64 packet_end;            /* the end of that packet (a position) */
	/* --context only (session_context), refreshed as the above and, but
	 * pthread_id, with each thread event: once a packet */
	mt_u64 pthread_id;
	s32 ppid;
	u32 uid, gid;
	char procname[MT_CTX_PROCNAME_SIZE];
} tls __attribute__((tls_model("initial-exec")));

/* The thread event's class in the current session, or -1 (no free id:
 * events then go without, and readers show no pid or name for them). */
static int thread_event_id = -1;

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

/* The context values that can change under a thread (a rename, setuid,
 * a parent's exit), read when it says who it is; name: its name as just
 * read (NUL-terminated), or NULL. */
static void context_refresh(const char *name)
{
	u32 c = CONTEXT_FIELDS(mt_load_relaxed(&session_context));

	if (c & MT_CTX_PROCNAME) {
		memset(tls.procname, 0, sizeof(tls.procname));
		if (name)
			strncpy(tls.procname, name, MT_CTX_PROCNAME_SIZE - 1);
		else
			prctl(PR_GET_NAME, tls.procname, 0, 0, 0);
		tls.procname[MT_CTX_PROCNAME_SIZE - 1] = '\0';
	}
	if (c & MT_CTX_VPPID)
		tls.ppid = getppid();
	if (c & MT_CTX_VUID)
		tls.uid = getuid();
	if (c & MT_CTX_VGID)
		tls.gid = getgid();
}

static void thread_refresh(void)
{
	tls.pid = getpid();
	tls.tid = gettid();
	tls.ring = NULL;
	tls.generation = mt_load_relaxed(&context_generation);
	if (mt_load_relaxed(&session_context)) {
		tls.pthread_id = (mt_u64)pthread_self();
		context_refresh(NULL);
	}
}

/* The context fields c after the tid at dst (mt_uevent_context_size(c)
 * bytes, in mt_event.h's order); where the rest goes. */
static char *write_context(char *dst, u32 c, const void *ip)
{
	mt_u64 v;

	if (c & MT_CTX_VPID) { memcpy(dst, &tls.pid, 4); dst += 4; }
	if (c & MT_CTX_PROCNAME) {
		memcpy(dst, tls.procname, MT_CTX_PROCNAME_SIZE);
		dst += MT_CTX_PROCNAME_SIZE;
	}
	if (c & MT_CTX_IP) { v = (mt_u64)(uintptr_t)ip; memcpy(dst, &v, 8); dst += 8; }
	if (c & MT_CTX_PTHREAD_ID) { memcpy(dst, &tls.pthread_id, 8); dst += 8; }
	if (c & MT_CTX_VPPID) { memcpy(dst, &tls.ppid, 4); dst += 4; }
	if (c & MT_CTX_VUID) { memcpy(dst, &tls.uid, 4); dst += 4; }
	if (c & MT_CTX_VGID) { memcpy(dst, &tls.gid, 4); dst += 4; }
	return dst;
}

/* Something renamed a thread: every thread says its name again. */
static void names_changed(void)
{
	__atomic_add_fetch(&context_generation, 1, __ATOMIC_RELAXED);
}

/*
 * prctl and pthread_setname_np, wrapped when the program links us (ours
 * come before libc's in its lookup order): a rename shows from the
 * thread's next event.  prctl is a plain system call; glibc's
 * pthread_setname_np renames its own thread with an internal prctl that
 * no wrapper sees, hence both.
 */
MT_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	long rc;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	rc = syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
	if (rc >= 0 && option == PR_SET_NAME)
		names_changed();
	return (int)rc;
}

MT_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	/* racing first callers store the same address */
	static int (*next_fn)(pthread_t, const char *);
	int (*next)(pthread_t, const char *) = mt_load_relaxed(&next_fn);
	int rc;

	if (!next) {
		next = (int (*)(pthread_t, const char *))dlsym(RTLD_NEXT, "pthread_setname_np");
		mt_store_relaxed(&next_fn, next);
	}
	if (!next)
		return ENOSYS;
	rc = next(thread, name);
	if (rc == 0)
		names_changed();
	return rc;
}

/* The CPU we run on, for locked rings: the kernel keeps it in the
 * thread's rseq area, which glibc registers (2.35 and later);
 * sched_getcpu() reads it too, through a call.  Any ring is correct there
 * (reservation is atomic from any CPU), so a stale value only costs
 * locality. */
static inline unsigned current_cpu(void)
{
#ifdef MT_HAVE_RSEQ
	const struct rseq *rs = mt_rseq_glibc_area();
	if (mt_likely(rs != NULL)) {
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

/* The thread event at dst (header, tid, pid, name of n bytes with its
 * NUL); where the next event goes. */
static char *write_thread_event(char *dst, mt_u64 ts, int extend, const char *name, size_t n,
				mt_u64 context, const void *ip)
{
	char *p = mt_uevent_write_prefix(dst, (u16)thread_event_id, ts, extend, tls.tid);

	if (mt_unlikely(context))
		p = write_context(p, CONTEXT_FIELDS(context), ip);
	memcpy(p, &tls.pid, 4);
	memcpy(p + 4, name, n);
	return p + 4 + n;
}

/* Does an event of len bytes in ring r go into the packet where the thread
 * last wrote its thread event?  A guess from write_pos (another writer can
 * move it first): a wrong one costs one event whose packet does not name
 * its thread (readers take the name from an earlier packet, unless the
 * flight recorder overwrote them all). */
static inline int thread_named_for(const struct mt_ring *r, u32 len)
{
	return tls.ring == r && mt_load_relaxed(&r->write_pos) + len <= tls.packet_end;
}

void mt_record_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap, const void *ip)
{
	struct mt_session *s = mt_load_relaxed(&session);
	mt_u64 context = mt_load_relaxed(&session_context);   /* once: see its comment */
	struct mt_args args;
	struct mt_ring_slot slot;
	struct mt_ring *ring;
	size_t payload, thread_len = 0, name_len = 0;
	char name[MT_PROCNAME_MAX + 1];
	unsigned cpu, first_id;
	u32 len, extra;
	char *p;
#ifdef MT_HAVE_RSEQ
	struct mt_rseq_ctx rq = { NULL, 0 };
#endif
	int done;

	(void)m;
	if (mt_unlikely(!s || !mt_load_relaxed(&s->active) || rt->event_id < 0))
		return;
	/* the format's plan, inline (mt_fmt_plan); by hand: the general way */
	payload = mt_likely(rt->format.planned) ? mt_event_fetch_planned(&rt->format, ap, &args)
						: mt_event_fetch(&rt->format, ap, &args);
	if (mt_unlikely(payload > UINT32_MAX / 2)) {
		mt_ring_count_lost(mt_session_ring(s, 0));
		return;
	}
#ifdef MT_HAVE_RSEQ
	if (session_percpu) {
		rq.rs = mt_rseq_area();
		if (mt_unlikely(!rq.rs)) {
			mt_ring_count_lost(mt_session_ring(s, 0));
			return;
		}
	}
again:
	if (session_percpu) {
		/* this CPU's ring, and no other: the sequences check it */
		rq.cpu = mt_load_relaxed(&rq.rs->cpu_id);
		if (mt_unlikely(rq.cpu >= session_ncpu)) {
			mt_ring_count_lost(mt_session_ring(s, 0));
			return;
		}
		cpu = rq.cpu;
	} else
#endif
	{
		cpu = current_cpu();
		if (mt_unlikely(cpu >= session_ncpu))
			cpu %= session_ncpu;
	}
	ring = mt_session_ring(s, cpu);
	if (mt_unlikely(tls.generation != mt_load_relaxed(&context_generation)))
		thread_refresh();
	first_id = (unsigned)rt->event_id;
	len = (u32)(mt_uevent_header_size(first_id, 0) + MT_UEVENT_CONTEXT_SIZE +
		    CONTEXT_SIZE(context) + payload);
	thread_len = 0;
	if (mt_unlikely(!thread_named_for(ring, len)) && thread_event_id >= 0) {
		/* the name read again each time: renames nobody told us of */
		memset(name, 0, sizeof(name));
		prctl(PR_GET_NAME, name, 0, 0, 0);
		name_len = strnlen(name, MT_PROCNAME_MAX - 1) + 1;
		name[name_len - 1] = '\0';
		if (mt_unlikely(context))
			context_refresh(name);
		first_id = (unsigned)thread_event_id;
		thread_len = mt_uevent_header_size(first_id, 0) + MT_UEVENT_CONTEXT_SIZE +
			     CONTEXT_SIZE(context) + 4 + name_len;
		len += (u32)thread_len;
		if (mt_unlikely(len > ring->subbuf_size)) {   /* the event alone may fit */
			len -= (u32)thread_len;
			thread_len = 0;
			first_id = (unsigned)rt->event_id;
		}
	}
	/* the first header grows by the extended part when its time is too
	 * far from the previous event's; the second, if any, follows at no
	 * distance in time */
	extra = first_id < MT_UEVENT_ID_EXTENDED ? MT_UEVENT_EXTENDED_SIZE - MT_UEVENT_COMPACT_SIZE : 0;
#ifdef MT_HAVE_RSEQ
	if (session_percpu) {
		int rc = mt_ring_reserve_percpu(ring, len, extra, MT_UEVENT_TS_BITS, &slot, &rq);
		if (mt_unlikely(rc == -EAGAIN))
			goto again;   /* moved to another CPU: its ring */
		if (rc)
			return;   /* counted as lost by the ring */
	} else
#endif
	if (mt_ring_reserve_compact(ring, len, extra, MT_UEVENT_TS_BITS, &slot))
		return;   /* counted as lost by the ring */
	p = mt_ring_slot_ptr(ring, &slot);
	/* Large buffers are cold memory: ask for the lines a few events ahead
	 * now (for writing), so the stores of the next hits find them.  A
	 * prefetch past the end of the ring does nothing (it never faults).
	 * bench/README.md: 1 thread 50.5 -> 44.8 ns best of 6. */
	__builtin_prefetch(p + 1024, 1, 3);
	if (thread_len) {
		p = write_thread_event(p, slot.ts, (int)slot.extend, name, name_len, context, ip);
		tls.ring = ring;
		tls.packet_end = (slot.pos | (ring->subbuf_size - 1)) + 1;
	} else if (mt_unlikely(slot.pos >= tls.packet_end)) {
		tls.ring = NULL;   /* guessed wrong: say it in the next one */
	}
	p = mt_uevent_write_prefix(p, (u16)rt->event_id, slot.ts,
				   !thread_len && slot.extend, tls.tid);
	if (mt_unlikely(context))
		p = write_context(p, CONTEXT_FIELDS(context), ip);
	if (mt_likely(rt->format.planned))
		mt_event_write_planned(&rt->format, &args, p);
	else
		mt_event_write_payload(&rt->format, &args, p);
#ifdef MT_HAVE_RSEQ
	if (session_percpu)
		done = mt_ring_commit_percpu(ring, &slot, &rq);
	else
#endif
		done = mt_ring_commit(ring, &slot);
	if (mt_unlikely(done))
		wake_consumer(s, ring);
	if (mt_unlikely(slot.ts >= mt_load_relaxed(&mt_statedump_due.ns)))
		mt_statedump_poll(s, slot.ts);  /* a plugin dlopen'ed? (statedump.c) */
}

/* Registry lock held. */
static void arm_for_session(struct mt_marker *m, void *arg)
{
	struct mt_marker_rt *rt = m->rt;
	mt_u64 hits;
	int id;

	(void)arg;
	if (!session)
		return;
	hits = mt_patterns_hits(session->patterns, m->name);
	if (hits & ~mt_load_relaxed(&session->pattern_hits))   /* for marktrace's messages */
		__atomic_fetch_or(&session->pattern_hits, hits, __ATOMIC_RELAXED);
	if (!rt->format_ok || !mt_session_wants(session, m->name))
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
	u32 context;

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
	/* the context read once, after the check that it is in the mapping */
	if (mt_session_check(s, (mt_u64)st.st_size) || s->domain != MT_DOMAIN_USER ||
	    ((context = mt_load_relaxed(&s->context)) & ~(u32)MT_CTX_ALL)) {
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
	session_percpu = s->sync == MT_SYNC_PERCPU;
	mt_store_relaxed(&session_context, (mt_u64)mt_uevent_context_size(context) << 32 | context);
	thread_event_id = mt_session_event_id(s, MT_THREAD_EVENT_NAME, MT_THREAD_EVENT_FORMAT);
	names_changed();   /* every thread says who it is in this session */
	/* the session's clock: the TSC marktrace calibrated, if it did */
	__atomic_store_n(&mt_uclock_active, s->clock.enabled ? &s->clock : NULL, __ATOMIC_RELEASE);
	mt_store_release(&session, s);
	/* marktrace's "no process joined" (mt_session.h); the count only */
	__atomic_fetch_add(&s->processes, 1, __ATOMIC_RELAXED);
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

/* The statedump's events (mt_hit_fn): at no marker site, ip 0. */
static void statedump_hit(struct mt_marker *m, struct mt_marker_rt *rt, va_list ap)
{
	mt_record_hit(m, rt, ap, NULL);
}

/* Runs before the constructors of the objects that link us. */
static void __attribute__((constructor)) record_init(void)
{
	const char *env = secure_getenv("MARKTAP_SHM_FD");
	char err[160];

	mt_statedump_set_writer(statedump_hit);
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
