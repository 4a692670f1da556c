/*
 * mt_write.c - the recorder's writer: one marker hit into the current
 * CPU's ring.
 *
 * The dispatcher (mt_dispatch.c) calls it for a hit of a marker armed with
 * an event id of a recording (struct mt_rec, one per open file that
 * configured one: several record side by side, each into its own
 * rings).  The ring is the shared core's (mt_ring.c), lock-free: a
 * reservation is a compare-and-swap on write_pos, so interrupts and NMIs
 * nesting on the same CPU simply reserve after us.  The dispatcher
 * disables preemption before we pick the CPU's ring and enables it after
 * the commit, so we cannot migrate to another CPU half way; it also makes
 * the whole write an RCU-sched read-side section, which mt_hooks_sync()
 * waits for when recording stops.
 *
 * The session area is mapped writable into the consumer, which must write
 * read_pos and may write anything else at any moment: every address we
 * write is computed from the recording's own copy of the geometry (the
 * ring's, the event's, its sub-buffer control's), and positions read from
 * the ring are masked by it (mt_ring.h), so a consumer scribbling over the
 * headers loses its own events, nothing else.
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

static struct mt_ring *ring_of_cpu(struct mt_rec *r, unsigned cpu)
{
	if (cpu >= r->geom.ncpu)
		return NULL;
	return mt_session_ring_g(r->session, &r->geom, cpu);
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

static void write_event(struct mt_rec *rec, struct mt_kmarker *m, u32 id,
			const struct mt_args *args, size_t payload)
{
	struct mt_event_context ctx;
	struct mt_ring_slot slot;
	struct mt_ring *r = ring_of_cpu(rec, smp_processor_id());
	const struct mt_ring_geom *g = &rec->geom.ring;
	size_t creds = rec->creds ? MT_CREDS_SIZE : 0;
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


void mt_write_hit(struct mt_rec *r, struct mt_kmarker *m, u32 event_id, va_list ap)
{
	struct mt_args args;
	size_t payload;

	/* acquire: pairs with the release that starts r (mt_main.c), after
	 * which its geometry and flags stay as they are until it is freed */
	if (!smp_load_acquire(&r->live))
		return;
	payload = mt_event_fetch(&m->fmt, ap, &args);
	if (mt_kmarker_has_kaddr(m) && r->hide_kaddr)
		mt_hide_kaddr(m, &args);
	write_event(r, m, event_id, &args, payload);
}
