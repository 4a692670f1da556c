/*
 * cmd_record.c - marktrace record: the consumer of a recording session.
 *
 *   marktrace record [-o DIR] [-e PATTERN]... [--overwrite] [--subbuf-size N]
 *                    [--num-subbuf N] [--mode MODE] [-q] (-- CMD [ARGS] | -p PID)
 *
 * We create the session (a memfd laid out as struct mt_session: the steps
 * are recorder.c's), start the command with MARKTAP_SHM_FD naming it (or hand it to a running process's
 * agent), then move every complete sub-buffer into the CPU's stream file
 * until the command exits or we are told to stop.  Stopping closes the
 * open sub-buffers and drains them, so the trace ends with every committed
 * event.  The traced program can write the whole session: the rings are
 * read through consumer.c, which trusts none of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "marktrace.h"
#include "mt_ctf.h"
#include "mt_event.h"
#include "mt_session.h"
#include "record.h"
#include "relay.h"
#include "relay_net.h"
#include "uclock.h"

/* --relay URL and --live (the connection: recorder.c) */
static const char *relay_url;
static int relay_live;

static void on_child(int sig)
{
	(void)sig;  /* only wakes the sleep; waitpid tells the rest */
}

static int parse_size(const char *s, u32 *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	if (*end == 'k' || *end == 'K') { v <<= 10; end++; }
	else if (*end == 'm' || *end == 'M') { v <<= 20; end++; }
	else if (*end == 'g' || *end == 'G') { v <<= 30; end++; }
	if (*end || v == 0 || v > (1ull << 30))
		return -1;
	*out = (u32)v;
	return 0;
}

static int usage(FILE *out)
{
	fprintf(out,
		"usage: marktrace record [OPTIONS] -- CMD [ARGS]\n"
		"       marktrace record [OPTIONS] -p PID\n"
		"       marktrace record --kernel [OPTIONS] [-- CMD [ARGS]]\n\n"
		"  -o, --output DIR      trace directory (default ./marktap-YYYYMMDD-HHMMSS)\n"
		"  -e, --event PATTERN   record markers matching the glob (repeatable; !GLOB excludes)\n"
		"  -p, --pid PID         record a running process linked with libmarktap\n"
		"  -k, --kernel          record the kernel markers of marktap.ko; with\n"
		"                        -e SUBSYS:NAME, kernel tracepoints (perf)\n"
		"      --function NAME   with --kernel: the kernel function's entry, with its\n"
		"                        parameters (BTF), as NAME_entry, and its return as\n"
		"                        NAME_return (ret); NAME%%entry or NAME%%return: one\n"
		"                        of them; globs (vfs_*); repeatable\n"
		"      --context LIST    add context fields to every event, as lttng\n"
		"                        add-context -t (repeatable, comma separated):\n"
		"                        vpid, vtid, procname, ip, pthread_id, vppid,\n"
		"                        vuid, vgid\n"
		"      --overwrite       flight recorder: keep the newest events\n"
		"      --subbuf-size N   sub-buffer size, power of two, k/M suffix (default 1M)\n"
		"      --num-subbuf N    sub-buffers per CPU, power of two (default 4); they\n"
		"                        are copied when a quarter of them wait (at least one)\n"
		"      --switch-timer MS close the open sub-buffers every MS ms, so slow\n"
		"                        streams reach the trace (default 1000; 0: never)\n"
		"      --nice N          marktrace's niceness while it records (default -10\n"
		"                        where allowed); the command runs at the niceness\n"
		"                        marktrace was started with\n"
		"      --sync MODE       how the program's threads share a CPU's buffer:\n"
		"                        percpu (restartable sequences, no locked\n"
		"                        instructions; the default where the kernel has\n"
		"                        them and marktrace may run on every CPU) or locked\n"
		"      --mode MODE       permissions of the trace files, octal (default 0600;\n"
		"                        directories get x where MODE has r: 0700)\n"
		"      --relay net://HOST[:CTRL[:DATA]]\n"
		"                        send the trace to lttng-relayd as it is recorded\n"
		"                        (ports 5342 and 5343 by default); with -o, to DIR too\n"
		"      --live            with --relay: a live session, which lttng-live readers\n"
		"                        follow (at the switch timer's period)\n"
		"  -q, --quiet           no status line, no summary\n");
	return out == stdout ? 0 : 2;
}

static int is_pow2(u32 v) { return v && !(v & (v - 1)); }

