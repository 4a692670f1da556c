#!/bin/sh
# bench/tracepoint/run.sh BUILDDIR [N] [ROUNDS]: the cost of one recorded
# kernel tracepoint event.  A loop of N getppid() calls (default 10^6),
# timed by itself, run alone, under marktrace record --kernel -e
# syscalls:sys_enter_getppid, and under perf record -e the same (when perf
# is installed), the variants alternating, ROUNDS times (default 7); prints
# the median ns per call of each, the difference with the loop alone (the
# cost per event), and what was lost.  Needs root (tracepoints).
set -e
B=${1:?usage: run.sh BUILDDIR [N] [ROUNDS]}
N=${2:-1000000}
ROUNDS=${3:-7}
LOOP=$B/bench/tracepoint/getppid-loop
MT=$B/runtime/marktrace/marktrace
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs"
echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "kernel: $(uname -r); N = $N, $ROUNDS rounds"
HAVE_PERF=
command -v perf >/dev/null 2>&1 && HAVE_PERF=1
r=0
while [ $r -lt "$ROUNDS" ]; do
	"$LOOP" "$N" | awk '{ print $2 }' >> "$W/alone"
	rm -rf "$W/t"
	"$MT" record --kernel -o "$W/t" -e syscalls:sys_enter_getppid -- "$LOOP" "$N" \
		2> "$W/mt.err" | awk '{ print $2 }' >> "$W/marktrace"
	sed -n 's/.* recorded, \([0-9]*\) lost.*/\1/p' "$W/mt.err" >> "$W/marktrace.lost"
	if [ -n "$HAVE_PERF" ]; then
		perf record -q -o "$W/perf.data" -e syscalls:sys_enter_getppid -- "$LOOP" "$N" \
			2> "$W/perf.err" | awk '{ print $2 }' >> "$W/perf"
		grep -o 'lost [0-9]*' "$W/perf.err" | awk '{ s += $2 } END { print s + 0 }' >> "$W/perf.lost"
	fi
	r=$((r + 1))
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
BASE=$(median "$W/alone")
printf '%-26s %10s %14s %10s\n' variant ns/call ns/event lost/run
printf '%-26s %10.1f %14s %10s\n' "getppid() alone" "$BASE" - -
for v in marktrace perf; do
	[ -s "$W/$v" ] || continue
	M=$(median "$W/$v")
	L=$(median "$W/$v.lost")
	printf '%-26s %10.1f %14.1f %10s\n' "$v record" "$M" "$(echo "$M $BASE" | awk '{ print $1 - $2 }')" "$L"
done
