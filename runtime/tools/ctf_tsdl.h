/*
 * ctf_tsdl.h - what the TSDL parser (ctf_tsdl.c) hands the trace's
 * builder (ctf_trace.c): the parser's state with the blocks it read, and
 * the arena everything of a trace's metadata lives in.  Private to the
 * two.
 */
#ifndef CTF_TSDL_H
#define CTF_TSDL_H

#include <setjmp.h>
#include "ctf_int.h"

#define MAX_IDS     (1u << 20)  /* event ids we index directly */
#define MAX_SCLASSES 256        /* stream classes (LTTng: one per channel) */

/* ---- TSDL types ---- */

struct tsdl_name {              /* a typealias/typedef or a named struct */
	struct tsdl_name *next;
	const char *name;
	struct ctf_type *type;
};

/* ---- the TSDL lexer ---- */

enum { TK_EOF, TK_IDENT, TK_NUM, TK_STR, TK_PUNCT, TK_ASSIGN_TYPE };

struct tok {
	int kind;
	const char *s;          /* TK_IDENT, TK_STR (raw, no quotes), TK_PUNCT */
	size_t len;
	uint64_t num;
	int negative;
	unsigned line, col;
};

struct parser {
	const char *path;
	const char *p, *end, *line_start;
	unsigned line;
	struct tok tok;
	struct ctf_arena **arena;
	struct ctf_err *err;
	jmp_buf fail;
	struct tsdl_name *aliases, *structs;
	unsigned depth;
	char *plain;            /* the text of packetized metadata */

	/* what the blocks said */
	struct ctf_type *packet_header, *packet_context, *event_header, *event_context;
	unsigned nstream_blocks, nclock_blocks;
	struct pstream { uint64_t id; struct ctf_type *pc, *eh, *ec; } *streams, *cur_stream;
	int64_t offset_s;
	uint64_t offset_cycles;
	struct ctf_trace *trace;
	struct pending_event *cur_event;
	struct pending_event { struct pending_event *next; struct ctf_event_class *cls;
			       struct ctf_type *fields; unsigned line, col;
			       uint64_t stream_id; /* UINT64_MAX: not said */ } *events, **events_tail;
};

/* The arena: n zeroed bytes (a parse error when none are left), freed all
 * at once. */
void *ctf_arena_alloc(struct ctf_arena **a, size_t n);
void ctf_arena_free(struct ctf_arena *a);
/* A parse error at the current token: "FILE:LINE:COL: ...", unwinding. */
void __attribute__((noreturn, format(printf, 2, 3)))
tsdl_fail(struct parser *ps, const char *fmt, ...);
/* The whole metadata text into ps (unwinds to ps->fail on an error). */
void tsdl_parse_top(struct parser *ps);

#endif
