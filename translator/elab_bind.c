/*
 * elab_bind.c - pass 2: names bound to what they name.
 *
 * Takes the concrete probes (elab_probe.c) and the collected globals and
 * functions (elab_tapset.c).  In each probe body and each function used,
 * a name becomes a local, a parameter, or a global (a visible one: a
 * tapset's private globals stay in its file); a call finds its function
 * by name and arity, and that function's body is bound in turn; $name
 * finds the marker field, tracepoint parameter or DWARF/BTF variable it
 * reads.  Globals and functions reached this way are the session's
 * (s->globals, s->funcs); a tapset file some of whose are reached joins
 * with its probes too.  Types are left to elab_type.c.
 */
#define _GNU_SOURCE
#include "elab_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- symbols ------------------------------------------------------------- */

/* Where names are looked up: a probe's body or a function's. */
struct scope {
	struct tr_session *s;
	struct tr_probe *probe;        /* NULL in a function */
	struct tr_func *func;
	struct tr_vec *locals;
	const struct tr_file *file;
	struct tr_resolved *rp;
	struct tr_vec unavailable;     /* alias variables it cannot give: name, reason */
	struct tr_vec iterating;       /* arrays of the foreach loops open here */
	bool marks_entry;              /* the body calls __marktap_entry() (before binding) */
	const char *syscall_params;    /* a syscall.NAME alias's "name:kind ..." (below) */
};

/* As stap: an array may not change while a foreach walks it. */
static void check_iterating(struct scope *sc, const struct tr_sym *y, const struct tr_token *tok)
{
	for (unsigned i = 0; y && i < sc->iterating.n; i++)
		if (sc->iterating.items[i] == y) {
			tr_sem_error(tok, "variable '%s' modified during 'foreach' iteration", y->name);
			return;
		}
}

/*
 * A tapset alias says which of stap's documented variables its marker
 * cannot give with
 *	name = __marktap_unavailable("why")
 * The statement is dropped; a later use of the name is a semantic error
 * that says why, where stap would have had a value (never a silent 0).
 */
#define UNAVAILABLE "__marktap_unavailable"
/* __marktap_others = __marktap_unavailable("why"): every variable the
 * alias does not set (the syscall aliases: stap's filename, flags...),
 * read by a handler that never assigns it, is that error too */
#define UNAVAILABLE_OTHERS "__marktap_others"

static bool note_unavailable(struct scope *sc, struct tr_stmt *st)
{
	struct tr_expr *e = st->e, *call;

	if (st->kind != S_EXPR || !e || e->kind != E_ASSIGN || strcmp(e->op, "=") ||
	    e->a->kind != E_SYM || e->b->kind != E_CALL || strcmp(e->b->op, UNAVAILABLE))
		return false;
	call = e->b;
	if (!st->tok->file->tapset || call->args.n != 1 ||
	    ((struct tr_expr *)call->args.items[0])->kind != E_STR) {
		tr_sem_error(call->tok, "%s takes one literal string, in a tapset alias", UNAVAILABLE);
		return true;
	}
	if (!strcmp(e->a->str, UNAVAILABLE_OTHERS) && sc->rp) {
		sc->rp->others_unavailable = tr_unescape(((struct tr_expr *)call->args.items[0])->str, NULL);
	} else {
		tr_vec_push(&sc->unavailable, (void *)e->a->str);
		tr_vec_push(&sc->unavailable, tr_unescape(((struct tr_expr *)call->args.items[0])->str, NULL));
	}
	st->kind = S_NULL;
	st->e = NULL;
	return true;
}

static const char *unavailable_reason(const struct scope *sc, const char *name)
{
	for (unsigned i = 0; i + 1 < sc->unavailable.n; i += 2)
		if (!strcmp(sc->unavailable.items[i], name))
			return sc->unavailable.items[i + 1];
	return NULL;
}

static struct tr_sym *find_sym(struct tr_vec *v, const char *name)
{
	for (unsigned i = 0; i < v->n; i++) {
		struct tr_sym *y = v->items[i];
		if (!strcmp(y->name, name))
			return y;
	}
	return NULL;
}

static bool visible(const struct tr_file *owner, bool privacy, const struct tr_file *from)
{
	return !privacy || owner == from;
}

static struct tr_sym *find_global(struct scope *sc, const char *name)
{
	struct tr_session *s = sc->s;

	tr_elab_tapset_need(s, 'g', name);
	for (unsigned i = 0; i < s->all_globals.n; i++) {
		struct tr_sym *g = s->all_globals.items[i];
		/* a tapset's code never reads the user's globals: its local t
		 * stays its own beside a script's "global t" */
		if (sc->file && sc->file->tapset && g->file && !g->file->tapset)
			continue;
		if (!strcmp(g->name, name) && visible(g->file, g->privacy, sc->file)) {
			if (!g->used) {
				g->used = true;
				tr_vec_push(&s->globals, g);
			}
			return g;
		}
	}
	return NULL;
}

static struct tr_sym *lookup(struct scope *sc, const char *name, const struct tr_token *tok,
			     int arity)
{
	struct tr_sym *y = find_sym(sc->locals, name);

	if (!y && sc->func)
		y = find_sym(&sc->func->params, name);
	if (!y)
		y = find_global(sc, name);
	if (!y && !sc->func && unavailable_reason(sc, name)) {
		tr_sem_error(tok, "variable '%s' is not available in %s: %s", name,
			     sc->rp && sc->rp->alias_pp ? sc->rp->alias_pp : "this probe",
			     unavailable_reason(sc, name));
		return NULL;
	}
	if (!y) {
		if (arity > 0) {
			tr_sem_error(tok, "unresolved arity-%d global array %s, missing global declaration?",
				     arity, name);
			return NULL;
		}
		y = tr_alloc(sizeof(*y));
		y->name = name;
		y->tok = tok;
		y->kind = SYM_LOCAL;
		y->arity = 0;
		tr_vec_push(sc->locals, y);
	}
	if (arity >= 0) {
		if (y->arity == -2 && arity == 0) {
			tr_sem_error(tok, "array used as scalar");
			return y;
		}
		if (y->arity < 0) {
			y->arity = arity;
		} else if (y->arity != arity) {
			if (arity == 0 || y->arity == 0)
				tr_sem_error(tok, y->arity ? "array used as scalar" : "scalar used as array");
			else
				tr_sem_error(tok, "inconsistent arity (%d vs %d)", arity, y->arity);
		}
		if (arity > 0 && !y->index_types)
			y->index_types = tr_alloc(sizeof(enum tr_type) * (size_t)arity);
	}
	return y;
}

