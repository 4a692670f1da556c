/*
 * ctf_open.c - find the CTF traces under a directory (ours and LTTng's,
 * nested as lttng and marktrace write them), read each one's metadata
 * (parsed by ctf_tsdl.c) and map its stream files (read by ctf_read.c),
 * opening only regular files, and links only where their owner is ours
 * or root's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctf_int.h"

#define MAX_DEPTH   32          /* directory nesting */
/* a trace's metadata is read whole: the largest one taken */
#define CTF_METADATA_MAX (64ull << 20)

/* ---- finding traces on disk ---- */

/*
 * A symbolic link in a trace directory is followed only if it is ours or
 * root's.  The directory may be another user's: a link of theirs to a
 * file only we may read (root's own kernel trace, /etc/shadow) would have
 * us read it for them -- into an export they get back, or as the bytes
 * quoted in an error.  The flags to open path with (O_NOFOLLOW where it
 * was no link: one put there after this look fails to open), or -1 with
 * err set.
 */
static int link_flags(const char *path, struct ctf_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
		return O_NOFOLLOW;
	if (st.st_uid == 0 || st.st_uid == geteuid())
		return 0;
	ctf_set_err(err, "%s: a symbolic link of user %u, not followed (copy what it points to)",
		    path, (unsigned)st.st_uid);
	return -1;
}

/* Without /proc (a chroot): the path again, not as a link, never
 * waiting, and kept only if it is the inode checked.  A device node put
 * in its place meanwhile would be opened: the one window left, and only
 * where /proc is not mounted. */
