#!/bin/sh
# .return probes (runtime/script/ufunc_return.c):
# through the return stubs' call (the default) and their int3
# (MARKTAP_UFUNC_JUMP=0), a C++ program (tests/script/ufunc-return.cc)
# whose exceptions unwind through .return-probed calls and their cleanups,
# return values in xmm0, st(0) and rax:rdx, threads cancelled or ended
# inside a probed call, two probes on one call, backtraces from a return
# handler: the program's output and exit status are its own, the calls
# that return are all seen, those that do not are counted.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
SRC=$top_srcdir/tests/script/ufunc-return.cc
[ -x "$MTBIN" ] || skip_all "build first"
CXX=${CXX:-g++}
command -v "$CXX" > /dev/null || skip_all "no C++ compiler"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$CXX" -g -O2 -o "$TMP/ur" "$SRC" -lpthread || skip_all "cannot build $SRC"
U=$TMP/ur
P="process(\"$U\")"
mt() { timeout 120 "$MTBIN" "$@"; }
# the program's output and status, as marktap's -c command prints them
alone() { sh -c "$U $1; echo status \$?" 2>&1; }
under() { mt -c "sh -c '$U $1; echo status \$?'" -e "$2" 2>&1; }
plan 21

for jump in 1 0; do
	export MARKTAP_UFUNC_JUMP=$jump
	J="MARKTAP_UFUNC_JUMP=$jump"
	# before: the unwinder found the trampoline's address where the
	# return address was, no frame information there: terminate()
	out=$(under "throw 10" "global t, m probe $P.function(\"thrower\").return { t++ }
		probe $P.function(\"middle\").return { m++ } probe end { printf(\"%d %d\\n\", t, m) }")
	is "$(echo "$out" | grep -v '^WARNING')" "$(alone "throw 10")
6 6" "$J: C++ exceptions through two .return-probed calls and a cleanup: the program as alone, the 6 returns seen"
	like "$out" "WARNING: process [0-9]+: at least [1-8] call\\(s\\) hooked by \\.return probes ended without a return \\(longjmp, an exception" \
		"$J: ... the calls the exceptions left are counted"
	out=$(under "catch 10" "global c, t probe $P.function(\"catcher\").return { c += \$return }
		probe $P.function(\"thrower\").return { t++ } probe end { printf(\"%d %d\\n\", c, t) }")
	is "$(echo "$out" | grep -v '^WARNING')" "$(alone "catch 10")
50 6" "$J: an exception caught inside the probed function: its returns, with \$return"
	# two probes on one call (the second returns into the first's stub)
	out=$(under "throw 10" "global a, b, c probe $P.function(\"thrower\").return { a++ }
		probe $P.function(\"thrower\").return { b += \$return } probe $P.function(\"thr*\").return { c++ }
		probe end { printf(\"%d %d %d\\n\", a, b, c) }")
	is "$(echo "$out" | grep -v '^WARNING')" "$(alone "throw 10")
6 54 6" "$J: three .return probes on one function, exceptions through them: each sees every return"
	out=$(under "values 10" "global n probe $P.function(\"half\").return, $P.function(\"third\").return,
		$P.function(\"two\").return { n++ } probe end { println(n) }")
	is "$out" "$(alone "values 10")
30" "$J: returns in xmm0, st(0) and rax:rdx reach the caller unchanged"
	for m in cancel exit; do
		f=blocker; [ $m = exit ] && f=ender
		out=$(under $m "global n probe $P.function(\"$f\").return { n++ } probe end { println(n) }")
		is "$(echo "$out" | grep -v '^WARNING')" "$(alone $m)
0" "$J: a thread that ${m}s inside a .return-probed call: the program as alone"
	done
	out=$(under "threads 8 2000" "global n, s probe $P.function(\"leaf\").return { n++; s += \$return }
		probe end { printf(\"%d %d\\n\", n, s) }")
	is "$out" "$(alone "threads 8 2000")
16000 47992000" "$J: 8 threads through a .return probe: every return, every value"
	bt=$(mt -c "$U throw 3" -e "probe $P.function(\"thrower\").return { print_ubacktrace() }" 2>&1 |
		grep -v '^WARNING' | sed 's/^ 0x[0-9a-f]* : //; s/0x[0-9a-f]*/X/g')
	eval "bt$jump=\$bt"
	like "$(echo "$bt" | tr '\n' '|')" "^middle\\(long\\)\\+X/X \\[$U\\]\\|main\\+X/X \\[$U\\]\\|" \
		"$J: print_ubacktrace() in a .return handler: the caller, then its callers"
done
unset MARKTAP_UFUNC_JUMP
is "$bt1" "$bt0" "the same backtrace from the return stub's call and from its trap"
# C built with -fexceptions: a thread cancelled inside a .return-probed
# call; the forced unwind goes through the stub and runs the caller's
# cleanup attribute
cat > "$TMP/cx.c" <<'EOC'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static int cleaned;
static void done(int *p) { (void)p; cleaned++; }
__attribute__((noinline)) long blocker(long x) { for (;;) { pthread_testcancel(); usleep(1000); } return x; }
__attribute__((noinline)) long outer(long x) { int g __attribute__((cleanup(done))) = 0; (void)g; return blocker(x) + 1; }
static void *run(void *a) { return (void *)outer((long)a); }
int main(void)
{
	pthread_t t; void *r;
	pthread_create(&t, NULL, run, (void *)7);
	usleep(20000);
	pthread_cancel(t);
	pthread_join(t, &r);
	printf("%s cleaned %d\n", r == PTHREAD_CANCELED ? "cancelled" : "not", cleaned);
	return 0;
}
EOC
${CC:-cc} -g -O2 -fexceptions -o "$TMP/cx" "$TMP/cx.c" -lpthread
out=$(mt -c "sh -c '$TMP/cx; echo status \$?'" -e "global n probe process(\"$TMP/cx\").function(\"blocker\").return { n++ }
	probe end { println(n) }" 2>&1 | grep -v '^WARNING')
is "$out" "cancelled cleaned 1
status 0
0" "C with -fexceptions: a cancelled thread unwinds through a .return-probed call, its caller's cleanup runs"
# every byte of the program's text as before, after a session
out=$(mt -u -c "$U throw 4" -e "probe $P.function(\"thrower\").return { } probe $P.function(\"middle\") { }" 2>&1 | grep -v '^WARNING')
is "$out" "$("$U" throw 4)" "-u, entry and .return probes: the program's output is its own"
