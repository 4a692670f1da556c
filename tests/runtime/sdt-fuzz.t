#!/bin/sh
# libFuzzer on the SDT note reader and operand parser for ten seconds
# (tests/fuzz/sdt_fuzz.c), seeded with real ELF files that have probes:
# tests/script/sdt-target, its library, and libmarktap programs.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/fuzz.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
L=$top_srcdir/runtime/tools
fuzz_build -I"$L" "$top_srcdir/tests/fuzz/sdt_fuzz.c" "$L/mt_sdt.c"
plan 3
mkdir "$TMP/corpus"
n=0
for f in "$top_builddir/tests/script/sdt-target" "$top_builddir/tests/script/.libs/libsdtlib.so" \
	"$top_builddir/tests/script/target" "$top_builddir/bench/ust/emit-mt"; do
	[ -f "$f" ] && cp "$f" "$TMP/corpus/seed$n" && n=$((n + 1))
done
printf -- '-4@%%edi 8@-16(%%rbp,%%rax,8) 2@$-5 1@%%r9b' > "$TMP/corpus/args"
ok $(( n < 2 )) "the corpus holds ELF files with SDT probes ($n)"
fuzz_run -max_len=65536
rc=$?
is "$rc" 0 "fuzzing the SDT reader for $FUZZ_SECONDS s: no crash, leak, hang or insane probe"
[ $rc = 0 ] || fuzz_report
like "$(grep stat::number_of_executed_units "$TMP/log")" "[0-9]{3,}" "it ran (hundreds of inputs at least)"
done_testing
