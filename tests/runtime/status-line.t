#!/bin/sh
# marktrace record on a terminal: a live status line (events, rate, lost),
# fed by the switch timer even for a slow program; none without a terminal.
# Its counts come from the rings' commit counts, not from walking events
# (tests/runtime/commit-count-test checks them packet by
# packet): whatever the buffers, threads and losses, the summary's count
# is what the trace holds, and events recorded + lost = events emitted.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MT=$top_builddir/runtime/marktrace/marktrace
T=$top_builddir/tests/script/target
S=$top_builddir/tests/runtime/stress
[ -x "$MT" ] && [ -x "$T" ] && [ -x "$S" ] || skip_all "build first"
command -v script > /dev/null 2>&1 || skip_all "no script(1) for a pseudo-terminal"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
plan 10
script -qc "$MT record -o $TMP/t -- $T slow 250 10" /dev/null < /dev/null | tr '\r' '\n' > "$TMP/tty"
live=$(grep -aE '^marktrace: [0-9]+ events, [0-9]+ events/s, [0-9]+ lost, [0-9.]+ s' "$TMP/tty")
ok $([ -n "$live" ]; echo $?) "a status line on the terminal ($(echo "$live" | wc -l) updates)"
most=$(echo "$live" | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
ok $(( most <= 0 || most >= 250 )) "it counted events while the program ran ($most of 250 before the end)"
like "$(cat "$TMP/tty")" "marktrace: 250 events recorded, 0 lost, in $TMP/t" "the summary at the end"
"$MT" record -o "$TMP/u" -- "$T" count 3 > /dev/null 2> "$TMP/notty"
is "$(grep -c 'events/s' "$TMP/notty")" "0" "no status line when stderr is not a terminal"
# summary against the trace: "recorded lost" from the summary line, then
# the events marktrace stats reads
summary() { tr '\r' '\n' < "$1" | sed -nE 's/^marktrace: ([0-9]+) events recorded, ([0-9]+) lost.*/\1 \2/p'; }
stats_events() { "$MT" stats "$1" | awk '/^events:/ { print $2 }'; }
for opts in "--subbuf-size 4K --num-subbuf 4" "--subbuf-size 64K --num-subbuf 16" "--overwrite --subbuf-size 4K --num-subbuf 4"; do
	d=$TMP/s$(echo "$opts" | tr -dc 0-9a-z)
	script -qc "$MT record $opts -o $d -- $S 2 20000" /dev/null < /dev/null > "$d.tty"
	read -r rec lost <<EOT
$(summary "$d.tty")
EOT
	if [ "${opts#--overwrite}" = "$opts" ]; then
		is "$(stats_events "$d")" "$rec" \
			"$opts, 2 threads: the summary's $rec events are the trace's, $lost lost"
		is "$((rec + lost))" 40000 "$opts, 2 threads: recorded + lost = the 40000 emitted"
	else   # the newest events only: counted by a walk (cycles were skipped)
		is "$(stats_events "$d")" "$rec" "$opts: the summary's $rec events are the trace's"
		ok $(( rec <= 0 || rec >= 40000 )) "$opts: the newest events only ($rec)"
	fi
done
done_testing
