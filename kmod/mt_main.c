/*
 * mt_main.c - marktap.ko: the /dev/marktap device (mt_ioctl.h).
 *
 * Every open file is a session of its own, side by side with the others:
 * a recording (MT_IOC_CONFIGURE: a vmalloc'ed area laid out as struct
 * mt_session, mt_session.c, that the consumer maps whole and drains with
 * the same ring code as for user programs) or a Lua script
 * (MT_IOC_LUA_*, mt_lua_host.c), never both; and, beside either or
 * neither, the procfs files of /proc/systemtap/NAME (MT_IOC_PROCFS_*,
 * mt_procfs.c), which poll() says marktap must answer.  A marker armed by several
 * sessions sends each hit to each of them (its list of targets,
 * mt_kmod.h).  Closing the file (after munmap: the mapping holds the
 * file) stops and frees its session.  An open file also holds the module,
 * so the module cannot go away under a reader.
 *
 * Locks: a file's own lock serialises its ioctls and release (a
 * script's load and calls may take long: they hold no one else up);
 * mt_lock, taken inside it for short steps, serialises arming (the
 * markers' lists of targets and hook references, mt_hooks.c) and the
 * group's counts.  Waiting for the hits in flight (mt_hooks_sync) is done
 * holding neither.
 *
 * What the group may hold (openers without CAP_SYS_ADMIN, as the device's
 * group and CAP_PERFMON): at most group_recordings recordings at once,
 * together at most max_bytes; scripts, mt_lua_host.c.  Root's sessions
 * are not counted, so the group cannot lock root out.
 *
 * read() returns the catalogue, one marker a line, tab separated:
 *   name  format  source | unavailable: reason  armed | disarmed
 * the format written as in markers.tsv ("fd %d filename %s", MARK_NOARGS).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "mt_kmod.h"
#include "mt_session.h"
#include "mt_ioctl.h"
#include "mt_klua.h"
#include "mt_kprobe.h"
#include "mt_procfs.h"
#include "mt_tracepoint.h"

static int mt_gid = -1;
module_param_named(gid, mt_gid, int, 0444);
MODULE_PARM_DESC(gid, "group whose members may use /dev/marktap besides root (-1: none)");

static unsigned long mt_max_bytes = 1ul << 30;
module_param_named(max_bytes, mt_max_bytes, ulong, 0644);
MODULE_PARM_DESC(max_bytes, "largest session (all rings) a consumer may allocate; "
		 "also the most the recordings of openers without CAP_SYS_ADMIN hold together");

static unsigned mt_group_recordings_max = 4;
module_param_named(group_recordings, mt_group_recordings_max, uint, 0644);
MODULE_PARM_DESC(group_recordings, "recordings openers without CAP_SYS_ADMIN may run at once "
		 "(root's are not counted)");

/* Serialises arming and the group's counts (see above). */
DEFINE_MUTEX(mt_lock);

static unsigned mt_group_recordings;   /* under mt_lock */
static u64 mt_group_record_bytes;

struct mt_file {
	struct mutex lock;    /* this file's ioctls, release */
	struct mt_rec rec;    /* its recording: rec.session once configured */
	u64 bytes;            /* allocated, page aligned */
	bool group;           /* counted in the group's recordings */
	int started;
	struct mt_lua_script *lua;   /* a Lua script loaded through this file */
	struct mt_procfs_dir *procfs;   /* its /proc/systemtap/NAME (mt_procfs.c) */
};

/*
 * Who may open the device: the whole system's events pass through it, so
 * the check is against the initial user namespace, as perf and BPF do.
 * perfmon_capable() is CAP_PERFMON or CAP_SYS_ADMIN, both tested with
 * capable(), i.e. in init_user_ns: root of a user namespace has neither.
 * The group is the gid as the initial namespace numbers it: a user who
 * maps that number onto their own group inside a namespace (gid_map)
 * does not become a member, as make_kgid(current_user_ns(), gid) let them.
 */
static bool mt_may_open(void)
{
	kgid_t group;

	if (perfmon_capable())
		return true;
	if (mt_gid < 0)
		return false;
	group = make_kgid(&init_user_ns, mt_gid);
	return gid_valid(group) && in_group_p(group);
}

