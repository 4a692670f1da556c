/*
 * hostile.c - events whose strings hold what breaks careless JSON, HTML
 * and XML writers: quotes, backslashes, "</script>", control characters,
 * invalid UTF-8; and a thread name (procname) made of the same.
 *   hostile NAME STRING...   one event hostile(i, s) per STRING
 */
#include <sys/prctl.h>
#include <marktap/marker.h>

int main(int argc, char **argv)
{
	int i;

	if (argc > 1)
		prctl(PR_SET_NAME, argv[1]);
	for (i = 2; i < argc; i++)
		trace_mark(hostile, "i %d s %s", i, argv[i]);
	return 0;
}
