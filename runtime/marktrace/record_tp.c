/*
 * record_tp.c - marktrace record --kernel -e SUBSYS:NAME: any kernel
 * tracepoint, through the kernel's perf interface as perf record -e
 * does, written as a "kernel" CTF trace by the same writer as marktap.ko's
 * markers (mt_ctf.c), with the fields its tracefs format declares
 * (tp_format.c, below).  And --function NAME: kernel functions' entries
 * and returns, through perf's kprobe PMU (a local kprobe per event, each
 * hit sampled with the argument registers: kfunc.c says which), into
 * the same rings and packets.
 *
 * Per online CPU, one perf event per tracepoint (PERF_TYPE_TRACEPOINT,
 * config = its tracefs id, every hit sampled with its raw record), all of
 * a CPU's redirected to one mmap'ed ring (PERF_EVENT_IOC_SET_OUTPUT),
 * timestamps on CLOCK_MONOTONIC (use_clockid): the clock of our CTF
 * traces and of the user events beside them.  The loop copies each
 * ring's records into packets of the kernel event layout (mt_event.h):
 *
 *   u16 class id | u64 ns | s32 pid | s32 tid (common_pid) | procname[16] | fields
 *
 * procname comes from the COMM and FORK records the first event of each
 * CPU asks for (else /proc/TID/comm, the first time a thread is seen).
 * PERF_RECORD_LOST adds to the CPU's lost count, carried in the packets'
 * events_discarded as the rings' losses of other recordings are.  Which
 * tracepoints: tp_select.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "mt_event.h"
#include "uclock.h"
#include "marktrace.h"
#include "record_tp.h"

/* --- thread names --- */

#define COMM_SLOTS 8192   /* power of two; emptied when three quarters full */

struct comm_slot {
	s32 tid;              /* 0: free */
	mt_u64 since;         /* comm is the name from then, prev before */
	char comm[MT_PROCNAME_MAX], prev[MT_PROCNAME_MAX];
};

struct comm_cache {
	struct comm_slot *slot;
	unsigned used;
};

static struct comm_slot *comm_find(struct comm_cache *cc, s32 tid, int add)
{
	unsigned i = ((u32)tid * 2654435761u) & (COMM_SLOTS - 1);

	for (;; i = (i + 1) & (COMM_SLOTS - 1)) {
		struct comm_slot *s = &cc->slot[i];
		if (s->tid == tid)
			return s;
		if (s->tid)
			continue;
		if (!add)
			return NULL;
		if (cc->used >= COMM_SLOTS / 4 * 3) {   /* keep probes short */
			memset(cc->slot, 0, COMM_SLOTS * sizeof(*cc->slot));
			cc->used = 0;
			return comm_find(cc, tid, add);
		}
		cc->used++;
		memset(s, 0, sizeof(*s));
		s->tid = tid;
		return s;
	}
}

/* tid is named comm (at most max bytes) from time ts on. */
static void comm_set(struct comm_cache *cc, s32 tid, mt_u64 ts, const char *comm, size_t max)
{
	struct comm_slot *s = tid > 0 ? comm_find(cc, tid, 1) : NULL;

	char *to;

	if (!s)
		return;
	/* the rings are read one after the other: a fork read after the
	 * exec that followed it on another CPU names what came before */
	if (ts < s->since) {
		to = s->prev;
	} else {
		memcpy(s->prev, s->comm, sizeof(s->prev));
		to = s->comm;
		s->since = ts;
	}
	memset(to, 0, MT_PROCNAME_MAX);
	memcpy(to, comm, strnlen(comm, max < MT_PROCNAME_MAX - 1 ? max : MT_PROCNAME_MAX - 1));
}

/* The name of tid at time ts (16 bytes, NUL padded): known, or read
 * once from /proc (its name now: a thread seen first). */
static const char *comm_get(struct comm_cache *cc, s32 pid, s32 tid, mt_u64 ts)
{
	static const char none[MT_PROCNAME_MAX], idle[MT_PROCNAME_MAX] = "swapper";
	struct comm_slot *s;
	char path[64];
	ssize_t n;
	int fd;

	if (tid <= 0)
		return tid == 0 ? idle : none;
	if ((s = comm_find(cc, tid, 0)))
		return ts < s->since ? s->prev : s->comm;
	s = comm_find(cc, tid, 1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, s->comm, sizeof(s->comm) - 1);
		close(fd);
		if (n > 0 && s->comm[n - 1] == '\n')
			s->comm[n - 1] = '\0';
	}
	return s->comm;
}

/* --- the perf rings --- */

struct tp_cpu {
	int leader;                   /* its fd owns the ring, or -1 (offline) */
	struct perf_event_mmap_page *page;
	size_t map_len;
	char *data;                   /* the ring: data_size bytes */
	char *packet;                 /* events waiting for their packet */
	mt_u64 used, events, seq, lost, lost_written, ts_begin, last_ts;
};

