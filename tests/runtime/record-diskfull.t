#!/bin/sh
# A full disk: packets are written whole or not at
# all, the events of those not written are counted as lost (events_discarded
# of the stream, packet sequence gaps, the summary), the trace is complete
# and both marktrace and babeltrace2 read all of it; no .metadata.tmp is
# left.  A 1 MiB tmpfs receives a recording of 200 000 events (~12 MB),
# with 16 MiB rings: the disk fills however slow the consumer is.
. "$(dirname "$0")/../lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
STRESS=$B/tests/runtime/stress
[ -x "$MT" ] && [ -x "$STRESS" ] || skip_all "build first"
[ "$(id -u)" = 0 ] || skip_all "mounting a small tmpfs needs root"
W=$(mktemp -d)
mkdir "$W/mnt"
mount -t tmpfs -o size=1m marktap-test "$W/mnt" || skip_all "cannot mount a tmpfs"
trap 'umount "$W/mnt" 2>/dev/null; rm -rf "$W"' EXIT
plan 13

T=$W/mnt/t
"$MT" record -o "$T" --subbuf-size 64k --num-subbuf 256 -- "$STRESS" 1 200000 2> "$W/err"
st=$?
cat "$W/err" | sed 's/^/# /'
is "$st" "1" "the recording fails (status 1) ..."
like "$(cat "$W/err")" "channel0_[0-9]+: No space left on device; its events are counted as lost" \
	"... saying the disk is full and what happens to the events"
n=$(grep -c 'No space left' "$W/err")
streams=$(ls "$T" | grep -c '^channel0_')
ok $(( n < 1 || n > streams )) "said $n times for $streams streams: once per stream at most, not per packet"
ok $([ ! -e "$T/.metadata.tmp" ]; echo $?) "no .metadata.tmp is left"
"$MT" stats "$T" > "$W/stats"
ok $? "marktrace stats reads the whole trace"
events=$(awk '/^events:/ { print $2 }' "$W/stats")
lost=$(awk '/^lost:/ { print $2 }' "$W/stats")
diag "recorded $events, lost $lost"
is "$((events + lost))" "200000" "events recorded + events counted as lost = 200000 emitted"
like "$(cat "$W/stats")" "^state: +complete" "the trace says it is complete"
summary=$(sed -n 's/^marktrace: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1 \2/p' "$W/err")
is "$summary" "$events $lost" "the summary agrees"
is "$(sed -n 's/^marktrace: of which \([0-9]*\) could not be written.*/\1/p' "$W/err")" "$lost" \
	"... and says they are the events that could not be written (the rings lost none)"
"$MT" view "$T" > "$W/view"
ok $? "marktrace view reads every packet"
is "$(grep -c 'stress_ev:' "$W/view")" "$events" "... and every event"
if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null; then
	"$BABELTRACE2" "$T" > "$W/bt" 2> "$W/bt.err"
	is "$? $(grep -c stress_ev "$W/bt")" "0 $events" "babeltrace2 reads the same events"
	# babeltrace2 counts a stream's discarded events from one packet to
	# the next.  A stream whose first packet already counts some (the
	# thread moved to that CPU after the disk filled) gets "may have
	# discarded events" there, with no number: for such a stream the
	# total is the stats table's, of which babeltrace2 saw a part.
	bt=0
	for s in $(ls "$T" | grep '^channel0_'); do
		n=$(awk -v f="$s" '/discarded [0-9]+ events?/ && index($0, "/" f "\"") {
			for (i = 1; i <= NF; i++) if ($i == "discarded") c += $(i + 1) } END { print c + 0 }' "$W/bt.err")
		if grep -q "may have discarded events.*/$s\"" "$W/bt.err"; then
			m=$(awk -v f="$s" '$NF == f { print $4 }' "$W/stats")
			diag "babeltrace2: $s may have discarded events at its first packet; it counted $n of $m"
			[ "$n" -le "$m" ] && n=$m
		fi
		bt=$((bt + n))
	done
	is "$bt" "$lost" "babeltrace2 reports the same discarded-events count"
else
	ok 0 "# SKIP babeltrace2 not installed"
	ok 0 "# SKIP babeltrace2 not installed"
fi
done_testing
