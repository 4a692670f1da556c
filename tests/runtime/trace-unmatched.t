#!/bin/sh
# marktap --trace: a probe point of the script that matches no event of
# the trace is said (WARNING, with the events it runs on), rather than the
# script printing empty tables as if the program had done nothing: an
# analysis of the kernel (cputop) over a user-space recording, a kernel
# marker the trace does not hold.  Over a trace that has the events (an
# LTTng kernel trace for cputop, whose scheduler.ctxswitch is then
# trace.event("sched_switch")) nothing is said; -w says nothing.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
MTAP=$B/translator/marktap
DEMO=$B/runtime/demo/marktap-demo
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$B/tapsets"
MARKTAP_MARKERS="$top_srcdir/tapsets/markers.tsv"
MARKTAP_SCRIPT_DIR="$top_srcdir/scripts"
export MARKTAP_TAPSET_DIR MARKTAP_MARKERS MARKTAP_SCRIPT_DIR
[ -x "$MTAP" ] || skip_all "marktap not built"
[ -x "$DEMO" ] || skip_all "no demo program at $DEMO"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
plan 12

"$MT" record -q -o "$TMP/u" -- "$DEMO" 1 > /dev/null
ok $? "record the demo (user-space markers only)"

# an analysis of the kernel over it
"$MTAP" --script cputop --trace "$TMP/u" > "$TMP/out" 2> "$TMP/err"
is "$?:$(head -1 "$TMP/out" | tr -s ' ')" "0:TASK TID CPU_US PCT SWITCHES" "cputop over a user trace: runs, exit 0"
like "$(cat "$TMP/err")" "^WARNING: probe point scheduler.ctxswitch matched no event of the trace $TMP/u: it runs on kernel_sched_schedule events \\('marktrace stats $TMP/u' lists the trace's events\\): identifier 'scheduler' at .*/scripts/cputop.stp:10:7" \
	"... the probe point it needs is named, with the events it runs on and where"
is "$(grep -c '^WARNING' "$TMP/err")" 1 "... once"

# points of one script: each one said, or not
cat > "$TMP/k.stp" <<'STP'
global n, m
probe kernel.mark("fs_open") { n++ }
probe kernel.mark("fs_write"), kernel.mark("fs_read") { m++ }
probe end { printf("%d %d\n", n, m) }
STP
"$MTAP" --trace "$TMP/u" "$TMP/k.stp" > "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/out")" "0:4 3" "kernel markers over the user trace: those of its names run (4 fs_open, 3 fs_read)"
like "$(cat "$TMP/err")" "^WARNING: probe point kernel.mark\\(\"fs_write\"\\) matched no event of the trace $TMP/u: it runs on fs_write events" \
	"... the one it has no events of is said"
is "$(grep -c '^WARNING' "$TMP/err"):$(grep '^WARNING' "$TMP/err" | grep -c 'fs_open\|fs_read')" "1:0" "... and only that one"
"$MTAP" -w --trace "$TMP/u" "$TMP/k.stp" > "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/out"):$(cat "$TMP/err")" "0:4 3:" "-w: not said"
"$MTAP" --trace "$TMP/u" -e 'global n; probe trace.event("fs_*") { n++ } probe end { println(n) }' > "$TMP/out" 2> "$TMP/err"
is "$(cat "$TMP/out"):$(cat "$TMP/err")" "10:" "trace.event(\"fs_*\"): the trace's classes, nothing said"
"$MTAP" --trace "$TMP/u" -e 'probe trace.event("sched_*") { n++ }' > "$TMP/out" 2> "$TMP/err"
like "$?:$(cat "$TMP/err")" "^1:semantic error: while resolving probe point trace.event\\(\"sched_\\*\"\\): no match" \
	"trace.event of no class of the trace: an error, as stap's"

# cputop over an LTTng kernel trace: its point runs on sched_switch
if command -v python3 > /dev/null; then
	python3 "$top_srcdir/tests/translator/lttng-kernel.py" "$TMP/lt"
	"$MTAP" --script cputop --trace "$TMP/lt" > "$TMP/out" 2> "$TMP/err"
	is "$?:$(grep -c . < "$TMP/out"):$(cat "$TMP/err")" "0:7:" \
		"cputop over an LTTng kernel trace: its table, nothing said (sched_switch is its event there)"
	"$MTAP" --script irqstats --trace "$TMP/lt" > "$TMP/out" 2> "$TMP/err"
	is "$?:$(cat "$TMP/err")" "0:" "irqstats over it: nothing said"
else
	skip 2 "no python3 to write an LTTng kernel trace"
fi
done_testing
