/*
 * ctf_int.h - what the two halves of the CTF reader share: the metadata
 * parser (ctf_tsdl.c) computes a struct ctf_layout once per trace, the
 * stream reader (ctf_read.c) uses it for every packet and event.
 */
#ifndef CTF_INT_H
#define CTF_INT_H

#include "ctf_read.h"

/*
 * Where a field of a header or context struct is: every integer of a
 * marktap trace is byte aligned, so the offsets are fixed.
 */
struct fixed {
	int off;                /* byte offset in its struct, -1 when absent */
	unsigned size;          /* bytes */
};

/*
 * A TSDL type, as parsed.  Traces outside the fixed subset (LTTng's: bit
 * fields, variants, sequences, big-endian fields...) are decoded by walking
 * these trees (ctf_read.c, "generic" decoding).
 */
enum { TY_INT, TY_FLOAT, TY_STRING, TY_STRUCT, TY_ARRAY, TY_SEQ, TY_ENUM, TY_VARIANT };

struct ctf_type {
	int kind;
	unsigned size;          /* bits (int, float) */
	unsigned align;         /* bits */
	int is_signed, base, encoded, big_endian, maps_clock;
	unsigned exp_dig, mant_dig;
	struct ctf_type *elem;  /* array, sequence; the container of an enum */
	uint64_t length;        /* array */
	const char *ref;        /* sequence length, variant tag: a field name */
	struct ctf_decl *decls; /* struct members, variant options */
	unsigned ndecls;
	struct ctf_mapping *maps; /* enum */
	unsigned nmaps;
};

struct ctf_decl {
	const char *name;
	struct ctf_type *type;
	unsigned line, col;
};

struct ctf_mapping {
	const char *label;
	int64_t lo, hi;         /* unsigned containers compare as uint64_t */
};

/* A stream class: its packet context, event header and context, its events by id. */
struct ctf_sclass {
	uint64_t id;
	const struct ctf_type *pc, *eh, *ec;
	struct ctf_event_class **classes;
	uint64_t nids;
	/* ec's members beyond pid, tid and procname: a class of their own
	 * (NULL: none); ctx_of_decl[i] is member i's field in it or -1;
	 * ctx_off their offsets in ec when it is laid out (fixed decoding) */
	struct ctf_event_class *ctx;
	int *ctx_of_decl;
	uint32_t *ctx_off;
};

struct ctf_layout {
	int generic;            /* decode by walking the types below */
	struct ctf_sclass *sc;  /* every stream class (generic decoding) */
	unsigned nsc;
	const struct ctf_type *ph, *pc, *eh, *ec;
	unsigned ph_size, pc_size, eh_size, ec_size;
	struct fixed magic, uuid, instance;
	struct fixed ts_begin, ts_end, content_size, packet_size, seq, discarded, cpu_id;
	struct fixed ev_id, ev_ts;
	int compact;            /* event.header is marktap's compact one
				   (mt_event.h): read by ctf_read.c's own code */
	struct fixed pid, tid, procname;
	struct fixed vpid, vtid;        /* pid and tid when those are absent */
};

/* The label an enum maps v to, or NULL. */
const char *ctf_enum_label(const struct ctf_type *t, uint64_t v);

/* Fill err->msg, printf style. */
void ctf_set_err(struct ctf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Bytes a trace's maker chose (names in its metadata, its files' names),
 * for terminals: printable ASCII and UTF-8 outside C1 kept, any other byte
 * as the text \xHH.  dst has room for 4 * n + 1 bytes; its length.
 */
size_t ctf_printable(char *dst, const char *src, size_t n);

#endif
