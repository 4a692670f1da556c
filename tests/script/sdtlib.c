/* sdtlib.c - a library with a <sys/sdt.h> probe, dlopen'ed by sdt-target. */
#include <sys/sdt.h>

int sdtlib_hit(int i);

int sdtlib_hit(int i)
{
	STAP_PROBE1(lib, hit, i);
	return i + 1;
}
