/*
 * main.c - the marktap command: stap's command line over the passes.
 *
 *   marktap [OPTIONS] FILE|-|-e SCRIPT [ARGS...]
 *
 * Exit codes as stap's: 0 on success, 1 when a pass fails, a handler error
 * ends the session, or the command line is wrong.
 */
#define _GNU_SOURCE
#include "tr_elab.h"
#include "tr_gen.h"
#include "tr_run.h"
#include "analysis_opts.h"
#include "mt_lua.h"
#include <ctype.h>

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef MT_PKGDATADIR
#define MT_PKGDATADIR "/usr/local/share/marktap"
#endif

static void usage(FILE *out)
{
	fputs("Usage: marktap [OPTIONS] FILE [ARGS...]       run a script file\n"
	      "   or: marktap [OPTIONS] -                    script on standard input\n"
	      "   or: marktap [OPTIONS] -e SCRIPT [ARGS...]  script on the command line\n"
	      "   or: marktap [OPTIONS] --script NAME [ARGS...]  run the analysis NAME\n"
	      "   or: marktap --list-scripts                 list the analyses\n"
	      "   or: marktap -A PID                         attach to a -F session's output\n"
	      "   or: marktap [OPTIONS] -l|-L PROBE          list matching probe points\n"
	      "   or: marktap --dump-functions|--dump-probe-types|--dump-probe-aliases\n"
	      "Options (anywhere on the line, as stap's):\n"
	      "   --         end of options; the script's arguments follow\n"
	      "   -p NUM     stop after pass NUM: 1 parse, 2 elaborate, 3 translate to\n"
	      "              Lua, 4 write the module, 5 run (default)\n"
	      "   -v         more verbose (repeat for more): stap's Pass lines; per\n"
	      "              traced process, how many handler runs were native and how\n"
	      "              many ran in Lua; where kernel.mark handlers ran\n"
	      "   -e SCRIPT  the script text\n"
	      "   -E SCRIPT  more script, beside the main one\n"
	      "   -c CMD     run CMD under the session; end when it exits (with\n"
	      "              libmarktap preloaded when the script probes <sys/sdt.h>\n"
	      "              probes of other programs)\n"
	      "   -x PID     the target process (target() in scripts)\n"
	      "   -o FILE    handler output to FILE instead of standard output\n"
	      "   -S SIZE[,N]  with -o: FILE.0, FILE.1..., the next past SIZE MB or at\n"
	      "              switch_file(), the last N kept\n"
	      "   --trace DIR  run over the stored trace DIR (ours or LTTng's):\n"
	      "              marker probes on its events, timers on its time\n"
	      "   --trace net://HOST[:PORT]/host/H/SESSION  follow a live session of\n"
	      "              lttng-relayd as it is recorded\n"
	      "   --begin T, --end T  with --trace, the handlers see the events from T\n"
	      "              to T only: +SECONDS from the first event, HH:MM:SS[.F]\n"
	      "              (local time), YYYY-MM-DD HH:MM:SS[.F] or ns since the epoch\n"
	      "   --tid N[,M...]  with --trace, the events of these threads only\n"
	      "   --min US, --max US  an analysis keeps the durations within these\n"
	      "              (microseconds)\n"
	      "   --freq-resolution N  buckets of a frequency analysis' histograms\n"
	      "   --period-begin EVENT, --period-end EVENT, --period-key FIELD\n"
	      "              the periods of the period analyses (periodstats...)\n"
	      "   --mi, --json  an analysis writes one JSON document\n"
	      "   --script NAME  run the analysis NAME (cputop, syscallstats...: see\n"
	      "              --list-scripts), live or with --trace DIR\n"
	      "   --list-scripts  the analyses installed, one line each\n"
	      "   -I DIR     look for tapsets in DIR too\n"
	      "   -D NAME[=VAL]  a macro; marktap's limits: MAXACTION MAXMAPENTRIES\n"
	      "              MAXSTRINGLEN MAXNESTING MAXERRORS MAXSKIPPED MAXTRYLOCK\n"
	      "              MAXACTION_INTERRUPTIBLE STP_NO_OVERLOAD\n"
	      "              STP_OVERLOAD_THRESHOLD STP_OVERLOAD_INTERVAL HIST_ELISION\n"
	      "              MAXARENAKB (the kernel states' memory)\n"
	      "   -G VAR=VAL set a global variable of the script\n"
	      "   -g         guru mode: allow raw Lua %{ %} code, writes to $variables\n"
	      "   -k         keep the module file in a temporary directory (named)\n"
	      "   -m NAME    name of the module; -p4 then writes NAME.mtm here\n"
	      "   -T SECS    end the session after SECS seconds\n"
	      "   -t         probe timing: each probe's hits and cycles, after end\n"
	      "   -F         flight recorder: run in the background (its pid printed),\n"
	      "              into -o FILE, or without -o keeping the last -s MB of\n"
	      "              output in memory for marktap -A\n"
	      "   -A PID     attach to the -F session PID: what it kept, then its\n"
	      "              output as it comes (^C detaches; kill PID ends it)\n"
	      "   -w         no warnings\n"
	      "   -W         warnings are errors\n"
	      "   -u         unoptimized: keep unused functions and globals, and\n"
	      "              probes whose handler does nothing\n"
	      "   -r KVER    the kernel the script is for (kernel_vr, kernel.trace's\n"
	      "              headers): the running one by default\n"
	      "   -l PROBE   list the probe points that match PROBE\n"
	      "   -L PROBE   same, with their context variables and types\n"
	      "   --compatible=VER  systemtap_v for the script's %( %) conditions\n"
	      "   --suppress-time-limits  no MAXACTION or overload limit (root)\n"
	      "   --skip-badvars  an unresolved $variable is 0, with a warning\n"
	      "   --rlimit-{as,cpu,fsize,nproc,stack}=N  this process's limit\n"
	      "   --privilege=stapusr|stapsys|stapdev, --unprivileged (no -g)\n"
	      "   -s MB      each CPU's buffer of kernel handler output (1, 2 or 4 MB);\n"
	      "              with -F and no -o, the output kept in memory\n"
	      "   -b, -d OBJ, --ldd, --all-modules, -P,\n"
	      "   --prologue-searching[=WHEN]  accepted for stap's command lines: no\n"
	      "              effect here (marktap(1), OPTIONS)\n"
	      "   -V         version\n"
	      "   -h, --help this text\n"
	      "kernel.mark probes need marktap.ko: a module built with Lua runs their\n"
	      "   handlers itself, else marktap runs them on the events it records\n"
	      "   (marktap(1), WHERE HANDLERS RUN)\n"
	      "Environment: MARKTAP_NATIVE=0 runs every marker handler in Lua;\n"
	      "   MARKTAP_SCRIPT_LIB, MARKTAP_TAPSET_DIR, MARKTAP_MARKERS,\n"
	      "   MARKTAP_SCRIPT_DIR, MARKTAP_BTF, MARKTAP_MODULE_PATH,\n"
	      "   MARKTAP_KERNEL_SOURCES (marktap-ksrc's map: FUNCTION@FILE) (marktap(1))\n", out);
}

