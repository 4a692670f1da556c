/*
 * mt_ctf.h - write a session's rings as a CTF 1.8 trace (doc/trace-format.md).
 *
 * The writer keeps the trace readable whatever happens:
 *  - files are created inside the trace directory through its descriptor,
 *    exclusively and without following symbolic links, with the permissions
 *    of mt_ctf_set_mode() (0600, directories 0700, by default);
 *  - a packet is written whole or not at all: space for it is allocated
 *    before it is written (and a little more, kept past the end of the
 *    file), a short write is cut back; the events of a packet not written
 *    are counted in the stream's events_discarded, which the next packet,
 *    or an empty packet written into the kept space at the end, carries;
 *  - the metadata is replaced by rename, and says recording_complete = 0
 *    until mt_ctf_end() runs: a recorder killed before it is detected;
 *  - event classes are copied from the session once, when first seen
 *    ready: what the traced program writes to them later changes nothing.
 */
#ifndef MT_CTF_H
#define MT_CTF_H

#include <stdio.h>
#include <sys/types.h>
#include "mt_fmt.h"
#include "mt_session.h"

#define MT_CTF_PACKET_HEADER_SIZE 84   /* header 32 + context 52 bytes */

/* The clock every trace of one recording shares. */
struct mt_ctf_clock {
	char uuid[40];          /* the boot id */
	long long offset_s;     /* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	long long offset_ns;
	char source[384];       /* how timestamps were taken ("tsc: ...",
				   "clock_gettime: why"), or "" (not said) */
	char buffers[96];       /* how writers shared the rings, or "" */
};

/* One stream file (one per CPU). */
struct mt_ctf_stream {
	int fd;
	off_t end;              /* bytes of whole packets in the file */
	int reserve;            /* 1: space is kept allocated past end */
	off_t allocated;        /* up to here (fallocate, past the end) */
	mt_u64 ring_lost;       /* the writers' cumulative count, highest seen */
	mt_u64 disk_lost;       /* events of packets that could not be written */
	int loss_unwritten;     /* disk_lost grew since the last packet on disk */
	int failed;             /* a write failed (reported once) */
	mt_u64 next_seq;        /* seq after the last packet handed to us */
	mt_u64 last_ts;         /* its timestamp_end */
};

/* An event class as first seen ready in the session. */
struct mt_ctf_class {
	char name[MT_EVENT_NAME_MAX + 1];
	char format[MT_EVENT_FORMAT_MAX + 1];
	struct mt_format fmt;
	int ok;                 /* the format parses: in the metadata */
	int is_thread;          /* the thread event (mt_event.h): not counted */
	/* per field: 0, one value; N, a fixed array of N values of the
	 * field's size (kernel tracepoints' arrays, which formats cannot say:
	 * classes added with mt_ctf_add_class) */
	u16 array_len[MT_FIELDS_MAX];
};

/* Somewhere else the trace goes as it is written (marktrace --relay):
 * each packet handed to mt_ctf_write_packet (its header as written, the
 * events, how many, the rings' cumulative loss), each new version of the
 * metadata text.  Whatever happens there is the tap's to count. */
struct mt_ctf_tap {
	void *ctx;
	void (*packet)(void *ctx, unsigned cpu, const char *head, size_t head_len,
		       const char *data, size_t data_len, mt_u64 events, mt_u64 ring_lost);
	void (*metadata)(void *ctx, const char *text, size_t len);
	int append_only;        /* the metadata says nothing it will change
				   (no recording_complete) */
};

struct mt_ctf_trace {
	char *dir;              /* "" when there are no files (only a tap) */
	const struct mt_ctf_tap *tap;   /* or NULL; set after mt_ctf_open */
	int dirfd;
	const char *domain;     /* "ust" or "kernel" */
	int compact;            /* "ust": the compact event layout (mt_event.h) */
	u32 context;            /* "ust": its context fields (enum mt_context),
				   set before the metadata is written */
	unsigned char uuid[16];
	struct mt_ctf_clock clock;
	unsigned ncpu;
	struct mt_ctf_stream *streams;
	struct mt_ctf_class **classes;  /* by id: the snapshot */
	unsigned nclasses;
	unsigned metadata_events;  /* event classes in the metadata on disk */
	int metadata_failed;    /* the last metadata write failed */
	off_t complete_at;      /* offset of recording_complete's digit on disk, or -1 */
	mt_u64 events;          /* events written (when counted) */
	int uncounted;          /* do not parse packets to count their events */
	mt_u64 packets;
	mt_u64 bytes;
	mt_u64 disk_lost;       /* events not written, every stream */
	char **made;            /* directories mt_ctf_open created (mt_ctf_remove) */
	unsigned nmade;
};

/* Permissions of the files of traces opened from now on; directories get
 * x where the mode has r.  0600 by default. */
void mt_ctf_set_mode(unsigned mode);
void mt_ctf_clock_now(struct mt_ctf_clock *c);
/* Create DIR (and parents), its stream files; 0 or -1 with err set.
 * DIR NULL: no files, what is written goes only to the tap. */
int mt_ctf_open(struct mt_ctf_trace *t, const char *dir, unsigned ncpu, const char *domain,
		const struct mt_ctf_clock *clock, char *err, size_t errlen);
/* Copy the session's new ready event classes; how many were added. */
unsigned mt_ctf_update_classes(struct mt_ctf_trace *t, const struct mt_session *s);
/* Add a class written by marktrace itself (not from a session: a kernel
 * tracepoint, record_tp.c), fields as fmt (and array_len) say, format the
 * comment before it in the metadata; its id, or -1 when the trace has
 * MT_EVENTS_MAX already. */
int mt_ctf_add_class(struct mt_ctf_trace *t, const char *name, const char *format,
		     const struct mt_format *fmt, const u16 *array_len);
/* Append one packet to the CPU's stream file, or count its events as lost:
 * -1 with err set the first time a stream cannot be written, else 0.
 * s: the session whose classes the trace copies, or NULL (classes added
 * with mt_ctf_add_class, all of them before the first metadata). */
int mt_ctf_write_packet(struct mt_ctf_trace *t, const struct mt_session *s, unsigned cpu,
			const struct mt_ring_packet *pkt, char *err, size_t errlen);
/* (Re)write the metadata for the event classes copied so far. */
int mt_ctf_write_metadata(struct mt_ctf_trace *t, char *err, size_t errlen);
/* The recording ended: carry the losses not yet on disk, and mark the
 * metadata complete (if complete) or leave it incomplete. */
int mt_ctf_end(struct mt_ctf_trace *t, int complete, char *err, size_t errlen);
/* Undo mt_ctf_open: remove what it created (a recording that never began). */
void mt_ctf_remove(struct mt_ctf_trace *t);
void mt_ctf_close(struct mt_ctf_trace *t);

/* --context LIST (comma separated, LTTng's names) added to *context; 0,
 * or -1 with err naming the unknown name and the known ones. */
int mt_ctf_context_parse(const char *list, u32 *context, char *err, size_t errlen);

/* Count the events of a packet's data (stops at the first malformed one). */
mt_u64 mt_ctf_count_events(const struct mt_ctf_trace *t, const char *data, mt_u64 size);

#endif