static int mt_open(struct inode *inode, struct file *file)
{
	struct mt_file *f;

	if (!mt_may_open())
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	file->private_data = f;
	return 0;
}

/* Under f->lock. */
static void stop_locked(struct mt_file *f)
{
	unsigned i;

	if (!f->started)
		return;
	/*
	 * The writers stop at once on every CPU (one flag), so the trace
	 * ends at one instant for all markers; then the markers forget us.
	 */
	WRITE_ONCE(f->rec.live, 0);
	mutex_lock(&mt_lock);
	for (i = 0; i < mt_catalog_size; i++)
		mt_kmarker_disarm(mt_catalog[i], &f->rec);
	mutex_unlock(&mt_lock);
	/* after this no probe and no writer runs for us: the consumer may flush */
	mt_hooks_sync();
	smp_store_release(&f->rec.session->active, 0);
	f->started = 0;
}

static int mt_release(struct inode *inode, struct file *file)
{
	struct mt_file *f = file->private_data;

	mutex_lock(&f->lock);
	if (f->rec.session)
		stop_locked(f);
#ifdef MT_LUA
	mt_lua_release(&f->lua);
#endif
	mt_procfs_release(&f->procfs);
	mutex_unlock(&f->lock);
	if (f->group) {
		mutex_lock(&mt_lock);
		mt_group_recordings--;
		mt_group_record_bytes -= f->bytes;
		mutex_unlock(&mt_lock);
	}
	vfree(f->rec.session);
	kfree(f);
	return 0;
}

/* A recording of the group counted (under mt_lock): 0, or why not. */
static int charge_group(struct mt_file *f, u64 bytes)
{
	if (mt_group_recordings >= READ_ONCE(mt_group_recordings_max))
		return -EUSERS;
	if (mt_group_record_bytes + bytes > READ_ONCE(mt_max_bytes))
		return -E2BIG;
	mt_group_recordings++;
	mt_group_record_bytes += bytes;
	f->group = true;
	return 0;
}