/* The value of a condition made of @defined (already a number) and '!':
 * 1 or 0, or -1 for any other */
static int defined_value(const struct tr_expr *e)
{
	int v;

	if (e->kind == E_NUM && e->tok && !strcmp(e->tok->text, "@defined"))
		return e->num != 0;
	if (e->kind == E_UNARY && !strcmp(e->op, "!") && (v = defined_value(e->a)) >= 0)
		return !v;
	return -1;
}

static void bind_stmt(struct scope *sc, struct tr_stmt *st);

/*
 * stap's register helpers in a system call's probe (syscall.NAME and
 * nd_syscall.NAME, kernel.mark("kernel_arch_syscall_*")): stap's
 * nd_syscall tapset reads the call's arguments with them (uint_arg(1) in
 * nd_syscall.kill is the pid), so they are the call's arguments, which
 * marktap.ko reads from the registers saved at its entry
 * (x86_64.stp's __marktap_syscall_*).  Elsewhere they stay the tapset's.
 */
static void syscall_register_call(const struct tr_resolved *r, struct tr_expr *e)
{
	static const struct { const char *name, *as; } helpers[] = {
		{ "int_arg", "__marktap_syscall_int_arg" }, { "s32_arg", "__marktap_syscall_int_arg" },
		{ "uint_arg", "__marktap_syscall_uint_arg" }, { "u32_arg", "__marktap_syscall_uint_arg" },
		{ "long_arg", "__marktap_syscall_long_arg" }, { "ulong_arg", "__marktap_syscall_long_arg" },
		{ "pointer_arg", "__marktap_syscall_long_arg" }, { "s64_arg", "__marktap_syscall_long_arg" },
		{ "u64_arg", "__marktap_syscall_long_arg" }, { "longlong_arg", "__marktap_syscall_long_arg" },
		{ "ulonglong_arg", "__marktap_syscall_long_arg" },
	};
	const char *a = r->alias_pp;

	if (r->kind != P_MARK_KERNEL || e->args.n != 1)
		return;
	if (strncmp(r->marker, "kernel_arch_syscall_", 20) &&
	    !(a && (!strncmp(a, "syscall.", 8) || !strncmp(a, "nd_syscall.", 11) ||
		    !strncmp(a, "nd1_syscall.", 12) || !strncmp(a, "nd2_syscall.", 12))))
		return;
	for (unsigned i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (!strcmp(e->op, helpers[i].name)) {
			e->op = helpers[i].as;
			return;
		}
}

static void bind_expr(struct scope *sc, struct tr_expr *e);

/* "1" or "1 or 2": the arities of the functions of that name. */
static const char *func_arities(struct tr_session *s, const char *name, const struct tr_file *from)
{
	struct tr_buf b = {0};

	tr_elab_tapset_need(s, 'f', name);
	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		struct tr_func *f = s->all_funcs.items[i];
		if (!strcmp(f->name, name) && visible(f->file, f->privacy, from))
			tr_buf_printf(&b, "%s%u", b.len ? " or " : "", f->params.n);
	}
	return tr_buf_str(&b);
}

/* " (similar: a, b)": of visible functions, the nearest names, as stap
 * suggests them; "" when none is near. */
static const char *similar_funcs(struct tr_session *s, const char *name, const struct tr_file *from)
{
	struct tr_vec cands = {0};

	tr_elab_tapset_need(s, '*', NULL);
	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		struct tr_func *f = s->all_funcs.items[i];
		if (f->name[0] != '_' && visible(f->file, f->privacy, from))
			tr_vec_push(&cands, (void *)f->name);
	}
	const char *r = tr_similar_names(name, &cands);
	free(cands.items);
	return r;
}

static struct tr_func *find_func(struct tr_session *s, const char *name, unsigned arity,
				 const struct tr_file *from, bool *name_exists)
{
	tr_elab_tapset_need(s, 'f', name);	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		struct tr_func *f = s->all_funcs.items[i];
		if (strcmp(f->name, name) || !visible(f->file, f->privacy, from))
			continue;
		*name_exists = true;
		if (f->params.n == arity)
			return f;
	}
	return NULL;
}

/* A function the script calls: used, its body bound (once). */
void tr_elab_bind_func(struct tr_session *s, struct tr_func *f)
{
	if (f->used)
		return;
	f->used = true;
	tr_vec_push(&s->funcs, f);
	if (f->body) {
		struct scope fs = { .s = s, .func = f, .locals = &f->locals, .file = f->file };
		bind_stmt(&fs, f->body);
	}
}

/* $var of a function probe: a field computed by its recipe (dwarf.c). */
static int func_target(struct tr_resolved *r, struct tr_expr *e, bool report)
{
	bool at_return;
	const char *recipe = tr_dw_target(r->dw, r->dw_return, e, report, &e->type, &at_return);

	if (!recipe)
		return -1;
	for (unsigned i = 0; i < r->dw_recipes.n; i++)
		if (!strcmp(r->dw_recipes.items[i], recipe) &&
		    (bool)(intptr_t)r->dw_at_return.items[i] == at_return) {
			e->target_arg = (int)i + 1;
			return 0;
		}
	tr_vec_push(&r->dw_recipes, (void *)recipe);
	tr_vec_push(&r->dw_at_return, (void *)(intptr_t)at_return);
	tr_vec_push(&r->fields, tr_printf("v%u", r->fields.n + 1));
	tr_vec_push(&r->field_types, (void *)(intptr_t)e->type);
	e->target_arg = (int)r->fields.n;
	return 0;
}

