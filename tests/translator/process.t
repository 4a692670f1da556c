#!/bin/sh
# process("P") probes on the objects and processes they name: no .return
# on a function nothing calls (the program's entry point), file patterns
# that also name objects of another ELF class, library paths written the
# Fedora way (/lib64/libc.so.6, /lib*/libc.so.6) looked up where the
# dynamic linker looks, and processes started outside marktap during a
# session without -c or -x.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
command -v cc >/dev/null || skip_all "no C compiler"
plan 31

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

# a path or pattern that names no 64-bit object of this machine: its file
# name looked up where the dynamic linker looks (LD_LIBRARY_PATH first
# here), what is found there probed, with a warning saying so
mkdir -p "$TMP/native"
cp "$L" "$TMP/native/libx.so.6"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -p2 -e "probe process(\"$TMP/lib3*/libx.so.6\").function(\"work\") { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep '^process')" \
	"0 process(\"$TMP/native/libx.so.6\").function(\"work@$TMP/loop.c:4\") /* <- process(\"$TMP/lib3*/libx.so.6\").function(\"work\") */" \
	"a pattern naming only a 32-bit object: the library of that name the dynamic linker finds"
like "$(echo "$out" | head -1)" \
	"^WARNING: $TMP/lib3\\*/libx.so.6 names no 64-bit object of this machine \\($TMP/lib32/libx.so.6 is a 32-bit ELF file\\): probing $TMP/native/libx.so.6 instead, the libx.so.6 found where the dynamic linker looks: identifier 'process' at <input>:1:7\$" \
	"... with a warning naming the pattern, the 32-bit file passed over and the file probed"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -p2 -e "probe process(\"$TMP/lib3*/libx.so.6\").function(\"work\"), process(\"$TMP/lib3*/libx.so.6\").function(\"main\") { next }
	probe process(\"$TMP/lib3*/libx.so.6\").function(\"work\").return { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep -c '^WARNING')" "0 1" "... once for the pattern, however many points name it"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -p2 -e "probe process(\"$TMP/nodir/libx.so.6\").function(\"work\") { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep '^process' | sed 's/\.function.*//')" "0 process(\"$TMP/native/libx.so.6\")" \
	"a path naming no file (/lib64/libc.so.6 on Debian): the library of that name"
like "$(echo "$out" | head -1)" \
	"^WARNING: $TMP/nodir/libx.so.6 does not exist: probing $TMP/native/libx.so.6 instead, the libx.so.6 found where the dynamic linker looks" \
	"... with a warning"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -p2 -e "probe process(\"$TMP/lib32/libx.so.6\").function(\"work\") { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep -c "^process(\"$TMP/native/libx.so.6\")") $(echo "$out" | grep '^WARNING' | cut -d: -f2-3)" \
	"0 1  $TMP/lib32/libx.so.6 is a 32-bit ELF file: probing $TMP/native/libx.so.6 instead, the libx.so.6 found where the dynamic linker looks" \
	"a path naming a 32-bit object: the same"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -p2 -e "probe process(\"$L\").library(\"$TMP/nodir/libx.so.6\").plt(\"printf\")? { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep -c "WARNING: $TMP/nodir/libx.so.6 does not exist: probing $TMP/native/libx.so.6")" "0 1" \
	".library(\"PATH\"): the same lookup"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -w -p2 -e "probe process(\"$TMP/nodir/libx.so.6\").function(\"work\") { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep -c '^WARNING')" "0 0" "-w: no warning"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -p2 -e "probe process(\"$TMP/lib*/libx.so.6\").function(\"work\") { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep -c '^WARNING') $(echo "$out" | grep '^process' | cut -d'"' -f2)" "0 0 $TMP/lib64/libx.so.6" \
	"a pattern that names a 64-bit object: as written, nothing looked up, no warning"
out=$(LD_LIBRARY_PATH=$TMP/native "$MT" -p2 -e "probe process(\"$TMP/lib3*/libnosuch.so.6\").function(\"work\") { next }" 2>&1); rc=$?
like "$rc $(echo "$out" | head -1)" \
	"^1 semantic error: no match for the file pattern $TMP/lib3\\*/libnosuch.so.6, nor is libnosuch.so.6 found where the dynamic linker looks: identifier 'process'" \
	"a library name found nowhere: the semantic error"
out=$("$MT" -p2 -e "probe process(\"$TMP/nodir/libnosuch.so.6\").function(\"work\") { next }" 2>&1); rc=$?
like "$rc $(echo "$out" | head -1)" "^1 semantic error: cannot read $TMP/nodir/libnosuch.so.6: No such file or directory" \
	"... written as a path: the reader's error"
like "$("$MT" -p2 -e "probe process(\"$TMP/nodir/*\").function(\"work\") { next }" 2>&1 | head -1)" \
	"^semantic error: no match for the file pattern $TMP/nodir/\\*: identifier" \
	"a pattern whose file name is no library's (\"*\"): not looked up"

# the same on this machine's own libc, written as stap's examples write it
LIBC=$(ldd "$L" | awk '/libc\.so/ { print $3 }')
LIBC=$(realpath "$LIBC")
if [ -e /usr/lib32/libc.so.6 ] && [ ! -e /lib64/libc.so.6 ] && [ -n "$LIBC" ]; then
	out=$("$MT" -p2 -e 'probe process("/lib*/libc.so.6").function("malloc") { next }' 2>&1); rc=$?
	is "$rc $(echo "$out" | grep -c "^process(\"$LIBC\")")" "0 1" "/lib*/libc.so.6 (multiarch, 32-bit libc in /usr/lib32): the native libc"
	like "$(echo "$out" | head -1)" \
		"^WARNING: /lib\\*/libc.so.6 names no 64-bit object of this machine \\(/usr/lib32/libc.so.6 is a 32-bit ELF file\\): probing $LIBC instead" \
		"... the warning names the 32-bit libc passed over"
	out=$("$MT" -p2 -e 'probe process("/lib64/libc.so.6").function("malloc") { next }' 2>&1); rc=$?
	is "$rc $(echo "$out" | grep -c "^process(\"$LIBC\")") $(echo "$out" | grep -c '^WARNING: /lib64/libc.so.6 does not exist')" "0 1 1" \
		"/lib64/libc.so.6 (absent): the native libc, with a warning"
else
	skip 3 "not a multiarch system with a 32-bit libc in /usr/lib32 and no /lib64/libc.so.6"
fi
out=$("$MT" -p2 -e "probe process(\"${LIBC%.so.6}.so.[0-9]\").function(\"malloc\") { next }" 2>&1); rc=$?
is "$rc $(echo "$out" | grep -c '^WARNING') $(echo "$out" | grep -c "^process(\"$LIBC\")")" "0 0 1" \
	"a pattern naming the native libc: unchanged"
# and it runs: the handler in the -c program's libc (in a PID namespace
# of its own where possible: a libc probe reaches every process that
# runs libmarktap's agent)
iso=
unshare -pf --mount-proc true 2>/dev/null && iso="unshare -pf --mount-proc"
out=$(timeout 60 $iso "$MT" -c "$L" -e 'global n probe process("/lib*/libc.so.6").function("malloc") { n++ } probe end { println(n > 0) }' 2>/dev/null)
is "$out" "argc=1 s=0
1" "process(\"/lib*/libc.so.6\").function(\"malloc\") with -c: it fires in the program"

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
# no process of the program joined the whole session (it never ran, or
# ran between two scans): said at the end, not a silent zero
like "$("$MT" -T 0.3 -e "global n probe process(\"$L\").function(\"work\") { n++ } probe end { println(n) }" 2>&1 | tr '\n' ' ')" \
	"^WARNING: no process running $L joined the session: one started outside marktap without libmarktap is not traced .*; start it with -c 0 \$" \
	"a program no process of which joined: a warning at the end, then the zero"
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
# a program's path naming nothing is an error, not another program of its name
like "$("$MT" -p2 -e 'probe process("/nonexistent/ls").function("main") { }' 2>&1)" \
	"^semantic error: cannot read /nonexistent/ls: No such file or directory" "a program's path that names nothing: an error, not ls of PATH"
done_testing
