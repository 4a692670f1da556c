/*
 * mt_procfs.c - SystemTap's procfs files: /proc/systemtap/NAME/PATH,
 * answered by marktap (mt_procfs.h, mt_ioctl.h).
 *
 *   /proc/systemtap                mt_procfs_top, made at load
 *     NAME/                        struct mt_procfs_dir, one per open file
 *       PATH (0444, 0222, 0666)    struct mt_procfs_entry (ops != 0)
 *       SUB/                       struct mt_procfs_entry (ops == 0)
 *
 * A read or write leaves a request (struct mt_procfs_req, the reader's
 * own) on the directory's pending list and sleeps on its answered queue;
 * marktap's MT_IOC_PROCFS_NEXT moves the oldest to the taken list and
 * copies it out, MT_IOC_PROCFS_ANSWER takes it off the list with the
 * value or error and wakes the sleepers.  A request is on a list, or
 * answered, or its owner took it off after a timeout, a signal or the
 * end: always under the directory's lock, so an answer to a request
 * whose owner left finds nothing (ENOENT), and the owner never returns
 * with its request on a list.
 *
 * Trust: the names and sizes come from the device's group, which must
 * not be able to create anything but files and directories of the
 * shapes below under /proc/systemtap, nor hold kernel memory without
 * bound.  Names are checked here (never a '/' inside a component, never
 * "." or ".."; every entry is made under its parent's proc_dir_entry, no
 * path is ever looked up); at most MT_PROCFS_ENTRIES_MAX entries a
 * directory and group_procfs_entries for the whole group; requests at
 * most MT_PROCFS_PENDING_MAX a directory, a write's bytes at most a page,
 * a value at most MT_PROCFS_VALUE_MAX, held by the reader's open file
 * and charged to the reader (GFP_KERNEL_ACCOUNT).  Every name is checked
 * against our own lists before proc_mkdir or proc_create sees it: procfs
 * warns (WARN) of a duplicate, which the group must not be able to cause.
 *
 * Lifetime: an entry's proc_ops run with procfs's use count of the entry
 * held; proc_remove waits for them and then releases the files still
 * open, so the directory outlives every read, write and release.  At the
 * end the directory is marked dead and its sleepers woken first, so that
 * the wait of proc_remove is short.
 */
#include <linux/ctype.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/proc_fs.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include "mt_kmod.h"
#include "mt_procfs.h"

static unsigned mt_group_procfs_max = 256;
module_param_named(group_procfs_entries, mt_group_procfs_max, uint, 0644);
MODULE_PARM_DESC(group_procfs_entries, "directories and files under /proc/systemtap openers "
		 "without CAP_SYS_ADMIN may hold together (root's are not counted)");

static unsigned mt_procfs_wait_ms = 5000;
module_param_named(procfs_wait_ms, mt_procfs_wait_ms, uint, 0644);
MODULE_PARM_DESC(procfs_wait_ms, "how long a reader or writer of a procfs file waits for marktap's "
		 "answer (100..60000 ms; then ETIMEDOUT)");

#define MT_PROCFS_PENDING_MAX 64   /* requests a directory holds, taken or not */

/* Under mt_procfs_lock: the directories (their names), the group's count. */
static DEFINE_MUTEX(mt_procfs_lock);
static struct proc_dir_entry *mt_procfs_top;
static LIST_HEAD(mt_procfs_dirs);
static unsigned mt_group_procfs;

struct mt_procfs_dir;

struct mt_procfs_entry {
	struct mt_procfs_dir *dir;
	struct proc_dir_entry *pde;
	u32 index;
	u32 ops;                  /* MT_PROCFS_READ | _WRITE; 0: a subdirectory */
	u32 read_max, write_max;
	char path[MT_PROCFS_PATH_MAX];
};

