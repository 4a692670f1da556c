#!/bin/sh
# clock-guest.t - the clock of user traces in another kernel: Debian's,
# under qemu (software emulation, tests/kernel/guest.sh), whose clocksource
# and CPU flags are not this machine's.  In the guest marktrace records a
# program that puts its own CLOCK_MONOTONIC reading in each event: with the
# clocksource the guest's kernel chose, with kvm-clock named
# (MARKTAP_CLOCKSOURCE_FILE: the TSC when the guest's flags and the
# calibration allow it) and with hpet named (clock_gettime).  (Under
# -cpu max and software emulation the guest's kernel picks hpet and its
# CPUs have no constant_tsc: every case is clock_gettime, and says so.)
# On the host,
# babeltrace2 reads the traces: the clock each says it used, and every
# event stamped after, and close to, the program's own reading.
guest_tag=-clock
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"
[ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" > /dev/null || skip_all "no babeltrace2"
guest_prepare || skip_all "no guest: ${guest_why:-marktap.ko does not build}"
plan 10
if guest_boot "$top_srcdir/tests/runtime/clock-guest-body.sh" 600; then
	ok 0 "the guest ran to the end (console: $guest_out)"
else
	ok 1 "the guest ran to the end (console: $guest_out)"
fi
field() { sed -n "s/^$1 //p" "$guest_out" | head -1; }
cs=$(field CLOCKSOURCE); flags=$(field FLAGS)
diag "guest clocksource: $cs (available: $(field AVAILABLE)); TSC flags: ${flags:-none}"
W=$guest_dir/root$guest_tag-traces   # removed by make clean (root-*)
rm -rf "$W" && mkdir -p "$W"
sed -n '/^TRACE-BEGIN$/,/^TRACE-END$/p' "$guest_out" | sed '1d;$d' | base64 -d 2>/dev/null |
	gzip -dc 2>/dev/null | tar -C "$W" -xf - 2>/dev/null
# "events min median max" in ns: event timestamp minus the program's reading
deltas() {
	"$BABELTRACE2" --clock-cycles "$1" 2>/dev/null | sed -nE 's/^\[([0-9]+)\].*mono = ([0-9]+).*/\1 \2/p' |
		awk '{ print $1 - $2 }' | sort -n |
		awk '{ d[NR] = $1 } END { print NR, d[1] + 0, d[int((NR + 1) / 2)] + 0, d[NR] + 0 }'
}
# under emulation a hit takes tens of microseconds, and a preempted one
# milliseconds: the median gap within 1 ms, none over 50 ms
for t in real kvm hpet; do
	want=100; [ $t = hpet ] && want=20
	is "$(field RC-$t)" 0 "$t: marktrace record exits 0 in the guest"
	read -r n lo mid hi <<EOT
$(deltas "$W/c-$t")
EOT
	ok $(( n != want || lo < 0 || mid > 1000000 || hi > 50000000 )) \
		"$t: $want events, stamped after the program's CLOCK_MONOTONIC, close to it ($n, $lo..$hi ns, median $mid)"
	c=$(field CLOCK-$t)
	diag "$t: $c"
	case $t in
	real) like "$c" "^(tsc: .*kernel clocksource $cs,|clock_gettime: .)" "the guest's own clocksource ($cs): the trace says which clock" ;;
	kvm)
		if [ "$flags" = "constant_tsc nonstop_tsc " ]; then
			like "$c" "^(tsc: .*kernel clocksource kvm-clock|clock_gettime: .*(TSC|cpu))" \
				"kvm-clock named, TSC flags present: the TSC, or the calibration's reason"
		else
			like "$c" "^clock_gettime: cpu [0-9]+ has no (constant|nonstop)_tsc" \
				"kvm-clock named, TSC flags missing: clock_gettime, and the flag"
		fi ;;
	hpet) like "$c" "^clock_gettime: (the kernel's clocksource is hpet|cpu [0-9]+ has no (constant|nonstop)_tsc)" \
		"hpet named: clock_gettime, and why" ;;
	esac
done
done_testing
