/*
 * kdata.c - pass 2: kernel.data(ADDRESS)[.length(N)].write|.rw and
 * kernel.data("SYMBOL").write|.rw, stap's hardware watchpoints.
 *
 * A handler runs after each write (or, with .rw, each read or write) of
 * the watched bytes, in whatever context did it, with no context
 * variables (stap gives none).  The point is a P_MARK_KERNEL bound to
 *
 *	hwbp:ACCESS:LEN:TARGET      ACCESS "w" or "rw"; LEN 1, 2, 4 or 8;
 *	                            TARGET 0xADDRESS or SYMBOL
 *
 * which marktap.ko registers as a wide hardware breakpoint
 * (kmod/mt_hwbp.c).  A symbol is checked here against the symbol table
 * of the kernel probed (btf.c) and crosses as its name: the module
 * looks the address up at load, so that a -p4 module stays right after
 * a reboot has moved the kernel (KASLR).
 *
 * What x86's debug registers cannot watch is refused here: lengths other
 * than 1, 2, 4 and 8 (stap approximates them to one the architecture
 * has), an address not a multiple of its length, an address outside the
 * kernel's half, and more than X86_DEBUG_REGISTERS watchpoints in one
 * script (stap warns, then its module fails to register the fifth).
 * Debug registers another user holds are the module's error at load.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "elab_int.h"

#define X86_DEBUG_REGISTERS 4
/* the lowest address of x86-64's kernel half (4-level page tables: the
 * highest user address is 0x00007fffffffffff) */
#define KERNEL_HALF 0xffff800000000000ull

static const struct tr_component *comp(const struct tr_vec *comps, unsigned i)
{
	return comps->items[i];
}

static bool bare(const struct tr_component *c, const char *name)
{
	return !c->has_arg && !strcmp(c->name, name);
}

/* The point as stap names it: the address in hex, the length where
 * with_length (pp() and -p2: always; -l: where written). */
static const char *point_text(const char *symbol, uint64_t addr, int64_t len, bool rw, bool with_length)
{
	const char *target = symbol ? tr_printf("\"%s\"", symbol) : tr_printf("0x%" PRIx64, addr);

	return tr_printf("kernel.data(%s)%s.%s", target,
			 with_length ? tr_printf(".length(%" PRId64 ")", len) : "", rw ? "rw" : "write");
}

/* Why the watchpoint cannot be, or NULL. */
static const char *refusal(struct tr_session *s, const char *symbol, uint64_t addr, int64_t len)
{
	if (len != 1 && len != 2 && len != 4 && len != 8)
		return tr_printf("length %" PRId64 " cannot be watched (x86's debug registers watch "
				 "1, 2, 4 or 8 bytes)", len);
	if (symbol)
		return tr_btf_kernel_symbol(s, NULL, symbol) == 0 ?
		       tr_printf("no symbol %s in the kernel's symbol table", symbol) : NULL;
	if (addr < KERNEL_HALF)
		return tr_printf("0x%" PRIx64 " is no kernel address (the kernel's half starts at 0x%llx)",
				 addr, KERNEL_HALF);
	if (addr % (uint64_t)len)
		return tr_printf("0x%" PRIx64 " is not a multiple of the length %" PRId64 " (x86's debug "
				 "registers watch aligned bytes)", addr, len);
	return NULL;
}

int tr_kdata_resolve(struct tr_session *s, const struct tr_vec *comps, const struct tr_token *tok,
		     struct tr_vec *out)
{
	const struct tr_component *data;
	const char *symbol = NULL, *why;
	uint64_t addr = 0;
	int64_t len = 1;
	bool has_length = false, rw;
	unsigned at = 2;

	if (comps->n < 3 || comps->n > 4 || !bare(comp(comps, 0), "kernel") ||
	    strcmp((data = comp(comps, 1))->name, "data") || !data->has_arg)
		return 0;
	if (data->arg->kind == E_STR)
		symbol = data->arg->str;
	else
		addr = (uint64_t)data->arg->num;   /* stap's 0xffff... wrapped to a long */
	if (comps->n == 4) {
		/* .length only with an address, as stap's */
		const struct tr_component *l = comp(comps, 2);
		if (symbol && !strcmp(l->name, "length")) {
			tr_sem_error(l->tok, "while resolving probe point %s: probe point mismatch "
				     "(similar: rw, write)", tr_elab_point_text(comps));
			return -1;
		}
		if (strcmp(l->name, "length") || !l->has_arg || l->arg->kind != E_NUM)
			return 0;
		len = l->arg->num;
		has_length = true;
		at = 3;
	}
	if (!bare(comp(comps, at), "write") && !bare(comp(comps, at), "rw"))
		return 0;
	rw = !strcmp(comp(comps, at)->name, "rw");
	if ((why = refusal(s, symbol, addr, len)) != NULL) {
		tr_sem_error(tok, "while resolving probe point %s: %s",
			     point_text(symbol, addr, len, rw, has_length), why);
		return -1;
	}
	struct tr_resolved *r = tr_alloc(sizeof(*r));
	r->kind = P_MARK_KERNEL;
	r->kdata = true;
	r->pp = point_text(symbol, addr, len, rw, true);
	r->listed_pp = point_text(symbol, addr, len, rw, has_length);
	r->marker = symbol ? tr_printf("hwbp:%s:%" PRId64 ":%s", rw ? "rw" : "w", len, symbol) :
		    tr_printf("hwbp:%s:%" PRId64 ":0x%" PRIx64, rw ? "rw" : "w", len, addr);
	r->format = "";
	tr_vec_push(out, r);
	return 1;
}

int tr_kdata_check(struct tr_session *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->probes.n; i++) {
		const struct tr_probe *p = s->probes.items[i];
		for (unsigned k = 0; k < p->resolved.n; k++) {
			const struct tr_resolved *r = p->resolved.items[k];
			if (!r->kdata || ++n <= X86_DEBUG_REGISTERS)
				continue;
			tr_sem_error(p->point_tok ? p->point_tok : p->tok, "while resolving probe point %s: "
				     "more than %d hardware watchpoints in one script (x86 has %d debug "
				     "registers)", r->pp, X86_DEBUG_REGISTERS, X86_DEBUG_REGISTERS);
			return -1;
		}
	}
	return 0;
}
