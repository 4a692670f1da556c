/*
 * mt_write.c - the recorder's writer: one marker hit into the current
 * CPU's ring.
 *
 * The dispatcher (mt_dispatch.c) calls it for a hit of a marker armed with
 * an event id.  The ring is the shared core's (mt_ring.c), lock-free: a
 * reservation is a compare-and-swap on write_pos, so interrupts and NMIs
 * nesting on the same CPU simply reserve after us.  The dispatcher
 * disables preemption before we pick the CPU's ring and enables it after
 * the commit, so we cannot migrate to another CPU half way; it also makes
 * the whole write an RCU-sched read-side section, which mt_hooks_sync()
 * waits for when recording stops.
 */
#include <linux/cred.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_session.h"
#include "mt_ioctl.h"

/*
 * The live session and its geometry as the module computed it.  The
 * session area is mapped writable into the consumer, which must write
 * read_pos and may write anything else at any moment: every address we
 * write is computed from this copy (the ring's, the event's, its
 * sub-buffer control's), and positions read from the ring are masked by
 * it (mt_ring.h), so a consumer scribbling over the headers loses its
 * own events, nothing else.
 */
static struct {
	struct mt_session *session;
	struct mt_session_geom geom;
	int creds;    /* events end with MT_CREDS_FIELDS credentials (mt_ioctl.h) */
	bool hide_kaddr;   /* kernel addresses hashed (mt_hide_kaddr) */
} mt_live;

/*
 * Only while no writer runs: when recording starts (the session was NULL
 * and mt_hooks_sync() has waited for the last writer of the one before),
 * or to stop.
 */
void mt_write_set_session(struct mt_session *s, const struct mt_session_geom *g,
			  int creds, bool hide_kaddr)
{
	if (s) {
		mt_live.creds = creds;
		mt_live.hide_kaddr = hide_kaddr;
		mt_live.geom = *g;
	}
	/* release: the geometry above is visible before the pointer */
	smp_store_release(&mt_live.session, s);
}

static struct mt_ring *ring_of_cpu(struct mt_session *s, unsigned cpu)
{
	if (cpu >= mt_live.geom.ncpu)
		return NULL;
	return mt_session_ring_g(s, &mt_live.geom, cpu);
}

#define MT_CREDS_SIZE (MT_CREDS_FIELDS * 4)

/* The fields of MT_CREDS_FORMAT ("%d" each: 4 bytes, little endian),
 * as the initial user namespace numbers them, like stap's uid() etc. */
static void write_creds(char *dst)
{
	const struct cred *c = current_cred();  /* our own: no reference needed */
	s32 v[MT_CREDS_FIELDS];

	rcu_read_lock();   /* real_parent */
	v[0] = task_ppid_nr(current);
	rcu_read_unlock();
	v[1] = from_kuid(&init_user_ns, c->uid);
	v[2] = from_kuid(&init_user_ns, c->euid);
	v[3] = from_kgid(&init_user_ns, c->gid);
	v[4] = from_kgid(&init_user_ns, c->egid);
	memcpy(dst, v, sizeof(v));
}

static void write_event(struct mt_session *s, struct mt_kmarker *m, int id,
			const struct mt_args *args, size_t payload)
{
	struct mt_event_context ctx;
	struct mt_ring_slot slot;
	struct mt_ring *r = ring_of_cpu(s, smp_processor_id());
	const struct mt_ring_geom *g = &mt_live.geom.ring;
	size_t creds = READ_ONCE(mt_live.creds) ? MT_CREDS_SIZE : 0;
	char *dst;

	if (!r)
		return;
	/* the event fits in one sub-buffer of g's, or is refused (lost) */
	if (mt_ring_reserve_core_g(r, g, MT_EVENT_PREFIX_SIZE + payload + creds, 0, 0, &slot, NULL))
		return;  /* counted as lost by the ring */
	ctx.pid = task_tgid_nr(current);
	ctx.tid = task_pid_nr(current);
	memcpy(ctx.procname, current->comm, MT_PROCNAME_MAX);
	ctx.procname[MT_PROCNAME_MAX - 1] = '\0';
	dst = mt_ring_slot_ptr_g(r, g, &slot);
	mt_event_write_prefix(dst, (u16)id, slot.ts, &ctx);
	mt_event_write_payload(&m->fmt, args, dst + MT_EVENT_PREFIX_SIZE);
	if (creds)
		write_creds(dst + MT_EVENT_PREFIX_SIZE + payload);
	mt_ring_commit_g(r, g, &slot);
}

void mt_write_hit(struct mt_kmarker *m, int event_id, va_list ap)
{
	struct mt_session *s;
	struct mt_args args;
	size_t payload;

	/* acquire: pairs with the release in mt_write_set_session */
	s = smp_load_acquire(&mt_live.session);
	if (s) {
		payload = mt_event_fetch(&m->fmt, ap, &args);
		if (mt_kmarker_has_kaddr(m) && mt_live.hide_kaddr)
			mt_hide_kaddr(m, &args);
		write_event(s, m, event_id, &args, payload);
	}
}

int mt_write_init(void)
{
	mt_live.session = NULL;
	return 0;
}