/*
 * stap's register helpers in a user function probe's handler
 * (process("P").function, .plt: ltrace.stp's register("rdi")): the hit's
 * registers, read in the process by a recipe as its $variables are
 * (runtime/script/ufunc_recipe.c; MT_R_* is DWARF's numbering).  In a
 * .return probe, the registers at the return.  False: not one of them,
 * or not with a constant argument (the tapset's error stays).
 */
static bool ufunc_register_call(struct tr_resolved *r, struct tr_expr *e)
{
	static const struct { const char *name, *cut; } helpers[] = {
		{ "int_arg", " t4s" }, { "s32_arg", " t4s" }, { "uint_arg", " t4u" }, { "u32_arg", " t4u" },
		{ "long_arg", "" }, { "ulong_arg", "" }, { "pointer_arg", "" }, { "s64_arg", "" },
		{ "u64_arg", "" }, { "longlong_arg", "" }, { "ulonglong_arg", "" },
	};
	static const char *const regs[] = {   /* 64-bit names, then stap's short ones */
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
		"r12", "r13", "r14", "r15", "rip",
		"ax", "dx", "cx", "bx", "si", "di", "bp", "sp",
	};
	static const int arg_regs[] = { 5, 4, 1, 2, 8, 9 };   /* rdi rsi rdx rcx r8 r9 */
	const struct tr_expr *a = e->args.n == 1 ? e->args.items[0] : NULL;
	const char *recipe = NULL;

	if (!strcmp(e->op, "returnval") && !e->args.n && r->dw_return)
		recipe = "r0";
	if ((!strcmp(e->op, "register") || !strcmp(e->op, "u_register")) && a && a->kind == E_STR)
		for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]) && !recipe; i++)
			if (!strcmp(a->str, regs[i]))
				recipe = tr_printf("r%u", i < 17 ? i : i - 17);
	for (unsigned i = 0; i < sizeof(helpers) / sizeof(helpers[0]) && !recipe; i++)
		if (!strcmp(e->op, helpers[i].name) && a && a->kind == E_NUM && a->num >= 1 && a->num <= 6)
			recipe = tr_printf("r%d%s", arg_regs[a->num - 1], helpers[i].cut);
	if (!recipe)
		return false;
	e->str = tr_printf("%s(%s)", e->op, a ? (a->kind == E_STR ? a->str : tr_printf("%lld", (long long)a->num)) : "");
	e->kind = E_TARGET;
	e->type = T_LONG;
	e->args = (struct tr_vec){0};
	for (unsigned i = 0; i < r->dw_recipes.n; i++)
		if (!strcmp(r->dw_recipes.items[i], recipe) && (bool)(intptr_t)r->dw_at_return.items[i] == r->dw_return) {
			e->target_arg = (int)i + 1;
			return true;
		}
	tr_vec_push(&r->dw_recipes, (void *)recipe);
	tr_vec_push(&r->dw_at_return, (void *)(intptr_t)r->dw_return);
	tr_vec_push(&r->fields, tr_printf("v%u", r->fields.n + 1));
	tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
	e->target_arg = (int)r->fields.n;
	return true;
}

/* $skb->len, $in->name...: a netfilter hook's pointer parameter read
 * through the kernel's BTF, as @cast($skb, "struct sk_buff")->len. */
static int netfilter_member(struct tr_session *s, const char *ctype, struct tr_expr *e, bool report)
{
	const char *saved = e->fmt;
	size_t n;
	int rc;

	if (!strncmp(ctype, "const ", 6))
		ctype += 6;
	n = strlen(ctype);
	if (e->addr || n < 9 || strncmp(ctype, "struct ", 7) || strcmp(ctype + n - 2, " *")) {
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression: %s of netfilter hook "
				     "parameter '%s' (%s): not a pointer to a struct", e->addr ? "'&'" :
				     e->args.n ? "'[]'" : "'->'", e->str, ctype);
		return -1;
	}
	e->fmt = tr_printf(", \"%.*s\"", (int)(n - 2), ctype);   /* as @cast(p, "T") keeps it */
	rc = tr_btf_cast(s, e, report);
	e->fmt = saved;
	return rc;
}

/* $param of a kernel.trace point only the kernel's headers know (a
 * tracepoint in BTF is btf.c's) or of a netfilter hook: a number (a
 * netfilter hook's device names a string); $$parms and $$vars all of
 * them; what a pointer points to needs the kernel's types, which BTF
 * gives for a netfilter hook's. */
static int ktrace_target(struct tr_session *s, const struct tr_resolved *r, struct tr_expr *e, bool report)
{
	const char *n = e->str + 1;

	if (e->str[0] == '$' && (!strcmp(n, "$parms") || !strcmp(n, "$vars")) && !e->members && !e->addr) {
		e->target_arg = -3;
		e->type = T_STRING;
		return 0;
	}
	for (unsigned i = 0; e->str[0] == '$' && i < r->fields.n; i++) {
		if (strcmp(r->fields.items[i], n))
			continue;
		if ((e->members || e->args.n) && r->netfilter) {
			if (netfilter_member(s, r->ktrace->ctypes.items[i], e, report))
				return -1;
			e->target_arg = (int)i + 1;   /* the pointer: gen_expr.c reads through it */
			return 0;
		}
		if (e->members || e->addr || e->args.n) {
			if (report)
				tr_sem_error(e->tok, "unresolved target-symbol expression: %s of %s "
					     "parameter '$%s' (%s) needs the kernel's type information "
					     "(BTF)%s%s", e->addr ? "'&'" : e->args.n ? "'[]'" : "'->'",
					     r->netfilter ? "netfilter hook" : "tracepoint", n,
					     (const char *)r->ktrace->ctypes.items[i],
					     r->ktrace->why ? ": " : ", which marktap has not for it",
					     r->ktrace->why ? r->ktrace->why : "");
			return -1;
		}
		e->target_arg = (int)i + 1;
		e->type = (enum tr_type)(intptr_t)r->field_types.items[i];
		return 0;
	}
	if (report) {
		struct tr_vec names = {0};
		for (unsigned i = 0; i < r->fields.n; i++)
			tr_vec_push(&names, tr_printf("$%s", (const char *)r->fields.items[i]));
		tr_vec_push(&names, "$$parms");
		tr_vec_push(&names, "$$vars");
		if (r->netfilter)   /* stap's words, and what there is */
			tr_sem_error(e->tok, "unsupported context variable%s", tr_alternatives(e->str, &names));
		else
			tr_sem_error(e->tok, "unable to find tracepoint variable '%s'%s", e->str,
				     tr_alternatives(e->str, &names));
		free(names.items);
	}
	return -1;
}