struct tp_id {
	mt_u64 perf_id;               /* PERF_EVENT_IOC_ID's */
	unsigned class_id;            /* the trace's */
	unsigned ev;                  /* in events[] */
};

struct tp_rec {
	const struct mt_record_opts *o;
	struct mt_tp_event *events;
	unsigned nevents;
	struct mt_ctf_trace t, ut;
	struct mt_session *us;
	unsigned ncpu;
	struct tp_cpu *cpu;
	int *fds;                     /* nevents * ncpu, -1 where none */
	struct tp_id *ids;            /* sorted by perf_id */
	unsigned nids;
	unsigned ntp;                 /* events[0..ntp) are tracepoints, the rest functions */
	u8 *refused;                  /* per event: a globbed function the kernel refused */
	int probed;                   /* a CPU's events are open: refusals are known */
	u32 kprobe_type;              /* perf's kprobe PMU */
	unsigned retprobe_bit;        /* its config bit for a return probe */
	size_t data_size;             /* of each ring: a power of two of pages */
	u32 packet_room;              /* bytes of events in one packet */
	char *scratch;                /* one event, serialised */
	struct comm_cache comms;
	mt_u64 too_big;               /* events larger than a packet (in lost) */
	pid_t child;
	int status, error;
};

static long perf_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A ring of at least subbuf_size * num_subbuf bytes (a power of two of
 * pages, as perf wants), and its wake-up mark at a quarter. */
static void ring_geometry(struct tp_rec *r)
{
	size_t want = (size_t)r->o->subbuf_size * r->o->num_subbuf, page = (size_t)getpagesize();

	r->data_size = page;
	while (r->data_size < want)
		r->data_size *= 2;
	r->packet_room = r->o->subbuf_size - MT_CTF_PACKET_HEADER_SIZE;
}

/* A tracepoint samples its raw record; a function (a local kprobe on
 * ev->func, config1 pointing at its name) the registers of its fields. */
static void fill_attr(struct perf_event_attr *a, const struct tp_rec *r,
		      const struct mt_tp_event *ev, int first)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU;
	if (ev->func[0]) {
		a->type = r->kprobe_type;
		a->config = ev->retprobe ? 1ull << r->retprobe_bit : 0;
		a->config1 = (mt_u64)(uintptr_t)ev->func;
		a->config2 = 0;   /* the offset into it */
		/* an empty mask is refused: a function without fields has none */
		a->sample_regs_intr = ev->regs;
		a->sample_type |= ev->regs ? PERF_SAMPLE_REGS_INTR : 0;
	} else {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = ev->id;
		a->sample_type |= PERF_SAMPLE_RAW;
	}
	a->disabled = 1;
	a->watermark = 1;
	a->wakeup_watermark = (u32)(r->data_size / 4);
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->sample_id_all = 1;
	/* thread names: once per CPU, from its first event */
	a->comm = a->comm_exec = a->task = (unsigned)first;
}

/* Why the kernel refuses a kprobe on a function, or NULL: another error. */
static const char *refusal(int e)
{
	switch (e) {
	case EINVAL:
	case EILSEQ:
		return "it is in the kprobe blacklist, notrace, or not probeable text";
	case ENOENT:
		return "it is not in the kernel's symbols (inlined, or __init text freed after boot)";
	case EADDRNOTAVAIL:
		return "several functions have that name";
	case EBUSY:
		return "another probe holds it";
	}
	return NULL;
}

/* Why perf_event_open failed, said once. */
static int open_failed(const struct tp_rec *r, unsigned ev, unsigned cpu, int e)
{
	if ((e == EACCES || e == EPERM) && r->events[ev].func[0])
		/* the kprobe PMU wants CAP_PERFMON whatever the sysctl allows */
		mt_error("record: --kernel: kernel functions take root or CAP_PERFMON, whatever "
			 "kernel.perf_event_paranoid allows (it is %d): perf_event_open of a kprobe "
			 "on %s on CPU %u: %s", mt_tp_paranoid(), r->events[ev].func, cpu,
			 strerror(e));
	else if (r->events[ev].func[0] && refusal(e))
		mt_error("record: --kernel: --function %s: the kernel refuses to probe it: %s (%s)",
			 r->events[ev].func, refusal(e), strerror(e));
	else if (r->events[ev].func[0])
		mt_error("record: --kernel: perf_event_open of a kprobe on %s%s on CPU %u: %s",
			 r->events[ev].func, r->events[ev].retprobe ? "'s return" : "", cpu,
			 strerror(e));
	else if (e == EACCES || e == EPERM)
		mt_error("record: --kernel: tracepoints take root or CAP_PERFMON "
			 "(kernel.perf_event_paranoid is %d): perf_event_open %s on CPU %u: %s",
			 mt_tp_paranoid(), r->events[ev].name, cpu, strerror(e));
	else if (e == EMFILE || e == ENFILE)
		mt_error("record: --kernel: %u events on %u CPUs take more files than "
			 "we may open: %s", r->nevents, r->ncpu, strerror(e));
	else
		mt_error("record: --kernel: perf_event_open %s (id %u) on CPU %u: %s",
			 r->events[ev].name, r->events[ev].id, cpu, strerror(e));
	return -1;
}

