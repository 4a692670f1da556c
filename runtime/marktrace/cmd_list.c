/*
 * cmd_list.c - marktrace list [-p PID | BINARY...]: markers and formats.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "marktrace.h"
#include "mt_fmt.h"
#include "mt_notes.h"

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

int mt_cmd_list(int argc, char **argv)
{
	int i, rc = 0, count = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		FILE *out = argc < 2 ? stderr : stdout;
		fprintf(out, "usage: marktrace list BINARY...\n"
			"       marktrace list -p PID\n"
			"       marktrace list --kernel\n"
			"Prints one line per marker: NAME \"FORMAT\" (FIELD:C-TYPE ...) OBJECT\n");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "-p")) {
		if (argc != 3) {
			mt_error("list: -p needs one process id");
			return 2;
		}
		rc = list_pid(argv[2], &count);
	} else if (!strcmp(argv[1], "--kernel") || !strcmp(argv[1], "-k")) {
		return mt_list_kernel();
	} else {
		for (i = 1; i < argc; i++) {
			char err[256];
			if (mt_notes_read(argv[i], print_marker, &count, err, sizeof(err)) < 0) {
				mt_error("list: %s", err);
				rc = 1;
			}
		}
	}
	return rc;
}
