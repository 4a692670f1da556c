#!/bin/sh
# bench/relay/run.sh BUILDDIR [EVENTS_PER_THREAD]      (or: make bench-relay)
#
# Events/s through lttng-relayd on loopback against writing to local disk:
# the same program (bench/ust's emitter: an int, a long, a 3-byte string
# per event; THREADS threads, default 2, as fast as they can), recorded by
#   local  marktrace record -q -o DIR            (DIR on disk)
#   relay  marktrace record -q --relay net://127.0.0.1:C:D   (relayd's
#          output directory on the same disk, no local files)
# with the same buffers (64 x 4 MiB per CPU: 2.5 x 10^6 events of 50 bytes
# from each of 2 threads fit in one CPU's ring, so that neither loses
# events and the wall time is the consumer's, copying to disk or to
# relayd; losses are shown).  events/s = events recorded / wall time of `marktrace
# record` from its start to its exit, which for the relay includes relayd
# confirming it has every packet (data pending) and the streams' close:
# the whole path, program to files.  RUNS (default 7) runs of each, local
# and relay alternating (which goes first alternates too); medians, best,
# the median of the runs' pairwise ratios (relay / local), and MB/s of the
# files written.  The start-up and end of a recording (a 1-event run, same
# buffers, median of RUNS: allocating the buffers, relayd's session and
# streams) is measured too: it is part of each run's wall time.  The emitter's own ns/event shows what the traced program
# paid in each mode; relayd's CPU time per run (/proc) gives the MB it
# takes per CPU-second, which the load of the machine does not change
# much.  As root, several hosts (UTS namespaces) recording
# into the one relayd at once give its aggregate rate.  The header names
# the CPU and the clocksource; the table is printed and written to
# $RESULTS (BUILDDIR/bench/relay/results.txt).
set -u
B=$(cd "${1:?usage: run.sh BUILDDIR [EVENTS_PER_THREAD]}" && pwd) || exit 1
N=${2:-2500000}
THREADS=${THREADS:-2}
RUNS=${RUNS:-7}
RESULTS=${RESULTS:-$B/bench/relay/results.txt}
MT=$B/runtime/marktrace/marktrace
EM=$B/bench/ust/emit-mt
for p in "$MT" "$EM"; do
	[ -x "$p" ] || { echo "run.sh: no $p (make check builds it)" >&2; exit 1; }
