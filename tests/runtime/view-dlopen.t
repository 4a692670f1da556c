#!/bin/sh
# marktrace view names #p addresses inside plugins the program dlopen()s
# without markers: libmarktap notices the loader's new objects
# (a hit looks at most once a millisecond, and at exit) and writes
# marktap_statedump:update and their bin_info; the viewer names an address
# recorded before that bin_info by looking ahead to the pid's next update.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
MTV=${MARKTRACE:-$MT}
LIBMT=$B/runtime/.libs/libmarktap.so
CC=${CC:-cc}
[ -x "$MT" ] && [ -f "$LIBMT" ] || skip_all "build first (make check)"
W=$(mktemp -d "${TMPDIR:-/tmp}/mt-vdl.XXXXXX") || exit 1
trap '[ -n "$KEEP" ] || rm -rf "$W"' EXIT
LDMT="-L$B/runtime/.libs -lmarktap -Wl,-rpath,$B/runtime/.libs"

# Plugins without markers, all of one layout (dlclose of one, dlopen of
# another: the loader maps the second where the first was).  NAME_call
# calls back into the program, which records its return address: an
# address inside the plugin that no symbol value equals.
cat > "$W/plug.c" <<'EOF'
#define CAT2(x, y) x##y
#define CAT(x, y) CAT2(x, y)
__attribute__((noinline)) int CAT(NAME, _func)(int x) { return x * 7 + 3; }
int CAT(NAME, _call)(int (*cb)(int), int x) { return cb(x) + CAT(NAME, _func)(x); }
EOF
cat > "$W/prog.c" <<'EOF'
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <marktap/marker.h>
static int cb(int x)
{
	trace_mark(ret_ip, "x %d ret #p%lu", x, (unsigned long)__builtin_return_address(0));
	return x;
}
/* a period passes and a hit comes: libmarktap looks at the loader */
static void tick(int n)
{
	usleep(n >= 10 ? 1500 : 5000);
	trace_mark(tick, "n %d", n);
}
static void *use(const char *dir, const char *name, int wait)
{
	char path[4096], sym[64];
	int (*f)(int), (*call)(int (*)(int), int);
	void *h;

	snprintf(path, sizeof path, "%s/lib%s.so", dir, name);
	if (!(h = dlopen(path, RTLD_NOW))) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	snprintf(sym, sizeof sym, "%s_func", name);
	*(void **)&f = dlsym(h, sym);
	snprintf(sym, sizeof sym, "%s_call", name);
	*(void **)&call = dlsym(h, sym);
	if (wait)
		tick(wait);
	trace_mark(plugin_ip, "name %s ip #p%lu", name, (unsigned long)f + 1);
	printf("%s %d\n", name, call(cb, 2));
	return h;
}
/* threads: workers record a pointer the main thread sets to a plugin's
 * function once it has loaded it */
