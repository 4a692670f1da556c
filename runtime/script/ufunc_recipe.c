/*
 * ufunc_recipe.c - function probes: the wanted functions and the recipes
 * of their values (translator/dwarf.c writes them), read on a hit's
 * registers; guru mode's writes through them (ufunc_int.h).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include "ufunc_int.h"

/* ---- recipes -------------------------------------------------------------------- */

static int parse_recipe(const char *s, size_t len, struct recipe *r)
{
	const char *end = s + len;

	r->n = 0;
	while (s < end) {
		char tok[40], *e;
		size_t n;
		struct rop *o;
		while (s < end && *s == ' ')
			s++;
		n = strcspn(s, " ");
		if (s + n > end)
			n = (size_t)(end - s);
		if (!n)
			break;
		if (n >= sizeof(tok) || r->n == RECIPE_OPS)
			return -1;
		memcpy(tok, s, n);
		tok[n] = '\0';
		s += n;
		o = &r->op[r->n++];
		o->op = tok[0];
		switch (tok[0]) {
		case 'r':
			o->v = strtol(tok + 1, &e, 10);
			if (e == tok + 1 || *e || o->v < 0 || o->v >= MT_R_COUNT)
				return -1;
			break;
		case 'a':
			o->v = (int64_t)strtoull(tok + 1, &e, 16);
			if (e == tok + 1 || *e)
				return -1;
			break;
		case 'k':
		case '+':
			o->v = strtoll(tok + 1, &e, 10);
			if (e == tok + 1 || *e)
				return -1;
			break;
		case 'P': case 'S': case 'X': case '&': case '|': case '^': case '<': case '>':
		case 'R': case 'N': case '~':
			if (tok[1])
				return -1;
			break;
		case 'm':
		case 't':
			o->size = (unsigned char)(tok[1] - '0');
			o->is_signed = tok[2] == 's';
			if ((o->size != 1 && o->size != 2 && o->size != 4 && o->size != 8) ||
			    (tok[2] != 's' && tok[2] != 'u') || tok[3])
				return -1;
			break;
		default:
			return -1;
		}
	}
	return r->n ? 0 : -1;
}

