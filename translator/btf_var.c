/*
 * btf_var.c - the variables of kernel function and tracepoint probes
 * through the kernel's BTF: $param, $param->member..., $return, $$parms,
 * @cast(p, "T")->m, @entry, and the register helpers.  What a handler
 * reads is compiled into steps, "off:size:signed:shift:bits;" each
 * (gen_expr.c turns them into rt.kernel_read calls): offsets and sizes
 * are constants here, marktap.ko copies bytes without faulting.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "btf_int.h"

/* A tracepoint's binding and fields for its first n parameters: NARGS
 * at most the registers' until a handler reads past them, so that a
 * handler that does not still runs where the kernel's count of the
 * parameters is unknown (kmod/mt_tracepoint.c) */
void tr_btf_tracepoint_fields(struct tr_resolved *r, unsigned n)
{
	const struct tr_kfunc *kf = r->kfunc;

	r->marker = tr_printf("tracepoint:%s%s%s:%u", kf->module ? kf->module : "", kf->module ? ":" : "",
			      kf->name, n);
	r->fields = (struct tr_vec){0};
	r->field_types = (struct tr_vec){0};
	for (unsigned i = 0; i < n; i++) {
		tr_vec_push(&r->fields, tr_printf("arg%u", i + 1));
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
	}
}

/* The name of parameter i of kf's prototype (a tracepoint's: its data is 0) */
static const char *param_name(const struct tr_kfunc *kf, unsigned i)
{
	const struct btf_type *p = btf__type_by_id(kf->btf, kf->tracepoint ? kf->names : kf->proto);

	if (kf->tracepoint && !kf->names)
		return tr_printf("arg%u", i);
	return btf__name_by_offset(kf->btf, btf_params(p)[i].name_off);
}

/* The parameter called name: its index and type, or -1 */
static int param(const struct tr_kfunc *kf, const char *name, __u32 *type)
{
	const struct btf_type *p = kf->proto ? btf__type_by_id(kf->btf, kf->proto) : NULL;
	unsigned first = kf->tracepoint;

	for (unsigned i = first; p && i < btf_vlen(p); i++)
		if (!strcmp(param_name(kf, i), name)) {
			*type = btf_params(p)[i].type;
			return (int)(i - first);
		}
	return -1;
}

/* The parameters of one slot each (a register, or a stack slot), from
 * the first of kf's prototype (a tracepoint's: past its data) to a
 * parameter passed by value in several, or max */
static unsigned one_slot_each(const struct tr_kfunc *kf, unsigned max)
{
	const struct btf_type *p = btf__type_by_id(kf->btf, kf->proto);
	unsigned n = 0;

	for (unsigned i = kf->tracepoint; i < btf_vlen(p) && n < max; i++, n++) {
		const struct btf_type *t = tr_btf_skip_mods(kf->btf, btf_params(p)[i].type, NULL);
		if (!t || btf_is_composite(t) || btf__resolve_size(kf->btf, btf_params(p)[i].type) > 8)
			break;
	}
	return n;
}

/* The parameters the module may pass: for a function those in registers;
 * for a tracepoint those in registers, or all of them when each takes
 * one slot and they are at most TRACEPOINT_ARGS (a probe reading the
 * stack takes the tracepoint's whole count: kmod/mt_tracepoint.c);
 * either way none from a parameter passed by value in several on. */
unsigned tr_btf_in_registers(const struct tr_kfunc *kf)
{
	if (!kf->tracepoint)
		return one_slot_each(kf, KPROBE_ARGS);
	unsigned all = btf_vlen(btf__type_by_id(kf->btf, kf->proto)) - 1;
	unsigned n = one_slot_each(kf, TRACEPOINT_ARGS);
	return n > TRACEPOINT_ARGS_IN_REGS && n < all ? TRACEPOINT_ARGS_IN_REGS : n;
}

/* One read of the chain: at the value so far plus off, size bytes (0:
 * none, the address itself), then bits [shift, shift+bits) if bits. */
struct step {
	long off;
	unsigned size, shift, bits;
	bool sign;
};

static bool scalar(const struct btf_type *t)
{
	return t && (btf_is_int(t) || btf_is_ptr(t) || btf_is_enum(t) || btf_is_enum64(t));
}

/* Member name of t, in t or in its anonymous structs and unions: its
 * type and bit offset (added to *bitoff), its bitfield size. */
