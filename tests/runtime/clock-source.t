#!/bin/sh
# Which clock a user session's timestamps come from, and that a trace says
# it.  The TSC wherever it is invariant and checked, not only
# under the `tsc` clocksource: the kernel's clocksource and the CPU flags
# are replaced through MARKTAP_CLOCKSOURCE_FILE and MARKTAP_CPUINFO_FILE.
# Under kvm-clock the TSC is used and steered: a program's own
# CLOCK_MONOTONIC readings come a little before its events' timestamps
# (as tests/script/clock.t, 2 s: two steering rounds).  hpet, a CPU
# without nonstop_tsc, MARKTAP_CLOCK=monotonic: clock_gettime, with why.
# The calibration pins marktrace to each CPU in turn: the traced command
# still gets marktrace's own CPUs.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MT=$top_builddir/runtime/marktrace/marktrace
T=$top_builddir/tests/script/target
[ -x "$MT" ] && [ -x "$T" ] || skip_all "build first"
[ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" > /dev/null || skip_all "no babeltrace2"
case $(uname -m) in x86_64) ;; *) skip_all "no TSC on $(uname -m)" ;; esac
flags=$(grep -m1 '^flags' /proc/cpuinfo)
case $flags in *" constant_tsc "*" nonstop_tsc "*|*" constant_tsc "*" nonstop_tsc") ;;
*) skip_all "this CPU's TSC is not invariant (no constant_tsc and nonstop_tsc)" ;; esac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
plan 16
clock_of() { "$MT" stats "$1" | sed -n 's/^clock: *//p'; }
# "events min-delta median-delta max-delta" in ns: event timestamp minus
# the program's own reading just before the hit
deltas() {
	"$BABELTRACE2" --clock-cycles "$1" 2>/dev/null | sed -nE 's/^\[([0-9]+)\].*mono = ([0-9]+).*/\1 \2/p' |
		awk '{ print $1 - $2 }' | sort -n |
		awk '{ d[NR] = $1 } END { print NR, d[1] + 0, d[int((NR + 1) / 2)] + 0, d[NR] + 0 }'
}

echo kvm-clock > "$TMP/kvm"
MARKTAP_CLOCKSOURCE_FILE=$TMP/kvm "$MT" record -q -o "$TMP/kvm.t" -- "$T" clock 200 10 > /dev/null
c=$(clock_of "$TMP/kvm.t")
like "$c" "^tsc: [0-9.]+ GHz, constant_tsc nonstop_tsc, kernel clocksource kvm-clock, checked against CLOCK_MONOTONIC on [0-9]+ of [0-9]+ CPUs" \
	"kvm-clock: the TSC, and stats says so"
like "$(grep 'description' "$TMP/kvm.t/metadata")" "CLOCK_MONOTONIC, timestamps by tsc: .*kvm-clock" \
	"kvm-clock: the CTF clock description says it"
read -r n lo mid hi <<EOT
$(deltas "$TMP/kvm.t")
EOT
is "$n" 200 "kvm-clock: 200 events"
ok $(( lo < 0 )) "kvm-clock: no event is stamped before the program read the clock (min $lo ns)"
ok $(( mid > 200000 )) "kvm-clock: steered on CLOCK_MONOTONIC over 2 s (median gap $mid ns, under 200 us)"

echo hpet > "$TMP/hpet"
MARKTAP_CLOCKSOURCE_FILE=$TMP/hpet "$MT" record -q -o "$TMP/hpet.t" -- "$T" clock 20 1 > /dev/null
is "$(clock_of "$TMP/hpet.t")" "clock_gettime: the kernel's clocksource is hpet, not the TSC nor a clock built on it (the kernel leaves the TSC when it finds it unstable)" \
	"hpet: clock_gettime, and stats says why"
like "$(grep 'description' "$TMP/hpet.t/metadata")" "CLOCK_MONOTONIC, timestamps by clock_gettime: the kernel's clocksource is hpet" \
	"hpet: the CTF clock description says it"
read -r n lo mid hi <<EOT
$(deltas "$TMP/hpet.t")
EOT
ok $(( n != 20 || lo < 0 )) "hpet: babeltrace2 reads the 20 events, none stamped before the program's reading ($n, min $lo ns)"

# the same CPUs, one without nonstop_tsc
awk '/^flags/ && ++cpu == 2 { sub(/ nonstop_tsc/, "") } { print }' /proc/cpuinfo > "$TMP/cpuinfo"
printf 'processor\t: 1\n%s\n' "$(grep -m1 '^flags' /proc/cpuinfo | sed 's/ nonstop_tsc//')" >> "$TMP/cpuinfo"
MARKTAP_CPUINFO_FILE=$TMP/cpuinfo "$MT" record -q -o "$TMP/flags.t" -- "$T" count 3 > /dev/null
like "$(clock_of "$TMP/flags.t")" "^clock_gettime: cpu [0-9]+ has no nonstop_tsc flag" \
	"a CPU without nonstop_tsc: clock_gettime, and why"
MARKTAP_CLOCK=monotonic "$MT" record -q -o "$TMP/mono.t" -- "$T" count 3 > /dev/null
is "$(clock_of "$TMP/mono.t")" "clock_gettime: MARKTAP_CLOCK=monotonic" "MARKTAP_CLOCK=monotonic: said"
is "$("$MT" stats "$TMP/mono.t" | awk '/^events:/ { print $2 }')" 3 "MARKTAP_CLOCK=monotonic: the events are recorded"

# the real clocksource: whichever clock, the trace says which
like "$(MARKTAP_QUIET=1 "$MT" record -q -o "$TMP/real.t" -- "$T" count 1 > /dev/null; clock_of "$TMP/real.t")" \
	"^(tsc: .*kernel clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)|clock_gettime: .+)" \
	"this machine's clocksource: the trace says which clock"

# the calibration's pinning does not reach the command
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
"$MT" record -q -o "$TMP/aff.t" -- sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' > "$TMP/aff"
is "$(cat "$TMP/aff")" "$mine" "the command runs on marktrace's CPUs ($mine)"
if command -v taskset > /dev/null 2>&1; then
	taskset -c 0 "$MT" record -q -o "$TMP/one.t" -- sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' > "$TMP/one"
	is "$(cat "$TMP/one")" 0 "under taskset -c 0 the command stays on cpu 0"
	like "$(clock_of "$TMP/one.t")" "^(tsc: .* on 1 of [0-9]+ CPUs|clock_gettime: )" \
		"under taskset -c 0 only cpu 0 is checked"
else
	ok 0 "# SKIP no taskset"
	ok 0 "# SKIP no taskset"
fi
# a clocksource file with anything in it: a clean name in the metadata
printf 'kvm"clock\\x\n' > "$TMP/odd"
MARKTAP_CLOCKSOURCE_FILE=$TMP/odd "$MT" record -q -o "$TMP/odd.t" -- "$T" count 1 > /dev/null
like "$(clock_of "$TMP/odd.t")" "^clock_gettime: the kernel's clocksource is kvm_clock_x, " \
	"an odd clocksource name is cleaned before it reaches the metadata"
done_testing
