/*
 * elab_probe.c - pass 2: a script's probes become concrete probes.
 *
 * Takes the collected aliases (elab_tapset.c).  Every probe point of a
 * probe is resolved through probe aliases first -- their prologue "="
 * or epilogue "+=" bodies join the user's, inner aliases inside outer
 * ones -- then as a built-in point (elab_point.c).  Each concrete point
 * gets a probe of its own, with its own copy of the body, since a
 * marker's format gives $arg1 its type; they go to s->probes, where
 * elab_bind.c binds their names.  The concrete probes of one point that
 * only differ by a tapset selector on the same marker field become one
 * probe with a binary search (tr_elab_merge_selected).
 */
#define _GNU_SOURCE
#include "elab_int.h"

#include <stdlib.h>
#include <string.h>

#define ALIAS_DEPTH_MAX 16

/* ---- cloning ------------------------------------------------------------ */

static struct tr_expr *clone_expr(const struct tr_expr *e);

static void clone_vec_expr(struct tr_vec *dst, const struct tr_vec *src)
{
	memset(dst, 0, sizeof(*dst));
	for (unsigned i = 0; i < src->n; i++)
		tr_vec_push(dst, src->items[i] ? clone_expr(src->items[i]) : NULL);
}

/* A chain of binary operators, bottom up: no recursion per operator. */
static struct tr_expr *clone_chain(const struct tr_expr *e)
{
	struct tr_vec spine = {0};
	struct tr_expr *below = NULL;

	tr_chain(e, false, &spine);
	for (unsigned i = 0; i < spine.n; i++) {
		const struct tr_expr *op = spine.items[i];
		struct tr_expr *c = tr_alloc(sizeof(*c));
		*c = *op;
		c->a = i ? below : clone_expr(op->a);
		c->b = clone_expr(op->b);
		below = c;
	}
	free(spine.items);
	return below;
}

static struct tr_expr *clone_expr(const struct tr_expr *e)
{
	struct tr_expr *c;

	if (!e)
		return NULL;
	if (tr_is_chain(e))
		return clone_chain(e);
	c = tr_alloc(sizeof(*c));
	*c = *e;
	c->a = clone_expr(e->a);
	c->b = clone_expr(e->b);
	c->c = clone_expr(e->c);
	clone_vec_expr(&c->args, &e->args);
	return c;
}

static struct tr_stmt *clone_stmt(const struct tr_stmt *st)
{
	struct tr_stmt *c;

	if (!st)
		return NULL;
	c = tr_alloc(sizeof(*c));
	*c = *st;
	memset(&c->list, 0, sizeof(c->list));
	for (unsigned i = 0; i < st->list.n; i++)
		tr_vec_push(&c->list, clone_stmt(st->list.items[i]));
	c->e = clone_expr(st->e);
	c->e2 = clone_expr(st->e2);
	c->e3 = clone_expr(st->e3);
	c->body = clone_stmt(st->body);
	c->els = clone_stmt(st->els);
	clone_vec_expr(&c->keys, &st->keys);
	c->value = clone_expr(st->value);
	c->base = clone_expr(st->base);
	c->limit = clone_expr(st->limit);
	c->catch_var = clone_expr(st->catch_var);
	return c;
}

/* ---- probe aliases ------------------------------------------------------- */

/* A concrete point and the alias bodies on the way to it. */
struct match {
	struct tr_resolved *r;
	struct tr_vec prologues, epilogues;     /* alias bodies, outermost last */
};

struct resolver {
	struct tr_session *s;
	struct tr_vec *out;                     /* struct match * */
	const struct tr_token *tok;
};

static void add_match(struct resolver *rv, struct tr_resolved *r)
{
	struct match *m = tr_alloc(sizeof(*m));

	m->r = r;
	tr_vec_push(rv->out, m);
}

static int resolve_comps(struct resolver *rv, const struct tr_vec *comps, int depth);
static int resolve_point(struct resolver *rv, const struct tr_vec *comps, bool optional, int depth);

