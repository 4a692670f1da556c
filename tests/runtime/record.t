#!/bin/sh
# The recorder end to end: marktrace record + view on real programs.
. "$(dirname "$0")/../lib/record.sh"
plan 25

# 1. stress, big buffers: nothing lost, order kept per thread, time non-decreasing
"$MT" record -q -o "$W/big" --subbuf-size 4M --num-subbuf 32 -- "$STRESS" 2 1000000
ok $? "record 2 threads x 10^6 events"
"$MT" view --relative --no-delta "$W/big" > "$W/big.txt"
is "$(check_seqs "$W/big.txt")" "2 2000000 0 0" "2 threads, 2000000 events, every seq in order, time never goes back"
is "$(grep -c ' lost ' "$W/big.txt")" "0" "no lost events reported"

# 2. small buffers, discard mode: delivered + lost = emitted, exactly
"$MT" record -q -o "$W/small" --subbuf-size 4k --num-subbuf 2 -- "$STRESS" 2 200000
ok $? "record with 2 x 4 KiB sub-buffers"
view_count "$W/small" "$W/small.txt" stress_ev
diag "delivered $delivered, lost $lost"
is "$((delivered + lost))" "400000" "delivered + lost = 400000 emitted"
like "$lost" '^[1-9]' "small buffers did lose events (and said so)"
st_lost=$("$MT" stats "$W/small" | awk '/^lost:/ { print $2 }')
is "$st_lost" "$lost" "marktrace stats agrees on the lost count"
if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null; then
	bt=$("$BABELTRACE2" "$W/small" 2>&1 | awk '/discarded [0-9]+ events?/ { for (i = 1; i <= NF; i++) if ($i == "discarded") s += $(i + 1) } END { print s + 0 }')
	is "$bt" "$lost" "babeltrace2 warns of the same discarded-events count"
else
	ok 0 "# SKIP babeltrace2 not installed"
fi

# 3. overwrite mode keeps the newest events.  Each CPU's ring keeps its
# own newest sub-buffers, so a thread that moved between CPUs leaves a
# window per ring: pinned to one CPU the tail is contiguous up to the
# last event (one break, at its start); free to move, every event from the
# newest ring's first one on is there (an older ring's window may end
# before it: what the thread wrote there was overwritten or is older).
"$MT" record -q -o "$W/ow1" --overwrite --subbuf-size 4k --num-subbuf 4 -- taskset -c 0 "$STRESS" 1 100000
ok $? "record in overwrite mode, the program pinned to a CPU"
"$MT" view --relative --no-delta "$W/ow1" > "$W/ow1.txt"
read -r _ n bad _ <<EOT
$(check_seqs "$W/ow1.txt")
EOT
ok $(( bad > 1 || n < 100 || n > 2000 )) "pinned: a contiguous tail of $n newest events (breaks: $bad, 1 allowed at the start)"
"$MT" record -q -o "$W/ow" --overwrite --subbuf-size 4k --num-subbuf 4 -- "$STRESS" 1 100000
ok $? "record in overwrite mode"
"$MT" view --relative --no-delta "$W/ow" > "$W/ow.txt"
last=$(awk '/stress_ev:/ { for (i = 1; i <= NF; i++) if ($i ~ /^seq=/) s = substr($i, 5) } END { print s }' "$W/ow.txt")
is "$last" "99999" "the newest event (seq 99999) is kept"
read -r from n missing <<EOT
$(awk '/stress_ev:/ {
	for (i = 1; i <= NF; i++) if ($i ~ /^seq=/) s = substr($i, 5) + 0
	if (!($2 in first)) first[$2] = s
	seen[s] = 1
} END {
	for (c in first) if (first[c] > from) from = first[c]
	for (s = from; s <= 99999; s++) { n++; if (!(s in seen)) missing++ }
	printf "%d %d %d\n", from, n, missing + 0
}' "$W/ow.txt")
EOT
ok $(( missing > 0 || n < 100 )) "every event from seq $from (the newest ring's first) to 99999 is kept: $n, $missing missing"

# 4. SIGKILL: every committed event is in the trace, babeltrace2 reads it
"$MT" record -q -o "$W/kill" -- "$STRESS" 1 50000 kill
"$MT" view --relative --no-delta "$W/kill" > "$W/kill.txt"
is "$(check_seqs "$W/kill.txt")" "1 50000 0 0" "killed with SIGKILL: all 50000 committed events kept"
if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null; then
	is "$("$BABELTRACE2" "$W/kill" 2>/dev/null | grep -c stress_ev)" "50000" "babeltrace2 reads the killed program's trace"
