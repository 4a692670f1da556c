/*
 * ctf_read.h - read the CTF 1.8 traces marktap writes (doc/trace-format.md).
 *
 * A recording directory holds one or more traces (folders with a `metadata`
 * file).  ctf_open() finds them all, parses the TSDL subset we generate
 * (ctf_tsdl.c) and maps every stream file (ctf_read.c).  A stream then yields items one at a time with
 * ctf_stream_next(): events, and "lost" notices where a packet's
 * events_discarded grows or its packet_seq_num skips.  ctf_merge_* orders
 * the items of all streams of all traces by time with a binary heap.
 *
 * Nothing here prints: every failure fills a struct ctf_err with
 * "FILE: byte N: what" (or "FILE:LINE:COL: ..." for metadata) and returns
 * -1; the command prints it once.  Items read before the damage stay valid.
 */
#ifndef CTF_READ_H
#define CTF_READ_H

#include <stddef.h>
#include <stdint.h>

struct ctf_err {
	char msg[640];
};

/*
 * CTF_TEXT: a compound value of a generically decoded trace (array,
 * sequence, structure, variant) rendered as text: "[ 1, 2 ]", "{ a = 1 }".
 */
enum ctf_kind { CTF_INT, CTF_FLOAT, CTF_STRING, CTF_TEXT };

struct ctf_type;

/* One payload field of an event class. */
struct ctf_field {
	const char *name;       /* TSDL name without the leading '_' */
	unsigned name_len;
	unsigned char kind;     /* enum ctf_kind */
	unsigned char size;     /* bytes: 1, 2, 4, 8 (int), 4, 8 (float), 0 (string) */
	unsigned char is_signed;
	unsigned char base;     /* 10, 16, 8 or 2 */
	unsigned char is_char;  /* 8-bit integer with an encoding: shown as 'c' */
	const struct ctf_type *enum_type; /* an enum: its labels (ctf_field_label) */
};

struct ctf_event_class {
	const char *name;
	unsigned name_len;
	uint64_t id;
	unsigned nfields;
	const struct ctf_field *fields;
	unsigned index;         /* 0..ntrace_classes-1 within its trace */
	const struct ctf_type *type; /* its fields' struct (ctf_int.h) */
	void *user;             /* for the command (filter bindings...) */
	void *state;            /* for the state module (tstate.c) */
	/* The event context of its stream class beyond pid, tid and procname
	 * (LTTng's ip, pthread_id, perf counters...) as a class of its own
	 * named "context", or NULL when there is none: see ctf_event.ctx. */
	const struct ctf_event_class *context;
};

struct ctf_trace;
struct ctf_stream;
struct ctf_gen;
struct ctf_sclass;

/* A decoded event: pointers into the mapped stream file. */
struct ctf_event {
	const struct ctf_event_class *cls;
	uint64_t ts;            /* clock value, ns since the clock's origin */
	int32_t pid, tid;
	const char *procname;   /* NUL padded, at most procname_len bytes */
	unsigned procname_len;
	const unsigned char *payload;
	const uint32_t *field_off; /* offset of each field from payload */
	/* The other context fields (cls->context), read with ctf_field_*()
	 * as payload fields are; NULL when the class has none. */
	const struct ctf_event *ctx;
};

enum ctf_item { CTF_ITEM_END = 0, CTF_ITEM_EVENT, CTF_ITEM_LOST, CTF_ITEM_ERROR };

struct ctf_stream {
	struct ctf_trace *trace;
	const char *path;       /* for messages */
	const char *file;       /* base name */
	const unsigned char *base;
	size_t size;
	unsigned index;         /* position in ctf_set.streams: breaks time ties */
	int64_t cpu;            /* from the packet context (cpu_id) or header */

	/* the packet being read */
	size_t pkt_off, pkt_content_end, pkt_end, pos;
	uint64_t pkt_ts_begin, pkt_ts_end, pkt_seq, pkt_discarded;
	int have_packet;        /* a packet was read before: gaps are measured */
	uint64_t prev_seq, prev_discarded;
	int cut;                /* incomplete trace: the stream stops short; its
				   last packet was lost when cut_packet is set */
	int cut_packet;

	/* the current item */
	int item;               /* enum ctf_item */
	char *error;            /* CTF_ITEM_ERROR: "FILE: byte N: what" */
	struct ctf_event ev;
	uint64_t time;          /* merge key: ns since the epoch (clock offset applied) */
	uint64_t lost_events, lost_packets; /* of a CTF_ITEM_LOST */
	uint32_t *field_off;    /* room for the widest event class */
	struct ctf_event ctx_ev; /* ev.ctx, when there is one */
	uint32_t *ctx_off;      /* its field offsets (generic decoding) */
	char procname[17];      /* ev.procname from a thread event */
	struct ctf_threads *threads; /* the thread events read in this stream */
	uint64_t thread_events; /* thread events read (not items) */

	/* generic decoding (traces outside marktap's fixed layout) */
	uint64_t bitpos;        /* where the next event starts, in bits */
	uint64_t clock;         /* the clock's value: partial timestamps update it */
	const struct ctf_sclass *sclass; /* the current packet's stream class */
	struct ctf_gen *gen;

	/* totals, kept as items are read */
	uint64_t packets, events, total_lost_events, total_lost_packets;
};

