# fuzz.sh - libFuzzer targets for shell tests; source it after tap.sh.
# Sets FUZZ (the target) and needs TMP (a scratch directory).
#   fuzz_build [CLANG ARGS...]  build $TMP/fuzz with ASan and UBSan, or
#                               skip the whole test when clang cannot
#   fuzz_run [LIBFUZZER ARGS...] fuzz $TMP/corpus for $FUZZ_SECONDS (10)
#                               seconds; its status, the log in $TMP/log
#   fuzz_report                 the log's findings as TAP comments
CLANG=${CLANG:-clang}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
fuzz_build() {
	command -v "$CLANG" > /dev/null 2>&1 || skip_all "no clang for libFuzzer"
	"$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o "$TMP/fuzz" "$@" > "$TMP/cc.log" 2>&1 ||
		skip_all "$CLANG cannot build a libFuzzer target: $(head -1 "$TMP/cc.log")"
	FUZZ=$TMP/fuzz
}
fuzz_run() {
	"$FUZZ" -max_total_time="$FUZZ_SECONDS" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$TMP/" "$@" "$TMP/corpus" > "$TMP/log" 2>&1
}
fuzz_report() {
	grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==|deadly' "$TMP/log" | head -20 | sed 's/^/# /'
}
