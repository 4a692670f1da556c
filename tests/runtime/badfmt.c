/* badfmt.c - a marker whose format the compiler accepts but libmarktap refuses. */
#include <marktap/marker.h>

int main(void)
{
	trace_mark(bad_prefix, "x #3u%d", 1);
	trace_mark(good_one, "y %d", 2);
	return 0;
}
