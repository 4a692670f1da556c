/*
 * kfunc.c - kernel functions for marktrace record --kernel --function
 * and marktrace list --kernel --function: which ones (globs over the
 * functions of the kernel's BTF), and each one's entry and return as the
 * event classes record_tp.c records through perf's kprobe PMU.
 *
 * The parameters are the function's BTF prototype, read from the
 * registers the x86_64 calling convention passes them in, as the probe
 * hit found them (PERF_SAMPLE_REGS_INTR):
 *
 *   rdi rsi rdx rcx r8 r9      one per parameter of up to 8 bytes, two
 *                              for one of 9 to 16; a struct of more
 *                              than 16 bytes is passed on the stack
 *
 * Integers and enums keep their size and sign: the field is the low
 * bytes of the register (the ABI leaves the upper ones undefined).
 * Pointers are unsigned 64-bit, shown in hex.  What a register does not
 * hold whole (a struct or union by value, a 128-bit integer, whatever
 * comes after the sixth register) is left out and said.  The return's
 * ret is rax, typed as the prototype's return type.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "marktrace.h"
#include "record_tp.h"

#if defined(__x86_64__)
#include <asm/perf_regs.h>
static const unsigned arg_reg[] = {
	PERF_REG_X86_DI, PERF_REG_X86_SI, PERF_REG_X86_DX,
	PERF_REG_X86_CX, PERF_REG_X86_R8, PERF_REG_X86_R9,
};
#define ARG_REGS 6
#define RET_REG PERF_REG_X86_AX
#else
#define ARG_REGS 0   /* parameters are read on x86_64 only */
static const unsigned arg_reg[1];
#define RET_REG 0
#endif

#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe"

int mt_kf_pmu(u32 *type, unsigned *retprobe_bit)
{
	FILE *f = fopen(KPROBE_PMU "/type", "re");
	int ok = f && fscanf(f, "%u", type) == 1;

	if (f)
		fclose(f);
	/* format/retprobe: "config:N" */
	f = ok ? fopen(KPROBE_PMU "/format/retprobe", "re") : NULL;
	ok = f && fscanf(f, "config:%u", retprobe_bit) == 1 && *retprobe_bit < 64;
	if (f)
		fclose(f);
	if (!ok)
		mt_error("record: --kernel --function: this kernel has no perf kprobe PMU (%s: "
			 "Linux 4.17 and later, CONFIG_KPROBE_EVENTS)", KPROBE_PMU);
	return ok ? 0 : -1;
}

static struct btf *load_btf(const char *cmd)
{
	const char *path = getenv("MARKTAP_BTF");
	struct btf *b;

	libbpf_set_print(NULL);   /* its warnings: ours say what failed */
	errno = 0;
	b = path && *path ? btf__parse(path, NULL) : btf__load_vmlinux_btf();
	if (!b)
		mt_error("%s: cannot read the kernel's BTF from %s: %s", cmd,
			 path && *path ? path : "/sys/kernel/btf/vmlinux",
			 errno ? strerror(errno) : "not BTF");
	return b;
}

/* t without its typedefs and qualifiers (NULL or kind UNKN: void). */
static const struct btf_type *resolve(const struct btf *b, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(b, id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t) || btf_is_type_tag(t)))
		t = btf__type_by_id(b, t->type);
	return t;
}

/* How a parameter or return value is recorded: an integer of size bytes,
 * or not (why), taking regs registers either way. */
struct kf_value {
	u8 size, is_signed, is_pointer;
	unsigned regs;
	const char *why;   /* NULL: recorded */
};

static void classify(const struct btf *b, __u32 id, struct kf_value *v)
{
	const struct btf_type *t = resolve(b, id);

	memset(v, 0, sizeof(*v));
	v->regs = 1;
	if (!t || btf_kind(t) == BTF_KIND_UNKN) {
		v->regs = 0;
		v->why = "void";
	} else if (btf_is_int(t) || btf_is_any_enum(t)) {
		v->size = (u8)t->size;
		v->is_signed = btf_is_int(t) ? (btf_int_encoding(t) & BTF_INT_SIGNED) != 0
					     : btf_kflag(t);
		if (t->size > 8) {
			v->regs = 2;
			v->why = "wider than a register";
		} else if (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8) {
			v->why = "an integer of an odd size";
		}
	} else if (btf_is_ptr(t)) {
		v->size = 8;
		v->is_pointer = 1;
	} else if (btf_is_composite(t)) {
		v->regs = t->size <= 8 ? 1 : t->size <= 16 ? 2 : 0;
		v->why = "a struct or union passed by value";
	} else {
		v->regs = 0;   /* a float goes in an xmm register */
		v->why = "not an integer or a pointer";
	}
}

