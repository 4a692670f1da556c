/* ufunc-pltlib.c - a library whose calls go through its own PLT
 * (tests/script/ufunc-plt.t). */
#include <unistd.h>

long pl_lib(long n)
{
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += getppid() > 0;
	return sum;
}