/* Alias "name.parts = points": a user point that starts with name.parts. */
/* Whether alias AL's name matches the first components of COMPS. */
static bool alias_name_matches(const struct tr_probe *al, const struct tr_vec *comps)
{
	const struct tr_probe_point *name = al->alias_names.items[0];

	if (name->comps.n > comps->n)
		return false;
	for (unsigned k = 0; k < name->comps.n; k++) {
		const struct tr_component *a = name->comps.items[k], *u = comps->items[k];
		if (!tr_glob(u->name, a->name) || a->has_arg != u->has_arg)
			return false;
		if (a->has_arg) {
			struct tr_buf x = {0}, y = {0};
			tr_print_expr(&x, a->arg);
			tr_print_expr(&y, u->arg);
			if (strcmp(tr_buf_str(&x), tr_buf_str(&y)))
				return false;
		}
	}
	return true;
}

/*
 * As stap: an alias whose name is a prefix of the point ("a" for "a.b")
 * extends with the rest ("a.b" is a's points with ".b") only where no
 * longer alias under the same name matches ("a.b" itself): nd_syscall.X
 * and nd_syscall.X.return both match "nd_syscall.X.return", and the
 * latter alone is it.
 */
static bool longer_alias_matches(struct tr_session *s, const struct tr_probe *al, const struct tr_vec *comps)
{
	const struct tr_probe_point *name = al->alias_names.items[0];

	for (unsigned i = 0; i < s->all_aliases.n; i++) {
		const struct tr_probe *o = s->all_aliases.items[i];
		const struct tr_probe_point *on = o->alias_names.items[0];
		unsigned k;
		if (on->comps.n <= name->comps.n || !alias_name_matches(o, comps))
			continue;
		for (k = 0; k < name->comps.n; k++)
			if (strcmp(((struct tr_component *)on->comps.items[k])->name,
				   ((struct tr_component *)name->comps.items[k])->name))
				break;
		if (k == name->comps.n)
			return true;
	}
	return false;
}

static int resolve_aliases(struct resolver *rv, const struct tr_vec *comps, int depth)
{
	int found = 0;

	if (comps->n)   /* the tapset files with aliases of that first name */
		tr_elab_tapset_need(rv->s, 'a', ((struct tr_component *)comps->items[0])->name);
	for (unsigned i = 0; i < rv->s->all_aliases.n; i++) {
		struct tr_probe *al = rv->s->all_aliases.items[i];
		const struct tr_probe_point *name = al->alias_names.items[0];

		if (!alias_name_matches(al, comps))
			continue;
		if (name->comps.n < comps->n && longer_alias_matches(rv->s, al, comps))
			continue;
		for (unsigned p = 0; p < al->points.n; p++) {
			const struct tr_probe_point *target = al->points.items[p];
			struct tr_vec sub = {0}, got = {0};
			for (unsigned j = 0; j < target->comps.n; j++)
				tr_vec_push(&sub, target->comps.items[j]);
			for (unsigned j = name->comps.n; j < comps->n; j++)
				tr_vec_push(&sub, comps->items[j]);
			struct resolver inner = *rv;
			inner.out = &got;
			int n = resolve_point(&inner, &sub, target->optional, depth + 1);
			if (n < 0)
				return -1;
			if (n == 0 && !target->optional)
				continue;
			for (unsigned j = 0; j < got.n; j++) {
				struct match *m = got.items[j];
				/* inner aliases resolve first: the outermost name stays */
				m->r->alias_pp = tr_elab_point_text(&name->comps);
				tr_vec_push(al->epilogue ? &m->epilogues : &m->prologues, al);
				if (target->cond && !m->r->cond)
					m->r->cond = target->cond;
				tr_vec_push(rv->out, m);
			}
			found += n;
			if (n > 0 && target->sufficient)
				break;          /* "a !, b": b only when a resolves to nothing */
		}
	}
	return found;
}

static int resolve_comps(struct resolver *rv, const struct tr_vec *comps, int depth)
{
	struct tr_vec points = {0};
	int a, b;

	if (depth > ALIAS_DEPTH_MAX) {
		tr_sem_error(rv->tok, "recursion too deep in probe alias expansion");
		return -1;
	}
	a = resolve_aliases(rv, comps, depth);
	if (a < 0)
		return -1;
	b = tr_elab_builtin_points(rv->s, rv->tok, comps, &points);
	for (unsigned i = 0; i < points.n; i++)
		add_match(rv, points.items[i]);
	free(points.items);
	if (b < 0)
		return -1;
	return a + b;
}

