/*
 * mt_lua_nat.c - native plans in marktap.ko: counting handlers without Lua.
 *
 * translator/native.c gives a marker handler that only adds to long
 * globals a plan besides its Lua code (rt.native in the chunk; the plan's
 * format and its parser, shared with the script host: runtime/core/mt_plan.h).
 * __mt_bind (mt_krt.lua) keeps the plan of each marker bound to exactly
 * one handler in the global __mt_nat; at load (process context) it is
 * parsed against the marker's format, and each CPU gets a table, a Lua
 * userdata (so from its arena, freed with the state).  At a hit the plan
 * adds into the CPU's table, no Lua; before any consumer call into a state
 * the table is folded into its globals (mt_rt.lua's rt._native_fold), so
 * the deltas marktap pulls carry it.  Counters and statistics (count, sum,
 * min, max: the translator leaves histograms and @variance to Lua).  A hit
 * that could not be done whole (table or string pool full) runs the Lua
 * handler instead, so every hit is counted exactly once.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_event.h"
#include "mt_plan.h"
#include "mt_ioctl.h"
#include "lua.h"
#include "lauxlib.h"
#include "mt_klua_int.h"

#define current get_current()   /* lua.h took the kernel's away (mt_lua_kernel.h) */

#define NAT_SLOTS 4096      /* power of two; at most half used */
#define NAT_LIVE (NAT_SLOTS / 2)
#define NAT_POOL (64 * 1024)   /* string keys' bytes per CPU */

#define STAT 8u                 /* gk: <<< to a statistics global */

/* A plan (runtime/core/mt_plan.h), and what its hits need at hand. */
struct mt_lua_nat_plan {
	size_t strbytes;              /* worst case of one hit's new string keys */
	u32 gk[MT_PLAN_OPS];          /* per operation: its entries' gk, never 0 */
	struct mt_plan plan;
};

struct nat_ent {
	u32 gk;                       /* global << 8 | strmask << 4 | STAT | keys; 0: free */
	u32 hash;
	s64 key[MT_PLAN_KEYS];        /* a string: pool offset << 16 | length */
	s64 value;                    /* the sum; statistics: the count */
	s64 sum, min, max;            /* statistics */
};

struct mt_lua_nat_tab {
	unsigned n;                   /* used slots, in order[] */
	size_t pool_used;
	u16 order[NAT_LIVE];
	struct nat_ent ent[NAT_SLOTS];
	char pool[NAT_POOL];
};

/* --- the plan, parsed at load */

/* A plan for marker format f, or NULL (the Lua handler runs). */
static struct mt_lua_nat_plan *parse_plan(const char *text, const struct mt_format *f, size_t maxstr)
{
	struct mt_lua_nat_plan *p = kzalloc(sizeof(*p), GFP_KERNEL);
	unsigned i, k;

	if (!p || mt_plan_parse(text, f, &p->plan))
		goto bad;
	for (i = 0; i < p->plan.nops; i++) {
		const struct mt_plan_op *o = &p->plan.op[i];

		p->gk[i] = o->global << 8 | (u32)o->strmask << 4 | (o->stats ? STAT : 0) | o->nkeys;
		for (k = 0; k < o->nkeys; k++)
			if (o->strmask & 1u << k)
				p->strbytes += o->key[k].kind == MT_PLAN_SRC_EXEC ? TASK_COMM_LEN : maxstr;
	}
	if (p->strbytes > NAT_POOL / 4)
		goto bad;
	return p;
bad:
	kfree(p);
	return NULL;
}

/* A table as a userdata in the registry: the arena's memory, freed with L. */
static int new_tab(lua_State *L)
{
	void *t = lua_newuserdatauv(L, sizeof(struct mt_lua_nat_tab), 0);

	memset(t, 0, sizeof(struct mt_lua_nat_tab));
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, "mt_nat");
	return 1;
}

/* Under lua_pcall in the first CPU's state (lookups may allocate): the
 * plans.  Raw lookups: no metamethod of the script's runs here. */
static int read_plans(lua_State *L)
{
	struct mt_lua_script *sc = lua_touserdata(L, 1);
	unsigned i, nplans = 0;

	lua_pushglobaltable(L);
	lua_pushliteral(L, "__mt_nat");
	if (lua_rawget(L, 2) != LUA_TTABLE)
		return 0;
	for (i = 0; i < sc->nprobes; i++) {
		lua_pushstring(L, sc->probes[i]->name);
		if (lua_rawget(L, 3) == LUA_TSTRING &&
		    (sc->nat[i] = parse_plan(lua_tostring(L, -1), &sc->probes[i]->fmt, sc->maxstringlen - 1)))
			nplans++;
		lua_pop(L, 1);
	}
	lua_pushinteger(L, nplans);
	return 1;
}

/*
 * After bind(): the plans of the markers __mt_nat names, and a table per
 * CPU when there is one.  A plan that does not parse leaves its marker to
 * Lua.  0 or -ENOMEM (a table does not fit the arena).
 */
