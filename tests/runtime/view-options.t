#!/bin/sh
# An LTTng user's first hour with marktrace view and stats: options after
# the directory; a directory of several recordings refused without -r;
# an enum field compared with its label; --filter names that match
# nothing said; libmarktap's state dump hidden from view and stats alike
# unless --statedump.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
plan 40

gen "$TMP/t" < "$VIEWDIR/basic.trace"

# options after the operand, in every reading command
"$MT" view --no-delta --relative "$TMP/t" > "$TMP/before" 2>&1
"$MT" view "$TMP/t" --relative --no-delta > "$TMP/after" 2>&1
is "$?:$(cmp "$TMP/before" "$TMP/after" && echo same)" "0:same" "view DIR --relative --no-delta: as before DIR"
"$MT" view "$TMP/t" -f fs_open --no-delta > "$TMP/o" 2>&1
is "$?:$(grep -c fs_open "$TMP/o"):$(grep -v ' lost ' "$TMP/o" | grep -vc fs_open)" "0:4:0" \
	"view DIR -f GLOB: the filter taken (and loss lines, as always)"
"$MT" stats "$TMP/t" -r > "$TMP/o" 2>&1
like "$?:$(cat "$TMP/o")" "^0:traces: +1" "stats DIR -r"
"$MT" export "$TMP/t" -o "$TMP/e.json" > /dev/null 2>&1
ok $? "export DIR -o FILE"
"$MT" list "$top_builddir/runtime/marktrace/marktrace" --help > "$TMP/o" 2>&1
like "$?:$(head -1 "$TMP/o")" "^0:usage: marktrace list" "list BINARY --help"

# one recording, or -r
{ sed 's/^trace \./trace a/' "$VIEWDIR/basic.trace"; sed 's/^trace \./trace b/' "$VIEWDIR/basic.trace"; } |
	gen "$TMP/many"
for cmd in view stats export; do
	"$MT" $cmd "$TMP/many/" > "$TMP/o" 2> "$TMP/err"
	is "$?:$(grep -c . < "$TMP/o")" "1:0" "$cmd of a folder of two recordings: refused, no output"
	like "$(cat "$TMP/err")" "^marktrace: $cmd: $TMP/many/ is not one trace: 2 traces under it \\(a, b\\): give one of them, or -r \\(--recursive\\) to merge them all\$" \
		"... the message names them and -r"
done
"$MT" timeline "$TMP/many" -o "$TMP/tl.html" 2> "$TMP/err"
like "$?:$(cat "$TMP/err")" "^1:marktrace: timeline: .* is not one trace" "timeline too"
"$MT" view -r --no-delta "$TMP/many" > "$TMP/o"
is "$?:$(grep -c fs_open "$TMP/o")" "0:8" "view -r merges them"
"$MT" stats --recursive "$TMP/many" > "$TMP/o"
like "$?:$(cat "$TMP/o")" "^0:traces: +2" "stats --recursive counts both"
# an LTTng session's output (ust/uid/0/64-bit, ust/uid/0/32-bit) and
# record --kernel's (kernel/, ust/) are one recording each
{ sed 's,^trace \.,trace ust/uid/0/64-bit,' "$VIEWDIR/basic.trace"
  sed 's,^trace \.,trace ust/uid/0/32-bit,' "$VIEWDIR/basic.trace"; } | gen "$TMP/lt"
"$MT" view "$TMP/lt" > "$TMP/o" 2> "$TMP/err"
is "$?:$(grep -c fs_open "$TMP/o"):$(cat "$TMP/err")" "0:8:" "an LTTng session's ust/uid/0/{32,64}-bit: one recording"
sed 's,^trace \.,trace deep/er/t,' "$VIEWDIR/basic.trace" | gen "$TMP/one"
"$MT" view "$TMP/one" > "$TMP/o" 2> "$TMP/err"
is "$?:$(grep -c fs_open "$TMP/o")" "0:4" "one trace further down: read"

# an enum field compares with its label (and as its integer)
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 "$top_srcdir/tests/runtime/lttng/gen-compact.py" "$TMP/compact/kernel"
	n() { "$MT" view --no-delta --filter "$1" "$TMP/compact" | grep -c .; }
	all=$(n 'bits')
	two=$(n 'e2 == 2')
	like "$all:$two" "^[1-9][0-9]*:[1-9][0-9]*\$" "the enum trace: $all events, $two of value 2"
	is "$(n 'e2 == "TWO"')" "$two" "e2 == \"TWO\": the label's events"
	is "$(n 'e2 == TWO')" "$two" "e2 == TWO (a bare word)"
	is "$(n 'e2 != "TWO"')" "$((all - two))" "e2 != \"TWO\": the others"
	is "$(n 'e2 == "T*"')" "$(n 'e2 == 2 || e2 == 3')" "e2 == \"T*\": a glob on the labels (TWO, THREE)"
	is "$(n 'e2 == "NONE"')" 0 "a label no value has: nothing"
	is "$(n 'e2 < 2')" "$(n 'e2 == "ZERO" || e2 == "ONE"')" "integers still compare with the value"