static int by_perf_id(const void *a, const void *b)
{
	const struct tp_id *x = a, *y = b;

	return x->perf_id < y->perf_id ? -1 : x->perf_id > y->perf_id;
}

/*
 * One CPU's events: the first owns the mapped ring, the others write
 * to it.  An offline CPU has none (its stream stays empty).  On the
 * first CPU opened, a function a glob took that the kernel refuses to
 * probe is left out (refused); a function named alone is an error.
 * The trace's class ids come later (open_trace).
 */
static int open_cpu(struct tp_rec *r, unsigned cpu)
{
	struct tp_cpu *c = &r->cpu[cpu];
	struct perf_event_attr attr;
	unsigned ev;

	for (ev = 0; ev < r->nevents; ev++) {
		int fd, first = c->leader < 0, e;
		mt_u64 id;

		if (r->refused[ev])
			continue;
		fill_attr(&attr, r, &r->events[ev], first);
		fd = (int)perf_open(&attr, (int)cpu);
		e = errno;
		if (fd < 0 && e == ENODEV && first)
			return 0;   /* offline (nothing opened on it yet) */
		if (fd < 0 && !r->probed && r->events[ev].globbed && refusal(e)) {
			r->refused[ev] = 1;
			continue;
		}
		if (fd < 0)
			return open_failed(r, ev, cpu, e);
		r->fds[cpu * r->nevents + ev] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
			mt_error("record: --kernel: PERF_EVENT_IOC_ID: %s", strerror(errno));
			return -1;
		}
		r->ids[r->nids++] = (struct tp_id){ id, 0, ev };
		if (first) {
			c->leader = fd;
			c->map_len = (size_t)getpagesize() + r->data_size;
			c->page = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (c->page == MAP_FAILED) {
				c->page = NULL;
				mt_error("record: --kernel: mapping CPU %u's ring of %zu KiB: %s",
					 cpu, r->data_size / 1024, strerror(errno));
				return -1;
			}
			c->data = (char *)c->page + c->page->data_offset;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->leader) < 0) {
			mt_error("record: --kernel: PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
			return -1;
		}
	}
	r->probed |= c->leader >= 0;
	return 0;
}

/* Room for every descriptor: tracepoints times CPUs. */
static void raise_file_limit(unsigned need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The functions left out (warned), if not all of them: 0, or -1 said. */
static int say_refused(struct tp_rec *r)
{
	char names[512] = "";
	unsigned ev, refused = 0, said = 0;
	size_t n;

	for (ev = r->ntp; ev < r->nevents; ev++) {
		/* an entry and its return are refused together: name it once */
		if (!r->refused[ev] || (ev > r->ntp && r->refused[ev - 1] &&
					!strcmp(r->events[ev - 1].func, r->events[ev].func)))
			continue;
		refused++;
		n = strlen(names);
		if (n + strlen(r->events[ev].func) + 8 < sizeof(names))
			snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "",
				 r->events[ev].func), said++;
	}
	if (!refused)
		return 0;
	for (ev = 0; ev < r->nevents && r->refused[ev]; ev++)
		;
	if (ev == r->nevents) {   /* tracepoints are never refused: there are none */
		mt_error("record: --kernel: the kernel refuses to probe every function the "
			 "--function globs take (%s%s)", names, said < refused ? ", ..." : "");
		return -1;
	}
	if (!r->o->quiet)
		fprintf(stderr, "marktrace: warning: the kernel refuses to probe %u of the functions "
			"the --function globs take, not recorded: %s%s\n", refused, names,
			said < refused ? ", ..." : "");
	return 0;
}