static int parse_parms(const char *s, struct field *f)
{
	unsigned cap = 0;

	while (*s) {
		size_t n = strcspn(s, ","), nl;
		const char *eq = memchr(s, '=', n);
		struct parm *p;
		if (!eq || (size_t)(eq - s) >= sizeof(p->name))
			return -1;
		if (f->nparms == cap) {
			cap = cap ? 2 * cap : 8;
			p = realloc(f->parms, cap * sizeof(*p));
			if (!p)
				return -1;
			f->parms = p;
		}
		p = &f->parms[f->nparms++];
		memset(p, 0, sizeof(*p));
		memcpy(p->name, s, (size_t)(eq - s));
		nl = n - (size_t)(eq + 1 - s);
		if (eq[1] == '?' || eq[1] == '!') {
			const char *lit = eq[1] == '!' ? eq + 2 : eq + 1;
			size_t ll = nl - (size_t)(lit - eq - 1);
			snprintf(p->literal, sizeof(p->literal), "%.*s", (int)ll, lit);
		} else if (parse_recipe(eq + 1, nl, &p->r) < 0) {
			return -1;
		}
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

/* ---- the wanted functions (manifest) ---------------------------------------- */

struct want **ufunc_wants;
unsigned ufunc_nwants;
probe_hit_fn ufunc_hit;           /* set at arming (ufunc_object) */
probe_error_fn ufunc_error;

int ufunc_want(const char *line)
{
	char name[256], kind, path[PATH_MAX];
	unsigned long long addr;
	int off = 0;
	struct want *w, **nw;
	struct stat st;

	if (sscanf(line, "func %255s %c %llx %4095s %n", name, &kind, &addr, path, &off) < 4 || !off ||
	    (kind != 'e' && kind != 'r'))
		return -1;
	w = calloc(1, sizeof(*w));
	nw = realloc(ufunc_wants, (ufunc_nwants + 1) * sizeof(*nw));
	if (!w || !nw || !(w->name = strdup(name))) {
		free(w);
		if (nw)
			ufunc_wants = nw;
		return -1;
	}
	ufunc_wants = nw;
	w->addr = (uintptr_t)addr;
	w->ret = kind == 'r';
	w->has_cfa = strcmp(line + off, "-") != 0;
	if (w->has_cfa && parse_recipe(line + off, strlen(line + off), &w->cfa) < 0)
		w->has_cfa = 0;
	if (stat(path, &st) == 0) {
		w->dev = st.st_dev;
		w->ino = st.st_ino;
	}
	ufunc_wants[ufunc_nwants++] = w;
	return 0;
}

int ufunc_field(const char *line)
{
	char name[256], kind;
	int off = 0;
	struct want *w = NULL;
	struct field *f;

	if (sscanf(line, "fvar %255s %c %n", name, &kind, &off) < 2 || !off)
		return -1;
	for (unsigned i = 0; i < ufunc_nwants && !w; i++)
		if (!strcmp(ufunc_wants[i]->name, name))
			w = ufunc_wants[i];
	if (!w || w->nf == MT_FIELDS_MAX)
		return -1;
	f = &w->f[w->nf];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	if ((kind == 's' || kind == 'R') && line[off] == 'S') {
		if (parse_parms(line + off + 1, f) < 0)
			return -1;
	} else if ((kind != 'l' && kind != 'L') || parse_recipe(line + off, strlen(line + off), &f->r) < 0) {
		return -1;
	}
	w->nf++;
	return 0;
}

int ufunc_read_mem(uintptr_t addr, void *dst, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)addr, n };

	return SYS6(SYS_process_vm_readv, SYS3(SYS_getpid, 0, 0, 0), &local, 1, &remote, 1, 0) == (long)n ? 0 : -1;
}

/* ---- evaluation ------------------------------------------------------------------- */

#if defined(__x86_64__)

