/*
 * kreader.c - the kernel tests' program, run inside the qemu guest.
 *
 *   kreader list            the catalogue as the module lists it
 *   kreader test            record every marker while doing known things,
 *                           then check the events (TAP on stdout)
 *   kreader hold SECONDS    record and drain for SECONDS or until SIGTERM
 *                           (the unload tests: the device stays open)
 *   kreader access UID GID [SUPPLEMENTARY-GID]
 *                           as that user, can we open /dev/marktap?
 *   kreader userns UID GID NSUID NSGID
 *                           as that user, in a new user namespace where
 *                           NSUID and NSGID are that user's ids: can we?
 *   kreader as UID GID CMD...  run CMD as that user (no other groups)
 *   kreader procfs NAME [PATH...]  make /proc/systemtap/NAME and a read-only
 *                           file PATH each (MT_IOC_PROCFS_*): one line each,
 *                           the file's number or the errno's name; then exit
 *   kreader abuse           malformed requests get error codes (TAP)
 *   kreader spin N          N getppid() calls, ns per call on stdout (bench)
 *   kreader gate FILE N     create FILE.ready.PID, wait for FILE (2 min at most), spin N
 *   kreader migrate N       N times getppid() on CPU 0, then getpid() on CPU 1
 *   kreader nap N           N sleeps of 100 ms (woken N times)
 *   kreader record PATTERN N  like spin, while recording PATTERN (bench)
 *   kreader record-creds PATTERN N  the same, events with credentials
 *   kreader vsock PORT      connect a vsock stream to this machine's own
 *                           CID (VMADDR_CID_LOCAL) and PORT: the
 *                           connect's errno name on stdout (the
 *                           loopback transport's tracepoints, ktrace.t)
 *
 * It reads the mapped rings with the shared core (mt_ring_get_packet) and
 * decodes events with the format parser, as marktrace does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/vm_sockets.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
#include "mt_event.h"
#include "mt_fmt.h"
#include "mt_session.h"
#include "kernel.h"
#include "tap.h"
#include "mt_ioctl.h"

/* ---- draining: packets copied out by a thread while recording -------- */

struct packet {
	unsigned cpu;
	mt_u64 lost;
	size_t size;
	char *data;
};

static struct {
	struct mt_kernel k;
	pthread_t thread;
	volatile int stop;
	pthread_mutex_t lock;
	struct packet *v;
	size_t n, cap;
	mt_u64 bytes;
	int keep;   /* keep packets (test) or drop them (hold, bench) */
} rec = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int drain_once(void)
{
	struct mt_session *s = rec.k.session;
	struct mt_ring_packet pkt;
	unsigned cpu;
	int got = 0;

	for (cpu = 0; cpu < s->ncpu; cpu++) {
		struct mt_ring *r = mt_session_ring(s, cpu);

		while (mt_ring_get_packet(r, &pkt) == 0) {
			pthread_mutex_lock(&rec.lock);
			if (rec.keep) {
				if (rec.n == rec.cap) {
					rec.cap = rec.cap ? 2 * rec.cap : 64;
					rec.v = realloc(rec.v, rec.cap * sizeof(*rec.v));
				}
				rec.v[rec.n].cpu = cpu;
				rec.v[rec.n].lost = pkt.lost;
				rec.v[rec.n].size = pkt.data_size;
				rec.v[rec.n].data = malloc(pkt.data_size ? pkt.data_size : 1);
				memcpy(rec.v[rec.n].data, pkt.data, pkt.data_size);
				rec.n++;
			}
			rec.bytes += pkt.data_size;
			pthread_mutex_unlock(&rec.lock);
			mt_ring_put_packet(r);
			got++;
		}
	}
	return got;
}

static void *drain_thread(void *arg)
{
	(void)arg;
	while (!rec.stop)
		if (!drain_once())
			usleep(2000);
	return NULL;
}

static u32 rec_flags;   /* MT_CONFIG_CREDS for record-creds */

static int rec_start(const char *patterns, u32 subbuf, u32 num, int keep)
{
	int rc = mt_kernel_open(&rec.k);

	if (!rc)
		rc = mt_kernel_configure(&rec.k, subbuf, num, MT_RING_DISCARD | rec_flags);
	if (!rc)
		rc = mt_kernel_set_patterns(&rec.k, patterns);
	if (rc) {
		printf("# kreader: %s\n", mt_kernel_strerror(rc));
		return rc;
	}
	rec.keep = keep;
	rec.stop = 0;
	pthread_create(&rec.thread, NULL, drain_thread, NULL);
	return mt_kernel_start(&rec.k);
}

