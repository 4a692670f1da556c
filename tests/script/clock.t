#!/bin/sh
# Event timestamps are CLOCK_MONOTONIC: a program puts its own
# clock_gettime(CLOCK_MONOTONIC) in each event, which must come a little
# before the event's timestamp -- with the TSC clock that marktrace
# calibrates and steers (2 s: two steering rounds), and with clock_gettime.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MT=$top_builddir/runtime/marktrace/marktrace
T=$top_builddir/tests/script/target
[ -x "$MT" ] && [ -x "$T" ] || skip_all "build first"
T=$(own_copy "$T") || bail_out "cannot copy $T"
[ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" > /dev/null || skip_all "no babeltrace2"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
plan 6
# prints "events min-delta median-delta" in ns
deltas() {
	"$BABELTRACE2" --clock-cycles "$1" 2>/dev/null | sed -nE 's/^\[([0-9]+)\].*mono = ([0-9]+).*/\1 \2/p' |
		awk '{ print $1 - $2 }' | sort -n | awk '{ d[NR] = $1 } END { print NR, d[1] + 0, d[int((NR + 1) / 2)] + 0 }'
}
for clock in tsc monotonic; do
	if [ $clock = monotonic ]; then export MARKTAP_CLOCK=monotonic; fi
	"$MT" record -q -o "$TMP/$clock" -- "$T" clock 200 10 > /dev/null
	read -r n lo mid <<EOT
$(deltas "$TMP/$clock")
EOT
	is "$n" 200 "$clock clock: 200 events"
	ok $(( lo < 0 )) "$clock clock: no event is stamped before the program read the clock (min $lo ns)"
	ok $(( mid > 200000 )) "$clock clock: the median gap is small ($mid ns, under 200 us)"
done
done_testing
