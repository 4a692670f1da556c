#!/bin/sh
# bench/ust/run.sh BUILDDIR [EVENTS_PER_THREAD]       (or: make bench-ust)
#
# libmarktap under `marktrace record` vs LTTng-UST 2.13 under `lttng`, same
# payload (an int, a long, a 3-byte string), in one run:
#   a. ns per enabled event, 1 and 2 threads: N events per thread as fast
#      as possible, slowest thread's time / N; RUNS runs (default 7),
#      marktap and LTTng-UST alternating, best and median of each, the
#      ratio of the medians and the median of the runs' pairwise ratios;
#      64 x 4 MiB sub-buffers per CPU for both, `marktrace record -q`,
#      traces on /dev/shm, so neither should lose events (losses are
#      shown, summed over the runs)
#   f. the same, as a user types it: default buffers and channel, no -q
#      (on a pseudo-terminal when script(1) is there, so marktrace keeps
#      its status line), discard mode, traces on disk (DISK_DIR, default
#      BUILDDIR/bench/ust); events the buffers could not take are lost
#      (and counted) by both
#   b. ns per disabled probe site: a loop with a compiler barrier, empty and
#      with the (disabled) site; RUNS runs, alternating; and, for scale, the
#      loop with a 5-byte nop, and the marker built with
#      MARKTAP_PATCHED_SITES (emit-mtp): a 5-byte test instruction turned
#      into a jump when enabled
#   c. the highest paced rate recorded with zero loss, one thread, the
#      default buffers (4 x 1 MiB per CPU), trace on tmpfs: the emitter
#      spins on CLOCK_MONOTONIC to emit event i at t0 + i/RATE for 2 s; the
#      rate doubles from 500000/s until `marktrace stats` shows a loss or
#      the emitter itself cannot reach the rate ("emitter limit"), then 3
#      bisection steps below the lower of the two
#   d. the ring core alone (runtime/core/mt_ring.h), no consumer: THREADS
#      threads reserve/fill/commit 50-byte events into one ring per CPU
#      (threads on one CPU share its ring and its CAS) or one ring per thread,
#      and per-CPU rings written in restartable sequences (--sync percpu,
#      marktrace record's default: runtime/core/mt_rseq.h)
#   e. marktrace view vs babeltrace2 on one recorded trace of VIEW_EVENTS
#      (default 10^7) events, text to /dev/null: best of 3 vs 1 run
# SYNC=locked (or percpu) records with marktrace record --sync SYNC.
# CONTEXT=LIST (e.g. vpid,vtid,procname,ip) records with marktrace record
# --context LIST and adds the same contexts to LTTng's channel (lttng
# add-context -u -t ...) in a and f.
# CASES (default abcdef) picks the parts to run, e.g. CASES=af for the
# enabled cases alone (a before/after comparison of two builds).
# The header names the CPU, the kernel's clocksource and the clock
# marktrace chose (marktrace stats' clock: line).  LTTng needs a session
# daemon: if none answers, `lttng-sessiond --daemonize` is started here and
# stopped at the end.  The table is printed and written to $RESULTS
# (BUILDDIR/bench/ust/results.txt), the raw runs after it.
set -u
B=$(cd "${1:?usage: run.sh BUILDDIR [EVENTS_PER_THREAD]}" && pwd) || exit 1
N=${2:-2000000}
RUNS=${RUNS:-7}
CASES=${CASES:-abcdef}
# SYNC=locked|percpu: marktrace record --sync (default: marktrace's own)
REC_OPT=${SYNC:+--sync $SYNC}
# CONTEXT=LIST: marktrace record --context LIST, lttng add-context -t each
CONTEXT=${CONTEXT:-}
[ -n "$CONTEXT" ] && REC_OPT="$REC_OPT --context $CONTEXT"
ust_context() { # SESSION [CHANNEL]
	[ -n "$CONTEXT" ] || return 0
	lttng add-context -u -s "$1" ${2:+-c "$2"} $(echo "$CONTEXT" | tr ',' '\n' | sed 's/^/-t /') > /dev/null
}
want() { case $CASES in *"$1"*) return 0 ;; esac; return 1; }
VIEW_N=${VIEW_EVENTS:-10000000}
RESULTS=${RESULTS:-$B/bench/ust/results.txt}
MT=$B/runtime/marktrace/marktrace
EM=$B/bench/ust/emit-mt
EU=$B/bench/ust/emit-ust
EP=$B/bench/ust/emit-mtp
RB=$B/bench/ust/ring-bench
BT=${BABELTRACE2:-babeltrace2}
for p in "$MT" "$EM" $(want d && echo "$RB"); do
	[ -x "$p" ] || { echo "run.sh: no $p (make bench-ust builds it)" >&2; exit 1; }
