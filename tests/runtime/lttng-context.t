#!/bin/sh
# LTTng's context fields beyond vpid, vtid and procname: a program with
# LTTng-UST tracepoints (lttng/mtlt_tp.h) recorded by Debian's lttng-tools
# with `lttng add-context -u -t vtid -t ip -t pthread_id` (no vpid):
# marktrace view shows ip and pthread_id after the payload as babeltrace2
# reads them, the pid as not known ('?', not -1), --filter compares them
# (ctx.ip, or pthread_id by its name), marktap --trace reads them as
# $ctx_NAME, export writes them as args.ctx and does not take the tid for
# a pid.  A perf counter context too where this
# machine lets LTTng count.  Skipped where lttng-sessiond cannot start.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
LT=$top_srcdir/tests/runtime/lttng
PY=/usr/bin/python3
BT=$(command -v babeltrace2)
[ -n "$BT" ] || skip_all "babeltrace2 is not installed"
[ -x "$PY" ] || skip_all "no $PY"
for tool in lttng lttng-sessiond; do
	command -v $tool > /dev/null 2>&1 || skip_all "$tool is not installed (lttng-tools)"
done
${CC:-cc} -O1 -I"$LT" -o "$TMP/mtlt" "$LT/mtlt.c" -llttng-ust -ldl > "$TMP/cc.log" 2>&1 ||
	skip_all "cannot build an LTTng-UST program (liblttng-ust-dev): $(head -1 "$TMP/cc.log")"

# A session daemon: the one running, else one of ours, stopped at the end;
# the tests that drive lttng take turns (lttng-read.t says why).
. "$top_srcdir/tests/lib/lttng.sh"
lttng_take_turns
S1=mtctx-a-$$ S2=mtctx-b-$$
cleanup() {
	lttng destroy "$S1" > /dev/null 2>&1
	lttng destroy "$S2" > /dev/null 2>&1
	lttng_sessiond_stop
	rm -rf "$TMP"
}
trap cleanup EXIT
lttng_sessiond skip_all
plan 18

N=20
lttng create "$S1" --output="$TMP/rec" > "$TMP/lttng.log" 2>&1 &&
lttng enable-event -s "$S1" -u 'mtlt:*' >> "$TMP/lttng.log" 2>&1 &&
lttng add-context -s "$S1" -u -t vtid -t ip -t pthread_id >> "$TMP/lttng.log" 2>&1 &&
lttng start "$S1" >> "$TMP/lttng.log" 2>&1 && "$TMP/mtlt" $N &&
lttng stop "$S1" >> "$TMP/lttng.log" 2>&1 && lttng destroy "$S1" >> "$TMP/lttng.log" 2>&1
ok $? "lttng records mtlt with the contexts vtid, ip and pthread_id"
EVENTS=$((2 * N + 1 + N / 5))

TZ=UTC "$BT" "$TMP/rec" > "$TMP/bt.txt" 2> "$TMP/bt.err"
is "$?:$(grep -c . < "$TMP/bt.txt")" "0:$EVENTS" "babeltrace2 reads its $EVENTS events"
TZ=UTC "$MT" view --no-delta "$TMP/rec" > "$TMP/mt.txt" 2> "$TMP/mt.err"
is "$?:$(cat "$TMP/mt.err"):$(grep -c . < "$TMP/mt.txt")" "0::$EVENTS" "marktrace view reads them, nothing on stderr"
is "$(grep -Ec ' \{ctx ip=[0-9]+ pthread_id=[0-9]+\}$' "$TMP/mt.txt")" "$EVENTS" \
	"every event shows its other context fields after the payload: {ctx ip=... pthread_id=...}"
is "$(grep -Ec '^\[[^]]*\] cpu[0-9]+ \[\?/[0-9]+\] mtlt:' "$TMP/mt.txt"):$(grep -c -- '-1/' "$TMP/mt.txt")" "$EVENTS:0" \
	"without vpid the pid is shown as not known: [?/tid], never -1"
"$PY" "$LT/canon.py" bt < "$TMP/bt.txt" | grep -v "'last': -1}" | sort > "$TMP/bt.n"
"$PY" "$LT/canon.py" mt < "$TMP/mt.txt" | grep -v "'last': -1}" | sort > "$TMP/mt.n"
if [ -s "$TMP/bt.n" ] && diff "$TMP/bt.n" "$TMP/mt.n" > "$TMP/diff"; then ok 0 "every field and context field equals babeltrace2's reading"
else ok 1 "every field and context field equals babeltrace2's reading"; head -10 "$TMP/diff" | sed 's/^/# /'; fi
is "$(grep -c "ctx={'ip': [0-9]*, 'pthread_id': [0-9]*}" "$TMP/bt.n")" "$((EVENTS - 1))" "... babeltrace2 has them for every event (canon.py compares them)"

