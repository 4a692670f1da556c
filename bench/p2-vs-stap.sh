#!/bin/sh
# marktap's and stap's pass 2 on the same scripts, alternating: CPU and
# wall time of `-r KVER -p2` (/usr/bin/time: 10 ms resolution), the
# median of ROUNDS runs of each.
#
#   bench/p2-vs-stap.sh [BUILDDIR] [ROUNDS]
B=${1:-_build}
ROUNDS=${2:-7}
top=$(cd "$(dirname "$0")/.." && pwd)
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
M=$B/translator/marktap
[ -x "$M" ] || { echo "p2-vs-stap.sh: no $M (build first)" >&2; exit 1; }
command -v stap >/dev/null || { echo "p2-vs-stap.sh: no stap (apt-get install systemtap)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "p2-vs-stap.sh: no /usr/bin/time (apt-get install time)" >&2; exit 1; }
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | sed -E 's/^linux-headers-([^ ,]+).*/\1/')
export MARKTAP_TAPSET_DIR="$top/tapsets:$B/tapsets"
: "${MARKTAP_BTF:=/var/cache/marktap-kernel/vmlinux-$KVER}"
export MARKTAP_BTF
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
echo "p2-vs-stap.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), load $(cut -d' ' -f1 /proc/loadavg)"
one() { # NAME SCRIPT
	name=$1 script=$2
	: >"$TMP/marktap"; : >"$TMP/stap"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		for tool in "$M" stap; do
			out=$TMP/$(basename "$tool")
			/usr/bin/time -f '%U %S %e' "$tool" -r "$KVER" -p2 -e "$script" >/dev/null 2>"$TMP/err" </dev/null
			tail -1 "$TMP/err" | awk '{ printf "%.0f %.0f\n", ($1 + $2) * 1000, $3 * 1000 }' >>"$out"
		done
		r=$((r + 1))
	done
	med() { sort -n "$1" | sed -n "$(( (ROUNDS + 1) / 2 ))p" | awk '{ printf "%4s ms CPU, %4s ms wall", $1, $2 }'; }
	printf '%-22s marktap %s   stap %s\n' "$name" "$(med "$TMP/marktap")" "$(med "$TMP/stap")"
}
one "hello" 'probe begin { println("hi"); exit() }'
one "timer+tracepoint" 'global n probe timer.s(1) { printf("%s %d %d %s\n", execname(), pid(), gettimeofday_s(), ctime(gettimeofday_s())) } probe kernel.trace("sched_switch") { n++ }'