done
OUT=$(mktemp -d /dev/shm/marktap-bench-ust.XXXXXX) || exit 1
DISK=$(mktemp -d "${DISK_DIR:-$B/bench/ust}/disk.XXXXXX") || exit 1
SESSION=marktap-bench-$$
have_ust=0
sessiond_pid=

cleanup() {
	[ $have_ust = 1 ] && lttng destroy "$SESSION" > /dev/null 2>&1
	if [ -n "$sessiond_pid" ]; then
		kill "$sessiond_pid" 2> /dev/null
		i=0
		while kill -0 "$sessiond_pid" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	fi
	rm -rf "$OUT" "$DISK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

best() { sort -n | head -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
row() { printf '%-44s %14s %14s %8s\n' "$@" | sed 's/ *$//'; }
out() { printf "$@" | tee -a "$RESULTS"; }
# pairs A B: the median of the ratios of the runs, line by line
pair_median() { paste "$1" "$2" | awk '$1 > 0 && $2 > 0 { print $1 / $2 }' | median | awk '{ if ($1 != "") printf "%.2f", $1; else print "n/a" }'; }

# --- LTTng session daemon ------------------------------------------------
if [ -x "$EU" ] && command -v lttng > /dev/null 2>&1 && command -v lttng-sessiond > /dev/null 2>&1; then
	# the tests that start a daemon (lttng-read.t, relay-live.t) take
	# this lock and stop theirs at the end: turns, not one killing the
	# other's under its sessions
	if command -v flock > /dev/null 2>&1; then
		exec 9> "${TMPDIR:-/tmp}/marktap-tests-lttng.lock"
		flock 9
	fi
	if ! lttng list > /dev/null 2>&1; then
		if [ "$(id -u)" = 0 ]; then pidfile=/var/run/lttng/lttng-sessiond.pid
		else pidfile=$HOME/.lttng/lttng-sessiond.pid; fi
		# --daemonize returns once the daemon is ready
		lttng-sessiond --daemonize > "$OUT/sessiond.log" 2>&1 &&
			sessiond_pid=$(cat "$pidfile" 2> /dev/null)
	fi
	lttng list > /dev/null 2>&1 && have_ust=1
fi
[ $have_ust = 1 ] || echo "run.sh: no LTTng-UST (emit-ust not built or no session daemon): marktap only" >&2

# --- a. enabled, f. as a user types it ------------------------------------
# Each function: THREADS; ns/event on stdout, lost added to $OUT/<case>.lost
mt_hot() {
	rm -rf "$OUT/mt"
	ns=$("$MT" record $REC_OPT -q -o "$OUT/mt" --subbuf-size 4M --num-subbuf 64 -- "$EM" hot "$1" "$N")
	"$MT" stats "$OUT/mt" | awk '/^lost:/ { print $2 + $5 }' >> "$OUT/mt_hot.lost"
	rm -rf "$OUT/mt"
	echo "$ns"
}
ust_stop() { # SESSION DIR LOSTFILE: stop, count the discarded events, destroy
	# a count of 2^64 - 1 or so (seen with 2 threads, default channel) is
	# lttng's, not a loss: shown as unknown
	lttng stop "$1" 2>&1 | awk '/discarded/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) {
			if (length($i) > 15) bad = 1; else s += $i; break } }
		END { print bad ? -1 : s + 0 }' >> "$3"
	lttng destroy "$1" > /dev/null
	rm -rf "$2"
}
ust_hot() {
	lttng create "$SESSION" --output="$OUT/ust" > /dev/null
	lttng enable-channel -u -s "$SESSION" c --subbuf-size 4M --num-subbuf 64 > /dev/null
	lttng enable-event -u -s "$SESSION" -c c 'bench_ust:ev' > /dev/null
	ust_context "$SESSION" c
	lttng start "$SESSION" > /dev/null
	ns=$("$EU" hot "$1" "$N")
	ust_stop "$SESSION" "$OUT/ust" "$OUT/ust_hot.lost"
	echo "$ns"
}
have_script=0
command -v script > /dev/null 2>&1 && have_script=1
mt_plain() {
	rm -rf "$DISK/mt" "$OUT/plain.ns"
	cmd="'$MT' record $REC_OPT -o '$DISK/mt' -- sh -c '\"\$0\" hot $1 $N > \"\$1\"' '$EM' '$OUT/plain.ns'"
	if [ $have_script = 1 ]; then
		script -qc "$cmd" /dev/null < /dev/null > /dev/null 2>&1
	else
		sh -c "$cmd" > /dev/null 2>&1
	fi
	"$MT" stats "$DISK/mt" | awk '/^lost:/ { print $2 + $5 }' >> "$OUT/mt_plain.lost"
	rm -rf "$DISK/mt"
	cat "$OUT/plain.ns"
}
ust_plain() {
	lttng create "$SESSION" --output="$DISK/ust" > /dev/null
	lttng enable-event -u -s "$SESSION" 'bench_ust:ev' > /dev/null
	ust_context "$SESSION"
	lttng start "$SESSION" > /dev/null
	ns=$("$EU" hot "$1" "$N")
	ust_stop "$SESSION" "$DISK/ust" "$OUT/ust_plain.lost"
	echo "$ns"
}
sum() { awk '$1 < 0 { bad = 1 } { s += $1 } END { if (bad) print "?"; else print s + 0 }' "$1"; }

