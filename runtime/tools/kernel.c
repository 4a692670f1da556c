/*
 * kernel.c - user-space side of marktap.ko (see kernel.h and runtime/proto/mt_ioctl.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "kernel.h"
#include "mt_ioctl.h"

_Static_assert(MT_IOC_PATTERNS_MAX == MT_PATTERNS_MAX, "pattern sizes differ");

int mt_kernel_open(struct mt_kernel *k)
{
	k->session = NULL;
	k->length = 0;
	k->fd = open(MT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	return k->fd < 0 ? -errno : 0;
}

int mt_kernel_configure(struct mt_kernel *k, u32 subbuf_size, u32 num_subbuf, u32 mode)
{
	struct mt_ioc_config c = { .subbuf_size = subbuf_size, .num_subbuf = num_subbuf,
				   .mode = mode };
	void *p;

	if (ioctl(k->fd, MT_IOC_CONFIGURE, &c) < 0)
		return -errno;
	p = mmap(NULL, c.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (mt_session_check(p, c.total_bytes)) {
		munmap(p, c.total_bytes);
		return -EPROTO;  /* a module built from other sources */
	}
	k->session = p;
	k->length = c.total_bytes;
	return 0;
}

int mt_kernel_set_patterns(struct mt_kernel *k, const char *patterns)
{
	struct mt_ioc_patterns p;

	if (strlen(patterns) >= sizeof(p.patterns))
		return -ENAMETOOLONG;
	memset(&p, 0, sizeof(p));
	strcpy(p.patterns, patterns);
	return ioctl(k->fd, MT_IOC_PATTERNS, &p) < 0 ? -errno : 0;
}

int mt_kernel_start(struct mt_kernel *k)
{
	int n = ioctl(k->fd, MT_IOC_START);

	return n < 0 ? -errno : n;
}

/* The releases of the tasks reaped so far (a -c or -- command's
 * children) fire after an RCU grace period: wait for them (at most a
 * second; an older module without the barrier stops at once). */
int mt_kernel_stop(struct mt_kernel *k)
{
	ioctl(k->fd, MT_IOC_BARRIER, 0);
	return mt_kernel_stop_at_once(k);
}

int mt_kernel_stop_at_once(struct mt_kernel *k)
{
	return ioctl(k->fd, MT_IOC_STOP) < 0 ? -errno : 0;
}

int mt_kernel_flush(struct mt_kernel *k)
{
	struct timespec ts;
	mt_u64 now;
	unsigned cpu;
	int closed = 0;

	if (!k->session)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);  /* the kernel writers' clock */
	now = (mt_u64)ts.tv_sec * 1000000000ull + (mt_u64)ts.tv_nsec;
	for (cpu = 0; cpu < k->session->ncpu; cpu++)
		closed += mt_ring_flush(mt_session_ring(k->session, cpu), now);
	return closed;
}

long mt_kernel_read(struct mt_kernel *k, uint64_t addr, void *buf, size_t len, int string)
{
	struct mt_ioc_kread r = { .addr = addr, .buf = (uintptr_t)buf,
				  .len = (u32)(len > MT_KREAD_MAX ? MT_KREAD_MAX : len),
				  .flags = string ? MT_KREAD_STRING : 0 };

	if (ioctl(k->fd, MT_IOC_KREAD, &r) < 0)
		return -errno;
	return r.got;
}

int mt_kernel_task(struct mt_kernel *k, uint64_t tid, uint64_t *addr)
{
	struct mt_ioc_kread r = { .addr = tid, .buf = (uintptr_t)addr, .len = sizeof(*addr),
				  .flags = MT_KREAD_TASK };

	if (ioctl(k->fd, MT_IOC_KREAD, &r) < 0)
		return -errno;
	return r.got == sizeof(*addr) ? 0 : -EIO;
}

void mt_kernel_close(struct mt_kernel *k)
{
	if (k->session)
		munmap(k->session, k->length);
	if (k->fd >= 0)
		close(k->fd);
	k->session = NULL;
	k->fd = -1;
}

