/*
 * ufunc-safe.c - a program that goes through glibc's code that runs with
 * every signal blocked (tests/script/ufunc-safe.t probes libc under it):
 * posix_spawn with file actions and default signals, system(), popen(),
 * raise() into a handler, threads, fork.  Its output and exit status
 * must be the same with probes as without.
 *
 *   ufunc-safe all       everything once, exit status 7
 *   ufunc-safe spawn N   N posix_spawn children running "exit 3"
 *   ufunc-safe threads T N   T threads calling probed_work() N times each
 *   ufunc-safe masks T N     T threads calling it with every signal blocked
 *                            until stdin closes
 *   ufunc-safe spin T N      the same without blocking signals
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	got = sig;
}

/* Not inlined, not cloned: the probe target of the threads case. */
__attribute__((noinline, noipa)) long probed_work(long x)
{
	return x * 3 + 1;
}

static int spawn_one(void)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def;
	pid_t pid;
	int st = -1;
	char *argv[] = { "sh", "-c", "exit 3", NULL };

	posix_spawn_file_actions_init(&fa);
	/* the child closes, opens and dups with every signal blocked */
	posix_spawn_file_actions_addopen(&fa, 9, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 9, 8);
	posix_spawn_file_actions_addclose(&fa, 9);
	posix_spawn_file_actions_addclose(&fa, 8);
	posix_spawnattr_init(&at);
	sigfillset(&def);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
	if (posix_spawn(&pid, "/bin/sh", &fa, &at, argv, environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void *worker(void *arg)
{
	long n = (long)arg, sum = 0;

	for (long i = 0; i < n; i++)
		sum += probed_work(i);
	return (void *)sum;
}

static int stop, bad, block_all;
static long stop_at;

/* Block everything (SIGTRAP included, as far as the program knows) if
 * block_all, call the probed function, restore: over and over. */
static void *masked(void *arg)
{
	sigset_t all, old;

	(void)arg;
	sigfillset(&all);
	for (long i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		if (block_all)
			pthread_sigmask(SIG_BLOCK, &all, &old);
		if (probed_work(i % stop_at) != (i % stop_at) * 3 + 1)
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		if (block_all)
			pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return NULL;
}

static int threads(int t, long n)
{
	pthread_t th[64];
	long total = 0;

	if (t > 64)
		t = 64;
	for (int i = 0; i < t; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)n) != 0)
			return 1;
	for (int i = 0; i < t; i++) {
		void *r;
		pthread_join(th[i], &r);
		total += (long)r;
	}
	printf("threads %d sum %ld\n", t, total);
	return 0;
}

static int all(void)
{
	FILE *p;
	char line[64] = "";
	pid_t pid;
	int st;

	printf("spawn %d\n", spawn_one());
	fflush(stdout);
	st = system("exit 5");
	printf("system %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fflush(stdout);
	p = popen("echo from-popen", "r");
	if (!p || !fgets(line, sizeof(line), p))
		return 1;
	printf("popen %s", line);
	printf("pclose %d\n", pclose(p));
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	printf("raise %d\n", got == SIGUSR1);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(4);
	waitpid(pid, &st, 0);
	printf("fork %d\n", WEXITSTATUS(st));
	threads(3, 1000);
	return 7;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "all"))
		return all();
	if (argc >= 3 && !strcmp(argv[1], "spawn")) {
		int n = atoi(argv[2]), bad = 0;
		for (int i = 0; i < n; i++)
			bad += spawn_one() != 3;
		printf("spawned %d, %d wrong\n", n, bad);
		return bad != 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]), atol(argv[3]));
	if (argc >= 4 && (!strcmp(argv[1], "masks") || !strcmp(argv[1], "spin"))) {
		/* threads that block every signal around each call, until
		 * stdin closes: marktap -x patches while they run */
		int t = atoi(argv[2]);
		pthread_t th[16];
		stop_at = atol(argv[3]);
		unsigned char before[8], after[8];
		block_all = !strcmp(argv[1], "masks");
		/* marktap redirects libc's pthread_sigmask while it runs */
		memcpy(before, (const void *)pthread_sigmask, sizeof(before));
		for (int i = 0; i < t && i < 16; i++)
			pthread_create(&th[i], NULL, masked, NULL);
		printf("ready\n");
		fflush(stdout);
		while (getchar() != EOF)
			;
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < t && i < 16; i++)
			pthread_join(th[i], NULL);
		printf("masked calls ok %d\n", __atomic_load_n(&bad, __ATOMIC_RELAXED) == 0);
		memcpy(after, (const void *)pthread_sigmask, sizeof(after));
		printf("pthread_sigmask as before %d\n", !memcmp(before, after, sizeof(before)));
		return 0;
	}
	fprintf(stderr, "usage: %s all | spawn N | threads T N\n", argv[0]);
	return 2;
}
