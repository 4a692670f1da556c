/*
 * sync-test.c - globals between states (mt_lua_sync_*), without processes:
 * one "marktap" state and two "process" states loaded with the same chunk,
 * compared with one state that saw every hit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include "mt_lua.h"
#include "tap.h"

/* what the translator emits for: global n, last, a[1], s (with @hist_log) */
static const char chunk[] =
	"local rt = require 'mtrt'\n"
	"local g_n = 0\n"
	"local g_last = ''\n"
	"local g_a = rt.map{name = 'a', arity = 1, value = 'long', keys = {'long'}}\n"
	"local g_s = rt.stat{hist = {'log'}}\n"
	"rt.globals({'n', 'last', 'a', 's'}, function() return {g_n, g_last, g_a, g_s} end,\n"
	"  function(t) g_n = t[1]; g_last = t[2]; g_a = t[3]; g_s = t[4]; end)\n"
	"rt.probe('hit', function(v) g_n = g_n + 1; g_last = 'v' .. v; g_a:add(v % 7, 1); g_s:push(v) end)\n"
	"rt.probe('reset', function() g_n = 0; g_a:delete(3); g_s:clear() end)\n"
	"rt.probe('show', function() rt.printf('%d %s %d %d %d %d %d %d %d\\n', g_n, g_last, g_a:get(1), g_a:exists(3) and 1 or 0,\n"
	"  g_s:count(), g_s:sum(), g_s:min(), g_s:max(), g_s:variance()) end)\n"
	"rt.probe('hist', function() rt.print(g_s:hist()) end)\n"
	"rt.probe('shown', function() rt.printf('%d %s\\n', g_n, g_last) end)\n";

static char out[4096];
static size_t outlen;
static int errors_seen;

static void sink(void *ctx, const char *buf, size_t n)
{
	(void)ctx;
	if (outlen + n < sizeof(out)) {
		memcpy(out + outlen, buf, n);
		outlen += n;
		out[outlen] = '\0';
	}
}

static void err_sink(void *ctx, const char *line)
{
	(void)ctx;
	errors_seen++;
	tap_diag("error line: %s", line);
}

static struct mt_lua *state(int64_t maxmapentries)
{
	struct mt_lua_options o = { 0 };
	char err[256];
	struct mt_lua *mt;

	o.write = sink;
	o.error = err_sink;
	o.maxmapentries = maxmapentries;
	o.maxerrors = -1;
	mt = mt_lua_new(&o);
	if (!mt || mt_lua_load(mt, chunk, sizeof(chunk) - 1, "=chunk", err, sizeof(err))) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	return mt;
}

static void hit(struct mt_lua *mt, long v)
{
	lua_pushinteger(mt_lua_state(mt), v);
	mt_lua_run(mt, mt_lua_handler(mt, "hit"), 1);
}

static const char *run(struct mt_lua *mt, const char *probe)
{
	static char copy[4096];

	outlen = 0;
	out[0] = '\0';
	mt_lua_run(mt, mt_lua_handler(mt, probe), 0);
	mt_lua_flush(mt);
	snprintf(copy, sizeof(copy), "%s", out);
	return copy;
}

/* a process's delta into marktap */
static void pull(struct mt_lua *proc, struct mt_lua *top)
{
	char *buf;
	size_t len;

	if (mt_lua_sync_take(proc, MT_LUA_SYNC_DELTA | MT_LUA_SYNC_RESET_STATS, &buf, &len) == 0) {
		if (len)
			mt_lua_sync_apply(top, buf, len);
		free(buf);
	}
}

static void push(struct mt_lua *top, struct mt_lua *proc)
{
	char *buf;
	size_t len;

	if (mt_lua_sync_take(top, MT_LUA_SYNC_DELTA, &buf, &len) == 0) {
		if (len)
			mt_lua_sync_apply(proc, buf, len);
		free(buf);
	}
}

int main(void)
{
	struct mt_lua *one = state(0), *top = state(0), *p1 = state(0), *p2 = state(0);
	char expect[4096], *buf;
	size_t len;

	tap_plan(9);
	mt_lua_sync_mark(top);
	mt_lua_sync_mark(p1);
	mt_lua_sync_mark(p2);
	for (long v = 1; v <= 300; v++) {
		hit(one, v * 37 % 1001);
		hit(v % 3 ? p1 : p2, v * 37 % 1001);
		if (v % 50 == 0) {   /* a timer in marktap, every 50 hits */
			pull(p1, top);
			pull(p2, top);
			mt_lua_sync_mark(top);
		}
	}
	pull(p1, top);
	pull(p2, top);
	snprintf(expect, sizeof(expect), "%s", run(one, "show"));
	tap_ok(!strcmp(run(top, "show"), expect), "two processes merged = one state: %s", expect);
	snprintf(expect, sizeof(expect), "%s", run(one, "hist"));
	tap_ok(!strcmp(run(top, "hist"), expect), "the @hist_log buckets merge exactly");

	/* marktap resets while a process keeps counting: nothing lost or doubled */
	mt_lua_sync_mark(top);
	run(top, "reset");
	run(one, "reset");
	hit(p1, 3);        /* before the reset reaches it */
	hit(one, 3);
	push(top, p1);
	push(top, p2);
	hit(p2, 10);
	hit(one, 10);
	pull(p1, top);
	pull(p2, top);
	snprintf(expect, sizeof(expect), "%s", run(one, "show"));
	tap_ok(!strcmp(run(top, "show"), expect), "a reset in marktap, hits around it: %s (got %s)", expect, run(top, "show"));

	/* a new process gets marktap's values, not its statistics */
	struct mt_lua *p3 = state(0);
	tap_ok(mt_lua_sync_take(top, MT_LUA_SYNC_FULL, &buf, &len) == 0 && len > 5, "FULL take");
	tap_ok(mt_lua_sync_apply(p3, buf, len) == 0, "FULL apply");
	free(buf);
	snprintf(expect, sizeof(expect), "%s", run(top, "shown"));
	tap_ok(!strcmp(run(p3, "shown"), expect), "the joining process starts from marktap's values: %s", expect);

	/* bad input */
	tap_ok(mt_lua_sync_apply(p3, "garbage", 7) < 0, "a corrupt buffer is refused");
	tap_ok(mt_lua_sync_take(top, MT_LUA_SYNC_FULL, &buf, &len) == 0 && len > 10 &&
	       mt_lua_sync_apply(p3, buf, len - 5) < 0, "a truncated buffer is refused");
	free(buf);
	/* a small MAXMAPENTRIES on the receiving side: stap's error, counted */
	struct mt_lua *small = state(2);
	errors_seen = 0;
	tap_ok(mt_lua_sync_take(top, MT_LUA_SYNC_FULL, &buf, &len) == 0 &&
	       mt_lua_sync_apply(small, buf, len) == 0 && errors_seen == 1 && mt_lua_errors(small) == 1,
	       "MAXMAPENTRIES on apply: one ERROR line, counted");
	free(buf);
	return tap_done();
}
