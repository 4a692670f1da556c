#!/bin/sh
# attach.t - root's marktap on processes of another user (nobody), through
# -x PID and through its scan of running processes:
#   - the traced process never holds a descriptor of marktap's (its -o
#     file, its stderr, its stdin): handler output comes back through the
#     session and marktap writes it, whole and in order.  Before, marktap
#     passed its output and stderr, and nobody's program kept root's
#     terminal open, read from it and wrote to it;
#   - -x works again on a process whose earlier session ended (it used to
#     work once per process), and counts of an ended session do not leak
#     into the next one;
#   - a flood of refused connections to the session socket of -c makes one
#     warning line per user and a count, not a line per connection.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
T=$top_builddir/tests/script/target
[ -x "$MTBIN" ] && [ -x "$T" ] || skip_all "build first (make check builds tests/script/target)"
T=$(own_copy "$T") || bail_out "cannot copy $T"
as_nobody_setup
P="process(\"$T\")"
plan 15

# start_nobody: nobody's target (loop, 60 s) with files of its own; $tp
start_nobody() {
	: > "$TMP/t.out"
	chmod 666 "$TMP/t.out"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$T" loop 60 < /dev/null > "$TMP/t.out" 2>&1 &
	tp=$!
	PIDS="$PIDS $tp"
	wait_for 30 grep -qs ready "$TMP/t.out"
	files $tp > "$TMP/before"
}
# files PID: "dev:ino" of its descriptors, one a line (not anonymous
# inodes, which share one inode for all)
files() {
	for f in /proc/$1/fd/*; do
		case "$(readlink "$f" 2>/dev/null)" in anon_inode:*|"") continue ;; esac
		stat -L -c '%d:%i' "$f" 2>/dev/null
	done | sort -u
}
# shared MTPID PID: descriptors of marktap that process PID holds too,
# and did not hold before (both may inherit some of the test's)
shared() {
	files "$1" > "$TMP/a"
	files "$2" | comm -23 - "$TMP/before" > "$TMP/b"
	comm -12 "$TMP/a" "$TMP/b" | wc -l
}
# watch MTPID PID: sample both while marktap runs; the most ever shared
watch_fds() {
	most=0
	# (a subshell: marktap, once ended, stays a zombie until the wait)
	while [ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; do
		n=$(shared "$1" "$2")
		[ "$n" -gt "$most" ] && most=$n
		sleep 0.05
	done
	echo "$most"
}
# in_order FILE: "ok" when its lines are consecutive numbers (at least 20)
in_order() {
	awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { print (!bad && NR >= 20) ? "ok" : "bad " NR }' "$1"
}

# 1. -x PID: no descriptor of root's marktap reaches nobody's process
start_nobody
: > "$TMP/in"
"$MTBIN" -o "$TMP/mt.out" -x $tp -e "probe $P.mark(\"tick\") { if (pid() == $tp) printf(\"%d\\n\", \$k) }
	probe timer.ms(1500) { exit() }" < "$TMP/in" 2> "$TMP/mt.err" &
mtpid=$!
most=$(watch_fds $mtpid $tp)
wait $mtpid; rc=$?
is "$rc:$most" "0:0" "-x: the traced process of nobody held none of marktap's files while traced"
for f in "$TMP/mt.out" "$TMP/mt.err" "$TMP/in"; do stat -c '%d:%i' "$f"; done | sort > "$TMP/a"
files $tp > "$TMP/b"
is "$(comm -12 "$TMP/a" "$TMP/b" | wc -l)" "0" "nor after (-o file, stderr, stdin)"
is "$(in_order "$TMP/mt.out")" "ok" "its handler output reached -o whole and in order"
is "$(cat "$TMP/mt.err")" "" "nothing on stderr"
# an error line of the process comes back through marktap's stderr
"$MTBIN" -x $tp -e "probe $P.mark(\"tick\") { error(\"boom\") }" < "$TMP/in" > "$TMP/mt.out" 2> "$TMP/mt.err"
like "$(cat "$TMP/mt.err")" "ERROR: boom" "-x: the process's ERROR lines reach marktap's stderr"
# ... and on a terminal their control bytes are text (\xHH): another
# user's process cannot retitle or recolour root's terminal through them
on_tty "$MTBIN" -x $tp -e "probe $P.mark(\"tick\") { error(\"t\\033]0;pwned\\007\") }" > "$TMP/tty"
like "$(cat "$TMP/tty")" 'ERROR: t\\x1b\]0;pwned\\x07' "-x on a terminal: the process's ERROR line with its control bytes as \\xHH"

# 2. a second and a third session on the same process (and the counts of
#    an ended session stay there: the native counter of the first
#    session, c++, must not reach the second's c)
out1=$(timeout 30 "$MTBIN" -x $tp -e "global c probe $P.mark(\"tick\") { if (pid() == $tp) c++ }
	probe timer.s(1) { exit() } probe end { println(c) }" 2>&1)
out2=$(timeout 30 "$MTBIN" -x $tp -e "global c, first = -1, last
	probe $P.mark(\"tick\") { if (pid() == $tp) c++ }
	probe $P.mark(\"tick\") { if (pid() == $tp) { if (first < 0) first = \$k; last = \$k } }
	probe timer.s(1) { exit() } probe end { printf(\"%d %d\\n\", c, last - first + 1) }" 2>&1)
out3=$(timeout 30 "$MTBIN" -x $tp -e "global c probe $P.mark(\"tick\") { if (pid() == $tp) c++ }
	probe timer.s(1) { exit() } probe end { println(c) }" 2>&1)
like "$out1" "^[1-9][0-9]*$" "first -x session counts hits"
like "$out2" "^[1-9][0-9]* [1-9][0-9]*$" "a second -x session on the same process runs (no 'already runs')"
c=${out2% *} span=${out2#* }
ok $([ "$c" -le $((span + 1)) ] 2>/dev/null; echo $?) "and counts only its own hits ($c for $span ticks)"
like "$out3" "^[1-9][0-9]*$" "and a third"
kill -0 $tp 2>/dev/null
ok $? "the process still runs"

# 3. the scan of running processes: the same, on a process not traced yet
kill $tp 2>/dev/null
wait $tp 2>/dev/null
start_nobody
"$MTBIN" -o "$TMP/mt.out" -e "probe $P.mark(\"tick\") { if (pid() == $tp) printf(\"%d\\n\", \$k) }
	probe timer.ms(2000) { exit() }" < "$TMP/in" 2> "$TMP/mt.err" &
mtpid=$!
most=$(watch_fds $mtpid $tp)
wait $mtpid; rc=$?
is "$rc:$most" "0:0" "scan: nobody's process found by its binary held none of marktap's files"
is "$(in_order "$TMP/mt.out")" "ok" "its output reached -o whole and in order"
kill $tp 2>/dev/null
wait $tp 2>/dev/null

# 4. nobody floods the session socket of root's -c: one line, then a count
"$MTBIN" -c "$T slow 150 20" -e "global c probe $P.mark(\"ev\") { c++ } probe end { println(c) }" \
	> "$TMP/mt.out" 2> "$TMP/mt.err" &
mtpid=$!
name=
for i in $(seq 100); do
	name=$(awk -v p="@marktap-session-$mtpid-" 'index($8, p) == 1 { print substr($8, 2); exit }' /proc/net/unix)
	[ -n "$name" ] && break
	sleep 0.05
done
n=$(nobody "$PY" -c '
import socket, sys
n = 0
for i in range(2000):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\0" + sys.argv[1]); n += 1
    except OSError:
        pass
    s.close()
print(n)' "$name")
wait $mtpid
is "$(grep -c 'refused process' "$TMP/mt.err"):$(tail -1 "$TMP/mt.out")" "1:150" \
	"2000 refused connections: one line for nobody, the session unharmed"
like "$(cat "$TMP/mt.err")" "refused $((n - 1)) more connection\\(s\\) of uid 65534" \
	"and at the end the count of the others ($n connected)"
done_testing
