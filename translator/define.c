/*
 * define.c - the values of -D NAME=VALUE: the script's limits and
 * switches (MAXACTION, MAXMAPENTRIES, STP_NO_OVERLOAD...), read by the
 * passes that write handlers (gen.c, native.c) and by those that run
 * them (run.c, trace.c, procs.c, kmark.c).
 */
#include "tr_run.h"
#include "mt_lua.h"

#include <stdlib.h>
#include <unistd.h>
#include <string.h>

/* The last -D NAME=VALUE given wins, as in stap. */
int64_t tr_define_value(struct tr_session *s, const char *name, int64_t dflt)
{
	size_t n = strlen(name);

	for (unsigned i = s->defines.n; i-- > 0;) {
		const char *d = s->defines.items[i];
		if (!strncmp(d, name, n) && (d[n] == '=' || d[n] == '\0'))
			return d[n] == '=' ? strtoll(d + n + 1, NULL, 0) : 1;
	}
	return dflt;
}

/* The -D limits of the script into the Lua runtime's options (the names
 * are mt_lua_limit_names: one list for marktap, --trace and the processes) */
void tr_define_lua_limits(struct tr_session *s, struct mt_lua_options *o)
{
	for (unsigned i = 0; mt_lua_limit_names[i]; i++) {
		int64_t v = tr_define_value(s, mt_lua_limit_names[i], INT64_MIN);
		if (v != INT64_MIN)
			mt_lua_option_set(o, mt_lua_limit_names[i], v);
	}
}

const char *tr_module_name(const struct tr_session *s)
{
	if (s->module_name)
		return s->module_name;
	/* a run's own, so that sessions at once each have their directory */
	return s->last_pass == 4 ? "stap_module" : tr_printf("marktap_%d", (int)getpid());
}
