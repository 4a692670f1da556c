/*
 * tp-format-test.c - tracefs format files read into event classes, and
 * raw records into payloads (runtime/marktrace/tp_format.c), on made-up
 * formats: every kind of field, what is skipped and why, malformed
 * files, and records that lie about their strings.  TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record_tp.h"

static int test_no, failed;

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_no, what);
	failed |= !cond;
}

static void is_str(const char *got, const char *want, const char *what)
{
	ok(!strcmp(got, want), what);
	if (strcmp(got, want))
		printf("#   got:      '%s'\n#   expected: '%s'\n", got, want);
}

#define COMMON "format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char switch_fmt[] = "name: sched_switch\nID: 372\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:28;\tsize:8;\tsigned:1;\n"
	"\tfield:const char * filename;\toffset:36;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long args[2];\toffset:44;\tsize:16;\tsigned:0;\n"
	"\tfield:__data_loc char[] name;\toffset:60;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rel;\toffset:64;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u64[] addrs;\toffset:68;\tsize:4;\tsigned:0;\n"
	"\tfield:struct foo blob;\toffset:72;\tsize:12;\tsigned:0;\n"
	"\tfield:u8 bytes[3];\toffset:84;\tsize:3;\tsigned:0;\n"
	"\tfield:bool flag;\toffset:87;\tsize:1;\tsigned:0;\n\n"
	"print fmt: \"field:int not_a_field; offset:0; size:4; signed:1;\"\n";

static void test_classes(void)
{
	struct mt_tp_event ev;
	char err[256] = "";
	char text[8192];
	int rc, i, n;

	rc = mt_tp_parse_format("sched:sched_switch", switch_fmt, &ev, err, sizeof(err));
	ok(rc == 0 && ev.id == 372 && ev.pid_offset == 4, "a format: its id, common_pid's offset");
	is_str(ev.name, "sched:sched_switch", "... the class is named SUBSYS:NAME");
	is_str(ev.format, "prev_comm %s prev_pid %d prev_state %lld filename %p args[2] %llu "
	       "name %s rel %s bytes[3] %hhu flag %hhu",
	       "... its fields as marker-format words, common_* and the print fmt left out");
	ok(ev.fmt.nfields == 9, "... 9 fields recorded");
	ok(ev.field[0].kind == MT_TP_CHARS && ev.fmt.fields[0].store == MT_ST_STRING,
	   "char x[16]: a string");
	ok(ev.fmt.fields[2].size == 8 && ev.fmt.fields[2].is_signed, "long: 8 bytes, signed");
	ok(ev.fmt.fields[3].base == 16 && !ev.fmt.fields[3].is_signed, "a pointer: in hex");
	ok(ev.field[4].kind == MT_TP_ARRAY && ev.array_len[4] == 2 && ev.fmt.fields[4].size == 8,
	   "unsigned long args[2]: an array of 2 of 8 bytes");
	ok(ev.field[5].kind == MT_TP_DATA_LOC && ev.field[6].kind == MT_TP_REL_LOC,
	   "__data_loc and __rel_loc char[]: strings");
	ok(ev.field[7].kind == MT_TP_ARRAY && ev.array_len[7] == 3 && ev.fmt.fields[7].size == 1,
	   "u8 bytes[3]: an array, not a string (only char is)");
	is_str(ev.skipped, "addrs (a dynamic array not of char), blob (not an integer)",
	       "... what is not recorded, and why");

	/* more fields than a class holds */
	n = snprintf(text, sizeof(text), "ID: 7\n" COMMON);
	for (i = 0; i < MT_FIELDS_MAX + 2; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n", i, 8 + 4 * i);
	rc = mt_tp_parse_format("x:many", text, &ev, err, sizeof(err));
	ok(rc == 0 && ev.fmt.nfields == MT_FIELDS_MAX, "34 fields: the first 32 recorded");
	is_str(ev.skipped, "f32 (more fields than a class holds), f33 (more fields than a class holds)",
	       "... the others named");

	/* a long name is cut to what a field name holds */
	rc = mt_tp_parse_format("x:long", "ID: 1\nformat:\n\tfield:int "
				"a_very_long_field_name_of_more_than_thirty_one;\toffset:8;\tsize:4;\tsigned:1;\n",
				&ev, err, sizeof(err));
	ok(rc == 0 && strlen(ev.fmt.fields[0].name) == MT_FIELD_NAME_MAX - 1, "a long name: cut");
	rc = mt_tp_parse_format("x:none", "ID: 2\nformat:\n" COMMON, &ev, err, sizeof(err));
	is_str(rc == 0 ? ev.format : "error", " ", "no field but the common ones: MARK_NOARGS's format");

	rc = mt_tp_parse_format("x:noid", "format:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n",
				&ev, err, sizeof(err));
	ok(rc < 0, "no ID line: an error");
	is_str(err, "x:noid: format: no ID line", "... saying so");
	rc = mt_tp_parse_format("x:bad", "ID: 3\nformat:\n\tfield:int a;\toffset:8;\tsigned:1;\n",
				&ev, err, sizeof(err));
	ok(rc < 0, "a field line without size: an error");
	is_str(err, "x:bad: format: cannot read the field line 'field:int a;\toffset:8;\tsigned:1;'",
	       "... quoting it");
	rc = mt_tp_parse_format("x:bad2", "ID: 3\nformat:\n\tfield:;\toffset:8;\tsize:4;\tsigned:1;\n",
				&ev, err, sizeof(err));
	ok(rc < 0, "a field line without a name: an error");
}

