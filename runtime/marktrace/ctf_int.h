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

struct ctf_layout {
	unsigned ph_size, pc_size, eh_size, ec_size;
	struct fixed magic, uuid, instance;
	struct fixed ts_begin, ts_end, content_size, packet_size, seq, discarded, cpu_id;
	struct fixed ev_id, ev_ts;
	struct fixed pid, tid, procname;
};

/* Fill err->msg, printf style. */
void ctf_set_err(struct ctf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
