/*
 * klua.c - Lua scripts in marktap.ko, from the kernel tests (in the guest).
 *
 *   klua load [OPTIONS] SCRIPT       load only: "load: ok N probes" or
 *                                    "load: error (errno): MESSAGE"
 *   klua run [OPTIONS] SCRIPT [CMD...]
 *        load and arm SCRIPT, run CMD (if any) while draining the
 *        handlers' output every 20 ms, stop; then call the script's global
 *        finish(cpu) in every CPU's state, drain, and print
 *        "klua: runs=R skipped=S errors=E lost=L exit=X ncpu=N peak=P failed=F"
 *        When a handler calls exit() or fails, CMD gets SIGTERM.
 *        "klua: runs=R skipped=S errors=E lost=L exit=X ncpu=N peak=P failed=F
 *         maxrun_us=H maxcall_us=C" (the longest handler run, the longest call)
 *   OPTIONS  -a ARENA_KIB  -r RING_KIB (output ring)  -m MAXACTION  -s MAXSTRINGLEN
 *            -t RUN_US (a handler's time bound)  -w WAIT_US (for a busy state)
 *            -O (no overload guard: STP_NO_OVERLOAD)
 *            -o UID:GID  open the device as that user (group GID), then
 *                        load and run as ourselves: a descriptor another
 *                        user opened and handed over
 *
 * Output is written CPU by CPU as drained (each CPU's in order).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "mt_ioctl.h"

static int fd = -1;
static unsigned ncpu;

/* The device opened with effective ids UID:GID (only that group), then
 * our own ids back: the file keeps the opener's credentials. */
static int open_as(const char *ids)
{
	unsigned uid, gid;
	gid_t g;
	int d, e;

	if (sscanf(ids, "%u:%u", &uid, &gid) != 2) {
		errno = EINVAL;
		return -1;
	}
	g = (gid_t)gid;
	if (setgroups(1, &g) || setegid(g) || seteuid(uid))
		return -1;
	d = open(MT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	e = errno;
	if (seteuid(0) || setegid(0) || setgroups(0, NULL))
		return -1;
	errno = e;
	return d;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, k;

	if (!f) {
		perror(path);
		exit(2);
	}
	do {
		if (n + 4096 > cap)
			buf = realloc(buf, cap = 2 * cap + 4096);
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k > 0);
	fclose(f);
	*len = n;
	return buf;
}

static void drain(void)
{
	static char buf[65536];

	for (unsigned cpu = 0; cpu < ncpu; cpu++) {
		struct mt_ioc_lua_output o = { .buf = (uintptr_t)buf, .size = sizeof(buf), .cpu = cpu };
		long n;

		while ((n = ioctl(fd, MT_IOC_LUA_OUTPUT, &o)) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
	}
	fflush(stdout);
}

static int stats(struct mt_ioc_lua_stats *st)
{
	return ioctl(fd, MT_IOC_LUA_STATS, st);
}

int main(int argc, char **argv)
{
	struct mt_ioc_lua_load ld;
	struct mt_ioc_lua_stats st;
	struct mt_ioc_lua_call call;
	const char *mode;
	char *src;
	size_t len;
	pid_t child = -1;
	int opt, status = 0;
	const char *as = NULL;

	if (argc < 3)
		goto usage;
	mode = argv[1];
	memset(&ld, 0, sizeof(ld));
	optind = 2;
	while ((opt = getopt(argc, argv, "+a:m:o:r:s:t:w:O")) != -1) {
		switch (opt) {
		case 'o': as = optarg; break;
		case 'a': ld.arena_kib = (unsigned)atoi(optarg); break;
		case 'r': ld.out_kib = (unsigned)atoi(optarg); break;
		case 'm': ld.maxaction = (unsigned)atoi(optarg); break;
		case 's': ld.maxstringlen = (unsigned)atoi(optarg); break;
		case 't': ld.max_run_us = (unsigned)atoi(optarg); break;
		case 'w': ld.wait_us = (unsigned)atoi(optarg); break;
		case 'O': ld.flags |= MT_LUA_LOAD_NO_OVERLOAD; break;
		default: goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	src = slurp(argv[optind++], &len);
	fd = as ? open_as(as) : open(MT_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(MT_DEVICE_PATH);
		return 2;
	}
	ld.source = (uintptr_t)src;
	ld.source_len = (unsigned)len;
	if (ioctl(fd, MT_IOC_LUA_LOAD, &ld) < 0) {
		printf("load: error (%s): %s\n", strerror(errno), ld.error);
		return 1;
	}
	ncpu = ld.ncpu;
	if (!strcmp(mode, "load")) {
		printf("load: ok %u probes\n", ld.nprobes);
		return 0;
	}
	if (strcmp(mode, "run"))
		goto usage;
	if (ioctl(fd, MT_IOC_LUA_START, 0) < 0) {
		printf("start: error (%s)\n", strerror(errno));
		return 1;
	}
	if (optind < argc) {
		child = fork();
		if (child == 0) {
			execvp(argv[optind], argv + optind);
			_exit(127);
		}
		for (;;) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			pid_t w = waitpid(child, &status, WNOHANG);

			drain();
			if (w == child)
				break;
			if (stats(&st) == 0 && st.stopping) {
				kill(child, SIGTERM);
				waitpid(child, &status, 0);
				break;
			}
			nanosleep(&ts, NULL);
		}
	}
	ioctl(fd, MT_IOC_LUA_STOP, 0);
	drain();
	memset(&call, 0, sizeof(call));
	strcpy(call.name, "finish");
	if (ioctl(fd, MT_IOC_LUA_CALL, &call) < 0)
		printf("call: error (%s)\n", strerror(errno));
	drain();
	if (stats(&st) < 0) {
		perror("stats");
		return 1;
	}
	printf("klua: runs=%llu skipped=%llu errors=%llu lost=%llu exit=%u ncpu=%u peak=%llu failed=%llu "
	       "maxrun_us=%llu maxcall_us=%llu\n",
	       (unsigned long long)st.runs, (unsigned long long)st.skipped,
	       (unsigned long long)st.errors, (unsigned long long)st.lost_bytes, st.exit, st.ncpu,
	       (unsigned long long)st.arena_peak, (unsigned long long)st.arena_failed,
	       (unsigned long long)st.max_run_ns / 1000, (unsigned long long)st.max_call_ns / 1000);
	return 0;
usage:
	fprintf(stderr, "usage: klua load|run [-a KIB] [-r RING_KIB] [-m MAXACTION] [-s MAXSTRINGLEN] [-t RUN_US] "
		"[-w WAIT_US] [-O] [-o UID:GID] SCRIPT [CMD...]\n");
	return 2;
}
