#!/bin/sh
# libFuzzer on the marker format parser and the event serialiser for ten
# seconds (tests/fuzz/fmt_fuzz.c), seeded with every format of the kernel
# catalogue and of our tests.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/fuzz.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
C=$top_srcdir/runtime/core
fuzz_build -I"$C" "$top_srcdir/tests/fuzz/fmt_fuzz.c" "$C/mt_fmt.c" "$C/mt_event.c"
plan 3
mkdir "$TMP/corpus"
awk -F '\t' 'NR > 1 { f = $2; if (f != "MARK_NOARGS") { f = substr(f, 2, length(f) - 2); print f > (dir "/m" NR) } }' \
	dir="$TMP/corpus" "$top_srcdir/tapsets/markers.tsv"
printf 'n %%d s %%s l %%ld' > "$TMP/corpus/t1"
printf 'ip #p%%lu x #8u%%llu h #2u%%hu' > "$TMP/corpus/t2"
is "$(ls "$TMP/corpus" | wc -l | tr -d ' ')" "$(awk 'NR > 1 && $2 != "MARK_NOARGS"' "$top_srcdir/tapsets/markers.tsv" | wc -l | awk '{ print $1 + 2 }')" \
	"the corpus holds every catalogue format"
fuzz_run
rc=$?
is "$rc" 0 "fuzzing the format parser for $FUZZ_SECONDS s: no crash, leak, hang or insane field"
[ $rc = 0 ] || fuzz_report
like "$(grep stat::number_of_executed_units "$TMP/log")" "[0-9]{4,}" "it ran (thousands of inputs at least)"
done_testing
