/* lib.c - a library with a marker, dlopen'ed by target.c ("dlopen" mode). */
#include <marktap/marker.h>

int mtlib_hit(int k);

int mtlib_hit(int k)
{
	trace_mark(lib_ev, "k %d what %s", k, "from the library");
	return k + 1;
}