int mt_lua_nat_load(struct mt_lua_script *sc)
{
	lua_State *L0 = sc->cpu[sc->first]->L;
	unsigned cpu;
	lua_Integer nplans = 0;

	lua_settop(L0, 0);
	lua_pushcfunction(L0, read_plans);
	lua_pushlightuserdata(L0, sc);
	if (lua_pcall(L0, 1, 1, 0) == LUA_OK)
		nplans = lua_tointeger(L0, -1);
	lua_settop(L0, 0);
	if (!nplans) {   /* none, or the lookups failed half way: all Lua */
		mt_lua_nat_free(sc);
		memset(sc->nat, 0, sizeof(sc->nat));
	}
	if (!nplans)
		return 0;
	for_each_possible_cpu(cpu) {
		struct mt_lua_cpu *pc = sc->cpu[cpu];
		lua_State *L = pc->L;

		if (!lua_checkstack(L, 2))
			return -ENOMEM;
		lua_pushcfunction(L, new_tab);
		if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
			lua_settop(L, 0);
			return -ENOMEM;
		}
		pc->nat = lua_touserdata(L, -1);
		lua_settop(L, 0);
	}
	return 0;
}

void mt_lua_nat_free(struct mt_lua_script *sc)
{
	unsigned i;

	for (i = 0; i < MT_LUA_PROBES_MAX; i++)
		kfree(sc->nat[i]);
}

/* --- at the hit */

struct nat_hit {
	const struct mt_kmarker *m;
	const struct mt_args *a;
	size_t maxstr;
	char comm[TASK_COMM_LEN];
	int have_comm;
};

static s64 value_of(const struct mt_plan_src *s, struct nat_hit *h)
{
	s64 v;

	switch (s->kind) {
	case MT_PLAN_SRC_CONST:
		return s->c;
	case MT_PLAN_SRC_TID:
		return task_pid_nr(current);
	case MT_PLAN_SRC_PID:
		return task_tgid_nr(current);
	case MT_PLAN_SRC_CPU:
		return raw_smp_processor_id();
	default:   /* as push_args gives them to Lua */
		v = (s64)h->a->v[s->arg].u;
		return s->kind == MT_PLAN_SRC_NEG_ARG ? (s64)(0 - (u64)v) : v;
	}
}

/* A string key's bytes: execname() or a string argument, as Lua sees them. */
static const char *str_of(const struct mt_plan_src *s, struct nat_hit *h, size_t *len)
{
	const struct mt_args *a = h->a;

	if (s->kind == MT_PLAN_SRC_EXEC) {
		if (!h->have_comm) {
			memcpy(h->comm, current->comm, sizeof(h->comm));
			h->comm[sizeof(h->comm) - 1] = '\0';
			h->have_comm = 1;
		}
		*len = strlen(h->comm);
		return h->comm;
	}
	*len = min(strnlen(a->v[s->arg].str, a->slen[s->arg] ? a->slen[s->arg] - 1 : 0), h->maxstr);
	return a->v[s->arg].str;
}

static u32 mix(u32 h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 16777619u;   /* FNV-1a */
	return h;
}

static bool holds(const struct mt_plan_op *o, struct nat_hit *h)
{
	unsigned g;

	for (g = 0; g < o->nguards; g++) {
		s64 l = value_of(&o->guard[g].l, h), r = value_of(&o->guard[g].r, h);

		switch (o->guard[g].cmp) {
		case MT_PLAN_EQ: if (l != r) return false; break;
		case MT_PLAN_NE: if (l == r) return false; break;
		case MT_PLAN_LT: if (l >= r) return false; break;
		case MT_PLAN_GT: if (l <= r) return false; break;
		case MT_PLAN_LE: if (l > r) return false; break;
		default: if (l < r) return false; break;   /* MT_PLAN_GE */
		}
	}
	return true;
}

/*
 * The slot of op o's key in t (gk: its entries'): found, or a free one
 * with the key written in (strings into the pool).  The caller made sure
 * there is room.
 */
static struct nat_ent *slot(struct mt_lua_nat_tab *t, const struct mt_plan_op *o, u32 gk, struct nat_hit *h)
{
	unsigned nk = o->nkeys, j, i;
	s64 key[MT_PLAN_KEYS];
	const char *str[MT_PLAN_KEYS];
	size_t len[MT_PLAN_KEYS];
	u32 hash = mix(2166136261u, &gk, sizeof(gk));

