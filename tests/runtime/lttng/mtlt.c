/*
 * mtlt: fires the tracepoints of mtlt_tp.h a few times with values that
 * test the reader's corners (tests/runtime/lttng-read.t).  Usage: mtlt N
 *
 * The last event (last = -1) has an empty string and empty sequences:
 * babeltrace2 2.0.4 shows an earlier event's text for such fields, so the
 * test checks that event on its own rather than against babeltrace2.
 */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "mtlt_tp.h"
#include <stdlib.h>

int main(int argc, char **argv)
{
	static const char *strs[] = { "hello", "with \"quotes\" and \\ back", "\xc3\xa9t\xc3\xa9" };
	int n = argc > 1 ? atoi(argv[1]) : 10, i;

	for (i = 0; i < n; i++) {
		int a[3] = { i, -i, 7 * i };

		tracepoint(mtlt, ints, i);
		tracepoint(mtlt, texts, i, strs[i % 3], a, (size_t)(1 + i % 3), "wxyz");
		if (i % 5 == 0)
			tracepoint(mtlt, empty);
	}
	{
		static const char none[4];
		int a[3] = { 0, 0, 0 };
		tracepoint(mtlt, texts, -1, "", a, 0, none);
	}
	return 0;
}
