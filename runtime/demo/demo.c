/*
 * demo.c - an instrumented program: a tiny "file server" loop with markers.
 *   marktap-demo [ROUNDS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <marktap/marker.h>

static const char *files[] = { "/etc/hostname", "/etc/passwd", "/nonexistent", "/etc/os-release" };

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3, r;
	unsigned i;

	trace_mark(demo_start, "rounds %d", rounds);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			char buf[512];
			int fd = open(files[i], O_RDONLY);
			ssize_t n = 0;

			trace_mark(fs_open, "fd %d filename %s", fd, files[i]);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf));
			trace_mark(fs_read, "fd %u count %zu", (unsigned)fd, (size_t)(n > 0 ? n : 0));
			close(fd);
			trace_mark(fs_close, "fd %u", (unsigned)fd);
		}
		trace_mark(demo_round, "round %d elapsed_ns #8u%llu ip #p%lu", r,
			   (unsigned long long)r * 1000, (unsigned long)(void *)main);
		usleep(1000);
	}
	trace_mark(demo_end, MARK_NOARGS);
	printf("marktap-demo: %d rounds done\n", rounds);
	return 0;
}
