/*
 * tp_format.c - a kernel tracepoint's tracefs format file
 * (/sys/kernel/tracing/events/SUBSYS/NAME/format) read into the event
 * class marktrace records it with (record_tp.h); record_tp.c is above.
 *
 * A format file says, per field, "field:DECLARATION; offset:O; size:S;
 * signed:0|1;".  The declaration's C type decides little: the size and
 * the signedness are the kernel's word (sys_enter_openat declares "int
 * dfd" of size 8).  What the type does decide: char x[N] is a string,
 * __data_loc char[] x (and __rel_loc) a string stored after the fixed
 * fields, x[N] of another type an array, a pointer is shown in hex.
 * mt_tp_put_fields then copies a raw record's fields into an event's
 * payload as the class declares them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record_tp.h"

#define FORMAT_FILE_MAX (64 * 1024)

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* One field line's numbers: "offset:O;" and the like, after the declaration. */
static long number_after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	char *end;
	long v;

	if (!p)
		return -1;
	v = strtol(p + strlen(key), &end, 10);
	return end == p + strlen(key) || v < 0 ? -1 : v;
}

/* A declaration cut into its type, name and array part ("[16]", "[]", or ""). */
struct decl {
	char type[96], name[64], array[32];
};

static int split_decl(const char *d, size_t len, struct decl *out)
{
	size_t end = len, name_end, name_begin;

	while (end && d[end - 1] == ' ')
		end--;
	out->array[0] = '\0';
	if (end && d[end - 1] == ']') {
		const char *open = memrchr(d, '[', end);
		if (!open)
			return -1;
		snprintf(out->array, sizeof(out->array), "%.*s", (int)(d + end - open), open);
		end = (size_t)(open - d);
	}
	name_end = end;
	name_begin = name_end;
	while (name_begin && is_ident(d[name_begin - 1]))
		name_begin--;
	if (name_begin == name_end)
		return -1;
	snprintf(out->name, sizeof(out->name), "%.*s", (int)(name_end - name_begin), d + name_begin);
	while (name_begin && d[name_begin - 1] == ' ')
		name_begin--;
	snprintf(out->type, sizeof(out->type), "%.*s", (int)name_begin, d);
	return 0;
}

static int is_char_type(const char *type)
{
	return !strcmp(type, "char") || !strcmp(type, "const char") ||
	       !strcmp(type, "signed char");
}

/* Note a field not recorded, and why, in ev->skipped (as room allows). */
static void skip_field(struct mt_tp_event *ev, const struct decl *d, const char *why)
{
	size_t n = strlen(ev->skipped);

	if (n + 8 < sizeof(ev->skipped))
		snprintf(ev->skipped + n, sizeof(ev->skipped) - n, "%s%s (%s)", n ? ", " : "",
			 d->name, why);
}

/* The marker-format words of a field, added to ev->format. */
static void format_words(struct mt_tp_event *ev, const struct mt_field *f, unsigned array_len)
{
	static const char *const conv[2][9] = {
		{ "", "%hhu", "%hu", "", "%u", "", "", "", "%llu" },
		{ "", "%hhd", "%hd", "", "%d", "", "", "", "%lld" },
	};
	size_t n = strlen(ev->format);
	char len[16] = "";
	const char *c;

	if (array_len)
		snprintf(len, sizeof(len), "[%u]", array_len);
	if (f->store == MT_ST_STRING)
		c = "%s";
	else if (f->is_pointer && !array_len)
		c = "%p";
	else
		c = conv[f->is_signed ? 1 : 0][f->size];
	if (n < sizeof(ev->format))
		snprintf(ev->format + n, sizeof(ev->format) - n, "%s%s%s %s", n ? " " : "",
			 f->name, len, c);
}