# CASE THREADS LABEL: RUNS alternating runs of mt_CASE and ust_CASE, rows
pair_rows() {
	: > "$OUT/mt_$1.lost"; : > "$OUT/ust_$1.lost"; : > "$OUT/mt.ns"; : > "$OUT/ust.ns"
	r=0
	while [ $r -lt "$RUNS" ]; do
		"mt_$1" "$2" >> "$OUT/mt.ns"
		[ $have_ust = 1 ] && "ust_$1" "$2" >> "$OUT/ust.ns"
		r=$((r + 1))
	done
	m=$(best < "$OUT/mt.ns"); ml=$(sum "$OUT/mt_$1.lost")
	mm=$(median < "$OUT/mt.ns")
	if [ $have_ust = 1 ]; then
		u=$(best < "$OUT/ust.ns"); ul=$(sum "$OUT/ust_$1.lost"); um=$(median < "$OUT/ust.ns")
		pr=$(pair_median "$OUT/mt.ns" "$OUT/ust.ns")
	else
		u=n/a; ul=n/a; um=n/a; pr=n/a
	fi
	out '%s\n' "$(row "$3 $2 thread(s): median ns/event" "$mm" "$um" "$(ratio "$mm" "$um")")"
	out '%s\n' "$(row "   best of the $RUNS runs" "$m" "$u" "$(ratio "$m" "$u")")"
	out '%s\n' "$(row "   median of the $RUNS pairwise ratios" "" "" "$pr")"
	out '%s\n' "$(row "   events lost, all runs" "$ml" "$ul" "")"
	echo "$3 $2 thread(s): marktap $(tr '\n' ' ' < "$OUT/mt.ns")| LTTng-UST $(tr '\n' ' ' < "$OUT/ust.ns")" >> "$OUT/raw"
}

: > "$RESULTS"
: > "$OUT/raw"
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2> /dev/null)
out 'bench/ust: %s, %s CPUs (%s), Linux %s, clocksource %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" "$(uname -r)" "${clocksource:-unknown}"
out '%s events per thread; a, b, f: %s alternating runs\n' "$N" "$RUNS"
"$MT" record $REC_OPT -q -o "$OUT/clk" -- "$EM" hot 1 1 > /dev/null 2>&1
[ -n "$CONTEXT" ] && out 'context fields, both: %s\n' "$CONTEXT"
out 'marktap clock: %s\nmarktap buffers: %s\n\n' \
	"$("$MT" stats "$OUT/clk" 2> /dev/null | sed -n 's/^clock: *//p')" \
	"$("$MT" stats "$OUT/clk" 2> /dev/null | sed -n 's/^buffers: *//p')"
rm -rf "$OUT/clk"
out '%s\n' "$(row "" marktap LTTng-UST ratio)"
if want a; then
out 'a. enabled: record -q, 64 x 4 MiB sub-buffers per CPU for both, traces on /dev/shm\n'
for t in 1 2; do
	pair_rows hot $t "a."