static int parse_options(int argc, char **argv, struct mt_record_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "event", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "kernel", no_argument, NULL, 'k' },
		{ "function", required_argument, NULL, 'F' },
		{ "context", required_argument, NULL, 'C' },
		{ "overwrite", no_argument, NULL, 'O' },
		{ "subbuf-size", required_argument, NULL, 'S' },
		{ "num-subbuf", required_argument, NULL, 'N' },
		{ "switch-timer", required_argument, NULL, 'W' },
		{ "mode", required_argument, NULL, 'M' },
		{ "nice", required_argument, NULL, 'n' },
		{ "sync", required_argument, NULL, 'Y' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "relay", required_argument, NULL, 'R' },
		{ "live", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;
	size_t plen = 0, flen = 0;

	memset(o, 0, sizeof(*o));
	o->nice = MT_RECORD_NICE;
	o->sync = -1;
	o->subbuf_size = 1u << 20;
	o->num_subbuf = 4;
	o->switch_ms = 1000;
	o->mode = 0600;
	relay_url = NULL;
	relay_live = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:e:p:kqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				mt_error("record: -o '': expected a directory name");
				return -1;
			}
			o->output = optarg;
			break;
		case 'e': {
			size_t n = strlen(optarg);
			if (!n || plen + n + 2 > MT_PATTERNS_MAX) {
				mt_error("record: -e '%s': %s", optarg,
					 n ? "too many patterns" : "empty pattern");
				return -1;
			}
			memcpy(o->patterns + plen, optarg, n);
			plen += n;
			o->patterns[plen++] = '\n';
			break;
		}
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0) {
				mt_error("record: -p '%s': expected a process id", optarg);
				return -1;
			}
			o->pid = (pid_t)v;
			break;
		}
		case 'k': o->kernel = 1; break;
		case 'F': {
			size_t n = strlen(optarg);
			if (!n || flen + n + 2 > MT_PATTERNS_MAX || strchr(optarg, '\n')) {
				mt_error("record: --function '%s': %s", optarg,
					 !n ? "empty name" : strchr(optarg, '\n') ? "a newline in it"
					 : "too many patterns");
				return -1;
			}
			memcpy(o->functions + flen, optarg, n);
			flen += n;
			o->functions[flen++] = '\n';
			break;
		}
		case 'C': {
			char err[256];
			if (mt_ctf_context_parse(optarg, &o->context, err, sizeof(err)) < 0) {
				mt_error("record: --context '%s': %s", optarg, err);
				return -1;
			}
			break;
		}
		case 'O': o->overwrite = 1; break;
		case 'S':
			if (parse_size(optarg, &o->subbuf_size) || !is_pow2(o->subbuf_size) ||
			    o->subbuf_size < 4096) {
				mt_error("record: --subbuf-size '%s': expected a power of two >= 4k", optarg);
				return -1;
			}
			break;
		case 'N':
			if (parse_size(optarg, &o->num_subbuf) || !is_pow2(o->num_subbuf) ||
			    o->num_subbuf < 2) {
				mt_error("record: --num-subbuf '%s': expected a power of two >= 2", optarg);
				return -1;
			}
			break;
		case 'W': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 3600000) {
				mt_error("record: --switch-timer '%s': expected milliseconds (0 to 3600000)",
					 optarg);
				return -1;
			}
			o->switch_ms = (u32)v;
			break;
		}
		case 'M': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 8);
			/* the owner must keep reading and writing what it records */
			if (*end || end == optarg || (v & ~0666ul) || (v & 0600) != 0600) {
				mt_error("record: --mode '%s': expected an octal file mode from 0600 "
					 "to 0666 (r and w for the owner, r or w for others)", optarg);
				return -1;
			}
			o->mode = (unsigned)v;
			break;
		}
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < -20 || v > 19) {
				mt_error("record: --nice '%s': expected a niceness from -20 to 19", optarg);
				return -1;
			}
			o->nice = (int)v;
			o->nice_given = 1;
			break;
		}
		case 'Y':
			if (!strcmp(optarg, "percpu"))
				o->sync = MT_SYNC_PERCPU;
			else if (!strcmp(optarg, "locked"))
				o->sync = MT_SYNC_LOCKED;
			else {
				mt_error("record: --sync '%s': expected percpu or locked", optarg);
				return -1;
			}
			break;
		case 'q': o->quiet = 1; break;
		case 'R': relay_url = optarg; break;
		case 'L': relay_live = 1; break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	o->command = argv + optind;
	if (relay_live && (!relay_url || !o->switch_ms || o->overwrite)) {
		/* live readers see closed packets: the switch timer closes them */
		mt_error("record: --live needs --relay, a switch timer (not 0) and discard mode");
		return -1;
	}
	if (*o->functions && !o->kernel) {
		mt_error("record: --function records kernel functions: give --kernel too");
		return -1;
	}
	if (!o->pid && !o->kernel && !*o->command) {
		mt_error("record: nothing to record: give -- CMD [ARGS], -p PID or --kernel");
		return -1;
	}
	if (o->kernel && o->context) {
		/* marktap.ko's events have one layout, with pid, tid and
		 * procname in every event already (mt_event.h) */
		mt_error("record: --context is for user-space recordings: kernel events carry "
			 "pid, tid and procname in every event already");
		return -1;
	}
	if (o->pid && *o->command) {
		mt_error("record: -p PID and a command exclude each other");
		return -1;
	}
	return 0;
}

