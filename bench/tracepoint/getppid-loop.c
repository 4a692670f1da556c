/*
 * getppid-loop.c - bench/tracepoint/run.sh's traced command: N getppid()
 * system calls (the system call itself, glibc caches nothing here, but
 * syscall() makes sure), timed on CLOCK_MONOTONIC; prints "ns_per_call X".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	struct timespec a, b;
	double ns;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("ns_per_call %.1f\n", n > 0 ? ns / (double)n : 0.0);
	return 0;
}
