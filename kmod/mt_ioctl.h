/*
 * mt_ioctl.h - the /dev/marktap interface, shared by marktap.ko and
 * runtime/marktrace/kernel.c.  Plain types only: it is included by both.
 *
 *   open("/dev/marktap")          CAP_PERFMON or CAP_SYS_ADMIN, or the group
 *                                 of module parameter gid= (all as the initial
 *                                 user namespace sees them; device mode 0660)
 *   MT_IOC_CONFIGURE  geometry -> allocate the session, total_bytes returned
 *                     (mode may carry MT_CONFIG_CREDS)
 *   MT_IOC_PATTERNS   enable patterns (globs, '\n' separated, '!' negates)
 *   mmap(0, total_bytes)          the session: struct mt_session + rings
 *   MT_IOC_START      arm the matching markers, state dump; returns #armed
 *   MT_IOC_STOP       disarm; when it returns no writer runs any more
 *   read()            the catalogue, one marker a line (see mt_main.c)
 *   close()           stops and frees the session (after munmap)
 */
#ifndef MT_IOCTL_H
#define MT_IOCTL_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <linux/types.h>   /* __u32, __u64 as the kernel's uapi has them */
#include <sys/ioctl.h>
#endif

#define MT_DEVICE_PATH "/dev/marktap"
#define MT_IOC_MAGIC 0xb7

struct mt_ioc_config {
	__u32 subbuf_size;   /* in: power of two, >= 4096 */
	__u32 num_subbuf;    /* in: power of two, >= 2 */
	__u32 mode;          /* in: enum mt_ring_mode */
	__u32 ncpu;          /* out: rings in the session (possible CPUs) */
	__u64 total_bytes;   /* out: bytes to mmap */
};

/*
 * A flag of mt_ioc_config.mode: every event of the session ends with the
 * credentials of the task that hit the marker, as the fields of
 * MT_CREDS_FORMAT appended to the marker's own format (kernel.mark
 * handlers run by marktap read uid() ppid()... from them).  Without it
 * the events are exactly the markers' and recording costs nothing more.
 */
#define MT_CONFIG_CREDS   0x100u
#define MT_CONFIG_MODE    0xffu   /* the enum mt_ring_mode part of mode */
#define MT_CREDS_FORMAT   " ctx_ppid %d ctx_uid %d ctx_euid %d ctx_gid %d ctx_egid %d"
#define MT_CREDS_FIELDS   5

#define MT_IOC_PATTERNS_MAX 1024   /* = MT_PATTERNS_MAX, NUL included */

struct mt_ioc_patterns {
	char patterns[MT_IOC_PATTERNS_MAX];
};

#define MT_IOC_CONFIGURE _IOWR(MT_IOC_MAGIC, 1, struct mt_ioc_config)
#define MT_IOC_PATTERNS  _IOW(MT_IOC_MAGIC, 2, struct mt_ioc_patterns)
#define MT_IOC_START     _IO(MT_IOC_MAGIC, 3)
#define MT_IOC_STOP      _IO(MT_IOC_MAGIC, 4)

#endif