	for (j = 0; j < nk; j++) {
		if (o->strmask & 1u << j) {
			str[j] = str_of(&o->key[j], h, &len[j]);
			hash = mix(mix(hash, str[j], len[j]), &len[j], sizeof(len[j]));
		} else {
			key[j] = value_of(&o->key[j], h);
			hash = mix(hash, &key[j], sizeof(key[j]));
		}
	}
	for (i = hash & (NAT_SLOTS - 1);; i = (i + 1) & (NAT_SLOTS - 1)) {
		struct nat_ent *e = &t->ent[i];

		if (!e->gk)
			break;
		if (e->gk != gk || e->hash != hash)
			continue;
		for (j = 0; j < nk; j++) {
			if (!(o->strmask & 1u << j) ? e->key[j] != key[j] :
			    (size_t)(e->key[j] & 0xffff) != len[j] ||
			    memcmp(t->pool + (e->key[j] >> 16), str[j], len[j]))
				break;
		}
		if (j == nk)
			return e;
	}
	for (j = 0; j < nk; j++) {
		if (o->strmask & 1u << j) {
			memcpy(t->pool + t->pool_used, str[j], len[j]);
			key[j] = (s64)t->pool_used << 16 | (s64)len[j];
			t->pool_used += len[j];
		}
	}
	memcpy(t->ent[i].key, key, sizeof(key));
	t->ent[i].hash = hash;
	t->ent[i].value = t->ent[i].sum = 0;
	t->ent[i].gk = gk;
	t->order[t->n++] = (u16)i;
	return &t->ent[i];
}

/* Plan p for a hit, on the CPU's table; false: no room, run the Lua handler. */
bool mt_lua_nat_run(struct mt_lua_script *sc, struct mt_lua_cpu *pc, const struct mt_lua_nat_plan *p,
		    const struct mt_kmarker *m, const struct mt_args *a)
{
	struct mt_lua_nat_tab *t = pc->nat;
	/* strings cut as rt.trunc cuts them: MAXSTRINGLEN - 1 bytes */
	struct nat_hit h = { .m = m, .a = a, .maxstr = sc->maxstringlen - 1 };
	unsigned i;
	s64 v;

	/* all or nothing: a hit half done natively cannot then run in Lua */
	if (!t || t->n + p->plan.nops > NAT_LIVE || t->pool_used + p->strbytes > NAT_POOL)
		return false;
	for (i = 0; i < p->plan.nops; i++) {
		const struct mt_plan_op *o = &p->plan.op[i];
		struct nat_ent *e;

		if (!holds(o, &h))
			continue;
		e = slot(t, o, p->gk[i], &h);
		v = value_of(&o->value, &h);
		if (!o->stats) {
			e->value = (s64)((u64)e->value + (u64)v);
			continue;
		}
		if (!e->value || v < e->min)
			e->min = v;
		if (!e->value || v > e->max)
			e->max = v;
		e->value++;
		e->sum = (s64)((u64)e->sum + (u64)v);
	}
	pc->nat_runs++;
	return true;
}

/* --- folding, by the consumer owning pc */

/* Under lua_pcall (memory errors): records and strings for __mt_nat_fold. */
static int fold_build(lua_State *L)
{
	const struct mt_lua_nat_tab *t = lua_touserdata(L, 1);
	lua_Integer n = 0, ns = 0;
	unsigned j, k;

	lua_getglobal(L, "__mt_nat_fold");
	lua_createtable(L, (int)t->n * 4, 0);   /* records */
	lua_createtable(L, 0, 0);                /* their strings */
	for (j = 0; j < t->n; j++) {
		const struct nat_ent *e = &t->ent[t->order[j]];
		unsigned nk = e->gk & 7;

		/* counters: global, keys, amount, key...; statistics:
		 * -global, keys, count, sum, min, max, three fields mt_rt.lua
		 * does not read, key... (its rt._native_fold) */
		const s64 rec[9] = { e->gk & STAT ? -(s64)(e->gk >> 8) : e->gk >> 8, nk, e->value,
				     e->sum, e->min, e->max };

		for (k = 0; k < (e->gk & STAT ? 9u : 3u); k++) {
			lua_pushinteger(L, rec[k]);
			lua_rawseti(L, -3, ++n);
		}
		for (k = 0; k < nk; k++) {
			if (e->gk >> 4 & 1u << k) {
				lua_pushlstring(L, t->pool + (e->key[k] >> 16), (size_t)(e->key[k] & 0xffff));
				lua_rawseti(L, -2, ++ns);
				lua_pushinteger(L, ns - 1);
			} else {
				lua_pushinteger(L, e->key[k]);
			}
			lua_rawseti(L, -3, ++n);
		}
	}
	lua_pushinteger(L, n);
	lua_insert(L, -2);   /* fold, records, n, strings */
	lua_call(L, 3, 0);
	return 0;
}

/*
 * The CPU's table into its state's globals (rt._native_fold), then
 * emptied.  Returns LUA_OK, or an error with its message on L's stack (a
 * MAXMAPENTRIES error of the fold, memory): the caller reports it.
 */
int mt_lua_nat_fold(struct mt_lua_cpu *pc)
{
	struct mt_lua_nat_tab *t = pc->nat;
	lua_State *L = pc->L;
	int rc;

	if (!t || !t->n)
		return LUA_OK;
	if (!lua_checkstack(L, 8))
		return LUA_ERRMEM;
	lua_pushcfunction(L, fold_build);
	lua_pushlightuserdata(L, t);
	rc = lua_pcall(L, 1, 0, 0);
	t->n = 0;
	t->pool_used = 0;
	memset(t->ent, 0, sizeof(t->ent));
	return rc;
}
