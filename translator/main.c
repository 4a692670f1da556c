/*
 * main.c - the marktap command: stap's command line over the passes.
 *
 *   marktap [OPTIONS] FILE|-|-e SCRIPT [ARGS...]
 *
 * Exit codes as stap's: 0 on success, 1 when a pass fails, a handler error
 * ends the session, or the command line is wrong.
 */
#define _GNU_SOURCE
#include "tr.h"
#include <ctype.h>

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef MT_PKGDATADIR
#define MT_PKGDATADIR "/usr/local/share/marktap"
#endif

static void usage(FILE *out)
{
	fputs("Usage: marktap [OPTIONS] FILE [ARGS...]       run a script file\n"
	      "   or: marktap [OPTIONS] -                    script on standard input\n"
	      "   or: marktap [OPTIONS] -e SCRIPT [ARGS...]  script on the command line\n"
	      "   or: marktap [OPTIONS] -l|-L PROBE          list matching probe points\n"
	      "Options:\n"
	      "   --         end of options; the script and its arguments follow\n"
	      "   -p NUM     stop after pass NUM: 1 parse, 2 elaborate, 3 translate to\n"
	      "              Lua, 4 write the module, 5 run (default)\n"
	      "   -v         more verbose (repeat for more); per traced process, how\n"
	      "              many handler runs were native and how many ran in Lua;\n"
	      "              where kernel.mark handlers ran\n"
	      "   -e SCRIPT  the script text\n"
	      "   -c CMD     run CMD under the session; end when it exits (with\n"
	      "              libmarktap preloaded when the script probes <sys/sdt.h>\n"
	      "              probes of other programs)\n"
	      "   -x PID     the target process (target() in scripts)\n"
	      "   -o FILE    handler output to FILE instead of standard output\n"
	      "   --trace DIR  run over the stored trace DIR (ours or LTTng's):\n"
	      "              marker probes on its events, timers on its time\n"
	      "   --trace net://HOST[:PORT]/host/H/SESSION  follow a live session of\n"
	      "              lttng-relayd as it is recorded\n"
	      "   -I DIR     look for tapsets in DIR too\n"
	      "   -D NAME=VAL  set a limit: MAXACTION MAXMAPENTRIES MAXSTRINGLEN\n"
	      "              MAXNESTING MAXERRORS MAXSKIPPED\n"
	      "   -G VAR=VAL set a global variable of the script\n"
	      "   -g         guru mode: allow raw Lua %{ %} code, writes to $variables\n"
	      "   -k         keep the module file (-p4 writes it anyway)\n"
	      "   -m NAME    name of the module file (NAME.mtm)\n"
	      "   -T SECS    end the session after SECS seconds\n"
	      "   -w         no warnings\n"
	      "   -W         warnings are errors\n"
	      "   -u         unoptimized: keep unused functions and globals, and\n"
	      "              probes whose handler does nothing\n"
	      "   -r KVER    the kernel the script is for (kernel_vr, kernel.trace's\n"
	      "              headers): the running one by default\n"
	      "   -l PROBE   list the probe points that match PROBE\n"
	      "   -L PROBE   same, with their context variables and types\n"
	      "   -V         version\n"
	      "   -h, --help this text\n"
	      "kernel.mark probes need marktap.ko: their handlers run in marktap on\n"
	      "   the events it records (marktap(1), WHERE HANDLERS RUN)\n"
	      "Environment: MARKTAP_NATIVE=0 runs every marker handler in Lua;\n"
	      "   MARKTAP_SCRIPT_LIB, MARKTAP_TAPSET_DIR, MARKTAP_MARKERS (marktap(1))\n", out);
}

static int bad_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "marktap: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fputs("Try 'marktap --help' for more information.\n", stderr);
	return 1;
}

static const char *const limits[] = {
	"MAXACTION", "MAXMAPENTRIES", "MAXSTRINGLEN", "MAXNESTING", "MAXERRORS",
	"MAXSKIPPED", "MAXTRYLOCK", "MAXACTION_INTERRUPTIBLE", "STP_NO_OVERLOAD",
	"HIST_ELISION", "MAXSTRINGLEN", NULL,
};