else
	skip 7 "no /usr/bin/python3 to write the enum trace"
fi

# --filter names that no event has are said (the filter stays valid)
"$MT" view --filter 'fs_opne || fdd > 2 || fd > 2' "$TMP/t" > "$TMP/o" 2> "$TMP/err"
is "$?:$(cat "$TMP/o")" "0:$("$MT" view --filter 'fd > 2' "$TMP/t")" "a filter with misspelt names: exit 0, what the rest matches"
like "$(cat "$TMP/err")" "marktrace: view: warning: --filter: 'fs_opne' matches no event name of the trace" \
	"... the glob that matches no event named"
like "$(cat "$TMP/err")" "marktrace: view: warning: --filter: no event of the trace has a field 'fdd'" \
	"... the field no event has named"
is "$(grep -c "'fd'" "$TMP/err")" 0 "... not the field some events have"
"$MT" view --filter 'fd > 2 && filename == "/etc/*" || noargs' "$TMP/t" > /dev/null 2> "$TMP/err"
is "$(cat "$TMP/err")" "" "a filter whose names all exist: no warning"

# the state dump: hidden from view and stats alike, shown with --statedump
DEMO=$top_builddir/runtime/demo/marktap-demo
if [ -x "$DEMO" ] && "$MT" record -q -o "$TMP/rec" -- "$DEMO" 2 > /dev/null 2>&1; then
	"$MT" view --no-delta "$TMP/rec" > "$TMP/v"
	"$MT" stats "$TMP/rec" > "$TMP/s"
	is "$(grep -c marktap_statedump "$TMP/v"):$(grep -c marktap_statedump "$TMP/s")" "0:0" \
		"view and stats: no state dump event (thread, start, bin_info)"
	is "$(awk '/^events:/ { print $2 }' "$TMP/s")" "$(grep -c . < "$TMP/v")" "stats counts what view shows"
	is "$(awk '/^streams:$/ { on = 1; next } on && $1 ~ /^[0-9]+$/ { s += $2 } END { print s }' "$TMP/s")" \
	   "$(grep -c . < "$TMP/v")" "... and so do its streams"
	"$MT" view --no-delta "$TMP/rec" --statedump > "$TMP/vs"
	"$MT" stats --statedump "$TMP/rec" > "$TMP/ss"
	like "$(grep -c 'marktap_statedump:thread: pid=[0-9]* name="marktap-demo"' "$TMP/vs")" "^[1-9]" \
		"--statedump: view shows the thread events"
	like "$(grep -c 'marktap_statedump:bin_info: baddr=0x' "$TMP/vs"):$(grep -c 'marktap_statedump:start$' "$TMP/vs")" \
		"^[1-9][0-9]*:1\$" "... the start and bin_info events"
	is "$(grep -v marktap_statedump "$TMP/vs")" "$(cat "$TMP/v")" "... and every other line as without it"
	is "$(awk '/^events:/ { print $2 }' "$TMP/ss")" "$(grep -c . < "$TMP/vs")" "stats --statedump counts them"
	like "$(cat "$TMP/ss")" "[1-9][0-9]*  marktap_statedump:thread" "... per marker too"
	if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" > /dev/null; then
		is "$("$BABELTRACE2" "$TMP/rec" | grep -c .)" "$(grep -c . < "$TMP/vs")" \
			"view --statedump shows as many events as babeltrace2"
	else
		skip 1 "babeltrace2 is not installed"
	fi
	# (demo_start and demo_end are a slice's begin and end: "B" and "E")
	"$MT" export "$TMP/rec" > "$TMP/x.json"
	is "$(grep -c '"name":"marktap_statedump:' "$TMP/x.json"):$(grep -c '"ph":"[iBE]"' "$TMP/x.json")" \
	   "0:$(grep -c . < "$TMP/v")" "export: an instant or slice mark per event view shows, none for the state dump"
	"$MT" export --statedump "$TMP/rec" > "$TMP/xs.json"
	is "$(grep -c '"ph":"[iBE]"' "$TMP/xs.json")" "$(grep -c . < "$TMP/vs")" "export --statedump: one per event of view --statedump"
	"$MT" view --no-delta --relative "$TMP/rec" | head -1 > "$TMP/first"
	like "$(cat "$TMP/first")" '^\[0\.000000000\] .* demo_start: rounds=2$' \
		"--relative counts from the first event shown, not a hidden one"
else
	skip 12 "marktrace record of the demo did not run"
fi
done_testing
