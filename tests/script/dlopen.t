#!/bin/sh
# A dlopen'ed library's markers: listed while it is loaded, gone after
# dlclose, recorded by marktrace, probed by a script (also as
# process("PROG").library("LIB").mark(...)).
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
T=$top_builddir/tests/script/target
LIB=$top_builddir/tests/script/.libs/libmtlib.so
MTR=$top_builddir/runtime/marktrace/marktrace
MT=$top_builddir/translator/marktap
[ -x "$T" ] && [ -f "$LIB" ] && [ -x "$MTR" ] || skip_all "build first (make check)"
T=$(own_copy "$T") || bail_out "cannot copy $T"
TMP=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; kill $tp 2>/dev/null; rm -rf "$TMP"' EXIT
plan 8

# drive target through a fifo: a line on stdin lets it go on
run_target() {
	mkfifo "$TMP/in.$1"
	"$T" dlopen "$LIB" "$2" < "$TMP/in.$1" > "$TMP/out.$1" &
	tp=$!
	exec 3> "$TMP/in.$1"
	wait_for 30 grep -qs loaded "$TMP/out.$1"
}
next_step() { # next_step ID WORD
	echo go >&3
	wait_for 30 grep -qs "$2" "$TMP/out.$1"
}

run_target a 3
"$MTR" list -p $tp > "$TMP/list1"
like "$(cat "$TMP/list1")" "lib_ev \"k %d what %s\" \\(k:int what:const char \\*\\) $LIB" \
	"marktrace list -p: the loaded library's marker with its fields"
next_step a closed
"$MTR" list -p $tp > "$TMP/list2"
is "$(grep -c lib_ev "$TMP/list2")" "0" "after dlclose the marker is gone"
echo go >&3; exec 3>&-; wait $tp

# feed FILE: "go" once the program (its output in FILE) has loaded the
# library, again once it has closed it
feed() {
	wait_for 30 grep -qs loaded "$1"; echo go
	wait_for 30 grep -qs closed "$1"; echo go
}
# the recorder sees the library's hits; dlclose does not lose them
feed "$TMP/rec.out" | "$MTR" record -q -o "$TMP/trace" -- "$T" dlopen "$LIB" 5 > "$TMP/rec.out"
ok $? "marktrace record of a program that dlopens and dlcloses a library"
"$MTR" view "$TMP/trace" > "$TMP/view"
is "$(grep -c 'lib_ev:' "$TMP/view")" "5" "all 5 hits of the library's marker are in the trace"
like "$(grep 'lib_ev:' "$TMP/view" | tail -1)" 'k=4 what="from the library"' "with their values"

# a script on the library's marker, by the library's path and as .library()
feed "$TMP/s1.out" | timeout 60 "$MT" -c "$T dlopen $LIB 3" -e "probe process(\"$LIB\").mark(\"lib_ev\") { printf(\"%d %s|\", \$k, \$what) }" > "$TMP/s1.out" 2>&1
out=$(cat "$TMP/s1.out")
is "$(echo "$out" | tr '\n' '|')" "loaded|0 from the library|1 from the library|2 from the library|closed|done|" "process(\"LIB\").mark(): handlers run in the dlopen'ed library"
feed "$TMP/s2.out" | timeout 60 "$MT" -c "$T dlopen $LIB 2" -e "global n probe process(\"$T\").library(\"$LIB\").mark(\"lib_ev\") { n++ } probe end { println(n) }" > "$TMP/s2.out" 2>&1
ok $? "process(\"PROG\").library(\"LIB\").mark() translates and runs"
out=$(cat "$TMP/s2.out")
is "$(echo "$out" | tail -1)" "2" "and counts the library's hits"
done_testing