static int bad_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "marktap: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fputs("Try 'marktap --help' for more information.\n", stderr);
	return 1;
}

static void report_pass_failure(int pass)
{
	if (tr_diag.duplicates) {
		fprintf(stderr, "Number of similar error messages suppressed: %u.\n", tr_diag.duplicates);
		fputs("Rerun with -v to see them.\n", stderr);
	}
	if (pass == 1)
		fputs("Pass 1: parse failed.  [man error::pass1]\n", stderr);
	else if (pass == 2)
		fputs("Pass 2: analysis failed.  [man error::pass2]\n", stderr);
	else if (pass == 3)
		fputs("Pass 3: translation failed.  [man error::pass3]\n", stderr);
	else if (pass == 4)
		fputs("Pass 4: compilation failed.  [man error::pass4]\n", stderr);
}

static int errors_summary(int pass, const char *what)
{
	unsigned n = tr_diag.errors;

	if (n == 0)
		return 0;
	if (pass == 1)
		fprintf(stderr, "%u %s%s.\n", n, what, n == 1 ? "" : "s");
	report_pass_failure(pass);
	return 1;
}


/* ---- -v: stap's "Pass N:" lines ---------------------------------------- */

struct pass_clock {
	struct timespec real;
	struct rusage ru;
};

static void pass_start(struct pass_clock *c)
{
	clock_gettime(CLOCK_MONOTONIC, &c->real);
	getrusage(RUSAGE_SELF, &c->ru);
}

static long ms_between(const struct timeval *a, const struct timeval *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_usec - a->tv_usec) / 1000;
}

