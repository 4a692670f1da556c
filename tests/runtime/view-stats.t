#!/bin/sh
# marktrace stats: events per marker, lost counts, streams, duration, rate.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
plan 16

gen "$TMP/t" < "$VIEWDIR/basic.trace"
"$MT" stats "$TMP/t" > "$TMP/out" 2> "$TMP/err"
ok $? "stats exits 0"
field() { sed -n "s/^$1: *//p" "$TMP/out"; }
is "$(field events)" "7" "event count"
is "$(field lost)" "12 events discarded, 3 packets lost" "lost events and packets"
is "$(field streams)" "2" "stream count"
is "$(field first)" "[2026-12-02 08:26:40.123457789]" "first event"
is "$(field last)" "[2026-12-02 08:26:40.123463789]" "last event"
is "$(field duration)" "0.000006000 s" "duration"
is "$(field rate)" "1166667 events/s" "events per second"
is "$(sed -n '/^events per marker/,/^$/p' "$TMP/out" | awk 'NF == 2 { printf "%s=%s ", $2, $1 }')" \
   "fs_open=4 noargs=2 sched_switch=1 " "events per marker, by count"
is "$(awk '$NF == "channel0_0" { print $1, $2, $3, $4, $5 }' "$TMP/out")" "0 3 1 0 0" "stream of cpu0"
is "$(awk '$NF == "channel0_1" { print $1, $2, $3, $4, $5 }' "$TMP/out")" "1 4 3 12 3" "stream of cpu1"

# A bigger one: 3 streams, many packets.
echo "trace sub/dir
bulk 10000 3" | gen "$TMP/b"
"$MT" stats "$TMP/b" > "$TMP/out"
ok $? "stats of a generated trace"
is "$(field events)" "10000" "10000 events"
is "$(sed -n '/^events per marker/,/^$/p' "$TMP/out" | awk 'NF == 2 { print $2, $1 }')" "bench 10000" "all of one marker"
is "$(awk '/channel0_/ { n += $2 } END { print n }' "$TMP/out")" "10000" "the streams add up"
is "$(grep -c 'sub/dir/channel0_' "$TMP/out")" "3" "streams named with their trace folder"
done_testing
