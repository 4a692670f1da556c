#!/bin/sh
# bench/script/run.sh BUILDDIR [HITS]
# ns per marker hit of `probe process(P).mark("bench_ev") { c[tid()]++ }` under
# marktap (handler in the process) and of the same count with bpftrace on
# the marker's SDT note (usdt:P:marktap:bench_ev { @c[tid]++ }), 1 and 2 threads,
# in one run.  marktap runs that handler natively (no Lua: translator/native.c);
# the same handler forced through Lua (MARKTAP_NATIVE=0) is shown too.
# Also the bare marker (no consumer).  Needs root for bpftrace.
set -u
B=${1:?usage: run.sh BUILDDIR [HITS]}
N=${2:-1000000}
B=$(cd "$B" && pwd)
P=$B/bench/ust/emit-mt
MT=$B/translator/marktap
[ -x "$P" ] || { echo "build $P first (make -C $B check TESTS=)"; exit 1; }
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
best() { sort -n | head -1; }
printf '%-34s %10s %10s\n' "consumer (hits per thread: $N)" "1 thread" "2 threads"
for t in 1 2; do
	eval "bare$t=\$(for r in 1 2 3; do \"$P\" hot $t $N; done | best)"
	eval "mt$t=\$(for r in 1 2 3; do \"$MT\" -c \"$P hot $t $N\" -e 'global c probe process(\"$P\").mark(\"bench_ev\") { c[tid()]++ }' | head -1; done | best)"
	eval "lua$t=\$(for r in 1 2 3; do MARKTAP_NATIVE=0 \"$MT\" -c \"$P hot $t $N\" -e 'global c probe process(\"$P\").mark(\"bench_ev\") { c[tid()]++ }' | head -1; done | best)"
	if command -v bpftrace >/dev/null 2>&1; then
		eval "bt$t=\$(for r in 1 2 3; do bpftrace -q -c \"$P hot $t $((N / 10))\" -e 'usdt:$P:marktap:bench_ev { @c[tid] = count(); } END { clear(@c); }' 2>/dev/null | grep -E '^[0-9.]+\$' | head -1; done | best)"
	else
		eval "bt$t=n/a"
	fi
done
printf '%-34s %10s %10s\n' "marker, no consumer (ns/hit)" "$bare1" "$bare2"
printf '%-34s %10s %10s\n' "marktap c[tid()]++ (ns/hit)" "$mt1" "$mt2"
printf '%-34s %10s %10s\n' "  same, in Lua (MARKTAP_NATIVE=0)" "$lua1" "$lua2"
printf '%-34s %10s %10s\n' "bpftrace usdt @c[tid]=count()" "$bt1" "$bt2"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1fx", b / a; else print "n/a" }'; }
printf '%-34s %10s %10s\n' "bpftrace / marktap" "$(ratio "$mt1" "$bt1")" "$(ratio "$mt2" "$bt2")"
