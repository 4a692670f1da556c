/*
 * fmt-test.c - the format parser: the whole kernel catalogue, the LTTng
 * type prefixes, C types, and malformed formats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mt_fmt.h"
#include "mt_event.h"
#include "../lib/tap.h"

/* Names a reader derives by hand: the word before each conversion. */
static int expected_names(const char *fmt, char names[][MT_FIELD_NAME_MAX], int max)
{
	char buf[512], *tok, *save, prev[64] = "";
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", fmt);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (strchr(tok, '%')) {
			if (n == max)
				return -1;
			if (prev[0])
				snprintf(names[n], MT_FIELD_NAME_MAX, "%s", prev);
			else
				snprintf(names[n], MT_FIELD_NAME_MAX, "arg%d", n + 1);
			n++;
			prev[0] = '\0';
		} else {
			snprintf(prev, sizeof(prev), "%s", tok);
		}
	}
	return n;
}

static void catalogue(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int total = 0, good = 0;

	if (!tap_ok(f != NULL, "open %s", path))
		return;
	if (!fgets(line, sizeof(line), f)) { /* header */
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *name = strtok(line, "\t"), *fmt = strtok(NULL, "\t");
		char names[MT_FIELDS_MAX][MT_FIELD_NAME_MAX];
		struct mt_format out;
		struct mt_fmt_error err;
		int n, i, ok;

		if (!name || !fmt)
			continue;
		total++;
		if (!strcmp(fmt, "MARK_NOARGS"))
			fmt = " ";
		else if (fmt[0] == '"') {
			fmt++;
			fmt[strlen(fmt) - 1] = '\0';
		}
		n = expected_names(fmt, names, MT_FIELDS_MAX);
		ok = mt_fmt_parse(fmt, &out, &err) == 0 && (int)out.nfields == n;
		for (i = 0; ok && i < n; i++)
			ok = !strcmp(out.fields[i].name, names[i]);
		if (ok)
			good++;
		else
			tap_diag("%s \"%s\": parse failed or names differ", name, fmt);
	}
	fclose(f);
	tap_ok(total == 90, "the catalogue has 90 markers (%d)", total);
	tap_ok(good == total, "every catalogue format parses with the expected field names (%d/%d)",
	       good, total);
}

struct expect {
	const char *fmt;
	unsigned field;
	const char *name, *ctype;
	unsigned size, is_signed, base, store, pointer;
};

static const struct expect expects[] = {
	{ "fd %d filename %s", 0, "fd", "int", 4, 1, 10, MT_ST_INT, 0 },
	{ "fd %d filename %s", 1, "filename", "const char *", 0, 0, 10, MT_ST_STRING, 0 },
	{ "ip #p%lu", 0, "ip", "unsigned long", 8, 0, 16, MT_ST_INT, 1 },
	{ "address %lu ip #p%ld write_access %d", 1, "ip", "long", 8, 0, 16, MT_ST_INT, 1 },
	{ "jiffies #8u%llu xtime_sec %ld", 0, "jiffies", "unsigned long long", 8, 0, 10, MT_ST_INT, 0 },
	{ "jiffies #8u%llu xtime_sec %ld", 1, "xtime_sec", "long", 8, 1, 10, MT_ST_INT, 0 },
	{ "skb %p protocol #2u%hu", 1, "protocol", "unsigned short", 2, 0, 10, MT_ST_INT, 0 },
	{ "skb %p protocol #2u%hu", 0, "skb", "void *", 8, 0, 16, MT_ST_INT, 1 },
	{ "label %s address #4u%lu", 1, "address", "unsigned long", 4, 0, 10, MT_ST_INT, 0 },
	{ "fd %d timeout #8d%lld", 1, "timeout", "long long", 8, 1, 10, MT_ST_INT, 0 },
	{ "fd %u count %zu", 1, "count", "size_t", 8, 0, 10, MT_ST_INT, 0 },
	{ "loglevel %c string %s ip %p", 0, "loglevel", "char", 1, 1, 10, MT_ST_INT, 0 },
	{ "%p", 0, "arg1", "void *", 8, 0, 16, MT_ST_INT, 1 },
	{ "a %hhu b %hd", 0, "a", "unsigned char", 1, 0, 10, MT_ST_INT, 0 },
	{ "v=%x", 0, "v", "unsigned int", 4, 0, 16, MT_ST_INT, 0 },
	{ "ratio %f", 0, "ratio", "double", 8, 1, 10, MT_ST_DOUBLE, 0 },
	{ "a %d a %d", 1, "a_2", "int", 4, 1, 10, MT_ST_INT, 0 },
};

