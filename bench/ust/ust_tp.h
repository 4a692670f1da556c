/* ust_tp.h - the LTTng-UST tracepoint of the benchmark: same payload as the
 * marktap marker (an int, a long, a short string). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench_ust

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./ust_tp.h"

#if !defined(UST_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define UST_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench_ust, ev,
	LTTNG_UST_TP_ARGS(int, a, long, b, const char *, s),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, a, a)
		lttng_ust_field_integer(long, b, b)
		lttng_ust_field_string(s, s)
	)
)

#endif

#include <lttng/tracepoint-event.h>
