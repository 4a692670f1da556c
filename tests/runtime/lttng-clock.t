#!/bin/sh
# Our clock is LTTng-UST's: CLOCK_MONOTONIC in ns, its offset the
# realtime - monotonic difference at the start, the boot id as uuid, and
# absolute (babeltrace2 takes LTTng's clocks as absolute and refuses to
# mix absolute and non-absolute ones).  A program fires an LTTng-UST
# tracepoint and a marktap marker in turn, a millisecond apart
# (lttng/mixed.c), recorded by lttng and marktrace at once: babeltrace2
# merges the two traces without --clock-force-correlate, every event in
# the order the program fired it; again 100 us apart, with our clock read
# from the TSC and with clock_gettime, so that the two clocks must agree
# to better than that.  Skipped where lttng cannot run.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
LT=$top_srcdir/tests/runtime/lttng
B=$top_builddir
BT=${BABELTRACE2:-$(command -v babeltrace2)}
[ -n "$BT" ] && [ -x "$BT" ] || skip_all "babeltrace2 is not installed"
for tool in lttng lttng-sessiond; do
	command -v $tool > /dev/null 2>&1 || skip_all "$tool is not installed (lttng-tools)"
done
[ -f "$B/runtime/.libs/libmarktap.so" ] || skip_all "build first (no libmarktap.so)"
${CC:-cc} -O1 -I"$LT" -I"$top_srcdir/runtime/include" -o "$TMP/mixed" "$LT/mixed.c" \
	-L"$B/runtime/.libs" -Wl,-rpath,"$B/runtime/.libs" -lmarktap -llttng-ust -ldl > "$TMP/cc.log" 2>&1 ||
	skip_all "cannot build an LTTng-UST program (liblttng-ust-dev): $(head -1 "$TMP/cc.log")"

# A session daemon: the one running, else one of ours, stopped at the end;
# the tests that use lttng take turns (lttng-read.t says why).
. "$top_srcdir/tests/lib/lttng.sh"
lttng_take_turns
S=mtclock-$$
cleanup() {
	lttng destroy "$S" > /dev/null 2>&1
	lttng destroy "$S-b" > /dev/null 2>&1
	lttng_sessiond_stop
	rm -rf "$TMP"
}
trap cleanup EXIT
lttng_sessiond skip_all
plan 17

N=20
lttng create "$S" --output="$TMP/rec/lt" > "$TMP/lttng.log" 2>&1 &&
	lttng enable-event -s "$S" -u 'mtlt:ints' >> "$TMP/lttng.log" 2>&1 &&
	lttng start "$S" >> "$TMP/lttng.log" 2>&1 ||
	{ sed 's/^/# /' "$TMP/lttng.log"; skip_all "lttng could not start a session"; }
"$MT" record -q -o "$TMP/rec/mt" -- "$TMP/mixed" $N
ok $? "marktrace records the program while lttng does"
lttng stop "$S" >> "$TMP/lttng.log" 2>&1 && lttng destroy "$S" >> "$TMP/lttng.log" 2>&1
ok $? "lttng records it"

# the clock blocks, as babeltrace2 reads them
clock() { "$BT" --output-format=ctf-metadata "$(dirname "$(find "$1" -name metadata | head -1)")" |
	sed -n '/^clock {/,/^}/p'; }
clock "$TMP/rec/lt" > "$TMP/lt.clock"
clock "$TMP/rec/mt" > "$TMP/mt.clock"
field() { sed -n "s/^[[:space:]]*$1 = \\([^;]*\\);.*/\\1/p" "$2" | tr -d '"'; }
is "$(field name "$TMP/mt.clock") $(field freq "$TMP/mt.clock")" \
   "$(field name "$TMP/lt.clock") $(field freq "$TMP/lt.clock")" "the same clock name and frequency as LTTng-UST's"
is "$(field uuid "$TMP/mt.clock")" "$(field uuid "$TMP/lt.clock")" "the same uuid (the boot id)"
is "$(field absolute "$TMP/mt.clock")" "true" "ours says it is absolute"
# offset: LTTng's in ns; ours in offset_s and offset
lto=$(field offset "$TMP/lt.clock")
mto=$(( $(field offset_s "$TMP/mt.clock") * 1000000000 + $(field offset "$TMP/mt.clock") ))
d=$((lto - mto))
[ $d -lt 0 ] && d=$((-d))
ok $((d > 10000000)) "the same offset (realtime - monotonic) within 10 ms: ${d} ns apart"