static void rec_stop(void)
{
	mt_kernel_stop(&rec.k);
	rec.stop = 1;
	pthread_join(rec.thread, NULL);
	mt_kernel_flush(&rec.k);
	drain_once();
}

/* ---- decoding ---------------------------------------------------------- */

struct event {
	const char *name;
	mt_u64 ts;
	size_t seq;     /* order of recording, ties of ts keep it */
	int pid, tid;
	unsigned cpu;
	char comm[16];
	unsigned nfields;
	const struct mt_format *fmt;
	mt_u64 v[MT_FIELDS_MAX];
	const char *s[MT_FIELDS_MAX];
};

static struct event *events;
static size_t nevents;
static struct mt_format formats[MT_EVENTS_MAX];
static int format_ok[MT_EVENTS_MAX];

static int decode_packet(struct mt_session *s, const struct packet *p)
{
	const char *d = p->data, *end = p->data + p->size;

	while (d < end) {
		struct event e;
		struct mt_event_context ctx;
		struct mt_args a;
		u16 id;
		long used;
		unsigned i;

		memset(&e, 0, sizeof(e));
		if (mt_event_read_prefix(d, (size_t)(end - d), &id, &e.ts, &ctx))
			return -1;
		e.pid = ctx.pid;
		e.tid = ctx.tid;
		memcpy(e.comm, ctx.procname, sizeof(e.comm));
		d += MT_EVENT_PREFIX_SIZE;
		if (id >= MT_EVENTS_MAX || s->events[id].state != MT_EV_READY)
			return -1;
		if (!format_ok[id]) {
			struct mt_fmt_error err;
			if (mt_fmt_parse(s->events[id].format, &formats[id], &err))
				return -1;
			format_ok[id] = 1;
		}
		e.name = s->events[id].name;
		e.fmt = &formats[id];
		e.cpu = p->cpu;
		e.nfields = e.fmt->nfields;
		used = mt_event_read_payload(e.fmt, d, (size_t)(end - d), &a);
		if (used < 0)
			return -1;
		for (i = 0; i < e.nfields; i++) {
			if (e.fmt->fields[i].store == MT_ST_STRING)
				e.s[i] = a.v[i].str;
			else
				e.v[i] = a.v[i].u;
		}
		d += used;
		e.seq = nevents;
		events = realloc(events, (nevents + 1) * sizeof(*events));
		events[nevents++] = e;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int field(const struct event *e, const char *name)
{
	unsigned i;

	for (i = 0; i < e->nfields; i++)
		if (!strcmp(e->fmt->fields[i].name, name))
			return (int)i;
	return -1;
}

static long long ival(const struct event *e, const char *name)
{
	int i = field(e, name);

	return i < 0 ? -999999 : (long long)e->v[i];
}

static const char *sval(const struct event *e, const char *name)
{
	int i = field(e, name);

	return i < 0 || !e->s[i] ? "" : e->s[i];
}

/* The first event NAME with FIELD == V (integer fields), by thread TID if >= 0. */
static const struct event *find_int_by(const char *name, const char *fld, long long v, int tid)
{
	size_t i;

	for (i = 0; i < nevents; i++)
		if (!strcmp(events[i].name, name) && (!fld || ival(&events[i], fld) == v) &&
		    (tid < 0 || events[i].tid == tid))
			return &events[i];
	return NULL;
}

static const struct event *find_int(const char *name, const char *fld, long long v)
{
	return find_int_by(name, fld, v, -1);
}

static void diag_events(const char *name, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < nevents && n < max; i++) {
		const struct event *e = &events[i];
		unsigned k;

		if (strcmp(e->name, name))
			continue;
		n++;
		printf("#   %s cpu %u tid %d %s:", e->name, e->cpu, e->tid, e->comm);
		for (k = 0; k < e->nfields; k++)
			if (e->fmt->fields[k].store == MT_ST_STRING)
				printf(" %s=\"%s\"", e->fmt->fields[k].name, e->s[k]);
			else
				printf(" %s=%lld", e->fmt->fields[k].name, (long long)e->v[k]);
		printf("\n");
	}
}

static const struct event *find_str(const char *name, const char *fld, const char *v)
{
	size_t i;

	for (i = 0; i < nevents; i++)
		if (!strcmp(events[i].name, name) && !strcmp(sval(&events[i], fld), v))
			return &events[i];
	return NULL;
}

static size_t count(const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < nevents; i++)
		n += !strcmp(events[i].name, name);
	return n;
}

