/*
 * gen.c - pass 3: the elaborated script as one Lua 5.4 chunk.
 *
 * Takes the resolved probes, the globals and functions in use, all bound
 * and typed (pass 2).  The chunk calls the runtime module "mtrt"
 * (runtime/lua/API.md) and registers one handler per concrete probe
 * with rt.probe("probe_N", fn).  A marker handler receives its context
 * as arguments: the marker's name, its format, then the argument values
 * in order; the same chunk runs in the marktap process (begin, end,
 * timers) and, later, in the traced process.
 *
 * This file writes the chunk's frame: the runtime's locals, the globals,
 * the functions, one handler per probe and the end's display of the
 * globals.  Bodies are gen_stmt.c's, their expressions gen_expr.c's,
 * the writing itself gen_emit.c's (gen_int.h).
 */
#define _GNU_SOURCE
#include "gen_int.h"
#include "tr_elab.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Chunk locals for the runtime functions the script calls directly,
 * taken after the chunk set rt.pp and rt.pn (a few: Lua allows a chunk
 * 200 locals, and globals take up to 120 of them). */
static void direct_locals(struct gen *g)
{
	const struct tr_session *s = g->s;

	for (unsigned i = 0; i < s->funcs.n && g->ndirect < sizeof(g->direct) / sizeof(g->direct[0]); i++) {
		const char *d = tr_lua_direct_call(s->funcs.items[i]);

		if (d && strcmp(tr_gen_direct_name(g, d), d) == 0) {
			tr_gen_line(g, "local rt_d_%s = %s", d + 3, d);
			g->direct[g->ndirect++] = d;
		}
	}
}

/* Does the probe's body hold merged branches, which declare their own? */
static bool own_locals_walk(const struct tr_stmt *st, void *arg)
{
	if (st->own_locals)
		*(bool *)arg = true;
	return !*(bool *)arg;
}

/* ", shift = N" for rt.stat/rt.map when @variance reads with a shift. */
static const char *shift_spec(struct tr_session *s, struct tr_sym *y)
{
	int64_t shift = tr_stats_variance_shift(s, y, true);

	return shift > 0 ? tr_printf(", shift = %" PRId64, shift) : "";
}

static const char *hist_spec(struct tr_session *s, struct tr_sym *y)
{
	struct tr_expr *h = tr_stats_first_hist(s, y);

	if (!h)
		return "nil";
	tr_stats_check_hist(s, y, h);
	if (h->stat_op)
		return "{\"log\"}";
	int64_t lo = ((struct tr_expr *)h->args.items[0])->num, hi = ((struct tr_expr *)h->args.items[1])->num,
		step = ((struct tr_expr *)h->args.items[2])->num;
	/* stap's runtime: (hi - lo) / step + 1 buckets (C division), from 1
	 * to 126, besides underflow and overflow */
	if (step <= 0 || (hi - lo) / step + 1 < 1 || (hi - lo) / step + 1 > 126) {
		tr_sem_error(h->tok, step <= 0 ? "histogram: interval must be positive" :
			     "histogram: number of buckets must be between 1 and 126 ((stop - start) / interval + 1)");
		return "nil";
	}
	return tr_printf("{\"linear\", %" PRId64 ", %" PRId64 ", %" PRId64 "}", lo, hi, step);
}

/* Every global by number, for the runtime that moves globals between
 * marktap and the traced processes (rt.globals, runtime/lua/API.md). */