/* ---- the probes ------------------------------------------------------------ */

static bool stmt_calls(const struct tr_stmt *st, const char *fn);
#define ALTERNATIVE "__marktap_alternative"

/* Build the body of a concrete probe: prologues, the user's body, epilogues
 * (without an alternative's mark, below). */
static struct tr_stmt *derived_body(const struct match *m, const struct tr_stmt *user)
{
	struct tr_stmt *b = tr_alloc(sizeof(*b));

	b->kind = S_BLOCK;
	b->tok = user->tok;
	/* "b = a { }" over "a = kernel.mark(..) { }": a's body, then b's,
	 * then the user's (an alias body is put before what uses the alias);
	 * "+=" epilogues the other way round */
	for (unsigned i = 0; i < m->prologues.n; i++) {
		struct tr_stmt *pro = clone_stmt(((struct tr_probe *)m->prologues.items[i])->body);
		for (unsigned k = 0; pro && k < pro->list.n; k++)
			if (stmt_calls(pro->list.items[k], ALTERNATIVE)) {
				((struct tr_stmt *)pro->list.items[k])->kind = S_NULL;
				((struct tr_stmt *)pro->list.items[k])->e = NULL;
			}
		tr_vec_push(&b->list, pro);
	}
	tr_vec_push(&b->list, clone_stmt(user));
	for (unsigned i = m->epilogues.n; i-- > 0;)
		tr_vec_push(&b->list, clone_stmt(((struct tr_probe *)m->epilogues.items[i])->body));
	return b;
}

/* ---- alternative definitions of an alias ---------------------------------- */

/*
 * A tapset may define an alias a second time over other points with
 *	probe irq_handler.entry = kernel.trace("irq_handler_entry") ?
 *	{ __marktap_alternative() ... dev_name = ... }
 * Such a definition stands in for the alias's others only where they
 * cannot serve the handler: when the handler reads a variable one of them
 * marks __marktap_unavailable and the alternative sets, that one is left
 * out and the alternative probes instead; otherwise the alternative is
 * left out.  The plain definitions (markers: the recorder, stored traces,
 * no root) stay the rule, a kernel function or tracepoint where a script
 * needs what their markers do not carry.
 */
static bool stmt_calls(const struct tr_stmt *st, const char *fn)
{
	return st && st->kind == S_EXPR && st->e && st->e->kind == E_CALL && !strcmp(st->e->op, fn) &&
	       !st->e->args.n;
}

static bool alias_is_alternative(const struct tr_probe *al)
{
	for (unsigned i = 0; al->body && i < al->body->list.n; i++)
		if (stmt_calls(al->body->list.items[i], ALTERNATIVE))
			return true;
	return false;
}

static bool match_is_alternative(const struct match *m)
{
	for (unsigned i = 0; i < m->prologues.n; i++)
		if (alias_is_alternative(m->prologues.items[i]))
			return true;
	return false;
}

/* The top-level "name = value" of an alias body: the unavailable ones
 * (name = __marktap_unavailable("why")) or the others. */
static bool alias_sets(const struct tr_probe *al, const char *name, bool unavailable)
{
	for (unsigned i = 0; al->body && i < al->body->list.n; i++) {
		const struct tr_stmt *st = al->body->list.items[i];
		const struct tr_expr *e = st->e;
		if (st->kind != S_EXPR || !e || e->kind != E_ASSIGN || e->a->kind != E_SYM ||
		    strcmp(e->a->str, name))
			continue;
		if ((e->b->kind == E_CALL && !strcmp(e->b->op, "__marktap_unavailable")) == unavailable)
			return true;
	}
	return false;
}

static bool match_sets(const struct match *m, const char *name, bool unavailable)
{
	for (unsigned i = 0; i < m->prologues.n; i++)
		if (alias_sets(m->prologues.items[i], name, unavailable))
			return true;
	return false;
}

static void note_sym(const struct tr_expr *e, void *arg)
{
	if (e->kind == E_SYM)
		tr_vec_push(arg, (void *)e->str);
}

/* Whether plain match M lacks a variable the handler reads that an
 * alternative of the same alias in GOT gives. */