static int open_without_proc(const char *path, const struct stat *st)
{
	struct stat again;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);

	if (fd >= 0 && (fstat(fd, &again) < 0 || again.st_dev != st->st_dev ||
			again.st_ino != st->st_ino)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

int ctf_open_regular(const char *path, int flags, uint64_t max, struct stat *st)
{
	char self[32];
	int pfd, fd, e = 0;

	/* O_PATH runs no open of the file's own: a FIFO waits for no
	 * writer, a device's driver is not called */
	pfd = open(path, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW));
	if (pfd < 0)
		return -1;
	if (fstat(pfd, st) < 0)
		e = errno;
	else if (S_ISREG(st->st_mode) && (uint64_t)st->st_size > max)
		e = EFBIG;
	if (e || !S_ISREG(st->st_mode)) {
		close(pfd);
		errno = e;
		return e ? -1 : -2;
	}
	/* the descriptor reopened for reading: the inode checked is the
	 * inode read, whatever the path names by now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		fd = open_without_proc(path, st);
	e = errno;
	close(pfd);
	errno = e;
	return fd;
}

const char *ctf_file_kind(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return "a directory";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	default: return "not a regular file";
	}
}

/* ctf_open_regular's failure, said in err. */
static void open_failed(const char *path, int rc, const struct stat *st, uint64_t max,
			struct ctf_err *err)
{
	if (rc == -2)
		ctf_set_err(err, "%s: %s, not a regular file: not read", path,
			    ctf_file_kind(st->st_mode));
	else if (errno == EFBIG)
		ctf_set_err(err, "%s: %llu bytes, more than the reader takes (%llu MiB)", path,
			    (unsigned long long)st->st_size, (unsigned long long)(max >> 20));
	else
		ctf_set_err(err, "%s: %s", path, strerror(errno));
}

static int read_file(const char *path, char **text, size_t *len, struct ctf_err *err)
{
	int flags = link_flags(path, err), fd;
	struct stat st;
	size_t n = 0;
	char *buf;

	if (flags < 0)
		return -1;   /* said by link_flags */
	fd = ctf_open_regular(path, flags, CTF_METADATA_MAX, &st);
	if (fd < 0) {
		open_failed(path, fd, &st, CTF_METADATA_MAX, err);
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ctf_set_err(err, "%s: %llu bytes: out of memory", path, (unsigned long long)st.st_size);
		close(fd);
		return -1;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ctf_set_err(err, "%s: %s", path, strerror(errno));
			close(fd);
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

static int map_file(const char *path, const unsigned char **data, size_t *size, struct ctf_err *err)
{
	int flags = link_flags(path, err), fd;
	struct stat st;
	void *m;

	if (flags < 0)
		return -1;   /* said by link_flags */
	fd = ctf_open_regular(path, flags, SIZE_MAX, &st);
	if (fd < 0) {
		open_failed(path, fd, &st, SIZE_MAX, err);
		return -1;
	}
	*size = (size_t)st.st_size;
	*data = NULL;
	if (st.st_size > 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			ctf_set_err(err, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
		*data = m;
	}
	close(fd);
	return 0;
}

static void *grow(void *array, unsigned n, size_t elem)
{
	if (n % 16 == 0) {
		array = realloc(array, (n + 16) * elem);
		if (!array)
			abort();
	}
	return array;
}

static int stream_file_name(const struct dirent *d)
{
	return d->d_name[0] != '.' && strcmp(d->d_name, "metadata");
}

static char *join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 2);

	if (!s)
		abort();
	memcpy(s, a, na);
	s[na] = '/';
	memcpy(s + na + 1, b, nb + 1);
	if (na && a[na - 1] == '/')
		memmove(s + na, s + na + 1, nb + 1);
	return s;
}

static int open_trace(struct ctf_set *set, const char *dir, const char *rel, struct ctf_err *err)
{
	char *mpath = join(dir, "metadata"), *text;
	struct dirent **names;
	struct ctf_trace *t;
	size_t len;
	int n, i, rc = 0;

	if (read_file(mpath, &text, &len, err)) {
		free(mpath);
		return -1;
	}
	t = ctf_trace_parse(mpath, rel, text, len, err);
	free(text);
	free(mpath);
	if (!t)
		return -1;
	set->traces = grow(set->traces, set->ntraces, sizeof(*set->traces));
	set->traces[set->ntraces++] = t;
	n = scandir(dir, &names, stream_file_name, versionsort);
	if (n < 0) {
		ctf_set_err(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char *path = join(dir, names[i]->d_name);
		const unsigned char *data;
		struct stat st;
		size_t size;

		if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (map_file(path, &data, &size, err) == 0) {
				struct ctf_stream *s = ctf_stream_new(t, path, data, size);
				s->index = set->nstreams;
				set->streams = grow(set->streams, set->nstreams, sizeof(*set->streams));
				set->streams[set->nstreams++] = s;
			} else {
				rc = -1;
			}
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

static int is_dir(const char *path, const struct dirent *d)
{
	struct stat st;

	if (d->d_type == DT_DIR)
		return 1;
	if (d->d_type != DT_UNKNOWN && d->d_type != DT_LNK)
		return 0;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int not_dot(const struct dirent *d)
{
	return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

/* Where the traces found go: opened into set, or their names listed. */
struct found {
	struct ctf_set *set;    /* NULL: only list */
	char **names;           /* relative names, "" for dir itself */
	unsigned n;
};

static int scan(struct found *f, const char *dir, const char *rel, unsigned depth, struct ctf_err *err)
{
	char *mpath = join(dir, "metadata");
	struct dirent **names;
	struct stat st;
	int n, i, rc = 0, has_metadata;

	has_metadata = stat(mpath, &st) == 0 && S_ISREG(st.st_mode);
	free(mpath);
	if (has_metadata && f->set)
		return open_trace(f->set, dir, *rel ? rel : ".", err);
	if (has_metadata) {
		f->names = grow(f->names, f->n, sizeof(*f->names));
		f->names[f->n] = strdup(rel);
		if (!f->names[f->n])
			abort();
		f->n++;
		return 0;
	}
	if (depth > MAX_DEPTH)
		return 0;
	n = scandir(dir, &names, not_dot, versionsort);
	if (n < 0 && depth > 0 && (errno == ENOENT || errno == ENOTDIR))
		return 0;   /* gone while the walk went (a busy /tmp): no trace in it */
	if (n < 0) {
		ctf_set_err(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char *path = join(dir, names[i]->d_name);
		if (!rc && is_dir(path, names[i])) {
			char *sub = *rel ? join(rel, names[i]->d_name) : strdup(names[i]->d_name);
			rc = link_flags(path, err) < 0 ? -1 : scan(f, path, sub, depth + 1, err);
			free(sub);
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

static int check_dir(const char *dir, struct ctf_err *err)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		ctf_set_err(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		ctf_set_err(err, "%s: not a directory (give the trace directory)", dir);
		return -1;
	}
	return 0;
}

int ctf_open(struct ctf_set *set, const char *dir, struct ctf_err *err)
{
	struct found f = { set, NULL, 0 };

	memset(set, 0, sizeof(*set));
	if (check_dir(dir, err))
		return -1;
	if (scan(&f, dir, "", 0, err)) {
		ctf_close(set);
		return -1;
	}
	if (!set->ntraces) {
		ctf_set_err(err, "%s: no CTF trace in it (no folder under it holds a 'metadata' file)", dir);
		ctf_close(set);
		return -1;
	}
	return 0;
}

/*
 * Are the traces found one recording?  One trace, or traces under the
 * directory's kernel/ and ust/ folders only: `marktrace record --kernel`
 * with a command, and an LTTng session's output (ust/uid/0/64-bit,
 * ust/pid/..., kernel), both a recording of one time on one clock.
 */
static int one_recording(const struct found *f)
{
	unsigned i;

	if (f->n <= 1)
		return 1;
	for (i = 0; i < f->n; i++) {
		size_t k = strcspn(f->names[i], "/");
		if (!((k == 6 && !strncmp(f->names[i], "kernel", 6)) ||
		      (k == 3 && !strncmp(f->names[i], "ust", 3))))
			return 0;
	}
	return 1;
}

int ctf_open_recording(struct ctf_set *set, const char *dir, struct ctf_err *err)
{
	struct found f = { NULL, NULL, 0 };
	unsigned i;
	int one;

	memset(set, 0, sizeof(*set));
	if (check_dir(dir, err) || scan(&f, dir, "", 0, err) < 0) {
		for (i = 0; i < f.n; i++)
			free(f.names[i]);
		free(f.names);
		return -1;
	}
	one = one_recording(&f);
	if (!one) {
		size_t len = 0;
		len += (size_t)snprintf(err->msg, sizeof(err->msg),
					"%s is not one trace: %u traces under it (", dir, f.n);
		for (i = 0; i < f.n && i < 4 && len < sizeof(err->msg); i++)
			len += (size_t)snprintf(err->msg + len, sizeof(err->msg) - len, "%s%s",
						i ? ", " : "", f.names[i]);
		if (len < sizeof(err->msg))
			snprintf(err->msg + len, sizeof(err->msg) - len, "%s)",
				 f.n > 4 ? ", ..." : "");
	}
	for (i = 0; i < f.n; i++)
		free(f.names[i]);
	free(f.names);
	if (!one)
		return -2;
	return ctf_open(set, dir, err);
}

void ctf_close(struct ctf_set *set)
{
	unsigned i;

	for (i = 0; i < set->nstreams; i++) {
		struct ctf_stream *s = set->streams[i];
		if (s->size)
			munmap((void *)s->base, s->size);
		ctf_stream_free(s);
	}
	for (i = 0; i < set->ntraces; i++)
		ctf_trace_free(set->traces[i]);
	free(set->streams);
	free(set->traces);
	free(set->heap);
	memset(set, 0, sizeof(*set));
}
