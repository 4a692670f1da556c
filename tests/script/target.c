/*
 * target.c - a program with markers for the script tests.
 *   target count N            N hits of ev(n, s, l), one thread
 *   target threads T N        T threads, N hits each
 *   target fork N             N hits here, N in a forked child
 *   target loop SECONDS       tick(k) every 10 ms; prints "ready" first
 *   target slow N MS          N hits, MS milliseconds apart
 *   target exec N             N hits, then exec itself as "count N"
 *   target clock N MS         N hits of clk(mono = CLOCK_MONOTONIC in ns),
 *                             MS milliseconds apart
 *   target sigalrm N          N hits, while SIGALRM every 20 us hits ev
 *                             from the signal handler; prints "signals K"
 *   target forkexit C N       C fork children, each N hits then _exit(0)
 *   target _exit N            N hits, then _exit(0) (no atexit)
 *   target abort N            N hits, then abort()
 *   target execv N PROG       N hits, then execv PROG (no libmarktap there)
 *   target dlopen LIB N       dlopen LIB, say "loaded", wait for a line on
 *                             stdin, call its marker N times, dlclose, say
 *                             "closed", wait for a line, end
 * It prints "done" when it ends normally, so tests see it survived.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <marktap/marker.h>

static long hits;

static void emit(long count)
{
	for (long i = 0; i < count; i++)
		trace_mark(ev, "n %d s %s l %ld", (int)i, i % 2 ? "odd" : "even", i * 1000000000L);
}

static volatile sig_atomic_t signals, foreign;

static void on_alarm(int sig)
{
	(void)sig;
	signals++;
	if (syscall(SYS_gettid) != getpid())   /* one of libmarktap's threads */
		foreign++;
	trace_mark(ev, "n %d s %s l %ld", -1, "signal", 0L);
}

static void sigalrm_mode(long count)
{
	struct itimerval every = { { 0, 20 }, { 0, 20 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { 0 };

	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	emit(count);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("signals %ld\n", (long)signals);
	printf("on other threads %ld\n", (long)foreign);
}

static void *thread_main(void *arg)
{
	(void)arg;
	emit(hits);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "count";
	long a = argc > 2 ? atol(argv[2]) : 10, b = argc > 3 ? atol(argv[3]) : 0;

	if (!strcmp(mode, "count")) {
		emit(a);
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[16];
		hits = b;
		if (a < 1 || a > 16)
			return 2;
		for (long i = 0; i < a; i++)
			pthread_create(&t[i], NULL, thread_main, NULL);
		for (long i = 0; i < a; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "fork")) {
		pid_t pid;
		fflush(stdout);
		pid = fork();
		emit(a);
		if (pid == 0)
			return 0;
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "loop")) {
		printf("ready\n");
		fflush(stdout);
		for (long k = 0; k < a * 100; k++) {
			trace_mark(tick, "k %ld", k);
			sleep_ms(10);
		}
	} else if (!strcmp(mode, "sigalrm")) {
		sigalrm_mode(a);
	} else if (!strcmp(mode, "forkexit")) {
		fflush(stdout);
		for (long i = 0; i < a; i++)
			if (fork() == 0) {
				emit(b);
				_exit(0);
			}
		while (wait(NULL) > 0)
			;
	} else if (!strcmp(mode, "_exit")) {
		emit(a);
		printf("done\n");
		fflush(stdout);
		_exit(0);
	} else if (!strcmp(mode, "abort")) {
		emit(a);
		printf("done\n");
		fflush(stdout);
		signal(SIGABRT, SIG_DFL);
		abort();
	} else if (!strcmp(mode, "execv") && argc > 3) {
		char *args[] = { argv[3], NULL };
		emit(a);
		fflush(stdout);
		execv(argv[3], args);
		return 3;
	} else if (!strcmp(mode, "slow")) {
		for (long i = 0; i < a; i++) {
			trace_mark(ev, "n %d s %s l %ld", (int)i, "slow", i);
			sleep_ms(b);
		}
	} else if (!strcmp(mode, "dlopen") && argc > 3) {
		char line[64];
		void *lib = dlopen(argv[2], RTLD_NOW);
		int (*hit)(int) = lib ? (int (*)(int))dlsym(lib, "mtlib_hit") : NULL;
		if (!hit) {
			fprintf(stderr, "target: %s\n", dlerror());
			return 1;
		}
		b = atol(argv[3]);
		printf("loaded\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		for (long i = 0; i < b; i++)
			hit((int)i);
		dlclose(lib);
		printf("closed\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	} else if (!strcmp(mode, "clock")) {
		for (long i = 0; i < a; i++) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			trace_mark(clk, "mono %llu", (unsigned long long)ts.tv_sec * 1000000000ull +
				   (unsigned long long)ts.tv_nsec);
			sleep_ms(b);
		}
	} else if (!strcmp(mode, "exec")) {
		char n[32];
		emit(a);
		snprintf(n, sizeof(n), "%ld", a);
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "count", n, (char *)NULL);
		return 3;
	} else {
		return 2;
	}
	printf("done\n");
	return 0;
}
