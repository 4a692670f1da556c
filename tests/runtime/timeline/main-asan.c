/*
 * main-asan.c - `marktrace` with only view, stats, timeline and export, for
 * the sanitizer build of timeline-asan.t (the real main.c pulls in the
 * recorder too).
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
	static const struct {
		const char *name;
		int (*run)(int, char **);
	} commands[] = {
		{ "view", mt_cmd_view }, { "stats", mt_cmd_stats },
		{ "timeline", mt_cmd_timeline }, { "export", mt_cmd_export },
	};
	size_t i;

	for (i = 0; argc >= 2 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "usage: marktrace-asan view|stats|timeline|export ...\n");
	return 2;
}