static void sync_registration(struct gen *g)
{
	struct tr_session *s = g->s;
	struct tr_buf names = {0}, get = {0}, set = {0};
	unsigned n = s->globals.n;

	for (unsigned i = 0; i < n; i++) {
		struct tr_sym *y = s->globals.items[i];
		tr_buf_printf(&names, "%s%s", i ? ", " : "", tr_lua_plain(y->name));
		if (!g->globals_in_table) {
			tr_buf_printf(&get, "%s%s", i ? ", " : "", tr_gen_sym_name(g, y));
			tr_buf_printf(&set, "%s = t[%u]; ", tr_gen_sym_name(g, y), i + 1);
		}
	}
	if (g->globals_in_table)
		tr_gen_line(g, "rt.globals({%s}, function() local t = {} for i = 0, %u do t[i + 1] = G[i] end return t end, "
		     "function(t) for i = 0, %u do G[i] = t[i + 1] end end)", tr_buf_str(&names), n - 1, n - 1);
	else
		tr_gen_line(g, "rt.globals({%s}, function() return {%s} end, function(t) %send)",
		     tr_buf_str(&names), tr_buf_str(&get), tr_buf_str(&set));
}

static void globals(struct gen *g)
{
	struct tr_session *s = g->s;

	g->globals_in_table = s->globals.n > 120;
	if (g->globals_in_table)
		tr_gen_line(g, "local G = {}");
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *y = s->globals.items[i];
		const char *init;
		y->index = i;
		if (y->arity > 0) {
			struct tr_buf b = {0};
			tr_buf_printf(&b, "rt.map{name = %s, arity = %d, value = \"%s\"", tr_lua_plain(y->name),
				      y->arity, y->type == T_STATS ? "stat" : tr_type_name(y->type));
			tr_buf_puts(&b, ", keys = {");
			for (int k = 0; k < y->arity; k++)
				tr_buf_printf(&b, "%s\"%s\"", k ? ", " : "", tr_type_name(y->index_types[k]));
			tr_buf_putc(&b, '}');
			if (y->size)
				tr_buf_printf(&b, ", size = %" PRId64, y->size);
			if (y->wrap)
				tr_buf_puts(&b, ", wrap = true");
			if (y->type == T_STATS)
				tr_buf_printf(&b, ", hist = %s%s", hist_spec(s, y), shift_spec(s, y));
			tr_buf_putc(&b, '}');
			init = tr_buf_str(&b);
		} else if (y->type == T_STATS) {
			init = tr_printf("rt.stat{hist = %s%s}", hist_spec(s, y), shift_spec(s, y));
		} else if (y->init) {
			init = y->init->kind == E_NUM ? tr_lua_num(y->init->num) : tr_lua_string(y->init->str);
			if (y->init->kind == E_NUM && y->type == T_STRING)
				init = tr_lua_plain(tr_printf("%" PRId64, y->init->num));
		} else {
			init = tr_gen_zero_of(y->type);
		}
		if (g->globals_in_table)
			tr_gen_line(g, "G[%u] = %s -- %s", i, init, y->name);
		else
			tr_gen_line(g, "local %s = %s", tr_gen_sym_name(g, y), init);
	}
	sync_registration(g);
}

static void functions(struct gen *g)
{
	struct tr_session *s = g->s;

	tr_gen_line(g, "local F = {}");
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		f->lua = tr_printf("%s/%u", f->name, f->params.n);
	}
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		struct tr_buf params = {0};
		for (unsigned k = 0; k < f->params.n; k++) {
			struct tr_sym *p = f->params.items[k];
			tr_buf_printf(&params, "%s%s%s", k ? ", " : "", f->code ? "" : "l_", p->name);
		}
		if (f->code)
			tr_buf_printf(&params, "%s__loc", f->params.n ? ", " : "");
		tr_gen_line(g, "F[%s] = function(%s)", tr_lua_plain(f->lua), tr_buf_str(&params));
		g->indent++;
		if (f->code) {
			tr_gen_line(g, "%s", tr_embed_strip_pragmas(f->code));   /* as embed.c checks it */
		} else {
			g->func = f;
			tr_gen_line(g, "rt_nest(%s)", tr_lua_loc(f->tok));
			tr_gen_count_actions(g, 1, f->tok);
			tr_gen_check_locals(f->tok, f->params.n + f->locals.n);
			tr_gen_declare_locals(g, &f->locals);
			tr_gen_stmt(g, f->body);
			tr_gen_line(g, "rt_unnest()");
			tr_gen_line(g, "do return %s end", tr_gen_zero_of(f->type));
			g->func = NULL;
		}
		g->indent--;
		tr_gen_line(g, "end");
	}
}