/* $$name of a plt probe: the called function's name, a literal; as
 * stap, $$parms and $$vars are empty (no DWARF at a PLT entry). */
static int plt_target(const struct tr_resolved *r, struct tr_expr *e, bool report)
{
	const char *n = e->str;
	bool plain = !e->members && !e->addr && !e->args.n && !e->a;

	if (plain && (!strcmp(n, "$$name") || !strcmp(n, "$$parms") || !strcmp(n, "$$vars") ||
		      !strcmp(n, "$$locals"))) {
		e->kind = E_STR;
		e->str = !strcmp(n, "$$name") ? r->plt_name : "";
		e->type = T_STRING;
		return 0;
	}
	if (report)
		tr_sem_error(e->tok, "unable to find plt variable '%s' (alternatives: $$name)", n);
	return -1;
}

static void find_entry_mark(const struct tr_expr *e, void *arg)
{
	if (e->kind == E_CALL && e->op && !strcmp(e->op, "__marktap_entry"))
		*(bool *)arg = true;
}

/* The probe's body (a tapset alias's) says where its call's entry is:
 * a .return alias over a pair of markers, where @entry(expr) can run. */
static bool marks_entry(const struct tr_probe *p)
{
	bool found = false;
	struct tr_walker w = { .expr = find_entry_mark, .arg = &found };

	tr_walk_stmt(&w, p->body);
	return found;
}

/* The parameters of the system call a syscall.NAME alias's body declares
 * with __marktap_syscall_params("fd:s32 iov:ptr nr_segs:long ..."), the
 * kernel's names for them (tapsets/gen-syscalls.sh, fs.stp): stap reads
 * them as $fd, $nr_segs..., the function's parameters in its DWARF.  The
 * declaration holds for what follows it in the probe, up to the next: a
 * handler that syscall.* merges has one per branch ("" for a call of no
 * known parameters).  It is taken, and runs as nothing. */
static bool syscall_params_decl(struct scope *sc, struct tr_expr *e)
{
	const struct tr_expr *a = e->kind == E_CALL && e->args.n == 1 ? e->args.items[0] : NULL;

	if (!a || a->kind != E_STR || strcmp(e->op, "__marktap_syscall_params") || sc->func)
		return false;
	sc->syscall_params = a->str;
	*e = (struct tr_expr){ .kind = E_NUM, .type = T_LONG, .tok = e->tok };
	return true;
}

/* $name of a system call's parameter in a syscall.NAME probe: its
 * position (0-based) times 4 plus its kind (0 a long or pointer, 1 an
 * int, 2 an unsigned int), or -1. */
static int syscall_param(const char *params, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; params && *params; i++) {
		const char *colon = strchr(params, ':'), *end = strchr(params, ' ');
		if (!colon)
			return -1;
		if ((size_t)(colon - params) == n && !strncmp(params, name, n)) {
			const char *k = colon + 1;
			return i * 4 + (!strncmp(k, "s32", 3) ? 1 : !strncmp(k, "u32", 3) ? 2 : 0);
		}
		params = end ? end + 1 : "";
	}
	return -1;
}

/* $ctx_NAME of a marker probe over a stored trace (--trace): the event
 * context field NAME, read after the marker's own fields (trace.c); not
 * part of $$parms. */
static int context_target(struct scope *sc, struct tr_resolved *r, struct tr_expr *e, bool report)
{
	struct tr_vec names = {0};
	const char *n = e->str + 1;
	bool is_string = false;

	if (tr_trace_context_field(sc->s, n + 4, &is_string, &names)) {
		enum tr_type t = is_string ? T_STRING : T_LONG;
		tr_vec_push(&r->fields, tr_strdup(n));
		tr_vec_push(&r->field_types, (void *)(intptr_t)t);
		r->ctx_fields++;
		e->target_arg = (int)r->fields.n;
		e->type = t;
		free(names.items);
		return 0;
	}
	if (report)
		tr_sem_error(e->tok, "the trace has no event context field '%s' for %s%s%s", n + 4,
			     e->str, names.n ? "" : " (its events carry none: lttng add-context, "
			     "marktrace record --context)", tr_alternatives(e->str, &names));
	free(names.items);
	return -1;
}

