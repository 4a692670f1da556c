#!/bin/sh
# The view tests again, on a build of view/stats with AddressSanitizer and
# UndefinedBehaviorSanitizer: damaged traces must not even touch a byte
# they should not.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
CC=${CC:-cc}
TESTS_HERE="view-basic.t view-order.t view-filter.t view-stats.t view-corrupt.t view-symbols.t view-dlopen.t"
TMPA=$(mktemp -d "${TMPDIR:-/tmp}/mt-asan.XXXXXX") || exit 1
trap 'rm -rf "$TMPA"' EXIT
S=$top_srcdir/runtime/marktrace
L=$top_srcdir/runtime/tools
if ! $CC -std=gnu11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -I"$S" -I"$L" -o "$TMPA/marktrace-asan" \
	"$top_srcdir/tests/runtime/view/view-main.c" "$S/cmd_view.c" "$S/cmd_stats.c" \
	"$L/ctf_read.c" "$L/ctf_open.c" "$L/ctf_tsdl.c" "$L/ctf_trace.c" "$S/filter.c" "$S/vbuf.c" "$S/view_sym.c" \
	$(pkg-config --cflags --libs libelf 2>/dev/null || echo -lelf) > "$TMPA/cc.log" 2>&1; then
	skip_all "$CC cannot build with -fsanitize=address,undefined"
fi
set -- $TESTS_HERE
plan $#
# A sanitizer report exits 99: never mistaken for the exit 1 of a clean error.
ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
LSAN_OPTIONS=exitcode=99
export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
for t in "$@"; do
	MARKTRACE=$TMPA/marktrace-asan sh "$top_srcdir/tests/runtime/$t" > "$TMPA/out" 2>&1
	rc=$?
	if [ $rc = 0 ] && ! grep -q '^not ok' "$TMPA/out" && ! grep -q 'Sanitizer\|runtime error' "$TMPA/out"; then
		ok 0 "$t under ASan/UBSan"
	else
		ok 1 "$t under ASan/UBSan (exit $rc)"
		grep -E '^not ok|Sanitizer|runtime error|^#' "$TMPA/out" | head -30 | sed 's/^/# /'
	fi
done
done_testing
