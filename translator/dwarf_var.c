/*
 * dwarf_var.c - the $variables of a user-space function probe, from DWARF
 * (libdw).
 *
 * For each $variable a probe reads (elab_bind.c asks), a "recipe": the
 * few steps that compute its value from the registers and memory of the
 * process stopped at the probe address (dwarf.c found it).  Recipes
 * travel in the script's manifest to the traced process, whose trap
 * handler (runtime/script/sdt.c) evaluates them in plain C: the process
 * never reads DWARF.
 *
 * A recipe is a list of operations on a stack of 64-bit values, separated
 * by spaces:
 *	rN	push register N (DWARF numbering, x86-64: 0 rax .. 16 rip)
 *	aX	push X (hex) plus the object's load bias (a static's address)
 *	kN	push the constant N
 *	+N	add N to the top
 *	mSs mSu	replace the top (an address) by the S bytes there, sign- or
 *		zero-extended
 *	tSs tSu	truncate the top to S bytes, sign- or zero-extended
 *	P S X & | ^ < > R	the two top values: plus, minus, times, and, or,
 *		xor, shift left, right, right arithmetic
 *	N ~	the top negated, complemented
 * The locations DWARF gives for the probe address are resolved here (a
 * location list picks its entry, DW_OP_fbreg its frame base and the frame
 * base its CFA from the call frame information), so recipes are short.
 */
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dwarf_int.h"

/* ---- types ---------------------------------------------------------------- */

/* The type of die without typedefs and qualifiers; false for void. */
static bool peel(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;
	Dwarf_Die cur;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &cur))
		return false;
	for (int depth = 0; depth < 32; depth++) {
		int tag = dwarf_tag(&cur);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
			break;
		if (!dwarf_attr_integrate(&cur, DW_AT_type, &a) || !dwarf_formref_die(&a, &cur))
			return false;
	}
	*type = cur;
	return true;
}

/* Type names as stap -L prints them: "int", "struct pt*", "char const*". */
static const char *type_name(Dwarf_Die *die, int depth)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	const char *n;

	if (depth > 16)
		return "?";
	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return "void";
	n = dwarf_diename(&t);
	switch (dwarf_tag(&t)) {
	case DW_TAG_pointer_type:
		return tr_printf("%s*", type_name(&t, depth + 1));
	case DW_TAG_const_type:
		return tr_printf("%s const", type_name(&t, depth + 1));
	case DW_TAG_volatile_type:
		return tr_printf("%s volatile", type_name(&t, depth + 1));
	case DW_TAG_restrict_type:
		return type_name(&t, depth + 1);
	case DW_TAG_array_type:
		return tr_printf("%s[]", type_name(&t, depth + 1));
	case DW_TAG_structure_type:
		return tr_printf("struct %s", n ? n : "{...}");
	case DW_TAG_class_type:
		return tr_printf("class %s", n ? n : "{...}");
	case DW_TAG_reference_type:
		return tr_printf("%s&", type_name(&t, depth + 1));
	case DW_TAG_rvalue_reference_type:
		return tr_printf("%s&&", type_name(&t, depth + 1));
	case DW_TAG_union_type:
		return tr_printf("union %s", n ? n : "{...}");
	case DW_TAG_enumeration_type:
		return tr_printf("enum %s", n ? n : "{...}");
	case DW_TAG_subroutine_type:
		return "void(*)()";
	default:
		return n ? n : "?";
	}
}

static uint64_t type_size(Dwarf_Die *t)
{
	Dwarf_Word s;
	int tag = dwarf_tag(t);

	if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type)
		return 8;
	return dwarf_aggregate_size(t, &s) == 0 ? s : 0;
}

static bool type_signed(Dwarf_Die *t)
{
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;

	if (dwarf_tag(t) == DW_TAG_enumeration_type)
		return true;
	if (dwarf_formudata(dwarf_attr_integrate(t, DW_AT_encoding, &a), &enc) != 0)
		return false;
	return enc == DW_ATE_signed || enc == DW_ATE_signed_char;
}

/* ---- locations -------------------------------------------------------------- */

/* The call frame address at pc, as a recipe ("r6 +16"), from .debug_frame
 * or .eh_frame; NULL if neither covers pc. */
static const char *cfa_recipe(struct dwmod *m, uint64_t pc)
{
	for (int pass = 0; pass < 2; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass ? dwfl_module_eh_cfi(m->mod, &bias) : dwfl_module_dwarf_cfi(m->mod, &bias);
		Dwarf_Frame *frame;
		Dwarf_Op *ops;
		size_t n;
		if (!cfi || dwarf_cfi_addrframe(cfi, pc + m->bias - bias, &frame) != 0)
			continue;
		if (dwarf_frame_cfa(frame, &ops, &n) == 0 && n == 1 && ops[0].atom >= DW_OP_breg0 &&
		    ops[0].atom <= DW_OP_breg16) {
			const char *r = tr_printf("r%d +%" PRId64, ops[0].atom - DW_OP_breg0, (int64_t)ops[0].number);
			free(frame);
			return r;
		}
		if (n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number <= 16) {
			const char *r = tr_printf("r%d +%" PRId64, (int)ops[0].number, (int64_t)ops[0].number2);
			free(frame);
			return r;
		}
		free(frame);
	}
	return NULL;
}

