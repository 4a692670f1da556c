#!/bin/sh
# bench/script/plt.sh BUILDDIR [CALLS] [RUNS]
# ns per call of libc's strlen() through a program's PLT (bench/script/
# ufunc-target.c plt) unprobed, under `probe process(P).plt("strlen")
# { n++ }` and under bpftrace's uprobe on the same PLT entry's address;
# RUNS (default 7) runs of each, alternating; medians, and the per-hit
# cost (probed - unprobed).  Needs root for bpftrace.
set -u
B=${1:?usage: plt.sh BUILDDIR [CALLS] [RUNS]}
N=${2:-1000000}
RUNS=${3:-7}
B=$(cd "$B" && pwd)
MT=$B/translator/marktap
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
${CC:-cc} -g -O2 -o "$TMP/t" "$HERE/ufunc-target.c" -lpthread || exit 1
P=$TMP/t
# the entry marktap probes: the jmp of strlen's PLT entry (after endbr64
# in a .plt.sec); bpftrace's uprobe goes to the same address
A=$("$MT" -p2 -e "global n probe process(\"$P\").plt(\"strlen\") { n++ }" 2>/dev/null |
	sed -n 's/.*statement(\(0x[0-9a-f]*\)).*/\1/p' | head -1)
mountpoint -q /sys/kernel/tracing 2>/dev/null || { mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && MOUNTED=1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "bench/script/plt.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), Linux $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "strlen@plt at $A; $N calls per run (bpftrace: $((N / 10))), $RUNS alternating runs, medians"
: > "$TMP/bare"; : > "$TMP/mt"; : > "$TMP/bpf"
for r in $(seq "$RUNS"); do
	"$P" plt "$N" >> "$TMP/bare"
	"$MT" -c "$P plt $N" -e "global n probe process(\"$P\").plt(\"strlen\") { n++ }" | head -1 >> "$TMP/mt"
	if command -v bpftrace > /dev/null 2>&1 && [ -n "$A" ]; then
		bpftrace --unsafe -q -c "$P plt $((N / 10))" -e "uprobe:$P:$A { @n = count(); } END { clear(@n); }" 2>/dev/null |
			grep -E '^[0-9.]+$' | head -1 >> "$TMP/bpf"
	fi
done
bare=$(median < "$TMP/bare"); mtv=$(median < "$TMP/mt"); bpf=$([ -s "$TMP/bpf" ] && median < "$TMP/bpf" || echo n/a)
printf '%-40s %10s %14s\n' "" "ns/call" "ns/hit (-bare)"
printf '%-40s %10s %14s\n' "no probe" "$bare" "-"
printf '%-40s %10s %14s\n' "marktap plt(\"strlen\") { n++ }" "$mtv" "$(echo "$mtv $bare" | awk '{ printf "%.1f", $1 - $2 }')"
printf '%-40s %10s %14s\n' "bpftrace uprobe at the same address" "$bpf" "$(echo "$bpf $bare" | awk '$1 != "n/a" { printf "%.1f", $1 - $2 } $1 == "n/a" { print "n/a" }')"
[ "$bpf" != n/a ] && echo "ratio (bpftrace / marktap per hit): $(echo "$bpf $mtv $bare" | awk '{ printf "%.1f", ($1 - $3) / ($2 - $3) }')"
[ "${MOUNTED:-}" ] && umount /sys/kernel/tracing
exit 0