/* $name in a probe: its field, or an error in stap's words. */
static int target_lookup(struct scope *sc, struct tr_expr *e, bool report)
{
	const char *n = e->str + 1;
	struct tr_resolved *r = sc->rp;
	/* (a watchpoint has no variables: stap's unresolved target-symbol) */
	bool marker = r && (r->kind == P_MARK_USER || r->kind == P_MARK_KERNEL) && !r->kdata;

	if (!e->str[0] && e->a && e->a->kind == E_SYM && e->a->sym && e->a->sym->autocast_btf &&
	    !e->a->sym->autocast_mixed)   /* p->m of a local holding a typed pointer */
		return tr_btf_autocast(e, e->a->sym->autocast_btf, e->a->sym->autocast_type, report);
	if (!e->str[0] && e->a && e->a->kind == E_SYM && e->a->sym && !(r && r->dw)) {
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression: '%s' %s", e->a->str,
				     e->a->sym->autocast_mixed ? "holds pointers to different types here" :
				     "holds no typed kernel pointer here (stap's autocast takes the type of a "
				     "$variable, @cast or &...->member assigned to it before)");
		return -1;
	}
	if (r && r->dw && !sc->func)
		return func_target(r, e, report);
	if (r && r->kfunc && !sc->func) {
		int rc = tr_btf_target(sc->s, r, e, report);
		if (!rc && e->target_arg == TR_TARGET_ENTRY && sc->probe)
			tr_btf_entry_points(sc->probe);
		return rc;
	}
	if (!strcmp(e->str, "@cast") && e->a && ((e->members && e->members[0]) || e->addr))
		return tr_btf_cast(sc->s, e, report);
	if (r && r->plt_name && !sc->func)
		return plt_target(r, e, report);
	if (r && r->kind == P_PROCFS && !sc->func) {
		if (strcmp(n, "value") || e->args.n || e->members || e->addr) {
			if (report)
				tr_sem_error(e->tok, "invalid target symbol for procfs probe, $value expected");
			return -1;
		}
		e->target_arg = 1;
		e->type = T_STRING;
		return 0;
	}
	if (r && (r->kind == P_KTRACE || r->netfilter) && !sc->func)
		return ktrace_target(sc->s, r, e, report);
	if ((!strcmp(e->str, "@kregister") || !strcmp(e->str, "@uregister")) && !e->members && !e->addr) {
		/* a register of the probe's context: stap takes it at pass 2,
		 * marktap's handlers get no registers (gen.c: a run-time error) */
		e->target_arg = -6;
		e->type = T_LONG;
		return 0;
	}
	if (!strncmp(e->str, "@perf(", 6) && !e->members && !e->addr) {
		e->target_arg = -5;     /* a perf counter's value: a number, as stap */
		e->type = T_LONG;
		return 0;
	}
	bool arrow = e->members && strstr(e->members, "->");

	if (!strcmp(e->str, "@entry") && e->a && !e->members && !e->addr && !sc->func && sc->marks_entry) {
		/* a .return alias over a pair of markers (syscall.NAME.return):
		 * evaluated where its body calls __marktap_entry() (gen.c) */
		e->target_arg = TR_TARGET_ENTRY;
		e->type = T_UNKNOWN;   /* its operand's (elab_type.c) */
		return 0;
	}
	if (!e->str[0] || e->addr || e->str[0] == '@' || arrow || (e->str[1] != '$' && strchr(n, '$'))) {
		/* parsed as stap parses them; what they name is in DWARF */
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression: %s needs DWARF debuginfo, "
				     "and marktap's probes have only their markers' arguments",
				     e->addr ? "'&'" : e->str[0] == '@' ? e->str : arrow ? "'->'" :
				     "pretty-printing ($x$)");
		return -1;
	}
	if (!marker || sc->func) {
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression");
		return -1;
	}
	if (e->args.n) {
		if (report)
			tr_sem_error(e->tok, "marker argument may not be used as array");
		return -1;
	}
	if (!strcmp(n, "name") || !strcmp(n, "format") || !strcmp(n, "$parms") || !strcmp(n, "$vars") ||
	    !strcmp(n, "$name") || !strcmp(n, "$provider")) {
		e->target_arg = !strcmp(n, "name") || !strcmp(n, "$name") ? -1 :
				!strcmp(n, "format") ? -2 : !strcmp(n, "$provider") ? -4 : -3;
		e->type = T_STRING;
		return 0;
	}
	if (!strncmp(n, "arg", 3) && n[3] >= '0' && n[3] <= '9') {
		char *end;
		long k = strtol(n + 3, &end, 10);
		if (!*end) {
			if (k < 1 || k > (long)r->fields.n) {
				if (report)
					tr_sem_error(e->tok, "invalid marker argument number");
				return -1;
			}
			e->target_arg = (int)k;
			e->type = (enum tr_type)(intptr_t)r->field_types.items[k - 1];
			return 0;
		}
	}
	for (unsigned i = 0; i < r->fields.n; i++)
		if (!strcmp(r->fields.items[i], n)) {
			e->target_arg = (int)i + 1;
			e->type = (enum tr_type)(intptr_t)r->field_types.items[i];
			return 0;
		}
	if (sc->s->trace_dir && !strncmp(n, "ctx_", 4) && n[4])
		return context_target(sc, r, e, report);
	if (!e->members && syscall_param(sc->syscall_params, n) >= 0) {
		/* read from the registers saved at the call's entry (marktap.ko) */
		e->target_arg = TR_TARGET_SYSCALL;
		e->num = syscall_param(sc->syscall_params, n);
		e->type = T_LONG;
		return 0;
	}
	if (report) {
		struct tr_vec names = {0};
		bool numbered = r->fields.n && !strcmp(r->fields.items[0], "arg1");
		for (unsigned i = 0; i < r->fields.n; i++)
			tr_vec_push(&names, tr_printf("$%s", (const char *)r->fields.items[i]));
		for (unsigned i = 0; i < r->fields.n && !numbered; i++)
			tr_vec_push(&names, tr_printf("$arg%u", i + 1));
		tr_vec_push(&names, "$name");
		tr_vec_push(&names, "$format");
		tr_vec_push(&names, "$$parms");
		tr_sem_error(e->tok, "invalid target symbol for marker, $argN, $name, $format or $$parms "
			     "expected%s", tr_alternatives(e->str, &names));
		free(names.items);
	}
	return -1;
}

/* A store to $name: a procfs read probe's $value, and in guru mode a
 * function probe's variables. */