/* " using Nvirt/Nres kb, in Uusr/Ssys/Rreal ms." as stap ends its lines */
static void pass_end(const struct tr_session *s, const struct pass_clock *c, const char *fmt, ...)
{
	struct pass_clock now;
	long vm = 0, rss = 0;
	va_list ap;
	FILE *st;

	if (!s->verbose)
		return;
	pass_start(&now);
	st = fopen("/proc/self/statm", "r");
	if (st) {
		if (fscanf(st, "%ld %ld", &vm, &rss) != 2)
			vm = rss = 0;
		fclose(st);
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " using %ldvirt/%ldres kb, in %ldusr/%ldsys/%ldreal ms.\n",
		vm * (sysconf(_SC_PAGESIZE) / 1024), rss * (sysconf(_SC_PAGESIZE) / 1024),
		ms_between(&c->ru.ru_utime, &now.ru.ru_utime), ms_between(&c->ru.ru_stime, &now.ru.ru_stime),
		(long)((now.real.tv_sec - c->real.tv_sec) * 1000 + (now.real.tv_nsec - c->real.tv_nsec) / 1000000));
}

/* ---- the command line ---------------------------------------------------- */

enum {
	OPT_TRACE = 256, OPT_LDD, OPT_ALL_MODULES, OPT_SUPPRESS_TIME_LIMITS, OPT_DUMP_FUNCTIONS,
	OPT_DUMP_PROBE_TYPES, OPT_DUMP_PROBE_ALIASES, OPT_PRIVILEGE, OPT_UNPRIVILEGED, OPT_COMPATIBLE,
	OPT_PROLOGUE, OPT_RLIMIT, OPT_REFUSED, OPT_SKIP_BADVARS, OPT_SCRIPT, OPT_LIST_SCRIPTS,
	OPT_BEGIN, OPT_END, OPT_TID, OPT_ANALYSIS,
};

struct cmdline {
	const char *script_path;        /* FILE or "-" */
	const char *script_text;        /* -e */
	struct tr_vec extra_scripts;    /* -E SCRIPT, each */
	bool keep;                      /* -k */
	int dump;                       /* OPT_DUMP_*, or 0 */
	const char *privilege;          /* --privilege */
	const char *analysis;           /* --script NAME */
	bool list_scripts;              /* --list-scripts */
	const char *attach;             /* -A PID */
	struct tr_analysis_opts analysis_opts;  /* --min, --mi...: analysis_opts.c */
};

/* stap's --rlimit-NAME=N: this process's limit (and so its command's) */
static const struct {
	const char *name;
	int resource;
} rlimits[] = {
	{ "rlimit-as", RLIMIT_AS }, { "rlimit-cpu", RLIMIT_CPU }, { "rlimit-fsize", RLIMIT_FSIZE },
	{ "rlimit-nproc", RLIMIT_NPROC }, { "rlimit-stack", RLIMIT_STACK },
};

static int set_rlimit(const char *name, const char *value)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (!*value || *end || errno || *value == '-')
		return bad_usage(tr_printf("invalid --%s value (should be a number)", name), value);
	for (unsigned i = 0; i < sizeof(rlimits) / sizeof(rlimits[0]); i++)
		if (!strcmp(rlimits[i].name, name)) {
			struct rlimit rl;
			/* the soft limit, within the hard one this process has */
			getrlimit(rlimits[i].resource, &rl);
			rl.rlim_cur = (rlim_t)v < rl.rlim_max ? (rlim_t)v : rl.rlim_max;
			if (setrlimit(rlimits[i].resource, &rl) < 0)
				return bad_usage(tr_printf("cannot set --%s: %s", name, strerror(errno)), value);
		}
	return 0;
}

/* stap passes every -D NAME[=VALUE] on to the module's compiler; marktap
 * honours the limits it knows (marktap(1), LIMITS) and keeps the rest
 * for the script's %( ... %) and -v's word on them */
static const char *const kernel_defines[] = {   /* beside mt_lua_limit_names */
	"MAXACTION_INTERRUPTIBLE", "MAXACTION_US", "MAXTRYLOCK", "STP_NO_OVERLOAD",
	"STP_OVERLOAD_THRESHOLD", "STP_OVERLOAD_INTERVAL", "MAXARENAKB", NULL,
};

static bool known_define(const char *d, size_t n)
{
	for (unsigned i = 0; mt_lua_limit_names[i]; i++)
		if (strlen(mt_lua_limit_names[i]) == n && !strncmp(d, mt_lua_limit_names[i], n))
			return true;
	for (unsigned i = 0; kernel_defines[i]; i++)
		if (strlen(kernel_defines[i]) == n && !strncmp(d, kernel_defines[i], n))
			return true;
	return false;
}