/* Add field d (offset, size, signedness) to ev's class, or note why not. */
static void add_field(struct mt_tp_event *ev, const struct decl *d, long offset, long size,
		      int is_signed)
{
	struct mt_field *f = &ev->fmt.fields[ev->fmt.nfields];
	struct mt_tp_field *where = &ev->field[ev->fmt.nfields];
	unsigned array_len = 0;
	int kind;

	if (!strncmp(d->type, "__data_loc ", 11) || !strncmp(d->type, "__rel_loc ", 10)) {
		/* "__data_loc char[] name": the [] is the type's */
		char elem[96];
		size_t n;

		snprintf(elem, sizeof(elem), "%s", strchr(d->type, ' ') + 1);
		n = strlen(elem);
		if (n < 2 || strcmp(elem + n - 2, "[]") || d->array[0] || size != 4)
			return skip_field(ev, d, "a dynamic field not of char");
		elem[n - 2] = '\0';
		if (!is_char_type(elem))
			return skip_field(ev, d, "a dynamic array not of char");
		kind = d->type[2] == 'd' ? MT_TP_DATA_LOC : MT_TP_REL_LOC;
	} else if (d->array[0] && is_char_type(d->type) && size > 0) {
		kind = MT_TP_CHARS;
	} else if (d->array[0]) {
		long n = strtol(d->array + 1, NULL, 10);
		if (n <= 0 || size % n || (size / n != 1 && size / n != 2 && size / n != 4 &&
					   size / n != 8) || n > 0xffff)
			return skip_field(ev, d, "an array of no integer type");
		kind = MT_TP_ARRAY;
		array_len = (unsigned)n;
	} else if (size == 1 || size == 2 || size == 4 || size == 8) {
		kind = MT_TP_INT;
	} else {
		return skip_field(ev, d, "not an integer");
	}
	if (ev->fmt.nfields == MT_FIELDS_MAX)
		return skip_field(ev, d, "more fields than a class holds");
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%.*s", (int)sizeof(f->name) - 1, d->name);
	where->offset = (u16)offset;
	where->size = (u16)size;
	where->kind = (u8)kind;
	if (kind == MT_TP_CHARS || kind == MT_TP_DATA_LOC || kind == MT_TP_REL_LOC) {
		f->va = MT_VA_STRING;
		f->store = MT_ST_STRING;
		f->ctype = "const char *";
	} else {
		f->va = MT_VA_LLONG;
		f->store = MT_ST_INT;
		f->size = (u8)(array_len ? size / array_len : size);
		f->is_signed = (u8)is_signed;
		f->is_pointer = strchr(d->type, '*') != NULL;
		f->base = f->is_pointer ? 16 : 10;
		f->ctype = is_signed ? "long long" : "unsigned long long";
	}
	ev->array_len[ev->fmt.nfields] = (u16)array_len;
	format_words(ev, f, array_len);
	ev->fmt.nfields++;
}

int mt_tp_add_int(struct mt_tp_event *ev, const char *name, u16 offset, u8 size, int is_signed,
		  int is_pointer)
{
	struct mt_field *f = &ev->fmt.fields[ev->fmt.nfields];
	struct mt_tp_field *where = &ev->field[ev->fmt.nfields];

	if (ev->fmt.nfields == MT_FIELDS_MAX)
		return -1;
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%.*s", (int)sizeof(f->name) - 1, name);
	where->offset = offset;
	where->size = size;
	where->kind = MT_TP_INT;
	f->va = MT_VA_LLONG;
	f->store = MT_ST_INT;
	f->size = size;
	f->is_signed = (u8)is_signed;
	f->is_pointer = (u8)is_pointer;
	f->base = is_pointer ? 16 : 10;
	f->ctype = is_signed ? "long long" : "unsigned long long";
	ev->array_len[ev->fmt.nfields] = 0;
	format_words(ev, f, 0);
	ev->fmt.nfields++;
	return 0;
}