static int open_rings(struct tp_rec *r)
{
	unsigned cpu, i;

	r->cpu = calloc(r->ncpu, sizeof(*r->cpu));
	r->fds = malloc((size_t)r->ncpu * r->nevents * sizeof(*r->fds));
	r->ids = calloc((size_t)r->ncpu * r->nevents, sizeof(*r->ids));
	r->scratch = malloc(MT_EVENT_PREFIX_SIZE + MT_TP_PAYLOAD_MAX);
	r->comms.slot = calloc(COMM_SLOTS, sizeof(*r->comms.slot));
	r->refused = calloc(r->nevents, 1);
	if (!r->cpu || !r->fds || !r->ids || !r->scratch || !r->comms.slot || !r->refused) {
		mt_error("record: --kernel: out of memory");
		return -1;
	}
	for (i = 0; i < r->ncpu * r->nevents; i++)
		r->fds[i] = -1;
	for (cpu = 0; cpu < r->ncpu; cpu++)
		r->cpu[cpu].leader = -1;
	raise_file_limit(r->ncpu * r->nevents);
	for (cpu = 0; cpu < r->ncpu; cpu++) {
		if (!(r->cpu[cpu].packet = malloc(r->packet_room))) {
			mt_error("record: --kernel: out of memory");
			return -1;
		}
		if (open_cpu(r, cpu) < 0)
			return -1;
	}
	qsort(r->ids, r->nids, sizeof(*r->ids), by_perf_id);
	return say_refused(r);
}

static void enable_all(struct tp_rec *r, unsigned long request)
{
	unsigned i;

	for (i = 0; i < r->ncpu * r->nevents; i++)
		if (r->fds[i] >= 0)
			ioctl(r->fds[i], request, 0);
}

static void close_rings(struct tp_rec *r)
{
	unsigned cpu, i;

	for (i = 0; r->fds && i < r->ncpu * r->nevents; i++)
		if (r->fds[i] >= 0)
			close(r->fds[i]);
	for (cpu = 0; r->cpu && cpu < r->ncpu; cpu++) {
		if (r->cpu[cpu].page)
			munmap(r->cpu[cpu].page, r->cpu[cpu].map_len);
		free(r->cpu[cpu].packet);
	}
	free(r->cpu);
	free(r->fds);
	free(r->ids);
	free(r->scratch);
	free(r->comms.slot);
	free(r->refused);
}

/* --- records to packets --- */

/* The CPU's waiting events as a packet (or only its loss count, when
 * with_loss and it grew since the last packet; with_loss 2: a packet
 * even if empty). */