static uint64_t extend(uint64_t v, unsigned size, int is_signed)
{
	unsigned bits = size * 8;

	if (size >= 8)
		return v;
	v &= (1ull << bits) - 1;
	if (is_signed && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return v;
}

/* The recipe on the registers of uc: 0 and *out, or -1 with *fault the
 * address that could not be read. */
int recipe_eval(const struct recipe *r, const ucontext_t *uc, uintptr_t bias, uint64_t *out, uint64_t *fault)
{
	uint64_t stack[RECIPE_OPS];
	unsigned sp = 0;

	for (unsigned i = 0; i < r->n; i++) {
		const struct rop *o = &r->op[i];
		switch (o->op) {
		case 'r': stack[sp++] = probe_reg(uc, (int)o->v); break;
		case 'a': stack[sp++] = (uint64_t)o->v + bias; break;
		case 'k': stack[sp++] = (uint64_t)o->v; break;
		case '+':
			if (!sp)
				return -1;
			stack[sp - 1] += (uint64_t)o->v;
			break;
		case 'm': {
			uint64_t v = 0;
			if (!sp)
				return -1;
			if (ufunc_read_mem((uintptr_t)stack[sp - 1], &v, o->size) < 0) {
				*fault = stack[sp - 1];
				return -1;
			}
			stack[sp - 1] = extend(v, o->size, o->is_signed);
			break;
		}
		case 't':
			if (!sp)
				return -1;
			stack[sp - 1] = extend(stack[sp - 1], o->size, o->is_signed);
			break;
		case 'N':
		case '~':
			if (!sp)
				return -1;
			stack[sp - 1] = o->op == 'N' ? (uint64_t)-(int64_t)stack[sp - 1] : ~stack[sp - 1];
			break;
		default: {   /* two operands: the one below the top, then the top */
			uint64_t b, a;
			if (sp < 2)
				return -1;
			b = stack[--sp];
			a = stack[sp - 1];
			switch (o->op) {
			case 'P': a += b; break;
			case 'S': a -= b; break;
			case 'X': a *= b; break;
			case '&': a &= b; break;
			case '|': a |= b; break;
			case '^': a ^= b; break;
			case '<': a = b < 64 ? a << b : 0; break;
			case '>': a = b < 64 ? a >> b : 0; break;
			case 'R': a = (uint64_t)((int64_t)a >> (b < 64 ? b : 63)); break;
			}
			stack[sp - 1] = a;
		}
		}
	}
	if (!sp)
		return -1;
	*out = stack[sp - 1];
	return 0;
}

/* $$parms as stap prints it: "a=0x1 b=0x2", unreadable values "?". */
static size_t format_parms(const struct field *f, const ucontext_t *uc, uintptr_t bias, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < f->nparms && len < cap; i++) {
		const struct parm *p = &f->parms[i];
		uint64_t v, fault;
		int n;
		if (p->literal[0])
			n = snprintf(buf + len, cap - len, "%s%s=%s", i ? " " : "", p->name, p->literal);
		else if (recipe_eval(&p->r, uc, bias, &v, &fault) == 0)
			n = snprintf(buf + len, cap - len, "%s%s=0x%" PRIx64, i ? " " : "", p->name, v);
		else
			n = snprintf(buf + len, cap - len, "%s%s=?", i ? " " : "", p->name);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	return len < cap ? len : cap - 1;
}

/* ---- guru mode: writes to the variables ($x = v) ------------------------------------- */

static __thread struct store_hit *store_hit __attribute__((tls_model("initial-exec")));

void ufunc_store_enter(struct store_hit *h, ucontext_t *uc, uintptr_t bias)
{
	h->uc = uc;
	h->bias = bias;
	h->outer = store_hit;
	store_hit = h;
}

void ufunc_store_leave(struct store_hit *h)
{
	store_hit = h->outer;
}

/* Memory of the process, written only where the program could write it
 * (process_vm_writev honours the pages' protection): no fault, an error. */
static int write_mem(uintptr_t addr, const void *src, size_t n)
{
	struct iovec local = { (void *)(uintptr_t)src, n }, remote = { (void *)addr, n };

	return SYS6(SYS_process_vm_writev, SYS3(SYS_getpid, 0, 0, 0), &local, 1, &remote, 1, 0) == (long)n ? 0 : -1;
}

int ufunc_store(const char *spec, int64_t v, char *err, size_t cap)
{
	static const int greg_of[MT_R_COUNT] = {
		[MT_R_RAX] = REG_RAX, [MT_R_RDX] = REG_RDX, [MT_R_RCX] = REG_RCX, [MT_R_RBX] = REG_RBX,
		[MT_R_RSI] = REG_RSI, [MT_R_RDI] = REG_RDI, [MT_R_RBP] = REG_RBP, [MT_R_RSP] = REG_RSP,
		[MT_R_R8] = REG_R8, [MT_R_R9] = REG_R9, [MT_R_R10] = REG_R10, [MT_R_R11] = REG_R11,
		[MT_R_R12] = REG_R12, [MT_R_R13] = REG_R13, [MT_R_R14] = REG_R14, [MT_R_R15] = REG_R15,
		[MT_R_RIP] = REG_RIP,
	};
	struct store_hit *h = store_hit;
	unsigned size = 0;
	int off = 0;
	char kind = 0;

	if (!h) {
		snprintf(err, cap, "write to target variable outside its probe's hit");
		return -1;
	}
	if (sscanf(spec, "%c %u%n", &kind, &size, &off) < 2 || !off ||
	    (size != 1 && size != 2 && size != 4 && size != 8)) {
		snprintf(err, cap, "malformed target variable store '%s'", spec);
		return -1;
	}
	if (kind == 'r') {   /* the saved register: the function goes on with it */
		char sign = spec[off];
		long r = strtol(spec + off + 1, NULL, 10);
		if ((sign != 's' && sign != 'u') || r < 0 || r >= MT_R_COUNT || r == MT_R_RSP || r == MT_R_RIP) {
			snprintf(err, cap, "malformed target variable store '%s'", spec);
			return -1;
		}
		h->uc->uc_mcontext.gregs[greg_of[r]] = (greg_t)extend((uint64_t)v, size, sign == 's');
		return 0;
	}
	if (kind == 'm') {
		struct recipe rc;
		uint64_t addr = 0, fault = 0;
		unsigned char bytes[8];
		if (spec[off] != ' ' || parse_recipe(spec + off, strlen(spec + off), &rc) < 0) {
			snprintf(err, cap, "malformed target variable store '%s'", spec);
			return -1;
		}
		if (recipe_eval(&rc, h->uc, h->bias, &addr, &fault) < 0) {
			snprintf(err, cap, "user read fault at 0x%" PRIx64, fault);
			return -1;
		}
		memcpy(bytes, &v, sizeof(bytes));   /* little-endian: the low bytes first */
		if (write_mem((uintptr_t)addr, bytes, size) < 0) {
			snprintf(err, cap, "user write fault at 0x%" PRIx64, addr);
			return -1;
		}
		return 0;
	}
	snprintf(err, cap, "malformed target variable store '%s'", spec);
	return -1;
}

/* ---- a hit's values ------------------------------------------------------------- */

/* The fields of a hit.  At an entry probe: all ('l' 's').  At the call of
 * a .return probe: the 'l' and 's' ones, into rf.  At its return: those
 * from rf, and the 'L' and 'R' ones read now.  0, or -1 after a report. */
int ufunc_fetch(const struct usite *s, const ucontext_t *uc, enum ufunc_phase ph, struct ret_frame *rf,
		struct mt_args *a, char *strbuf, size_t strcap)
{
	unsigned k = 0;
	size_t saved_off = 0;

	for (unsigned i = 0; i < s->w->nf; i++) {
		const struct field *f = &s->w->f[i];
		int str = f->kind == 's' || f->kind == 'R';
		uint64_t fault = 0, v = 0;
		if (ph == PH_CALL && (f->kind == 'L' || f->kind == 'R'))
			continue;
		if (ph == PH_RETURN && f->kind == 's') {   /* saved at the call */
			size_t len = strnlen(rf->strs + saved_off, SAVED_STR - saved_off);
			a->v[i].str = rf->strs + saved_off;
			a->slen[i] = (u32)len + 1;
			saved_off += len + 1;
		} else if (ph == PH_RETURN && f->kind == 'l') {
			a->v[i].u = rf->saved[k++];
		} else if (str) {
			char *out = ph == PH_CALL ? rf->strs + saved_off : strbuf;
			size_t cap = ph == PH_CALL ? SAVED_STR - saved_off : strcap;
			size_t len = cap ? format_parms(f, uc, s->bias, out, cap) : 0;
			if (ph == PH_CALL) {
				saved_off += cap ? len + 1 : 0;
				continue;
			}
			a->v[i].str = out;
			a->slen[i] = (u32)len + 1;
			strbuf += len + 1;
			strcap -= len + 1;
		} else if (recipe_eval(&f->r, uc, s->bias, &v, &fault) < 0) {
			report("ERROR: user read fault at 0x%" PRIx64 " for value %u of %s (skipped)", fault, i + 1,
			       s->w->name);
			return -1;
		} else if (ph == PH_CALL) {
			rf->saved[k++] = v;
		} else {
			a->v[i].u = v;
		}
	}
	return 0;
}
#else
int ufunc_store(const char *spec, int64_t v, char *err, size_t cap)
{
	(void)spec;
	(void)v;
	snprintf(err, cap, "write to target variable: not supported on this architecture");
	return -1;
}
#endif
