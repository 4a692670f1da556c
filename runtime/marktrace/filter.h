/*
 * filter.h - the --filter language of `marktrace view`.
 *
 *   expr  := or
 *   or    := and { ("or" | "||") and }
 *   and   := unary { ("and" | "&&") unary }
 *   unary := ("not" | "!") unary | "(" expr ")" | WORD OP value | WORD
 *   OP    := == != < <= > >=   (= is ==)
 *   value := number | "string" | 'c' | WORD
 *
 * A WORD alone is a glob on the event name (fs_*).  Before an operator it
 * names a field: the context fields pid, tid, cpu, procname and name, else
 * a payload field (write _pid for a payload field that a context name
 * hides), else one of the event context's other fields (LTTng's ip,
 * pthread_id...); ctx.NAME names the latter only.  == and != on strings match a glob, < and the others compare
 * bytes.  A comparison on a field the event does not have, or between a
 * string and a number, is false.
 */
#ifndef FILTER_H
#define FILTER_H

#include "ctf_read.h"

struct mt_filter;

struct mt_filter_err {
	unsigned line, col;
	char msg[256];          /* "expected ..., saw ..." */
};

/* NULL with err filled on a syntax error. */
struct mt_filter *mt_filter_compile(const char *src, struct mt_filter_err *err);
void mt_filter_free(struct mt_filter *f);

/* Resolve the names of f for one event class, once; the filter owns the result. */
const void *mt_filter_bind(struct mt_filter *f, const struct ctf_event_class *c);

/*
 * After binding every class of the traces: report each name glob that
 * matched no class name (is_field 0) and each payload field that no class
 * has (is_field 1), once per name: a filter on them is a silent no-op.
 */
typedef void (*mt_filter_unused_fn)(int is_field, const char *name, void *arg);
void mt_filter_unused(const struct mt_filter *f, mt_filter_unused_fn report, void *arg);

int mt_filter_match(const struct mt_filter *f, const void *binding,
		    const struct ctf_event *ev, int64_t cpu);

#endif