static bool superseded(const struct match *m, const struct tr_vec *got, const struct tr_vec *reads)
{
	for (unsigned r = 0; r < reads->n; r++) {
		if (!match_sets(m, reads->items[r], true))
			continue;
		for (unsigned k = 0; k < got->n; k++) {
			const struct match *a = got->items[k];
			if (match_is_alternative(a) && !strcmp(a->r->alias_pp, m->r->alias_pp) &&
			    match_sets(a, reads->items[r], false))
				return true;
		}
	}
	return false;
}

/* Keep, of the matches of one point, the definitions the handler needs. */
static void choose_alternatives(struct tr_vec *got, const struct tr_stmt *user)
{
	struct tr_vec reads = {0}, keep = {0}, used = {0};
	struct tr_walker w = { .expr = note_sym, .arg = &reads };
	bool any = false;

	for (unsigned k = 0; k < got->n && !any; k++)
		any = match_is_alternative(got->items[k]);
	if (!any)
		return;
	tr_walk_stmt(&w, user);
	/* the aliases (by name) whose alternatives are needed */
	for (unsigned k = 0; k < got->n; k++) {
		struct match *m = got->items[k];
		if (m->r->alias_pp && !match_is_alternative(m) && superseded(m, got, &reads))
			tr_vec_push(&used, (void *)m->r->alias_pp);
	}
	for (unsigned k = 0; k < got->n; k++) {
		struct match *m = got->items[k];
		bool needed = false;
		for (unsigned u = 0; m->r->alias_pp && u < used.n; u++)
			needed |= !strcmp(used.items[u], m->r->alias_pp);
		if (match_is_alternative(m) ? needed : !needed || !superseded(m, got, &reads))
			tr_vec_push(&keep, m);
	}
	free(got->items);
	free(reads.items);
	free(used.items);
	*got = keep;
}

/* ---- a point of no known shape: stap's mismatch texts ------------------- */

/* A known shape: the components' names and, for "follow:", their forms
 * ("ms(number)"). */
struct shape {
	unsigned n;
	const char **names, **forms;
};

static void push_shape(struct tr_vec *v, unsigned n, const char **names, const char **forms)
{
	struct shape *sh = tr_alloc(sizeof(*sh));

	sh->n = n;
	sh->names = names;
	sh->forms = forms;
	tr_vec_push(v, sh);
}

/* The built-in families ("timer.ms(number)" split at its dots) and the
 * names of the aliases loaded. */
static void known_shapes(struct tr_session *s, struct tr_vec *out)
{
	tr_elab_tapset_need(s, '*', NULL);   /* every alias a name may be near */	for (unsigned i = 0; tr_point_types[i]; i++) {
		const char *t = tr_point_types[i];
		unsigned n = 1;
		for (const char *q = t; *q; q++)
			n += *q == '.';
		const char **names = tr_alloc(n * sizeof(*names)), **forms = tr_alloc(n * sizeof(*forms));
		for (unsigned k = 0; k < n; k++) {
			size_t len = strcspn(t, ".");
			forms[k] = tr_strndup(t, len);
			names[k] = tr_strndup(t, strcspn(forms[k], "("));
			t += len + (t[len] == '.');
		}
		push_shape(out, n, names, forms);
	}
	for (unsigned i = 0; i < s->all_aliases.n; i++) {
		struct tr_probe *al = s->all_aliases.items[i];
		for (unsigned k = 0; k < al->alias_names.n; k++) {
			const struct tr_vec *c = &((struct tr_probe_point *)al->alias_names.items[k])->comps;
			const char **names = tr_alloc(c->n * sizeof(*names));
			for (unsigned j = 0; j < c->n; j++)
				names[j] = ((struct tr_component *)c->items[j])->name;
			push_shape(out, c->n, names, names);
		}
	}
}

static unsigned matched_prefix(const struct shape *sh, const struct tr_vec *comps)
{
	unsigned k = 0;

	while (k < sh->n && k < comps->n && tr_glob(((struct tr_component *)comps->items[k])->name, sh->names[k]))
		k++;
	return k;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Where comps leaves every known shape, said as stap says it: "probe
 * point mismatch (similar: ...)" at the first component no shape has
 * there, "invalid suffix for probe" past a complete point, "probe point
 * truncated (follow: ...)" for a point that stops short.  False (nothing
 * said) when comps has a known shape: its "no match" is the catalogue's.
 */