/* A location expression as a recipe; *value: the recipe gives the
 * variable's value (a register, DW_OP_stack_value) rather than its address.
 * NULL with *why for what this reader does not evaluate. */
static const char *ops_recipe(const struct tr_dwfunc *f, Dwarf_Attribute *attr, const Dwarf_Op *ops,
			      size_t n, bool *value, const char **why, int depth)
{
	struct tr_buf b = {0};
	struct dwmod *m = f->m;
	Dwarf_Die fnd = f->fb, *fn = &fnd;
	uint64_t pc = f->entry;

	*value = false;
	for (size_t i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;
		const char *sep = b.len ? " " : "";
		if (op >= DW_OP_reg0 && op <= DW_OP_reg16 && n == 1) {
			tr_buf_printf(&b, "r%d", op - DW_OP_reg0);
			*value = true;
		} else if (op == DW_OP_regx && n == 1 && ops[i].number <= 16) {
			tr_buf_printf(&b, "r%" PRIu64, (uint64_t)ops[i].number);
			*value = true;
		} else if (op >= DW_OP_breg0 && op <= DW_OP_breg16) {
			tr_buf_printf(&b, "%sr%d +%" PRId64, sep, op - DW_OP_breg0, (int64_t)ops[i].number);
		} else if (op == DW_OP_bregx && ops[i].number <= 16) {
			tr_buf_printf(&b, "%sr%d +%" PRId64, sep, (int)ops[i].number, (int64_t)ops[i].number2);
		} else if (op == DW_OP_addr) {
			tr_buf_printf(&b, "%sa%" PRIx64, sep, (uint64_t)ops[i].number);
		} else if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			tr_buf_printf(&b, "%sk%d", sep, op - DW_OP_lit0);
		} else if (op == DW_OP_const1u || op == DW_OP_const2u || op == DW_OP_const4u ||
			   op == DW_OP_const8u || op == DW_OP_constu) {
			tr_buf_printf(&b, "%sk%" PRIu64, sep, (uint64_t)ops[i].number);
		} else if (op == DW_OP_const1s || op == DW_OP_const2s || op == DW_OP_const4s ||
			   op == DW_OP_const8s || op == DW_OP_consts) {
			tr_buf_printf(&b, "%sk%" PRId64, sep, (int64_t)ops[i].number);
		} else if ((op == DW_OP_plus || op == DW_OP_minus || op == DW_OP_mul || op == DW_OP_and ||
			    op == DW_OP_or || op == DW_OP_xor || op == DW_OP_shl || op == DW_OP_shr ||
			    op == DW_OP_shra || op == DW_OP_neg || op == DW_OP_not) && b.len) {
			static const struct { uint8_t op; char c; } two[] = {
				{ DW_OP_plus, 'P' }, { DW_OP_minus, 'S' }, { DW_OP_mul, 'X' }, { DW_OP_and, '&' },
				{ DW_OP_or, '|' }, { DW_OP_xor, '^' }, { DW_OP_shl, '<' }, { DW_OP_shr, '>' },
				{ DW_OP_shra, 'R' }, { DW_OP_neg, 'N' }, { DW_OP_not, '~' },
			};
			for (unsigned k = 0; k < sizeof(two) / sizeof(two[0]); k++)
				if (two[k].op == op)
					tr_buf_printf(&b, " %c", two[k].c);
		} else if (op == DW_OP_deref && b.len) {
			tr_buf_puts(&b, " m8u");
		} else if (op == DW_OP_deref_size && b.len && (ops[i].number == 1 || ops[i].number == 2 ||
								 ops[i].number == 4 || ops[i].number == 8)) {
			tr_buf_printf(&b, " m%uu", (unsigned)ops[i].number);
		} else if (op == DW_OP_plus_uconst && b.len) {
			tr_buf_printf(&b, " +%" PRIu64, (uint64_t)ops[i].number);
		} else if (op == DW_OP_stack_value && i == n - 1 && b.len) {
			*value = true;
		} else if ((op == DW_OP_entry_value || op == DW_OP_GNU_entry_value) && attr && depth == 0 &&
			   i + 2 == n && ops[i + 1].atom == DW_OP_stack_value) {
			/* the value a register had at the entry: the register
			 * itself when the probe is at the entry */
			Dwarf_Attribute inner;
			Dwarf_Op *iops;
			size_t in;
			bool ivalue;
			const char *r;
			if (pc != f->lowpc) {
				*why = "the value at the function's entry is not kept (DW_OP_entry_value)";
				return NULL;
			}
			if (dwarf_getlocation_attr(attr, &ops[i], &inner) != 0 ||
			    dwarf_getlocation(&inner, &iops, &in) != 0 || in != 1 ||
			    !(r = ops_recipe(f, NULL, iops, in, &ivalue, why, depth + 1)) || !ivalue) {
				if (!*why)
					*why = "an entry value this reader does not evaluate";
				return NULL;
			}
			tr_buf_printf(&b, "%s%s", sep, r);
			*value = true;
			i++;
		} else if (op == DW_OP_call_frame_cfa) {
			const char *cfa = cfa_recipe(m, pc);
			if (!cfa) {
				*why = "no call frame information at this address";
				return NULL;
			}
			tr_buf_printf(&b, "%s%s", sep, cfa);
		} else if (op == DW_OP_fbreg && depth == 0) {
			Dwarf_Attribute fa;
			Dwarf_Op *fops;
			size_t fn_n;
			bool fvalue;
			const char *fb;
			if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &fa) ||
			    dwarf_getlocation_addr(&fa, pc, &fops, &fn_n, 1) != 1) {
				*why = "no frame base at this address";
				return NULL;
			}
			fb = ops_recipe(f, &fa, fops, fn_n, &fvalue, why, depth + 1);
			if (!fb)
				return NULL;
			tr_buf_printf(&b, "%s%s +%" PRId64, sep, fb, (int64_t)ops[i].number);
		} else {
			*why = tr_printf("DWARF operation 0x%x is not evaluated by marktap", op);
			return NULL;
		}
	}
	if (!b.len) {
		*why = "empty location";
		return NULL;
	}
	return tr_buf_str(&b);
}

