#!/bin/sh
# bench/script/ufunc.sh BUILDDIR [HITS]
# ns per call of a probed function (bench/script/ufunc-target.c's work())
# under `probe process(P).function("work") { n++ }` (entry) and
# `.function("work").return { n++ }`, through marktap's jump fast path and
# through its trap (MARKTAP_UFUNC_JUMP=0), against bpftrace's uprobe: and
# uretprobe:, 1 and 2 threads, best of 3; and the cost of
# sprint_ubacktrace() of a 10-deep stack.  Needs root for bpftrace.
set -u
B=${1:?usage: ufunc.sh BUILDDIR [HITS]}
N=${2:-1000000}
B=$(cd "$B" && pwd)
MT=$B/translator/marktap
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# no sibling calls: nest() keeps its 8 frames
${CC:-cc} -g -O2 -fno-optimize-sibling-calls -o "$TMP/t" "$HERE/ufunc-target.c" -lpthread || exit 1
P=$TMP/t
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
best() { sort -n | head -1; }
mt() { for r in 1 2 3; do env "$@" | head -1; done | best; }
printf '%-36s %10s %10s\n' "ns per call ($N calls per thread)" "1 thread" "2 threads"
for t in 1 2; do
	eval "bare$t=\$(for r in 1 2 3; do \"$P\" $t $N; done | best)"
	eval "je$t=\$(mt \"$MT\" -c \"$P $t $N\" -e 'global n probe process(\"$P\").function(\"work\") { n++ }')"
	eval "te$t=\$(mt MARKTAP_UFUNC_JUMP=0 \"$MT\" -c \"$P $t $N\" -e 'global n probe process(\"$P\").function(\"work\") { n++ }')"
	eval "jr$t=\$(mt \"$MT\" -c \"$P $t $N\" -e 'global n probe process(\"$P\").function(\"work\").return { n++ }')"
	eval "tr$t=\$(mt MARKTAP_UFUNC_JUMP=0 \"$MT\" -c \"$P $t $N\" -e 'global n probe process(\"$P\").function(\"work\").return { n++ }')"
	if command -v bpftrace >/dev/null 2>&1; then
		eval "be$t=\$(for r in 1 2 3; do bpftrace -q -c \"$P $t $((N / 10))\" -e 'uprobe:$P:work { @n = count(); } END { clear(@n); }' 2>/dev/null | grep -E '^[0-9.]+\$' | head -1; done | best)"
		eval "br$t=\$(for r in 1 2 3; do bpftrace -q -c \"$P $t $((N / 10))\" -e 'uretprobe:$P:work { @n = count(); } END { clear(@n); }' 2>/dev/null | grep -E '^[0-9.]+\$' | head -1; done | best)"
	else
		eval "be$t=n/a br$t=n/a"
	fi
done
row() { printf '%-36s %10s %10s\n' "$1" "$2" "$3"; }
row "no probe" "$bare1" "$bare2"
row "marktap entry, jump" "$je1" "$je2"
row "marktap entry, trap (JUMP=0)" "$te1" "$te2"
row "bpftrace uprobe" "$be1" "$be2"
row "marktap .return, jumps (entry, return)" "$jr1" "$jr2"
row "marktap .return, traps (JUMP=0)" "$tr1" "$tr2"
row "bpftrace uretprobe" "$br1" "$br2"
# a backtrace of a 10-deep stack (work, 8 nest, run: the thread's own
# frames start_thread and clone beyond), made into a string per hit
bd=$(for r in 1 2 3; do "$P" deep $((N / 10)); done | best)
bt=$(mt "$MT" -c "$P deep $((N / 10))" -e "global n probe process(\"$P\").function(\"work\") { n += strlen(sprint_ubacktrace()) }")
row "10-deep, no probe" "$bd" "-"
row "10-deep, sprint_ubacktrace() (jump)" "$bt" "-"