static long configure(struct mt_file *f, struct file *file, struct mt_ioc_config __user *arg)
{
	struct mt_ioc_config c;
	struct mt_session *s;
	u64 bytes;
	u32 ncpu = nr_cpu_ids;
	int rc = 0;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if (f->rec.session || f->lua)
		return -EBUSY;  /* one session a file, configured once */
	if ((c.mode & MT_CONFIG_MODE) > MT_RING_OVERWRITE ||
	    (c.mode & ~(MT_CONFIG_MODE | MT_CONFIG_CREDS)))
		return -EINVAL;
	if (mt_session_geom_init(&f->rec.geom, ncpu, c.subbuf_size, c.num_subbuf,
				 c.mode & MT_CONFIG_MODE))
		return -EINVAL;
	c.total_bytes = mt_session_bytes(ncpu, c.subbuf_size, c.num_subbuf);
	bytes = PAGE_ALIGN(c.total_bytes);
	if (bytes > READ_ONCE(mt_max_bytes))
		return -E2BIG;
	if (!mt_is_root(file)) {
		mutex_lock(&mt_lock);
		rc = charge_group(f, bytes);
		mutex_unlock(&mt_lock);
		if (rc)
			return rc;
	}
	s = vmalloc_user(bytes);  /* zeroed */
	if (!s) {
		if (f->group) {
			mutex_lock(&mt_lock);
			mt_group_recordings--;
			mt_group_record_bytes -= bytes;
			mutex_unlock(&mt_lock);
			f->group = false;
		}
		return -ENOMEM;
	}
	f->bytes = bytes;
	mt_session_init(s, MT_DOMAIN_KERNEL, ncpu, c.subbuf_size, c.num_subbuf,
			c.mode & MT_CONFIG_MODE);
	f->rec.creds = !!(c.mode & MT_CONFIG_CREDS);
	smp_store_release(&f->rec.session, s);   /* after its size and layout (mt_mmap) */
	c.ncpu = ncpu;
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

static long set_patterns(struct mt_file *f, struct mt_ioc_patterns __user *arg)
{
	BUILD_BUG_ON(sizeof(arg->patterns) != sizeof(f->rec.session->patterns));
	if (!f->rec.session)
		return -ENXIO;
	if (f->started)
		return -EBUSY;
	if (copy_from_user(f->rec.session->patterns, arg->patterns, sizeof(arg->patterns)))
		return -EFAULT;
	f->rec.session->patterns[MT_PATTERNS_MAX - 1] = '\0';
	return 0;
}

/* The format m's events have in the session: its own, and the credentials'
 * fields after it when the consumer asked for them. */
static const char *session_format(const struct mt_file *f, const struct mt_kmarker *m,
				  char *buf, size_t len)
{
	if (!f->rec.creds)
		return m->recorded;
	scnprintf(buf, len, "%s%s", m->recorded, MT_CREDS_FORMAT);
	return buf;
}

static long start_recording(struct mt_file *f, struct file *file)
{
	/* under mt_lock below */
	static char format[MT_EVENT_FORMAT_MAX], patterns[MT_PATTERNS_MAX];
	struct mt_session *s = f->rec.session;
	unsigned i;
	int armed = 0;

	if (!s)
		return -ENXIO;
	if (f->started)
		return -EBUSY;
	f->rec.hide_kaddr = !mt_may_see_kaddr(file);   /* before any writer runs */
	mutex_lock(&mt_lock);
	/* the mapping is writable, and may be rewritten while we read it: we
	 * match against a copy we terminate (a torn copy is the consumer's
	 * loss: patterns it did not mean) */
	memcpy(patterns, s->patterns, sizeof(patterns));
	patterns[MT_PATTERNS_MAX - 1] = '\0';
	for (i = 0; i < mt_catalog_size; i++) {
		struct mt_kmarker *m = mt_catalog[i];
		struct mt_ktarget t = { .owner = &f->rec, .kind = MT_TARGET_REC };
		int id;

		if (!mt_kmarker_available(m) || !mt_patterns_want(patterns, m->name))
			continue;
		id = mt_session_event_id(s, m->name, session_format(f, m, format, sizeof(format)));
		if (id < 0)
			continue;
		t.id = (u32)id;
		armed += mt_kmarker_arm(m, &t);
	}
	mutex_unlock(&mt_lock);
	/*
	 * Registering hooks takes a while (each patches kernel text); the
	 * probes armed first do not record until every marker is armed, or
	 * the trace would begin with irq entries whose exits were not armed
	 * yet.  One flag starts them all; release: the recording's geometry
	 * and flags before it (mt_write_hit acquires).
	 */
	smp_store_release(&f->rec.live, 1);
	f->started = 1;
	smp_store_release(&s->active, 1);
	mt_statedump(&f->rec);
	return armed;
}

/*
 * MT_IOC_BARRIER: wait (at most a second) until the RCU callbacks queued
 * before the call have run: among them the release of every task reaped
 * before it (delayed_put_task_struct fires sched_process_free after a
 * grace period), so a session that ends when its command has been reaped
 * still sees its children's releases.  Calls coalesce: one work item
 * runs rcu_barrier() for every request made before it started.
 */
static DEFINE_SPINLOCK(mt_barrier_lock);
static u64 mt_barrier_asked, mt_barrier_done;   /* request numbers */
static DECLARE_WAIT_QUEUE_HEAD(mt_barrier_wait);

static void barrier_work(struct work_struct *w)
{
	u64 upto;

	spin_lock(&mt_barrier_lock);
	upto = mt_barrier_asked;
	spin_unlock(&mt_barrier_lock);
	rcu_barrier();
	spin_lock(&mt_barrier_lock);
	mt_barrier_done = upto;
	spin_unlock(&mt_barrier_lock);
	wake_up_all(&mt_barrier_wait);
}
static DECLARE_WORK(mt_barrier_work, barrier_work);

static bool barrier_done(u64 want)
{
	bool done;

	spin_lock(&mt_barrier_lock);
	done = mt_barrier_done >= want;
	spin_unlock(&mt_barrier_lock);
	return done;
}

static long rcu_wait(void)
{
	u64 want;
	long left;

	spin_lock(&mt_barrier_lock);
	want = ++mt_barrier_asked;
	spin_unlock(&mt_barrier_lock);
	/* pending already: its run reads mt_barrier_asked after our request;
	 * running: queued again, to run after it */
	queue_work(system_unbound_wq, &mt_barrier_work);
	left = wait_event_killable_timeout(mt_barrier_wait, barrier_done(want), HZ);
	return left > 0 ? 0 : left == 0 ? -ETIMEDOUT : left;
}

/* MT_IOC_KREAD (mt_ioctl.h): no state of the file, no lock */
static long kread(struct file *file, struct mt_ioc_kread __user *u)
{
	struct mt_ioc_kread k;
	char *buf;
	u32 got = 0;
	long rc = 0;

	if (!mt_is_root(file))
		return -EPERM;
	if (copy_from_user(&k, u, sizeof(k)))
		return -EFAULT;
	if (k.len > MT_KREAD_MAX || (k.flags & ~(MT_KREAD_STRING | MT_KREAD_TASK)))
		return -EINVAL;
	if (k.flags & MT_KREAD_TASK) {
		u64 at;
		if (k.len != sizeof(at) || k.flags != MT_KREAD_TASK)
			return -EINVAL;
		if (!k.addr || k.addr > INT_MAX)
			return -ESRCH;
		rcu_read_lock();
		at = (uintptr_t)pid_task(find_pid_ns((pid_t)k.addr, &init_pid_ns), PIDTYPE_PID);
		rcu_read_unlock();
		if (!at)
			return -ESRCH;
		if (copy_to_user((void __user *)(uintptr_t)k.buf, &at, sizeof(at)) ||
		    put_user((u32)sizeof(at), &u->got))
			return -EFAULT;
		return 0;
	}
	buf = kmalloc(MT_KREAD_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (got < k.len) {
		u64 at = k.addr + got;
		u32 chunk = min_t(u32, PAGE_SIZE - (at & (PAGE_SIZE - 1)), k.len - got);
		char *nul;

		if (copy_from_kernel_nofault(buf + got, (const void *)(uintptr_t)at, chunk)) {
			rc = -EFAULT;
			break;
		}
		nul = k.flags & MT_KREAD_STRING ? memchr(buf + got, '\0', chunk) : NULL;
		if (nul) {
			got = (u32)(nul - buf) + 1;
			break;
		}
		got += chunk;
	}
	if (got && copy_to_user((void __user *)(uintptr_t)k.buf, buf, got))
		rc = -EFAULT;
	if (put_user(got, &u->got))
		rc = -EFAULT;
	kfree(buf);
	return rc;
}

static long mt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct mt_file *f = file->private_data;
	long rc;

	if (cmd == MT_IOC_BARRIER)
		return rcu_wait();
	if (cmd == MT_IOC_KREAD)
		return kread(file, (struct mt_ioc_kread __user *)arg);
	mutex_lock(&f->lock);
	switch (cmd) {
	case MT_IOC_CONFIGURE:
		rc = configure(f, file, (struct mt_ioc_config __user *)arg);
		break;
	case MT_IOC_PATTERNS:
		rc = set_patterns(f, (struct mt_ioc_patterns __user *)arg);
		break;
	case MT_IOC_START:
		rc = start_recording(f, file);
		break;
	case MT_IOC_STOP:
		rc = f->rec.session ? 0 : -ENXIO;
		if (f->rec.session)
			stop_locked(f);
		break;
	default:
		rc = -ENOTTY;
		/* procfs files: beside any session, with or without Lua */
		if (mt_procfs_ioctl_cmd(cmd))
			rc = mt_procfs_ioctl(&f->procfs, file, cmd, arg);
#ifdef MT_LUA
		/* a Lua script: the file's session, no recording in it */
		if (_IOC_TYPE(cmd) == MT_IOC_MAGIC && _IOC_NR(cmd) >= 16)
			rc = f->rec.session ? -EBUSY : mt_lua_ioctl(&f->lua, file, cmd, arg);
#endif
	}
	mutex_unlock(&f->lock);
	return rc;
}

static int mt_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct mt_file *f = file->private_data;
	int rc = -ENXIO;

	/*
	 * No lock: mmap runs under the caller's mmap_lock, and the ioctls
	 * take the file's lock before they may fault (mmap_lock inside it).
	 * The session is published once, after its size (acquire pairs with
	 * configure's release), and freed only when the file is released,
	 * which cannot happen while mmap holds the file.
	 */
	struct mt_session *s = smp_load_acquire(&f->rec.session);

	if (s) {
		rc = -EINVAL;
		if (vma->vm_pgoff == 0 && vma->vm_end - vma->vm_start <= f->bytes)
			rc = remap_vmalloc_range(vma, s, 0);
	}
	return rc;
}