struct mt_procfs_dir {
	struct list_head node;    /* in mt_procfs_dirs */
	char name[MT_PROCFS_NAME_MAX];
	struct proc_dir_entry *pde;
	kuid_t uid;               /* the owner of its entries: the session's */
	kgid_t gid;
	bool group;               /* counted in mt_group_procfs */
	/* entries: added under the open file's lock, read by proc_ops
	 * through their own pointer only */
	struct mt_procfs_entry *entries[MT_PROCFS_ENTRIES_MAX];
	unsigned nentries;
	/* requests, under lock */
	struct mutex lock;
	struct list_head pending, taken;
	unsigned nrequests;       /* on either list */
	unsigned npending;        /* on pending: poll reads it once, unlocked */
	u64 last_id;
	bool dead;                /* the open file is being closed */
	wait_queue_head_t poll_wait;   /* marktap: a request came */
	wait_queue_head_t answered;    /* readers, writers: an answer came, or the end */
};

enum { MT_REQ_PENDING, MT_REQ_TAKEN, MT_REQ_ANSWERED };

struct mt_procfs_req {
	struct list_head node;
	u64 id;
	struct mt_procfs_entry *entry;
	u32 op;
	int state;                /* MT_REQ_*, under the directory's lock */
	const char *data;         /* a write's bytes */
	size_t len;
	int error;                /* the answer */
	char *reply;              /* a read's value (kvmalloc'ed by the answer) */
	size_t reply_len;
};

/* A reader's or writer's open file: the value its reads continue in. */
struct mt_procfs_open {
	struct mutex lock;
	struct mt_procfs_entry *entry;
	bool filled;
	char *value;
	size_t len;
};

/* --- names ------------------------------------------------------------ */

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, MT_PROCFS_NAME_MAX);

	if (n == 0 || n == MT_PROCFS_NAME_MAX)
		return false;
	for (; *name; name++)
		if (!isalnum(*name) && *name != '_')
			return false;
	return true;
}

/* stap's rules (translator/elab_point.c), printable ASCII only */
static bool path_ok(const char *path)
{
	size_t n = strnlen(path, MT_PROCFS_PATH_MAX);
	const char *c;

	if (n == 0 || n == MT_PROCFS_PATH_MAX || path[0] == '/' || path[n - 1] == '/')
		return false;
	for (c = path; *c; c++)
		if (*c <= ' ' || *c > '~' || (*c == '/' && c[1] == '/'))
			return false;
	for (c = path; *c; ) {
		size_t len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
		c += *c == '/';
	}
	return true;
}

/* --- the files' operations ---------------------------------------------- */

/* Leave rq with e's directory and wait for its answer: 0 or -errno. */
static int ask(struct mt_procfs_entry *e, struct mt_procfs_req *rq)
{
	struct mt_procfs_dir *d = e->dir;
	unsigned wait_ms = clamp(READ_ONCE(mt_procfs_wait_ms), 100u, 60000u);
	long left;
	int rc = 0;

	rq->entry = e;
	mutex_lock(&d->lock);
	if (d->dead)
		rc = -EIO;
	else if (d->nrequests >= MT_PROCFS_PENDING_MAX)
		rc = -EBUSY;
	else {
		rq->id = ++d->last_id;
		rq->state = MT_REQ_PENDING;
		list_add_tail(&rq->node, &d->pending);
		d->nrequests++;
		WRITE_ONCE(d->npending, d->npending + 1);
	}
	mutex_unlock(&d->lock);
	if (rc)
		return rc;
	/* wake_up takes the queue's lock: a poll that registered before it
	 * is woken, one that registers after it sees npending (mt_procfs_poll) */
	wake_up_interruptible(&d->poll_wait);
	left = wait_event_interruptible_timeout(d->answered,
						READ_ONCE(rq->state) == MT_REQ_ANSWERED || READ_ONCE(d->dead),
						msecs_to_jiffies(wait_ms));
	mutex_lock(&d->lock);
	if (rq->state == MT_REQ_ANSWERED) {
		rc = rq->error;
	} else {
		/* not answered: off its list, so that no answer finds it */
		if (rq->state == MT_REQ_PENDING)
			WRITE_ONCE(d->npending, d->npending - 1);
		list_del(&rq->node);
		d->nrequests--;
		rc = d->dead ? -EIO : left < 0 ? -EINTR : -ETIMEDOUT;
	}
	mutex_unlock(&d->lock);
	return rc;
}

