#!/bin/sh
# bench/kernel/run.sh - per-event cost of the kernel recorder against ftrace,
# on the same tracepoints (raw_syscalls sys_enter/sys_exit), in one qemu
# guest (Debian's kernel, software emulation: only the ratios mean much).
#
#   bench/kernel/run.sh [BUILDDIR]      (after make; BUILDDIR default .)
#
# Each loop iteration is one getppid(): two events (entry, exit).
set -e
top_builddir=$(cd "${1:-.}" && pwd)
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
export top_builddir top_srcdir
. "$top_srcdir/tests/kernel/guest.sh"
guest_prepare || { echo "bench/kernel: skipped: $guest_why"; exit 0; }
body=$(mktemp)
cat >"$body" <<'GUEST'
N=200000
insmod /marktap.ko
base=$(kreader spin $N)
mt=$(kreader record 'kernel_arch_syscall_entry
kernel_arch_syscall_exit' $N | cut -d' ' -f1)
T=/sys/kernel/tracing
echo 4096 > $T/buffer_size_kb
echo 1 > $T/events/raw_syscalls/sys_enter/enable
echo 1 > $T/events/raw_syscalls/sys_exit/enable
ft=$(kreader spin $N)
echo 0 > $T/events/raw_syscalls/enable
echo "BENCH base=$base marktap=$mt ftrace=$ft"
GUEST
guest_boot "$body" 300 || { echo "bench/kernel: the guest did not finish"; exit 1; }
rm -f "$body"
grep '^BENCH' "$guest_out" | awk '{
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	mt = (v["marktap"] - v["base"]) / 2; ft = (v["ftrace"] - v["base"]) / 2
	printf "getppid loop, ns per call: bare %.0f, marktap %.0f, ftrace %.0f\n", v["base"], v["marktap"], v["ftrace"]
	printf "per event: marktap %.0f ns, ftrace %.0f ns, ratio marktap/ftrace %.2f\n", mt, ft, (ft > 0 ? mt / ft : 0)
}'
