/*
 * mt_write.c - the kernel writer: one marker hit into the current CPU's ring.
 *
 * The ring is the shared core's (mt_ring.c), lock-free: a reservation is a
 * compare-and-swap on write_pos, so interrupts and NMIs nesting on the same
 * CPU simply reserve after us.  Preemption is disabled from the moment we
 * pick the CPU's ring until the commit, so we cannot migrate to another CPU
 * half way; it also makes the whole write an RCU-sched read-side section,
 * which mt_hooks_sync() waits for when recording stops.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/smp.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_session.h"
#include "mt_ioctl.h"
#include "mt_lua.h"

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
 * Kernel addresses defeat KASLR, and page frame numbers tell physical
 * addresses (/proc/PID/pagemap hides them without CAP_SYS_ADMIN).  A
 * session or script whose opener and caller lack CAP_SYSLOG in the
 * initial namespace (what /proc/kallsyms asks) gets, in their place, the
 * upper 32 bits of a keyed hash (the key drawn at module load), the way
 * printk's %p shows pointers: equal values stay equal within a load, so
 * counts per lock, socket or page still work.  Hashed: %p and #p fields,
 * and fields named data or address (timers' and tasklets' data, a
 * fault's address), when they hold a kernel address (the high half);
 * NULL and user addresses pass: the device's group sees every process's
 * events anyway.  Fields named pfn: always.
 */
static siphash_key_t mt_kaddr_key;

void mt_kaddr_fields(struct mt_kmarker *m)
{
	unsigned k;

	m->kaddr_mask = m->pfn_mask = 0;
	for (k = 0; k < m->fmt.nfields; k++) {
		const struct mt_field *f = &m->fmt.fields[k];

		if (f->store != MT_ST_INT || f->size != 8)
			continue;
		if (f->is_pointer || !strcmp(f->name, "data") || !strcmp(f->name, "address"))
			m->kaddr_mask |= 1u << k;
		else if (!strcmp(f->name, "pfn"))
			m->pfn_mask |= 1u << k;
	}
}

bool mt_may_see_kaddr(struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_SYSLOG) &&
	       ns_capable_noaudit(&init_user_ns, CAP_SYSLOG);
}

void mt_hide_kaddr(const struct mt_kmarker *m, struct mt_args *a)
{
	unsigned k;

	for (k = 0; k < m->fmt.nfields; k++) {
		u64 v = a->v[k].u;

		if (((m->kaddr_mask >> k) & 1 && (s64)v < 0) || ((m->pfn_mask >> k) & 1 && v))
			a->v[k].u = siphash_1u64(v, &mt_kaddr_key) >> 32;
	}
}

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

void mt_kmarker_fire(struct mt_kmarker *m, ...)
{
	struct mt_session *s;
	struct mt_args args;
	size_t payload;
	va_list ap;
	int id = READ_ONCE(m->id);

	if (id < 0)
		return;
	preempt_disable_notrace();
#ifdef MT_LUA
	if (id >= MT_LUA_ID_BASE) {   /* bound to a Lua handler (mt_lua.h) */
		/* a handler that reads no value (c[execname()]++) needs none */
		if (m->lua_values) {
			va_start(ap, m);
			mt_event_fetch(&m->fmt, ap, &args);
			va_end(ap);
		}
		mt_lua_fire(m, id - MT_LUA_ID_BASE, &args);   /* hides addresses itself */
		preempt_enable_notrace();
		return;
	}
#endif
	/* acquire: pairs with the release in mt_write_set_session */
	s = smp_load_acquire(&mt_live.session);
	if (s) {
		va_start(ap, m);
		payload = mt_event_fetch(&m->fmt, ap, &args);
		va_end(ap);
		if (mt_kmarker_has_kaddr(m) && mt_live.hide_kaddr)
			mt_hide_kaddr(m, &args);
		write_event(s, m, id, &args, payload);
	}
	preempt_enable_notrace();
}

int mt_write_init(void)
{
	mt_live.session = NULL;
	get_random_bytes(&mt_kaddr_key, sizeof(mt_kaddr_key));
	return 0;
}
