#!/bin/sh
# A traced program that writes into its session memory:
# marktrace record (-- CMD, and -p PID as root of a program run by nobody)
# ends that recording with one clear error and a non-zero status, in
# bounded time, without crashing, with a trace the readers still open;
# damage it does not depend on (the clock, event class slots, a shrink the
# seals refuse) changes nothing; SIGTERM ends a recording whatever the
# program does.  tests/runtime/corrupt.c says what each mode writes.
. "$(dirname "$0")/../lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
C=$B/tests/runtime/corrupt
[ -x "$MT" ] && [ -x "$C" ] || skip_all "build first"
W=$(mktemp -d)
chmod 755 "$W"
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$W"' EXIT
plan 77

# status NAME: marktrace ran in time (not killed by timeout's KILL, not by
# a signal of its own) and failed, with one bounded error naming the damage
check_failed() { # NAME STATUS
	ok $(( $2 == 0 || $2 >= 124 )) "$1: marktrace ended by itself with an error status (got $2)"
	like "$(cat "$W/$1.err")" "marktrace: record: the session memory is corrupted \(" \
		"$1: the error says the session was corrupted"
	n=$(wc -c < "$W/$1.err")
	ok $(( n > 600 )) "$1: stderr is bounded ($n bytes)"
	"$MT" stats "$W/$1" > "$W/$1.stats" 2>&1
	ok $? "$1: marktrace stats reads what was recorded"
	like "$(cat "$W/$1.stats")" "^state: +incomplete" "$1: ... and says the recording is incomplete"
}

# 1. marktrace record -- CMD, the program damages what marktrace reads
for mode in geometry ringhead behind ahead bigpacket spin shrink; do
	timeout -k 5 30 "$MT" record -q -o "$W/$mode" -- "$C" "$mode" 1 > "$W/$mode.out" 2> "$W/$mode.err"
	check_failed "$mode" $?
done
like "$(cat "$W/shrink.out")" "ftruncate: Operation not permitted" "shrink: the sealed session cannot be shrunk"

# 2. damage marktrace does not depend on: the recording goes on
timeout -k 5 30 "$MT" record -q -o "$W/clock" -- "$C" clock 1 > /dev/null 2> "$W/clock.err"
is "$?" "0" "clock: an odd clock sequence forever does not stall marktrace"
is "$("$MT" stats "$W/clock" | awk '/^events:/ { print $2 }')" "200" "clock: the 200 events before it are recorded"
timeout -k 5 30 "$MT" record -q -o "$W/events" -- "$C" events 1 > /dev/null 2> "$W/events.err"
is "$?" "0" "events: garbage event class slots do not stop the recording"
"$MT" view "$W/events" > "$W/events.txt"
ok $? "events: marktrace view reads the trace"
is "$(grep -c 'corrupt_tick: n=' "$W/events.txt")" "300" "events: every tick, before and after, is in it"
if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null; then
	is "$("$BABELTRACE2" "$W/events" 2>&1 | grep -c 'corrupt_tick')" "300" "events: babeltrace2 reads the metadata and the ticks"
else
	ok 0 "# SKIP babeltrace2 not installed"
fi

# sub-buffers that never complete (writers dead between reserve and
# commit): the drain waits half a second for all rings, says so, and the
# trace says it is incomplete
timeout -k 5 30 "$MT" record -o "$W/stall" -- "$C" stall 1 > /dev/null 2> "$W/stall.err"
is "$?" "0" "stall: the recording ends (the program's status)"
like "$(cat "$W/stall.err")" "cpu [0-9]+: a sub-buffer never completed" "stall: marktrace says a sub-buffer never completed"
like "$("$MT" stats "$W/stall")" "state: +incomplete" "stall: the trace says it is incomplete"

# 3. marktrace record -p PID as root, the program runs as nobody
# (a command, not a function: $! must be the program's pid, setpriv execs it)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	AS_USER="setpriv --reuid=65534 --regid=65534 --clear-groups"
	who="root recording nobody's process"
else
	AS_USER=
	who="the process's own user"
fi
start_target() { # MODE: starts it, sets $pid
	rm -f "$W/target.out"
	touch "$W/target.out"
	chmod 666 "$W/target.out"
	$AS_USER "$C" "$1" 30 > "$W/target.out" &
	pid=$!
	pids="$pids $pid"
	i=0
	wait_for 30 grep -qs ready "$W/target.out"
}
for mode in geometry ringhead ahead bigpacket spin; do
	start_target "$mode"
	timeout -k 5 30 "$MT" record -q -o "$W/p-$mode" -p "$pid" 2> "$W/p-$mode.err"
	st=$?
	kill -0 "$pid" 2>/dev/null
	ok $? "-p $mode: the recording ended while the program still runs ($who)"
	check_failed "p-$mode" $st
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done

# 4. a program that completes sub-buffers forever: SIGTERM still ends it
start_target flood
timeout --preserve-status -s TERM -k 10 2 "$MT" record -q -o "$W/flood" -p "$pid" 2> "$W/flood.err"
st=$?
ok $(( st == 137 || st == 139 )) "flood: SIGTERM ended the recording (status $st, not killed)"
n=$(wc -c < "$W/flood.err")
ok $(( n > 600 )) "flood: stderr is bounded ($n bytes)"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
done_testing