static bool find_member(const struct btf *b, const struct btf_type *t, const char *name, __u32 *type,
			__u32 *bitoff, __u32 *bits)
{
	const struct btf_member *m = btf_members(t);

	for (unsigned k = 0; k < btf_vlen(t); k++) {
		const char *n = btf__name_by_offset(b, m[k].name_off);
		const struct btf_type *mt;
		__u32 inner = *bitoff + btf_member_bit_offset(t, k);

		if (n && !strcmp(n, name)) {
			*type = m[k].type;
			*bitoff = inner;
			*bits = btf_member_bitfield_size(t, k);
			return true;
		}
		if ((!n || !*n) && (mt = tr_btf_skip_mods(b, m[k].type, NULL)) && btf_is_composite(mt) &&
		    find_member(b, mt, name, type, &inner, bits)) {
			*bitoff = inner;
			return true;
		}
	}
	return false;
}

/* The type and size of a scalar the steps end on, in st */
static void end_on(const struct btf *b, __u32 id, struct step *st)
{
	const struct btf_type *mt = tr_btf_skip_mods(b, id, NULL);
	long size = btf__resolve_size(b, id);

	st->size = scalar(mt) && size > 0 && size <= 8 ? (unsigned)size : 0;
	st->sign = mt && btf_is_int(mt) && (btf_int_encoding(mt) & BTF_INT_SIGNED);
	st->shift = st->bits = 0;
}

/* A bit field bits wide at bitoff of a struct at struct_off, in a unit
 * of the field's type's size: read the unit, then shift and mask */
static void bit_field(struct step *st, long struct_off, __u32 bitoff, __u32 bits, long size)
{
	long unit = size > 0 && size <= 8 ? size : 4;

	st->off = struct_off + (long)(bitoff / (unit * 8)) * unit;
	st->size = (unsigned)unit;
	st->shift = bitoff % (unsigned)(unit * 8);
	st->bits = bits;
	st->sign = false;
}

/*
 * Walk "->a->b" (or ".a", "[]" taking the next of args) from a value of
 * type id: steps pushed (as "off:size:sign:shift:bits;" to buf), or an
 * error message.  A subscript by a number is an offset of the step; by
 * any other expression, args' Kth, it is a step of its own,
 * "I:K:SIZE:COUNT;": the address moves by the index times the element's
 * SIZE at run time, the index checked against a fixed-size array's
 * COUNT elements (0: a pointer's or a flexible array's, unbounded).
 * at_address: the value is an object's address (@cast's), not a pointer
 * to follow.  addr_of: '&' before it all, the last step is the address,
 * read from nothing.  The type the chain ends on in *last_type (if asked).
 */
static const char *walk(const struct btf *b, __u32 id, const char *members, const struct tr_vec *args,
			bool at_address, bool addr_of, struct tr_buf *buf, __u32 *last_type)
{
	struct step st = {0};
	bool pending = at_address;   /* st holds a read not yet written */
	unsigned k = 0;

	while (*members) {
		const struct btf_type *t = tr_btf_skip_mods(b, id, &id);

		if (members[0] == '[') {
			const struct tr_expr *ix = args && k < args->n ? args->items[k] : NULL;
			const struct btf_type *et;
			unsigned count = 0;
			long esize;
			if (!ix)
				return "a subscript without its index";
			if (t && btf_is_ptr(t)) {       /* p[N]: through the pointer */
				if (pending)
					tr_buf_printf(buf, "%ld:8:0:0:0;", st.off);
				memset(&st, 0, sizeof(st));
				pending = true;
				id = t->type;
			} else if (t && btf_is_array(t)) {   /* a member array: in place */
				id = btf_array(t)->type;
				count = btf_array(t)->nelems;
			} else if (!pending) {
				return "a subscript of a value that is no pointer or array";
			}   /* else @cast(p, "T")[N]: the Nth T from p */
			et = tr_btf_skip_mods(b, id, NULL);
			esize = btf__resolve_size(b, id);
			if (!et || esize <= 0)
				return "a subscript of a pointer to a type of no size";
			if (ix->kind == E_NUM)   /* as stap: read where it says */
				st.off += (long)ix->num * esize;
			else    /* before the step's offset: the sum is the same */
				tr_buf_printf(buf, "I:%u:%ld:%u;", k, esize, count);
			k++;
			end_on(b, id, &st);
			members += 2;
			continue;
		}
		bool arrow = !strncmp(members, "->", 2);
		const char *name = members + (arrow ? 2 : 1);
		size_t len = strcspn(name, "-.[");
		char *field = tr_printf("%.*s", (int)len, name);

		if (t && btf_is_ptr(t)) {       /* p->m: through the pointer */
			if (pending)
				tr_buf_printf(buf, "%ld:8:0:0:0;", st.off);
			memset(&st, 0, sizeof(st));
			pending = true;
			t = tr_btf_skip_mods(b, t->type, &id);
		} else if (!pending) {
			return tr_printf("'%s' is not a pointer", field);
		}
		if (!t || !btf_is_composite(t))
			return tr_printf("member '%s' of a value that is no struct or union", field);
		__u32 bitoff = 0, bits = 0;
		long base_off;
		if (!find_member(b, t, field, &id, &bitoff, &bits))
			return tr_printf("%s has no member '%s'", btf_is_union(t) ? "union" : "struct", field);
		base_off = bitoff / 8;
		long size = btf__resolve_size(b, id);
		st.off += base_off;
		end_on(b, id, &st);
		if (bits)
			bit_field(&st, st.off - base_off, bitoff, bits, size);
		members = name + len;
	}
	if (last_type)
		*last_type = id;
	if (addr_of) {   /* &...: where the last step would have read */
		if (st.bits)
			return "the address of a bit field";
		if (!pending)
			return "'&' of a value that is not in memory";
		tr_buf_printf(buf, "%ld:0:0:0:0;", st.off);
		return NULL;
	}
	const struct btf_type *last = tr_btf_skip_mods(b, id, NULL);
	if (!st.size && last && !btf_is_array(last))
		return "the value is a struct or union, not a number (name a member)";
	tr_buf_printf(buf, "%ld:%u:%d:%u:%u;", st.off, st.size, st.sign, st.shift, st.bits);
	return NULL;
}

