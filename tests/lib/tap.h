/* tap.h - a minimal TAP producer for C tests (readable by prove and automake). */
#ifndef MT_TAP_H
#define MT_TAP_H
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static void tap_plan(int n) { printf("1..%d\n", n); fflush(stdout); }

static int __attribute__((format(printf, 2, 3))) tap_ok(int cond, const char *fmt, ...)
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

static void __attribute__((format(printf, 1, 2))) tap_diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int tap_done(void) { return tap_failed ? 1 : 0; }
#endif
