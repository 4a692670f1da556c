#!/bin/sh
# babeltrace2 (the independent CTF reader) and marktrace view show the same
# values for every event: every field type, context, time, lost events.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
BT=${BABELTRACE2:-$(command -v babeltrace2)}
[ -n "$BT" ] && [ -x "$BT" ] || skip_all "babeltrace2 is not installed"
plan 12

# agree DIR DESCRIPTION: compare the normalized outputs
agree() {
	"$BT" "$1" > "$TMP/bt.txt" 2> "$TMP/bt.err"
	ok $? "$2: babeltrace2 reads it"
	"$MT" view --statedump --no-delta --no-symbols "$1" > "$TMP/mt.txt"
	ok $? "$2: marktrace view reads it"
	awk -v mode=bt -f "$VIEWDIR/normalize.awk" "$TMP/bt.txt" > "$TMP/bt.n"
	awk -v mode=mt -f "$VIEWDIR/normalize.awk" "$TMP/mt.txt" > "$TMP/mt.n"
	if [ -s "$TMP/bt.n" ] && diff "$TMP/bt.n" "$TMP/mt.n" > "$TMP/diff"; then
		ok 0 "$2: the same $(wc -l < "$TMP/mt.n" | tr -d ' ') events and values"
	else
		ok 1 "$2: the same events and values"
		head -20 "$TMP/diff" | sed 's/^/# /'
	fi
	# lost events: "discarded N events ... stream "DIR/channel0_C"" vs "lost N events on cpuC"
	is "$(sed -n 's/.*discarded \([0-9]*\) events.*channel0_\([0-9]*\)".*/\1 cpu\2/p' "$TMP/bt.err" | sort)" \
	   "$(sed -n 's/.*lost \([0-9]*\) events\{0,1\} on \(cpu[0-9]*\).*/\1 \2/p' "$TMP/mt.txt" | sort)" \
	   "$2: the same discarded-event counts"
}

gen "$TMP/all" < "$VIEWDIR/alltypes.trace"
agree "$TMP/all" "every format type"

{ echo "trace ."; echo "bulk 20000 3"; } | gen "$TMP/bulk"
agree "$TMP/bulk" "20000 events on 3 CPUs"

# A trace recorded by marktrace record, when the demo program is built.
DEMO=$top_builddir/runtime/demo/marktap-demo
if [ -x "$DEMO" ] && "$MT" record -o "$TMP/rec" -- "$DEMO" 3 > /dev/null 2>&1; then
	agree "$TMP/rec" "a recording of marktap-demo"
else
	for i in 1 2 3 4; do echo "ok $((_tap_n + 1)) # SKIP marktrace record of the demo did not run"; _tap_n=$((_tap_n + 1)); done
fi
done_testing
