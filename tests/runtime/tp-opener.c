/*
 * tp-opener.c - record-tp.t's traced command: opens PATH N times with
 * openat(AT_FDCWD, PATH, O_RDONLY), from one buffer whose address it
 * prints first ("pid PID filename 0xADDR"), so that the test can pick its
 * own sys_enter_openat events out of a system-wide recording.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char path[4096];
	long i, n;

	if (argc != 3 || strlen(argv[1]) >= sizeof(path)) {
		fprintf(stderr, "usage: tp-opener PATH N\n");
		return 2;
	}
	strcpy(path, argv[1]);
	n = strtol(argv[2], NULL, 10);
	printf("pid %d filename %p\n", (int)getpid(), (void *)path);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		int fd = openat(AT_FDCWD, path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	return 0;
}
