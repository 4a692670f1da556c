/*
 * translator_fuzz.c - libFuzzer target: lexer, preprocessor, parser and
 * pass 1's printer of marktap on arbitrary bytes.  Errors are fine; a
 * crash, a leak-driven OOM or a hang is a bug.
 *   clang -fsanitize=fuzzer,address -Itranslator -Iruntime/core ... (fuzz.t)
 */
#define _GNU_SOURCE
#include "tr.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct tr_session s;
	static FILE *devnull;
	char *text = malloc(size + 1);

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		stderr = devnull;
		tr_vec_push(&s.args, "1");
	}
	memcpy(text, data, size);
	text[size] = '\0';
	struct tr_file *f = tr_file_from_string("<fuzz>", text);
	f->len = size;
	s.guru = size && data[0] & 1;
	tr_diag.errors = 0;
	struct tr_script *sc = tr_parse(&s, f);
	if (!tr_diag.errors)
		tr_print_script(devnull, sc);
	free(text);
	return 0;
}
