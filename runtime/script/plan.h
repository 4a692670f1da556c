/*
 * plan.h - native plans in the traced process: marker handlers that only
 * add to globals, run without the handler lock and without Lua.
 *
 * A handler that only adds to long globals, or gives values to statistics
 * globals, comes with a plan (translator/native.c; its format:
 * runtime/core/mt_plan.h).  Its hits add into a table of the thread, and
 * the tables are folded into the Lua globals before each delta
 * (runtime/lua/API.md, "Native handlers").  A plan belongs to the session
 * it was made in: after plan_retire() it adds nothing.
 */
#ifndef MT_SCRIPT_PLAN_H
#define MT_SCRIPT_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "mt_event.h"
#include "mt_plan.h"

struct mt_lua;
struct plan;

/* A session starts: folds go into mt's globals, string keys are cut at
 * maxstr bytes.  0, or -1 when native plans cannot run here (the Lua
 * handlers run instead). */
int plan_start(struct mt_lua *mt, size_t maxstr);

/* The plan text for a marker of format f, in this session; NULL when it
 * does not parse or fit f (the Lua handler runs), or out of memory. */
struct plan *plan_new(const char *text, const struct mt_format *f);
void plan_free(struct plan *p);

/* A hit whose arguments are fetched: p's adds, into this thread's table. */
void plan_run(const struct plan *p, const struct mt_format *f, const struct mt_args *a);

/* The following run under hlock. */
/* Every thread's table into the globals. */
void plan_fold_all(void);
/* Hits run by native plans in this session so far. */
uint64_t plan_hits(void);
/* The session is over: its tables are unlinked (each thread frees its
 * own), its plans add nothing from now on. */
void plan_retire(void);
/* In a child after fork (every lock held): only this thread's table
 * stays, as if all it holds was folded (the parent reports it). */
void plan_fork_child(void);

#endif