const char *mt_kernel_strerror(int err)
{
	switch (-err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return "no " MT_DEVICE_PATH ": load the kernel module first (insmod marktap.ko)";
	case EACCES:
	case EPERM:
		return MT_DEVICE_PATH ": permission denied: run as root or as a member of "
		       "the marktap group (module parameter gid=)";
	case EBUSY:
		return MT_DEVICE_PATH ": this descriptor has a session already";
	case EUSERS:
		return "the marktap group runs as many kernel recordings as marktap.ko allows "
		       "(module parameter group_recordings=; root's are not counted)";
	case EINVAL:
		return "invalid session geometry (sizes must be powers of two, "
		       "sub-buffers of at least 4k, at least 2 of them)";
	case E2BIG:
		return "session too large for the module (module parameter max_bytes=, which "
		       "also bounds the marktap group's recordings together)";
	case EPROTO:
		return MT_DEVICE_PATH ": the module's session layout differs from this marktrace's";
	}
	return strerror(-err);
}

/* "name\tformat\tsource\tstate" (see kmod/mt_main.c) */
static int parse_line(char *line, struct mt_kernel_marker *m)
{
	char *col[4];
	size_t n;
	int i;

	for (i = 0; i < 4; i++) {
		col[i] = strsep(&line, "\t");
		if (!col[i])
			return -1;
	}
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", col[0]);
	n = strlen(col[1]);
	if (!strcmp(col[1], "MARK_NOARGS"))
		strcpy(m->format, " ");
	else if (n >= 2 && col[1][0] == '"' && col[1][n - 1] == '"')
		snprintf(m->format, sizeof(m->format), "%.*s", (int)(n - 2), col[1] + 1);
	else
		return -1;
	/* the source column: how the kernel fires it, or "unavailable: WHY" */
	m->available = strncmp(col[2], MT_UNAVAILABLE, strlen(MT_UNAVAILABLE)) != 0;
	snprintf(m->source, sizeof(m->source), "%s",
		 col[2] + (m->available ? 0 : strlen(MT_UNAVAILABLE)));
	m->armed = !strcmp(col[3], "armed");
	return 0;
}

int mt_kernel_catalogue(struct mt_kernel_marker **out, size_t *count)
{
	return mt_kernel_catalogue_file(MT_DEVICE_PATH, out, count);
}

int mt_kernel_catalogue_file(const char *path, struct mt_kernel_marker **out, size_t *count)
{
	FILE *f = fopen(path, "re");
	struct mt_kernel_marker *v = NULL;
	size_t n = 0, cap = 0, len = 0;
	char *line = NULL;
	ssize_t got;
	int err = 0;

	if (!f)
		return -errno;
	while ((got = getline(&line, &len, f)) > 0) {
		if (line[got - 1] == '\n')
			line[--got] = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		if (n == cap) {
			struct mt_kernel_marker *nv;

			cap = cap ? 2 * cap : 128;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (parse_line(line, &v[n]) == 0)
			n++;
		else
			err = -EPROTO;
	}
	free(line);
	fclose(f);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*count = n;
	return 0;
}

const struct mt_kernel_marker *mt_kernel_find(const struct mt_kernel_marker *v, size_t n,
					      const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

int mt_kernel_check(const char *patterns, const struct mt_kernel_marker *v, size_t n,
		    mt_kernel_check_fn report, void *arg)
{
	const char *p = patterns;
	int usable = 0;

	/* each pattern must match a marker the module knows (an exclusion
	 * that excludes nothing is most likely misspelt) */
	while (*p) {
		size_t len = strcspn(p, "\n"), i;
		char one[MT_EVENT_NAME_MAX + 64];
		int negate;

		snprintf(one, sizeof(one), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		if (!len)
			continue;
		negate = one[0] == '!';
		for (i = 0; i < n && !mt_glob_match(one + negate, v[i].name); i++)
			;
		if (i == n)
			report(MT_KCHECK_UNKNOWN, one, NULL, arg);
	}
	for (size_t i = 0; i < n; i++) {
		if (!mt_patterns_want(patterns, v[i].name))   /* as the module decides */
			continue;
		if (v[i].available)
			usable++;
		else
			report(MT_KCHECK_UNAVAILABLE, v[i].name, v[i].source, arg);
	}
	return usable;
}
