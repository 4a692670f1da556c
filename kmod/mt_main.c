/*
 * mt_main.c - marktap.ko: the /dev/marktap device (mt_ioctl.h).
 *
 * One recording session at a time, owned by the open file that configured
 * it: a vmalloc'ed area laid out as struct mt_session (mt_session.c) that
 * the consumer maps whole and drains with the same ring code as for user
 * programs.  Closing the file (after munmap: the mapping holds the file)
 * stops and frees the session.  An open file also holds the module, so the
 * module cannot go away under a reader.
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
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "mt_kmod.h"
#include "mt_session.h"
#include "mt_ioctl.h"
#include "mt_klua.h"
#include "mt_kprobe.h"

static int mt_gid = -1;
module_param_named(gid, mt_gid, int, 0444);
MODULE_PARM_DESC(gid, "group whose members may use /dev/marktap besides root (-1: none)");

static unsigned long mt_max_bytes = 1ul << 30;
module_param_named(max_bytes, mt_max_bytes, ulong, 0644);
MODULE_PARM_DESC(max_bytes, "largest session (all rings) a consumer may allocate");

/* Serialises configuration, arming and the owner below. */
static DEFINE_MUTEX(mt_lock);

struct mt_file {
	struct mt_session *session;
	struct mt_session_geom geom;   /* its layout: the mapping's copy is the consumer's */
	u64 bytes;            /* allocated, page aligned */
	int started;
	int creds;            /* MT_CONFIG_CREDS: events end with credentials */
	struct mt_lua_script *lua;   /* a Lua script loaded through this file */
};

static struct mt_file *mt_owner;  /* the file whose session exists, if any */

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
	file->private_data = f;
	return 0;
}

static void stop_locked(struct mt_file *f)
{
	unsigned i;

	if (!f->started)
		return;
	/*
	 * Writers stop at once on every CPU (one pointer), so the trace ends
	 * at one instant for all markers; then the hooks go away.
	 */
	mt_write_set_session(NULL, NULL, 0, false);
	for (i = 0; i < mt_catalog_size; i++)
		mt_kmarker_disarm(mt_catalog[i]);
	/* after this no probe and no writer runs: the consumer may flush */
	mt_hooks_sync();
	smp_store_release(&f->session->active, 0);
	f->started = 0;
}

static int mt_release(struct inode *inode, struct file *file)
{
	struct mt_file *f = file->private_data;

	mutex_lock(&mt_lock);
	stop_locked(f);
#ifdef MT_LUA
	mt_lua_release(&f->lua);
#endif
	if (mt_owner == f)
		mt_owner = NULL;
	mutex_unlock(&mt_lock);
	vfree(f->session);
	kfree(f);
	return 0;
}