/* A register holding a value narrower than 64 bits: the rest is not
 * defined, so the value is cut to its type ("T:size:signed;"), or NULL */
static const char *truncation(const struct btf *b, __u32 id)
{
	const struct btf_type *t = tr_btf_skip_mods(b, id, NULL);
	long size = btf__resolve_size(b, id);

	if (!t || !scalar(t) || size <= 0 || size >= 8)
		return NULL;
	return tr_printf("T:%ld:%d;", size, btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED));
}

/* @cast(p, "struct NAME"[, "module"]): its type in *bp, or 0.  The
 * module "kernel" (or a header, "kernel<linux/x.h>") is vmlinux's BTF,
 * "kernel:NAME" (stap's) module NAME's split BTF, "<stdio.h>" (headers
 * of user space) what cc -gbtf makes of them.  A NAME that is no struct
 * or union may be a typedef's ("FILE"). */
static __u32 cast_type(struct tr_session *s, const char *spec, struct btf **bp, bool *header, const char **why)
{
	char type[256], module[128] = "";
	struct btf *b;
	const char *name = type;
	int kind = BTF_KIND_STRUCT;

	if (sscanf(spec, " , \"%255[^\"]\" , \"%127[^\"]\"", type, module) < 1) {
		*why = "@cast needs a type name";
		return 0;
	}
	if (module[0] && strcmp(module, "kernel") && strncmp(module, "kernel<", 7) && module[0] != '<' &&
	    strncmp(module, "kernel:", 7)) {
		*why = tr_printf("@cast's module \"%s\": only the kernel's types and C headers' are read here "
				 "(\"kernel\", \"kernel:MODULE\", \"<header.h>\")", module);
		return 0;
	}
	if (!strncmp(name, "struct ", 7)) {
		name += 7;
	} else if (!strncmp(name, "union ", 6)) {
		name += 6;
		kind = BTF_KIND_UNION;
	}
	if (!strncmp(module, "kernel:", 7) || module[0] == '<') {
		b = module[0] == '<' ? tr_btf_header(module, why) : tr_btf_module(s, module + 7, why);
		if (!b)
			return 0;
	} else {
		b = tr_btf_vmlinux(s);
		if (!b) {
			*why = tr_btf_load_error;
			return 0;
		}
	}
	__s32 id = btf__find_by_name_kind(b, name, kind);
	if (id <= 0 && name == type)
		id = btf__find_by_name_kind(b, name, BTF_KIND_TYPEDEF);
	if (id <= 0) {
		*why = tr_printf("type \"%s\" is not in the %s's BTF", type,
				 module[6] == ':' ? tr_printf("module %s", module + 7) :
				 module[0] == '<' ? tr_printf("headers %s", module) : "kernel");
		return 0;
	}
	*bp = b;
	*header = module[0] == '<';
	return (__u32)id;
}

/*
 * stap's autocast: a local that holds a typed pointer (fh = $fhp, or
 * &@cast(p, "T")->m) keeps the type, so that fh->fh_dentry reads through
 * it, and (buf)[1] is the second char of buf = $buf.  The value's type:
 * what a pointer of type id points to (of a size: no void), or, for an
 * address (&...), id itself when it is a struct or union.
 */