static void target_store(struct scope *sc, struct tr_expr *t)
{
	const struct tr_resolved *r = sc->rp;

	if (r && r->kind == P_PROCFS && !sc->func && !strcmp(t->str, "$value")) {
		if (r->procfs_write)
			tr_sem_error(t->tok, "procfs $value variable is read-only in a procfs write probe");
		return;
	}
	if (r && r->dw_func) {   /* a DWARF variable: written in guru mode only, as stap */
		if (!sc->s->guru)
			tr_sem_error(t->tok, "write to target variable not permitted; need stap -g");
		else if (r->dw && !sc->func)
			t->store = tr_dw_store(r->dw, r->dw_return, t);
		if (t->type == T_UNKNOWN)   /* not read: a number, as the store takes */
			t->type = T_LONG;
		return;
	}
	if (r && r->kfunc && !sc->func) {   /* a kernel function's register, as stap -g */
		const char *why = tr_btf_store_refusal(r);
		if (!sc->s->guru)
			tr_sem_error(t->tok, "write to target variable not permitted; need stap -g");
		else if (why)
			tr_sem_error(t->tok, "write to target variable not permitted: %s", why);
		else if (t->members || t->target_arg < 1 || t->target_arg > 7)
			tr_sem_error(t->tok, "write to target variable not permitted: marktap writes "
				     "a kernel function's parameters in registers and $return, not "
				     "kernel memory");
		else
			t->store = tr_printf("kernel %d", t->target_arg);
		if (t->type == T_UNKNOWN)
			t->type = T_LONG;
		return;
	}
	if (r && r->kind == P_KTRACE && !sc->func) {
		/* stap's words; with -g too, for the parameter itself */
		tr_sem_error(t->tok, "write to tracepoint variable '%s' not permitted%s", t->str,
			     sc->s->guru ? "" : "; need stap -g");
		return;
	}
	if (r && r->netfilter && !sc->func) {
		/* the verdict is the hook's answer, stap -g's to give: the
		 * module's slot for it (kmod/mt_kregs.c) */
		if (strcmp(t->str, "$verdict") || t->members || t->args.n)
			tr_sem_error(t->tok, "write to netfilter parameter not permitted");
		else if (!sc->s->guru)
			tr_sem_error(t->tok, "write to netfilter verdict requires guru mode; need stap -g");
		else
			t->store = tr_printf("kernel %d", t->target_arg);
		if (t->type == T_UNKNOWN)
			t->type = T_LONG;
		return;
	}
	if (r && r->kind == P_MARK_KERNEL && !sc->func && !t->members &&
	    (t->target_arg == TR_TARGET_SYSCALL || t->target_arg > 0) &&
	    syscall_param(sc->syscall_params, t->str + 1) >= 0) {
		/* a system call's parameter, in the registers it is read from
		 * after its entry's probes ran: stap -g's write (mt_lua_lib.c) */
		if (!sc->s->guru)
			tr_sem_error(t->tok, "write to target variable not permitted; need stap -g");
		else
			t->store = tr_printf("syscall %d", syscall_param(sc->syscall_params, t->str + 1) / 4);
		return;
	}
	tr_sem_error(t->tok, "write to marker parameter not permitted");
}

static void bind_vec(struct scope *sc, struct tr_vec *v)
{
	for (unsigned i = 0; i < v->n; i++)
		if (v->items[i])
			bind_expr(sc, v->items[i]);
}

static void bind_array_base(struct scope *sc, struct tr_expr *base, int arity)
{
	if (base->kind == E_SYM)
		base->sym = lookup(sc, base->str, base->tok, arity);
	else
		bind_expr(sc, base);
}