static void types(void)
{
	size_t i;

	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++) {
		const struct expect *e = &expects[i];
		struct mt_format f;
		const struct mt_field *fld;
		int ok = mt_fmt_parse(e->fmt, &f, NULL) == 0 && f.nfields > e->field;

		fld = &f.fields[e->field];
		ok = ok && !strcmp(fld->name, e->name) && !strcmp(fld->ctype, e->ctype) &&
		     fld->size == e->size && fld->store == e->store && fld->base == e->base &&
		     fld->is_pointer == e->pointer &&
		     (e->store == MT_ST_STRING || fld->is_signed == e->is_signed);
		if (!tap_ok(ok, "\"%s\" field %u: %s %s, %u bytes", e->fmt, e->field, e->ctype,
			    e->name, e->size) && f.nfields > e->field)
			tap_diag("got %s %s size %u signed %u base %u", fld->ctype, fld->name,
				 fld->size, fld->is_signed, fld->base);
	}
	{
		struct mt_format f;
		tap_ok(mt_fmt_parse(" ", &f, NULL) == 0 && f.nfields == 0,
		       "MARK_NOARGS has no field");
		tap_ok(mt_fmt_parse("100%% done %d", &f, NULL) == 0 && f.nfields == 1 &&
		       !strcmp(f.fields[0].name, "done"), "%%%% is literal text");
	}
}

static const struct { const char *fmt; unsigned offset; const char *words; } bad[] = {
	{ "fd %q", 4, "unknown conversion" },
	{ "fd %", 4, "ends inside" },
	{ "x #3u%d", 3, "size 1, 2, 4 or 8" },
	{ "x #8x%d", 4, "'u' or 'd'" },
	{ "x #8u", 5, "'%' conversion" },
	{ "x #8u%s", 6, "not allowed before %s" },
	{ "x %n", 3, "not allowed" },
	{ "x %*d", 3, "'*' width" },
	{ "x %lhd", 5, "conflicting" },
	{ "x %lc", 4, "length modifier on %c" },
};

static void malformed(void)
{
	size_t i;
	struct mt_format f;
	struct mt_fmt_error e;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = mt_fmt_parse(bad[i].fmt, &f, &e);
		tap_ok(rc != 0 && e.offset == bad[i].offset && strstr(e.message, bad[i].words),
		       "\"%s\" rejected at offset %u: %s", bad[i].fmt, bad[i].offset,
		       rc ? e.message : "(accepted)");
	}
	tap_ok(mt_fmt_parse(NULL, &f, &e) != 0, "NULL format rejected");
	{
		char many[400] = "";
		int k;
		for (k = 0; k < 33; k++)
			strcat(many, "x %d ");
		tap_ok(mt_fmt_parse(many, &f, &e) != 0 && strstr(e.message, "too many"),
		       "33 fields rejected");
	}
}

/*
 * The plan (mt_fmt_plan) against the fields it was made from: the same
 * arguments fetched and written both ways give the same size and bytes.
 */
static int same_both_ways(const char *fmt, ...)
{
	struct mt_format planned, by_fields;
	struct mt_args a1, a2;
	char out1[512], out2[512];
	size_t n1, n2;
	va_list ap, ap2;

	if (mt_fmt_parse(fmt, &planned, NULL) || !planned.planned)
		return 0;
	by_fields = planned;
	by_fields.planned = 0;
	memset(out1, 0xaa, sizeof(out1));
	memset(out2, 0x55, sizeof(out2));
	va_start(ap, fmt);
	va_copy(ap2, ap);
	n1 = mt_event_fetch(&planned, ap, &a1);
	n2 = mt_event_fetch(&by_fields, ap2, &a2);
	va_end(ap2);
	va_end(ap);
	if (n1 != n2 || n1 > sizeof(out1))
		return 0;
	mt_event_write_payload(&planned, &a1, out1);
	mt_event_write_payload(&by_fields, &a2, out2);
	return memcmp(out1, out2, n1) == 0;
}

static void plans(void)
{
	char longer[100];

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	tap_ok(same_both_ways("c %c hh %hhd hu %hhu h %hd hx %hx i %d u %u x %x",
			      'A', -100, 200, -30000, 0xfff0, -2000000000, 4000000000u, 0xdeadbeefu),
	       "plan: char, short and int fields as the fields say");
	tap_ok(same_both_ways("ld %ld lu %lu ll %lld llu %llu p %p z %zu",
			      -9000000000000000000L, 18000000000000000000UL, -5LL, 7ULL,
			      (void *)0x1234, (size_t)99),
	       "plan: long, long long, pointer and size_t fields");
	tap_ok(same_both_ways("s %s e %s n %s l %s d %f", "abc", "", (const char *)0, longer, 2.5),
	       "plan: short, empty, NULL and 99-byte strings and a double");
	tap_ok(same_both_ways("a #8u%llu b #4d%d c #2u%u d #1u%u k #p%lu",
			      123456789012ULL, -7, 65535u, 255u, 0xffffffff81000000UL),
	       "plan: LTTng type prefixes");
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096];

	tap_plan(2 + 1 + 17 + 2 + 10 + 2 + 4);
	snprintf(path, sizeof(path), "%s/tapsets/markers.tsv", src ? src : "..");
	catalogue(path);
	types();
	malformed();
	plans();
	return tap_done();
}