# --filter: ctx.NAME, or the name alone when no payload field has it
ip=$(grep -m1 ' mtlt:ints: ' "$TMP/mt.txt" | sed 's/.*{ctx ip=\([0-9]*\) .*/\1/')
tid=$(grep -m1 ' mtlt:ints: ' "$TMP/mt.txt" | sed 's/.*pthread_id=\([0-9]*\)}$/\1/')
want=$(grep -c "ip = $ip," "$TMP/bt.txt")
"$MT" view --filter "ctx.ip == $ip" "$TMP/rec" > "$TMP/f1.txt" 2> "$TMP/f1.err"
is "$(grep -c . < "$TMP/f1.txt"):$(grep -vc ' mtlt:ints: ' "$TMP/f1.txt"):$(cat "$TMP/f1.err")" "$want:0:" \
	"--filter 'ctx.ip == $ip': the $want events of that call site (babeltrace2's count)"
hex=$(printf '0x%x' "$ip")
"$MT" view --filter "ip == $hex && name == \"mtlt:ints\"" "$TMP/rec" > "$TMP/f2.txt"
is "$(grep -c . < "$TMP/f2.txt")" "$want" "--filter 'ip == $hex': by its name, in hex too"
"$MT" view --filter "pthread_id != $tid" "$TMP/rec" > "$TMP/f3.txt"
is "$(grep -c . < "$TMP/f3.txt")" 0 "--filter 'pthread_id != ...': one thread, none"
"$MT" view --filter 'ctx.s8 == 0 || ctx.nosuch == 1' "$TMP/rec" > "$TMP/f4.txt" 2> "$TMP/f4.err"
is "$(grep -c . < "$TMP/f4.txt")" 0 "ctx.NAME names a context field only (s8 is the payload's)"
like "$(cat "$TMP/f4.err")" "no event of the trace has a field 'ctx.nosuch'" "... and a misspelt one is said"

# marktap --trace: $ctx_NAME
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"
export MARKTAP_TAPSET_DIR
"$top_builddir/translator/marktap" --trace "$TMP/rec" -e 'global n
	probe trace.event("mtlt:ints") { n[$ctx_ip, $ctx_pthread_id]++ }
	probe end { foreach ([i, p] in n) printf("%d %d %d\n", i, p, n[i, p]) }' > "$TMP/tr.out" 2> "$TMP/tr.err"
is "$(cat "$TMP/tr.out" "$TMP/tr.err")" "$ip $tid $want" \
	"marktap --trace: \$ctx_ip and \$ctx_pthread_id of trace.event(\"mtlt:ints\") as view and babeltrace2 read them"

# export: args.ctx, and no tid taken for a pid
"$MT" export "$TMP/rec" -o "$TMP/x.json"
ok $? "export"
"$PY" - "$TMP/x.json" "$ip" "$tid" > "$TMP/x.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ip, ptid = int(sys.argv[2]), int(sys.argv[3])
inst = [e for e in d["traceEvents"] if e["ph"] == "i" and e["name"].startswith("mtlt:")]
print("instants %d" % len(inst))
print("ctx %d" % sum(1 for e in inst if e["args"].get("ctx", {}).get("pthread_id") == ptid and "ip" in e["args"]["ctx"]))
print("ints ip %d" % sum(1 for e in inst if e["name"] == "mtlt:ints" and e["args"]["ctx"]["ip"] == ip))
print("pid is tid %d" % sum(1 for e in d["traceEvents"] if e["ph"] != "M" and e["pid"] == e["tid"]))
print("pids %s" % sorted({e["pid"] for e in inst}))
print("process %s" % sorted(e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"))
PY
is "$(sed -n 's/^instants //p' "$TMP/x.txt"):$(sed -n 's/^ctx //p' "$TMP/x.txt"):$(sed -n 's/^ints ip //p' "$TMP/x.txt")" \
	"$EVENTS:$EVENTS:$want" "every instant carries args.ctx (ip, pthread_id) as view shows them"
is "$(sed -n 's/^pid is tid //p' "$TMP/x.txt")" 0 "no event takes its tid for its pid"
is "$(sed -n 's/^pids //p' "$TMP/x.txt"):$(sed -n 's/^process //p' "$TMP/x.txt")" "[4194304]:['pid not known']" \
	"the thread goes in one process of no real pid, named so"

# a perf counter: where this machine lets LTTng count (not in every VM)
lttng create "$S2" --output="$TMP/perf" > "$TMP/perf.log" 2>&1 &&
lttng enable-event -s "$S2" -u 'mtlt:ints' >> "$TMP/perf.log" 2>&1 &&
lttng add-context -s "$S2" -u -t vpid -t vtid -t perf:thread:cpu-cycles >> "$TMP/perf.log" 2>&1 &&
lttng start "$S2" >> "$TMP/perf.log" 2>&1 && "$TMP/mtlt" 3 &&
lttng stop "$S2" >> "$TMP/perf.log" 2>&1 && lttng destroy "$S2" >> "$TMP/perf.log" 2>&1
if [ "$("$BT" "$TMP/perf" 2> /dev/null | grep -c 'perf_thread_cpu_cycles = ')" = 3 ]; then
	"$MT" view "$TMP/perf" > "$TMP/p.txt"
	is "$(grep -Ec '\[[0-9]+/[0-9]+\] mtlt:ints: .* \{ctx perf_thread_cpu_cycles=[0-9]+\}$' "$TMP/p.txt")" 3 \
		"a perf counter context: {ctx perf_thread_cpu_cycles=...}"
else
	skip 1 "LTTng records no perf:thread:cpu-cycles here (no hardware counters in this machine)"
fi
done_testing