static void note_autocast(const struct btf *b, __u32 id, bool address, struct tr_expr *e)
{
	const struct btf_type *t = tr_btf_skip_mods(b, id, &id);

	if (t && !address && btf_is_ptr(t))
		t = tr_btf_skip_mods(b, t->type, &id);
	else if (!address)
		t = NULL;
	if (t && (btf_is_composite(t) || (!address && !btf_is_func_proto(t) && btf__resolve_size(b, id) > 0))) {
		e->autocast_btf = b;
		e->autocast_type = id;
	}
}

int tr_btf_autocast(struct tr_expr *e, const void *btf, unsigned type, bool report)
{
	const struct btf *b = btf;
	struct tr_buf buf = {0};
	__u32 last = 0;
	const char *why = walk(b, type, e->members ? e->members : "", &e->args, true, e->addr, &buf, &last);

	if (why) {
		if (report)
		{
			const struct btf_type *t = btf__type_by_id(b, type);
			const char *name = btf__name_by_offset(b, t->name_off);
			tr_sem_error(e->tok, "unresolved target-symbol expression: %s (through %s's type, %s%s)",
				     why, e->a->str, btf_is_struct(t) ? "struct " : btf_is_union(t) ? "union " : "",
				     name && *name ? name : "a pointer");
		}
		return -1;
	}
	e->kread = tr_buf_str(&buf);
	note_autocast(b, last, e->addr, e);
	e->type = T_LONG;
	e->target_arg = 0;
	return 0;
}

int tr_btf_cast(struct tr_session *s, struct tr_expr *e, bool report)
{
	const char *why = NULL;
	struct btf *b = NULL;
	bool header = false;   /* a header's types are a process's: no memory
				* here to read them in (a process probe casts
				* with its program's own types) */
	__u32 id = cast_type(s, e->fmt ? e->fmt : "", &b, &header, &why);
	struct tr_buf buf = {0};
	__u32 last = 0;

	if (id && header && !e->addr)
		why = "a header's types are read in a process probe; here marktap computes addresses with them "
		      "(&@cast(p, \"T\", \"<h.h>\")->m, &@cast(0, \"T\", \"<h.h>\")[1]: stap's sizeof)";
	else if (id && ((e->members && e->members[0]) || e->addr))
		why = walk(b, id, e->members ? e->members : "", &e->args, true, e->addr, &buf, &last);
	else if (id)
		why = "@cast of the kernel's types: name a member, @cast(p, \"T\")->m";
	if (why) {
		if (report)
			tr_sem_error(e->tok, "unresolved target-symbol expression: %s", why);
		return -1;
	}
	e->kread = tr_buf_str(&buf);
	if (!header)
		note_autocast(b, last, e->addr, e);
	/* a task_struct read from a task value: marktap's tasks are thread
	 * ids (task_current()), which the runtime turns into the task's
	 * address first ("K;": rt.task_addr; an address passes unchanged) */
	if (!e->addr && !strcmp(btf__name_by_offset(b, btf__type_by_id(b, id)->name_off), "task_struct"))
		e->kread = tr_printf("K;%s", e->kread);
	e->type = T_LONG;
	e->target_arg = 0;
	return 0;
}

/*
 * @entry($param) in a return probe: the call's value, which the module
 * kept at entry; @entry($p)->m reads through it at the return, as stap.
 * (@entry of a member read would need a read at the call: not yet.)
 */
static int entry(struct tr_session *s, struct tr_resolved *r, struct tr_expr *e, bool report)
{
	struct tr_expr *in = e->a;

	e->str = in->str;
	e->a = NULL;
	if (tr_btf_target(s, r, e, report))
		return -1;
	return 0;
}

/* $param, $param->m..., $return, $$parms, $$vars, $$return of r: 0, or
 * -1 (none such), -2 (a parameter marktap cannot read) after an error */
/*
 * Pretty printing: $p$, $p$$, $p->m$, $$parms$, $$vars$, $$return$, as
 * stap's.  A pointer to a struct is followed once, the struct printed as
 * {.member=value, ...}: numbers in decimal, pointers in hex, char arrays
 * and char pointers as quoted strings (a pointer's address where it
 * cannot be read), nested structs and unions as {...} ($$: expanded),
 * other arrays as [...]; at most PRETTY_VALUES values, then "...".  Each value is a piece (struct tr_pretty) gen_expr.c turns into
 * reads and one format.
 */
