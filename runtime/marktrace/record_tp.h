/*
 * record_tp.h - kernel tracepoints for marktrace record --kernel -e
 * SUBSYS:NAME (record_tp.c, through the kernel's perf interface) and
 * marktrace list --tracepoints: which ones (tp_select.c), each one's
 * tracefs format file read into an event class (tp_format.c).
 */
#ifndef MT_RECORD_TP_H
#define MT_RECORD_TP_H

#include <stddef.h>
#include "mt_fmt.h"
#include "mt_session.h"
#include "record.h"

/* How a field of a tracefs format is recorded. */
enum mt_tp_kind {
	MT_TP_INT,       /* an integer of size 1, 2, 4 or 8 bytes            */
	MT_TP_CHARS,     /* char x[N]: a string, NUL-terminated within N      */
	MT_TP_DATA_LOC,  /* __data_loc char[] x: u32 offset | length << 16    */
	MT_TP_REL_LOC,   /* __rel_loc char[] x: the same, offset from the end
			    of the field                                      */
	MT_TP_ARRAY,     /* x[N] of integers: N values of size / N bytes      */
};

struct mt_tp_field {
	u16 offset, size;        /* in the raw record (the format's numbers) */
	u8 kind;                 /* enum mt_tp_kind */
};

/*
 * A tracepoint as its format file declares it.  fmt (with array_len) is
 * its event class: the fields recorded, in the format's order, with the
 * common_* fields left out (common_pid is the event's tid); field[i] says
 * where fmt's field i is in a raw record.  format is the class's comment
 * in the metadata: marker-format words ("prev_comm %s prev_pid %d"), an
 * array written "args[6] %llu".
 */
struct mt_tp_event {
	char name[MT_EVENT_NAME_MAX];   /* "sched:sched_switch" */
	u32 id;                         /* tracefs id: perf's config */
	int pid_offset;                 /* of common_pid, or -1 */
	struct mt_format fmt;
	u16 array_len[MT_FIELDS_MAX];
	struct mt_tp_field field[MT_FIELDS_MAX];
	char format[MT_EVENT_FORMAT_MAX];
	char skipped[160];              /* fields not recorded, and why ("" if none) */
	/* A kernel function's entry or return instead (kfunc.c), through
	 * perf's kprobe PMU: its fields are argument registers, the "raw
	 * record" of mt_tp_put_fields the sample's registers
	 * (PERF_SAMPLE_REGS_INTR: u64 each, in the mask's bit order). */
	char func[MT_EVENT_NAME_MAX];   /* "" for a tracepoint */
	u8 retprobe;                    /* the return, not the entry */
	u8 globbed;                     /* a glob took it: refused, it is left out */
	mt_u64 regs;                    /* sample_regs_intr */
};

/* Parse a format file's text (name: "SUBSYS:NAME"): 0, or -1 with err. */
int mt_tp_parse_format(const char *name, const char *text, struct mt_tp_event *ev,
		       char *err, size_t errlen);

/* The fields of a raw record (raw_size bytes, as the format lays them out)
 * as ev's class stores them, into out: how many bytes.  out has room
 * for MT_TP_PAYLOAD_MAX bytes (a field takes at most 64 KiB and a NUL).
 * Whatever the record holds, nothing is read outside it: a field past its
 * end is recorded as zeros or "", a string is cut at its end. */
#define MT_TP_PAYLOAD_MAX (MT_FIELDS_MAX * (0x10000 + 1))
size_t mt_tp_put_fields(const struct mt_tp_event *ev, const char *raw, u32 raw_size, char *out);

/* Add an integer field of size bytes at offset of the raw record (a
 * pointer: shown in hex): 0, or -1 when the class is full. */
int mt_tp_add_int(struct mt_tp_event *ev, const char *name, u16 offset, u8 size, int is_signed,
		  int is_pointer);

/* Read SUBSYS/NAME/format under tracefs into ev: 0, or -1 with err. */
int mt_tp_read_event(const char *tracefs, const char *name, struct mt_tp_event *ev,
		     char *err, size_t errlen);

/* tp_select.c: the tracefs folder (/sys/kernel/tracing, or debugfs's
 * tracing; one we may not enter counts), or NULL. */
const char *mt_tp_tracefs(void);
/* Do the -e patterns ask for tracepoints (one not "!..." has a ':')? */
int mt_tp_wanted(const char *patterns);
/* kernel.perf_event_paranoid (-99 if unknown), for error messages. */
int mt_tp_paranoid(void);

/* Names of tracepoints, "subsys:name". */
struct mt_tp_list {
	char **names;
	unsigned n, cap;
};
void mt_tp_list_free(struct mt_tp_list *l);
/* The tracepoints the patterns with a ':' take, "!..." excluding, in
 * available_events' order: 0, or -1 said (a pattern that takes none, a
 * pattern without ':' and no command, too many, no right to read). */
int mt_tp_select(const struct mt_record_opts *o, const char *tracefs, struct mt_tp_list *out);

/*
 * kfunc.c: kernel functions from the kernel's BTF (MARKTAP_BTF, else
 * /sys/kernel/btf/vmlinux).  The events --function's patterns take
 * (record_opts.functions: NAME, NAME%entry, NAME%return, globs), each
 * function's entry NAME_entry with its parameters and return
 * NAME_return with ret, in a new array: 0 (none when there is no
 * pattern), or -1 said.
 */
#define MT_KF_FUNCTIONS_MAX 256
int mt_kf_select(const struct mt_record_opts *o, struct mt_tp_event **events, unsigned *n);
/* perf's kprobe PMU: its type, and the config bit that makes a retprobe:
 * 0, or -1 said (no such PMU). */
int mt_kf_pmu(u32 *type, unsigned *retprobe_bit);

/* record_tp.c: the recording (dir as mt_record_kernel's); the list,
 * mt_list_tracepoints (tp_select.c), is marktrace.h's. */
int mt_record_tp(struct mt_record_opts *o, const char *dir);

#endif