static long configure(struct mt_file *f, struct mt_ioc_config __user *arg)
{
	struct mt_ioc_config c;
	u64 bytes;
	u32 ncpu = nr_cpu_ids;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if (f->session || mt_owner)
		return -EBUSY;  /* one session, configured once */
	if ((c.mode & MT_CONFIG_MODE) > MT_RING_OVERWRITE ||
	    (c.mode & ~(MT_CONFIG_MODE | MT_CONFIG_CREDS)))
		return -EINVAL;
	if (mt_session_geom_init(&f->geom, ncpu, c.subbuf_size, c.num_subbuf,
				 c.mode & MT_CONFIG_MODE))
		return -EINVAL;
	c.total_bytes = mt_session_bytes(ncpu, c.subbuf_size, c.num_subbuf);
	bytes = PAGE_ALIGN(c.total_bytes);
	if (bytes > mt_max_bytes)
		return -E2BIG;
	f->session = vmalloc_user(bytes);  /* zeroed */
	if (!f->session)
		return -ENOMEM;
	f->bytes = bytes;
	mt_session_init(f->session, MT_DOMAIN_KERNEL, ncpu, c.subbuf_size, c.num_subbuf,
			c.mode & MT_CONFIG_MODE);
	f->creds = !!(c.mode & MT_CONFIG_CREDS);
	mt_owner = f;
	c.ncpu = ncpu;
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

static long set_patterns(struct mt_file *f, struct mt_ioc_patterns __user *arg)
{
	BUILD_BUG_ON(sizeof(arg->patterns) != sizeof(f->session->patterns));
	if (!f->session)
		return -ENXIO;
	if (f->started)
		return -EBUSY;
	if (copy_from_user(f->session->patterns, arg->patterns, sizeof(arg->patterns)))
		return -EFAULT;
	f->session->patterns[MT_PATTERNS_MAX - 1] = '\0';
	return 0;
}

/* The format m's events have in the session: its own, and the credentials'
 * fields after it when the consumer asked for them. */
static const char *session_format(const struct mt_file *f, const struct mt_kmarker *m,
				  char *buf, size_t len)
{
	if (!f->creds)
		return m->recorded;
	scnprintf(buf, len, "%s%s", m->recorded, MT_CREDS_FORMAT);
	return buf;
}

static long start(struct mt_file *f, struct file *file)
{
	/* under mt_lock */
	static char format[MT_EVENT_FORMAT_MAX], patterns[MT_PATTERNS_MAX];
	struct mt_session *s = f->session;
	unsigned i;
	int armed = 0;

	if (!s)
		return -ENXIO;
	if (f->started)
		return -EBUSY;
	/* the mapping is writable, and may be rewritten while we read it: we
	 * match against a copy we terminate (a torn copy is the consumer's
	 * loss: patterns it did not mean) */
	memcpy(patterns, s->patterns, sizeof(patterns));
	patterns[MT_PATTERNS_MAX - 1] = '\0';
	for (i = 0; i < mt_catalog_size; i++) {
		struct mt_kmarker *m = mt_catalog[i];
		int id;

		if (!mt_kmarker_available(m) || !mt_patterns_want(patterns, m->name))
			continue;
		id = mt_session_event_id(s, m->name, session_format(f, m, format, sizeof(format)));
		if (id >= 0)
			armed += mt_kmarker_arm(m, mt_target_event(id));
	}
	/*
	 * Registering hooks takes a while (each patches kernel text); the
	 * probes armed first do not record until every marker is armed, or
	 * the trace would begin with irq entries whose exits were not armed
	 * yet.  One pointer starts them all.
	 */
	mt_write_set_session(s, &f->geom, f->creds, !mt_may_see_kaddr(file));
	f->started = 1;
	smp_store_release(&s->active, 1);
	mt_statedump();
	return armed;
}

static long mt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct mt_file *f = file->private_data;
	long rc;

	mutex_lock(&mt_lock);
	switch (cmd) {
	case MT_IOC_CONFIGURE:
		rc = configure(f, (struct mt_ioc_config __user *)arg);
		break;
	case MT_IOC_PATTERNS:
		rc = set_patterns(f, (struct mt_ioc_patterns __user *)arg);
		break;
	case MT_IOC_START:
		rc = start(f, file);
		break;
	case MT_IOC_STOP:
		rc = f->session ? 0 : -ENXIO;
		stop_locked(f);
		break;
	default:
		rc = -ENOTTY;
#ifdef MT_LUA
		/* Lua scripts: the file owns the device, no session meanwhile */
		if (_IOC_TYPE(cmd) == MT_IOC_MAGIC && _IOC_NR(cmd) >= 16) {
			rc = -EBUSY;
			if (f->session || (mt_owner && mt_owner != f))
				break;
			rc = mt_lua_ioctl(&f->lua, file, cmd, arg);
			if (f->lua)
				mt_owner = f;
		}
#endif
	}
	mutex_unlock(&mt_lock);
	return rc;
}

static int mt_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct mt_file *f = file->private_data;
	int rc = -ENXIO;

	mutex_lock(&mt_lock);
	if (f->session) {
		rc = -EINVAL;
		if (vma->vm_pgoff == 0 && vma->vm_end - vma->vm_start <= f->bytes)
			rc = remap_vmalloc_range(vma, f->session, 0);
	}
	mutex_unlock(&mt_lock);
	return rc;
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
	mt_write_init();
	mt_src_kernel_init();
	mt_statedump_init();
	mutex_lock(&mt_lock);
	rc = mt_hooks_init();
	mutex_unlock(&mt_lock);
	if (rc)
		return rc;
	return misc_register(&mt_device);
}

static void __exit marktap_exit(void)
{
	misc_deregister(&mt_device);
	mutex_lock(&mt_lock);
	mt_hooks_exit();
	mutex_unlock(&mt_lock);
#ifdef MT_LUA
	mt_kprobe_exit();   /* its module notifier, if a module's probe ever took it */
#endif
}

module_init(marktap_init);
module_exit(marktap_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Marktap: the LTTng seed's kernel markers on tracepoints and kprobes");
