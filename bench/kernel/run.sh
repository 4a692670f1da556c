#!/bin/sh
# bench/kernel/run.sh - per-hit costs in the kernel, in one qemu guest
# (Debian's kernel, software emulation: only same-boot ratios mean much).
#
#   bench/kernel/run.sh [BUILDDIR]      (after make; BUILDDIR default .)
#   ROUNDS=7 N=200000 BPFTRACE=/usr/bin/bpftrace bench/kernel/run.sh _build
#
# A getppid() loop (kreader spin N) runs bare and under each peer, the
# peers in turn within a round, ROUNDS rounds; per case the median over the
# rounds of (ns per loop iteration - the same round's bare loop):
#   rec2    marktap.ko recording raw_syscalls entry and exit (2 events)
#   ftrace  ftrace recording the same two tracepoints
# and, per hit of the syscall-entry marker kernel_arch_syscall_entry:
#   a  marktap, c[execname()]++ run in the kernel as a native plan
#   b  the same handler forced through Lua in the kernel (MARKTAP_NATIVE=0)
#   c  recording only (kreader record, the marker alone)
#   d  the same script run by marktap on recorded events (MARKTAP_KERNEL_LUA=0)
#   e  bpftrace, tracepoint:raw_syscalls:sys_enter { @c[comm] = count(); },
#      packed into the guest with its libraries (skipped if absent)
# and per hit of a kernel function, __task_pid_nr_ns (getppid's one call),
# through BTF and a kprobe:
#   f  marktap, kernel.function(...) { c[execname()]++ }, native plan
#   g  the same through Lua (MARKTAP_NATIVE=0)
#   h  bpftrace, kprobe:__task_pid_nr_ns { @c[comm] = count(); }
#   i  bpftrace, kfunc:__task_pid_nr_ns (fentry, BTF) where it runs
set -e
top_builddir=$(cd "${1:-.}" && pwd)
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
export top_builddir top_srcdir
guest_tag=-bench
. "$top_srcdir/tests/kernel/guest.sh"
guest_prepare || { echo "bench/kernel: skipped: $guest_why"; exit 0; }
ROUNDS=${ROUNDS:-7}
N=${N:-200000}
BPFTRACE=${BPFTRACE:-$(command -v bpftrace || true)}
if [ -n "$BPFTRACE" ] && [ -x "$BPFTRACE" ]; then
	GUEST_INSTALL="$BPFTRACE"; GUEST_MEM=${GUEST_MEM:-2048}
	export GUEST_INSTALL GUEST_MEM
else
	echo "bench/kernel: no bpftrace on the host: case e is skipped"
fi
[ -f "$guest_kbuild/lua/lvm.c" ] || echo "bench/kernel: marktap.ko built without Lua: cases a and b fall back"