static int entry_open(struct inode *inode, struct file *file)
{
	struct mt_procfs_open *o = kzalloc(sizeof(*o), GFP_KERNEL_ACCOUNT);

	if (!o)
		return -ENOMEM;
	mutex_init(&o->lock);
	o->entry = pde_data(inode);
	file->private_data = o;
	return 0;
}

static int entry_release(struct inode *inode, struct file *file)
{
	struct mt_procfs_open *o = file->private_data;

	kvfree(o->value);
	kfree(o);
	return 0;
}

/* The value of o's file, asked once an open file: its first read. */
static int fill(struct mt_procfs_open *o)
{
	struct mt_procfs_req rq = { .op = MT_PROCFS_READ };
	int rc = ask(o->entry, &rq);

	if (!rc && rq.reply_len) {
		/* the reader's copy, charged to the reader: the answer's is
		 * marktap's and goes at once */
		o->value = kvmalloc(rq.reply_len, GFP_KERNEL_ACCOUNT);
		if (o->value) {
			memcpy(o->value, rq.reply, rq.reply_len);
			o->len = rq.reply_len;
		} else {
			rc = -ENOMEM;
		}
	}
	kvfree(rq.reply);
	if (!rc)
		o->filled = true;
	return rc;
}

static ssize_t entry_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct mt_procfs_open *o = file->private_data;
	ssize_t rc = 0;

	if (!(o->entry->ops & MT_PROCFS_READ))
		return 0;   /* no read probe: nothing to read, as stap */
	if (mutex_lock_interruptible(&o->lock))
		return -EINTR;
	if (!o->filled)
		rc = fill(o);
	if (!rc)
		rc = simple_read_from_buffer(buf, count, ppos, o->value, o->len);
	mutex_unlock(&o->lock);
	return rc;
}

static ssize_t entry_write(struct file *file, const char __user *buf, size_t count, loff_t *ppos)
{
	struct mt_procfs_open *o = file->private_data;
	struct mt_procfs_req rq = { .op = MT_PROCFS_WRITE };
	size_t n = min_t(size_t, count, o->entry->write_max);
	char *data;
	int rc;

	if (!(o->entry->ops & MT_PROCFS_WRITE))
		return -EIO;   /* no write probe, as stap */
	if (!n)
		return 0;
	data = memdup_user(buf, n);   /* at most a page */
	if (IS_ERR(data))
		return PTR_ERR(data);
	rq.data = data;
	rq.len = n;
	rc = ask(o->entry, &rq);
	kvfree(rq.reply);
	kfree(data);
	if (rc)
		return rc;
	*ppos += n;
	return n;   /* a longer write goes on with the rest: a request each */
}

static const struct proc_ops mt_procfs_ops = {
	.proc_open = entry_open,
	.proc_read = entry_read,
	.proc_write = entry_write,
	.proc_lseek = default_llseek,
	.proc_release = entry_release,
};

/* --- the directory, as marktap makes it ----------------------------------- */

/* The group's count of entries raised by n (under mt_procfs_lock). */
static int charge(struct mt_procfs_dir *d, unsigned n)
{
	if (!d->group)
		return 0;
	if (mt_group_procfs + n > READ_ONCE(mt_group_procfs_max))
		return -EUSERS;
	mt_group_procfs += n;
	return 0;
}