static int add_define(struct tr_session *s, const char *d)
{
	size_t n = strcspn(d, "=");

	if (!n || !(isalpha((unsigned char)d[0]) || d[0] == '_'))
		return bad_usage("-D needs NAME or NAME=VALUE", d);
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)d[i]) || d[i] == '_'))
			return bad_usage("-D needs NAME or NAME=VALUE", d);
	if (!known_define(d, n) && s->verbose)
		fprintf(stderr, "marktap: -D %.*s means nothing to marktap; kept for the script\n", (int)n, d);
	tr_vec_push(&s->defines, (void *)d);
	return 0;
}

/* Options stap has that make no sense here: refused with the reason. */
static int refuse(const char *opt, const char *why)
{
	fprintf(stderr, "marktap: %s is not supported: %s\n", opt, why);
	return 1;
}

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "script", required_argument, NULL, OPT_SCRIPT },
	{ "list-scripts", no_argument, NULL, OPT_LIST_SCRIPTS },
	{ "begin", required_argument, NULL, OPT_BEGIN },
	{ "end", required_argument, NULL, OPT_END },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "min", required_argument, NULL, OPT_ANALYSIS },
	{ "max", required_argument, NULL, OPT_ANALYSIS },
	{ "freq-resolution", required_argument, NULL, OPT_ANALYSIS },
	{ "period-begin", required_argument, NULL, OPT_ANALYSIS },
	{ "period-end", required_argument, NULL, OPT_ANALYSIS },
	{ "period-key", required_argument, NULL, OPT_ANALYSIS },
	{ "mi", no_argument, NULL, OPT_ANALYSIS },
	{ "json", no_argument, NULL, OPT_ANALYSIS },
	{ "ldd", no_argument, NULL, OPT_LDD },
	{ "all-modules", no_argument, NULL, OPT_ALL_MODULES },
	{ "suppress-time-limits", no_argument, NULL, OPT_SUPPRESS_TIME_LIMITS },
	{ "dump-functions", no_argument, NULL, OPT_DUMP_FUNCTIONS },
	{ "dump-probe-types", no_argument, NULL, OPT_DUMP_PROBE_TYPES },
	{ "dump-probe-aliases", no_argument, NULL, OPT_DUMP_PROBE_ALIASES },
	{ "privilege", required_argument, NULL, OPT_PRIVILEGE },
	{ "unprivileged", no_argument, NULL, OPT_UNPRIVILEGED },
	{ "compatible", required_argument, NULL, OPT_COMPATIBLE },
	{ "prologue-searching", optional_argument, NULL, OPT_PROLOGUE },
	{ "rlimit-as", required_argument, NULL, OPT_RLIMIT },
	{ "rlimit-cpu", required_argument, NULL, OPT_RLIMIT },
	{ "rlimit-fsize", required_argument, NULL, OPT_RLIMIT },
	{ "rlimit-nproc", required_argument, NULL, OPT_RLIMIT },
	{ "rlimit-stack", required_argument, NULL, OPT_RLIMIT },
	{ "monitor", optional_argument, NULL, OPT_REFUSED },
	{ "interactive", no_argument, NULL, 'i' },
	{ "skip-badvars", no_argument, NULL, OPT_SKIP_BADVARS },
	{ NULL, 0, NULL, 0 },
};

/* The long options stap accepts and marktap refuses, with the reason. */
static int refuse_long(const char *name)
{
	(void)name;   /* monitor */
	return refuse("--monitor", "stap's interactive status window; marktap -v prints the counts at the end");
}