static void bind_expr(struct scope *sc, struct tr_expr *e)
{
	if (tr_is_chain(e)) { /* left to right, with a loop down the chain */
		struct tr_vec spine = {0};
		tr_chain(e, false, &spine);
		bind_expr(sc, ((struct tr_expr *)spine.items[0])->a);
		for (unsigned i = 0; i < spine.n; i++)
			bind_expr(sc, ((struct tr_expr *)spine.items[i])->b);
		free(spine.items);
		return;
	}
	switch (e->kind) {
	case E_NUM:
	case E_STR:
		return;
	case E_SYM:
		e->sym = lookup(sc, e->str, e->tok, 0);
		if (e->sym)
			e->sym->read = true;
		return;
	case E_TARGET:
		if (!*e->str && e->members && e->members[0] == '[') {
			/* (x)[1], "s"[1]: an index of a value, which has no
			 * type to index here (stap's words); but (p)[1] of a
			 * local holding a typed kernel pointer reads through
			 * it (autocast, as p->m below) */
			bind_expr(sc, e->a);
			if (!(e->a->kind == E_SYM && e->a->sym && e->a->sym->autocast_btf &&
			      !e->a->sym->autocast_mixed)) {
				bind_vec(sc, &e->args);
				tr_sem_error(e->tok, "unknown type in dereference");
				return;
			}
			target_lookup(sc, e, true);
			bind_vec(sc, &e->args);
			return;
		}
		if (sc->s->skip_badvars && e->str[0] == '$' && target_lookup(sc, e, false) != 0) {
			/* stap --skip-badvars: a literal 0 in its place, said */
			tr_warn(e->tok, "Bad $context variable being substituted with literal 0");
			*e = (struct tr_expr){ .kind = E_NUM, .num = 0, .type = T_LONG, .tok = e->tok };
			return;
		}
		if (!e->str[0] && e->a)   /* p->m: p's type (autocast) first */
			bind_expr(sc, e->a);
		if (!sc->s->skip_badvars || e->str[0] != '$')
			target_lookup(sc, e, true);
		bind_vec(sc, &e->args);
		if (e->a && e->str[0]) /* @cast(p, ...), @kderef(4, p) */
			bind_expr(sc, e->a);
		if (e->b)
			bind_expr(sc, e->b);
		return;
	case E_DEFINED: {
		int ok = 1;
		if (e->a->kind == E_TARGET)
			ok = target_lookup(sc, e->a, false) != -1;   /* -2: there, not readable */
		e->kind = E_NUM;
		e->num = ok;
		e->a = NULL;
		return;
	}
	case E_INDEX:
		bind_vec(sc, &e->args);
		if (e->a->kind != E_SYM && e->a->kind != E_HIST) {
			/* f()[2], (a[1])[2]: stap reads them and rejects them here */
			bind_expr(sc, e->a);
			tr_sem_error(e->tok, "unknown type in dereference");
			return;
		}
		if (e->a->kind == E_SYM) {
			bind_array_base(sc, e->a, (int)e->args.n);
			e->sym = e->a->sym;
			if (e->sym)
				e->sym->read = true;
		} else {
			bind_expr(sc, e->a);
		}
		return;
	case E_IN:
		bind_vec(sc, &e->args);
		bind_array_base(sc, e->a, (int)e->args.n);
		e->sym = e->a->sym;
		if (e->sym)
			e->sym->read = true;
		return;
	case E_ASSIGN: {
		/* A plain store is no read: stap prints globals only written at the end. */
		bool store = !strcmp(e->op, "=") || !strcmp(e->op, "<<<");
		struct tr_sym *y = NULL;
		bind_expr(sc, e->b);
		if (e->a->kind == E_SYM) {
			y = e->a->sym = lookup(sc, e->a->str, e->a->tok, 0);
		} else if (e->a->kind == E_INDEX && e->a->a->kind == E_SYM) {
			bind_vec(sc, &e->a->args);
			bind_array_base(sc, e->a->a, (int)e->a->args.n);
			y = e->a->sym = e->a->a->sym;
		} else if (!strcmp(e->op, "=") && e->a->kind == E_TARGET && sc->rp && sc->rp->dw && !sc->func) {
			/* a plain $x = v reads $x only to see the new value
			 * later; what a pointer leads to is not read first */
			if (!e->a->members && !e->a->args.n)
				target_lookup(sc, e->a, false);
		} else {
			bind_expr(sc, e->a);
		}
		if (y) {
			y->written = true;
			if (!store)
				y->read = true;
		}
		if (y && e->a->kind == E_SYM && !strcmp(e->op, "=") && e->b->kind == E_TARGET && e->b->autocast_btf) {
			/* stap's autocast: the local keeps the pointer's type */
			if (y->autocast_btf && (y->autocast_btf != e->b->autocast_btf ||
						y->autocast_type != e->b->autocast_type))
				y->autocast_mixed = true;
			y->autocast_btf = e->b->autocast_btf;
			y->autocast_type = e->b->autocast_type;
		}
		if (e->a->kind == E_INDEX)
			check_iterating(sc, y, e->a->tok);
		if (e->a->kind == E_TARGET)
			target_store(sc, e->a);
		return;
	}
	case E_TERN:
		if (e->a->kind == E_DEFINED) {
			/* @defined(x) ? x : y: as in stap, the side not taken is
			 * not resolved (@choose_defined) */
			bind_expr(sc, e->a);
			*e = *(e->a->num ? e->b : e->c);
			bind_expr(sc, e);
			return;
		}
		bind_expr(sc, e->a);
		bind_expr(sc, e->b);
		bind_expr(sc, e->c);
		return;
	case E_CALL: {
		bool exists = false;
		if (sc->rp && sc->rp->kfunc && !sc->func && tr_btf_register_call(sc->rp, e))
			return;   /* int_arg(1), returnval() of a kernel function: its fields */
		if (sc->rp && sc->rp->dw_func && !sc->func && ufunc_register_call(sc->rp, e))
			return;   /* register("rdi") of a user function probe: a recipe's field */
		if (sc->rp && !sc->func)
			syscall_register_call(sc->rp, e);
		bind_vec(sc, &e->args);
		e->func = find_func(sc->s, e->op, e->args.n, sc->file, &exists);
		if (!e->func) {
			if (exists)
				tr_sem_error(e->tok, "arity mismatch found (function '%s' takes %s args)", e->op,
					     func_arities(sc->s, e->op, sc->file));
			else
				tr_sem_error(e->tok, "unresolved function %s%s", e->op,
					     similar_funcs(sc->s, e->op, sc->file));
			return;
		}
		if (e->func->code) {
			const char *why = tr_embed_refusal(e->op, e->func->code, sc->s->guru);
			if (why) {
				tr_sem_error(e->tok, "%s", why);
				return;
			}
		}
		tr_elab_bind_func(sc->s, e->func);
		return;
	}
	default:
		if (e->a)
			bind_expr(sc, e->a);
		if (e->b)
			bind_expr(sc, e->b);
		if (e->c)
			bind_expr(sc, e->c);
		bind_vec(sc, &e->args);
		if (e->kind == E_UNARY && !strcmp(e->op, "&")) {
			/* &x, &a[1]: an address of no target (stap's words) */
			tr_sem_error(e->tok, "unknown type in dereference");
			return;
		}
		if ((e->kind == E_PRE || e->kind == E_POST) && e->a->kind == E_TARGET)
			target_store(sc, e->a);
		if ((e->kind == E_PRE || e->kind == E_POST) && e->a->sym) {
			e->a->sym->written = true;
			if (e->a->kind == E_INDEX)
				check_iterating(sc, e->a->sym, e->a->tok);
		}
		return;
	}
}

/* A variable the statement assigns (a foreach's keys, a catch's
 * message): bound, and no never-assigned warning for it. */
static void bind_written(struct scope *sc, struct tr_expr *e)
{
	bind_expr(sc, e);
	if (e->kind == E_SYM && e->sym)
		e->sym->written = true;
}