static void flush_packet(struct tp_rec *r, unsigned cpu, int with_loss)
{
	struct tp_cpu *c = &r->cpu[cpu];
	struct mt_ring_packet pkt;
	char err[512];

	if (!c->used && !(with_loss && c->lost > c->lost_written) && with_loss != 2)
		return;
	pkt.data = c->packet;
	pkt.data_size = c->used;
	pkt.seq = c->seq++;
	pkt.ts_begin = c->used ? c->ts_begin : c->last_ts;
	pkt.ts_end = c->last_ts;
	pkt.lost = c->lost;
	pkt.events = c->events;
	if (mt_ctf_write_packet(&r->t, NULL, cpu, &pkt, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		r->error = 1;
	}
	c->lost_written = c->lost;
	c->used = 0;
	c->events = 0;
}

/*
 * n records lost at ts, after the events waiting (perf writes its LOST
 * record where the ring had room again): those go first, in a packet
 * whose count is the one before, and the loss shows in the next packet.
 * babeltrace2 reports a loss between two packets of a stream, and not
 * the count of a stream's first packet ("may have discarded"): a CPU
 * whose first record is a loss gets an empty first packet.
 */
static void add_lost(struct tp_rec *r, unsigned cpu, mt_u64 n, mt_u64 ts)
{
	struct tp_cpu *c = &r->cpu[cpu];

	if (!c->used && ts > c->last_ts)
		c->last_ts = ts;
	if (c->used || c->seq == 0)
		flush_packet(r, cpu, 2);
	c->lost += n;
}

static const struct tp_id *find_id(const struct tp_rec *r, mt_u64 perf_id)
{
	struct tp_id key = { perf_id, 0, 0 };

	return bsearch(&key, r->ids, r->nids, sizeof(*r->ids), by_perf_id);
}

/*
 * A PERF_RECORD_SAMPLE of our sample_type, in perf's order:
 *   u64 id | u32 pid, tid | u64 time | u32 cpu, res | u32 size, raw[size]
 * or for a function's event, the registers of its fields instead of raw:
 *   ... | u32 cpu, res | u64 abi | u64 regs[popcount(mask)]
 * (abi PERF_SAMPLE_REGS_ABI_NONE: no registers; and none without a mask)
 */
static void sample(struct tp_rec *r, unsigned cpu, const char *rec, size_t len)
{
	struct tp_cpu *c = &r->cpu[cpu];
	const struct tp_id *id;
	const struct mt_tp_event *ev;
	mt_u64 perf_id, ts, abi;
	u32 pid, tid, raw_size, raw_at = 44;
	s32 common_pid;
	char *e = r->scratch;
	size_t n;
	u16 class_id;

	if (len < 40)
		return;
	memcpy(&perf_id, rec + 8, 8);
	memcpy(&pid, rec + 16, 4);
	memcpy(&tid, rec + 20, 4);
	memcpy(&ts, rec + 24, 8);
	if (!(id = find_id(r, perf_id)))
		return;
	ev = &r->events[id->ev];
	if (ev->func[0] && ev->regs) {
		if (len < 48)
			return;
		memcpy(&abi, rec + 40, 8);
		raw_at = 48;
		raw_size = abi == PERF_SAMPLE_REGS_ABI_NONE ? 0 : (u32)(len - raw_at);
	} else if (ev->func[0]) {
		raw_at = 40;
		raw_size = 0;
	} else {
		if (len < 44)
			return;
		memcpy(&raw_size, rec + 40, 4);
		if (raw_size > len - 44)
			return;
	}
	common_pid = (s32)tid;
	if (ev->pid_offset >= 0 && (u32)ev->pid_offset + 4 <= raw_size)
		memcpy(&common_pid, rec + raw_at + ev->pid_offset, 4);
	/* one stream's times never go back, whatever order perf wrote them in */
	if (ts < c->last_ts)
		ts = c->last_ts;
	class_id = (u16)id->class_id;
	memcpy(e, &class_id, 2);
	memcpy(e + 2, &ts, 8);
	memcpy(e + 10, &pid, 4);
	memcpy(e + 14, &common_pid, 4);
	memcpy(e + 18, comm_get(&r->comms, (s32)pid, common_pid, ts), MT_PROCNAME_MAX);
	n = MT_EVENT_PREFIX_SIZE + mt_tp_put_fields(ev, rec + raw_at, raw_size,
						    e + MT_EVENT_PREFIX_SIZE);
	if (n > r->packet_room) {
		add_lost(r, cpu, 1, ts);
		r->too_big++;
		return;
	}
	if (c->used + n > r->packet_room)
		flush_packet(r, cpu, 0);
	if (!c->used)
		c->ts_begin = ts;
	memcpy(c->packet + c->used, e, n);
	c->used += n;
	c->events++;
	c->last_ts = ts;
}

/* The time in the sample_id trailer of a side-band record (sample_id_all:
 * pid, tid | time | cpu, res | id, the last 32 bytes), or 0. */
static mt_u64 sideband_time(const char *rec, size_t len, size_t body)
{
	mt_u64 ts = 0;

	if (len >= body + 32)
		memcpy(&ts, rec + len - 24, 8);
	return ts;
}

/* A side-band record: losses, and the names of threads. */
static void sideband(struct tp_rec *r, unsigned cpu, const char *rec, size_t len)
{
	const struct perf_event_header *h = (const void *)rec;
	u32 ppid, tid, ptid;
	mt_u64 lost, ts;

	switch (h->type) {
	case PERF_RECORD_LOST:   /* u64 id, u64 lost */
		if (len >= 24) {
			memcpy(&lost, rec + 16, 8);
			add_lost(r, cpu, lost, sideband_time(rec, len, 24));
		}
		break;
	case PERF_RECORD_COMM:   /* u32 pid, tid, char comm[] (8-byte padded) */
		if (len >= 16 + 8 + 32) {
			memcpy(&tid, rec + 12, 4);
			ts = sideband_time(rec, len, 16);
			comm_set(&r->comms, (s32)tid, ts, rec + 16, len - 16 - 32);
		}
		break;
	case PERF_RECORD_FORK:   /* u32 pid, ppid, tid, ptid, u64 time */
		if (len >= 32) {
			memcpy(&ppid, rec + 12, 4);
			memcpy(&tid, rec + 16, 4);
			memcpy(&ptid, rec + 20, 4);
			memcpy(&ts, rec + 24, 8);
			comm_set(&r->comms, (s32)tid, ts,
				 comm_get(&r->comms, (s32)ppid, (s32)ptid, ts), MT_PROCNAME_MAX);
		}
		break;
	}
}

/*
 * Walk the records of the CPU's ring from its tail to head, the side-band
 * ones or the samples.  Records that wrap around the ring's end are
 * copied whole first.  0, or -1: a record that cannot be (the ring is
 * not read further).
 */
static int walk(struct tp_rec *r, unsigned cpu, mt_u64 head, int samples)
{
	struct tp_cpu *c = &r->cpu[cpu];
	mt_u64 tail = c->page->data_tail, mask = r->data_size - 1;
	static char copy[65536];

	while (tail < head) {
		struct perf_event_header h;
		size_t at = (size_t)(tail & mask), first;
		const char *rec;

		first = r->data_size - at < sizeof(h) ? r->data_size - at : sizeof(h);
		memcpy(&h, c->data + at, first);
		memcpy((char *)&h + first, c->data, sizeof(h) - first);
		if (h.size < sizeof(h) || h.size > head - tail) {
			mt_error("record: --kernel: CPU %u's perf ring holds a record of %u bytes "
				 "at %llu: the rest of it is not read", cpu, h.size,
				 (unsigned long long)tail);
			r->error = 1;
			return -1;
		}
		if (at + h.size <= r->data_size) {
			rec = c->data + at;
		} else {
			first = r->data_size - at;
			memcpy(copy, c->data + at, first);
			memcpy(copy + first, c->data, h.size - first);
			rec = copy;
		}
		if (samples && h.type == PERF_RECORD_SAMPLE)
			sample(r, cpu, rec, h.size);
		else if (!samples)
			sideband(r, cpu, rec, h.size);
		tail += h.size;
	}
	return 0;
}

/*
 * Copy what every ring holds: first the side-band records of all (a
 * thread's name may come from another CPU's exec or fork), then the
 * samples.  data_head is read with acquire: it pairs with the kernel's
 * release of data_head (perf_output_put_handle), so the records below
 * it are complete.  data_tail is stored with release: our reads of the
 * records come before the kernel, which reads data_tail before writing
 * (perf_output_begin), may reuse their space.  1 if anything was read.
 */
static int drain(struct tp_rec *r)
{
	mt_u64 head[CPU_SETSIZE];
	unsigned cpu, n = r->ncpu < CPU_SETSIZE ? r->ncpu : CPU_SETSIZE;
	int moved = 0, pass;
	char bad[CPU_SETSIZE] = { 0 };   /* a ring not to read further this time */

	for (cpu = 0; cpu < n; cpu++) {
		struct perf_event_mmap_page *pg = r->cpu[cpu].page;
		head[cpu] = pg ? __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) : 0;
		moved |= pg && head[cpu] != pg->data_tail;
	}
	for (pass = 0; pass < 2 && moved; pass++)
		for (cpu = 0; cpu < n; cpu++)
			if (r->cpu[cpu].page && !bad[cpu] && walk(r, cpu, head[cpu], pass) < 0)
				bad[cpu] = 1;   /* its records up to head are dropped */
	for (cpu = 0; cpu < n && moved; cpu++)
		if (r->cpu[cpu].page)
			__atomic_store_n(&r->cpu[cpu].page->data_tail, head[cpu], __ATOMIC_RELEASE);
	return moved;
}

