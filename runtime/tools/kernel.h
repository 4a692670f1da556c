/*
 * kernel.h - user-space side of marktap.ko: a recording session in the
 * kernel, and the kernel marker catalogue.
 *
 * A kernel session is a struct mt_session like a user one, vmalloc'ed by
 * the module and mapped from /dev/marktap; the consumer drains its rings
 * with the same code (mt_ring_get_packet / mt_ring_put_packet) and, after
 * mt_kernel_stop(), closes the open sub-buffers with mt_ring_flush.
 *
 *   struct mt_kernel k;
 *   mt_kernel_open(&k);                          // root or group marktap
 *   mt_kernel_configure(&k, 1 << 20, 4, MT_RING_DISCARD);  // + mmap
 *                     // (| MT_CONFIG_CREDS: events end with credentials)
 *   mt_kernel_set_patterns(&k, "kernel_*\n!kernel_irq_*");
 *   n = mt_kernel_start(&k);                     // markers armed, state dump
 *   ... consume k.session ...
 *   mt_kernel_stop(&k);                          // no writer runs after this
 *   mt_kernel_flush(&k); ... drain ...
 *   mt_kernel_close(&k);                         // munmap, the module frees
 *
 * Every function returns 0 (start: the number of markers armed) or a
 * negative errno; mt_kernel_strerror() says what to do about it.
 */
#ifndef MT_KERNEL_H
#define MT_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include "mt_session.h"

struct mt_kernel {
	int fd;
	struct mt_session *session;  /* the mapping, after configure */
	size_t length;               /* its length */
};

int mt_kernel_open(struct mt_kernel *k);
int mt_kernel_configure(struct mt_kernel *k, u32 subbuf_size, u32 num_subbuf, u32 mode);
/* Globs separated by '\n', "!GLOB" excludes, "" records every marker. */
int mt_kernel_set_patterns(struct mt_kernel *k, const char *patterns);
int mt_kernel_start(struct mt_kernel *k);
/* Stop, after the releases of the tasks reaped so far (their events fire
 * an RCU grace period later: waited for, a second at most); at once for
 * a session a signal ends. */
int mt_kernel_stop(struct mt_kernel *k);
int mt_kernel_stop_at_once(struct mt_kernel *k);
/* After stop: close every ring's open sub-buffer; how many were closed. */
int mt_kernel_flush(struct mt_kernel *k);
void mt_kernel_close(struct mt_kernel *k);
/* Kernel memory (MT_IOC_KREAD, root's): len bytes at addr into buf, or
 * with string up to its NUL; the bytes copied, or a negative errno
 * (-EFAULT: unreadable; -EPERM: not root). */
long mt_kernel_read(struct mt_kernel *k, uint64_t addr, void *buf, size_t len, int string);
/* The task_struct address of thread id tid into *addr: 0, or a negative
 * errno (-ESRCH for no such task; MT_KREAD_TASK) */
int mt_kernel_task(struct mt_kernel *k, uint64_t tid, uint64_t *addr);
/* A message for err as returned above ("load marktap.ko first"...). */
const char *mt_kernel_strerror(int err);

/* One line of the catalogue (marktrace list --kernel). */
struct mt_kernel_marker {
	char name[MT_EVENT_NAME_MAX];
	char format[MT_EVENT_FORMAT_MAX];   /* as the catalogue has it: MARK_NOARGS is " " */
	char source[512];                   /* how the kernel fires it, or why it cannot */
	int available, armed;
};

/* How the device's source column starts for an unavailable marker. */
#define MT_UNAVAILABLE "unavailable: "

/* The catalogue into *out (malloc'ed, *n entries; free it).  0 or -errno.
 * _file: read from path (a copy of the device's text) instead. */
int mt_kernel_catalogue(struct mt_kernel_marker **out, size_t *n);
int mt_kernel_catalogue_file(const char *path, struct mt_kernel_marker **out, size_t *n);
/* The entry of that name, or NULL. */
const struct mt_kernel_marker *mt_kernel_find(const struct mt_kernel_marker *v, size_t n,
					      const char *name);

/*
 * Enable patterns (as for mt_kernel_set_patterns) against the catalogue:
 * report(MT_KCHECK_UNKNOWN, pattern, NULL) for each pattern that names no
 * marker of it (an exclusion too: "!GLOB"), report(MT_KCHECK_UNAVAILABLE, name, why) for each marker
 * they take that this kernel cannot provide.  Returns how many markers
 * they take that can be armed.
 */
enum { MT_KCHECK_UNKNOWN, MT_KCHECK_UNAVAILABLE };
typedef void (*mt_kernel_check_fn)(int what, const char *name, const char *why, void *arg);
int mt_kernel_check(const char *patterns, const struct mt_kernel_marker *v, size_t n,
		    mt_kernel_check_fn report, void *arg);

#endif
