#!/bin/sh
# libFuzzer on the CTF reader, the view formatter, the filter and the
# state module of timeline/export (tstate.c, tout.c) for ten seconds
# (tests/fuzz/ctf_read_fuzz.c), seeded with generated traces.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
. "$top_srcdir/tests/lib/fuzz.sh"
S=$top_srcdir/runtime/marktrace
L=$top_srcdir/runtime/tools
[ -f "$top_builddir/runtime/tools/syscall_names.h" ] || skip_all "build marktrace first (syscall_names.h)"
fuzz_build -I"$S" -I"$L" -I"$top_builddir/runtime/tools" "$top_srcdir/tests/fuzz/ctf_read_fuzz.c" \
	"$L/ctf_read.c" "$L/ctf_open.c" "$L/ctf_tsdl.c" "$L/ctf_trace.c" "$S/filter.c" "$S/vbuf.c" "$L/tstate.c" "$S/tout.c"
plan 3

# Seeds: the all-types trace (the target's fixed metadata) and the others.
gen "$TMP/all" < "$VIEWDIR/alltypes.trace"
gen "$TMP/basic" < "$VIEWDIR/basic.trace"
mkdir "$TMP/corpus"
for f in "$TMP"/all/channel0_*; do
	{ printf '\000'; cat "$f"; } > "$TMP/corpus/stream-${f##*_}"
	{ printf '\001'; cat "$TMP/all/metadata"; printf '\000'; cat "$f"; } > "$TMP/corpus/both-${f##*_}"
done
{ printf '\001'; cat "$TMP/basic/metadata"; printf '\000'; cat "$TMP/basic/channel0_1"; } > "$TMP/corpus/basic"
# a kernel trace for the state module (timeline-states.t's)
gen "$TMP/st" < "$top_srcdir/tests/runtime/timeline/states.trace"
for f in "$TMP"/st/channel0_*; do
	{ printf '\001'; cat "$TMP/st/metadata"; printf '\000'; cat "$f"; } > "$TMP/corpus/state-${f##*_}"
done
printf '\002fd > 3 and (name == "x*" || !c) or not s != "a"' > "$TMP/corpus/filter"
# A trace in LTTng's shape (bit fields, variants...: the generic decoder)
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 "$top_srcdir/tests/runtime/lttng/gen-compact.py" "$TMP/lt" --plain
	{ printf '\001'; cat "$TMP/lt/metadata"; printf '\000'; cat "$TMP/lt/stream_0"; } > "$TMP/corpus/lttng"
fi

# A user recording in the compact layout (runtime/core/mt_event.h: extended
# headers, thread events, renames)
if [ -x "$top_builddir/tests/runtime/compact" ] &&
   "$MT" record -q -o "$TMP/cp" -- "$top_builddir/tests/runtime/compact" rename > /dev/null 2>&1; then
	for f in "$TMP"/cp/channel0_*; do
		[ -s "$f" ] && { printf '\001'; cat "$TMP/cp/metadata"; printf '\000'; cat "$f"; } > "$TMP/corpus/compact-${f##*_}"
	done
fi

# The stored metadata must still be the one gentrace writes for alltypes.trace.
awk '/^static const char fixed_metadata/ { on = 1; next }
     on { end = sub(/;$/, ""); print; if (end) exit }' "$top_srcdir/tests/fuzz/ctf_read_fuzz.c" |
	sed -e 's/^\t"\(.*\)\\n"$/\1/' -e 's/\\t/\t/g' -e 's/\\"/"/g' -e 's/\\\\/\\/g' > "$TMP/fixed-metadata"
if diff "$TMP/all/metadata" "$TMP/fixed-metadata" > "$TMP/diff"; then
	ok 0 "the target's fixed metadata is the one of alltypes.trace"
else
	ok 1 "the target's fixed metadata is the one of alltypes.trace"
	head -10 "$TMP/diff" | sed 's/^/# /'
fi

fuzz_run
rc=$?
is "$rc" 0 "fuzzing for $FUZZ_SECONDS s: no crash, leak or hang"
[ $rc = 0 ] || fuzz_report
like "$(grep stat::number_of_executed_units "$TMP/log")" "[0-9]{3,}" "it ran (hundreds of inputs at least)"
done_testing