/* ---- the known actions ------------------------------------------------- */

static struct {
	char path[64];
	int fd, child, killed, trapper, msqid, sock, pipe_r;
	pid_t self;
	char *map;
	size_t map_len;
} act;

static void on_signal(int sig) { (void)sig; }

static void do_actions(void)
{
	char buf[16] = "marktap";
	int n = 0, p[2];
	struct pollfd pfd;
	fd_set set;
	struct timeval tv = { 1, 0 };
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	size_t i;

	act.self = getpid();
	/* files */
	snprintf(act.path, sizeof(act.path), "/tmp/marktap-open-%d", (int)act.self);
	act.fd = open(act.path, O_CREAT | O_RDWR, 0600);
	if (write(act.fd, buf, 7) != 7 || lseek(act.fd, 3, SEEK_SET) != 3 ||
	    pread(act.fd, buf, 5, 2) != 5 || ioctl(act.fd, FIONREAD, &n) != 0)
		printf("# file calls failed: %s\n", strerror(errno));
	close(act.fd);
	/* processes */
	act.child = fork();
	if (act.child == 0)
		_exit(3);
	waitpid(act.child, NULL, 0);
	signal(SIGUSR1, on_signal);
	act.killed = fork();
	if (act.killed == 0) {
		pause();
		_exit(0);
	}
	usleep(20000);
	kill(act.killed, SIGUSR1);
	waitpid(act.killed, NULL, 0);
	/* a trap: invalid opcode in a child */
	act.trapper = fork();
	if (act.trapper == 0) {
		signal(SIGILL, SIG_DFL);
		__builtin_trap();
	}
	waitpid(act.trapper, NULL, 0);
	if (fork() == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	wait(NULL);
	/* a module */
	if (system("insmod /mt_hello.ko && rmmod mt_hello") != 0)
		printf("# insmod/rmmod mt_hello failed\n");
	/* ipc, net */
	act.msqid = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	msgctl(act.msqid, IPC_RMID, NULL);
	act.sock = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	sendto(act.sock, buf, 5, 0, (struct sockaddr *)&to, sizeof(to));
	close(act.sock);
	if (system("ip addr add 10.9.8.7/32 dev lo && ip addr del 10.9.8.7/32 dev lo") != 0)
		printf("# ip addr add/del failed\n");
	/* poll, select */
	if (pipe(p) == 0 && write(p[1], "x", 1) == 1) {
		act.pipe_r = p[0];
		pfd.fd = p[0];
		pfd.events = POLLIN;
		poll(&pfd, 1, 1000);
		FD_ZERO(&set);
		FD_SET(p[0], &set);
		select(p[0] + 1, &set, NULL, NULL, &tv);
		close(p[1]);
		close(p[0]);
	}
	/* faults */
	act.map_len = 64 * 4096;
	act.map = mmap(NULL, act.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < act.map_len; i += 4096)
		act.map[i] = 1;
	/* an itimer */
	signal(SIGALRM, on_signal);
	setitimer(ITIMER_REAL, &it, NULL);
	pause();
	syscall(SYS_getppid);
	/* console output: serial port interrupts (irq_handler_entry/exit) */
	for (i = 0; i < 4; i++) {
		printf("# recording: %zu\n", i);
		usleep(25000);  /* timer softirqs meanwhile */
	}
}

/* irq entry/exit and softirq entry/exit nest properly on every CPU */
static void check_pairing(void)
{
	unsigned cpu, ncpu = rec.k.session->ncpu;
	size_t i, irq_pairs = 0, soft_pairs = 0, bad_irq = 0, bad_soft = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		/* -1: before the first entry (recording may start inside one) */
		int irq_depth = -1, softirq = -1;  /* softirq: 0 none, else id + 1 */

		for (i = 0; i < nevents; i++) {
			const struct event *e = &events[i];

			if (e->cpu != cpu)
				continue;
			if (!strcmp(e->name, "kernel_irq_entry")) {
				irq_depth = irq_depth < 0 ? 1 : irq_depth + 1;
				if (irq_depth > 2 && bad_irq++ < 1) {
					size_t j, shown = 0;
					printf("#   cpu %u: irq entry %lld at depth %d (ts %llu), before it:\n", cpu,
					       ival(e, "irq_id"), irq_depth, (unsigned long long)e->ts);
					for (j = i; j > 0 && shown < 12; j--)
						if (events[j - 1].cpu == cpu && strstr(events[j - 1].name, "irq")) {
							printf("#     %llu %s %lld\n", (unsigned long long)events[j - 1].ts,
							       events[j - 1].name, ival(&events[j - 1], "irq_id"));
							shown++;
						}
				}
			} else if (!strcmp(e->name, "kernel_irq_exit") && irq_depth >= 0) {
				if (irq_depth == 0 && bad_irq++ < 3)
					printf("#   cpu %u: irq exit at depth 0 (ts %llu)\n", cpu,
					       (unsigned long long)e->ts);
				else if (irq_depth == 0)
					;
				else {
					irq_depth--;
					irq_pairs++;
				}
			} else if (!strcmp(e->name, "kernel_softirq_entry")) {
				if (softirq > 0)
					bad_soft++;  /* softirqs do not nest on a CPU */
				softirq = 1 + (int)ival(e, "softirq_id");
			} else if (!strcmp(e->name, "kernel_softirq_exit") && softirq >= 0) {
				if (softirq != 1 + (int)ival(e, "softirq_id"))
					bad_soft++;
				else
					soft_pairs++;
				softirq = 0;
			}
		}
	}
	tap_ok(irq_pairs > 0 && !bad_irq, "irq entry/exit pair on every CPU (%zu pairs, %zu bad)",
	       irq_pairs, bad_irq);
	tap_ok(soft_pairs > 0 && !bad_soft,
	       "softirq entry/exit pair with the same id (%zu pairs, %zu bad)", soft_pairs, bad_soft);
}

