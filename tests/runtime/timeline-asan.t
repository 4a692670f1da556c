#!/bin/sh
# timeline-asan.t - marktrace timeline and export built with AddressSanitizer
# and UndefinedBehaviorSanitizer: timeline-states.t again, then damaged
# traces (bytes overwritten at random, files cut short, fixed seeds): each
# run ends with the reader's error or a picture, exit 0 or 1, and the
# sanitizers see nothing.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
CC=${CC:-cc}
B=$top_builddir
S=$top_srcdir/runtime/marktrace
L=$top_srcdir/runtime/tools
GEN=$B/tests/runtime/view/gentrace
[ -x "$GEN" ] || skip_all "no gentrace (make check builds it)"
[ -f "$B/runtime/marktrace/timeline_js.h" ] && [ -f "$B/runtime/tools/syscall_names.h" ] ||
	skip_all "build marktrace first (generated headers)"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3"
TMPA=$(mktemp -d "${TMPDIR:-/tmp}/mt-tl-asan.XXXXXX") || exit 1
trap 'rm -rf "$TMPA"' EXIT
if ! $CC -std=gnu11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -I"$S" -I"$L" -I"$B/runtime/marktrace" -I"$B/runtime/tools" -o "$TMPA/marktrace-asan" \
	"$top_srcdir/tests/runtime/timeline/main-asan.c" "$S/cmd_view.c" "$S/cmd_stats.c" \
	"$S/cmd_timeline.c" "$S/cmd_export.c" "$L/tstate.c" "$S/tlane.c" "$S/tout.c" \
	"$L/ctf_read.c" "$L/ctf_open.c" "$L/ctf_tsdl.c" "$L/ctf_trace.c" "$S/filter.c" "$S/vbuf.c" "$S/view_sym.c" \
	$(pkg-config --cflags --libs libelf 2>/dev/null || echo -lelf) > "$TMPA/cc.log" 2>&1; then
	skip_all "$CC cannot build with -fsanitize=address,undefined"
fi
plan 4
ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
LSAN_OPTIONS=exitcode=99
export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
MT=$TMPA/marktrace-asan

MARKTRACE=$MT sh "$top_srcdir/tests/runtime/timeline-states.t" >"$TMPA/out" 2>&1
rc=$?
if [ $rc = 0 ] && ! grep -q '^not ok' "$TMPA/out" && ! grep -q 'Sanitizer\|runtime error' "$TMPA/out"; then
	ok 0 "timeline-states.t under ASan/UBSan"
else
	ok 1 "timeline-states.t under ASan/UBSan (exit $rc)"
	grep -E '^not ok|Sanitizer|runtime error|^#' "$TMPA/out" | head -30 | sed 's/^/# /'
fi

# damage DIR SEED: overwrite 1-20 bytes of one stream file at random, and cut it
# short one time in three
damage() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import os, random, sys
random.seed(int(sys.argv[2]))
files = sorted(os.path.join(r, f) for r, _, fs in os.walk(sys.argv[1]) for f in fs if f.startswith("channel"))
f = random.choice(files)
b = bytearray(open(f, "rb").read())
for _ in range(random.randint(1, 20)):
    if b:
        b[random.randrange(len(b))] = random.randrange(256)
if random.random() < 0.33:
    b = b[:random.randrange(len(b) + 1)]
open(f, "wb").write(b)
PY
}
"$GEN" "$TMPA/good" < "$top_srcdir/tests/runtime/timeline/states.trace"
runs=0 bad=0 errors=0
for seed in $(seq 1 60); do
	rm -rf "$TMPA/t" && cp -r "$TMPA/good" "$TMPA/t" && damage "$TMPA/t" "$seed"
	for cmd in "timeline $TMPA/t -o $TMPA/o.html" "timeline $TMPA/t -o $TMPA/o.svg" "export $TMPA/t -o $TMPA/o.json"; do
		# shellcheck disable=SC2086
		"$MT" $cmd >"$TMPA/run.out" 2>&1
		rc=$?
		runs=$((runs + 1))
		[ $rc = 1 ] && errors=$((errors + 1))
		if [ $rc -gt 1 ] || grep -q 'Sanitizer\|runtime error' "$TMPA/run.out"; then
			bad=$((bad + 1))
			echo "# seed $seed: $cmd: exit $rc"
			head -12 "$TMPA/run.out" | sed 's/^/#   /'
		fi
	done
done
is "$bad" 0 "$runs runs on damaged traces: no sanitizer report, exit 0 or 1"
like "$errors" '^[1-9]' "the damage was seen ($errors runs stopped with an error)"
# the message names the file and the byte
rm -rf "$TMPA/t" && cp -r "$TMPA/good" "$TMPA/t"
printf 'XXXX' | dd of="$TMPA/t/channel0_1" bs=1 seek=0 conv=notrunc 2>/dev/null
"$MT" export "$TMPA/t" -o "$TMPA/o.json" 2>"$TMPA/err"
like "$?:$(cat "$TMPA/err")" "^1:marktrace: $TMPA/t/channel0_1: byte 0: " "an error names the file and the byte"
done_testing