/* Is the tapset or script function NAME among those the script calls? */
static bool uses_func(const struct tr_session *s, const char *name)
{
	for (unsigned i = 0; i < s->funcs.n; i++)
		if (!strcmp(((const struct tr_func *)s->funcs.items[i])->name, name))
			return true;
	return false;
}

static void collect_entry(const struct tr_expr *e, void *arg)
{
	if (e->kind == E_TARGET && e->target_arg == TR_TARGET_ENTRY)
		tr_vec_push(arg, (void *)e);
}

/*
 * @entry(expr) in a kernel function's .return (btf.c): the module fires
 * the handler at the call too (its last field 1, the one before the
 * call's cookie); there the values are kept under the cookie, at the
 * return taken back for ev[k].  A return whose call was not seen (the
 * probe armed meanwhile) is left out, as it has no values.
 */
static void entry_prologue(struct gen *g, unsigned i)
{
	unsigned n = g->rp->fields.n;
	struct tr_buf v = {0};

	tr_gen_reads_params(g, 2 + n);
	tr_gen_line(g, "if a%u ~= 0 then", n);
	g->indent++;
	for (unsigned k = 0; k < g->entries.n; k++)
		tr_buf_printf(&v, "%s%s", k ? ", " : "",
			      tr_gen_expr(g, ((struct tr_expr *)g->entries.items[k])->a));
	tr_gen_line(g, "ev_%u[a%u] = {%s}", g->entry_probe, n - 1, tr_buf_str(&v));
	tr_gen_line(g, "return");
	g->indent--;
	tr_gen_line(g, "end");
	tr_gen_line(g, "local ev = ev_%u[a%u]", g->entry_probe, n - 1);
	tr_gen_line(g, "if not ev then return end");
	tr_gen_line(g, "ev_%u[a%u] = nil", g->entry_probe, n - 1);
}

/* Whether probe p's body keeps @entry values. */
static bool has_entries(const struct tr_probe *p)
{
	struct tr_vec found = {0};
	struct tr_walker w = { .expr = collect_entry, .arg = &found };
	bool any;

	tr_walk_stmt(&w, p->body);
	any = found.n > 0;
	free(found.items);
	return any;
}

/*
 * Whether a marker handler may run in the state of whatever CPU it hits
 * in marktap.ko (mt_krt.lua's __mt_percpu) rather than in the one state
 * all CPUs share: stap's handlers take locks only for the globals they
 * use, so one that uses none never waits for another CPU's.  It must
 * touch no global (its point's condition and the functions it calls,
 * transitively, included; raw code is trusted from the tapsets only:
 * theirs keeps no state but memos), keep no @entry values (an entry and
 * its return may hit two CPUs), not be a oneshot, and not be timed (-t's
 * report is a global).  The scripts' own %{ %} blocks may share anything.
 */
struct own_walk {
	bool shared;
	struct tr_vec seen;   /* functions walked */
};

static void own_expr(const struct tr_expr *e, void *arg)
{
	struct own_walk *w = arg;

	if (w->shared)
		return;
	if (e->sym && e->sym->kind == SYM_GLOBAL) {
		w->shared = true;
		return;
	}
	if (e->kind != E_CALL || !e->func)
		return;
	for (unsigned i = 0; i < w->seen.n; i++)
		if (w->seen.items[i] == e->func)
			return;
	tr_vec_push(&w->seen, e->func);
	if (e->func->code)
		w->shared = !e->func->file || !e->func->file->tapset;
	else if (e->func->body)
		tr_walk_stmt(&(struct tr_walker){ .expr = own_expr, .arg = w }, e->func->body);
}