static void put32(char *p, unsigned v) { memcpy(p, &v, 4); }

static void test_payload(void)
{
	struct mt_tp_event ev;
	char err[256], raw[96], *out = malloc(MT_TP_PAYLOAD_MAX), want[128];
	unsigned long args[2] = { 7, 0xfffffffffffffff0ul };
	long state = -2;
	size_t n, w = 0;

	if (!out || mt_tp_parse_format("sched:sched_switch", switch_fmt, &ev, err, sizeof(err)) < 0) {
		ok(0, "setup");
		return;
	}
	memset(raw, 'Z', sizeof(raw));
	memcpy(raw + 8, "cat\0garbage.....", 16);
	put32(raw + 24, 1234);
	memcpy(raw + 28, &state, 8);
	memcpy(raw + 36, "\x10\x20\x30\x40\x50\x60\x70\x80", 8);
	memcpy(raw + 44, args, 16);
	put32(raw + 60, 88 | 5u << 16);        /* "/bin" and its NUL at 88 */
	put32(raw + 64, (88 - 68) | 3u << 16);  /* "/bi": from the end of the field, cut at 3 */
	memcpy(raw + 84, "\x01\x02\x03\x01", 4);
	memcpy(raw + 88, "/bin", 5);
	n = mt_tp_put_fields(&ev, raw, 93, out);
	memcpy(want + w, "cat", 4), w += 4;
	put32(want + w, 1234), w += 4;
	memcpy(want + w, &state, 8), w += 8;
	memcpy(want + w, raw + 36, 8), w += 8;
	memcpy(want + w, args, 16), w += 16;
	memcpy(want + w, "/bin", 5), w += 5;
	memcpy(want + w, "/bi", 4), w += 4;
	memcpy(want + w, "\x01\x02\x03\x01", 4), w += 4;
	ok(n == w && !memcmp(out, want, w), "a record: every kind of field stored as declared");

	/* strings that point past the record, a record shorter than its format */
	put32(raw + 60, 90 | 200u << 16);
	put32(raw + 64, 0xffff | 0xffffu << 16);
	n = mt_tp_put_fields(&ev, raw, 93, out);
	ok(n == w - 5 - 4 + 3 + 1 && !memcmp(out + 40, "in", 3) && out[43] == '\0',
	   "a __data_loc past the end: cut at the record's end; a __rel_loc outside it: \"\"");
	n = mt_tp_put_fields(&ev, raw, 30, out);
	ok(n == 4 + 4 + 8 + 8 + 16 + 1 + 1 + 3 + 1 && out[0] == 'c' && !out[8] && !out[15],
	   "a record of 30 bytes: the fields past it are zeros and empty strings");
	free(out);
}

int main(void)
{
	test_classes();
	test_payload();
	printf("1..%d\n", test_no);
	return failed;
}