/* Options whose work is done here; 0, or the exit status. */
static int option(struct tr_session *s, struct cmdline *cl, int c, int idx)
{
	char *end;

	switch (c) {
	case 'p':
		s->last_pass = (int)strtol(optarg, &end, 10);
		if (*end || s->last_pass < 1 || s->last_pass > 5)
			return bad_usage("invalid pass number (should be 1-5)", optarg);
		return 0;
	case 'v':
		s->verbose++;
		tr_diag.verbose++;
		return 0;
	case 'e':
		cl->script_text = optarg;
		return 0;
	case 'E':
		tr_vec_push(&cl->extra_scripts, optarg);
		return 0;
	case 'c':
		s->target_cmd = optarg;
		return 0;
	case 'x':
		s->target_pid = strtol(optarg, &end, 10);
		if (*end || s->target_pid <= 0)
			return bad_usage("invalid target process ID", optarg);
		return 0;
	case 'o':
		s->output_file = optarg;
		return 0;
	case OPT_SCRIPT:
		cl->analysis = optarg;
		return 0;
	case OPT_LIST_SCRIPTS:
		cl->list_scripts = true;
		return 0;
	case OPT_BEGIN:
	case OPT_END:
	case OPT_TID: {
		char *err = NULL;
		if (c == OPT_TID ? tr_trace_tids_parse(optarg, &s->trace_tids, &err) :
		    tr_trace_time_parse(c == OPT_BEGIN ? "--begin" : "--end", optarg,
					c == OPT_BEGIN ? &s->trace_begin : &s->trace_end, &err))
			return bad_usage(err, NULL);
		return 0;
	}
	case OPT_ANALYSIS: {
		char *err = NULL;
		if (tr_analysis_option(&cl->analysis_opts, longopts[idx].name, optarg ? optarg : "", &err))
			return bad_usage(err, NULL);
		return 0;
	}
	case OPT_TRACE:
		s->trace_dir = optarg;
		return 0;
	case 'I':
		tr_vec_push(&s->include_dirs, optarg);
		return 0;
	case 'D':
		return add_define(s, optarg);
	case 'G':
		if (!strchr(optarg, '='))
			return bad_usage("-G needs VAR=VALUE", optarg);
		tr_vec_push(&s->globals_set, optarg);
		return 0;
	case 'g':
		s->guru = true;
		return 0;
	case 'k':
		cl->keep = true;
		return 0;
	case 'm':
		s->module_name = optarg;
		for (const char *q = optarg; *q; q++)
			if (!(isalnum((unsigned char)*q) || *q == '_'))
				return bad_usage("module name must be letters, digits and '_'", optarg);
		return 0;
	case 'T':
		s->timeout = strtod(optarg, &end);
		if (*end || s->timeout <= 0)
			return bad_usage("invalid timeout", optarg);
		return 0;
	case 'w':
		tr_diag.suppress_warnings = true;
		return 0;
	case 'W':
		tr_diag.warnings_are_errors = true;
		return 0;
	case 'u':
		s->unoptimized = true;
		return 0;
	case 'r':
		if (!*optarg || strchr(optarg, '/'))
			return bad_usage("invalid kernel release", optarg);
		s->kernel_vr = optarg;
		return 0;
	case 'l':
	case 'L':
		s->listing = optarg;
		s->listing_vars = c == 'L';
		return 0;
	case 's': {
		long mb = strtol(optarg, &end, 10);
		if (*end || mb < 1 || mb > 4095)
			return bad_usage("invalid buffer size (should be 1-4095)", optarg);
		s->buffer_mb = mb;   /* kernel handlers' output rings: up to 4 MB (marktap(1)) */
		return 0;
	}
	case 'b': case 'd': case 'P': case OPT_LDD: case OPT_ALL_MODULES: case OPT_PROLOGUE:
		if (c == OPT_PROLOGUE && optarg && strcmp(optarg, "always") && strcmp(optarg, "never") &&
		    strcmp(optarg, "auto"))
			return bad_usage("--prologue-searching takes always, never or auto", optarg);
		return 0;   /* nothing to do here: marktap(1), "Other stap options" */
	case 'q':
		fputs("WARNING: -q: marktap keeps no tapset coverage database\n", stderr);
		return 0;
	case OPT_SUPPRESS_TIME_LIMITS:
		tr_vec_push(&s->defines, "STP_NO_OVERLOAD");
		tr_vec_push(&s->defines, "MAXACTION=1000000000");
		tr_vec_push(&s->defines, "MAXACTION_US=1000000");   /* marktap.ko's ceiling (root) */
		return 0;
	case OPT_DUMP_FUNCTIONS: case OPT_DUMP_PROBE_TYPES: case OPT_DUMP_PROBE_ALIASES:
		cl->dump = c;
		return 0;
	case OPT_UNPRIVILEGED:
		cl->privilege = "stapusr";
		return 0;
	case OPT_PRIVILEGE:
		if (strcmp(optarg, "stapusr") && strcmp(optarg, "stapsys") && strcmp(optarg, "stapdev"))
			return bad_usage("--privilege takes stapusr, stapsys or stapdev", optarg);
		cl->privilege = optarg;
		return 0;
	case OPT_COMPATIBLE:
		if (!isdigit((unsigned char)optarg[0]) || optarg[strspn(optarg, "0123456789.")])
			return bad_usage("--compatible takes a version, e.g. 4.8", optarg);
		s->systemtap_v = optarg;
		return 0;
	case OPT_RLIMIT:
		return set_rlimit(longopts[idx].name, optarg);
	case OPT_REFUSED:
		return refuse_long(longopts[idx].name);
	case OPT_SKIP_BADVARS:
		s->skip_badvars = true;
		return 0;
	case 'S': {   /* stap's -S SIZE[,N]: -o's file switched at SIZE MB, N kept */
		char *end;
		long long mb = strtoll(optarg, &end, 10), n = 0;
		if (*end == ',')
			n = strtoll(end + 1, &end, 10);
		if (*end || mb < 1 || mb > 4095 || n < 0 || n > 1000000) {
			fprintf(stderr, "marktap: -S: expected SIZE[,N] (SIZE in MB, 1..4095; N files kept), "
				"saw '%s'\n", optarg);
			return 1;
		}
		s->switch_size = mb << 20;
		s->switch_count = n;
		return 0;
	}
	case 'F':
		s->flight = true;
		return 0;
	case 'A':
		cl->attach = optarg;
		return 0;
	case 't':
		s->probe_timing = true;
		return 0;
	case 'i':
		return refuse("-i", "stap's interactive mode");
	case 'V':
		printf("marktap (Marktap) %s, SystemTap language %s\n", PACKAGE_VERSION, "4.8");
		exit(0);
	case 'h':
		usage(stdout);
		exit(0);
	default:
		return bad_usage("invalid option", NULL);
	}
}