#define PRETTY_VALUES 48

static struct tr_pretty *piece(struct tr_vec *out, char kind, const char *text)
{
	struct tr_pretty *pc = tr_alloc(sizeof(*pc));

	pc->kind = kind;
	pc->text = text;
	tr_vec_push(out, pc);
	return pc;
}

static bool is_char(const struct btf *b, __u32 id)
{
	const struct btf_type *t = tr_btf_skip_mods(b, id, NULL);

	return t && btf_is_int(t) && btf_int_bits(t) == 8;
}

/* The members of struct or union t at offset off of the base: pieces,
 * their steps relative to the base's address */
static void pretty_members(const struct btf *b, const struct btf_type *t, long off, unsigned depth,
			   struct tr_vec *out, unsigned *left, bool *first)
{
	const struct btf_member *m = btf_members(t);

	for (unsigned k = 0; k < btf_vlen(t); k++) {
		const char *name = btf__name_by_offset(b, m[k].name_off);
		__u32 bitoff = btf_member_bit_offset(t, k), bits = btf_member_bitfield_size(t, k), id;
		const struct btf_type *mt = tr_btf_skip_mods(b, m[k].type, &id);
		long moff = off + (long)(bitoff / 8), size = btf__resolve_size(b, m[k].type);

		if (!mt)
			continue;
		if ((!name || !*name) && btf_is_composite(mt)) {   /* anonymous: its members here */
			pretty_members(b, mt, moff, depth, out, left, first);
			continue;
		}
		if (!*left) {
			piece(out, 'L', ", ...");
			return;
		}
		piece(out, 'L', tr_printf("%s.%s=", *first ? "" : ", ", name ? name : ""));
		*first = false;
		if (btf_is_composite(mt)) {
			if (depth > 1) {
				bool inner_first = true;
				piece(out, 'L', "{");
				pretty_members(b, mt, moff, depth - 1, out, left, &inner_first);
				piece(out, 'L', "}");
			} else {
				piece(out, 'L', "{...}");
			}
		} else if (btf_is_array(mt)) {
			if (is_char(b, btf_array(mt)->type))
				piece(out, 'c', NULL)->steps = tr_printf("%ld:0:0:0:0;", moff);
			else
				piece(out, 'L', "[...]");
		} else if (bits) {
			struct step st;
			bit_field(&st, off, bitoff, bits, size);
			piece(out, 'u', NULL)->steps = tr_printf("%ld:%u:0:%u:%u;", st.off, st.size, st.shift, st.bits);
			--*left;
		} else if (btf_is_ptr(mt) && is_char(b, mt->type)) {
			piece(out, 's', NULL)->steps = tr_printf("%ld:8:0:0:0;", moff);
			--*left;
		} else if (scalar(mt) && size > 0 && size <= 8) {
			bool sign = btf_is_int(mt) && (btf_int_encoding(mt) & BTF_INT_SIGNED);
			piece(out, btf_is_ptr(mt) ? 'p' : sign ? 'n' : 'u', NULL)->steps =
				tr_printf("%ld:%ld:%d:0:0;", moff, size, sign);
			--*left;
		} else {
			piece(out, 'L', "?");
		}
	}
}

/* The pieces of a value of type id: in field param, through steps (a
 * value, or the address of a struct, union or array when at_address) */
static void pretty_value(const struct btf *b, __u32 id, int param, const char *steps, bool at_address,
			 unsigned depth, struct tr_vec *out)
{
	const struct btf_type *t = tr_btf_skip_mods(b, id, &id), *to;
	unsigned left = PRETTY_VALUES;
	bool first = true;
	struct tr_pretty *pc;

	if (!t) {
		piece(out, 'L', "?");
		return;
	}
	if (btf_is_composite(t) && at_address) {
		pc = piece(out, 'A', NULL);
	} else if (btf_is_ptr(t) && is_char(b, t->type)) {
		pc = piece(out, 's', NULL);
	} else if (btf_is_ptr(t) && (to = tr_btf_skip_mods(b, t->type, NULL)) && btf_is_composite(to)) {
		pc = piece(out, 'S', NULL);   /* followed once */
		t = to;
	} else if (btf_is_array(t) && at_address) {
		pc = piece(out, is_char(b, btf_array(t)->type) ? 'c' : 'L', "[...]");
	} else {
		bool sign = btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED);
		pc = piece(out, btf_is_ptr(t) ? 'p' : sign ? 'n' : 'u', NULL);
	}
	pc->param = param;
	pc->steps = steps;
	if (pc->kind == 'A' || pc->kind == 'S') {
		piece(&pc->members, 'L', "{");
		pretty_members(b, t, 0, depth, &pc->members, &left, &first);
		piece(&pc->members, 'L', "}");
	}
}