body=$(mktemp)
{
	echo "N=$N ROUNDS=$ROUNDS"
	cat <<'GUEST'
insmod /marktap.ko
export MARKTAP_DATADIR=/share/marktap
cd /tmp
echo "GUESTINFO cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1) clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
T=/sys/kernel/tracing
echo 4096 > $T/buffer_size_kb
S='global c probe kernel.mark("kernel_arch_syscall_entry") { c[execname()]++ }'
F='global c probe kernel.function("__task_pid_nr_ns") { c[execname()]++ }'
# busy time of all CPUs so far, in USER_HZ ticks (10 ms)
busy() { read -r _ u n s _ _ i si st _ </proc/stat; echo $((u + n + s + i + si + st)); }
spin() { # NAME: a command file that runs the loop, its figure in /tmp/NAME.txt,
	# the busy time when the loop starts in /tmp/NAME.s0
	{ echo "read -r _ u n s _ _ i si st _ </proc/stat; echo \$((u + n + s + i + si + st)) >/tmp/$1.s0"
	  echo "kreader spin $N >/tmp/$1.txt"; } >/tmp/$1.sh
}
for x in a b d e f g h i; do spin $x; done
have_bpf=0
command -v bpftrace >/dev/null && have_bpf=1
r=1
while [ $r -le $ROUNDS ]; do
	base=$(kreader spin $N)
	rec2=$(kreader record 'kernel_arch_syscall_entry
kernel_arch_syscall_exit' $N | cut -d' ' -f1)
	echo 1 > $T/events/raw_syscalls/sys_enter/enable
	echo 1 > $T/events/raw_syscalls/sys_exit/enable
	ft=$(kreader spin $N)
	echo 0 > $T/events/raw_syscalls/enable
	echo > $T/trace
	c=$(kreader record 'kernel_arch_syscall_entry' $N | cut -d' ' -f1)
	v=; [ $r = 1 ] && v=-v
	marktap $v -c 'sh /tmp/a.sh' -e "$S" >/tmp/a.out 2>&1; busy >/tmp/a.s1
	MARKTAP_NATIVE=0 marktap $v -c 'sh /tmp/b.sh' -e "$S" >/tmp/b.out 2>&1; busy >/tmp/b.s1
	MARKTAP_KERNEL_LUA=0 marktap -v -c 'sh /tmp/d.sh' -e "$S" >/tmp/d.out 2>&1; busy >/tmp/d.s1
	# the hits d's handler saw (the rest were lost by the recorder)
	dn=$(sed -n 's/.*handlers ran on recorded events (\([0-9]*\) runs).*/\1/p' /tmp/d.out)
	e=- te=-
	if [ $have_bpf = 1 ]; then
		bpftrace -e 'tracepoint:raw_syscalls:sys_enter { @c[comm] = count(); }' -c '/bin/sh /tmp/e.sh' >/tmp/e.out 2>&1 &&
			e=$(cat /tmp/e.txt) && te=$(( $(busy) - $(cat /tmp/e.s0) ))
	fi
	marktap $v -c 'sh /tmp/f.sh' -e "$F" >/tmp/f.out 2>&1; busy >/tmp/f.s1
	MARKTAP_NATIVE=0 marktap $v -c 'sh /tmp/g.sh' -e "$F" >/tmp/g.out 2>&1; busy >/tmp/g.s1
	h=- th=- i=- ti=-
	if [ $have_bpf = 1 ]; then
		bpftrace -e 'kprobe:__task_pid_nr_ns { @c[comm] = count(); }' -c '/bin/sh /tmp/h.sh' >/tmp/h.out 2>&1 &&
			h=$(cat /tmp/h.txt) && th=$(( $(busy) - $(cat /tmp/h.s0) ))
		bpftrace -e 'kfunc:__task_pid_nr_ns { @c[comm] = count(); }' -c '/bin/sh /tmp/i.sh' >/tmp/i.out 2>&1 &&
			i=$(cat /tmp/i.txt) && ti=$(( $(busy) - $(cat /tmp/i.s0) ))
	fi
	t() { echo $(( $(cat /tmp/$1.s1) - $(cat /tmp/$1.s0) )); }
	if [ $r = 1 ]; then
		for x in a b d f g; do grep -E 'kernel handlers|kreader|rror' /tmp/$x.out | sed "s/^/# $x: /"; done
		[ $have_bpf = 1 ] && for x in e h i; do grep -E 'kreader|ERROR|rror' /tmp/$x.out | head -5 | sed "s/^/# $x: /"; done
	fi
	echo "BENCH round=$r base=$base rec2=$rec2 ftrace=$ft c=$c a=$(cat /tmp/a.txt) b=$(cat /tmp/b.txt) d=$(cat /tmp/d.txt) e=$e ta=$(t a) tb=$(t b) td=$(t d) te=$te dn=${dn:--} f=$(cat /tmp/f.txt) g=$(cat /tmp/g.txt) h=$h i=$i tf=$(t f) tg=$(t g) th=$th ti=$ti"
	r=$((r + 1))
done
GUEST
} >"$body"
guest_boot "$body" $((300 + ROUNDS * 400)) || { echo "bench/kernel: the guest did not finish ($guest_out)"; tail -20 "$guest_out"; exit 1; }
rm -f "$body"
echo "bench/kernel: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
sed -n 's/^GUESTINFO /guest (qemu TCG, one thread, 2 vCPUs): /p' "$guest_out"
echo "kernel $KVER, $N getppid() per run, $ROUNDS alternating rounds; ns per call, median over rounds of (run - bare)"
grep '^# [abdefghi]: ' "$guest_out" || true
grep '^BENCH' "$guest_out" | awk -v N="$N" '
function med(name,   n, i, j, t, a) {
	n = 0
	for (i = 1; i <= R; i++) if ((name, i) in d) a[++n] = d[name, i]
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n == 0) return -1
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function cell(x) { return x < 0 ? "       -" : sprintf("%8.0f", x) }
function ratio(x, y) { return (x < 0 || y <= 0) ? "    -" : sprintf("%5.2f", x / y) }
{
	R++
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	b[R] = v["base"]
	for (k in v) {
		if (k == "round" || k == "base" || v[k] == "-" || v[k] == "") continue
		if (k == "dn") { dn[R] = v[k]; continue }
		# t*: busy ticks (10 ms) of all CPUs from the loop start to the
		# end of the tool, per call, less the bare loop
		d[k, R] = k ~ /^t/ ? v[k] * 1e7 / N - v["base"] : v[k] - v["base"]
	}
	delete v
}
END {
	if (R == 0) { print "bench/kernel: no result lines"; exit 1 }
	for (i = 1; i <= R; i++) d["bare", i] = b[i]
	printf "bare getppid loop                                  %8.0f ns\n", med("bare")
	printf "marktap.ko recording entry+exit, per event         %8.0f ns\n", med("rec2") / 2
	printf "ftrace, the same tracepoints, per event            %8.0f ns   marktap/ftrace %.2f\n\n", med("ftrace") / 2, med("rec2") / med("ftrace")
	print  "per hit of kernel_arch_syscall_entry         in the thread  vs e   all CPUs  vs e"
	split("a b c d e", ks, " ")
	t["a"] = "a  c[execname()]++, native plan, in kernel"
	t["b"] = "b  the same through Lua, in the kernel    "
	t["c"] = "c  recording only                         "
	t["d"] = "d  recorded, handler run by marktap       "
	t["e"] = "e  bpftrace, @c[comm] = count()           "
	e = med("e"); te = med("te")
	for (i = 1; i <= 5; i++) {
		k = ks[i]; m = med(k); tm = med("t" k)
		printf "%s %8s  %s  %8s  %s\n", t[k], cell(m), ratio(m, e), cell(tm), ratio(tm, te)
	}
	printf "a/d %s, b/d %s (in the thread); a/d %s, b/d %s (all CPUs)\n", ratio(med("a"), med("d")), ratio(med("b"), med("d")),
		ratio(med("ta"), med("td")), ratio(med("tb"), med("td"))
	print  "\nper hit of kernel.function(\"__task_pid_nr_ns\")   in the thread  vs h   all CPUs  vs h"
	t["f"] = "f  c[execname()]++, native plan, kprobe  "
	t["g"] = "g  the same through Lua                  "
	t["h"] = "h  bpftrace kprobe:, @c[comm] = count()  "
	t["i"] = "i  bpftrace kfunc: (fentry)              "
	h = med("h"); th = med("th")
	split("f g h i", ks, " ")
	for (i = 1; i <= 4; i++) {
		k = ks[i]; m = med(k); tm = med("t" k)
		printf "%s %8s  %s  %8s  %s\n", t[k], cell(m), ratio(m, h), cell(tm), ratio(tm, th)
	}
	# the recorder of d loses hits it cannot keep up with: the cost of d
	# per hit its handler saw (all CPUs), what a lossless d would approach
	for (i = 1; i <= R; i++) if ((i in dn) && dn[i] > 0 && (("td", i) in d)) { d["tdh", i] = d["td", i] * N / dn[i]; d["dnf", i] = dn[i] / N }
	if (med("tdh") > 0)
		printf "d per hit its handler saw (%.0f%% of the hits): %.0f ns all CPUs; a/d %s, b/d %s\n",
			100 * med("dnf"), med("tdh"), ratio(med("ta"), med("tdh")), ratio(med("tb"), med("tdh"))
}'
