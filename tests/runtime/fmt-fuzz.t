#!/bin/sh
# libFuzzer on the marker format parser and the event serialiser for ten
# seconds (tests/fuzz/fmt_fuzz.c), seeded with every format of the kernel
# catalogue and of our tests.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
CLANG=${CLANG:-clang}
command -v "$CLANG" > /dev/null 2>&1 || skip_all "no clang for libFuzzer"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
C=$top_srcdir/runtime/core
"$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$C" \
	-o "$TMP/fuzz" "$top_srcdir/tests/fuzz/fmt_fuzz.c" "$C/mt_fmt.c" "$C/mt_event.c" > "$TMP/cc.log" 2>&1 ||
	skip_all "$CLANG cannot build a libFuzzer target: $(head -1 "$TMP/cc.log")"
plan 3
mkdir "$TMP/corpus"
awk -F '\t' 'NR > 1 { f = $2; if (f != "MARK_NOARGS") { f = substr(f, 2, length(f) - 2); print f > (dir "/m" NR) } }' \
	dir="$TMP/corpus" "$top_srcdir/tapsets/markers.tsv"
printf 'n %%d s %%s l %%ld' > "$TMP/corpus/t1"
printf 'ip #p%%lu x #8u%%llu h #2u%%hu' > "$TMP/corpus/t2"
is "$(ls "$TMP/corpus" | wc -l | tr -d ' ')" "$(awk 'NR > 1 && $2 != "MARK_NOARGS"' "$top_srcdir/tapsets/markers.tsv" | wc -l | awk '{ print $1 + 2 }')" \
	"the corpus holds every catalogue format"
"$TMP/fuzz" -max_total_time=${FUZZ_SECONDS:-10} -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$TMP/" "$TMP/corpus" > "$TMP/log" 2>&1
rc=$?
is "$rc" 0 "fuzzing the format parser for ${FUZZ_SECONDS:-10} s: no crash, leak, hang or insane field"
[ $rc = 0 ] || grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==|deadly' "$TMP/log" | head -20 | sed 's/^/# /'
like "$(grep stat::number_of_executed_units "$TMP/log")" "[0-9]{4,}" "it ran (thousands of inputs at least)"
done_testing
