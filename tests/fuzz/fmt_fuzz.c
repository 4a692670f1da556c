/*
 * fmt_fuzz.c - libFuzzer target for the marker format parser and the
 * event serialiser (runtime/core, shared with marktap.ko).
 *
 * The input is a format string.  When it parses, the fields must be sane
 * (count, names, sizes), and an event with zero/empty arguments of those
 * types is serialised into a buffer of exactly the computed size, under
 * AddressSanitizer.  Build and run: tests/runtime/fmt-fuzz.t.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mt_event.h"
#include "mt_fmt.h"

static size_t fetch(const struct mt_format *f, struct mt_args *a, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, a);
	n = mt_event_fetch(f, ap, a);
	va_end(ap);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *fmt = malloc(size + 1);
	struct mt_format f;
	struct mt_fmt_error err;

	if (!fmt)
		return 0;
	memcpy(fmt, data, size);
	fmt[size] = '\0';
	if (mt_fmt_parse(fmt, &f, &err) == 0) {
		struct mt_args a;
		char *buf;
		size_t n;

		if (f.nfields > MT_FIELDS_MAX)
			abort();
		for (unsigned i = 0; i < f.nfields; i++) {
			const struct mt_field *fl = &f.fields[i];
			if (!fl->name[0] || strlen(fl->name) >= MT_FIELD_NAME_MAX || !fl->ctype)
				abort();
			if (fl->store == MT_ST_INT && fl->size != 1 && fl->size != 2 && fl->size != 4 &&
			    fl->size != 8)
				abort();
			if (strcmp(mt_fmt_stap_type(fl), "long") && strcmp(mt_fmt_stap_type(fl), "string"))
				abort();
		}
		/* every argument slot as an integer 0 or a string "": the types
		 * are passed in the registers/stack slots varargs use, so give each
		 * its own kind: pointers to "" work as both. */
		n = fetch(&f, &a, "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "",
			  "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "");
		buf = malloc(n ? n : 1);
		if (!buf)
			abort();
		mt_event_write_payload(&f, &a, buf);
		free(buf);
	} else if (err.offset > size || !err.message[0]) {
		abort();   /* an error must say what and where */
	}
	free(fmt);
	return 0;
}
