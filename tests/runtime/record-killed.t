#!/bin/sh
# marktrace killed: a recording that ends without
# draining says so.  The metadata reads recording_complete = 0 until the
# recorder ends cleanly; stats and view then report the trace incomplete
# and where each stream stops, a packet cut short as a lost packet, and
# gaps in packet sequence numbers as lost packets.
. "$(dirname "$0")/../lib/record.sh"
trap 'kill $mpid $tpid 2>/dev/null; rm -rf "$W"' EXIT
plan 16

# 1. a clean end says complete
"$MT" record -q -o "$W/clean" -- "$STRESS" 1 100
like "$("$MT" stats "$W/clean")" "^state: +complete" "a recording that ended cleanly: state complete"
grep -q 'recording_complete = 1;' "$W/clean/metadata"
ok $? "... recording_complete = 1 in its metadata"

# 2. kill -9 marktrace while the program runs: 10 ms ticks for 3 s, the
# open sub-buffers closed every 50 ms so packets reach the disk
"$MT" record -q -o "$W/k" --subbuf-size 4k --switch-timer 50 -- "$STRESS" 1 0 loop 3 > /dev/null &
mpid=$!
wait_for 30 sh -c "[ \$(cat '$W/k'/channel0_* 2>/dev/null | wc -c) -ge 1000 ]"
wait_for 30 grep -qs 'recording_complete = 0;' "$W/k/metadata"
kill -9 $mpid
wait $mpid 2>/dev/null
ok $(( $(cat "$W/k"/channel0_* | wc -c) < 1000 )) "packets were on disk when marktrace was killed"
grep -q 'recording_complete = 0;' "$W/k/metadata"
ok $? "the metadata says recording_complete = 0"
"$MT" stats "$W/k" > "$W/k.stats" 2>&1
ok $? "marktrace stats reads the killed recording"
like "$(cat "$W/k.stats")" "^state: +incomplete: the recording did not end cleanly" "stats: the trace is incomplete"
like "$(cat "$W/k.stats")" "^  \. \(ust\) incomplete" "stats: the trace is marked in the list"
is "$(sed -n '/^stream ends/,$p' "$W/k.stats" | grep -c 'channel0_')" "$(ls "$W/k" | grep -c '^channel0_')" \
	"stats: where each stream stops"
"$MT" view "$W/k" > "$W/k.view" 2> "$W/k.err"
ok $? "marktrace view reads it"
like "$(cat "$W/k.err")" "warning: .*the recording did not end cleanly" "view warns that it is incomplete"
like "$(cat "$W/k.view")" "end of the stream of cpu[0-9]+: the recording did not end cleanly" \
	"view: where the streams stop, in time order"
ticks=$(grep -c 'tick: n=' "$W/k.view")
ok $(( ticks < 5 )) "view: the $ticks ticks recorded before the kill"

# 3. a packet the recorder was writing when it died: one lost packet
cp -r "$W/k" "$W/cut"
f=$(ls -S "$W"/cut/channel0_* | head -1)
size=$(stat -c %s "$f")
truncate -s $((size - 10)) "$f"
"$MT" stats "$W/cut" > "$W/cut.stats"
ok $? "a stream whose last packet is cut short still reads"
like "$(cat "$W/cut.stats")" "its last packet was cut short" "stats: its last packet was cut short"
like "$("$MT" view "$W/cut" 2>/dev/null)" "lost 1 packet on cpu[0-9]+ \(cut short: the recorder stopped while writing it\)" \
	"view: the cut packet is a lost packet"
# the same damage in a complete trace stays an error
cp -r "$W/clean" "$W/cut2"
f=$(ls -S "$W"/cut2/channel0_* | head -1)
truncate -s $(($(stat -c %s "$f") - 10)) "$f"
"$MT" stats "$W/cut2" > /dev/null 2>&1
is "$?" "1" "in a complete trace a truncated packet is an error"
done_testing