static void default_output(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, len, "marktap-%Y%m%d-%H%M%S", &tm);
}

/* Start the recording: the trace, then the command or the process.  For
 * -p the process is asked first, so that a refusal leaves no trace. */
static int record_start(struct mt_record_opts *o, const char *dir, int fd,
			struct mt_session *s, struct mt_ctf_trace *t, pid_t *child)
{
	struct mt_ctf_clock clock;
	char err[512];
	int opened;

	if (o->pid && mt_agent_attach(o->pid, fd, err, sizeof(err)) < 0) {
		mt_error("record: -p %d: %s", (int)o->pid, err);
		return -1;
	}
	mt_ctf_clock_now(&clock);
	snprintf(clock.source, sizeof(clock.source), "%s", mt_uclock_describe());
	snprintf(clock.buffers, sizeof(clock.buffers), "%s", mt_record_sync_describe(s));
	opened = mt_ctf_open(t, dir, s->ncpu, "ust", &clock, err, sizeof(err));
	t->context = o->context;   /* ours: what the program may write to s->context is not read */
	if (opened == 0)
		mt_ctf_update_classes(t, s);   /* the thread event's class, at least */
	if (opened < 0 ||
	    mt_record_relay_attach(t, NULL, s->ncpu, 1, err, sizeof(err)) < 0 ||
	    mt_ctf_write_metadata(t, err, sizeof(err)) < 0) {
		mt_error("record: %s", err);
		mt_ctf_remove(t);
		mt_ctf_close(t);
		if (o->pid)
			mt_agent_detach(o->pid);
		return -1;
	}
	if (!o->pid && (*child = mt_record_spawn(o->command, fd)) < 0) {
		mt_ctf_remove(t);
		mt_ctf_close(t);
		return -1;
	}
	return 0;
}

/* How marktrace exits: its own failure first (1), then as the command did
 * (its status, 128 + N when killed by signal N, like a shell). */