/* $x$ ($x$$): its depth, 1 (2), the '$'s cut from str or members; else 0 */
static unsigned pretty_depth(struct tr_expr *e)
{
	const char **end = e->members && *e->members ? &e->members : &e->str;
	size_t len = strlen(*end), n = 0;

	while (n < len && n < 2 && (*end)[len - 1 - n] == '$')
		n++;
	if (!n || n == len || (end == &e->str && len - n < 2) || e->addr)
		return 0;
	*end = tr_strndup(*end, len - n);
	return (unsigned)n;
}

static int pretty_target(struct tr_session *s, struct tr_resolved *r, struct tr_expr *e, unsigned depth,
			 bool report)
{
	const struct tr_kfunc *kf = r->kfunc;
	const struct btf_type *proto = kf->proto ? btf__type_by_id(kf->btf, kf->proto) : NULL;
	const char *n = e->str + 1;

	if (!proto || kf->kprobe || (n[0] == '$' && e->members))
		return tr_btf_target(s, r, e, report);   /* its error */
	if (!strcmp(n, "$parms") || !strcmp(n, "$vars")) {
		if (kf->tracepoint)
			tr_btf_tracepoint_fields(r, tr_btf_in_registers(kf));
		for (unsigned i = 0; i < tr_btf_in_registers(kf); i++) {
			const char *name = tr_btf_param_name(r, i);
			if (!name)
				break;
			piece(&e->pretty, 'L', tr_printf("%s%s=", i ? " " : "", name));
			pretty_value(kf->btf, btf_params(proto)[i + kf->tracepoint].type, (int)i + 1,
				     truncation(kf->btf, btf_params(proto)[i + kf->tracepoint].type), false,
				     depth, &e->pretty);
		}
	} else if (!strcmp(n, "$return") || !strcmp(n, "return")) {
		if (!kf->ret || kf->tracepoint || !proto->type)
			return tr_btf_target(s, r, e, report);
		if (n[0] == '$')
			piece(&e->pretty, 'L', "return=");
		pretty_value(kf->btf, proto->type, KPROBE_ARGS + 1, truncation(kf->btf, proto->type), false,
			     depth, &e->pretty);
	} else {   /* a parameter, perhaps through members */
		__u32 type = 0, last = 0;
		int i = param(kf, n, &type);
		if (i < 0 || (unsigned)i >= tr_btf_in_registers(kf))
			return tr_btf_target(s, r, e, report);   /* why it cannot */
		if (kf->tracepoint && i >= (int)r->fields.n)
			tr_btf_tracepoint_fields(r, tr_btf_in_registers(kf));
		struct tr_buf buf = {0};
		const char *steps = truncation(kf->btf, type);
		bool at_address = false;
		if (e->members && *e->members) {
			const char *why = walk(kf->btf, type, e->members, &e->args, false, false, &buf, &last);
			if (why && !strncmp(why, "the value is a struct", 21)) {   /* where it is, then */
				buf = (struct tr_buf){0};
				why = walk(kf->btf, type, e->members, &e->args, false, true, &buf, &last);
				at_address = true;
			}
			if (why) {
				if (report)
					tr_sem_error(e->tok, "unresolved target-symbol expression: %s", why);
				return -1;
			}
			steps = tr_buf_str(&buf);
			type = last;
		}
		pretty_value(kf->btf, type, i + 1, steps, at_address, depth, &e->pretty);
	}
	e->target_arg = TR_TARGET_PRETTY;
	e->type = T_STRING;
	return 0;
}