/*
 * Options anywhere, as stap's getopt takes them: `marktap x.stp -T 5`
 * and `marktap -T 5 x.stp` are the same; after `--` everything is the
 * script's (a script argument that starts with '-' comes after `--`).
 */
static int parse_command_line(int argc, char **argv, struct tr_session *s, struct cmdline *cl)
{
	struct tr_vec words = {0};
	int c, idx = 0, rc;
	char *err = NULL;

	while ((c = getopt_long(argc, argv, "-p:ve:E:c:x:o:I:D:G:gkm:T:wWur:l:L:Vhs:bd:PqS:FtiA:",
				longopts, &idx)) != -1) {
		if (c == 1) {   /* a word that is no option: the script, then its arguments */
			tr_vec_push(&words, optarg);
			continue;
		}
		if ((rc = option(s, cl, c, idx)) != 0)
			return rc;
	}
	for (int i = optind; i < argc; i++)   /* after "--" */
		tr_vec_push(&words, argv[i]);
	if (cl->analysis && cl->script_text)
		return bad_usage("--script and -e are exclusive", NULL);
	if (cl->analysis) {
		if (!(cl->script_path = tr_script_find(s, cl->analysis, &err))) {
			fprintf(stderr, "marktap: %s\n", err);
			return 1;
		}
	}
	/* with -e, -l or --script every word is the script's; else the
	 * first is the script */
	for (unsigned i = 0; i < words.n; i++) {
		if (!i && !cl->script_text && !s->listing && !cl->analysis)
			cl->script_path = words.items[0];
		else
			tr_vec_push(&s->args, words.items[i]);
	}
	free(words.items);
	if (s->target_cmd && s->target_pid)
		return bad_usage("-c and -x are exclusive", NULL);
	if (cl->attach && (cl->script_path || cl->script_text || s->args.n || s->flight))
		return bad_usage("-A PID attaches to a running -F session: no script with it", NULL);
	if (s->flight && s->target_cmd)
		return bad_usage("-F runs the session in the background, detached from the terminal: not with -c's command", NULL);
	if (s->flight && s->trace_dir)
		return bad_usage("-F runs a live session in the background: not with --trace", NULL);
	if (s->trace_dir && (s->target_cmd || s->target_pid))
		return bad_usage("--trace runs over a stored trace: no -c or -x with it", NULL);
	if (!s->trace_dir && (s->trace_begin.kind || s->trace_end.kind || s->trace_tids.n))
		return bad_usage("--begin, --end and --tid choose events of a stored trace: they go with --trace", NULL);
	if (s->trace_begin.kind && s->trace_begin.kind == s->trace_end.kind &&
	    s->trace_begin.ns > s->trace_end.ns)
		return bad_usage("--begin is after --end", NULL);
	if (tr_analysis_apply(s, &cl->analysis_opts, &err))
		return bad_usage(err, NULL);
	if (cl->analysis && s->trace_dir)
		tr_analysis_offline_limits(s);
	if (cl->privilege && !strcmp(cl->privilege, "stapusr") && s->guru)
		return bad_usage("-g (guru mode) is not allowed with --privilege=stapusr", NULL);
	return 0;
}

