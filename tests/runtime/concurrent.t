#!/bin/sh
# Two recordings at once, of two programs: each trace holds exactly its own
# program's events (sessions are separate shared-memory mappings).
. "$(dirname "$0")/../lib/record.sh"
plan 6
"$MT" record -q -o "$W/a" --subbuf-size 1M --num-subbuf 16 -- "$STRESS" 1 150000 &
pa=$!
"$MT" record -q -o "$W/b" --subbuf-size 1M --num-subbuf 16 -- "$STRESS" 2 100000 &
pb=$!
wait $pa; ok $? "first recording (1 thread x 150000)"
wait $pb; ok $? "second recording, at the same time (2 threads x 100000)"
"$MT" view "$W/a" > "$W/a.txt"
"$MT" view "$W/b" > "$W/b.txt"
is "$(grep -c 'stress_ev:' "$W/a.txt")" 150000 "the first trace has exactly its 150000 events"
is "$(grep -c 'stress_ev:' "$W/b.txt")" 200000 "the second has exactly its 200000"
is "$(grep 'stress_ev:' "$W/a.txt" | grep -vc 'thread=0')" 0 "no event of the other program in the first"
pids_b=$(grep 'stress_ev:' "$W/b.txt" | sed -E 's/.*\[([0-9]+)\/.*/\1/' | sort -u | wc -l)
is "$pids_b" 1 "one process in the second trace"
done_testing
