#!/bin/sh
# A short libFuzzer run over lexer, preprocessor and parser (clang only),
# seeded with the corpus.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
command -v clang >/dev/null 2>&1 || skip_all "clang not installed"
S="$top_srcdir/translator"
# skipped only where clang has no libFuzzer; our sources failing to build
# for it is a failure
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' > "$TMP/probe.c"
clang -fsanitize=fuzzer "$TMP/probe.c" -o "$TMP/probe" 2>/dev/null ||
	skip_all "clang cannot build libFuzzer targets here"
plan 2
clang -g -O1 -fsanitize=fuzzer,address,undefined -I"$S" -I"$top_srcdir/runtime/core" \
	-I"$top_srcdir/runtime/tools" -I"$top_srcdir/runtime/proto" -I"$top_srcdir/runtime/include" \
	"$top_srcdir/tests/fuzz/translator_fuzz.c" "$S/util.c" "$S/lex.c" "$S/pp.c" "$S/parse.c" "$S/print.c" \
	-o "$TMP/fuzz" 2>"$TMP/cc.err"
rc=$?
ok $rc "the lexer, preprocessor and parser build as a libFuzzer target"
[ $rc = 0 ] || { sed 's/^/# /' "$TMP/cc.err" | head -20; exit 1; }
mkdir "$TMP/corpus"
cp "$top_srcdir"/tests/translator/corpus/*.stp "$top_srcdir"/tests/translator/bad/*.stp "$TMP/corpus/"
# The translator never frees (one arena per command): leaks are not bugs
# here, but they add up, some 60 KB a run, so the run count is bounded too
# (a fast machine ran past the memory limit in 10 s).
ASAN_OPTIONS=detect_leaks=0 "$TMP/fuzz" -detect_leaks=0 -artifact_prefix="$TMP/" -max_total_time=10 -runs=12000 \
	-timeout=5 -rss_limit_mb=2048 "$TMP/corpus" > "$TMP/log" 2>&1
rc=$?
ok $rc "10 s or 12 000 runs of fuzzing found no crash"
[ $rc = 0 ] || tail -30 "$TMP/log" | sed 's/^/# /'
done_testing