done
fi
if want f && [ $have_ust = 1 ]; then   # the default channel's geometry, as lttng lists it
	lttng create "$SESSION" --output="$DISK/ust" > /dev/null
	lttng enable-event -u -s "$SESSION" 'bench_ust:ev' > /dev/null
	lttng list "$SESSION" -u 2>/dev/null |
		sed -nE 's/.*Sub-buffer size: *([0-9]+).*/\1/p; s/.*Sub-buffer count: *([0-9]+).*/\1/p' |
		tr '\n' ' ' > "$OUT/ust_channel"
	lttng destroy "$SESSION" > /dev/null
	rm -rf "$DISK/ust"
fi
if want f; then
out 'f. enabled, as typed: marktrace record -o DIR%s (4 x 1 MiB per CPU) |\n' \
	"$([ $have_script = 1 ] && echo ' on a terminal')"
out '   lttng default channel (%s per CPU), discard mode, traces on disk\n' \
	"$(cat "$OUT/ust_channel" 2> /dev/null | awk '{ if (NF == 2) printf "%d x %d KiB", $2, $1 / 1024; else print "?" }')"
for t in 1 2; do
	pair_rows plain $t "f."
done
fi

# --- b. disabled -----------------------------------------------------------
if want b; then
# RUNS runs of each emitter, alternating; each run times the empty loop and
# the loop with the site, one after the other: best of each, and the
# median of the runs' differences (a difference of bests mixes runs)
: > "$OUT/idle.mt"; : > "$OUT/idle.ust"; : > "$OUT/idle.mtp"
r=0
while [ $r -lt "$RUNS" ]; do
	"$EM" idle 200000000 >> "$OUT/idle.mt"
	[ -x "$EP" ] && "$EP" idle 200000000 >> "$OUT/idle.mtp"
	[ -x "$EU" ] && "$EU" idle 200000000 >> "$OUT/idle.ust"
	r=$((r + 1))
done
col() { awk -v c="$1" '{ print $c }' "$2" | best; }
dmed() { awk '{ printf "%.3f\n", $2 - $1 }' "$1" | median | awk '{ if ($1 != "") printf "%.3f", $1; else print "n/a" }'; }
e1=$(col 1 "$OUT/idle.mt"); p1=$(col 2 "$OUT/idle.mt"); d1=$(dmed "$OUT/idle.mt")
if [ -s "$OUT/idle.ust" ]; then
	e2=$(col 1 "$OUT/idle.ust"); p2=$(col 2 "$OUT/idle.ust"); d2=$(dmed "$OUT/idle.ust")
else
	e2=n/a; p2=n/a; d2=n/a
fi
out '%s\n' "$(row "b. disabled: empty loop, best ns/iteration" "$e1" "$e2" "")"
out '%s\n' "$(row "b. disabled: loop with the site, best" "$p1" "$p2" "")"
out '%s\n' "$(row "b. disabled site cost, median difference" "$d1" "$d2" "")"
nmed() { awk '{ printf "%.3f\n", $3 - $1 }' "$1" | median | awk '{ if ($1 != "") printf "%.3f", $1; else print "n/a" }'; }
out '%s\n' "$(row "b. a 5-byte nop instead, median difference" "$(nmed "$OUT/idle.mt")" "" "")"
if [ -s "$OUT/idle.mtp" ]; then
	out '%s\n' "$(row "b. patched site, median difference" "$(dmed "$OUT/idle.mtp")" "" "")"
	echo "b. patched, empty/site/nop ns per run: marktap $(tr '\n' ' ' < "$OUT/idle.mtp")" >> "$OUT/raw"
fi
echo "b. disabled, empty/site ns per run: marktap $(tr '\n' ' ' < "$OUT/idle.mt")| LTTng-UST $(tr '\n' ' ' < "$OUT/idle.ust")" >> "$OUT/raw"
fi

# --- c. zero-loss rate -----------------------------------------------------
if want c; then
# rate_try RATE: 0 = all events recorded, 1 = loss, 2 = emitter too slow
rate_try() {
	rm -rf "$OUT/r"
	res=$("$MT" record $REC_OPT -q -o "$OUT/r" -- "$EM" rate "$1" 2)
	set -- "$1" $res
	got=$("$MT" stats "$OUT/r" | awk '/^events:/ { e = $2 } /^lost:/ { l = $2 + $5 } END { print e + 0, l + 0 }')
	rm -rf "$OUT/r"
	[ "$got" = "${2:-x} 0" ] || return 1
	awk -v want="$1" -v have="${3:-0}" 'BEGIN { exit !(have < 0.98 * want) }' && return 2
	return 0
}
ok_rate=0; bad_rate=0; limit=0; rate=500000
while [ $bad_rate = 0 ] && [ $limit = 0 ] && [ $rate -le 64000000 ]; do
	rate_try $rate; rc=$?
	case $rc in
	0) ok_rate=$rate; rate=$((rate * 2)) ;;
	1) bad_rate=$rate ;;
	2) limit=$rate ;;
	esac
