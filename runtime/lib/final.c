/*
 * final.c - a process's last words to marktap before _exit, exec or abort.
 *
 * Handlers that run in a traced process hand their changes to marktap
 * when it asks (every second, before timers) and at exit (atexit).  A
 * process that leaves by _exit() (the usual end of a fork child), replaces
 * its image by exec, or aborts never runs atexit hooks: what its handlers
 * did since the last exchange would be lost.  libmarktap therefore defines
 * these functions itself; as a library the program links (or preloads),
 * it comes before the C library in symbol lookup, so the program's calls
 * reach us first.  We let the script host send what it has
 * (mt_script_final), then call the C library's own function.
 *
 * Calls the C library makes internally (exit() reaching _exit, system(),
 * posix_spawn) do not come through here and need not: exit() runs atexit,
 * and the others do not replace this process.  A process killed by a
 * signal says nothing; marktap counts and reports those (session.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include "mt_lib.h"

void (*mt_script_final)(int why);
void (*mt_script_own)(int on);

extern char **environ;

static void final(int why)
{
	void (*fn)(int) = __atomic_load_n(&mt_script_final, __ATOMIC_ACQUIRE);

	if (fn)
		fn(why);
}

/* The C library's definition of name (the next one after ours). */
static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

MT_EXPORT void _exit(int status)
{
	void (*real)(int) __attribute__((noreturn)) = next("_exit");

	final(MT_FINAL_EXIT);
	real(status);
}

MT_EXPORT void _Exit(int status)
{
	_exit(status);
}

MT_EXPORT void abort(void)
{
	void (*real)(void) __attribute__((noreturn)) = next("abort");

	final(MT_FINAL_EXIT);
	real();
}

MT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]) = next("execve");

	final(MT_FINAL_EXEC);
	return real(path, argv, envp);
}

MT_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

MT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]) = next("execvpe");

	final(MT_FINAL_EXEC);
	return real(file, argv, envp);
}

MT_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

MT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	int (*real)(int, char *const[], char *const[]) = next("fexecve");

	final(MT_FINAL_EXEC);
	return real(fd, argv, envp);
}

MT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	int (*real)(int, const char *, char *const[], char *const[], int) = next("execveat");

	final(MT_FINAL_EXEC);
	return real(dirfd, path, argv, envp, flags);
}

/*
 * execl, execlp, execle: the list becomes a vector on the stack (the
 * process is about to be replaced; a huge list fails as exec would, E2BIG).
 */
#define LIST_MAX 4096

enum list_kind { LIST_PATH, LIST_SEARCH, LIST_ENV };

/* The list after arg (and, for LIST_ENV, the environment after its NULL)
 * to exec: execve for a path, execvpe for a name searched in PATH. */
static int exec_list(enum list_kind kind, const char *target, const char *arg, va_list ap)
{
	char *argv[LIST_MAX + 1], **envp = environ;
	int n = 0;

	for (argv[n] = (char *)arg; argv[n]; argv[n] = va_arg(ap, char *))
		if (++n == LIST_MAX) {
			errno = E2BIG;
			return -1;
		}
	if (kind == LIST_ENV)
		envp = va_arg(ap, char **);
	return kind == LIST_SEARCH ? execvpe(target, argv, envp) : execve(target, argv, envp);
}

MT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = exec_list(LIST_PATH, path, arg, ap);
	va_end(ap);
	return rc;
}

MT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = exec_list(LIST_SEARCH, file, arg, ap);
	va_end(ap);
	return rc;
}

MT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = exec_list(LIST_ENV, path, arg, ap);
	va_end(ap);
	return rc;
}
