#!/bin/sh
# marktrace record on a terminal: a live status line (events, rate, lost),
# fed by the switch timer even for a slow program; none without a terminal.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MT=$top_builddir/runtime/marktrace/marktrace
T=$top_builddir/tests/script/target
[ -x "$MT" ] && [ -x "$T" ] || skip_all "build first"
command -v script > /dev/null 2>&1 || skip_all "no script(1) for a pseudo-terminal"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
plan 4
script -qc "$MT record -o $TMP/t -- $T slow 250 10" /dev/null < /dev/null | tr '\r' '\n' > "$TMP/tty"
live=$(grep -aE '^marktrace: [0-9]+ events, [0-9]+ events/s, [0-9]+ lost, [0-9.]+ s' "$TMP/tty")
ok $([ -n "$live" ]; echo $?) "a status line on the terminal ($(echo "$live" | wc -l) updates)"
most=$(echo "$live" | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
ok $(( most <= 0 || most >= 250 )) "it counted events while the program ran ($most of 250 before the end)"
like "$(cat "$TMP/tty")" "marktrace: 250 events recorded, 0 lost, in $TMP/t" "the summary at the end"
"$MT" record -o "$TMP/u" -- "$T" count 3 > /dev/null 2> "$TMP/notty"
is "$(grep -c 'events/s' "$TMP/notty")" "0" "no status line when stderr is not a terminal"
done_testing