/* Note a parameter not recorded, and why, in ev->skipped (as room allows). */
static void skip(struct mt_tp_event *ev, const char *name, const char *why)
{
	size_t n = strlen(ev->skipped);

	if (n + 8 < sizeof(ev->skipped))
		snprintf(ev->skipped + n, sizeof(ev->skipped) - n, "%s%s (%s)", n ? ", " : "",
			 name, why);
}

static void init_event(struct mt_tp_event *ev, const char *func, int ret)
{
	memset(ev, 0, sizeof(*ev));
	ev->pid_offset = -1;
	snprintf(ev->name, sizeof(ev->name), "%s%s", func, ret ? "_return" : "_entry");
	snprintf(ev->func, sizeof(ev->func), "%s", func);
	ev->retprobe = (u8)ret;
}

/* A register's place in a sample of the registers of mask. */
static u16 reg_offset(mt_u64 mask, unsigned reg)
{
	return (u16)(8 * __builtin_popcountll(mask & ((1ull << reg) - 1)));
}

/* The entry of func (proto: its FUNC_PROTO): its parameters as fields. */
static void entry_event(const struct btf *b, const char *func, const struct btf_type *proto,
			struct mt_tp_event *ev)
{
	const struct btf_param *p = btf_params(proto);
	unsigned i, n = btf_vlen(proto), reg = 0, ntaken = 0;
	struct { char name[MT_FIELD_NAME_MAX]; struct kf_value v; unsigned reg; } taken[ARG_REGS + 1] = {
		{ "", { 0 }, 0 }
	};

	init_event(ev, func, 0);
	for (i = 0; i < n; i++) {
		const char *name = btf__name_by_offset(b, p[i].name_off);
		char unnamed[16];
		struct kf_value v;

		if (!p[i].type && i == n - 1) {
			skip(ev, "...", "variable arguments");
			break;
		}
		if (!name || !*name) {
			snprintf(unnamed, sizeof(unnamed), "arg%u", i + 1);
			name = unnamed;
		}
		classify(b, p[i].type, &v);
		if (!ARG_REGS) {
			skip(ev, name, "parameters are read on x86_64 only");
		} else if (reg + v.regs > ARG_REGS) {
			/* what does not fit the registers left goes on the stack */
			skip(ev, name, v.why ? v.why : "passed on the stack");
		} else if (v.why) {
			skip(ev, name, v.why);
			reg += v.regs;
		} else {
			snprintf(taken[ntaken].name, sizeof(taken[0].name), "%s", name);
			taken[ntaken].v = v;
			taken[ntaken++].reg = arg_reg[reg];
			ev->regs |= 1ull << arg_reg[reg++];
		}
	}
	for (i = 0; i < ntaken; i++)   /* the mask known: where each register is */
		mt_tp_add_int(ev, taken[i].name, reg_offset(ev->regs, taken[i].reg),
			      taken[i].v.size, taken[i].v.is_signed, taken[i].v.is_pointer);
	if (!ev->format[0])
		strcpy(ev->format, " ");
}

/* The return of func: ret, unless it returns nothing. */
static void return_event(const struct btf *b, const char *func, const struct btf_type *proto,
			 struct mt_tp_event *ev)
{
	struct kf_value v;

	init_event(ev, func, 1);
	classify(b, proto->type, &v);
	if (v.why && v.regs)
		skip(ev, "ret", v.why);
	else if (!v.why && ARG_REGS) {
		ev->regs = 1ull << RET_REG;
		mt_tp_add_int(ev, "ret", 0, v.size, v.is_signed, v.is_pointer);
	}
	if (!ev->format[0])
		strcpy(ev->format, " ");
}

/* --- which functions --- */

/* A function the patterns take: what of it. */
struct kf_func {
	const char *name;     /* BTF's */
	__u32 proto;          /* its FUNC_PROTO */
	u8 entry, ret;        /* record its entry, its return */
	u8 exact;             /* a pattern without a glob named it */
};

/* A --function line: NAME or NAME%entry / NAME%return; glob or not. */
struct kf_pattern {
	char glob[MT_PATTERNS_MAX];
	u8 entry, ret, exact;
	unsigned taken;
};