static void check_events(void)
{
	const struct event *e;
	size_t i;
	int found;

	e = find_str("fs_open", "filename", act.path);
	tap_ok(e && ival(e, "fd") == act.fd && e->pid == act.self,
	       "fs_open has the file name and the returned fd %d", act.fd);
	tap_ok(find_int("fs_write", "fd", act.fd) && ival(find_int("fs_write", "fd", act.fd), "count") == 7,
	       "fs_write: fd and count");
	e = find_int("fs_lseek", "fd", act.fd);
	tap_ok(e && ival(e, "offset") == 3 && ival(e, "origin") == SEEK_SET, "fs_lseek: offset, origin");
	e = find_int("fs_pread64", "fd", act.fd);
	tap_ok(e && ival(e, "count") == 5 && ival(e, "pos") == 2, "fs_pread64: count, pos");
	e = find_int("fs_ioctl", "fd", act.fd);
	tap_ok(e && ival(e, "cmd") == FIONREAD, "fs_ioctl: cmd");
	tap_ok(find_int("fs_close", "fd", act.fd) != NULL, "fs_close: fd");
	e = find_int("kernel_process_fork", "child_pid", act.child);
	tap_ok(e && ival(e, "parent_pid") == act.self && ival(e, "child_tgid") == act.child,
	       "kernel_process_fork: parent %d, child %d", (int)act.self, act.child);
	tap_ok(find_int("kernel_process_exit", "pid", act.child) != NULL, "kernel_process_exit: child pid");
	e = find_int("kernel_process_wait", "pid", act.child);
	tap_ok(e && e->pid == act.self, "kernel_process_wait: child pid, by the parent");
	e = find_int("kernel_send_signal", "pid", act.killed);
	tap_ok(e && ival(e, "signal") == SIGUSR1, "kernel_send_signal: pid and SIGUSR1");
	tap_ok(find_int("kernel_sched_schedule", "next_pid", act.killed) &&
	       find_int("kernel_sched_schedule", "prev_pid", act.killed),
	       "kernel_sched_schedule: the child was switched in and out (%zu switches)",
	       count("kernel_sched_schedule"));
	check_pairing();
	e = find_str("kernel_module_load", "name", "mt_hello");
	tap_ok(e != NULL, "kernel_module_load: mt_hello");
	tap_ok(find_str("kernel_module_free", "name", "mt_hello") != NULL, "kernel_module_free: mt_hello");
	tap_ok(find_str("fs_exec", "filename", "/bin/true") != NULL, "fs_exec: /bin/true");
	e = find_int("kernel_arch_trap_entry", "trap_id", 6);
	tap_ok(e && e->pid == act.trapper, "kernel_arch_trap_entry: invalid opcode (6) in the child");
	tap_ok(count("kernel_arch_trap_exit") == count("kernel_arch_trap_entry"),
	       "kernel_arch_trap_exit as many as entries (%zu)", count("kernel_arch_trap_entry"));
	e = find_int("ipc_msg_create", "id", act.msqid);
	tap_ok(e && ival(e, "flags") == (IPC_CREAT | 0600), "ipc_msg_create: returned id and flags");
	found = 0;
	for (i = 0; i < nevents; i++)
		if (!strcmp(events[i].name, "net_socket_create") && events[i].pid == act.self &&
		    ival(&events[i], "fd") == act.sock && ival(&events[i], "family") == AF_INET &&
		    ival(&events[i], "type") == SOCK_DGRAM)
			found = 1;
	tap_ok(found, "net_socket_create: fd, family, type");
	e = find_int_by("net_socket_sendmsg", "size", 5, act.self);
	if (!tap_ok(e && ival(e, "family") == AF_INET, "net_socket_sendmsg: size, family"))
		diag_events("net_socket_sendmsg", 5);
	tap_ok(count("net_dev_xmit") > 0 && count("net_dev_receive") > 0,
	       "net_dev_xmit and net_dev_receive on lo");
	e = find_str("net_insert_ifa_ipv4", "label", "lo");
	tap_ok(e && ival(e, "address") == (long long)inet_addr("10.9.8.7"),
	       "net_insert_ifa_ipv4: lo 10.9.8.7");
	tap_ok(find_str("net_del_ifa_ipv4", "label", "lo") != NULL, "net_del_ifa_ipv4: lo");
	tap_ok(find_int("fs_pollfd", "fd", act.pipe_r) != NULL, "fs_pollfd: the pipe");
	tap_ok(find_int("fs_select", "fd", act.pipe_r) != NULL, "fs_select: the ready pipe");
	found = 0;
	for (i = 0; i < nevents; i++)
		if (!strcmp(events[i].name, "mm_handle_fault_entry") &&
		    (mt_u64)ival(&events[i], "address") >= (mt_u64)(unsigned long)act.map &&
		    (mt_u64)ival(&events[i], "address") < (mt_u64)(unsigned long)act.map + act.map_len &&
		    ival(&events[i], "write_access") == 1)
			found++;
	tap_ok(found >= 1, "mm_handle_fault_entry: writes into our mapping (%d)", found);
	tap_ok(count("mm_page_alloc") > 0 && count("mm_page_free") > 0, "mm_page_alloc, mm_page_free");
	e = find_int("kernel_timer_itimer_set", "which", ITIMER_REAL);
	tap_ok(e && ival(e, "value_usec") == 20000, "kernel_timer_itimer_set: 20 ms");
	tap_ok(find_int("kernel_timer_itimer_expired", "pid", act.self) != NULL,
	       "kernel_timer_itimer_expired: our pid");
	{
		/* the kernel logs the invalid opcode: "traps: kreader[PID] trap invalid opcode ..." */
		char text[64];
		snprintf(text, sizeof(text), "traps: kreader[%d] trap invalid opcode", act.trapper);
		found = 0;
		for (i = 0; i < nevents; i++)
			if (!strcmp(events[i].name, "kernel_vprintk") &&
			    !strncmp(sval(&events[i], "string"), text, strlen(text)) &&
			    ival(&events[i], "loglevel") == 6)
				found = 1;
		if (!tap_ok(found, "kernel_vprintk: the trap's message, level 6"))
			diag_events("kernel_vprintk", 10);
		tap_ok(count("kernel_printk") > 0, "kernel_printk (%zu)", count("kernel_printk"));
	}
	e = find_int_by("kernel_arch_syscall_entry", "syscall_id", SYS_getppid, act.self);
	tap_ok(e != NULL, "kernel_arch_syscall_entry: getppid");
	e = find_int_by("kernel_arch_syscall_exit", "ret", getppid(), act.self);
	tap_ok(e != NULL, "kernel_arch_syscall_exit: getppid's return value");
	tap_ok(count("kernel_timer_update_time") > 0, "kernel_timer_update_time ticks (%zu)",
	       count("kernel_timer_update_time"));
	found = 0;
	for (i = 0; i < nevents; i++)
		if (!strcmp(events[i].name, "statedump_process_state") &&
		    ival(&events[i], "pid") == act.self && !strcmp(sval(&events[i], "name"), "kreader"))
			found = 1;
	tap_ok(found && find_int("statedump_process_state", "pid", 1) && count("statedump_end") == 1,
	       "state dump: this process, init, one end");
}

