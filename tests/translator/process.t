#!/bin/sh
# process("P") probes on the objects and processes they name: no .return
# on a function nothing calls (the program's entry point), file patterns
# that also name objects of another ELF class, and processes started
# outside marktap during a session without -c or -x.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
command -v cc >/dev/null || skip_all "no C compiler"
plan 12

cat > "$TMP/loop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int __attribute__((noinline)) work(int i) { return i * 2; }
int main(int argc, char **argv)
{
	int s = 0;
	if (argc > 1 && !strcmp(argv[1], "forever"))
		for (int i = 0;; i++) {
			s += work(i);
			usleep(20000);
		}
	for (int i = 0; i < argc; i++)
		s += work(i);
	printf("argc=%d s=%d\n", argc, s);
	return 0;
}
C
cc -g -O0 -include string.h -o "$TMP/loop" "$TMP/loop.c" || bail_out "cannot build loop.c"
L=$TMP/loop

# function("*").return: _start is entered by the kernel with argc where a
# return address would be; a return probe there made main's argc an
# address (the loop ran for millions of turns)
out=$(timeout 30 "$MT" -c "$L" -e "global n probe process(\"$L\").function(\"*\").return { n[ppfunc()]++ }
	probe end { foreach (f+ in n) if (f == \"main\" || f == \"work\") printf(\"%s %d\\n\", f, n[f]) }" 2>&1)
is "$out" "argc=1 s=0
main 1
work 1" "function(\"*\").return: the program runs as alone, main and work return once each"
is "$("$MT" -p2 -e "probe process(\"$L\").function(\"*\").return { next }" 2>&1 | grep -c '"_start"')" 0 \
	"function(\"*\").return leaves the entry point out"
like "$("$MT" -p2 -e "probe process(\"$L\").function(\"_start\").return { next }" 2>&1 | head -1)" \
	"^semantic error: while resolving probe point: no match \\(_start is entered without a call, as a program's entry point is: it has no return to probe\\)" \
	"function(\"_start\").return named: an error saying why"
like "$("$MT" -p2 -e "probe process(\"$L\").function(\"_start\") { next }" 2>&1 | grep _start)" \
	"^process\\(\"$L\"\\)\\.function\\(\"_start\"\\)" "function(\"_start\") (its entry) is still there"

# a file pattern that also names an object of another ELF class (a 32-bit
# libc in /usr/lib32 under "/lib*/libc.so.6"): left out, not an error
mkdir -p "$TMP/lib32" "$TMP/lib64"
cp "$L" "$TMP/lib64/libx.so.6"
cp "$L" "$TMP/lib32/libx.so.6"
printf '\001' | dd of="$TMP/lib32/libx.so.6" bs=1 seek=4 conv=notrunc 2>/dev/null   # EI_CLASS: ELFCLASS32
out=$("$MT" -p2 -e "probe process(\"$TMP/lib*/libx.so.6\").function(\"work\") { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep -c '^process')" "0 1" "a pattern naming a 32-bit and a 64-bit object: the 64-bit one only"
out=$("$MT" -p2 -e "probe process(\"$TMP/lib*/libx.so.6\").mark(\"*\")?, begin { next }" 2>&1); rc=$?
is "$rc $out" "0 # probes
begin /* <- begin */" "... .mark(\"*\"): the 32-bit object is no error either"
out=$("$MT" -p2 -e "probe process(\"$TMP/lib3*/libx.so.6\").function(\"work\") { next }" 2>&1); rc=$?
like "$rc $(echo "$out" | head -1)" \
	"^1 semantic error: no match for the file pattern $TMP/lib3\\*/libx.so.6 \\($TMP/lib32/libx.so.6 is a 32-bit ELF file: marktap probes 64-bit objects of this machine\\)" \
	"a pattern naming only objects of another class: no match, and why"
like "$("$MT" -p2 -e "probe process(\"$TMP/lib32/libx.so.6\").mark(\"*\") { next }" 2>&1 | head -1)" \
	"^semantic error: $TMP/lib32/libx.so.6 is a 32-bit ELF file: marktap probes 64-bit objects of this machine" \
	"such an object named: that error"

# without -c or -x: a process started during the session that does not
# load libmarktap cannot run the script; marktap says so (once)
"$MT" -T 20 -e "probe process(\"$L\").function(\"work\") { println(\"hit\") }" > "$TMP/out" 2> "$TMP/err" &
mt=$!
"$L" forever > /dev/null &
prog=$!
wait_for 10 grep -q 'without libmarktap' "$TMP/err"
kill "$prog"
wait "$prog" 2>/dev/null
kill -INT "$mt"
wait "$mt"
like "$(cat "$TMP/err")" \
	"^WARNING: process $prog runs $L without libmarktap \\(started outside marktap\\): the script's probes there do not fire; start it with -c, or with LD_PRELOAD=.*libmarktap.so.0\$" \
	"a process started outside marktap without libmarktap: a warning, not silence"
is "$(cat "$TMP/out")" "" "... its calls ran no handler"
# one that loads libmarktap joins the session when marktap finds it
lib=$top_builddir/runtime/.libs/libmarktap.so.0
"$MT" -T 20 -e "probe process(\"$L\").function(\"work\") { println(\"hit\"); exit() }" > "$TMP/out" 2> "$TMP/err" &
mt=$!
LD_PRELOAD=$lib "$L" forever > /dev/null &
prog=$!
wait_for 15 exited "$mt"
kill "$prog"
wait "$prog" 2>/dev/null
wait "$mt"
is "$(cat "$TMP/out")" "hit" "a process started during the session with libmarktap preloaded: found, its calls run the handler"
is "$(cat "$TMP/err")" "" "... and no warning"
done_testing
