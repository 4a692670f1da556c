/*
 * mt_fmt.h - marker format strings: the type system of a marker.
 *
 * A format names the fields of an event and their C types, printf style:
 *   "fd %d filename %s"      -> fd: int, filename: string
 *   "ip #p%lu"               -> ip: pointer-sized, shown in hex
 *   "jiffies #8u%llu"        -> jiffies: 8-byte unsigned
 * The word before a conversion is the field name ("argN" when there is
 * none).  An LTTng prefix "#<size><u|d>" or "#p" sets how the value is
 * stored; the conversion after it says how the argument is passed.
 * MARK_NOARGS (a lone space) has no field.
 */
#ifndef MT_FMT_H
#define MT_FMT_H

#include "mt_compat.h"

#define MT_FIELDS_MAX     32
#define MT_FIELD_NAME_MAX 32

/* How the argument travels through the varargs call. */
enum mt_va {
	MT_VA_INT,     /* int or smaller, promoted  */
	MT_VA_LONG,    /* long, size_t, ptrdiff_t   */
	MT_VA_LLONG,   /* long long                 */
	MT_VA_PTR,     /* void *                    */
	MT_VA_STRING,  /* const char *              */
	MT_VA_DOUBLE,  /* double                    */
};

/* How the value is stored in the event (little endian, packed). */
enum mt_store {
	MT_ST_INT,     /* integer of size bytes, signed or not */
	MT_ST_STRING,  /* NUL-terminated bytes                 */
	MT_ST_DOUBLE,  /* IEEE 754 binary64                    */
};

struct mt_field {
	char name[MT_FIELD_NAME_MAX];
	u8 va;          /* enum mt_va */
	u8 store;       /* enum mt_store */
	u8 size;        /* bytes stored: 1, 2, 4, 8 (ints), 8 (double) */
	u8 is_signed;
	u8 base;        /* display base: 10, 16 (%x %p #p) or 8 (%o) */
	u8 is_char;     /* %c */
	u8 is_pointer;  /* %p or #p */
	const char *ctype; /* C type the argument is passed as: "int", "unsigned long", ... */
};

/*
 * A hit's plan of its format (mt_fmt_plan): per field, how the argument
 * is taken from the va_list (high nibble, enum mt_take) and stored (low
 * nibble, enum mt_put), and the bytes of the fields that are not strings:
 * one switch per field in mt_event_fetch / mt_event_write_payload, where
 * the fields' own description takes several tests.
 */
enum mt_take { MT_TAKE_INT, MT_TAKE_UINT, MT_TAKE_WORD, MT_TAKE_STRING, MT_TAKE_DOUBLE };
enum mt_put { MT_PUT_1, MT_PUT_2, MT_PUT_4, MT_PUT_8, MT_PUT_STRING };

struct mt_format {
	unsigned nfields;
	struct mt_field fields[MT_FIELDS_MAX];
	u8 op[MT_FIELDS_MAX];   /* the plan: enum mt_take << 4 | enum mt_put */
	u32 fixed;              /* bytes of the fields that are not strings */
	u32 planned;            /* 0: no plan (fields set by hand): the fields */
};

struct mt_fmt_error {
	unsigned offset;        /* byte offset in the format */
	char message[96];
};

/* Parse fmt; 0 on success (planned), -EINVAL with *err filled otherwise. */
int mt_fmt_parse(const char *fmt, struct mt_format *out, struct mt_fmt_error *err);

/* Compute f's plan from its fields (mt_fmt_parse does). */
void mt_fmt_plan(struct mt_format *f);

/* The script-level type of a field: "long" or "string" (SystemTap's). */
const char *mt_fmt_stap_type(const struct mt_field *f);

#endif