static long make_dir(struct mt_procfs_dir **dirp, struct file *file,
		     struct mt_ioc_procfs_dir __user *arg)
{
	struct mt_ioc_procfs_dir a;
	struct mt_procfs_dir *d, *other;
	int rc = 0;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (!name_ok(a.name))
		return -EINVAL;
	if (*dirp)
		return -EBUSY;   /* one directory a file */
	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return -ENOMEM;
	strscpy(d->name, a.name, sizeof(d->name));
	d->uid = current_fsuid();
	d->gid = current_fsgid();
	d->group = !mt_is_root(file);
	mutex_init(&d->lock);
	INIT_LIST_HEAD(&d->pending);
	INIT_LIST_HEAD(&d->taken);
	init_waitqueue_head(&d->poll_wait);
	init_waitqueue_head(&d->answered);
	mutex_lock(&mt_procfs_lock);
	list_for_each_entry(other, &mt_procfs_dirs, node)
		if (!strcmp(other->name, d->name))
			rc = -EEXIST;
	if (!rc && !mt_procfs_top)
		rc = -ENOENT;    /* /proc/systemtap was not ours at load */
	if (!rc)
		rc = charge(d, 1);
	if (!rc) {
		d->pde = proc_mkdir_data(d->name, 0555, mt_procfs_top, d);
		if (d->pde) {
			proc_set_user(d->pde, d->uid, d->gid);
			list_add(&d->node, &mt_procfs_dirs);
		} else {
			rc = -ENOMEM;
			mt_group_procfs -= d->group;
		}
	}
	mutex_unlock(&mt_procfs_lock);
	if (rc) {
		kfree(d);
		return rc;
	}
	smp_store_release(dirp, d);   /* for mt_procfs_poll, which reads it unlocked */
	return 0;
}

static struct mt_procfs_entry *find_entry(struct mt_procfs_dir *d, const char *path, size_t len)
{
	unsigned i;

	for (i = 0; i < d->nentries; i++)
		if (strlen(d->entries[i]->path) == len && !memcmp(d->entries[i]->path, path, len))
			return d->entries[i];
	return NULL;
}

/* An entry of d: a subdirectory (ops 0) or a file, path's first len
 * bytes, under parent; counted for the group. */
static struct mt_procfs_entry *add_entry(struct mt_procfs_dir *d, const char *path, size_t len,
					 struct proc_dir_entry *parent, const struct mt_ioc_procfs_file *a,
					 umode_t mode, int *rc)
{
	struct mt_procfs_entry *e;
	const char *base = path + len;

	while (base > path && base[-1] != '/')
		base--;
	if (d->nentries >= MT_PROCFS_ENTRIES_MAX) {
		*rc = -ENOSPC;
		return NULL;
	}
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e) {
		*rc = -ENOMEM;
		return NULL;
	}
	memcpy(e->path, path, len);
	e->dir = d;
	e->index = d->nentries;
	if (a) {
		e->ops = a->ops;
		e->read_max = a->read_max;
		e->write_max = a->write_max;
	}
	mutex_lock(&mt_procfs_lock);
	*rc = charge(d, 1);
	mutex_unlock(&mt_procfs_lock);
	if (*rc) {
		kfree(e);
		return NULL;
	}
	/* base: the last component (path + len - base bytes, then a '/' or
	 * the end); a copy ends it */
	{
		char name[MT_PROCFS_PATH_MAX];

		memcpy(name, base, path + len - base);
		name[path + len - base] = '\0';
		e->pde = a ? proc_create_data(name, mode, parent, &mt_procfs_ops, e)
			   : proc_mkdir_data(name, 0555, parent, e);
	}
	if (!e->pde) {
		mutex_lock(&mt_procfs_lock);
		mt_group_procfs -= d->group;
		mutex_unlock(&mt_procfs_lock);
		kfree(e);
		*rc = -ENOMEM;
		return NULL;
	}
	proc_set_user(e->pde, d->uid, d->gid);
	d->entries[d->nentries++] = e;
	return e;
}