/* ---- errors: none while @defined() asks ------------------------------------ */

static bool quiet;

static void dw_err(const struct tr_token *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dw_err(const struct tr_token *t, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	if (quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tr_sem_error(t, "%s", msg);
}

/* ---- variables ---------------------------------------------------------------- */

/* Parameters, in order, then (not params) locals in scope at pc; those
 * of inner blocks too if blocks. */
static void scope_vars_in(Dwarf_Die *scope, uint64_t pc, bool params, bool blocks, struct tr_vec *out,
			  int depth)
{
	Dwarf_Die c;

	if (depth > 16 || dwarf_child(scope, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		if ((tag == DW_TAG_formal_parameter || (!params && tag == DW_TAG_variable)) && die_name(&c)) {
			Dwarf_Die *v = tr_alloc(sizeof(*v));
			*v = c;
			tr_vec_push(out, v);
		} else if (!params && blocks && tag == DW_TAG_lexical_block && dwarf_haspc(&c, pc) == 1) {
			scope_vars_in(&c, pc, params, blocks, out, depth + 1);
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static void scope_vars(Dwarf_Die *scope, uint64_t pc, bool params, struct tr_vec *out, int depth)
{
	scope_vars_in(scope, pc, params, true, out, depth);
}

const char *tr_dw_vars(const struct tr_dwfunc *f)
{
	struct tr_vec vars = {0};
	struct tr_buf b = {0};
	Dwarf_Die fn = f->die;

	if (!f->has_die)
		return "";
	scope_vars_in(&fn, f->entry, false, false, &vars, 0);   /* as stap -L: not inner blocks' */
	for (unsigned i = 0; i < vars.n; i++) {
		Dwarf_Die *v = vars.items[i];
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t n;
		/* as stap lists them: only where they have a place */
		if (!dwarf_hasattr_integrate(v, DW_AT_const_value) &&
		    (!dwarf_attr_integrate(v, DW_AT_location, &a) ||
		     dwarf_getlocation_addr(&a, f->entry, &ops, &n, 1) != 1))
			continue;
		tr_buf_printf(&b, " $%s:%s", die_name(v), type_name(v, 0));
	}
	free(vars.items);
	return b.len ? tr_buf_str(&b) : "";
}

/* The recipe that reads a value of type t: from the address on the stack,
 * or the register value itself (truncated). */
static const char *fetch(const char *recipe, bool value, Dwarf_Die *t)
{
	uint64_t size = type_size(t);
	char sign = type_signed(t) ? 's' : 'u';

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return NULL;
	if (value)
		return size == 8 ? recipe : tr_printf("%s t%" PRIu64 "%c", recipe, size, sign);
	return tr_printf("%s m%" PRIu64 "%c", recipe, size, sign);
}

/* Where the variable is at pc: its recipe (an address unless *value), or
 * NULL after a semantic error in stap's words. */
static const char *var_location(const struct tr_dwfunc *f, Dwarf_Die *var, const struct tr_token *tok,
				bool *value)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	const char *why = NULL, *r;
	uint64_t off = dwarf_dieoffset(var);

	*value = false;
	if (dwarf_attr_integrate(var, DW_AT_const_value, &a)) {
		Dwarf_Sword v;
		if (dwarf_formsdata(&a, &v) == 0) {
			*value = true;
			return tr_printf("k%" PRId64, (int64_t)v);
		}
	}
	if (!dwarf_attr_integrate(var, DW_AT_location, &a)) {
		dw_err(tok, "failed to retrieve location attribute for '%s' [man error::dwarf] "
			     "(dieoffset: 0x%" PRIx64 ")", die_name(var), off);
		return NULL;
	}
	if (dwarf_getlocation_addr(&a, f->entry, &ops, &n, 1) != 1 || n == 0) {
		dw_err(tok, "not accessible at this address (pc: 0x%" PRIx64 ") [man error::dwarf]", f->entry);
		return NULL;
	}
	r = ops_recipe(f, &a, ops, n, value, &why, 0);
	if (!r)
		dw_err(tok, "cannot read '%s' at pc 0x%" PRIx64 ": %s", die_name(var), f->entry, why);
	return r;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "a, b, c": the members of a struct, sorted, as stap suggests them. */
static const char *member_names(Dwarf_Die *st)
{
	struct tr_vec names = {0};
	struct tr_buf b = {0};
	Dwarf_Die m;

	if (dwarf_child(st, &m) == 0)
		do {
			if (dwarf_tag(&m) == DW_TAG_member && dwarf_diename(&m))
				tr_vec_push(&names, (void *)dwarf_diename(&m));
		} while (dwarf_siblingof(&m, &m) == 0);
	if (names.n)
		qsort(names.items, names.n, sizeof(void *), by_str);
	for (unsigned i = 0; i < names.n; i++)
		tr_buf_printf(&b, "%s%s", i ? ", " : "", (const char *)names.items[i]);
	free(names.items);
	return b.len ? tr_buf_str(&b) : "none";
}

/* A member's offset: a constant, or DWARF 2's expression of one
 * (DW_OP_plus_uconst N, gcc -gdwarf-2 -gstrict-dwarf). */
static bool member_offset(Dwarf_Attribute *a, Dwarf_Word *off)
{
	Dwarf_Op *ops;
	size_t n;

	if (dwarf_formudata(a, off) == 0)
		return true;
	if (dwarf_getlocation(a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
		*off = ops[0].number;
		return true;
	}
	return false;
}

/*
 * A bit field: *recipe (the address of its storage unit, at `off` of the
 * record) becomes its value.  Its place is DW_AT_data_bit_offset, bits
 * from the record's start, or in DWARF 2 and 3 DW_AT_bit_offset, bits
 * from the most significant end of a storage unit of DW_AT_byte_size
 * bytes at DW_AT_data_member_location (x86-64 is little-endian: bit 0 is
 * the least significant of the lowest byte).  The fewest bytes (1, 2, 4
 * or 8) that hold it are read from its first byte, shifted left to drop
 * the bits above it, then right, arithmetic for a signed type, to drop
 * those below.
 */
static bool walked_bit_field;          /* the last walk_members() ended at one */

static bool bit_field(Dwarf_Die *m, Dwarf_Die *t, Dwarf_Word off, uint64_t record_size, const char **recipe,
		      bool *value, const struct tr_token *tok, int len, const char *name)
{
	Dwarf_Attribute a;
	Dwarf_Word size = 0, pos = 0;
	Dwarf_Sword old = 0;   /* negative where a packed field passes its unit's end */
	uint64_t first, shift, bytes;

	if (!dwarf_attr_integrate(m, DW_AT_bit_size, &a) || dwarf_formudata(&a, &size) != 0 || !size ||
	    size > 64) {
		dw_err(tok, "member '%.*s': a bit field without a usable size", len, name);
		return false;
	}
	if (dwarf_attr_integrate(m, DW_AT_data_bit_offset, &a) && dwarf_formudata(&a, &pos) == 0) {
		pos += 8 * off;   /* (no DW_AT_data_member_location alongside: off is 0) */
	} else if (dwarf_attr_integrate(m, DW_AT_bit_offset, &a) && dwarf_formsdata(&a, &old) == 0) {
		int64_t at;
		Dwarf_Word unit = dwarf_hasattr_integrate(m, DW_AT_byte_size) ? (Dwarf_Word)dwarf_bytesize(m)
										 : type_size(t);
		at = 8 * (int64_t)off + 8 * (int64_t)unit - old - (int64_t)size;
		if (!unit || unit > 8 || old < -64 || old > 64 || at < 0) {
			dw_err(tok, "member '%.*s': a bit field outside its record", len, name);
			return false;
		}
		pos = (Dwarf_Word)at;
	} else {
		dw_err(tok, "member '%.*s': a bit field without a bit offset", len, name);
		return false;
	}
	first = pos / 8;
	shift = pos % 8;
	for (bytes = 1; bytes < 8 && 8 * bytes < shift + size; bytes *= 2)
		;
	if (shift + size > 8 * bytes) {
		dw_err(tok, "member '%.*s': a bit field across more than 8 bytes is not read by marktap", len,
		       name);
		return false;
	}
	if (first + bytes > record_size && record_size >= bytes) {
		/* not past the record's end (its page's, maybe): the same
		 * bytes, read from lower down, still hold the field */
		shift += 8 * (first - (record_size - bytes));
		first = record_size - bytes;
	}
	/* the recipe was the record's address plus off: back to the record */
	*recipe = tr_printf("%s +%" PRId64 " m%" PRIu64 "u k%" PRIu64 " < k%" PRIu64 " %c", *recipe,
			    (int64_t)first - (int64_t)off, bytes, 64 - shift - size, 64 - size,
			    type_signed(t) ? 'R' : '>');
	*value = true;
	walked_bit_field = true;
	return true;
}

/* "->m" and "[i]" after the variable: *recipe and *t move along. */
static bool walk_members(const struct tr_expr *e, const char **recipe, bool *value, Dwarf_Die *t)
{
	const char *p = e->members ? e->members : "";
	unsigned index = 0;

	walked_bit_field = false;
	while (*p) {
		int tag = dwarf_tag(t);
		if (p[0] == '[') {
			const struct tr_expr *ix = e->args.items[index++];
			Dwarf_Die elem;
			if (!ix || ix->kind != E_NUM) {
				dw_err(ix ? ix->tok : e->tok, "marktap reads $var[i] with a literal index only");
				return false;
			}
			if (tag == DW_TAG_pointer_type) {
				if (!*value)
					*recipe = tr_printf("%s m8u", *recipe);
			} else if (tag != DW_TAG_array_type || *value) {
				dw_err(e->tok, "invalid access: '%s' is not an array or a pointer",
					     type_name(t, 0));
				return false;
			}
			if (!peel(t, &elem) || !type_size(&elem)) {
				dw_err(e->tok, "cannot index a pointer to void");
				return false;
			}
			*recipe = tr_printf("%s +%" PRId64, *recipe, ix->num * (int64_t)type_size(&elem));
			*value = false;
			*t = elem;
			p += 2;
			continue;
		}
		/* "->name" */
		const char *name = p + 2;
		size_t len = strcspn(name, "-[");
		Dwarf_Die st, m;
		bool found = false;
		if (tag == DW_TAG_pointer_type) {
			if (!peel(t, &st)) {
				dw_err(e->tok, "cannot dereference a pointer to void");
				return false;
			}
			if (!*value)
				*recipe = tr_printf("%s m8u", *recipe);
		} else if (!*value) {
			st = *t;   /* a struct by value: $s->m as stap allows */
		} else {
			dw_err(e->tok, "'%s' is in a register: no member to read", type_name(t, 0));
			return false;
		}
		tag = dwarf_tag(&st);
		if (!is_record(tag) || dwarf_child(&st, &m) != 0) {
			dw_err(e->tok, "invalid access '->%.*s' vs. %s", (int)len, name, type_name(t, 0));
			return false;
		}
		do {
			const char *mn = dwarf_diename(&m);
			found = dwarf_tag(&m) == DW_TAG_member && mn && strlen(mn) == len && !strncmp(mn, name, len);
		} while (!found && dwarf_siblingof(&m, &m) == 0);
		if (!found) {
			dw_err(e->tok, "unable to find member '%.*s' for %s (alternatives: %s)", (int)len, name,
			       dwarf_diename(&st) ? tr_printf("%s %s", tag == DW_TAG_union_type ? "union" :
								   tag == DW_TAG_class_type ? "class" : "struct",
							      dwarf_diename(&st)) : "struct {...}",
			       member_names(&st));
			return false;
		}
		Dwarf_Attribute a;
		Dwarf_Word off = 0;
		if (dwarf_attr_integrate(&m, DW_AT_data_member_location, &a) && !member_offset(&a, &off)) {
			dw_err(e->tok, "member '%.*s': computed offsets are not read by marktap", (int)len, name);
			return false;
		}
		if (!peel(&m, t))
			return false;
		*recipe = tr_printf("%s +%" PRIu64, *recipe, (uint64_t)off);
		*value = false;
		if (dwarf_hasattr_integrate(&m, DW_AT_bit_size) &&
		    !bit_field(&m, t, off, type_size(&st), recipe, value, e->tok, (int)len, name))
			return false;
		p = name + len;
	}
	return true;
}

/* $$parms, $$locals, $$vars: "Sname=recipe,name=?,..." (a string built
 * by the process), the parameters, the locals in scope or both. */
static const char *parms_recipe(const struct tr_dwfunc *f, bool parms, bool locals)
{
	struct tr_vec vars = {0};
	struct tr_buf b = {0};
	Dwarf_Die fn = f->die;
	unsigned k = 0;

	tr_buf_putc(&b, 'S');
	if (f->has_die)
		scope_vars(&fn, f->entry, !locals, &vars, 0);
	for (unsigned i = 0; i < vars.n; i++) {
		Dwarf_Die *v = vars.items[i], t;
		if (dwarf_tag(v) == DW_TAG_formal_parameter ? !parms : !locals)
			continue;
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t n;
		bool value = false;
		const char *why = NULL, *r = NULL;
		tr_buf_printf(&b, "%s%s=", k++ ? "," : "", die_name(v));
		if (!peel(v, &t)) {
			tr_buf_putc(&b, '?');
			continue;
		}
		if (is_record(dwarf_tag(&t))) {
			tr_buf_puts(&b, "!{...}");
			continue;
		}
		if (dwarf_attr_integrate(v, DW_AT_location, &a) &&
		    dwarf_getlocation_addr(&a, f->entry, &ops, &n, 1) == 1 && n)
			r = ops_recipe(f, &a, ops, n, &value, &why, 0);
		if (r && dwarf_tag(&t) != DW_TAG_array_type)
			r = fetch(r, value, &t);
		tr_buf_puts(&b, r ? r : "?");
	}
	free(vars.items);
	return tr_buf_str(&b);
}

/* The variable of that name at the top of unit cu, with a static address
 * (its recipe in *recipe); false if none. */
static bool unit_var(const struct tr_dwfunc *f, Dwarf_Die *cu, const char *name, const char *file,
		     Dwarf_Die *out, const char **recipe)
{
	const char *cuname = dwarf_diename(cu);
	const char *base = cuname && strrchr(cuname, '/') ? strrchr(cuname, '/') + 1 : cuname;
	Dwarf_Die c;

	if (file && (!cuname || (fnmatch(file, cuname, 0) && fnmatch(file, base, 0))))
		return false;
	if (dwarf_child(cu, &c) != 0)
		return false;
	do {
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t n;
		bool value;
		const char *why = NULL, *r;
		if (dwarf_tag(&c) != DW_TAG_variable || !die_name(&c) || strcmp(die_name(&c), name) ||
		    !dwarf_attr(&c, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &n) != 0)
			continue;
		r = ops_recipe(f, &a, ops, n, &value, &why, 0);
		if (r && !value) {
			*out = c;
			*recipe = r;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* @var("name"), @var("name@file"), @var("name", "module"): a variable with
 * a static address, of the probe's unit first, then of the others; its
 * recipe (an address) in *recipe.  False after an error. */
static bool global_var(const struct tr_dwfunc *f, const struct tr_expr *e, Dwarf_Die *out, const char **recipe)
{
	const char *q = e->str + 6, *end = strchr(q, '"'), *mod;
	char *name, *file = NULL, *at;
	Dwarf_Die cu0, *cu = NULL;
	Dwarf_Addr bias;

	if (!end)
		return false;
	name = tr_strndup(q, (size_t)(end - q));
	mod = strstr(end, ", \"");
	if (mod && strncmp(mod + 3, f->m->path, strlen(f->m->path))) {
		dw_err(e->tok, "%s: marktap reads @var of the probed file only", e->str);
		return false;
	}
	if ((at = strchr(name, '@'))) {
		*at = '\0';
		file = at + 1;
	}
	if (dwarf_diecu((Dwarf_Die *)&f->die, &cu0, NULL, NULL) && unit_var(f, &cu0, name, file, out, recipe))
		return true;
	while ((cu = dwfl_module_nextcu(f->m->mod, cu, &bias)))
		if (unit_var(f, cu, name, file, out, recipe))
			return true;
	dw_err(e->tok, "unable to find global '%s' in %s%s%s", name, f->m->path, file ? ", file " : "",
	       file ? file : "");
	return false;
}

/* A type named `name` ("struct pt", "pt", "geo::Point") among the
 * children of parent and of its namespaces: its definition. */
static bool find_type(Dwarf_Die *parent, const char *prefix, const char *name, Dwarf_Die *out)
{
	Dwarf_Die d;

	if (dwarf_child(parent, &d) != 0)
		return false;
	do {
		int tag = dwarf_tag(&d);
		const char *n = dwarf_diename(&d);
		if (!n)
			continue;
		if (tag == DW_TAG_namespace) {
			if (find_type(&d, tr_printf("%s%s::", prefix, n), name, out))
				return true;
		} else if ((is_record(tag) || tag == DW_TAG_typedef || tag == DW_TAG_base_type ||
			    tag == DW_TAG_enumeration_type) && !dwarf_hasattr(&d, DW_AT_declaration) &&
			   !strcmp(tr_printf("%s%s", prefix, n), name)) {
			*out = d;
			return true;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
	return false;
}

/* @cast(p, "type"[, "module"]): p, a target variable or a number, as
 * the address of a "type" of the probed file; its recipe (the address)
 * in *recipe, the type in *t.  False after an error. */
static bool cast_target(const struct tr_dwfunc *f, bool ret, const struct tr_expr *e, bool report,
			bool *at_return, Dwarf_Die *t, const char **recipe)
{
	const char *q = e->fmt ? strstr(e->fmt, "\"") : NULL, *end, *mod, *name, *written;
	Dwarf_Die cu0, *cu = NULL;
	Dwarf_Addr bias;
	enum tr_type ty;
	bool found = false;

	if (!q || !(end = strchr(q + 1, '"')))
		return false;
	name = written = tr_strndup(q + 1, (size_t)(end - q - 1));
	mod = strstr(end, ", \"");
	if (mod && strncmp(mod + 3, f->m->path, strlen(f->m->path)) && !strstr(mod, "<")) {
		dw_err(e->tok, "@cast: marktap reads types of the probed file only (%s)", f->m->path);
		return false;
	}
	for (const char *kw = NULL; !kw;) {   /* "struct pt": the name after its keyword */
		kw = "";
		if (!strncmp(name, "struct ", 7) || !strncmp(name, "union ", 6) || !strncmp(name, "class ", 6) ||
		    !strncmp(name, "enum ", 5))
			name = strchr(name, ' ') + 1, kw = NULL;
	}
	if (e->a->kind == E_NUM) {
		*recipe = tr_printf("k%" PRId64, e->a->num);
	} else if (e->a->kind == E_TARGET) {
		if (!(*recipe = tr_dw_target(f, ret, e->a, report, &ty, at_return)))
			return false;
		if (ty != T_LONG) {
			dw_err(e->a->tok, "@cast of a string: an address is needed");
			return false;
		}
	} else {
		dw_err(e->a->tok, "marktap casts a target variable or a number only (@cast($p, ...))");
		return false;
	}
	if (dwarf_diecu((Dwarf_Die *)&f->die, &cu0, NULL, NULL))
		found = find_type(&cu0, "", name, t);
	while (!found && (cu = dwfl_module_nextcu(f->m->mod, cu, &bias)))
		found = find_type(cu, "", name, t);
	if (!found) {
		dw_err(e->tok, "type definition '%s' not found in '%s'", written, f->m->path);
		return false;
	}
	return true;
}

/* Set by tr_dw_store() around tr_dw_target(): the place of the value is
 * wanted, as a store spec, instead of a recipe that reads it. */
static bool want_store;

static const char *store_spec(const struct tr_expr *e, const char *recipe, bool value, Dwarf_Die *t)
{
	uint64_t size = type_size(t);
	int tag = dwarf_tag(t);
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	char *end;
	long reg;

	if (tag != DW_TAG_base_type && tag != DW_TAG_pointer_type && tag != DW_TAG_enumeration_type) {
		dw_err(e->tok, "cannot write to '%s': a %s is not a number", e->str,
		       tag == DW_TAG_array_type ? "array" : is_record(tag) ? "struct or union" : "value of this type");
		return NULL;
	}
	if (tag == DW_TAG_base_type && dwarf_formudata(dwarf_attr_integrate(t, DW_AT_encoding, &a), &enc) == 0 &&
	    (enc == DW_ATE_float || enc == DW_ATE_complex_float)) {
		dw_err(e->tok, "cannot write to '%s': marktap writes integers and pointers, not floating point",
		       e->str);
		return NULL;
	}
	if (size != 1 && size != 2 && size != 4 && size != 8) {   /* stap's words */
		if (size > 8)
			dw_err(e->tok, "store is larger than base integer types");
		else
			dw_err(e->tok, "cannot write to '%s': a %" PRIu64 "-byte value", e->str, size);
		return NULL;
	}
	if (!value)   /* in memory: the recipe is its address */
		return tr_printf("m %" PRIu64 " %s", size, recipe);
	/* in a register (DW_OP_regN): "rN" alone; anything else was computed */
	reg = recipe[0] == 'r' ? strtol(recipe + 1, &end, 10) : -1;
	if (reg < 0 || *end || reg == 7 || reg == 16) {   /* DW_OP_stack_value, a constant: stap's words */
		dw_err(e->tok, "location is computed value, cannot store");
		return NULL;
	}
	/* extended to the register by its signedness, as the ABI passes
	 * small values (compilers rely on it for arguments) */
	return tr_printf("r %" PRIu64 "%c %ld", size, type_signed(t) ? 's' : 'u', reg);
}

/* $var... = v in guru mode: where to write (runtime/script/ufunc_recipe.c,
 * ufunc_store): "m SIZE RECIPE" (memory at the recipe's address) or
 * "r SIZEs N" / "r SIZEu N" (register N of the hit, which the function
 * goes on with; the value extended as signed or unsigned); NULL after a
 * semantic error at e. */
const char *tr_dw_store(const struct tr_dwfunc *f, bool ret, const struct tr_expr *e)
{
	enum tr_type type;
	bool at_return;
	const char *spec;

	if (!strcmp(e->str, "@entry") || (e->str[0] == '$' && e->str[1] == '$')) {
		quiet = false;
		dw_err(e->tok, "cannot write to '%s'", e->str);
		return NULL;
	}
	want_store = true;
	spec = tr_dw_target(f, ret, e, true, &type, &at_return);
	want_store = false;
	if (spec && ret && !at_return && strncmp(e->str, "@var(", 5)) {
		/* a .return probe has its variables as read at the call */
		dw_err(e->tok, "cannot write to '%s' in a .return probe: only $return (and globals) "
		       "can be written there", e->str);
		return NULL;
	}
	return spec;
}

const char *tr_dw_target(const struct tr_dwfunc *f, bool ret, const struct tr_expr *e, bool report,
			 enum tr_type *type, bool *at_return)
{
	bool store = want_store;   /* for e itself, not what @cast reads */

	want_store = false;
	quiet = !report;
	const char *n = e->str + 1, *recipe;
	struct tr_vec vars = {0};
	Dwarf_Die fn = f->die, *var = NULL, t, gvar;
	bool value;

	*type = T_LONG;
	*at_return = false;
	if (!strcmp(e->str, "@entry") && e->a && e->a->kind == E_TARGET && !e->members && !e->addr) {
		/* a .return probe reads its variables at the call already */
		if (!ret) {
			dw_err(e->tok, "@entry is only valid in .return probes");
			return NULL;
		}
		recipe = tr_dw_target(f, ret, e->a, report, type, at_return);
		if (recipe && *at_return) {
			dw_err(e->a->tok, "@entry of $return: the return value is not known at the entry");
			return NULL;
		}
		return recipe;
	}
	if (!strncmp(e->str, "@var(\"", 6) && !e->addr) {
		if (!global_var(f, e, &gvar, &recipe))
			return NULL;
		var = &gvar;
		value = false;
		if (!peel(var, &t)) {
			dw_err(e->tok, "'%s' has type void", e->str);
			return NULL;
		}
		goto members;
	}
	if (!strcmp(e->str, "@cast") && e->a && !e->addr) {
		if (!cast_target(f, ret, e, report, at_return, &t, &recipe))
			return NULL;
		value = false;   /* the recipe is the address of a "type" */
		*type = T_LONG;
		goto members;
	}
	if (e->addr || e->str[0] == '@' || (n[0] != '$' && strchr(n, '$'))) {
		dw_err(e->tok, "unresolved target-symbol expression: %s is not in marktap yet",
			     e->addr ? "'&'" : e->str[0] == '@' ? e->str : "pretty-printing ($x$)");
		return NULL;
	}
	if (!strcmp(n, "$parms") || !strcmp(n, "$locals") || !strcmp(n, "$vars") || !strcmp(n, "$return")) {
		if (e->members || e->args.n) {
			dw_err(e->tok, "invalid access: %s has no members", e->str);
			return NULL;
		}
		*type = T_STRING;
		if (strcmp(n, "$return"))   /* read at the call in a .return probe, as stap */
			return parms_recipe(f, strcmp(n, "$locals") != 0, strcmp(n, "$parms") != 0);
		if (!ret) {
			dw_err(e->tok, "unable to find local 'return', [man error::dwarf] "
			       "$$return is only available in .return probes");
			return NULL;
		}
		*at_return = true;
		if (!f->has_die || !peel(&fn, &t))
			return "Sreturn=?";
		recipe = fetch("r0", true, &t);
		return tr_printf("Sreturn=%s", recipe ? recipe : "?");
	}
	if (!f->has_die) {
		dw_err(e->tok, "unable to find local '%s', [man error::dwarf] no debuginfo for %s in %s",
			     n, f->name, f->m->path);
		return NULL;
	}
	if (!strcmp(n, "return")) {
		if (!ret) {
			dw_err(e->tok, "unable to find local 'return', [man error::dwarf] "
				     "$return is only available in .return probes");
			return NULL;
		}
		if (!peel(&fn, &t)) {
			dw_err(e->tok, "function '%s' (%s) has no return value", f->name, f->pp_name);
			return NULL;
		}
		*at_return = true;
		recipe = "r0";
		value = true;
	} else {
		scope_vars(&fn, f->entry, false, &vars, 0);
		for (unsigned i = vars.n; i-- > 0 && !var;)   /* the innermost of a name */
			if (!strcmp(die_name(vars.items[i]), n))
				var = vars.items[i];
		if (!var) {
			struct tr_buf alt = {0};
			for (unsigned i = 0; i < vars.n; i++)
				tr_buf_printf(&alt, "%s$%s", i ? ", " : "", die_name(vars.items[i]));
			dw_err(e->tok, "unable to find local '%s', [man error::dwarf] dieoffset 0x%" PRIx64
				     " in %s, near pc 0x%" PRIx64 " in %s (alternatives: %s))", n,
				     (uint64_t)dwarf_dieoffset(&fn), f->m->path, f->entry, f->name,
				     alt.len ? tr_buf_str(&alt) : "none");
			return NULL;
		}
		recipe = var_location(f, var, e->tok, &value);
		if (!recipe)
			return NULL;
		if (!peel(var, &t)) {
			dw_err(e->tok, "'$%s' has type void", n);
			return NULL;
		}
	}
members:
	if (!walk_members(e, &recipe, &value, &t))
		return NULL;
	if (store && walked_bit_field) {
		dw_err(e->tok, "cannot write to '%s%s': a bit field (marktap reads them, does not write them)",
		       e->str, e->members ? e->members : "");
		return NULL;
	}
	if (store)
		return store_spec(e, recipe, value, &t);
	switch (dwarf_tag(&t)) {
	case DW_TAG_array_type:   /* its address, as stap gives it */
		if (!value)
			return recipe;
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		dw_err(e->tok, "'%s' is a struct or union: read one of its members", e->str);
		return NULL;
	default: {
		const char *r = fetch(recipe, value, &t);
		if (r)
			return r;
	}
	}
	dw_err(e->tok, "cannot read '%s' of type %s", e->str, type_name(var ? var : &fn, 0));
	return NULL;
}

/* .return: the call frame address at the probe, where the return address
 * sits below (CFA - 8).  At a function's first instruction, without call
 * frame information (_init, crt's helpers: ELF symbols only), the call has
 * just pushed it: the CFA is the stack pointer + 8. */
const char *tr_dw_cfa(const struct tr_dwfunc *f)
{
	const char *cfa = cfa_recipe(f->m, f->entry);

	return cfa || f->entry != f->lowpc ? cfa : "r7 +8";
}

/* Whether the return address of f's caller is undefined at pc by the
 * call frame information (.cfi_undefined rip: the outermost frame). */
static bool cfi_outermost(struct dwmod *m, uint64_t pc)
{
	for (int pass = 0; pass < 2; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass ? dwfl_module_eh_cfi(m->mod, &bias) : dwfl_module_dwarf_cfi(m->mod, &bias);
		Dwarf_Frame *frame;
		Dwarf_Op ops_mem[3], *ops;
		size_t n;
		bool undefined;
		if (!cfi || dwarf_cfi_addrframe(cfi, pc + m->bias - bias, &frame) != 0)
			continue;
		int ra = dwarf_frame_info(frame, NULL, NULL, NULL);
		undefined = ra >= 0 && dwarf_frame_register(frame, ra, ops_mem, &ops, &n) == 0 && n == 0 &&
			    ops == ops_mem;
		free(frame);
		return undefined;
	}
	return false;
}

/*
 * A function nothing calls: the ELF entry point (_start, where the kernel
 * starts the program with argc where a return address would be), or one
 * whose call frame information says it has no caller.  Its "return
 * address" is not one: a .return probe would overwrite what is there.
 */
bool tr_dw_entered_without_call(const struct tr_dwfunc *f)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->m->mod, &bias);
	GElf_Ehdr eh;

	if (elf && gelf_getehdr(elf, &eh) && eh.e_entry && eh.e_entry == f->lowpc)
		return true;
	return cfi_outermost(f->m, f->lowpc);
}