static bool own_state(const struct gen *g, const struct tr_probe *p, const struct tr_resolved *r)
{
	struct own_walk w = {0};

	if (g->timing || g->entries.n || r->oneshot)
		return false;
	for (unsigned i = 0; i < g->s->user.n; i++)
		if (((const struct tr_script *)g->s->user.items[i])->embeds.n)
			return false;
	if (r->cond)
		tr_walk_expr(&(struct tr_walker){ .expr = own_expr, .arg = &w }, r->cond);
	if (!w.shared)
		tr_walk_stmt(&(struct tr_walker){ .expr = own_expr, .arg = &w }, p->body);
	free(w.seen.items);
	return !w.shared;
}

static void probes(struct gen *g)
{
	struct tr_session *s = g->s;
	bool *entries = calloc(s->probes.n ? s->probes.n : 1, sizeof(*entries));

	for (unsigned i = 0; entries && i < s->probes.n; i++)
		entries[i] = has_entries(s->probes.items[i]);
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		bool marker = r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL || r->kind == P_PROCFS ||
			      r->kind == P_KTRACE;
		struct tr_buf params = {0};

		if (marker) {
			tr_buf_puts(&params, "mk_name, mk_fmt");
			for (unsigned k = 0; k < r->fields.n; k++)
				tr_buf_printf(&params, ", a%u", k + 1);
		}
		tr_gen_line(g, "-- %s", tr_lua_comment(r->pp));
		/* pp() of a probe on several markers: by the marker's name */
		if (marker && p->resolved.n > 1) {
			struct tr_buf t = {0};
			for (unsigned k = 0; k < p->resolved.n; k++) {
				struct tr_resolved *rk = p->resolved.items[k];
				tr_buf_printf(&t, "%s[%s] = %s", k ? ", " : "", tr_lua_plain(rk->marker), tr_lua_plain(rk->pp));
			}
			tr_gen_line(g, "local pp_%u = {%s}", i, tr_buf_str(&t));
		}
		g->entries.n = 0;
		/* one table for the probes a user's probe became (one per
		 * marker: the entry's and the exit's of a .return alias), the
		 * first that keeps values declaring it (of "probe linuxmib.*"
		 * the first alias may keep none) */
		g->entry_probe = i;
		/* (a probe with no @entry value needs no table: no search, which
		 * over trace.event("*")'s 100 000 probes would be quadratic) */
		for (unsigned j = 0; j < i && (!entries || entries[i]); j++)
			if (((struct tr_probe *)s->probes.items[j])->tok == p->tok && (!entries || entries[j])) {
				g->entry_probe = j;
				break;
			}
		{
			struct tr_walker w = { .expr = collect_entry, .arg = &g->entries };
			tr_walk_stmt(&w, p->body);
			if (g->entries.n && g->entry_probe == i)
				tr_gen_line(g, "local ev_%u = {}", i);
		}
		bool own = marker && own_state(g, p, r);
		if (g->timing)
			tr_gen_line(g, "rt.probe(\"probe_%u\", timed(%u, function(%s)", i, i, tr_buf_str(&params));
		else
			tr_gen_line(g, "rt.probe(\"probe_%u\", function(%s)", i, tr_buf_str(&params));
		g->indent++;
		g->rp = r;
		g->params = 0;
		/* the action count and the probe point, set at each hit; each
		 * line is dropped below if the handler turns out not to need
		 * it (a kernel hit pays for every Lua instruction) */
		g->uses_act = g->uses_pp = false;
		size_t act_at = g->out->len;
		tr_gen_line(g, "act = %s", r->kind == P_BEGIN || r->kind == P_END || r->kind == P_ERROR ?
		     "act_int" : "act_max");
		size_t pp_at = g->out->len;
		if (marker && p->resolved.n > 1)
			tr_gen_line(g, "cur_pp = pp_%u[mk_name] or %s", i, tr_lua_plain(r->pp));
		else
			tr_gen_line(g, "cur_pp = %s", tr_lua_plain(r->pp));
		size_t pp_end = g->out->len;
		/* pn(): the point as the script names it, an alias's name */
		if (uses_func(s, "pn")) {
			g->uses_pp = true;
			tr_gen_line(g, "cur_pn = %s", r->alias_pp ? tr_lua_plain(r->alias_pp) : "cur_pp");
		}
		if (r->cond)
			tr_gen_line(g, "if not %s then return end", tr_gen_cond(g, r->cond));
		if (r->oneshot) /* first: next or return in the body still exit */
			tr_gen_line(g, "rt.exit()");
		if (g->entries.n && r->kfunc_entry)
			entry_prologue(g, i);
		else if (g->entries.n) {
			/* a marker pair's .return alias: the values its entry
			 * (__marktap_entry()) kept for this thread, taken once */
			tr_gen_line(g, "local ev_t = rt.tid()");
			tr_gen_line(g, "local ev = ev_%u[ev_t] or {}", g->entry_probe);
			tr_gen_line(g, "ev_%u[ev_t] = nil", g->entry_probe);
		}
		bool branches = false;
		tr_walk_stmt(&(struct tr_walker){ .stmt = own_locals_walk, .arg = &branches }, p->body);
		if (!branches) {
			tr_gen_check_locals(p->tok, p->locals.n + r->fields.n);
			tr_gen_declare_locals(g, &p->locals);
		}
		tr_gen_stmt(g, p->body);
		if (r->kind == P_PROCFS && !r->procfs_write) {
			/* a read probe hands its $value to the reader (run.c) */
			tr_gen_line(g, "do return a1 end");
			tr_gen_reads_params(g, 3);
		}
		if (!marker || r->kind == P_PROCFS)
			g->uses_act = g->uses_pp = true;   /* begin, end, timers...: as before */
		if (!g->uses_pp)
			tr_gen_cut(g, pp_at, pp_end);
		else if (marker && p->resolved.n > 1)
			tr_gen_reads_params(g, 2);
		if (!g->uses_act)
			tr_gen_cut(g, act_at, pp_at);
		g->rp = NULL;
		g->indent--;
		const char *fn_end = g->timing ? "end)" : "end";   /* timed(...)'s too */
		if (r->kind == P_END || r->kind == P_ERROR)
			tr_gen_line(g, "%s, {always = true})", fn_end);
		else if (marker && own)
			tr_gen_line(g, "%s, {params = %u, own = true})", fn_end, g->params);
		else if (marker)
			tr_gen_line(g, "%s, {params = %u})", fn_end, g->params);
		else
			tr_gen_line(g, "%s)", fn_end);
		if (p->native_plan)
			tr_gen_line(g, "rt.native(\"probe_%u\", \"%s\", {%s})", i, p->native_plan, p->native_where);
	}
	free(entries);
}

