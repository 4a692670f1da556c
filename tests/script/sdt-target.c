/*
 * sdt-target.c - a program with <sys/sdt.h> probes and no libmarktap, for
 * marktap's SDT tests (tests/script/sdt.t).
 *   sdt-target count N        N rounds of app:tick(i, 3i), app:mix(int i,
 *                             short -i, signed char -(i % 100)),
 *                             app:name("even"/"odd"), app:global(a global
 *                             counter, a global array's element) and, when its
 *                             semaphore is up, app:guarded(i)
 *   sdt-target threads T N    T threads, N rounds of app:tick each
 *   sdt-target dlopen LIB N MS  dlopen LIB, wait MS milliseconds, call its
 *                             sdtlib_hit(i) (probe lib:hit) N times, dlclose
 * Prints "guarded K" (rounds the semaphore was up) and "done".
 */
#define _SDT_HAS_SEMAPHORES 1
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>

#define SEM(name) unsigned short app_##name##_semaphore __attribute__((unused, section(".probes")))
SEM(tick);
SEM(mix);
SEM(name);
SEM(guarded);
SEM(global);

static long rounds;
int app_counter = 40;           /* operands that name a symbol: "-4@app_counter(%rip)" */
long app_table[4] = { 7, 8, 9, 10 };

static long run(long n)
{
	static const char *const names[] = { "even", "odd" };
	long guarded = 0;

	for (long i = 0; i < n; i++) {
		STAP_PROBE2(app, tick, i, i * 3);
		STAP_PROBE3(app, mix, (int)i, (short)-i, (signed char)-(i % 100));
		STAP_PROBE1(app, name, names[i % 2]);
		app_counter++;
		STAP_PROBE2(app, global, app_counter, app_table[2]);
		if (app_guarded_semaphore) {
			guarded++;
			STAP_PROBE1(app, guarded, i);
		}
	}
	return guarded;
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++)
		STAP_PROBE2(app, tick, i, i * 3);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "count";
	long a = argc > 2 ? atol(argv[2]) : 10, b = argc > 3 ? atol(argv[3]) : 0, guarded = 0;

	if (!strcmp(mode, "count")) {
		guarded = run(a);
	} else if (!strcmp(mode, "threads") && a >= 1 && a <= 16) {
		pthread_t t[16];
		rounds = b;
		for (long i = 0; i < a; i++)
			pthread_create(&t[i], NULL, thread_main, NULL);
		for (long i = 0; i < a; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "dlopen") && argc > 4) {
		void *lib = dlopen(argv[2], RTLD_NOW);
		int (*hit)(int) = lib ? (int (*)(int))dlsym(lib, "sdtlib_hit") : NULL;
		long ms = atol(argv[4]);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
		if (!hit) {
			fprintf(stderr, "sdt-target: %s\n", dlerror());
			return 1;
		}
		nanosleep(&ts, NULL);
		for (long i = 0; i < atol(argv[3]); i++)
			hit((int)i);
		dlclose(lib);
	} else {
		return 2;
	}
	printf("guarded %ld\ndone\n", guarded);
	return 0;
}
