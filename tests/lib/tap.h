/* tap.h - a minimal TAP producer for C tests (readable by prove and automake). */
#ifndef MT_TAP_H
#define MT_TAP_H
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>

static int tap_n, tap_failed;
#define TAP_UNUSED __attribute__((unused))

TAP_UNUSED static void tap_plan(int n) { printf("1..%d\n", n); fflush(stdout); }

TAP_UNUSED static int __attribute__((format(printf, 2, 3))) tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

TAP_UNUSED static void __attribute__((format(printf, 1, 2))) tap_diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

TAP_UNUSED static int tap_done(void) { return tap_failed ? 1 : 0; }
#endif