/* Where each global array is first stored into: an element that can only
 * be added when a state's changes are merged into another (marktap's
 * pull of the kernel's states, several CPUs' states) is reported there
 * when the merge passes MAXMAPENTRIES. */
static void stores(struct gen *g)
{
	struct tr_session *s = g->s;
	struct tr_buf b = {0};

	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *y = s->globals.items[i];
		if (y->first_store)
			tr_buf_printf(&b, "%s[%u] = %s", b.len ? ", " : "", y->index + 1,
				      tr_lua_loc(y->first_store));
	}
	if (b.len)
		tr_gen_line(g, "rt.stored_at({%s})", tr_buf_str(&b));
	free(b.data);
}

/*
 * -t, as stap's: each handler's hits and cycles (rt.get_cycles(): the
 * TSC, as stap's get_cycles) gathered in a statistics array indexed by
 * probe number.  It is a global like the script's, so the hits in
 * marktap.ko's states and in the traced processes come home with them;
 * the report follows the display at the end.
 */
static void timing_global(struct gen *g)
{
	struct tr_session *s = g->s;
	struct tr_sym *y = tr_alloc(sizeof(*y));
	enum tr_type *keys = tr_alloc(sizeof(*keys));

	*keys = T_LONG;
	*y = (struct tr_sym){ .name = "__marktap_probe_timing", .kind = SYM_GLOBAL, .type = T_STATS, .arity = 1,
			      .index_types = keys, .size = s->probes.n ? s->probes.n : 1,
			      .read = true, .written = true, .used = true };
	tr_vec_push(&s->globals, y);
	g->timing = y;
}