# babeltrace2 merges the two, in either order, without --clock-force-correlate
# order FILE: the events as L<i> (LTTng's mtlt:ints) and M<i> (our mix_step)
order() {
	sed -n -e 's/.* mtlt:ints: .* u16 = 6\([0-9]*\),.*/L\1/p' -e 's/.* mix_step: .* i = \([0-9]*\) }$/M\1/p' "$1" |
		sed 's/^L0*\([0-9]\)/L\1/' | tr '\n' ' ' | sed 's/ $//'
}
want=$(i=0; while [ $i -lt $N ]; do printf 'L%d M%d ' $i $i; i=$((i + 1)); done | sed 's/ $//')
"$BT" "$TMP/rec/mt" "$TMP/rec/lt" > "$TMP/bt1" 2> "$TMP/bt1.err"
is "$?:$(grep -c -i 'absolute' "$TMP/bt1.err")" "0:0" "babeltrace2 OURS LTTNG: merged, no clock error"
is "$(order "$TMP/bt1")" "$want" "... every event in the order the program fired it"
"$BT" "$TMP/rec/lt" "$TMP/rec/mt" > "$TMP/bt2" 2> "$TMP/bt2.err"
is "$?:$(order "$TMP/bt2")" "0:$want" "babeltrace2 LTTNG OURS: the same"
# marktrace view reads both (two recordings: -r), in the same order
"$MT" view -r --no-delta "$TMP/rec" > "$TMP/mv" 2> "$TMP/mv.err"
is "$?:$(cat "$TMP/mv.err")" "0:" "marktrace view -r of the two"
is "$(sed -n -e 's/.* mtlt:ints: .* u16=6\([0-9]*\) .*/L\1/p' -e 's/.* mix_step: i=\([0-9]*\)$/M\1/p' "$TMP/mv" |
	sed 's/^L0*\([0-9]\)/L\1/' | tr '\n' ' ' | sed 's/ $//')" "$want" "... in the same order"

# 100 us apart: the clocks agree to better than that (TSC and clock_gettime)
# both NAME N US [ENV...]: lttng and marktrace record mixed N US into $TMP/NAME
both() {
	_d=$TMP/$1 _n=$2 _us=$3
	shift 3
	lttng create "$S-b" --output="$_d/lt" >> "$TMP/lttng.log" 2>&1 &&
		lttng enable-event -s "$S-b" -u 'mtlt:ints' >> "$TMP/lttng.log" 2>&1 &&
		lttng start "$S-b" >> "$TMP/lttng.log" 2>&1 &&
		env "$@" "$MT" record -q -o "$_d/mt" -- "$TMP/mixed" "$_n" "$_us" &&
		lttng stop "$S-b" >> "$TMP/lttng.log" 2>&1 && lttng destroy "$S-b" >> "$TMP/lttng.log" 2>&1
}
# gaps FILE: the shortest and longest time between two of the program's
# events as babeltrace2 printed them, in us: the program paused at least
# 100 us between any two, so the shortest falls short of that by as much
# as the clocks disagree
gaps() {
	grep -E ' (mtlt:ints|mix_step): ' "$1" |
		sed -n 's/^\[[0-9:]*:\([0-9][0-9]\)\.\([0-9]\{9\}\)\].*/\1 \2/p' |
		awk '{ t = $1 * 1e9 + $2; if (NR > 1) { d = t - p; if (d < 0) d += 60e9; if (min == "" || d < min) min = d; if (d > max) max = d } p = t }
		     END { printf "%d %d", min / 1000, max / 1000 }'
}
N2=100
want2=$(i=0; while [ $i -lt $N2 ]; do printf 'L%d M%d ' $i $i; i=$((i + 1)); done | sed 's/ $//')
for clk in tsc monotonic; do
	env=
	[ $clk = monotonic ] && env=MARKTAP_CLOCK=monotonic
	both "$clk" $N2 100 $env
	ok $? "lttng and marktrace ($clk clock) record $N2 pairs 100 us apart"
	"$BT" "$TMP/$clk/mt" "$TMP/$clk/lt" > "$TMP/$clk.bt" 2> "$TMP/$clk.err"
	is "$?:$(order "$TMP/$clk.bt")" "0:$want2" "... babeltrace2 merges them in the order they were fired"
	set -- $(gaps "$TMP/$clk.bt")
	ok $(( ${1:-0} < 50 )) "... the clocks agree within 50 us: events 100 us apart are $1 to $2 us apart"
done
done_testing