/* ---- -c: a command that cannot run is an error before anything runs ---- */

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		if (access(tr_printf("%.*s/%s", (int)n, n ? p : ".", prog), X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* A command run without a shell (run.c's start_command: no shell
 * characters) whose program is not found: stap's error, exit 1. */
static int check_command(const char *cmd)
{
	size_t n;

	if (cmd[strcspn(cmd, "|&;<>()$`\\\"'*?[#~=%{}\n")])
		return 0;   /* the shell's to judge */
	cmd += strspn(cmd, " \t");
	n = strcspn(cmd, " \t");
	if (!n || in_path(tr_strndup(cmd, n)))
		return 0;
	fprintf(stderr, "ERROR: cannot run '%.*s': no such executable (-c)\n", (int)n, cmd);
	return 1;
}

/* ---- pass 4: where the module file goes ---------------------------------- */

/*
 * -m NAME: NAME.mtm in the current directory (stap copies NAME.ko
 * there).  Otherwise, as stap keeps its modules out of the way: -p4
 * writes into marktap's cache ($XDG_CACHE_HOME/marktap, or
 * ~/.cache/marktap, made 0700) and prints the path; -k with a run keeps
 * a temporary directory and says so.
 */
static const char *module_path(const struct tr_session *s, bool keep_dir)
{
	const char *name = s->module_name ? s->module_name : "stap_module";
	const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir;

	if (s->module_name && !keep_dir)
		return tr_printf("%s.mtm", name);
	if (!keep_dir && ((cache && *cache == '/') || (home && *home == '/'))) {
		const char *base = cache && *cache == '/' ? cache : tr_printf("%s/.cache", home);
		dir = tr_printf("%s/marktap", base);
		mkdir(base, 0700);
		if ((mkdir(dir, 0700) == 0 || errno == EEXIST) && access(dir, W_OK) == 0)
			return tr_printf("%s/%s_%ld.mtm", dir, name, (long)getpid());
	}
	dir = tr_printf("%s/marktapXXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") == '/' ?
			getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "ERROR: cannot make a temporary directory: %s\n", strerror(errno));
		return NULL;
	}
	if (keep_dir)
		fprintf(stderr, "Keeping temporary directory \"%s\"\n", dir);
	return tr_printf("%s/%s.mtm", dir, name);
}

/* Passes 1 and 2 on the scripts; 0, or the exit status. */
static int front_passes(struct tr_session *s, struct cmdline *cl)
{
	struct pass_clock clock;
	struct tr_file *f;
	struct tr_script *sc;
	char *err = NULL;

	pass_start(&clock);
	if (cl->script_text) {
		f = tr_file_from_string("<input>", cl->script_text);
	} else {
		f = tr_file_read(cl->script_path, strcmp(cl->script_path, "-") == 0 ? "<input>" : cl->script_path);
		if (!f) {
			/* stap's words for a script it cannot open */
			if (errno == ENOENT)
				fprintf(stderr, "Input file '%s' is missing.\n", cl->script_path);
			else
				fprintf(stderr, "marktap: cannot read %s: %s\n", cl->script_path, strerror(errno));
			fputs("Pass 1: parse failed.  [man error::pass1]\n", stderr);
			return 1;
		}
	}
	tr_elab_load_macros(s);
	sc = tr_parse(s, f);
	tr_vec_push(&s->user, sc);
	for (unsigned i = 0; i < cl->extra_scripts.n; i++)   /* -E: more of the same script */
		tr_vec_push(&s->user, tr_parse(s, tr_file_from_string("<input>", cl->extra_scripts.items[i])));
	if (errors_summary(1, "parse error"))
		return 1;
	pass_end(s, &clock, "Pass 1: parsed user script");
	if (s->last_pass == 1) {
		fputs("# parse tree dump\n", stdout);
		for (unsigned i = 0; i < s->user.n; i++)
			tr_print_script(stdout, s->user.items[i]);
		fputc('\n', stdout);
		return -1;
	}
	pass_start(&clock);
	int rc = tr_elaborate(s);
	if (!rc && !tr_diag.errors)
		tr_embed_check(s);
	if (tr_diag.warnings_are_errors && tr_diag.warnings)
		rc = 1;
	if (rc || tr_diag.errors) {
		report_pass_failure(2);
		return 1;
	}
	pass_end(s, &clock, "Pass 2: analyzed script and %u library scripts: %u probe%s, %u function%s, "
		 "%u global%s", s->tapsets.n, s->probes.n, s->probes.n == 1 ? "" : "s", s->funcs.n,
		 s->funcs.n == 1 ? "" : "s", s->globals.n, s->globals.n == 1 ? "" : "s");
	if (tr_analysis_check(s, &cl->analysis_opts, cl->script_path ? cl->script_path : "the script", &err)) {
		fprintf(stderr, "marktap: %s\n", err);
		return 1;
	}
	if (s->last_pass == 2) {
		tr_elab_print(stdout, s);
		return -1;
	}
	return 0;
}

