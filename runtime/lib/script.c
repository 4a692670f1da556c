/*
 * script.c - hand a marktap session to the script host plugin.
 *
 * Probe scripts run in the traced process, in a Lua state that the plugin
 * libmarktap-script.so hosts.  libmarktap loads it only when marktap asks:
 *   - a process started under "marktap -c" (or any descendant of it)
 *     finds MARKTAP_SESSION in its environment and connects to marktap's
 *     session socket before main() runs, so no early hit is missed;
 *   - "marktap -x PID" asks the agent (agent.c), which calls
 *     mt_script_load() with its connection.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <unistd.h>
#include "mt_event.h"
#include "mt_lib.h"
#include "mt_wire.h"

#ifndef MT_PKGLIBDIR
#define MT_PKGLIBDIR "/usr/local/lib/marktap"
#endif

static const struct mt_script_ops ops = {
	.version = MT_SCRIPT_OPS_VERSION,
	.lock = mt_registry_lock,
	.unlock = mt_registry_unlock,
	.for_each = mt_registry_for_each,
	.arm = mt_marker_arm,
	.disarm = mt_marker_disarm,
	.fetch = mt_event_fetch,
	.hit = &mt_script_hit,
	.added = &mt_script_added,
	.removed = &mt_script_removed,
	.final = &mt_script_final,
	.own = &mt_script_own,
};

int mt_script_load(int fd, const char *plugin, char *err, size_t errlen)
{
	static void *handle;
	static const char installed[] = MT_PKGLIBDIR "/libmarktap-script.so";
	mt_script_start_fn start;

	if (!plugin || !*plugin)
		plugin = secure_getenv(MT_SCRIPT_LIB_ENV);
	if (!plugin || !*plugin)
		plugin = installed;
	if (getauxval(AT_SECURE) && strcmp(plugin, installed) != 0) {
		snprintf(err, errlen, "a privileged process (setuid, setgid or capabilities) loads "
			 "only the installed script host %s, not %s", installed, plugin);
		return -1;
	}
	if (!handle)
		handle = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		snprintf(err, errlen, "cannot load the script host: %s", dlerror());
		return -1;
	}
	start = (mt_script_start_fn)dlsym(handle, MT_SCRIPT_START);
	if (!start) {
		snprintf(err, errlen, "%s: no %s", plugin, MT_SCRIPT_START);
		return -1;
	}
	switch (start(&ops, fd, 0)) {
	case 0:
		return 0;
	case -2:
		return -2;   /* the plugin told marktap why */
	default:
		snprintf(err, errlen, "the script host refused the session");
		return -1;
	}
}

/* Under "marktap -c": join the session before main() (called by the
 * agent's constructor first, so an agent request cannot overtake it). */
void mt_script_join_session(void)
{
	const char *name = secure_getenv(MT_SESSION_ENV);
	char err[300];
	int fd;

	if (!name || !*name)
		return;
	fd = mt_wire_join(name);
	if (fd < 0)
		return;   /* the session is over, or not marktap's: run untraced */
	switch (mt_script_load(fd, NULL, err, sizeof(err))) {
	case 0:
		break;
	case -1:
		mt_wire_send(fd, 'E', err, strlen(err), NULL, 0);
		/* fall through */
	default:
		close(fd);
	}
}

int mt_lib_thread_start(void *(*fn)(void *), void *arg, size_t stack)
{
	void (*own)(int) = __atomic_load_n(&mt_script_own, __ATOMIC_ACQUIRE);
	int rc;

	if (own)
		own(1);
	rc = mt_thread_start(fn, arg, stack);
	if (own)
		own(0);
	return rc;
}