/* --- the recording --- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait for a ring's wake-up mark (a quarter full), a signal, or ms.  The
 * loop waits after every copy, even one that found records: a reader
 * that went back to a ring at once would meet the writer in the lines it
 * writes, one record at a time, and slow every traced thread
 * (bench/README.md, "Kernel tracepoints through perf").
 */
static void wait_rings(struct tp_rec *r, int ms)
{
	struct pollfd p[256];
	unsigned cpu, n = 0;

	for (cpu = 0; cpu < r->ncpu && n < 256; cpu++)
		if (r->cpu[cpu].leader >= 0)
			p[n++] = (struct pollfd){ r->cpu[cpu].leader, POLLIN, 0 };
	poll(p, n, ms);
}

static void tp_loop(struct tp_rec *r)
{
	const struct mt_record_opts *o = r->o;
	double period = (o->switch_ms ? o->switch_ms : 1000) / 1000.0, last_switch = now_s();
	unsigned cpu;

	while (!r->error && !mt_record_stopped()) {
		int moved = 0, switched = 0;

		drain(r);
		if (o->switch_ms && now_s() - last_switch > period) {
			for (cpu = 0; cpu < r->ncpu; cpu++)
				flush_packet(r, cpu, 1);
			if (r->us)
				mt_record_switch(r->us);
			last_switch = now_s();
			switched = 1;
		}
		if (r->us) {
			moved = mt_record_consume(r->us, &r->ut, &r->error);
			mt_uclock_steer(r->us);
		}
		if (switched)
			mt_record_relay_tick(mt_clock_ns() - (mt_u64)(period * 1e9));
		if (r->child > 0 && waitpid(r->child, &r->status, WNOHANG) == r->child)
			break;
		/* the command's user rings have no descriptor to wait on: a
		 * millisecond, as the marker recorder's loop (record_kernel.c) */
		if (!moved)
			wait_rings(r, r->us ? 1 : 100);
	}
}

/* A trace of the recording, with (kernel: the rings open) the classes
 * of the events not refused in the first metadata, and the rings' ids
 * given them. */