static int cmd_test(void)
{
	size_t i;
	mt_u64 lost = 0;
	int armed, bad = 0;

	armed = rec_start("", 1 << 20, 8, 1);
	if (!tap_ok(armed > 0, "start: %d markers armed", armed))
		return 1;
	do_actions();
	rec_stop();
	for (i = 0; i < rec.n; i++) {
		if (decode_packet(rec.k.session, &rec.v[i]))
			bad++;
		if (rec.v[i].lost > lost)
			lost = rec.v[i].lost;
	}
	tap_ok(!bad, "%zu packets decode (%zu events, lost %llu)", rec.n, nevents,
	       (unsigned long long)lost);
	qsort(events, nevents, sizeof(*events), by_time);
	check_events();
	mt_kernel_close(&rec.k);
	return tap_done();
}

static volatile sig_atomic_t hold_stop;
static void on_term(int sig) { (void)sig; hold_stop = 1; }

static int cmd_hold(int seconds)
{
	int armed, i;

	signal(SIGTERM, on_term);
	armed = rec_start("", 1 << 16, 4, 0);
	if (armed < 0)
		return 1;
	printf("holding %d\n", armed);
	fflush(stdout);
	for (i = 0; i < seconds * 10 && !hold_stop; i++)
		usleep(100000);
	rec_stop();
	mt_kernel_close(&rec.k);
	return 0;
}