static void timing_wrapper(struct gen *g)
{
	const char *ts = tr_gen_sym_name(g, g->timing);

	tr_gen_line(g, "local function timed(i, fn)");
	tr_gen_line(g, "  local cycles = rt.get_cycles");
	tr_gen_line(g, "  return function(...)");
	tr_gen_line(g, "    local t0 = cycles()");
	tr_gen_line(g, "    local r = fn(...)");
	tr_gen_line(g, "    %s:push(i, cycles() - t0, \"-t\")", ts);
	tr_gen_line(g, "    return r");
	tr_gen_line(g, "  end");
	tr_gen_line(g, "end");
}

/* stap's "probe hit report": a line per probe that ran, in probe order */
static void timing_report(struct gen *g)
{
	struct tr_session *s = g->s;
	const char *ts = tr_gen_sym_name(g, g->timing);

	tr_gen_line(g, "rt_printf(\"----- probe hit report: \\n\")");
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		const struct tr_token *t = p->tok;
		const char *pp = p->resolved.n == 1 || !p->orig_pp ? r->pp : p->orig_pp;
		const char *loc = t && t->file ? tr_printf("%s:%u:%u", t->file->name, t->line, t->col) : "?";

		tr_gen_line(g, "if %s:exists(%u) then local v = %s:get(%u) "
			     "rt_printf(\"%%s, (%%s), hits: %%d, cycles: %%dmin/%%davg/%%dmax, variance: %%d, from: %%s, index: %%d\\n\", "
			     "%s, %s, v:count(), v:min(), v:avg(), v:max(), v:variance(), %s, %u) end",
			     ts, i, ts, i, tr_lua_plain(pp), tr_lua_plain(loc),
			     tr_lua_plain(p->orig_pp ? p->orig_pp : r->pp), i);
	}
	tr_gen_line(g, "rt_printf(\"----- refresh report:\\n\")");
}

/* stap prints the globals a script wrote but never read when it ends. */
static void display(struct gen *g)
{
	struct tr_session *s = g->s;

	tr_gen_line(g, "rt.probe(\"__display\", function()");
	g->indent++;
	for (unsigned i = 0; i < s->globals.n; i++) {
		struct tr_sym *y = s->globals.items[i];
		const char *n = tr_gen_sym_name(g, y);
		if (!y->written || y->read || y->file->tapset)
			continue;
		if (y->arity > 0) {
			struct tr_buf ks = {0}, fmt = {0};
			for (int k = 0; k < y->arity; k++) {
				tr_buf_printf(&ks, "%sk%d", k ? ", " : "", k);
				tr_buf_printf(&fmt, "%s%s", k ? "," : "", y->index_types[k] == T_STRING ? "\\\"%s\\\"" : "%d");
			}
			tr_gen_line(g, "for %s, v in %s:each() do", tr_buf_str(&ks), n);
			if (y->type == T_STATS)
				tr_gen_line(g, "  if v:count() > 0 then rt_printf(\"%s[%s] @count=%%d @min=%%d @max=%%d @sum=%%d @avg=%%d\\n\", %s, v:count(), v:min(), v:max(), v:sum(), v:avg()) end",
				     y->name, tr_buf_str(&fmt), tr_buf_str(&ks));
			else
				tr_gen_line(g, "  rt_printf(\"%s[%s]=%s\\n\", %s, v)", y->name, tr_buf_str(&fmt),
				     y->type == T_STRING ? "\\\"%s\\\"" : "%d", tr_buf_str(&ks));
			tr_gen_line(g, "end");
		} else if (y->type == T_STATS) {
			tr_gen_line(g, "if %s:count() > 0 then rt_printf(\"%s @count=%%d @min=%%d @max=%%d @sum=%%d @avg=%%d\\n\", %s:count(), %s:min(), %s:max(), %s:sum(), %s:avg()) end",
			     n, y->name, n, n, n, n, n);
		} else {
			tr_gen_line(g, "rt_printf(\"%s=%s\\n\", %s)", y->name, y->type == T_STRING ? "\\\"%s\\\"" : "%d", n);
		}
	}
	if (g->timing)
		timing_report(g);
	g->indent--;
	tr_gen_line(g, "end, {always = true})");
}