/*
 * Readable while a reader or writer of the file's procfs files waits for
 * marktap (mt_procfs.c); a file without them keeps the default (always
 * ready: read() returns the catalogue at once).  No lock: the directory
 * is published once (store-release) and freed only at release, which
 * cannot run while poll holds the file.
 */
static __poll_t mt_poll(struct file *file, poll_table *wait)
{
	struct mt_file *f = file->private_data;
	struct mt_procfs_dir *d = smp_load_acquire(&f->procfs);

	return d ? mt_procfs_poll(d, file, wait) : DEFAULT_POLLMASK;
}

static size_t list_marker(const struct mt_kmarker *m, char *buf, size_t len)
{
	char why[256];
	int avail = mt_kmarker_available(m);

	if (!avail)
		mt_kmarker_why(m, why, sizeof(why));
	return scnprintf(buf, len, "%s\t%s%s%s\t%s%s\t%s\n", m->name,
			 strcmp(m->format, " ") ? "\"" : "",
			 strcmp(m->format, " ") ? m->format : "MARK_NOARGS",
			 strcmp(m->format, " ") ? "\"" : "",
			 avail ? m->source : "unavailable: ", avail ? "" : why,
			 mt_kmarker_armed(m) ? "armed" : "disarmed");
}

static ssize_t mt_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	size_t size = 128 * 1024, used = 0;
	unsigned i;
	ssize_t rc;
	char *buf = kvmalloc(size, GFP_KERNEL);

	if (!buf)
		return -ENOMEM;
	used += scnprintf(buf, size, "# name\tformat\tsource\tstate\n");
	mutex_lock(&mt_lock);
	for (i = 0; i < mt_catalog_size; i++)
		used += list_marker(mt_catalog[i], buf + used, size - used);
	mutex_unlock(&mt_lock);
	rc = simple_read_from_buffer(ubuf, count, ppos, buf, used);
	kvfree(buf);
	return rc;
}