static bool mismatch(struct tr_session *s, const struct tr_probe_point *pp)
{
	const struct tr_vec *comps = &pp->comps;
	struct tr_vec shapes = {0}, next = {0};
	unsigned best = 0;
	bool complete = false;

	known_shapes(s, &shapes);
	for (unsigned i = 0; i < shapes.n; i++) {
		unsigned k = matched_prefix(shapes.items[i], comps);
		best = k > best ? k : best;
	}
	for (unsigned i = 0; i < shapes.n; i++) {
		const struct shape *sh = shapes.items[i];
		if (matched_prefix(sh, comps) != best)
			continue;
		if (sh->n == best)
			complete = true;
		else
			tr_vec_push(&next, (void *)(best < comps->n ? sh->names[best] : sh->forms[best]));
	}
	const char *text = tr_elab_point_text(comps);
	bool said = true;
	if (best == comps->n && complete) {
		said = false;
	} else if (best == comps->n) {
		struct tr_buf follow = {0};
		qsort(next.items, next.n, sizeof(void *), cmp_text);
		for (unsigned i = 0; i < next.n; i++)
			if (!i || strcmp(next.items[i], next.items[i - 1]))
				tr_buf_printf(&follow, "%s%s", follow.len ? " " : "", (const char *)next.items[i]);
		tr_sem_error(((struct tr_component *)comps->items[best - 1])->tok,
			     "while resolving probe point %s: probe point truncated (follow: %s)", text,
			     tr_buf_str(&follow));
	} else {
		const struct tr_component *c = comps->items[best];
		if (next.n)
			tr_sem_error(c->tok, "while resolving probe point %s: probe point mismatch%s", text,
				     tr_similar_names(c->name, &next));
		else
			tr_sem_error(c->tok, "while resolving probe point %s: invalid suffix for probe", text);
	}
	free(next.items);
	free(shapes.items);
	return said;
}

/*
 * Resolve a point; an optional one ('?') that fails for any reason (no
 * such program, no match) resolves to nothing, silently, as in stap.
 */
static int resolve_point(struct resolver *rv, const struct tr_vec *comps, bool optional, int depth)
{
	bool quiet = tr_diag.quiet_semantic;
	unsigned errors = tr_diag.errors;
	int n;

	if (optional)
		tr_diag.quiet_semantic = true;
	n = resolve_comps(rv, comps, depth);
	tr_diag.quiet_semantic = quiet;
	if (optional && n < 0) {
		tr_diag.errors = errors;
		n = 0;
	}
	return n;
}

/* The concrete probes of a probe of the script (or of a tapset that
 * joined), each with its own copy of the body, appended to s->probes. */
void tr_elab_resolve_probe(struct tr_session *s, struct tr_probe *pr)
{
	for (unsigned i = 0; i < pr->points.n; i++) {
		struct tr_probe_point *pp = pr->points.items[i];
		struct tr_vec got = {0};
		struct resolver rv = { .s = s, .out = &got, .tok = pp->tok };
		int n = resolve_point(&rv, &pp->comps, pp->optional, 0);

		if (n < 0)
			continue;
		if (!s->listing)   /* -l, -L: every definition, with its variables */
			choose_alternatives(&got, pr->body);
		n = (int)got.n;
		if (n == 0) {
			if (!pp->optional && !mismatch(s, pp))
				tr_sem_error(pp->tok, "while resolving probe point %s: no match%s",
					     tr_elab_point_text(&pp->comps), tr_elab_no_match_why(s, &pp->comps));
			else if (pp->optional && !pr->file->tapset)
				s->absent_points = true;
			continue;
		}
		for (unsigned k = 0; k < got.n; k++) {
			struct match *m = got.items[k];
			struct tr_probe *d = tr_alloc(sizeof(*d));
			d->tok = pr->tok;
			d->point_tok = pp->tok;
			d->file = pr->file;
			d->orig_pp = tr_elab_point_text(&pp->comps);
			if (pp->cond)
				m->r->cond = clone_expr(pp->cond);
			else if (m->r->cond)
				m->r->cond = clone_expr(m->r->cond);
			tr_vec_push(&d->resolved, m->r);
			d->body = derived_body(m, pr->body);
			d->id = s->probes.n;
			tr_vec_push(&s->probes, d);
		}
		if (pp->sufficient)
			break;
	}
}