static void bind_stmt(struct scope *sc, struct tr_stmt *st)
{
	if (!st)
		return;
	switch (st->kind) {
	case S_BLOCK:
		for (unsigned i = 0; i < st->list.n; i++)
			bind_stmt(sc, st->list.items[i]);
		return;
	case S_EXPR:
		if (note_unavailable(sc, st) || syscall_params_decl(sc, st->e))
			return;
		bind_expr(sc, st->e);
		return;
	case S_FOREACH:
		if (st->base->kind == E_SYM) {
			struct tr_sym *y = lookup(sc, st->base->str, st->base->tok, (int)st->keys.n);
			st->base->sym = y;
			if (y) /* iterating reads: stap prints no such global at the end */
				y->read = true;
		} else {
			/* a slice a[*, 2]: the keys give the arity first, as in stap */
			if (st->base->kind == E_INDEX)
				lookup(sc, st->base->a->str, st->base->a->tok, (int)st->keys.n);
			bind_expr(sc, st->base);
		}
		/* the loop assigns its keys and value */
		for (unsigned i = 0; i < st->keys.n; i++)
			bind_written(sc, st->keys.items[i]);
		if (st->value)
			bind_written(sc, st->value);
		if (st->limit)
			bind_expr(sc, st->limit);
		tr_vec_push(&sc->iterating, st->base->sym);
		bind_stmt(sc, st->body);
		sc->iterating.n--;
		return;
	case S_DELETE:
		if (st->e->kind == E_SYM) {
			struct tr_sym *y = lookup(sc, st->e->str, st->e->tok, -1);
			st->e->sym = y;
			/* a local only deleted is no store stap's optimizer
			 * drops: its type stays unresolved (see tr_elab_infer_types) */
			if (y && y->kind != SYM_LOCAL)
				y->written = true;
		} else {
			bind_expr(sc, st->e);
			if (st->e->kind != E_INDEX) {
				/* delete f(), delete 1, delete $x: stap's words */
				tr_sem_error(st->e->tok, "invalid operand of delete expression");
				return;
			}
		}
		check_iterating(sc, st->e->sym, st->e->tok);
		return;
	case S_TRY:
		bind_stmt(sc, st->body);
		if (st->catch_var)   /* assigned the error's message */
			bind_written(sc, st->catch_var);
		bind_stmt(sc, st->els);
		return;
	case S_EMBED:
		return;
	case S_IF: {
		int taken;
		bind_expr(sc, st->e);
		if ((taken = defined_value(st->e)) >= 0) {
			/* if (@defined(x)), if (!@defined(x)): only the branch
			 * taken is resolved (stap's: the other is dead code) */
			if (taken)
				st->els = NULL;
			else
				st->body = NULL;
		}
		bind_stmt(sc, st->body);
		bind_stmt(sc, st->els);
		return;
	}
	default:
		if (st->e)
			bind_expr(sc, st->e);
		if (st->e2)
			bind_expr(sc, st->e2);
		if (st->e3)
			bind_expr(sc, st->e3);
		bind_stmt(sc, st->body);
		bind_stmt(sc, st->els);
		return;
	}
}

/* ---- -G var=val ------------------------------------------------------------ */

/* -G var=val: the global's initial value, a number or a string. */
void tr_elab_set_globals(struct tr_session *s)
{
	for (unsigned i = 0; i < s->globals_set.n; i++) {
		const char *set = s->globals_set.items[i];
		const char *eq = strchr(set, '=');
		char *name = tr_strndup(set, (size_t)(eq - set));
		struct tr_sym *g = NULL;
		tr_elab_tapset_need(s, 'g', name);
		for (unsigned k = 0; k < s->all_globals.n; k++) {
			struct tr_sym *c = s->all_globals.items[k];
			/* a script's own first; a tapset's too (-G argv_1=x) */
			if (!strcmp(c->name, name) && (!g || g->file->tapset))
				g = c;
		}
		if (!g) {
			tr_sem_error(NULL, "unknown global variable '%s' in -G", name);
			continue;
		}
		struct tr_expr *v = tr_alloc(sizeof(*v));
		char *end;
		long long n = strtoll(eq + 1, &end, 0);
		v->tok = g->tok;
		if ((*end || !eq[1]) && g->init && g->init->kind == E_NUM) {
			/* a long global (its initializer says so) takes a number */
			tr_sem_error(NULL, "-G %s: '%s' is not a number, and global '%s' is a long",
				     set, eq + 1, name);
			continue;
		}
		if (*end || !eq[1] || g->type == T_STRING) {
			struct tr_buf b = {0};
			for (const char *q = eq + 1; *q; q++) {
				if (*q == '"' || *q == '\\')
					tr_buf_putc(&b, '\\');
				tr_buf_putc(&b, *q);
			}
			v->kind = E_STR;
			v->str = tr_buf_str(&b);
		} else {
			v->kind = E_NUM;
			v->num = n;
		}
		g->init = v;
	}
}

/* ---- the step ---------------------------------------------------------------- */

/* Whether a global or function of tapset script SC is in use. */
static bool script_used(const struct tr_script *sc)
{
	for (unsigned k = 0; k < sc->globals.n; k++)
		if (((struct tr_sym *)sc->globals.items[k])->used)
			return true;
	for (unsigned k = 0; k < sc->funcs.n; k++)
		if (((struct tr_func *)sc->funcs.items[k])->used)
			return true;
	return false;
}

/*
 * As stap: a tapset file whose globals or functions the session uses
 * joins with its probes too (argv.stp's init probe fills argv).  Their
 * probes are resolved once, when the probes bound so far are done; they
 * may pull in more files.  False when none joined.
 */
static bool pull_tapset_probes(struct tr_session *s)
{
	bool pulled = false;

	for (unsigned i = 0; i < s->tapsets.n; i++) {
		struct tr_script *sc = s->tapsets.items[i];
		if (sc->joined || !sc->probes.n || !script_used(sc))
			continue;
		sc->joined = true;
		for (unsigned k = 0; k < sc->probes.n; k++)
			tr_elab_resolve_probe(s, sc->probes.items[k]);
		pulled = true;
	}
	return pulled;
}

/* The names of every probe in s->probes, with those of the tapset
 * probes that join on the way: 0, or -1 after errors. */
int tr_elab_bind_names(struct tr_session *s)
{
	unsigned i;

	for (i = 0; i < s->probes.n || (!tr_diag.errors && pull_tapset_probes(s)); i++) {
		if (i >= s->probes.n)  /* the tapset probes that joined had no match */
			break;
		struct tr_probe *p = s->probes.items[i];
		struct tr_resolved *r = p->resolved.items[0];
		struct scope sc = { .s = s, .probe = p, .locals = &p->locals, .file = p->file, .rp = r };
		/* looked at before binding drops what a false @defined() guards:
		 * the exit's copy of a .return alias has lost its entry branch */
		sc.marks_entry = marks_entry(p);
		if (r->cond) {
			/* A condition reads globals only. */
			struct tr_vec none = {0};
			struct scope cs = sc;
			cs.locals = &none;
			bind_expr(&cs, r->cond);
			for (unsigned k = 0; k < none.n; k++)
				tr_sem_error(((struct tr_sym *)none.items[k])->tok,
					     "probe condition must not reference local variables");
		}
		bind_stmt(&sc, p->body);
	}
	return tr_diag.errors ? -1 : 0;
}