static const struct file_operations mt_fops = {
	.owner = THIS_MODULE,
	.open = mt_open,
	.release = mt_release,
	.read = mt_read,
	.unlocked_ioctl = mt_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = mt_mmap,
	.poll = mt_poll,
	.llseek = default_llseek,
};

static struct miscdevice mt_device = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "marktap",
	.fops = &mt_fops,
	.mode = 0660,
};

static int __init marktap_init(void)
{
	int rc;

	mt_kaddr_init();
	mt_src_kernel_init();
	mt_statedump_init();
	mutex_lock(&mt_lock);
	rc = mt_hooks_init();
	mutex_unlock(&mt_lock);
	if (rc)
		return rc;
	rc = mt_procfs_init();
	if (!rc)
		rc = misc_register(&mt_device);
	if (rc) {
		mt_procfs_exit();
		mutex_lock(&mt_lock);
		mt_hooks_exit();
		mutex_unlock(&mt_lock);
	}
	return rc;
}

static void __exit marktap_exit(void)
{
	misc_deregister(&mt_device);
	mt_procfs_exit();
	cancel_work_sync(&mt_barrier_work);
	mutex_lock(&mt_lock);
	mt_hooks_exit();
	mutex_unlock(&mt_lock);
#ifdef MT_LUA
	mt_kprobe_exit();   /* its module notifier, if a module's probe ever took it */
	mt_tracepoint_exit();   /* the same for a module's tracepoint */
#endif
}

module_init(marktap_init);
module_exit(marktap_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Marktap: the LTTng seed's kernel markers on tracepoints and kprobes");
