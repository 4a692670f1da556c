#!/bin/sh
# -F without -o: stap's in-memory flight recorder.  The session runs in
# the background, keeping the last -s MB of its output in memory;
# marktap -A PID prints what was kept, then the output as it comes, until
# the session ends or ^C detaches (the session goes on).  Only the
# session's user (or root) attaches.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 16

gone() { ! kill -0 "$1" 2>/dev/null; }
num() { case $1 in ''|*[!0-9]*) echo 0 ;; *) echo "$1" ;; esac; }

pid=$("$MT" -F -e 'global n probe begin { println("begun") }
probe timer.ms(20) { printf("tick %d\n", ++n) } probe end { printf("ended %d\n", n > 0) }' 2>"$TMP/start.err")
rc=$?
pid=$(num "$pid")
is "$rc $(cat "$TMP/start.err")" "0 Disconnecting from marktap session $pid.
To reconnect, type \"marktap -A $pid\"" "-F without -o: the pid on stdout, stap's reconnect hint on stderr, exit 0"
is "$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ')" "$pid" "the session runs in a session of its own, off the terminal"

# two attaches at once, each from the ring's start
"$MT" -A "$pid" >"$TMP/a1.out" 2>"$TMP/a1.err" &
a1=$!
"$MT" -A "$pid" >"$TMP/a2.out" 2>"$TMP/a2.err" &
a2=$!
wait_for 30 file_has_lines "$TMP/a1.out" 4
wait_for 30 file_has_lines "$TMP/a2.out" 4
is "$(sed -n 1,3p "$TMP/a1.out" | tr '\n' ' ')|$(sed -n 1,3p "$TMP/a2.out" | tr '\n' ' ')" \
	"begun tick 1 tick 2 |begun tick 1 tick 2 " "-A: each of two attaches gets what was kept (begin's line on), then the ticks"
kill -INT "$a1"
wait "$a1"
is "$? $(cat "$TMP/a1.err")" "0 Disconnecting from marktap session $pid.
To reconnect, type \"marktap -A $pid\"" "^C detaches: exit 0, the reconnect hint"
n1=$(wc -l <"$TMP/a2.out")
wait_for 30 file_has_lines "$TMP/a2.out" $((n1 + 3))
kill -0 "$pid" 2>/dev/null
ok $? "the session goes on after a detach (the other attach still gets ticks)"

# another user: refused, nothing of the output
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" -A "$pid" >"$TMP/nb.out" 2>"$TMP/nb.err"
	is "$? $(wc -c <"$TMP/nb.out") $(cat "$TMP/nb.err")" "1 0 ERROR: -A $pid: refused: the session's output is its user's" \
		"-A as another user: refused, exit 1, no output"
else
	skip 1 "needs root and setpriv to attach as another user"
fi

[ "$pid" -gt 0 ] && kill "$pid"
wait_for 30 exited "$a2"
wait "$a2"
is "$? $(tail -1 "$TMP/a2.out") $(grep -cv '^tick [0-9]*$' "$TMP/a2.out")" "0 ended 1 2" \
	"kill PID ends the session: the attach gets its end probe's line, then exits 0"
wait_for 30 gone "$pid"
wait_for 10 eval "! unix_bound marktap-flight-$pid"
ok $? "the recorder ends with the session (its socket is gone)"
out=$("$MT" -A "$pid" 2>&1)
like "$? $out" "^1 ERROR: -A $pid: no marktap -F session of that pid" "-A of an ended session: the reason, exit 1"

# a session's ERROR goes into the recorder, and the attach ends with it
pid=$(num "$("$MT" -F -e 'probe timer.ms(300) { println("before"); error("late") }' 2>/dev/null)")
"$MT" -A "$pid" >"$TMP/e.out" 2>"$TMP/e.err"
is "$? $(cat "$TMP/e.out" | tr '\n' '|')" "0 before|ERROR: late|WARNING: Number of errors: 1, skipped probes: 0|" \
	"the session's errors are in what -A prints, to the end"

# -s 1: the last MB kept, from a whole line; what was overwritten is said
# (a first attach waits for the last line; a second, after, gets the ring)
pid=$(num "$("$MT" -F -s 1 -DMAXACTION=100000 -e 'global n probe timer.ms(10) { if (n++ < 30) {
  for (i = 0; i < 1000; i++) printf("%05d %0093d\n", n, i) } else if (n == 31) println("done") }' 2>/dev/null)")
"$MT" -A "$pid" >"$TMP/s0.out" 2>/dev/null &
a0=$!
wait_for 60 grep -q '^done$' "$TMP/s0.out"
kill -INT "$a0" 2>/dev/null
"$MT" -A "$pid" >"$TMP/s.out" 2>"$TMP/s.err" &
a3=$!
wait_for 30 grep -q '^done$' "$TMP/s.out"
kill -INT "$a3"
wait "$a3"
bytes=$(grep -v '^done$' "$TMP/s.out" | wc -c)
lost=$(sed -n 's/^WARNING: -A [0-9]*: \([0-9]*\) bytes of older output were overwritten.*/\1/p' "$TMP/s.err")
ok "$( [ "$bytes" -le 1048576 ] && [ "$bytes" -gt 900000 ]; echo $?)" \
	"-s 1: at most the last MB kept ($bytes bytes of 3 000 000)"
is "$(grep -cv '^000[0-3][0-9] [0-9]\{93\}$\|^done$' "$TMP/s.out")" 0 "every line kept is whole, the first too"
is "$((lost + bytes))" 3000000 "the bytes overwritten are said on stderr ($lost), and with those kept make all written"
[ "$pid" -gt 0 ] && kill "$pid"
wait_for 30 gone "$pid"

# usage
"$MT" -A abc 2>"$TMP/u.err"
like "$? $(cat "$TMP/u.err")" "^1 marktap: -A: expected the pid of a marktap -F session, saw 'abc'" "-A of no pid: usage error"
"$MT" -A 1 -e 'probe begin {}' 2>"$TMP/u.err"
like "$? $(cat "$TMP/u.err")" "^1 .*-A PID attaches to a running -F session: no script with it" "-A with a script: refused"
"$MT" -F -c true -e 'probe begin { exit() }' >/dev/null 2>&1
is "$?" 1 "-F with -c: refused, exit 1"
done_testing