static int open_trace(struct tp_rec *r, struct mt_ctf_trace *t, const char *dir, const char *sub,
		      unsigned ncpu, const char *domain, const struct mt_ctf_clock *clock,
		      int last, int kernel)
{
	char path[4096] = "", err[512];
	unsigned i;
	int *class_id = kernel ? calloc(r->nevents, sizeof(*class_id)) : NULL;

	if (dir)
		snprintf(path, sizeof(path), "%s%s%s", dir, sub ? "/" : "", sub ? sub : "");
	if (kernel && !class_id) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	if (mt_ctf_open(t, dir ? path : NULL, ncpu, domain, clock, err, sizeof(err)) < 0)
		goto fail;
	for (i = 0; kernel && i < r->nevents; i++)
		class_id[i] = r->refused[i] ? -1 :
			mt_ctf_add_class(t, r->events[i].name, r->events[i].format,
					 &r->events[i].fmt, r->events[i].array_len);
	for (i = 0; kernel && i < r->nids; i++)
		r->ids[i].class_id = (unsigned)class_id[r->ids[i].ev];
	free(class_id);
	class_id = NULL;
	if (mt_record_relay_attach(t, sub, ncpu, last, err, sizeof(err)) < 0 ||
	    mt_ctf_write_metadata(t, err, sizeof(err)) < 0)
		goto fail;
	return 0;
fail:
	free(class_id);
	mt_error("record: %s", err);
	return -1;
}

/* Each tracepoint's class, read from tracefs, and after them the
 * functions'; fields not recorded said. */
static int read_events(struct tp_rec *r, const char *tracefs, const struct mt_tp_list *names,
		       const struct mt_tp_event *functions, unsigned nfunctions)
{
	unsigned i;

	if (names->n + nfunctions > MT_EVENTS_MAX) {
		mt_error("record: --kernel: %u tracepoints and %u function entries and returns; a "
			 "recording holds at most %u events", names->n, nfunctions, MT_EVENTS_MAX);
		return -1;
	}
	r->events = calloc(names->n + nfunctions + 1, sizeof(*r->events));
	if (!r->events)
		return -1;
	if (nfunctions)
		memcpy(r->events + names->n, functions, nfunctions * sizeof(*functions));
	for (i = 0; i < names->n + nfunctions; i++) {
		char err[512];
		struct mt_tp_event *ev = &r->events[i];

		if (i < names->n &&
		    mt_tp_read_event(tracefs, names->names[i], ev, err, sizeof(err)) < 0) {
			mt_error("record: --kernel: %s", err);
			return -1;
		}
		if (ev->skipped[0] && !r->o->quiet)
			fprintf(stderr, "marktrace: warning: %s: fields not recorded: %s\n",
				ev->name, ev->skipped);
	}
	r->ntp = names->n;
	r->nevents = names->n + nfunctions;
	return 0;
}

/* The tracepoints the -e patterns take, with tracefs (none without a
 * SUBSYS:NAME pattern, unless a pattern without one has no command to
 * be a user marker of: mt_tp_select says that). */
static int select_tracepoints(const struct mt_record_opts *o, const char **tracefs,
			      struct mt_tp_list *names)
{
	if (!mt_tp_wanted(o->patterns) && (!*o->patterns || *o->command))
		return 0;
	if (!(*tracefs = mt_tp_tracefs())) {
		mt_error("record: --kernel: no tracefs (neither /sys/kernel/tracing nor "
			 "/sys/kernel/debug/tracing): mount -t tracefs nodev /sys/kernel/tracing");
		return -1;
	}
	return mt_tp_select(o, *tracefs, names);
}

static int start(struct tp_rec *r, const char *dir, int *ufd, size_t *ulen)
{
	const struct mt_record_opts *o = r->o;
	const char *tracefs = NULL;
	struct mt_tp_list names = { 0 };
	struct mt_tp_event *functions = NULL;
	struct mt_ctf_clock clock;
	unsigned nfunctions = 0;
	int cmd = *o->command != NULL, rc;

	if (o->overwrite) {
		mt_error("record: --kernel: --overwrite is not supported with tracepoints "
			 "and functions");
		return -1;
	}
	rc = select_tracepoints(o, &tracefs, &names);
	if (rc == 0 && *o->functions)
		rc = mt_kf_select(o, &functions, &nfunctions) < 0 ||
		     mt_kf_pmu(&r->kprobe_type, &r->retprobe_bit) < 0 ? -1 : 0;
	if (rc == 0)
		rc = read_events(r, tracefs, &names, functions, nfunctions);
	mt_tp_list_free(&names);
	free(functions);
	if (rc < 0)
		return -1;
	r->ncpu = (unsigned)sysconf(_SC_NPROCESSORS_CONF);
	if (r->ncpu > CPU_SETSIZE)   /* what drain() and flush_losses() follow */
		r->ncpu = CPU_SETSIZE;
	ring_geometry(r);
	/* the rings first: which functions the kernel refuses is known then */
	if (open_rings(r) < 0)
		return -1;
	mt_ctf_clock_now(&clock);
	rc = open_trace(r, &r->t, dir, cmd ? "kernel" : NULL, r->ncpu, "kernel", &clock, !cmd, 1);
	if (rc < 0 || !cmd)
		return rc;
	*ufd = mt_record_create_session(o, &r->us, ulen);
	if (*ufd < 0)
		return -1;
	snprintf(clock.source, sizeof(clock.source), "%s", mt_uclock_describe());
	return open_trace(r, &r->ut, dir, "ust", r->us->ncpu, "ust", &clock, 1, 0);
}

