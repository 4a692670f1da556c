/*
 * view_sym.h - symbols for the `#p` fields of user traces in `marktrace view`.
 *
 * libmarktap writes a marktap_statedump:bin_info event per loaded object
 * (runtime/lib/statedump.c).  We keep them per pid, and show an address
 * of a `#p` field that falls in a known object as "0x55... <func+0x24>",
 * the function read from the object's file on disk with libelf; an address
 * recorded before its object's bin_info (a plugin dlopen'ed without
 * markers, noticed up to a period later) from the pid's next
 * marktap_statedump:update (view_sym.c, "Late objects").  A file
 * that is gone, unreadable, or whose build id differs from the recorded
 * one leaves the bare address.
 */
#ifndef VIEW_SYM_H
#define VIEW_SYM_H

#include <stdint.h>
#include "ctf_read.h"
#include "vbuf.h"

struct vsym;

/* NULL when no trace of the set has bin_info events (nothing to do).
 * debug_dir: where separate debug files are, by build id (stripped
 * objects), or NULL; kept, not copied. */
struct vsym *vsym_new(const struct ctf_set *set, const char *debug_dir);
void vsym_free(struct vsym *v);
/* Every event, filtered out or not: a bin_info event records an object. */
void vsym_event(struct vsym *v, const struct ctf_stream *s);
/* Bit i set: field i of the event's class is a `#p` field (fields >= 64: never). */
uint64_t vsym_pointer_fields(struct vsym *v, const struct ctf_stream *s);
/* " <func+0x24>" after an address of process pid, when known. */
void vsym_put(struct vsym *v, struct vbuf *b, int32_t pid, uint64_t addr);

#endif