static unsigned long published;
static int stop;
static void *worker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		trace_mark(worker_ip, "ip #p%lu",
			   __atomic_load_n(&published, __ATOMIC_ACQUIRE));
		usleep(50);
	}
	return NULL;
}
static int threads(const char *dir)
{
	pthread_t t[2];
	char path[4096];
	void *h;
	int i;

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	usleep(3000);
	snprintf(path, sizeof path, "%s/liba.so", dir);
	if (!(h = dlopen(path, RTLD_NOW)))
		return 1;
	__atomic_store_n(&published, (unsigned long)dlsym(h, "a_func"), __ATOMIC_RELEASE);
	usleep(5000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
/* signals: a handler records a #p marker every 200 us while the main
 * thread loads and unloads plugins (the hit may look at the loader from
 * the handler) */
static void on_alarm(int sig)
{
	(void)sig;
	trace_mark(sig_ip, "ip #p%lu", (unsigned long)&on_alarm);
}
static int signals(const char *dir)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 200; i++) {
		char path[4096];
		void *h;
		snprintf(path, sizeof path, "%s/lib%c.so", dir, "abcde"[i % 5]);
		if (!(h = dlopen(path, RTLD_NOW)))
			return 1;
		usleep(500);
		dlclose(h);
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	return 0;
}
int main(int argc, char **argv)
{
	pid_t child;
	void *h;

	trace_mark(main_ip, "ip #p%lu", (unsigned long)&main);
	if (argc > 2 && argv[2][0] == 't')
		return threads(argv[1]);
	if (argc > 2 && argv[2][0] == 's')
		return signals(argv[1]);
	if (argc > 2 && argv[2][0] == 'r') {    /* a plugin replaced unseen */
		tick(1);
		dlclose(use(argv[1], "d", 0));
		use(argv[1], "e", 2);
		return 0;
	}
	if (argc > 3) {         /* many plugins in turn, each looked at */
		int i, n = atoi(argv[3]);
		for (i = 0; i < n; i++) {
			static const char *names[] = { "a", "b", "c", "d", "e" };
			h = use(argv[2], names[i % 5], 10);
			tick(11);       /* a look after its events: it was there */
			dlclose(h);
		}
		return 0;
	}
	if (argc > 2) {         /* (swap) at once: recorded before any look */
		dlclose(use(argv[1], "a", 1));
		use(argv[1], "b", 0);
		return 0;
	}
	h = use(argv[1], "a", 1);
	tick(3);                /* a look after a's events: a was still there */
	dlclose(h);
	use(argv[1], "b", 2);   /* over a's range */
	child = fork();
	if (child == 0) {
		use(argv[1], "b", 0);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	use(argv[1], "c", 0);   /* its bin_info only at exit, after its events */
	return 3;
}
EOF
for n in a b c d e; do
	$CC -g -O1 -fPIC -shared -Wl,--build-id -DNAME=$n -o "$W/lib$n.so" "$W/plug.c" || break
done > "$W/cc.log" 2>&1 &&
$CC -g -O0 -I"$top_srcdir/runtime/include" -o "$W/prog" "$W/prog.c" $LDMT -ldl >> "$W/cc.log" 2>&1 ||
	{ cat "$W/cc.log" >&2; skip_all "$CC cannot build the test program"; }
plan 36

"$W/prog" "$W" > "$W/plain.out"
prc=$?
"$MT" record -q -o "$W/t" -- "$W/prog" "$W" > "$W/rec.out"
rrc=$?
is "$rrc" "$prc" "the program's exit status is the same recorded ($prc)"
is "$(cat "$W/rec.out")" "$(cat "$W/plain.out")" "... and so is its output"
"$MTV" view --statedump --no-delta "$W/t" > "$W/v" 2> "$W/v.err"
ok $? "view exits 0"
grep -v ' bin_info: .*path="/\(usr/\)\?lib' "$W/v" | sed 's/^/# /' | head -40

base_of() { sed -n "s/.*bin_info: baddr=\(0x[0-9a-f]*\) .*path=\"[^\"]*\/$1\".*/\1/p" "$W/v" | head -1; }
line_of() { grep -n "$1" "$W/v" | head -1 | cut -d: -f1; }
pid=$(sed -n 's/.*prog\[\([0-9]*\)\/.*main_ip:.*/\1/p' "$W/v" | head -1)
in_parent() { grep "prog\[$pid/" "$W/v"; }

is "$(in_parent | grep -c 'bin_info: .*/liba\.so"')" "1" "a plugin without markers has its bin_info, once"
like "$(in_parent | grep -B1 'bin_info: .*/liba\.so"' | head -1)" 'marktap_statedump:update: missed=0 since=[0-9]+$' \
	"... after an update event that missed no load"
like "$(in_parent | grep 'plugin_ip: name="a"')" 'ip=0x[0-9a-f]+ <a_func\+0x1>$' \
	"the address of the plugin's function is named"
like "$(in_parent | grep -A3 'plugin_ip: name="a"' | grep ret_ip)" 'ret=0x[0-9a-f]+ <a_call\+0x[0-9a-f]+>$' \
	"a return address inside the plugin is named"

ba=$(base_of liba.so)
bb=$(base_of libb.so)
ok $([ -n "$ba" ] && [ "$ba" = "$bb" ]; echo $?) "dlclose a, dlopen b: b is where a was ($ba, $bb)"
like "$(in_parent | grep -B1 'bin_info: .*/libb\.so"' | head -1)" "marktap_statedump:unload: baddr=$ba\$" \
	"b's bin_info comes after an unload event for a"
like "$(in_parent | grep 'plugin_ip: name="b"')" 'ip=0x[0-9a-f]+ <b_func\+0x1>$' \
	"the address in b is named after b, not a"
like "$(in_parent | grep -A3 'plugin_ip: name="b"' | grep ret_ip)" 'ret=0x[0-9a-f]+ <b_call\+0x[0-9a-f]+>$' \
	"... its return address too"
like "$(grep -v "prog\[$pid/" "$W/v" | grep 'plugin_ip: name="b"')" 'ip=0x[0-9a-f]+ <b_func\+0x1>$' \
	"a forked child names b's address (its own list of objects has b)"

# c: its first event comes before anything looks at the loader again (a
# hit looks after it recorded itself); its bin_info comes after that event
# (at exit, or at that very hit when a period has passed since tick 2).
ok $([ "$(line_of 'plugin_ip: name="c"')" -lt "$(line_of 'bin_info: .*/libc\.so"')" ]; echo $?) \
	"c's first event comes before its bin_info"
like "$(grep 'plugin_ip: name="c"' "$W/v")" 'ip=0x[0-9a-f]+ <c_func\+0x1>$' \
	"... and its address is named all the same (the viewer looks ahead)"
like "$(grep -A3 'plugin_ip: name="c"' "$W/v" | grep ret_ip)" 'ret=0x[0-9a-f]+ <c_call\+0x[0-9a-f]+>$' \
	"... its return address too"
"$MTV" view --statedump --no-delta -f 'name == "plugin_ip" || name == "ret_ip"' "$W/t" > "$W/vf"
is "$(grep -c '<[abc]_\(func\|call\)+' "$W/vf")" "8" "with a filter that hides the bin_info events, as many named"
is "$(grep -c 'update: missed=0' "$W/v")" "$(grep -c 'update:' "$W/v")" "no update missed a load"
"$MTV" view --statedump --no-delta --no-symbols "$W/t" > "$W/ns"
is "$(sed 's/ <[a-z_]*+0x[0-9a-f]*>//g' "$W/v")" "$(cat "$W/ns")" "--no-symbols: the same text, bare"

# d loaded, used and replaced by e before anything looked: the update
# that finds e says a load was missed, and d's address is not named
# after e (it may be named after d if a look came between).
"$MT" record -q -o "$W/m" -- "$W/prog" "$W" replaced > "$W/m.out"
ok $? "record a program that replaces a plugin at once"
"$MTV" view --statedump --no-delta "$W/m" > "$W/mv"
ok $? "view exits 0"
grep -E 'update:|plugin_ip|bin_info: .*lib[de]\.so' "$W/mv" | sed 's/^/# /'
dline=$(grep 'plugin_ip: name="d"' "$W/mv")
if grep -q 'bin_info: .*/libd\.so"' "$W/mv"; then
	like "$dline" '<d_func\+0x1>$' "d was seen: its address is named after d"
else
	like "$dline" 'ip=0x[0-9a-f]+$' "d was not seen: its address is bare, not named after e"
fi
like "$(grep 'plugin_ip: name="e"' "$W/mv")" '<e_func\+0x1>$' "e's address is named"

# a used, then at once dlclose'd and b dlopen'ed over it, b used, exit:
# no look came between a's events and b's, so the trace cannot tell
# which was there at each: no address may be named after the other
# plugin (bare, or named right if a slow run let a look come between).
"$MT" record -q -o "$W/s" -- "$W/prog" "$W" at-once > /dev/null
ok $? "record a program that swaps plugins at once"
"$MTV" view --statedump --no-delta "$W/s" > "$W/sv"
grep -E 'update:|plugin_ip|ret_ip|bin_info: .*lib[ab]\.so' "$W/sv" | sed 's/^/# /'
is "$(grep -A3 'plugin_ip: name="a"' "$W/sv" | grep -E 'plugin_ip|ret_ip' | grep -c '<b_')" "0" \
	"a's addresses are not named after b"
is "$(grep -A3 'plugin_ip: name="b"' "$W/sv" | grep -E 'plugin_ip|ret_ip' | grep -c '<a_')" "0" \
	"b's addresses are not named after a"

# 60 plugins in turn from a folder with a 200-byte name, each used
# between two looks: the list of objects grows and drops its dead paths
# many times over.
long=$W/$(printf '%0200d' 0 | tr 0 p)
mkdir "$long" && cp "$W"/lib[a-e].so "$long"/
"$MT" record -q -o "$W/n" -- "$W/prog" x "$long" 60 > "$W/n.out"
ok $? "record a program that loads 60 plugins in turn"
"$MTV" view --statedump --no-delta "$W/n" > "$W/nv"
is "$(grep -c 'plugin_ip: name="\([a-e]\)" ip=0x[0-9a-f]* <\1_func+0x1>$' "$W/nv")" "60" \
	"each one's address named after it"
is "$(grep -c "bin_info: .*path=\"$long/lib[a-e].so\"" "$W/nv")" "60" "... from 60 bin_info events"

# Two threads record a pointer the main thread sets to a plugin's
# function after it dlopen()s it: named in every event, before and after
# the bin_info; one thread looked (one bin_info).
"$MT" record -q -o "$W/th" -- "$W/prog" "$W" threads
ok $? "record a program whose threads record a plugin's address"
"$MTV" view --statedump --no-delta "$W/th" > "$W/thv"
nz=$(grep 'worker_ip: ip=' "$W/thv" | grep -vc 'ip=0x0$')
ok $([ "$nz" -gt 0 ]; echo $?) "the workers recorded the plugin's address ($nz events)"
is "$(grep 'worker_ip: ip=' "$W/thv" | grep -v 'ip=0x0$' | grep -c '<a_func+0x0>$')" "$nz" \
	"... every one named"
is "$(grep -c 'bin_info: .*/liba\.so"' "$W/thv")" "1" "... from one bin_info"

# A signal handler records a #p marker every 200 us while the program
# loads and unloads plugins: the looks it makes never deadlock.
timeout 60 "$MT" record -q -o "$W/sg" -- "$W/prog" "$W" signals
ok $? "record a program whose signal handler records while it dlopens"
"$MTV" view --statedump --no-delta "$W/sg" > "$W/sgv"
n=$(grep -c 'sig_ip: ' "$W/sgv")
is "$(grep -c 'sig_ip: ip=0x[0-9a-f]* <on_alarm+0x0>$' "$W/sgv")" "$n" "the handler's $n events are named"

if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" > /dev/null; then
	"$BABELTRACE2" "$W/t" > "$W/bt" 2> "$W/bt.err"
	ok $? "babeltrace2 reads the trace"
	is "$(grep -c 'marktap_statedump:update:.*missed = 0, since = [0-9]' "$W/bt")" "$(grep -c 'update:' "$W/v")" \
		"... and every update event, with its fields"
else
	ok 0 "# SKIP babeltrace2 not installed"
	ok 0 "# SKIP babeltrace2 not installed"
fi
done_testing