char *tr_generate(struct tr_session *s)
{
	struct tr_buf out = {0};
	struct gen g = { .s = s, .out = &out };
	static const char *const helpers[] = {
		"div", "mod", "shl", "shr", "cat", "trunc", "strcmp", "regmatch", "print", "println",
		"printf", "printd", "printdln", "sprint", "sprintln", "sprintf", "sprintd",
		"sprintdln", "nest", "unnest", NULL,
	};

	g.regexec = uses_func(s, "matched") || uses_func(s, "ngroups");
	tr_gen_line(&g, "-- generated by marktap: do not edit");
	tr_gen_line(&g, "local rt = require \"mtrt\"");
	for (unsigned i = 0; helpers[i]; i++)
		tr_gen_line(&g, "local rt_%s = rt.%s", helpers[i], helpers[i]);
	tr_gen_line(&g, "rt.count_actions(true)");
	tr_gen_line(&g, "local rt_maxaction = rt.maxaction");
	tr_gen_line(&g, "local act_max = rt.MAXACTION < 0 and (-1 >> 1) or rt.MAXACTION");
	tr_gen_line(&g, "local act = act_max");
	/* begin, end and error probes run with interrupts on in stap: their
	 * bound is MAXACTION_INTERRUPTIBLE, 10 x MAXACTION unless set */
	if (tr_define_value(s, "MAXACTION_INTERRUPTIBLE", 0) > 0)
		tr_gen_line(&g, "local act_int = %" PRId64, tr_define_value(s, "MAXACTION_INTERRUPTIBLE", 0));
	else
		tr_gen_line(&g, "local act_int = act_max > (-1 >> 1) // 10 and act_max or act_max * 10");
	tr_gen_line(&g, "local cur_pp = \"\"");
	tr_gen_line(&g, "rt.pp = function() return cur_pp end");
	/* switch_file() rotates only output sent to a file (switchfile.stp) */
	if (uses_func(s, "switch_file"))
		tr_gen_line(&g, "rt.output_is_file = %s", s->output_file ? "true" : "false");
	/* module_name(): the session's name, which its procfs files are under */
	if (uses_func(s, "module_name"))
		tr_gen_line(&g, "rt.module_name = %s", tr_lua_plain(tr_module_name(s)));
	if (uses_func(s, "pn")) {
		tr_gen_line(&g, "local cur_pn = \"\"");
		tr_gen_line(&g, "rt.pn = function() return cur_pn end");
	}
	for (unsigned i = 0; i < s->user.n; i++) {
		struct tr_script *sc = s->user.items[i];
		for (unsigned k = 0; k < sc->embeds.n; k++)
			tr_gen_line(&g, "%s", ((struct tr_global_embed *)sc->embeds.items[k])->code);
	}
	direct_locals(&g);
	if (s->probe_timing)
		timing_global(&g);
	globals(&g);
	if (g.timing)
		timing_wrapper(&g);
	functions(&g);
	if (!g.timing)   /* -t times the handlers' Lua: no native plans */
		tr_native_plans(s);
	probes(&g);
	display(&g);
	stores(&g);
	if (g.regexes.len)   /* the automata the handlers match with (regex.c) */
		tr_gen_line(&g, "%.*s", (int)g.regexes.len - 1, g.regexes.data);
	free(g.regexes.data);
	free(g.regex_patterns.items);
	if (tr_diag.errors) {
		free(out.data);
		return NULL;
	}
	return out.data;
}
