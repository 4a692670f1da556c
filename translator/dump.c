/*
 * dump.c - stap's --dump-functions, --dump-probe-types and
 * --dump-probe-aliases: what the tapsets define and what pass 2 resolves.
 *
 * Functions and aliases come from the tapsets as loaded for a script
 * (MARKTAP_TAPSET_DIR, -I), one line each, sorted, in stap's forms:
 *   name:type (param:type, ...)
 *   alias.name = point, point?
 * Names starting with '_' are the tapsets' own, as stap leaves them out.
 */
#include "tr_elab.h"

#include <stdlib.h>
#include <string.h>

/*
 * The probe point families pass 2 resolves (marktap(1), "OTHER PROBE
 * POINTS", "SDT PROBES", "FUNCTION PROBES", "KERNEL FUNCTION PROBES"), as stap writes its list:
 * (string) and (number) for the arguments.  cmdline.t elaborates each.
 */
static const char *const probe_types[] = {
	"begin", "begin(number)", "end", "end(number)", "error", "error(number)", "never",
	"oneshot",
	"kernel.function(string)", "kernel.function(string).call", "kernel.function(string).return",
	"kernel.function(string).return.maxactive(number)",
	"kernel.mark(string)", "kernel.mark(string).format(string)", "kernel.trace(string)",
	"kprobe.function(string)", "kprobe.function(string).return",
	"kprobe.function(string).return.maxactive(number)", "kprobe.module(string).function(string)",
	"kprobe.module(string).function(string).return",
	"module(string).function(string)", "module(string).function(string).call",
	"module(string).function(string).return",
	"netfilter.hook(string).pf(string)", "netfilter.hook(string).pf(string).priority(string)",
	"netfilter.pf(string).hook(string)", "perf.type(number).config(number)",
	"perf.type(number).config(number).hz(number)",
	"perf.type(number).config(number).sample(number)",
	"process(number).begin", "process(number).end", "process(number).mark(string)",
	"process(number).provider(string).mark(string)", "process(number).thread.begin",
	"process(number).thread.end",
	"process(string).begin", "process(string).end", "process(string).function(string)",
	"process(string).function(string).call", "process(string).function(string).return",
	"process(string).library(string).function(string)",
	"process(string).library(string).mark(string)", "process(string).mark(string)",
	"process(string).plt(string)", "process(string).provider(string).mark(string)",
	"process(string).statement(string)", "process(string).thread.begin",
	"process(string).thread.end",
	"process.begin", "process.end", "process.mark(string)", "process.thread.begin",
	"process.thread.end",
	"procfs(string).read", "procfs(string).read.maxsize(number)",
	"procfs(string).umask(number).read", "procfs(string).write", "procfs.read", "procfs.write",
	"timer.hz(number)", "timer.jiffies(number)", "timer.jiffies(number).randomize(number)",
	"timer.ms(number)", "timer.ms(number).randomize(number)", "timer.msec(number)",
	"timer.msec(number).randomize(number)", "timer.ns(number)", "timer.nsec(number)",
	"timer.profile", "timer.s(number)", "timer.s(number).randomize(number)", "timer.sec(number)",
	"timer.sec(number).randomize(number)", "timer.us(number)", "timer.usec(number)",
	"trace.event(string)",
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted lines of v, each once. */
static void print_sorted(struct tr_vec *v)
{
	qsort(v->items, v->n, sizeof(v->items[0]), cmp_str);
	for (unsigned i = 0; i < v->n; i++)
		if (!i || strcmp(v->items[i], v->items[i - 1]))
			puts(v->items[i]);
}

static bool from_tapset(const struct tr_session *s, const struct tr_file *f)
{
	for (unsigned i = 0; i < s->user.n; i++)
		if (((const struct tr_script *)s->user.items[i])->file == f)
			return false;
	return true;
}

static int dump_functions(struct tr_session *s)
{
	struct tr_vec lines = {0};

	for (unsigned i = 0; i < s->all_funcs.n; i++) {
		const struct tr_func *fn = s->all_funcs.items[i];
		struct tr_buf b = {0};

		if (fn->name[0] == '_' || !from_tapset(s, fn->file))
			continue;
		tr_buf_printf(&b, "%s:%s (", fn->name, tr_type_name(fn->type));
		for (unsigned k = 0; k < fn->params.n; k++) {
			const struct tr_sym *p = fn->params.items[k];
			tr_buf_printf(&b, "%s%s:%s", k ? ", " : "", p->name, tr_type_name(p->type));
		}
		tr_buf_putc(&b, ')');
		tr_vec_push(&lines, (void *)tr_buf_str(&b));
	}
	print_sorted(&lines);
	return 0;
}

static int dump_aliases(struct tr_session *s)
{
	struct tr_vec lines = {0};

	for (unsigned i = 0; i < s->all_aliases.n; i++) {
		const struct tr_probe *al = s->all_aliases.items[i];

		if (!from_tapset(s, al->file))
			continue;
		for (unsigned k = 0; k < al->alias_names.n; k++) {
			struct tr_buf b = {0};
			const struct tr_probe_point *name = al->alias_names.items[k];
			const char *first = ((const struct tr_component *)name->comps.items[0])->name;

			if (first[0] == '_')
				continue;
			tr_print_point(&b, name);
			tr_buf_puts(&b, " = ");
			for (unsigned t = 0; t < al->points.n; t++) {
				if (t)
					tr_buf_puts(&b, ", ");
				tr_print_point(&b, al->points.items[t]);
			}
			tr_vec_push(&lines, (void *)tr_buf_str(&b));
		}
	}
	print_sorted(&lines);
	return 0;
}

int tr_dump(struct tr_session *s, enum tr_dump what)
{
	if (what == TR_DUMP_PROBE_TYPES) {
		struct tr_vec lines = {0};

		for (size_t i = 0; i < sizeof(probe_types) / sizeof(probe_types[0]); i++)
			tr_vec_push(&lines, (void *)probe_types[i]);
		print_sorted(&lines);
		return 0;
	}
	if (tr_elab_load_tapsets(s))
		return 1;
	return what == TR_DUMP_FUNCTIONS ? dump_functions(s) : dump_aliases(s);
}