else
	ok 0 "# SKIP babeltrace2 not installed"
fi

# 5. a malformed format is refused at load, naming the marker
err=$("$B/tests/runtime/badfmt" 2>&1)
like "$err" "marker 'bad_prefix': bad format" "bad format reported at load with the marker's name"

# 6. record -p PID of a running process, and only by its user
"$STRESS" 1 0 loop 8 > "$W/loop.out" &
pid=$!
wait_for 30 grep -q ready "$W/loop.out"
timeout -s INT 3 "$MT" record -q -o "$W/attach" -p "$pid"
n=$("$MT" view "$W/attach" | grep -c 'tick:')
ok $(( n < 20 )) "record -p $pid for 3 s caught $n tick events"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$W"; mkdir -m 1777 "$W/pub"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" record -q -o "$W/pub/nobody" -p "$pid" 2>&1)
	like "$out" "permission denied" "another user cannot record the process: $out"
	ok $([ ! -e "$W/pub/nobody" ]; echo $?) "... and the refused recording creates nothing"
else
	ok 0 "# SKIP needs root and setpriv"
	ok 0 "# SKIP needs root and setpriv"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# 7. the consumer copies in batches: with 64 x 4 KiB sub-buffers a writer
# wakes it once 16 are unconsumed (a quarter); below that the events wait
# for the switch timer (5 s here) or the end.  EVENTS ~50-byte events, then
# the program waits until the test has looked at the stream files: below
# the mark, 0.4 s after the burst (a window in which nothing may be copied:
# that sleep is the check's subject); past it, once 64 KiB are there, and
# before the switch timer could have copied them (4 s).
stream_bytes() { cat "$1"/channel0_* 2>/dev/null | wc -c; }
stream_has() { [ "$(stream_bytes "$1")" -ge "$2" ]; }
batch() { # NAME EVENTS below|above: bytes of packets on disk during the wait
	rm -f "$W/$1.emitted" "$W/$1.seen"
	"$MT" record -q -o "$W/$1" --subbuf-size 4k --num-subbuf 64 --switch-timer 5000 -- \
		sh -c '"$1" 1 "$2" > /dev/null && touch "$3" && i=0 &&
			while [ ! -e "$4" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' \
		sh "$STRESS" "$2" "$W/$1.emitted" "$W/$1.seen" &
	rpid=$!
	wait_for 30 test -e "$W/$1.emitted" >&2
	if [ "$3" = below ]; then sleep 0.4; else wait_for 4 stream_has "$W/$1" 65536 >&2; fi
	stream_bytes "$W/$1"
	touch "$W/$1.seen"
	wait "$rpid"
}
below=$(batch below 400 below)
is "$below" "0" "400 events (below the mark): nothing copied before the end"
is "$("$MT" stats "$W/below" | awk '/^events:/ { print $2 }')" "400" "... and all 400 in the trace at the end"
above=$(batch above 3000 above)
ok $(( above < 65536 )) "3000 events (past the mark): the consumer was woken and copied $above bytes"
is "$("$MT" stats "$W/above" | awk '/^events:/ { print $2 }')" "3000" "... and all 3000 in the trace at the end"

# 6. a marker takes at most 12 arguments (an SDT note's limit): more is a
# compile error that says so, 12 compile
printf '#include <marktap/marker.h>\nint main(void) { trace_mark(m, "%s", %s); return 0; }\n' \
	"a %d b %d c %d d %d e %d f %d g %d h %d i %d j %d k %d l %d m %d" \
	"1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13" > "$W/many.c"
err=$(${CC:-cc} -I"$top_srcdir/runtime/include" -c -o "$W/many.o" "$W/many.c" 2>&1)
like "$err" "at most 12 arguments" "13 arguments: the compiler says a marker takes at most 12"
sed 's/ m %d//; s/, 13)/)/' "$W/many.c" > "$W/twelve.c"
${CC:-cc} -I"$top_srcdir/runtime/include" -c -o "$W/twelve.o" "$W/twelve.c"
ok $? "12 arguments compile"
done_testing
