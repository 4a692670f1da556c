#!/bin/sh
# bench/trace/run.sh - a question over a stored trace: marktap
# --trace with a counting script vs the same question in a babeltrace2
# Python script (python3-bt2), on the same trace of N events
# (tests/runtime/view/gentrace bulk: marker "bench", count %d value %ld
# name %s, on 2 CPUs), RUNS alternating runs, medians.
#
#   bench/trace/run.sh [BUILDDIR]        N=10000000 RUNS=7 by default
set -e
B=$(cd "${1:-.}" && pwd)
N=${N:-10000000}
RUNS=${RUNS:-7}
PY=${PY:-/usr/bin/python3}
GEN=$B/tests/runtime/view/gentrace
MTAP=$B/translator/marktap
[ -x "$GEN" ] && [ -x "$MTAP" ] || { echo "bench/trace: build first (make check builds gentrace)"; exit 1; }
"$PY" -c 'import bt2' 2>/dev/null || { echo "bench/trace: skipped: no python3-bt2 for $PY"; exit 0; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
{ echo "trace ."; echo "bulk $N 2"; } | "$GEN" "$W/t"
cat >"$W/count.stp" <<'STP'
global n, sum
probe trace.event("bench") { n[$arg3]++; sum += $value }   # ($name is the marker's name)
probe end { foreach (k in n) printf("%s %d\n", k, n[k]); printf("sum %d\n", sum) }
STP
cat >"$W/count.py" <<'PY'
import sys, collections, bt2
n = collections.Counter()
total = 0
for msg in bt2.TraceCollectionMessageIterator(sys.argv[1]):
    if type(msg) is bt2._EventMessageConst and msg.event.name == "bench":
        p = msg.event.payload_field
        n[str(p["name"])] += 1
        total += int(p["value"])
for k, v in n.items():
    print(k, v)
print("sum", (total + 2**63) % 2**64 - 2**63)   # stap's longs wrap at 64 bits
PY
now() { date +%s.%N; }
i=0
while [ $i -lt "$RUNS" ]; do
	t0=$(now); "$MTAP" --trace "$W/t" "$W/count.stp" >"$W/mt.out"; t1=$(now)
	"$PY" "$W/count.py" "$W/t" >"$W/py.out"; t2=$(now)
	cmp -s "$W/mt.out" "$W/py.out" || { echo "bench/trace: the answers differ"; diff "$W/mt.out" "$W/py.out" | head; exit 1; }
	echo "$t0 $t1 $t2" | awk '{ printf "%.3f %.3f\n", $2 - $1, $3 - $2 }' >>"$W/times"
	i=$((i + 1))
done
echo "bench/trace: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "$N events, $(du -sh "$W/t" | cut -f1) of trace; $RUNS alternating runs; the same answer ($(head -1 "$W/mt.out"), $(tail -1 "$W/mt.out"))"
sort -n -k1,1 "$W/times" | awk -v R="$RUNS" 'NR == int((R + 1) / 2) { m = $1 } END { printf "marktap --trace, median s            %8.2f\n", m }'
sort -n -k2,2 "$W/times" | awk -v R="$RUNS" 'NR == int((R + 1) / 2) { p = $2 } END { printf "babeltrace2 Python (bt2), median s %8.2f\n", p }'
awk '{ printf "%.3f\n", $2 / $1 }' "$W/times" | sort -n |
	awk -v R="$RUNS" 'NR == int((R + 1) / 2) { printf "ratio bt2 / marktap, median of the runs  %.1f\n", $1 }'