done
# 3 bisection steps below the first rate that lost events, or that the
# emitter could not reach (a doubling can jump from 8 M/s to 16 M/s)
if [ $bad_rate != 0 ] || [ $limit != 0 ]; then
	for step in 1 2 3; do
		top=$bad_rate
		if [ $top = 0 ] || { [ $limit != 0 ] && [ $limit -lt $top ]; }; then top=$limit; fi
		mid=$(( (ok_rate + top) / 2 ))
		rate_try $mid; rc=$?
		case $rc in
		0) ok_rate=$mid ;;
		1) bad_rate=$mid ;;
		2) limit=$mid ;;
		esac
	done
fi
if [ $bad_rate != 0 ]; then c="$ok_rate (loss at $bad_rate)"
else c="$ok_rate (emitter limit at $limit)"; fi
out '%s\n' "$(row "c. zero-loss paced rate to tmpfs, events/s" "$c" "" "")"
fi

# --- d. per-CPU vs per-thread rings -----------------------------------------
if want d; then
for t in 1 2 4; do
	read -r pc pt pr <<EOT
$("$RB" $t 2000000)
EOT
	out '%s\n' "$(row "d. ring core, $t thread(s), ns/event" "$pc" "$pt" "$(ratio "$pc" "$pt")")"
	[ "$pr" = "-" ] || out '%s\n' "$(row "   per-CPU in restartable sequences" "$pr" "$pc" "$(ratio "$pr" "$pc")")"
done
out '%s\n' "$(row "   (columns: per-CPU rings, locked | per-thread rings; rseq | locked)" "" "" "")"
fi

# --- e. marktrace view vs babeltrace2 ----------------------------------------
if want e; then
# run_times CMD...: "WALL CPU" seconds (CPU = user + sys of the command)
run_times() {
	t0=$(date +%s%N)
	cpu=$(sh -c '"$@" > /dev/null 2>&1; times' sh "$@" | awk 'NR == 2 {
		n = split($0, f, " "); s = 0
		for (i = 1; i <= n; i++) { split(f[i], ms, "m"); s += ms[1] * 60 + ms[2] }
		print s }')
	t1=$(date +%s%N)
	echo "$(( (t1 - t0) / 1000000 )) $cpu" | awk '{ printf "%.2f %.2f\n", $1 / 1000, $2 }'
}
half=$((VIEW_N / 2))
"$MT" record -q -o "$OUT/view" --subbuf-size 4M --num-subbuf 64 -- "$EM" hot 2 $half > /dev/null
nev=$("$MT" stats "$OUT/view" | awk '/^events:/ { print $2 }')
size=$(du -sm "$OUT/view" | cut -f1)
for r in 1 2 3; do run_times "$MT" view "$OUT/view"; done > "$OUT/v.times"
vw=$(awk '{ print $1 }' "$OUT/v.times" | best); vc=$(awk '{ print $2 }' "$OUT/v.times" | best)
if command -v "$BT" > /dev/null 2>&1; then
	read -r bw bc <<EOT
$(run_times "$BT" "$OUT/view")
EOT
else
	bw=n/a; bc=n/a
fi
eps() { awk -v n="$nev" -v t="$1" 'BEGIN { if (t + 0 > 0) printf "%.2fM", n / t / 1e6; else print "n/a" }'; }
out '%s\n' "$(row "e. text of $nev events ($size MB), s wall" "$vw" "$bw" "$(ratio "$bw" "$vw")")"
out '%s\n' "$(row "e. same, s CPU (user+sys)" "$vc" "$bc" "$(ratio "$bc" "$vc")")"
out '%s\n' "$(row "e. events/s of text (wall)" "$(eps "$vw")" "$(eps "$bw")" "")"
out '%s\n' "$(row "   (columns: marktrace view | babeltrace2; ratio = speed-up)" "" "" "")"
fi
out '\nruns, ns/event:\n'
out '%s\n' "$(cat "$OUT/raw")"
