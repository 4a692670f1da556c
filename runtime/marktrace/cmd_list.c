/*
 * cmd_list.c - marktrace list [-p PID | BINARY...]: markers and formats.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "marktrace.h"
#include "mt_fmt.h"
#include "mt_notes.h"
#include "mt_sdt.h"

static int print_marker(const char *path, const char *name, const char *format, void *arg)
{
	struct mt_format f;
	struct mt_fmt_error e;
	unsigned i;
	int *count = arg;

	printf("%s \"%s\"", name, format);
	if (mt_fmt_parse(format, &f, &e) == 0) {
		for (i = 0; i < f.nfields; i++)
			printf("%s%s:%s", i ? " " : " (", f.fields[i].name, f.fields[i].ctype);
		if (f.nfields)
			putchar(')');
	} else {
		printf(" [bad format at offset %u: %s]", e.offset, e.message);
	}
	printf(" %s\n", path);
	(*count)++;
	return 0;
}

/* The ELF objects a process has mapped, from /proc/PID/maps. */
static int list_pid(const char *pid, int *count)
{
	char path[64], line[4096], last[4096] = "";
	FILE *maps;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	maps = fopen(path, "r");
	if (!maps) {
		mt_error("list: -p %s: no such process (or not yours)", pid);
		return 1;
	}
	while (fgets(line, sizeof(line), maps)) {
		char *file = strchr(line, '/');
		char err[256];
		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		if (!strcmp(file, last) || strstr(file, " (deleted)"))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		if (mt_notes_read(file, print_marker, count, err, sizeof(err)) < 0 &&
		    strstr(err, "not an ELF") == NULL) {
			mt_error("list: %s", err);
			rc = 1;
		}
	}
	fclose(maps);
	return rc;
}

static int usage(FILE *out)
{
	fprintf(out, "usage: marktrace list BINARY...\n"
		"       marktrace list -p PID\n"
		"       marktrace list --kernel\n"
		"       marktrace list --tracepoints [SUBSYS:NAME-GLOB]...\n"
		"       marktrace list --kernel --function GLOB...\n"
		"Prints one line per marker: NAME \"FORMAT\" (FIELD:C-TYPE ...) OBJECT;\n"
		"per kernel tracepoint: SUBSYS:NAME \"FIELDS\" as record --kernel -e records them;\n"
		"per kernel function (BTF): its C prototype, and what record --function\n"
		"does not record of it\n");
	return out == stdout ? 0 : 2;
}

/*
 * A file without markers.  One with <sys/sdt.h> probes of other providers
 * (a program built with dtrace -G, a library with STAP_PROBE) is not
 * empty to a user who saw them in readelf: say that marktrace records
 * markers only, and how marktap probes them.
 */
static void say_no_markers(const char *file)
{
	struct mt_sdt_probe *p = NULL;
	size_t n = 0, i, others = 0, first = 0;
	char err[256];

	if (mt_sdt_read(file, &p, &n, err, sizeof(err)) < 0)
		n = 0;
	for (i = 0; i < n; i++)
		if (strcmp(p[i].provider, "marktap") && !others++)
			first = i;
	if (others)
		mt_error("list: warning: %s has no markers, but %zu <sys/sdt.h> probe%s (%s:%s...): "
			 "marktrace records markers only; marktap probes them as "
			 "process(\"%s\").provider(\"%s\").mark(\"%s\")", file, others,
			 others == 1 ? "" : "s", p[first].provider, p[first].name, file,
			 p[first].provider, p[first].name);
	else
		mt_error("list: warning: %s has no markers (no trace_mark site in it: "
			 "markers of its libraries are theirs, 'marktrace list -p PID' "
			 "lists a running process's)", file);
	mt_sdt_free(p, n);
}

/* The markers of each file; a file without any is said (a program whose
 * markers are in its libraries has none of its own). */
static int list_files(char **files, int n)
{
	int i, rc = 0;

	for (i = 0; i < n; i++) {
		char err[256];
		int count = 0;
		if (mt_notes_read(files[i], print_marker, &count, err, sizeof(err)) < 0) {
			mt_error("list: %s", err);
			rc = 1;
		} else if (!count) {
			say_no_markers(files[i]);
		}
	}
	return rc;
}

int mt_cmd_list(int argc, char **argv)
{
	static const struct option options[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "kernel", no_argument, NULL, 'k' },
		{ "tracepoints", no_argument, NULL, 't' },
		{ "function", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pid = NULL;
	char **functions = calloc((size_t)argc + 1, sizeof(char *));
	int c, kernel = 0, tracepoints = 0, count = 0, nfunctions = 0, rc;

	if (!functions) {
		mt_error("list: out of memory");
		return 1;
	}

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:kh", options, NULL)) != -1) {
		switch (c) {
		case 'p': pid = optarg; break;
		case 'k': kernel = 1; break;
		case 't': tracepoints = 1; break;
		case 'F': functions[nfunctions++] = optarg; break;
		case 'h': free(functions); return usage(stdout);
		default: free(functions); return usage(stderr);
		}
	}
	/* --function GLOB, and the operands too: globs */
	if (nfunctions && !pid && !tracepoints) {
		while (optind < argc)
			functions[nfunctions++] = argv[optind++];
		rc = mt_list_functions(functions, nfunctions);
		free(functions);
		return rc;
	}
	free(functions);
	if (nfunctions) {
		mt_error("list: --function lists kernel functions: not with -p or --tracepoints");
		return usage(stderr);
	}
	if (tracepoints && !pid && !kernel)   /* the operands are globs */
		return mt_list_tracepoints(argv + optind, argc - optind);
	if ((pid != NULL) + kernel + tracepoints + (optind < argc) != 1) {
		if (pid || kernel || optind < argc)
			mt_error("list: give binaries, -p PID or --kernel, one of them");
		return usage(stderr);
	}
	if (kernel)
		return mt_list_kernel();
	if (!pid)
		return list_files(argv + optind, argc - optind);
	rc = list_pid(pid, &count);
	if (!rc && !count)
		mt_error("list: warning: process %s has no markers (none of its objects has a "
			 "trace_mark site)", pid);
	return rc;
}