/*
 * A ring that was full holds its count of lost records in the kernel
 * until the next record written to it, which the PERF_RECORD_LOST then
 * precedes; at the end there may be none.  So on each CPU, after its
 * ring was drained, we rename ourselves (to our own name): the COMM
 * record that the CPU's first event asks for goes to that ring, and
 * with it the pending count.  A CPU our affinity does not allow keeps
 * its count (the summary then says less than was lost).
 */
static void flush_losses(struct tp_rec *r)
{
	cpu_set_t home, one;
	char name[32] = "";
	unsigned cpu;

	if (sched_getaffinity(0, sizeof(home), &home) < 0 ||
	    prctl(PR_GET_NAME, (unsigned long)name, 0, 0, 0) < 0)
		return;
	drain(r);   /* room for the records */
	for (cpu = 0; cpu < r->ncpu && cpu < CPU_SETSIZE; cpu++) {
		if (r->cpu[cpu].leader < 0 || !CPU_ISSET(cpu, &home))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
	}
	sched_setaffinity(0, sizeof(home), &home);
}

static void finish(struct tp_rec *r)
{
	char err[512];
	unsigned cpu;

	flush_losses(r);
	enable_all(r, PERF_EVENT_IOC_DISABLE);
	drain(r);
	for (cpu = 0; cpu < r->ncpu; cpu++)
		flush_packet(r, cpu, 1);
	if (mt_ctf_end(&r->t, !r->error, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		r->error = 1;
	}
	if (r->us)
		mt_record_finish(r->us, &r->ut, r->o->quiet, &r->error);
}

static void summary(const struct tp_rec *r, const char *dir)
{
	char where[4200];
	mt_u64 lost = 0;
	unsigned cpu;

	for (cpu = 0; cpu < r->ncpu; cpu++)
		lost += r->cpu[cpu].lost;
	snprintf(where, sizeof(where), "%s%s%s%s", dir ? dir : "",
		 dir && *mt_record_relay_path() ? " and " : "",
		 *mt_record_relay_path() ? "relayd's " : "", mt_record_relay_path());
	fprintf(stderr, "marktrace: %llu %s events recorded, %llu lost",
		(unsigned long long)r->t.events,
		r->ntp == r->nevents ? "tracepoint" : r->ntp ? "tracepoint and function" : "function", (unsigned long long)(lost + r->t.disk_lost));
	if (r->too_big)
		fprintf(stderr, " (%llu larger than a sub-buffer)", (unsigned long long)r->too_big);
	if (r->us)
		fprintf(stderr, "; %llu user events", (unsigned long long)r->ut.events);
	fprintf(stderr, ", in %s\n", where);
}

static void say_enabled(const struct tp_rec *r)
{
	unsigned ev, probes = 0;

	for (ev = r->ntp; ev < r->nevents; ev++)
		probes += !r->refused[ev];
	if (probes && r->ntp)
		fprintf(stderr, "marktrace: %u tracepoints and %u function probes enabled\n",
			r->ntp, probes);
	else if (probes)
		fprintf(stderr, "marktrace: %u function probes enabled\n", probes);
	else
		fprintf(stderr, "marktrace: %u tracepoints enabled\n", r->ntp);
}

int mt_record_tp(struct mt_record_opts *o, const char *dir)
{
	struct tp_rec r;
	size_t ulen = 0;
	int ufd = -1;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.t.dirfd = r.ut.dirfd = -1;   /* not open: mt_ctf_close does nothing */
	if (o->pid) {
		mt_error("record: --kernel with -p is not supported; give -- CMD instead");
		return 2;
	}
	if (start(&r, dir, &ufd, &ulen) < 0) {
		if (r.ut.dir)   /* DIR/ust, then DIR/kernel and DIR */
			mt_ctf_remove(&r.ut);
		if (r.t.dir)
			mt_ctf_remove(&r.t);
		r.error = 1;
	} else {
		enable_all(&r, PERF_EVENT_IOC_ENABLE);
		if (!o->quiet)
			say_enabled(&r);
		if (*o->command && (r.child = mt_record_spawn(o->command, ufd)) < 0)
			r.error = 1;
		tp_loop(&r);
		finish(&r);
		if (!o->quiet)
			summary(&r, dir);
		mt_record_relay_finish(dir, &r.error);
	}
	close_rings(&r);
	mt_ctf_close(&r.t);
	mt_ctf_close(&r.ut);
	if (r.us)
		munmap(r.us, ulen);
	if (ufd >= 0)
		close(ufd);
	free(r.events);
	return r.error;
}