static int exit_status(int error, pid_t child, int waited, int status)
{
	if (error)
		return 1;
	if (child > 0 && waited && WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	if (child > 0 && waited && WIFEXITED(status))
		return WEXITSTATUS(status);
	return 0;
}

/*
 * What the recording took, said when it took nothing: a recording of a
 * program that never joined, or of patterns that match none of its
 * markers, looks the same as one of a program that fired nothing.  The
 * patterns that took nothing are named (mt_record_say_patterns).  -1
 * when nothing at all could be recorded: no process joined, or no marker
 * was armed.
 */
static int report_taken(const struct mt_session *s, const struct mt_ctf_trace *t,
			const struct mt_record_opts *o)
{
	char who[4200];
	unsigned i, markers = 0;

	mt_record_who(o, who, sizeof(who));
	if (!mt_load_relaxed(&s->processes)) {   /* the program's to write: a hint */
		mt_error("record: nothing recorded: no process joined the recording: %s "
			 "(and what it ran) is not linked with libmarktap, or refused the "
			 "session (its message says why)", who);
		return -1;
	}
	for (i = 0; i < t->nclasses; i++)
		markers += mt_record_is_marker_class(t->classes[i]);
	mt_record_say_patterns(o, s, t, 0, 0);
	if (!markers) {
		mt_error("record: nothing recorded: %s joined the recording, but %s", who,
			 *o->patterns ? "the -e patterns take none of its markers"
				      : "has no marker (none of its objects uses trace_mark)");
		return -1;
	}
	return 0;
}

static int record_user(struct mt_record_opts *o, const char *dir)
{
	struct mt_session *s;
	struct mt_consumer *c;
	struct mt_ctf_trace trace;
	size_t len;
	int fd, error = 0, status = 0, waited = 0, tty;
	pid_t child = 0;
	double start, last_status, last_time, last_switch;
	mt_u64 last_events = 0, beacon = 0;
	char where[4200];

	fd = mt_record_create_session(o, &s, &len);
	if (fd < 0)
		return 1;
	c = mt_record_consumer(s);
	/* the geometry is ours from here on: the program can write s */
	if (record_start(o, dir, fd, s, &trace, &child) < 0)
		return 1;
	trace.uncounted = o->quiet;   /* nobody shows the count */
	tty = !o->quiet && isatty(2);
	start = last_status = last_time = last_switch = mt_record_now();
	/* the switch timer's period; without it, the rings are drained as often */
	double period = (o->switch_ms ? o->switch_ms : 1000) / 1000.0;
	for (;;) {
		int moved = 0, drain = mt_record_at_mark(c), show;
		if (mt_record_stopped() || c->error[0])
			break;
		if (child > 0) {
			pid_t w = waitpid(child, &status, WNOHANG);
			if (w == child) {
				waited = 1;
				break;
			}
		} else if (o->pid && mt_agent_gone(o->pid)) {
			break;
		}
		mt_uclock_steer(s);
		/* the switch timer (discard mode: in overwrite mode a closed
		 * packet would push out older data for nothing) */
		if (mt_record_now() - last_switch > period) {
			/* live: nothing older than a period is still to come
			 * from a stream that sends nothing now */
			beacon = mt_clock_ns() - (mt_u64)(period * 1e9);
			if (o->switch_ms && !o->overwrite)
				mt_record_switch(s);
			last_switch = mt_record_now();
			drain = 1;
		}
		show = tty && mt_record_now() - last_status > 0.5;
		if (drain || show)   /* the count shown is of the events copied */
			moved = mt_record_consume(s, &trace, &error);
		if (beacon) {
			mt_record_relay_tick(beacon);
			beacon = 0;
		}
		if (show) {
			mt_record_status(s, &trace, start, &last_events, &last_time);
			last_status = mt_record_now();
		}
		if (!moved && !c->error[0]) {
			double until = mt_record_now() + 0.2;   /* the waitpid above, at worst */
			if (last_switch + period < until)
				until = last_switch + period;
			if (tty && last_status + 0.5 < until)
				until = last_status + 0.5;
			mt_record_sleep(c, until - mt_record_now());
		}
	}
	if (o->pid)
		mt_agent_detach(o->pid);
	mt_record_finish(s, &trace, o->quiet, &error);
	if (tty)
		fputc('\n', stderr);
	if (!error && report_taken(s, &trace, o) < 0)
		error = 1;   /* nothing could be recorded: not a success */
	snprintf(where, sizeof(where), "%s%s%s%s", dir ? dir : "",
		 dir && *mt_record_relay_path() ? " and " : "",
		 *mt_record_relay_path() ? "relayd's " : "", mt_record_relay_path());
	mt_record_relay_finish(dir, &error);
	if (!o->quiet) {
		fprintf(stderr, "marktrace: %llu events recorded, %llu lost, in %s\n",
			(unsigned long long)trace.events, (unsigned long long)mt_record_lost(s, &trace),
			where);
		if (trace.disk_lost)
			fprintf(stderr, "marktrace: of which %llu could not be written to %s\n",
				(unsigned long long)trace.disk_lost, dir);
		if (waited && WIFSIGNALED(status))
			fprintf(stderr, "marktrace: %s was killed by signal %d\n",
				o->command[0], WTERMSIG(status));
		else if (waited && WIFEXITED(status) && WEXITSTATUS(status))
			fprintf(stderr, "marktrace: %s exited with status %d\n",
				o->command[0], WEXITSTATUS(status));
	}
	mt_ctf_close(&trace);
	mt_record_release(s);
	munmap(s, len);
	close(fd);
	return exit_status(error, child, waited, status);
}

/* relayd's session: the trace directory's last name, or "marktap". */
static void relay_session_name(const char *dir, char *name, size_t len)
{
	size_t n = strlen(dir);
	const char *base;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	for (base = dir + n; base > dir && base[-1] != '/'; base--)
		;
	snprintf(name, len, "%.*s", (int)(dir + n - base), base);
}

int mt_cmd_record(int argc, char **argv)
{
	struct mt_record_opts o;
	struct sigaction sa;
	char dirbuf[64];
	int rc = parse_options(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (!o.output)
		default_output(dirbuf, sizeof(dirbuf));
	if (relay_url) {
		/* before anything is armed: no relayd, no recording */
		char err[512], name[256];
		/* relayd dates the directory: the session is the name alone */
		relay_session_name(o.output ? o.output : "marktap", name, sizeof(name));
		if (mt_record_relay_connect(relay_url, name, relay_live ? o.switch_ms * 1000u : 0,
					    err, sizeof(err)) < 0) {
			mt_error("record: %s", err);
			return 1;
		}
	} else if (!o.output) {
		o.output = dirbuf;
	}
	mt_ctf_set_mode(o.mode);
	memset(&sa, 0, sizeof(sa));
	mt_record_signals();
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	mt_record_priority(&o);
	if (o.kernel)
		return mt_record_kernel(&o, o.output);
	return record_user(&o, o.output);
}