static int is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int parse_pattern(const char *line, size_t len, struct kf_pattern *p, const char *cmd)
{
	const char *pct = memchr(line, '%', len);
	size_t name_len = pct ? (size_t)(pct - line) : len;

	memset(p, 0, sizeof(*p));
	snprintf(p->glob, sizeof(p->glob), "%.*s", (int)name_len, line);
	p->entry = p->ret = 1;
	if (pct) {
		size_t n = len - name_len - 1;
		if (n == 5 && !memcmp(pct + 1, "entry", 5))
			p->ret = 0;
		else if (n == 6 && !memcmp(pct + 1, "return", 6))
			p->entry = 0;
		else {
			mt_error("%s: --function '%.*s': expected NAME, NAME%%entry or NAME%%return",
				 cmd, (int)len, line);
			return -1;
		}
	}
	if (!*p->glob) {
		mt_error("%s: --function '%.*s': no function name", cmd, (int)len, line);
		return -1;
	}
	p->exact = !is_glob(p->glob);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct kf_func *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * The functions of b that the patterns take, sorted by name, each once
 * (BTF may hold static functions of one name from several files: the
 * first one's prototype is kept; the kprobe goes where the kernel's
 * symbol lookup puts it).  npat 0: every function.
 */
static struct kf_func *find_functions(const struct btf *b, struct kf_pattern *pat, unsigned npat,
				      unsigned *nout)
{
	__u32 id, count = btf__type_cnt(b);
	struct kf_func *f = NULL;
	unsigned n = 0, cap = 0, i, k;

	for (id = 1; id < count; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const char *name;
		struct kf_func one;

		if (!btf_is_func(t))
			continue;
		name = btf__name_by_offset(b, t->name_off);
		memset(&one, 0, sizeof(one));
		one.name = name;
		one.proto = t->type;
		for (k = 0; k < npat; k++)
			if (fnmatch(pat[k].glob, name, 0) == 0) {
				pat[k].taken++;
				one.entry |= pat[k].entry;
				one.ret |= pat[k].ret;
				one.exact |= pat[k].exact;
			}
		if (npat && !one.entry && !one.ret)
			continue;
		if (n == cap) {
			struct kf_func *more;
			cap = cap ? 2 * cap : 256;
			if (!(more = realloc(f, cap * sizeof(*f)))) {
				free(f);
				return NULL;
			}
			f = more;
		}
		f[n++] = one;
	}
	if (n)
		qsort(f, n, sizeof(*f), by_name);
	for (i = k = 0; i < n; i++) {   /* one of each name */
		if (k && !strcmp(f[k - 1].name, f[i].name)) {
			f[k - 1].entry |= f[i].entry;
			f[k - 1].ret |= f[i].ret;
			f[k - 1].exact |= f[i].exact;
		} else {
			f[k++] = f[i];
		}
	}
	*nout = k;
	return f ? f : calloc(1, sizeof(*f));
}

/* Each --function line parsed into pat (room for MT_PATTERNS_MAX / 2). */
static int parse_patterns(const char *lines, struct kf_pattern *pat, unsigned *npat)
{
	const char *p;

	*npat = 0;
	for (p = lines; *p; p += strcspn(p, "\n"), p += *p == '\n')
		if (parse_pattern(p, strcspn(p, "\n"), &pat[(*npat)++], "record: --kernel") < 0)
			return -1;
	return 0;
}

/* Are all the functions to record nameable as events?  Those a glob took
 * that are not are left out, with a word. */
static unsigned drop_long_names(struct kf_func *f, unsigned n, int quiet, int *bad)
{
	unsigned i, k, dropped = 0;

	for (i = k = 0; i < n; i++) {
		if (strlen(f[i].name) + strlen("_return") < MT_EVENT_NAME_MAX) {
			f[k++] = f[i];
			continue;
		}
		if (f[i].exact) {
			mt_error("record: --kernel: --function %s: a name of more than %u "
				 "characters is not recorded", f[i].name,
				 (unsigned)(MT_EVENT_NAME_MAX - 1 - strlen("_return")));
			*bad = 1;
		}
		dropped++;
	}
	if (dropped && !*bad && !quiet)
		fprintf(stderr, "marktrace: warning: %u functions with names too long for an "
			"event are not recorded\n", dropped);
	return k;
}

int mt_kf_select(const struct mt_record_opts *o, struct mt_tp_event **events, unsigned *nevents)
{
	struct kf_pattern *pat;
	struct kf_func *f = NULL;
	struct btf *b = NULL;
	unsigned npat, n = 0, i, k;
	int bad = 0;

	*events = NULL;
	*nevents = 0;
	if (!*o->functions)
		return 0;
	/* a line takes at least two bytes of o->functions */
	if (!(pat = calloc(MT_PATTERNS_MAX / 2, sizeof(*pat)))) {
		mt_error("record: --kernel: out of memory");
		return -1;
	}
	if (parse_patterns(o->functions, pat, &npat) < 0 || !(b = load_btf("record: --kernel")) ||
	    !(f = find_functions(b, pat, npat, &n))) {
		if (b)
			mt_error("record: --kernel: out of memory");
		btf__free(b);
		free(pat);
		return -1;
	}
	for (k = 0; k < npat; k++)
		if (!pat[k].taken) {
			mt_error("record: --kernel: --function %s: %s the kernel's BTF "
				 "(marktrace list --kernel --function 'GLOB' lists them)", pat[k].glob,
				 pat[k].exact ? "no function of that name in" : "the glob takes no function of");
			bad = 1;
		}
	if (!bad && n > MT_KF_FUNCTIONS_MAX) {
		mt_error("record: --kernel: the --function patterns take %u functions; a recording "
			 "probes at most %u (each is a kprobe on every CPU): narrow the globs",
			 n, MT_KF_FUNCTIONS_MAX);
		bad = 1;
	}
	n = bad ? 0 : drop_long_names(f, n, o->quiet, &bad);
	if (!bad && !(*events = calloc(2 * (size_t)n, sizeof(**events)))) {
		mt_error("record: --kernel: out of memory");
		bad = 1;
	}
	for (i = 0; i < n && !bad; i++) {
		const struct btf_type *proto = btf__type_by_id(b, f[i].proto);
		unsigned first = *nevents;

		if (!proto || !btf_is_func_proto(proto))
			continue;
		if (f[i].entry)
			entry_event(b, f[i].name, proto, &(*events)[(*nevents)++]);
		if (f[i].ret)
			return_event(b, f[i].name, proto, &(*events)[(*nevents)++]);
		for (k = first; k < *nevents; k++)
			(*events)[k].globbed = !f[i].exact;
	}
	free(f);
	free(pat);
	btf__free(b);
	if (bad) {
		free(*events);
		*events = NULL;
		*nevents = 0;
		return -1;
	}
	return 0;
}

/* --- marktrace list --kernel --function --- */

static void print_to_stdout(void *ctx, const char *fmt, va_list args)
{
	(void)ctx;
	vprintf(fmt, args);
}

/* One function: its prototype as C declares it, and what is not recorded. */
static void print_function(const struct btf *b, struct btf_dump *d, const struct kf_func *f)
{
	struct btf_dump_emit_type_decl_opts opts = { .sz = sizeof(opts), .field_name = f->name };
	const struct btf_type *proto = btf__type_by_id(b, f->proto);
	struct mt_tp_event ev;
	char no_params[MT_EVENT_NAME_MAX + 160];

	if (!proto || !btf_is_func_proto(proto))
		return;
	if (btf_vlen(proto)) {
		btf_dump__emit_type_decl(d, f->proto, &opts);
	} else {   /* libbpf writes "f()": C says f(void) */
		snprintf(no_params, sizeof(no_params), "%s(void)", f->name);
		opts.field_name = no_params;
		btf_dump__emit_type_decl(d, proto->type, &opts);
	}
	entry_event(b, f->name, proto, &ev);
	if (ev.skipped[0])
		printf(" /* not recorded: %s */", ev.skipped);
	return_event(b, f->name, proto, &ev);
	if (ev.skipped[0])
		printf(" /* not recorded: %s */", ev.skipped);
	putchar('\n');
}

int mt_list_functions(char **patterns, int npatterns)
{
	struct kf_pattern *pat = calloc((size_t)npatterns + 1, sizeof(*pat));
	struct kf_func *f = NULL;
	struct btf_dump *d = NULL;
	struct btf *b = NULL;
	unsigned n = 0, i;
	int k, rc = 1;

	if (!pat) {
		mt_error("list: out of memory");
		return 1;
	}
	for (k = 0; k < npatterns; k++)
		if (parse_pattern(patterns[k], strlen(patterns[k]), &pat[k], "list") < 0)
			goto out;
	if (!(b = load_btf("list: --function")))
		goto out;
	d = btf_dump__new(b, print_to_stdout, NULL, NULL);
	if (!d || !(f = find_functions(b, pat, (unsigned)npatterns, &n))) {
		mt_error("list: --function: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		print_function(b, d, &f[i]);
	rc = 0;
	for (k = 0; k < npatterns; k++)
		if (!pat[k].taken) {
			mt_error("list: --function %s: %s the kernel's BTF", pat[k].glob,
				 pat[k].exact ? "no function of that name in"
					      : "the glob takes no function of");
			rc = 1;
		}
out:
	free(f);
	btf_dump__free(d);
	btf__free(b);
	free(pat);
	return rc;
}