static double spin(long n)
{
	struct timespec a, b;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

/* N times: getppid() on CPU 0, getpid() on CPU 1 (a thread that moves
 * between two markers of one handler pair) */
static int migrate(long n)
{
	cpu_set_t c0, c1;
	long i;

	CPU_ZERO(&c0);
	CPU_SET(0, &c0);
	CPU_ZERO(&c1);
	CPU_SET(1, &c1);
	for (i = 0; i < n; i++) {
		if (sched_setaffinity(0, sizeof(c0), &c0) < 0)
			return 1;
		syscall(SYS_getppid);
		if (sched_setaffinity(0, sizeof(c1), &c1) < 0)
			return 1;
		syscall(SYS_getpid);
	}
	return 0;
}

/* What marktap tells a module of another build by: a load request of
 * another size is not known (ENOTTY), yet the module has Lua (STOP with no
 * script: ENXIO).  Prints "load=ERRNO stop=ERRNO". */
static int abi(void)
{
	struct { char bytes[24]; } other = { { 0 } };
	int fd = open(MT_DEVICE_PATH, O_RDWR | O_CLOEXEC), e1, e2;

	if (fd < 0)
		return 1;
	e1 = ioctl(fd, _IOWR(MT_IOC_MAGIC, 16, other), &other) < 0 ? errno : 0;
	e2 = ioctl(fd, MT_IOC_LUA_STOP, 0) < 0 ? errno : 0;
	printf("load=%s stop=%s\n", e1 == ENOTTY ? "ENOTTY" : strerror(e1), e2 == ENXIO ? "ENXIO" : strerror(e2));
	close(fd);
	return 0;
}

static int cmd_list(void)
{
	struct mt_kernel_marker *v;
	size_t n, i;
	int rc = mt_kernel_catalogue(&v, &n);

	if (rc) {
		fprintf(stderr, "kreader: %s\n", mt_kernel_strerror(rc));
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%s\t%s\t%s\t%s%s\n", v[i].name, v[i].format, v[i].available ? "yes" : "no",
		       v[i].available ? "" : MT_UNAVAILABLE, v[i].source);
	free(v);
	return 0;
}

static int cmd_access(int uid, int gid, int supp)
{
	gid_t groups[1] = { (gid_t)supp };
	struct mt_kernel k;
	int rc;

	if (setgroups(supp >= 0 ? 1 : 0, groups) || setgid(gid) || setuid(uid)) {
		perror("kreader: access: dropping privileges");
		return 2;
	}
	rc = mt_kernel_open(&k);
	if (rc) {
		printf("open: %s\n", strerror(-rc));
		return 1;
	}
	printf("open: ok\n");
	mt_kernel_close(&k);
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* What an unprivileged user can do without help: a user namespace whose
 * ids NSUID/NSGID are its own (unshare -r maps 0 and 0). */
static int cmd_userns(int uid, int gid, int nsuid, int nsgid)
{
	struct mt_kernel k;
	char map[64];
	int rc;

	if (setgroups(0, NULL) || setgid(gid) || setuid(uid)) {
		perror("kreader: userns: dropping privileges");
		return 2;
	}
	/* a change of uid left us undumpable, our /proc files root's: we
	 * could not write our own id maps */
	prctl(PR_SET_DUMPABLE, 1);
	if (unshare(CLONE_NEWUSER)) {
		printf("unshare: %s\n", strerror(errno));
		return 2;
	}
	snprintf(map, sizeof(map), "%d %d 1\n", nsuid, uid);
	if (write_file("/proc/self/uid_map", map) || write_file("/proc/self/setgroups", "deny")) {
		printf("uid_map: %s\n", strerror(errno));
		return 2;
	}
	snprintf(map, sizeof(map), "%d %d 1\n", nsgid, gid);
	if (write_file("/proc/self/gid_map", map)) {
		printf("gid_map: %s\n", strerror(errno));
		return 2;
	}
	rc = mt_kernel_open(&k);
	if (rc) {
		printf("open: %s\n", strerror(-rc));
		return 1;
	}
	rc = mt_kernel_configure(&k, 4096, 4, MT_RING_DISCARD);
	printf("open: ok, configure: %s\n", rc ? strerror(-rc) : "ok");
	mt_kernel_close(&k);
	return 0;
}

static int cmd_as(int uid, int gid, char **argv)
{
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid)) {
		perror("kreader: as: dropping privileges");
		return 2;
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

static int cmd_procfs(char **argv)
{
	int fd = open(MT_DEVICE_PATH, O_RDWR);
	struct mt_ioc_procfs_dir d;

	if (fd < 0) {
		printf("open %s\n", strerrorname_np(errno));
		return 1;
	}
	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "%s", argv[0]);
	printf("dir %s\n", ioctl(fd, MT_IOC_PROCFS_DIR, &d) < 0 ? strerrorname_np(errno) : "ok");
	for (argv++; *argv; argv++) {
		struct mt_ioc_procfs_file f = { .ops = MT_PROCFS_READ, .read_max = 16 };
		snprintf(f.path, sizeof(f.path), "%s", *argv);
		int n = ioctl(fd, MT_IOC_PROCFS_FILE, &f);
		if (n < 0)
			printf("file %s\n", strerrorname_np(errno));
		else
			printf("file %d\n", n);
	}
	close(fd);
	return 0;
}

static void expect_errno(int rc, int want, const char *what)
{
	if (!tap_ok(rc < 0 && errno == want, "%s: %s", what, strerror(want)))
		tap_diag("got rc %d, errno %s", rc, strerror(errno));
}

static int cmd_abuse(void)
{
	int fd = open(MT_DEVICE_PATH, O_RDWR), fd2;
	struct mt_ioc_config c = { .subbuf_size = 1000, .num_subbuf = 4 };
	void *p;

	if (!tap_ok(fd >= 0, "open " MT_DEVICE_PATH))
		return 1;
	expect_errno(ioctl(fd, _IO(0x12, 0x34)), ENOTTY, "an unknown ioctl");
	expect_errno(ioctl(fd, _IOWR(MT_IOC_MAGIC, 99, struct mt_ioc_config), &c), ENOTTY,
		     "an unknown marktap ioctl");
	expect_errno(ioctl(fd, MT_IOC_START), ENXIO, "start before configure");
	expect_errno(ioctl(fd, MT_IOC_PATTERNS, (void *)16), ENXIO, "patterns before configure");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	tap_ok(p == MAP_FAILED && errno == ENXIO, "mmap before configure: ENXIO");
	expect_errno(ioctl(fd, MT_IOC_CONFIGURE, (void *)16), EFAULT, "configure from a bad pointer");
	expect_errno(ioctl(fd, MT_IOC_CONFIGURE, &c), EINVAL, "sub-buffers of 1000 bytes");
	c.subbuf_size = 4096;
	c.mode = 7;
	expect_errno(ioctl(fd, MT_IOC_CONFIGURE, &c), EINVAL, "an unknown mode");
	c.mode = 0;
	c.num_subbuf = 1u << 30;
	expect_errno(ioctl(fd, MT_IOC_CONFIGURE, &c), E2BIG, "a session larger than max_bytes");
	c.num_subbuf = 4;
	tap_ok(ioctl(fd, MT_IOC_CONFIGURE, &c) == 0, "configure 4 x 4k");
	expect_errno(ioctl(fd, MT_IOC_CONFIGURE, &c), EBUSY, "configure twice");
	/* every open file is a session of its own: another one records
	 * beside it (ksessions.t runs several at once) */
	fd2 = open(MT_DEVICE_PATH, O_RDWR);
	tap_ok(ioctl(fd2, MT_IOC_CONFIGURE, &c) == 0, "a second file configures a session beside it");
	expect_errno(ioctl(fd2, MT_IOC_CONFIGURE, &c), EBUSY, "that file's second session");
	tap_ok(ioctl(fd2, MT_IOC_BARRIER) == 0, "the RCU barrier returns");
	close(fd2);
	expect_errno(ioctl(fd, MT_IOC_PATTERNS, (void *)16), EFAULT, "patterns from a bad pointer");
	p = mmap(NULL, c.total_bytes + 4096, PROT_READ, MAP_SHARED, fd, 0);
	tap_ok(p == MAP_FAILED && errno == EINVAL, "mmap beyond the session: EINVAL");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	tap_ok(p == MAP_FAILED && errno == EINVAL, "mmap at an offset: EINVAL");
	/* a consumer scribbling over the geometry must not hurt the kernel */
	p = mmap(NULL, c.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tap_ok(p != MAP_FAILED, "mmap the session")) {
		struct mt_session *s = p;
		struct mt_ring *r = mt_session_ring(s, 0);
		r->subbuf_size = 1u << 31;
		r->data_offset = 1ull << 40;
		s->rings_offset = 1ull << 40;
		memset(s->patterns, 'x', sizeof(s->patterns));
		tap_ok(ioctl(fd, MT_IOC_START) == 0, "start with unterminated patterns: none armed");
		tap_ok(ioctl(fd, MT_IOC_STOP) == 0, "stop");
		s->patterns[0] = '\0';
		tap_ok(ioctl(fd, MT_IOC_START) > 0, "start every marker with scribbled geometry");
		usleep(100000);
		tap_ok(ioctl(fd, MT_IOC_STOP) == 0, "stop");
		munmap(p, c.total_bytes);
	}
	tap_ok(ioctl(fd, MT_IOC_STOP) == 0, "stop twice");
	close(fd);
	return tap_done();
}

/* A vsock stream to this machine's PORT: no listener there, so the
 * loopback transport sends a request and answers it with a reset */
static int vsock_connect(unsigned port)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_LOCAL, .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);
	int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&a, sizeof(a));

	printf("%s\n", rc == 0 ? "connected" : strerrorname_np(errno));
	if (fd >= 0)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "list"))
		return cmd_list();
	if (argc >= 2 && !strcmp(argv[1], "test"))
		return cmd_test();
	if (argc >= 4 && !strcmp(argv[1], "access"))
		return cmd_access(atoi(argv[2]), atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : -1);
	if (argc >= 3 && !strcmp(argv[1], "procfs"))
		return cmd_procfs(argv + 2);
	if (argc >= 5 && !strcmp(argv[1], "as"))
		return cmd_as(atoi(argv[2]), atoi(argv[3]), argv + 4);
	if (argc >= 6 && !strcmp(argv[1], "userns"))
		return cmd_userns(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc >= 2 && !strcmp(argv[1], "abuse"))
		return cmd_abuse();
	if (argc >= 3 && !strcmp(argv[1], "hold"))
		return cmd_hold(atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "abi"))
		return abi();
	if (argc >= 3 && !strcmp(argv[1], "migrate"))
		return migrate(atol(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "vsock"))
		return vsock_connect((unsigned)atol(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "nap")) {   /* N sleeps of 100 ms */
		for (long i = atol(argv[2]); i > 0; i--)
			nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "gate")) {   /* FILE N: FILE.ready, wait for FILE, spin N */
		char ready[4096];
		int fd, i;

		snprintf(ready, sizeof(ready), "%s.ready.%d", argv[2], (int)getpid());
		if ((fd = open(ready, O_CREAT | O_WRONLY, 0644)) >= 0)
			close(fd);
		for (i = 0; i < 6000 && access(argv[2], F_OK); i++)
			nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
		printf("%.1f\n", spin(atol(argv[3])));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "spin")) {
		printf("%.1f\n", spin(atol(argv[2])));
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "record-creds")) {
		rec_flags = MT_CONFIG_CREDS;
		argv[1] = "record";
	}
	if (argc >= 4 && !strcmp(argv[1], "record")) {
		double ns;
		if (rec_start(argv[2], 1 << 20, 8, 0) < 0)
			return 1;
		ns = spin(atol(argv[3]));
		rec_stop();
		printf("%.1f %llu\n", ns, (unsigned long long)rec.bytes);
		mt_kernel_close(&rec.k);
		return 0;
	}
	fprintf(stderr, "usage: kreader list | test | access UID GID [GID] | userns UID GID NSUID NSGID |"
			" as UID GID CMD... |"
			" abuse | hold SECONDS |"
			" spin N | record[-creds] PATTERN N | vsock PORT\n");
	return 2;
}