static bool check_define(const char *d)
{
	const char *eq = strchr(d, '=');
	size_t n = eq ? (size_t)(eq - d) : strlen(d);

	for (unsigned i = 0; limits[i]; i++)
		if (strlen(limits[i]) == n && !strncmp(d, limits[i], n))
			return true;
	return false;
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "trace", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct tr_session s = {0};
	const char *script_text = NULL, *script_path = NULL;
	bool keep = false;
	int c, rc;

	s.last_pass = 5;
	s.target_pid = 0;
	s.pkgdatadir = getenv("MARKTAP_DATADIR") ? getenv("MARKTAP_DATADIR") : MT_PKGDATADIR;
	while ((c = getopt_long(argc, argv, "+p:ve:c:x:o:I:D:G:gkm:T:wWur:l:L:Vh", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p':
			s.last_pass = (int)strtol(optarg, &end, 10);
			if (*end || s.last_pass < 1 || s.last_pass > 5)
				return bad_usage("invalid pass number (should be 1-5)", optarg);
			break;
		case 'v':
			s.verbose++;
			tr_diag.verbose++;
			break;
		case 'e':
			script_text = optarg;
			break;
		case 'c':
			s.target_cmd = optarg;
			break;
		case 'x':
			s.target_pid = strtol(optarg, &end, 10);
			if (*end || s.target_pid <= 0)
				return bad_usage("invalid target process ID", optarg);
			break;
		case 'o':
			s.output_file = optarg;
			break;
		case 'R':
			s.trace_dir = optarg;
			break;
		case 'I':
			tr_vec_push(&s.include_dirs, optarg);
			break;
		case 'D':
			if (!check_define(optarg))
				return bad_usage("unknown -D setting (known: MAXACTION, MAXMAPENTRIES, MAXSTRINGLEN, MAXNESTING, MAXERRORS, MAXSKIPPED)", optarg);
			tr_vec_push(&s.defines, optarg);
			break;
		case 'G':
			if (!strchr(optarg, '='))
				return bad_usage("-G needs VAR=VALUE", optarg);
			tr_vec_push(&s.globals_set, optarg);
			break;
		case 'g':
			s.guru = true;
			break;
		case 'k':
			keep = true;
			break;
		case 'm':
			s.module_name = optarg;
			for (const char *q = optarg; *q; q++)
				if (!(isalnum((unsigned char)*q) || *q == '_'))
					return bad_usage("module name must be letters, digits and '_'", optarg);
			break;
		case 'T':
			s.timeout = strtod(optarg, &end);
			if (*end || s.timeout <= 0)
				return bad_usage("invalid timeout", optarg);
			break;
		case 'w':
			tr_diag.suppress_warnings = true;
			break;
		case 'W':
			tr_diag.warnings_are_errors = true;
			break;
		case 'u':
			s.unoptimized = true;
			break;
		case 'r':
			if (!*optarg || strchr(optarg, '/'))
				return bad_usage("invalid kernel release", optarg);
			s.kernel_vr = optarg;
			break;
		case 'l':
		case 'L':
			s.listing = optarg;
			s.listing_vars = c == 'L';
			break;
		case 'V':
			printf("marktap (Marktap) %s, SystemTap language %s\n", PACKAGE_VERSION, "4.8");
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return bad_usage("invalid option", NULL);
		}
	}
	if (s.target_cmd && s.target_pid)
		return bad_usage("-c and -x are exclusive", NULL);
	if (s.trace_dir && (s.target_cmd || s.target_pid))
		return bad_usage("--trace runs over a stored trace: no -c or -x with it", NULL);
	if (s.listing) {
		for (int i = optind; i < argc; i++)
			tr_vec_push(&s.args, argv[i]);
		tr_load_macros(&s);
		return tr_list_probes(&s) ? 1 : 0;
	}
	if (!script_text) {
		if (optind >= argc)
			return bad_usage("no script given (a file, '-', or -e SCRIPT)", NULL);
		script_path = argv[optind++];
	}
	for (int i = optind; i < argc; i++)
		tr_vec_push(&s.args, argv[i]);
	(void)keep;
	/* a module written by -p4: run it, as staprun does */
	if (script_path && strlen(script_path) > 4 && !strcmp(script_path + strlen(script_path) - 4, ".mtm"))
		return tr_module_run(&s, script_path) ? 1 : 0;

	struct tr_file *f;
	if (script_text) {
		f = tr_file_from_string("<input>", script_text);
	} else {
		f = tr_file_read(script_path, strcmp(script_path, "-") == 0 ? "<input>" : script_path);
		if (!f) {
			/* stap's words for a script it cannot open */
			if (errno == ENOENT)
				fprintf(stderr, "Input file '%s' is missing.\n", script_path);
			else
				fprintf(stderr, "marktap: cannot read %s: %s\n", script_path, strerror(errno));
			fputs("Pass 1: parse failed.  [man error::pass1]\n", stderr);
			return 1;
		}
	}

	/* Pass 1 */
	tr_load_macros(&s);
	struct tr_script *sc = tr_parse(&s, f);
	if (errors_summary(1, "parse error"))
		return 1;
	tr_vec_push(&s.user, sc);
	if (s.last_pass == 1) {
		fputs("# parse tree dump\n", stdout);
		tr_print_script(stdout, sc);
		fputc('\n', stdout);
		return 0;
	}

	/* Pass 2 */
	rc = tr_elaborate(&s);
	if (tr_diag.warnings_are_errors && tr_diag.warnings)
		rc = 1;
	if (rc || tr_diag.errors) {
		report_pass_failure(2);
		return 1;
	}
	if (s.last_pass == 2) {
		tr_print_elaborated(stdout, &s);
		return 0;
	}

	/* Pass 3 */
	char *lua = tr_generate(&s);
	if (!lua || tr_diag.errors) {
		report_pass_failure(3);
		return 1;
	}
	if (s.last_pass == 3) {
		fputs(lua, stdout);
		return 0;
	}

	/* Pass 4: the module file */
	if (s.last_pass == 4 || keep) {
		const char *name = s.module_name ? s.module_name : "stap_module";
		char *path = tr_printf("%s.mtm", name);
		if (tr_module_write(&s, path, lua)) {
			report_pass_failure(4);
			return 1;
		}
		if (s.last_pass == 4) {
			puts(path);
			return 0;
		}
	}

	/* Pass 5 */
	return tr_run(&s, lua, strlen(lua)) ? 1 : 0;
}
