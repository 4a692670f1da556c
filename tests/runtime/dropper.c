/*
 * dropper.c - a daemon's pattern, for agent-creds.t: started by root, it
 * opens a file only root may read, drops to nobody for good, then hits
 * a marker every 20 ms for SECONDS (printing "ready FD" first).
 *   dropper FILE SECONDS        drop (the kernel makes it not dumpable)
 *   dropper FILE SECONDS keep   stay as started (the control)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <marktap/marker.h>

int main(int argc, char **argv)
{
	int fd, n;

	if (argc < 3)
		return 2;
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (argc < 4 || strcmp(argv[3], "keep")) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)) {
			perror("dropper: cannot drop to nobody");
			return 1;
		}
	}
	printf("ready %d\n", fd);
	fflush(stdout);
	for (n = atoi(argv[2]) * 50; n > 0; n--) {
		trace_mark(tick, "n %d", n);
		usleep(20000);
	}
	return 0;
}