/* Resolve one probe point given as text: for -l / -L. */
int tr_elab_points(struct tr_session *s, struct tr_probe *pr)
{
	tr_elab_resolve_probe(s, pr);
	return tr_diag.errors ? -1 : 0;
}

/* ---- one handler for many aliases ------------------------------------------ */

/*
 * One handler for many aliases on one marker.  The generated syscall.NAME
 * aliases all probe kernel_arch_syscall_entry, each opening with
 *	if ($syscall_id != NR) next
 * so "probe syscall.*" would run some 360 handlers at every system call.
 * The concrete probes of one user probe point that share a marker and
 * open with such a tapset selector on the same value become one probe
 * whose body picks the branch with a binary search on the value.  Each
 * branch declares the locals it uses (gen.c): their union over all the
 * aliases (some 360) is past what a Lua function may hold.
 *
 * The value is a marker field, or a call of one of marktap's own tapset
 * functions (__marktap_*): syscall.NAME.return's aliases open with
 *	if (__marktap_syscall_select(...) != NR) next
 * on both markers of their pair (the exit marker has no syscall_id).
 * The merged probe calls it once, into a local of its own, where the
 * aliases called it each: such a function gives the same value however
 * often it runs (x86_64.stp).
 */
#define SELECTOR_LOCAL "__marktap_selector"

static bool selector_value(const struct tr_expr *a)
{
	if (a->kind == E_TARGET)
		return !a->args.n;
	return a->kind == E_CALL && a->op && !strncmp(a->op, "__marktap_", 10);
}

/* The same expression, as parsed (before binding) */
static bool same_expr(const struct tr_expr *a, const struct tr_expr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->num != b->num || a->args.n != b->args.n ||
	    (a->op || b->op ? !a->op || !b->op || strcmp(a->op, b->op) : false) ||
	    (a->str || b->str ? !a->str || !b->str || strcmp(a->str, b->str) : false) ||
	    !same_expr(a->a, b->a) || !same_expr(a->b, b->b) || !same_expr(a->c, b->c))
		return false;
	for (unsigned i = 0; i < a->args.n; i++)
		if (!same_expr(a->args.items[i], b->args.items[i]))
			return false;
	return true;
}

static const struct tr_expr *selector_of(const struct tr_probe *d)
{
	const struct tr_stmt *b = d->body, *pro, *st, *next;
	const struct tr_expr *e;

	if (b->kind != S_BLOCK || b->list.n < 2 || ((struct tr_resolved *)d->resolved.items[0])->cond)
		return NULL;
	pro = b->list.items[0];
	if (pro->kind != S_BLOCK || !pro->list.n)
		return NULL;
	st = pro->list.items[0];
	if (st->kind != S_IF || st->els || !st->tok->file->tapset)
		return NULL;
	next = st->body->kind == S_BLOCK && st->body->list.n == 1 ? st->body->list.items[0] : st->body;
	e = st->e;
	if (next->kind != S_NEXT || e->kind != E_CMP || strcmp(e->op, "!=") ||
	    !selector_value(e->a) || e->b->kind != E_NUM)
		return NULL;
	return e;
}

static int cmp_selector(const void *x, const void *y)
{
	int64_t a = selector_of(*(struct tr_probe *const *)x)->b->num;
	int64_t b = selector_of(*(struct tr_probe *const *)y)->b->num;
	return a < b ? -1 : a > b;
}

static struct tr_expr *mk_expr(enum tr_ekind kind, const struct tr_token *tok)
{
	struct tr_expr *e = tr_alloc(sizeof(*e));
	e->kind = kind;
	e->tok = tok;
	return e;
}

/* if ($f == K) branch, or if ($f < K_mid) lower half else upper half */
static struct tr_stmt *select_tree(struct tr_probe **v, unsigned n)
{
	const struct tr_expr *sel = selector_of(v[n / 2]);
	struct tr_stmt *st = tr_alloc(sizeof(*st));
	struct tr_expr *c = mk_expr(E_CMP, sel->tok), *k = mk_expr(E_NUM, sel->tok);