done
command -v lttng-relayd > /dev/null || { echo "run.sh: lttng-relayd not installed (lttng-tools)" >&2; exit 1; }
mkdir -p "$(dirname "$RESULTS")"
W=$(mktemp -d "${DISK_DIR:-$B/bench/relay}/run.XXXXXX") || exit 1
RELAYD=
cleanup() {
	[ -n "$RELAYD" ] && kill "$RELAYD" 2> /dev/null && wait "$RELAYD" 2> /dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
best() { sort -n | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
row() { printf '%-42s %14s %14s %8s\n' "$@" | sed 's/ *$//'; }
out() { printf "$@" | tee -a "$RESULTS"; }
now() { date +%s.%N; }

set -- $(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
CTRL=$1 DATA=$2 LIVE=$3
lttng-relayd -C tcp://127.0.0.1:$CTRL -D tcp://127.0.0.1:$DATA -L tcp://127.0.0.1:$LIVE \
	-o "$W/relayd" > "$W/relayd.log" 2>&1 &
RELAYD=$!
i=0
until python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
	"$CTRL" 2> /dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "run.sh: lttng-relayd did not start" >&2; cat "$W/relayd.log" >&2; exit 1; }
	sleep 0.05
done

# relayd's CPU time so far (clock ticks, user + system)
relayd_cpu() { awk '{ print $14 + $15 }' "/proc/$RELAYD/stat"; }

# one_run MODE R: record the emitter; appends "events/s ns/event lost MB/s"
# to $W/MODE.runs
one_run() {
	mode=$1 r=$2 n=${3:-$N} suffix=${4:-}
	set -- -o "$W/local-$r"
	[ "$mode" = relay ] && set -- --relay "net://127.0.0.1:$CTRL:$DATA"
	c0=$(relayd_cpu)
	t0=$(now)
	(cd "$W/cwd" && "$MT" record -q "$@" --subbuf-size 4M --num-subbuf 64 \
		-- "$EM" hot "$THREADS" "$n") > "$W/emit.out" 2> "$W/rec.err"
	rc=$?
	t1=$(now)
	c1=$(relayd_cpu)
	dir=$W/local-$r
	# relayd's folder: HOST/marktap-DATE (the session without -o)
	[ "$mode" = relay ] && dir=$(ls -d "$W"/relayd/*/marktap-* 2> /dev/null | head -1)
	[ "$rc" = 0 ] || echo "run.sh: $mode run $r: marktrace exited $rc: $(cat "$W/rec.err")" >&2
	"$MT" stats "$dir" > "$W/stats.txt" 2>&1
	ev=$(awk '/^events:/ { print $2 }' "$W/stats.txt")
	lost=$(awk '/^lost:/ { print $2 }' "$W/stats.txt")
	bytes=$(du -sb "$dir" | awk '{ print $1 }')
	awk -v e="${ev:-0}" -v t0="$t0" -v t1="$t1" -v ns="$(cat "$W/emit.out")" -v l="${lost:-?}" -v b="$bytes" \
		-v s="${SETUP:-0}" -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.0f %s %s %.1f %.0f %.3f %.0f\n", e / (t1 - t0), ns, l,
			b / (t1 - t0) / 1e6, e / (t1 - t0 - s), t1 - t0, (c > 0 ? b / (c / hz) / 1e6 : 0) }' \
		>> "$W/$mode$suffix.runs"
	rm -rf "$dir"
}
: > "$W/local.runs"
: > "$W/relay.runs"
mkdir -p "$W/cwd"
# start-up and end of a recording of one event per thread (the buffers'
# allocation, relayd's session and streams): wall time, per mode
for r in $(seq 1 "$RUNS"); do
	one_run local "s$r" 1 .setup
	one_run relay "s$r" 1 .setup
done
SETUP_local=$(awk '{ print $6 }' "$W/local.setup.runs" | median)
SETUP_relay=$(awk '{ print $6 }' "$W/relay.setup.runs" | median)
for r in $(seq 1 "$RUNS"); do
	if [ $((r % 2)) = 1 ]; then
		SETUP=$SETUP_local one_run local "$r"; SETUP=$SETUP_relay one_run relay "$r"
	else
		SETUP=$SETUP_relay one_run relay "$r"; SETUP=$SETUP_local one_run local "$r"
	fi
done

# Several hosts into the one relayd: K recordings at once (K = 1, 2, 4),
# each a host of its own (a UTS namespace with its hostname) recording one
# emitter thread of N events; aggregate events/s at relayd = K * N / wall
# time until the last recording ends; median of FLEET_RUNS (default 3).
fleet_run() {
	k=$1
	t0=$(now) pids=
	for h in $(seq 1 "$k"); do
		unshare -u sh -c "hostname fleet$h; exec '$MT' record -q --relay net://127.0.0.1:$CTRL:$DATA \
			--subbuf-size 4M --num-subbuf 64 -- '$EM' hot 1 $N" > /dev/null 2>> "$W/fleet.err" &
		pids="$pids $!"
	done
	wait $pids   # (not relayd)
	t1=$(now)
	ev=0
	for d in "$W"/relayd/fleet*/marktap-*; do
		e=$("$MT" stats "$d" 2> /dev/null | awk '/^events:/ { print $2 }')
		ev=$((ev + ${e:-0}))
	done
	rm -rf "$W"/relayd/fleet*
	awk -v e="$ev" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f\n", e / (t1 - t0) }'
}
FLEET=
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null; then
	for k in 1 2 4; do
		: > "$W/fleet$k.runs"
		for r in $(seq 1 "${FLEET_RUNS:-3}"); do fleet_run "$k" >> "$W/fleet$k.runs"; done
		FLEET="$FLEET $k:$(median < "$W/fleet$k.runs")"
	done
fi

: > "$RESULTS"
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2> /dev/null)
out 'bench/relay: %s, %s CPUs (%s), Linux %s, clocksource %s, %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" "$(uname -r)" "${clocksource:-unknown}" \
	"$(lttng-relayd --version 2> /dev/null | head -1)"
out '%s threads x %s events, 64 x 4 MiB sub-buffers per CPU, %s alternating runs; files on %s\n\n' \
	"$THREADS" "$N" "$RUNS" "$(df -P "$W" | awk 'NR == 2 { print $1 }')"
out '%s\n' "$(row '' 'local disk' 'relayd' 'relay/local')"
col() { awk -v c="$1" '{ print $c }' "$W/$2.runs"; }
lm=$(col 1 local | median) rm_=$(col 1 relay | median)
out '%s\n' "$(row 'events/s, median (program to files)' "$lm" "$rm_" "$(ratio "$rm_" "$lm")")"
lb=$(col 1 local | best) rb=$(col 1 relay | best)
out '%s\n' "$(row "   best of the $RUNS runs" "$lb" "$rb" "$(ratio "$rb" "$lb")")"
pm=$(paste "$W/relay.runs" "$W/local.runs" | awk '$1 > 0 && $(NF / 2 + 1) > 0 { print $1 / $(NF / 2 + 1) }' | median | awk '{ printf "%.2f", $1 }')
out '%s\n' "$(row '   median of the pairwise ratios' '' '' "$pm")"
out '%s\n' "$(row '   start-up and end of a recording (s)' "$SETUP_local" "$SETUP_relay" '')"
out '%s\n' "$(row 'MB/s of trace files, median' "$(col 4 local | median)" "$(col 4 relay | median)" '')"
out '%s\n' "$(row "relayd: MB per CPU-second, median" '' "$(col 7 relay | median)" '')"
out '%s\n' "$(row "emitter ns/event, median" "$(col 2 local | median)" "$(col 2 relay | median)" '')"
out '%s\n' "$(row 'events lost, all runs' "$(col 3 local | awk '{ s += $1 } END { print s + 0 }')" \
	"$(col 3 relay | awk '{ s += $1 } END { print s + 0 }')" '')"
if [ -n "$FLEET" ]; then
	out '\nseveral hosts at once into one relayd (1 emitter thread of %s events each; median of %s):\n' \
		"$N" "${FLEET_RUNS:-3}"
	for kv in $FLEET; do
		out '%s\n' "$(row "   ${kv%%:*} host(s): events/s at relayd, all hosts" '' "${kv#*:}" '')"
	done
fi
out '\nruns (events/s ns/event lost MB/s events/s-after-start-up seconds relayd-MB/cpu-s):\nlocal: %s\nrelay: %s\n' \
	"$(tr '\n' ';' < "$W/local.runs")" "$(tr '\n' ';' < "$W/relay.runs")"