static long make_file(struct mt_procfs_dir *d, struct mt_ioc_procfs_file __user *arg)
{
	struct mt_ioc_procfs_file a;
	struct proc_dir_entry *parent;
	struct mt_procfs_entry *e;
	umode_t mode;
	size_t at;
	int rc = 0;

	if (!d)
		return -ENXIO;
	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (!path_ok(a.path) || !a.ops || (a.ops & ~(MT_PROCFS_READ | MT_PROCFS_WRITE)) ||
	    (a.umask & ~0777u) ||
	    ((a.ops & MT_PROCFS_READ) && (!a.read_max || a.read_max > MT_PROCFS_VALUE_MAX)) ||
	    ((a.ops & MT_PROCFS_WRITE) && (!a.write_max || a.write_max > MT_PROCFS_WRITE_MAX)))
		return -EINVAL;
	if (find_entry(d, a.path, strlen(a.path)))
		return -EEXIST;
	/* the subdirectories on the way, made once; a file there is in the way */
	parent = d->pde;
	for (at = strcspn(a.path, "/"); a.path[at]; at += 1 + strcspn(a.path + at + 1, "/")) {
		e = find_entry(d, a.path, at);
		if (e && e->ops)
			return -EEXIST;
		if (!e)
			e = add_entry(d, a.path, at, parent, NULL, 0, &rc);
		if (!e)
			return rc;
		parent = e->pde;
	}
	mode = ((a.ops & MT_PROCFS_READ ? 0444 : 0) | (a.ops & MT_PROCFS_WRITE ? 0222 : 0)) & ~a.umask;
	e = add_entry(d, a.path, strlen(a.path), parent, &a, S_IFREG | mode, &rc);
	return e ? e->index : rc;
}

/* --- marktap's side: requests and answers --------------------------------- */

static long next_request(struct mt_procfs_dir *d, struct mt_ioc_procfs_request __user *arg)
{
	struct mt_ioc_procfs_request q;
	struct mt_procfs_req *rq;
	char *data;
	long rc = 0;

	if (!d)
		return -ENXIO;
	if (copy_from_user(&q, arg, sizeof(q)))
		return -EFAULT;
	data = kmalloc(MT_PROCFS_WRITE_MAX, GFP_KERNEL);
	if (!data)
		return -ENOMEM;
	mutex_lock(&d->lock);
	rq = list_first_entry_or_null(&d->pending, struct mt_procfs_req, node);
	if (rq) {
		/* taken: the writer's bytes copied while its owner cannot leave */
		list_move_tail(&rq->node, &d->taken);
		rq->state = MT_REQ_TAKEN;
		WRITE_ONCE(d->npending, d->npending - 1);
		q.id = rq->id;
		q.file = rq->entry->index;
		q.op = rq->op;
		q.len = rq->op == MT_PROCFS_WRITE ? rq->len : 0;
		q.reserved = 0;
		memcpy(data, rq->data, q.len);
	}
	mutex_unlock(&d->lock);
	if (!rq)
		rc = -EAGAIN;
	else if (copy_to_user(u64_to_user_ptr(q.buf), data, q.len) || copy_to_user(arg, &q, sizeof(q)))
		rc = -EFAULT;   /* never answered: its owner times out */
	kfree(data);
	return rc;
}

static struct mt_procfs_req *find_taken(struct mt_procfs_dir *d, u64 id)
{
	struct mt_procfs_req *rq;

	list_for_each_entry(rq, &d->taken, node)
		if (rq->id == id)
			return rq;
	return NULL;
}

