/*
 * view-main.c - `marktrace` with only view and stats, for the sanitizer
 * build of view-asan.t (the real main.c pulls in the recorder too).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "marktrace.h"

void mt_error(const char *fmt, ...)
{
	va_list ap;

	fputs("marktrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "view"))
		return mt_cmd_view(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "stats"))
		return mt_cmd_stats(argc - 1, argv + 1);
	fprintf(stderr, "usage: marktrace-asan view|stats ...\n");
	return 2;
}
