/*
 * main.c - marktrace: record, list, view and summarise marker traces.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "marktrace.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "record", mt_cmd_record, "record marker hits of a program (or the kernel) to a CTF trace" },
	{ "list",   mt_cmd_list,   "list the markers of a binary or a running process" },
	{ "view",   mt_cmd_view,   "print a trace's events in time order" },
	{ "stats",  mt_cmd_stats,  "events per marker, lost events and duration of a trace" },
	{ "timeline", mt_cmd_timeline, "draw what each CPU and thread did over time (HTML or SVG)" },
	{ "export", mt_cmd_export, "write a trace as Chrome trace-event JSON (Perfetto, chrome://tracing)" },
};

void mt_error(const char *fmt, ...)
{
	va_list ap;

	fputs("marktrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: marktrace COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'marktrace COMMAND --help' describes a command; see marktrace(1).\n");
	return out == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		printf("marktrace %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	mt_error("'%s' is not a command; see 'marktrace --help'", argv[1]);
	return 2;
}
