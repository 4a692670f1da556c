#!/bin/sh
# marktrace view of a known trace: exact lines, time modes, one trace in
# several folders, usage errors.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
plan 12

gen "$TMP/t" < "$VIEWDIR/basic.trace"
"$MT" view "$TMP/t" > "$TMP/out" 2> "$TMP/err"
ok $? "view exits 0"
if diff -u "$VIEWDIR/basic.expected" "$TMP/out" > "$TMP/diff"; then ok 0 "exactly the expected lines"
else ok 1 "exactly the expected lines"; sed 's/^/# /' "$TMP/diff"; fi
is "$(cat "$TMP/err")" "" "nothing on stderr"

is "$("$MT" view --no-delta "$TMP/t" | sed -n 2p)" \
   "[08:26:40.123458789] cpu1 other[99/100] noargs" "--no-delta drops the (+delta)"
is "$("$MT" view --no-delta --absolute "$TMP/t" | sed -n 1p)" \
   '[2026-12-02 08:26:40.123457789] cpu0 demo[1234/1235] fs_open: fd=3 filename="/etc/passwd"' \
   "--absolute shows the date"
is "$("$MT" view --no-delta --relative "$TMP/t" | sed -n '1p;9p' | cut -d' ' -f1 | tr '\n' ' ')" \
   "[0.000000000] [0.000006000] " "--relative counts from the first event"
is "$(TZ=Europe/Paris "$MT" view --no-delta "$TMP/t" | head -1 | cut -c1-10)" "[09:26:40." "local time zone"

# The same events split in two traces (kernel/ and ust/ share the clock) merge.
sed -e 's/^trace \./trace kernel domain=kernel/' -e '/^stream 1/,$d' "$VIEWDIR/basic.trace" > "$TMP/k.trace"
{ sed -e 's/^trace \./trace ust/' -e '/^stream 0/,/^stream 1/{/^stream 1/!d}' "$VIEWDIR/basic.trace"; } > "$TMP/u.trace"
cat "$TMP/k.trace" "$TMP/u.trace" | gen "$TMP/two"
"$MT" view "$TMP/two" > "$TMP/out2"
ok $? "view of kernel/ + ust/"
if diff -u "$VIEWDIR/basic.expected" "$TMP/out2" > "$TMP/diff"; then ok 0 "two traces merge on their timestamps"
else ok 1 "two traces merge on their timestamps"; sed 's/^/# /' "$TMP/diff"; fi

"$MT" view > /dev/null 2> "$TMP/err"
is "$?" 2 "no directory: exit 2"
"$MT" view --bogus "$TMP/t" > /dev/null 2> "$TMP/err"
is "$?" 2 "unknown option: exit 2"
"$MT" view --help | grep -q -- --filter
ok $? "--help lists --filter"
done_testing