struct ctf_env {
	const char *key, *value;  /* value printed as in the metadata (strings unquoted) */
};

struct ctf_trace {
	const char *path;       /* the trace folder */
	const char *name;       /* relative to the directory given to ctf_open ("." for itself) */
	unsigned char uuid[16];
	int has_uuid;
	uint64_t freq;          /* clock frequency (Hz) */
	int64_t offset_ns;      /* clock offset: value + offset = ns since the epoch */
	const char *clock_name;
	struct ctf_env *env;
	unsigned nenv;
	int has_state;          /* env recording_complete is there (marktrace's) */
	int incomplete;         /* ... and 0: the recorder did not end cleanly,
				   so streams may stop short of their end */
	int show_thread_events; /* the caller's: yield thread events as events
				   too (their pid and name still apply) */
	struct ctf_event_class **classes;  /* by id, NULL where none */
	uint64_t nids;
	struct ctf_event_class **class_list; /* in metadata order */
	unsigned nclasses;
	unsigned max_fields;
	unsigned max_ctx_fields; /* the widest context class */
	struct ctf_layout *layout; /* where the header/context fields are (ctf_read.c) */
	/* marktap_statedump:thread (runtime/core/mt_event.h): pid and name
	 * of the tids of events whose context has neither; not shown */
	const struct ctf_event_class *thread_class;
	int thread_pid, thread_name;    /* its fields */
	struct ctf_threads *threads;    /* tid -> latest pid, name, of every stream */
	struct ctf_arena *arena;
};

/* All traces found under a directory, and their streams. */
struct ctf_set {
	struct ctf_trace **traces;
	unsigned ntraces;
	struct ctf_stream **streams;
	unsigned nstreams;
	struct ctf_stream **heap;  /* ctf_merge_* */
	unsigned nheap;
};

/*
 * path opened for reading if it is a regular file, and only then: a
 * trace names files of its maker's choice, and opening a FIFO can block,
 * a device's open can act (arm a watchdog, allocate a terminal).  The
 * check and the open are of one inode (no window to swap the file).
 * Links are followed unless flags has O_NOFOLLOW (a link then is not a
 * regular file).  *st gets the file's status.  The descriptor; -1 with
 * errno (open's, or EFBIG: more than max bytes); -2 when the path is
 * there but no regular file (*st says what it is).
 */
struct stat;
int ctf_open_regular(const char *path, int flags, uint64_t max, struct stat *st);
/* What a file of st_mode mode is, for messages ("a FIFO", "a directory"). */
const char *ctf_file_kind(unsigned mode);

/* Find, parse and map every trace under dir.  0 or -1 (set freed). */
int ctf_open(struct ctf_set *set, const char *dir, struct ctf_err *err);
/*
 * The same for a directory that is one recording: a trace, or traces
 * under its kernel/ and ust/ folders only (marktrace record --kernel with
 * a command, an LTTng session's output).  -2 without opening anything
 * when it holds traces of several recordings (a folder of recordings,
 * /tmp): err names them; the caller may then ctf_open() them all.
 */
int ctf_open_recording(struct ctf_set *set, const char *dir, struct ctf_err *err);
void ctf_close(struct ctf_set *set);

/*
 * Lower level, also for the fuzz target: a trace from metadata text and a
 * stream over bytes in memory (not copied; must outlive the stream).
 */
struct ctf_trace *ctf_trace_parse(const char *path, const char *name,
				  const char *text, size_t len, struct ctf_err *err);
void ctf_trace_free(struct ctf_trace *t);
struct ctf_stream *ctf_stream_new(struct ctf_trace *t, const char *path,
				  const unsigned char *data, size_t size);
void ctf_stream_free(struct ctf_stream *s);

/*
 * Step a stream to its next item, returned and kept in s->item: an event
 * (s->ev, s->time), a lost notice (s->lost_events, s->lost_packets, at the
 * packet's timestamp_begin), the end, or an error (s->error).  After an
 * error or the end the stream stays there.  In an incomplete trace (the
 * recorder was killed) the last item of each stream is a lost notice with
 * s->cut set, at the end of its last whole packet: what came after is
 * missing; a packet the recorder was writing when it died counts as one
 * lost packet (s->cut_packet) instead of an error.
 */
int ctf_stream_next(struct ctf_stream *s);

/*
 * Time order over all streams.  A stream that fails takes part in the order
 * at the time of its last good item, so everything before the damage comes
 * out first; the caller stops at the first CTF_ITEM_ERROR.
 */
void ctf_merge_start(struct ctf_set *set);
struct ctf_stream *ctf_merge_peek(struct ctf_set *set);  /* NULL at the end */
void ctf_merge_advance(struct ctf_set *set);

/* Field values (no checks: the reader validated sizes). */
int64_t ctf_field_int(const struct ctf_event *ev, unsigned i);     /* sign extended */
uint64_t ctf_field_uint(const struct ctf_event *ev, unsigned i);
double ctf_field_float(const struct ctf_event *ev, unsigned i);
const char *ctf_field_string(const struct ctf_event *ev, unsigned i);

/* An enum field's label for its value in ev, or NULL. */
const char *ctf_field_label(const struct ctf_event *ev, unsigned i);

/* The field of that name (without '_'), or -1. */
int ctf_class_field(const struct ctf_event_class *c, const char *name);

#endif