/* One "field:..." line. */
static int parse_field(struct mt_tp_event *ev, const char *line, char *err, size_t errlen)
{
	const char *d = line + strlen("field:"), *semi = strchr(d, ';');
	long offset = number_after(line, "offset:"), size = number_after(line, "size:");
	long sign = number_after(line, "signed:");
	struct decl decl;

	if (!semi || offset < 0 || size < 0 || sign < 0 || offset > 0xffff || size > 0xffff ||
	    split_decl(d, (size_t)(semi - d), &decl) < 0) {
		snprintf(err, errlen, "%s: format: cannot read the field line '%.80s'", ev->name,
			 line);
		return -1;
	}
	if (!strncmp(decl.name, "common_", 7)) {
		if (!strcmp(decl.name, "common_pid") && size == 4)
			ev->pid_offset = (int)offset;
		return 0;
	}
	add_field(ev, &decl, offset, size, sign != 0);
	return 0;
}

int mt_tp_parse_format(const char *name, const char *text, struct mt_tp_event *ev,
		       char *err, size_t errlen)
{
	const char *line = text;
	int have_id = 0;

	memset(ev, 0, sizeof(*ev));
	ev->pid_offset = -1;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	while (*line) {
		size_t len = strcspn(line, "\n");
		char buf[512];
		const char *l;

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line += len + (line[len] == '\n');
		l = buf + strspn(buf, " \t");
		if (!strncmp(l, "ID:", 3)) {
			char *end;
			unsigned long id = strtoul(l + 3, &end, 10);
			have_id = end != l + 3 && id <= 0xffffffffUL;
			ev->id = (u32)id;
		} else if (!strncmp(l, "field:", 6) && parse_field(ev, l, err, errlen) < 0) {
			return -1;
		} else if (!strncmp(l, "print fmt:", 10)) {
			break;
		}
	}
	if (!have_id) {
		snprintf(err, errlen, "%s: format: no ID line", name);
		return -1;
	}
	if (!ev->format[0])   /* no field: MARK_NOARGS's way */
		strcpy(ev->format, " ");
	return 0;
}

/* A string of at most max bytes at p, NUL-terminated in out: its length + 1. */
static size_t put_string(char *out, const char *p, size_t max)
{
	size_t n = strnlen(p, max);

	memcpy(out, p, n);
	out[n] = '\0';
	return n + 1;
}

size_t mt_tp_put_fields(const struct mt_tp_event *ev, const char *raw, u32 raw_size, char *out)
{
	size_t o = 0;
	unsigned i;

	for (i = 0; i < ev->fmt.nfields; i++) {
		const struct mt_tp_field *f = &ev->field[i];
		u32 loc, at, len;

		if ((u32)f->offset + f->size > raw_size) {   /* a record shorter than its format */
			if (ev->fmt.fields[i].store == MT_ST_STRING)
				out[o++] = '\0';
			else {
				memset(out + o, 0, f->size);
				o += f->size;
			}
			continue;
		}
		switch (f->kind) {
		case MT_TP_INT:
		case MT_TP_ARRAY:
			memcpy(out + o, raw + f->offset, f->size);
			o += f->size;
			break;
		case MT_TP_CHARS:
			o += put_string(out + o, raw + f->offset, f->size);
			break;
		default:   /* __data_loc / __rel_loc: u32 offset | length << 16 */
			memcpy(&loc, raw + f->offset, 4);
			at = (loc & 0xffff) + (f->kind == MT_TP_REL_LOC ? f->offset + 4u : 0);
			len = loc >> 16;
			if (at > raw_size)
				at = raw_size;
			if (len > raw_size - at)
				len = raw_size - at;
			o += put_string(out + o, raw + at, len);
		}
	}
	return o;
}

int mt_tp_read_event(const char *tracefs, const char *name, struct mt_tp_event *ev,
		     char *err, size_t errlen)
{
	char path[512], *text;
	size_t colon = strcspn(name, ":");
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/events/%.*s/%s/format", tracefs, (int)colon, name,
		 name[colon] ? name + colon + 1 : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	text = malloc(FORMAT_FILE_MAX + 1);
	if (!text) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* tracefs files read in pieces */
	while (got < FORMAT_FILE_MAX && (n = read(fd, text + got, FORMAT_FILE_MAX - (size_t)got)) > 0)
		got += n;
	close(fd);
	text[got] = '\0';
	n = mt_tp_parse_format(name, text, ev, err, errlen);
	free(text);
	return (int)n;
}
