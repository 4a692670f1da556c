/*
 * mt_procfs.h - SystemTap's procfs files, served by marktap.ko for the
 * open file of /dev/marktap that made them (mt_ioctl.h, MT_IOC_PROCFS_*).
 *
 * A reader or writer of /proc/systemtap/NAME/PATH leaves a request with
 * the directory and sleeps; marktap, which polls its open file, takes the
 * request, runs the probe's handler on its own globals and answers; the
 * answer wakes the reader.  Nothing of the handler runs in the kernel.
 */
#ifndef MT_PROCFS_H
#define MT_PROCFS_H

#include <linux/ioctl.h>
#include <linux/poll.h>
#include "mt_ioctl.h"

struct mt_procfs_dir;
struct file;

/* /proc/systemtap, made at load (0, or -errno); removed at unload */
int mt_procfs_init(void);
void mt_procfs_exit(void);

static inline bool mt_procfs_ioctl_cmd(unsigned cmd)
{
	return _IOC_TYPE(cmd) == MT_IOC_MAGIC && _IOC_NR(cmd) >= _IOC_NR(MT_IOC_PROCFS_DIR) &&
	       _IOC_NR(cmd) <= _IOC_NR(MT_IOC_PROCFS_ANSWER);
}

/* An MT_IOC_PROCFS_* request of file, whose directory is *dirp (made by
 * MT_IOC_PROCFS_DIR, published with a store-release for poll).  Under
 * the open file's lock. */
long mt_procfs_ioctl(struct mt_procfs_dir **dirp, struct file *file, unsigned cmd,
		     unsigned long arg);
/* poll() of the open file whose directory is dir (NULL: none) */
__poll_t mt_procfs_poll(struct mt_procfs_dir *dir, struct file *file, poll_table *wait);
/* The open file is closed: the directory removed, its waiting readers
 * and writers woken with EIO first. */
void mt_procfs_release(struct mt_procfs_dir **dirp);

#endif