static long answer(struct mt_procfs_dir *d, struct mt_ioc_procfs_answer __user *arg)
{
	struct mt_ioc_procfs_answer a;
	struct mt_procfs_req *rq;
	u32 len = 0;
	char *value = NULL;

	if (!d)
		return -ENXIO;
	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.error > 0 || a.error < -MAX_ERRNO)
		return -EINVAL;
	/* the value's size: the request's file says how much is kept */
	mutex_lock(&d->lock);
	rq = find_taken(d, a.id);
	if (rq && rq->op == MT_PROCFS_READ && !a.error)
		len = min(a.len, rq->entry->read_max);
	mutex_unlock(&d->lock);
	if (!rq)
		return -ENOENT;
	if (len) {
		/* copied before the lock is taken again: a slow fault of
		 * marktap's memory holds no reader up */
		value = kvmalloc(len, GFP_KERNEL_ACCOUNT);
		if (!value)
			return -ENOMEM;
		if (copy_from_user(value, u64_to_user_ptr(a.buf), len)) {
			kvfree(value);
			return -EFAULT;
		}
	}
	mutex_lock(&d->lock);
	rq = find_taken(d, a.id);   /* its owner may have left meanwhile */
	if (rq) {
		list_del(&rq->node);
		d->nrequests--;
		rq->error = a.error;
		rq->reply = value;
		rq->reply_len = len;
		WRITE_ONCE(rq->state, MT_REQ_ANSWERED);
		value = NULL;
	}
	mutex_unlock(&d->lock);
	kvfree(value);
	if (!rq)
		return -ENOENT;
	wake_up_interruptible_all(&d->answered);
	return 0;
}

long mt_procfs_ioctl(struct mt_procfs_dir **dirp, struct file *file, unsigned cmd,
		     unsigned long arg)
{
	switch (cmd) {
	case MT_IOC_PROCFS_DIR:
		return make_dir(dirp, file, (struct mt_ioc_procfs_dir __user *)arg);
	case MT_IOC_PROCFS_FILE:
		return make_file(*dirp, (struct mt_ioc_procfs_file __user *)arg);
	case MT_IOC_PROCFS_NEXT:
		return next_request(*dirp, (struct mt_ioc_procfs_request __user *)arg);
	case MT_IOC_PROCFS_ANSWER:
		return answer(*dirp, (struct mt_ioc_procfs_answer __user *)arg);
	}
	return -ENOTTY;
}

__poll_t mt_procfs_poll(struct mt_procfs_dir *d, struct file *file, poll_table *wait)
{
	if (!d)
		return 0;
	poll_wait(file, &d->poll_wait, wait);
	return READ_ONCE(d->npending) ? EPOLLIN | EPOLLRDNORM : 0;
}

void mt_procfs_release(struct mt_procfs_dir **dirp)
{
	struct mt_procfs_dir *d = *dirp;
	unsigned i;

	if (!d)
		return;
	mutex_lock(&d->lock);
	d->dead = true;
	mutex_unlock(&d->lock);
	wake_up_interruptible_all(&d->answered);
	/* waits for the reads and writes in progress (woken above: they
	 * leave with EIO), then releases the files still open */
	proc_remove(d->pde);
	mutex_lock(&mt_procfs_lock);
	list_del(&d->node);
	if (d->group)
		mt_group_procfs -= 1 + d->nentries;
	mutex_unlock(&mt_procfs_lock);
	for (i = 0; i < d->nentries; i++)
		kfree(d->entries[i]);
	kfree(d);
	*dirp = NULL;
}

int mt_procfs_init(void)
{
	struct path path;

	/* SystemTap's runtime may have made it: then it is not ours to
	 * serve in (nor to remove), and procfs files are refused */
	if (!kern_path("/proc/systemtap", 0, &path)) {
		path_put(&path);
		pr_info("marktap: /proc/systemtap exists: procfs files will be refused\n");
		return 0;
	}
	mt_procfs_top = proc_mkdir("systemtap", NULL);
	return mt_procfs_top ? 0 : -ENOMEM;
}

void mt_procfs_exit(void)
{
	proc_remove(mt_procfs_top);   /* every directory went with its open file */
	mt_procfs_top = NULL;
}