int tr_btf_target(struct tr_session *s, struct tr_resolved *r, struct tr_expr *e, bool report)
{
	const struct tr_kfunc *kf = r->kfunc;
	const char *n = e->str + 1, *why = NULL;
	__u32 type = 0;
	int i = -1;
	bool unreadable = false;

	if (e->str[0] == '@' && !strcmp(e->str, "@cast"))
		return tr_btf_cast(s, e, report);
	unsigned depth = e->str[0] == '$' ? pretty_depth(e) : 0;
	if (depth)
		return pretty_target(s, r, e, depth, report);
	if (!strcmp(e->str, "@entry") && kf->ret && e->a && e->a->kind == E_TARGET && e->a->str[0] == '$' &&
	    !e->a->members && !e->addr)
		return entry(s, r, e, report);
	if (!strcmp(e->str, "@entry") && kf->ret && !kf->kprobe && !kf->tracepoint && e->a &&
	    !e->addr && !e->members && !e->args.n) {
		/* any other expression: evaluated at the call, when the module
		 * fires the return's marker there too (tr_btf_entry_points) */
		e->target_arg = TR_TARGET_ENTRY;
		e->type = T_UNKNOWN;   /* its operand's (elab_type.c) */
		return 0;
	}
	if (e->str[0] != '$' || (e->addr && !e->members) || (e->args.n && !e->members)) {
		why = e->addr ? "'&' of a parameter: it is in a register, not in memory" :
		      !strcmp(e->str, "@entry") && !kf->ret ? "@entry is only in a .return probe" :
		      !strcmp(e->str, "@entry") ? "@entry of anything but a parameter (a read at the call) "
						  "is not in marktap yet" : e->str[0] == '@' ?
		      tr_printf("%s is not in marktap yet", e->str) : "array subscripts are not in marktap yet";
	} else if (kf->kprobe) {
		why = !strncmp(kf->name, "0x", 2) ? "a probe at an absolute address has no variables (stap's "
						    "neither)" :
		      "kprobe.function probes have no variables (stap's neither): use kernel.function";
	} else if (kf->tracepoint && (!strcmp(n, "$return") || !strcmp(n, "return"))) {
		why = "a tracepoint has no return value";
	} else if (!kf->proto) {
		why = "the function is not in the kernel's BTF";
	} else if (!strcmp(n, "$parms") || !strcmp(n, "$vars") || !strcmp(n, "$return")) {
		if (e->members || (!strcmp(n, "$return") && !kf->ret))
			why = "unresolved target-symbol expression";
		e->target_arg = !strcmp(n, "$return") ? -7 : -3;
		e->type = T_STRING;
	} else if (!strcmp(n, "return")) {
		i = KPROBE_ARGS;
		type = btf__type_by_id(kf->btf, kf->proto)->type;
		if (!kf->ret || !type)
			why = !kf->ret ? "$return is only in a .return probe" : "the function returns void";
	} else if ((i = param(kf, n, &type)) < 0) {
		why = tr_printf("unable to find local '%s', [man error::dwarf] dieoffset %s in kernel, "
				"near the parameters of %s: %s", n, "(BTF)", kf->name, tr_btf_vars(r));
	} else if ((unsigned)i >= tr_btf_in_registers(kf) && kf->tracepoint) {
		unreadable = true;
		why = (unsigned)i >= one_slot_each(kf, TRACEPOINT_ARGS) ?
		      tr_printf("parameter '%s' of tracepoint %s comes after a struct passed by "
				"value: marktap.ko passes the parameters before it", n, kf->name) :
		      tr_printf("parameter '%s' of tracepoint %s is on the stack, and the tracepoint "
				"passes a struct by value or more than %d parameters: marktap.ko "
				"passes the %d in registers", n, kf->name, TRACEPOINT_ARGS,
				TRACEPOINT_ARGS_IN_REGS);
	} else if ((unsigned)i >= tr_btf_in_registers(kf)) {
		unreadable = true;
		why = tr_printf("parameter '%s' of %s is passed on the stack or after a struct passed "
				"by value: marktap reads the first %d register arguments", n, kf->name,
				KPROBE_ARGS);
	}
	if (!why && kf->tracepoint && (i >= (int)r->fields.n || e->target_arg == -3))
		tr_btf_tracepoint_fields(r, tr_btf_in_registers(kf));   /* past the registers, or $$parms */
	if (!why && i >= 0) {
		struct tr_buf buf = {0};
		e->target_arg = i + 1;
		e->type = T_LONG;
		__u32 last = type;
		if (e->members && (why = walk(kf->btf, type, e->members, &e->args, false, e->addr, &buf, &last)) == NULL)
			e->kread = tr_buf_str(&buf);
		else if (!e->members)
			e->kread = truncation(kf->btf, type);
		if (!why)
			note_autocast(kf->btf, last, e->addr, e);
	}
	if (why) {
		if (report)
			tr_sem_error(e->tok, "%s%s", strncmp(why, "unresolved", 10) && strncmp(why, "unable", 6) ?
				     "unresolved target-symbol expression: " : "", why);
		/* a parameter marktap cannot pass still exists: @defined() is
		 * true, and its use says why it cannot be read */
		return unreadable ? -2 : -1;
	}
	return 0;
}

/*
 * A .return probe with @entry(expr): its points' bindings become
 * "kprobe:...:return[:N]:entry", whose marker fires at the call too with
 * two more fields, the call's cookie and 1 (at the return: 0); the
 * handler keeps expr's values under the cookie (gen.c).
 */
