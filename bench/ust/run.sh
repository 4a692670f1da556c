#!/bin/sh
# bench/ust/run.sh BUILDDIR [EVENTS_PER_THREAD]
# libmarktap under `marktrace record` vs LTTng-UST 2.13 under `lttng`, same
# payload (an int, a long, a 3-byte string), in one run:
#   1. ns per enabled event, 1 and 2 threads (best of 5; buffers big enough
#      that neither loses events: 64 x 4 MiB per CPU; losses are shown)
#   2. ns per disabled probe site over an empty loop
#   3. the highest paced rate recorded with zero loss, default buffers
#      (4 x 1 MiB per CPU), trace on tmpfs
# Needs root for lttng-sessiond (started here if none runs).
set -u
B=$(cd "${1:?usage: run.sh BUILDDIR [N]}" && pwd)
N=${2:-2000000}
MT=$B/runtime/marktrace/marktrace
EM=$B/bench/ust/emit-mt
EU=$B/bench/ust/emit-ust
OUT=${TMPDIR:-/dev/shm}/marktap-bench-ust.$$
mkdir -p "$OUT"
trap 'lttng destroy -a > /dev/null 2>&1; [ -n "${started:-}" ] && pkill -x lttng-sessiond; rm -rf "$OUT"' EXIT
best() { sort -n | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }

have_ust=0
if [ -x "$EU" ] && command -v lttng > /dev/null 2>&1; then
	if ! pgrep -x lttng-sessiond > /dev/null; then
		lttng-sessiond --daemonize > /dev/null 2>&1 && started=1
		sleep 1
	fi
	pgrep -x lttng-sessiond > /dev/null && have_ust=1
fi

mt_hot() { # THREADS -> ns/event; lost count to $OUT/mt.lost
	rm -rf "$OUT/mt"
	ns=$("$MT" record -q -o "$OUT/mt" --subbuf-size 4M --num-subbuf 64 -- "$EM" hot "$1" "$N")
	"$MT" stats "$OUT/mt" | awk '/^lost:/ { print $2 }' > "$OUT/mt.lost"
	echo "$ns"
}
ust_hot() { # THREADS -> ns/event; discarded to $OUT/ust.lost
	lttng create bench --output="$OUT/ust" > /dev/null
	lttng enable-channel -u c --subbuf-size 4M --num-subbuf 64 > /dev/null
	lttng enable-event -u -c c 'bench_ust:ev' > /dev/null
	lttng start > /dev/null
	ns=$("$EU" hot "$1" "$N")
	lttng stop 2>&1 | awk '/discarded/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' > "$OUT/ust.lost"
	lttng destroy > /dev/null
	rm -rf "$OUT/ust"
	echo "$ns"
}

echo "bench/ust: $(date -u +%Y-%m-%d), $(nproc) CPUs, $N events per thread"
printf '%-40s %12s %12s %8s\n' "" "marktap" "LTTng-UST" "ratio"
for t in 1 2; do
	m=$(for r in 1 2 3 4 5; do mt_hot $t; done | best); ml=$(cat "$OUT/mt.lost")
	if [ $have_ust = 1 ]; then
		u=$(for r in 1 2 3 4 5; do ust_hot $t; done | best); ul=$(cat "$OUT/ust.lost"); ul=${ul:-0}
	else
		u=n/a; ul=n/a
	fi
	printf '%-40s %12s %12s %8s\n' "enabled, $t thread(s), ns/event (lost)" "$m ($ml)" "$u ($ul)" "$(ratio "$m" "$u")"
done

read -r e1 p1 <<EOT
$("$EM" idle 200000000)
EOT
read -r e2 p2 <<EOT
$("$EU" idle 200000000)
EOT
printf '%-40s %12s %12s\n' "disabled: empty loop, ns/iteration" "$e1" "$e2"
printf '%-40s %12s %12s\n' "disabled: loop with the site, ns/iter" "$p1" "$p2"
printf '%-40s %12s %12s\n' "disabled site cost, ns" "$(awk -v a="$p1" -v b="$e1" 'BEGIN { printf "%.3f", a - b }')" \
	"$(awk -v a="$p2" -v b="$e2" 'BEGIN { printf "%.3f", a - b }')"

# per-CPU vs per-thread rings (the ring core alone, no consumer)
for t in 1 2 4; do
	read -r pc pt <<EOT
$("$B/bench/ust/ring-bench" $t 2000000)
EOT
	printf '%-40s %12s %12s\n' "ring core, $t thread(s): per-CPU | per-thread" "$pc" "$pt"
done

# zero-loss rate: double the paced rate until events are lost, then bisect
ok_rate=0; bad_rate=0; rate=500000
while [ $bad_rate = 0 ] && [ $rate -le 64000000 ]; do
	rm -rf "$OUT/r"
	"$MT" record -q -o "$OUT/r" -- "$EM" rate $rate 2 > /dev/null
	lost=$("$MT" stats "$OUT/r" | awk '/^lost:/ { print $2 }')
	if [ "${lost:-1}" = 0 ]; then ok_rate=$rate; rate=$((rate * 2)); else bad_rate=$rate; fi
done
if [ $bad_rate != 0 ]; then
	for step in 1 2 3; do
		mid=$(( (ok_rate + bad_rate) / 2 ))
		rm -rf "$OUT/r"
		"$MT" record -q -o "$OUT/r" -- "$EM" rate $mid 2 > /dev/null
		lost=$("$MT" stats "$OUT/r" | awk '/^lost:/ { print $2 }')
		if [ "${lost:-1}" = 0 ]; then ok_rate=$mid; else bad_rate=$mid; fi
	done
fi
printf '%-40s %12s\n' "zero-loss paced rate to tmpfs, events/s" "$ok_rate (loss at $bad_rate)"