/* Pass 5: on the running system, or with --trace over a stored trace. */
static int run_script(struct tr_session *s, const char *lua, size_t len)
{
	if (s->trace_dir)
		return tr_trace_run(s, lua, len);
	return tr_run_live(s, lua, len);
}

/* Passes 3 to 5. */
static int back_passes(struct tr_session *s, struct cmdline *cl)
{
	struct pass_clock clock;
	const char *path;
	char *lua;
	int rc;

	pass_start(&clock);
	lua = tr_generate(s);
	if (!lua || tr_diag.errors) {
		report_pass_failure(3);
		return 1;
	}
	pass_end(s, &clock, "Pass 3: translated to Lua (%zu bytes)", strlen(lua));
	if (s->last_pass == 3) {
		fputs(lua, stdout);
		return 0;
	}
	if (s->last_pass == 4 || cl->keep) {
		pass_start(&clock);
		path = module_path(s, s->last_pass == 5);
		if (!path || tr_module_write(s, path, lua)) {
			report_pass_failure(4);
			return 1;
		}
		pass_end(s, &clock, "Pass 4: wrote module \"%s\"", path);
		if (s->last_pass == 4) {
			puts(path);
			return 0;
		}
	}
	if (s->target_cmd && check_command(s->target_cmd))
		return 1;
	pass_start(&clock);
	if (s->verbose)
		fputs("Pass 5: starting run.\n", stderr);
	rc = run_script(s, lua, strlen(lua)) ? 1 : 0;
	pass_end(s, &clock, "Pass 5: run completed");
	return rc;
}

int main(int argc, char **argv)
{
	struct tr_session s = {0};
	struct cmdline cl = {0};
	int rc;

	s.last_pass = 5;
	s.pkgdatadir = getenv("MARKTAP_DATADIR") ? getenv("MARKTAP_DATADIR") : MT_PKGDATADIR;
	if ((rc = parse_command_line(argc, argv, &s, &cl)) != 0)
		return rc;
	if (cl.dump) {
		tr_elab_load_macros(&s);
		return tr_dump(&s, cl.dump == OPT_DUMP_FUNCTIONS ? TR_DUMP_FUNCTIONS :
			       cl.dump == OPT_DUMP_PROBE_TYPES ? TR_DUMP_PROBE_TYPES : TR_DUMP_PROBE_ALIASES);
	}
	if (cl.list_scripts)
		return tr_script_list(&s, stdout);
	if (cl.attach)
		return tr_flight_attach(cl.attach);
	if (s.listing) {
		tr_elab_load_macros(&s);
		return tr_list_probes(&s) ? 1 : 0;
	}
	if (!cl.script_text && !cl.script_path)
		return bad_usage("no script given (a file, '-', or -e SCRIPT)", NULL);
	/* a module written by -p4: run it, as staprun does */
	if (cl.script_path && strlen(cl.script_path) > 4 &&
	    !strcmp(cl.script_path + strlen(cl.script_path) - 4, ".mtm")) {
		struct tr_buf chunk = {0};
		if (s.target_cmd && check_command(s.target_cmd))
			return 1;
		if (tr_module_read(&s, cl.script_path, &chunk))
			return 1;
		return run_script(&s, tr_buf_str(&chunk), chunk.len) ? 1 : 0;
	}
	rc = front_passes(&s, &cl);
	if (rc)
		return rc < 0 ? 0 : rc;
	return back_passes(&s, &cl);
}
