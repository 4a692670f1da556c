/*
 * sdt_fuzz.c - libFuzzer target for the SDT note reader and the operand
 * parser (runtime/tools/mt_sdt.c): the input is an ELF file (written to a
 * memfd and read through /proc/self/fd), and every probe's operands are
 * parsed.  What must hold: no crash, no leak, no read outside the input,
 * and what comes back is sane (strings NUL-terminated, at most
 * MT_SDT_MAXARGS operands of 1, 2, 4 or 8 bytes).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mt_sdt.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static int fd = -1;
	struct mt_sdt_probe *p;
	struct mt_sdt_arg args[MT_SDT_MAXARGS];
	char path[64], err[256];
	size_t n;

	if (fd < 0)
		fd = memfd_create("sdt-fuzz", 0);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (mt_sdt_read(path, &p, &n, err, sizeof(err)) < 0) {
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int k = mt_sdt_parse_args(p[i].args, args, MT_SDT_MAXARGS, err, sizeof(err));
		if (k > MT_SDT_MAXARGS)
			abort();
		for (int j = 0; j < k; j++)
			if (args[j].size != 1 && args[j].size != 2 && args[j].size != 4 && args[j].size != 8)
				abort();
		if (strlen(p[i].provider) + strlen(p[i].name) > size)
			abort();
	}
	mt_sdt_free(p, n);
	/* the operand parser alone, on the input as text */
	if (size < 512) {
		char text[512];
		memcpy(text, data, size);
		text[size] = '\0';
		mt_sdt_parse_args(text, args, MT_SDT_MAXARGS, err, sizeof(err));
	}
	return 0;
}