	st->kind = S_IF;
	st->tok = sel->tok;
	st->e = c;
	if (sel->a->kind == E_TARGET) {
		c->a = clone_expr(sel->a);
	} else {
		c->a = mk_expr(E_SYM, sel->tok);
		c->a->str = SELECTOR_LOCAL;
	}
	c->b = k;
	k->num = sel->b->num;
	if (n == 1) {
		struct tr_stmt *body = v[0]->body, *pro = body->list.items[0];
		((struct tr_stmt *)pro->list.items[0])->kind = S_NULL;   /* the selector */
		body->own_locals = true;
		c->op = "==";
		st->body = body;
		return st;
	}
	c->op = "<";
	st->body = select_tree(v, n / 2);
	st->els = select_tree(v + n / 2, n - n / 2);
	return st;
}

/* { __marktap_selector = CALL; tree }: the call's value once, in a local
 * the block declares (a branch of its own, gen.c: the branches inside
 * declare theirs) */
static struct tr_stmt *selector_call(const struct tr_expr *sel, struct tr_stmt *tree)
{
	struct tr_stmt *b = tr_alloc(sizeof(*b)), *st = tr_alloc(sizeof(*st));
	struct tr_expr *set = mk_expr(E_ASSIGN, sel->tok);

	set->op = "=";
	set->a = mk_expr(E_SYM, sel->tok);
	set->a->str = SELECTOR_LOCAL;
	set->b = clone_expr(sel->a);
	st->kind = S_EXPR;
	st->tok = sel->tok;
	st->e = set;
	b->kind = S_BLOCK;
	b->tok = sel->tok;
	b->own_locals = true;
	tr_vec_push(&b->list, st);
	tr_vec_push(&b->list, tree);
	return b;
}

/* Probes j and d: of one probe point of the script, on one marker, with
 * the same selector */
static bool mergeable(const struct tr_probe *d, const struct tr_expr *sel, const struct tr_probe *e)
{
	const struct tr_expr *esel = selector_of(e);

	return esel && same_expr(esel->a, sel->a) && !strcmp(e->orig_pp, d->orig_pp) &&
	       !strcmp(((struct tr_resolved *)e->resolved.items[0])->pp,
		       ((struct tr_resolved *)d->resolved.items[0])->pp);
}

/* A group to merge, sorted: no two of its probes select the same value
 * (a search would find one of them only) */
static bool distinct(struct tr_probe **v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_selector);
	for (unsigned k = 1; k < n; k++)
		if (selector_of(v[k])->b->num == selector_of(v[k - 1])->b->num)
			return false;
	return true;
}

/*
 * The concrete probes of one point of the script follow one another in
 * s->probes, an alias's after the alias before: those of a .return alias
 * over a pair of markers alternate between them, so each marker's group
 * is picked out of the point's run.  The merged probe takes its first
 * member's place.
 */
void tr_elab_merge_selected(struct tr_session *s)
{
	struct tr_vec out = {0}, group = {0};
	bool *taken = tr_alloc(s->probes.n + 1);

	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *d = s->probes.items[i];
		const struct tr_expr *sel = selector_of(d);

		if (taken[i])
			continue;
		group.n = 0;
		tr_vec_push(&group, d);
		for (unsigned j = i + 1; sel && j < s->probes.n; j++) {
			struct tr_probe *e = s->probes.items[j];
			if (e->point_tok != d->point_tok)
				break;
			if (!taken[j] && mergeable(d, sel, e)) {
				tr_vec_push(&group, e);
				taken[j] = true;
			}
		}
		if (group.n > 1 && !distinct((struct tr_probe **)group.items, group.n)) {
			for (unsigned k = 0; k < group.n; k++)   /* each goes its own way */
				taken[((struct tr_probe *)group.items[k])->id] = false;
			group.n = 1;
		}
		if (group.n < 2) {
			tr_vec_push(&out, d);
			continue;
		}
		struct tr_stmt *body = select_tree((struct tr_probe **)group.items, group.n);
		d->body = tr_alloc(sizeof(*d->body));
		d->body->kind = S_BLOCK;
		d->body->tok = body->tok;
		if (sel->a->kind == E_CALL)
			body = selector_call(sel, body);
		tr_vec_push(&d->body->list, body);
		tr_vec_push(&out, d);
	}
	for (unsigned i = 0; i < out.n; i++)
		((struct tr_probe *)out.items[i])->id = i;
	free(taken);
	free(group.items);
	free(s->probes.items);
	s->probes = out;
}