void tr_btf_entry_points(struct tr_probe *p)
{
	for (unsigned i = 0; i < p->resolved.n; i++) {
		struct tr_resolved *r = p->resolved.items[i];
		if (!r->kfunc || !r->kfunc->ret || r->kfunc_entry)
			continue;
		r->kfunc_entry = true;
		r->marker = tr_printf("%s:entry", r->marker);
		tr_vec_push(&r->fields, "cookie");
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
		tr_vec_push(&r->fields, "entry");
		tr_vec_push(&r->field_types, (void *)(intptr_t)T_LONG);
	}
}

const char *tr_btf_store_refusal(const struct tr_resolved *r)
{
	const struct tr_kfunc *kf = r->kfunc;

	return !kf ? "not a kernel function probe" :
	       kf->tracepoint ? "a tracepoint's parameters are values the kernel passed, not "
				"registers a function resumes with" :
	       kf->kprobe ? "kprobe.function probes have no variables (stap's neither)" : NULL;
}

/* -L: " $file:struct file* $buf:char* ..." */
const char *tr_btf_vars(const struct tr_resolved *r)
{
	const struct tr_kfunc *kf = r->kfunc;
	const struct btf_type *p = kf && kf->proto ? btf__type_by_id(kf->btf, kf->proto) : NULL;
	struct tr_buf b = {0};

	if (!p || kf->kprobe)
		return "";
	for (unsigned i = kf->tracepoint; i < btf_vlen(p); i++) {
		const char *name = param_name(kf, i);
		if (!name || !*name)
			continue;
		tr_buf_printf(&b, " $%s:", name);
		tr_btf_type_name(kf->btf, btf_params(p)[i].type, &b);
	}
	if (kf->ret && p->type) {
		tr_buf_puts(&b, " $return:");
		tr_btf_type_name(kf->btf, p->type, &b);
	}
	return tr_buf_str(&b);
}

/* The parameter names of r in register order, for $$parms ("" past the last) */
const char *tr_btf_param_name(const struct tr_resolved *r, unsigned i)
{
	const struct tr_kfunc *kf = r->kfunc;
	const struct btf_type *p = kf && kf->proto ? btf__type_by_id(kf->btf, kf->proto) : NULL;

	if (!p || kf->kprobe || i >= (kf->tracepoint ? r->fields.n : tr_btf_in_registers(kf)))
		return NULL;
	return param_name(kf, i + kf->tracepoint);
}

/*
 * stap's register helpers in a kernel function's handler: the arguments
 * the module gives (the first six, as the registers hold them) and the
 * return value, cut to the helper's type.  In a function the script
 * calls, or with an argument number not a literal 1..6, they stay the
 * tapset's (registers.stp: an error at the call).
 */
bool tr_btf_register_call(struct tr_resolved *r, struct tr_expr *e)
{
	static const struct { const char *name, *cut; } helpers[] = {
		{ "int_arg", "T:4:1;" }, { "s32_arg", "T:4:1;" }, { "uint_arg", "T:4:0;" },
		{ "u32_arg", "T:4:0;" }, { "long_arg", NULL }, { "ulong_arg", NULL },
		{ "pointer_arg", NULL }, { "s64_arg", NULL }, { "u64_arg", NULL },
		{ "longlong_arg", NULL }, { "ulonglong_arg", NULL }, { "returnval", NULL },
	};
	const struct tr_expr *n = e->args.n == 1 ? e->args.items[0] : NULL;
	bool ret = !strcmp(e->op, "returnval");
	/* a tracepoint's handler gets its parameters (no return), a function's six */
	int64_t max = r->kfunc->tracepoint ? (int64_t)tr_btf_in_registers(r->kfunc) : KPROBE_ARGS;

	for (unsigned i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		if (strcmp(e->op, helpers[i].name))
			continue;
		if (ret ? e->args.n || !r->kfunc->ret : !n || n->kind != E_NUM || n->num < 1 || n->num > max)
			return false;
		if (r->kfunc->tracepoint && n->num > (int64_t)r->fields.n)
			tr_btf_tracepoint_fields(r, (unsigned)max);
		e->kind = E_TARGET;
		e->str = tr_printf("%s(%lld)", e->op, ret ? 0LL : (long long)n->num);
		e->target_arg = ret ? KPROBE_ARGS + 1 : (int)n->num;
		e->kread = helpers[i].cut;
		e->type = T_LONG;
		e->args = (struct tr_vec){0};
		return true;
	}
	return false;
}

