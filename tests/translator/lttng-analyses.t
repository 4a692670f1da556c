#!/bin/sh
# The analyses by name (marktap --script NAME, --list-scripts), and the
# same analyses over a trace with lttng-modules' kernel event names
# (tapsets/lttng.stp), on a trace of known content (lttng-kernel.py: the
# numbers below are worked out from its events).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
MARKTAP_SCRIPT_DIR="$top_srcdir/scripts"
TZ=UTC    # --begin HH:MM:SS is local time
export MARKTAP_SCRIPT_DIR TZ
command -v python3 > /dev/null || skip_all "no python3 to write the trace"
plan 37

# ---- by name -----------------------------------------------------------
set -- "$top_srcdir"/scripts/*.stp
"$MT" --list-scripts > "$TMP/list"
ok $? "--list-scripts succeeds"
is "$(wc -l < "$TMP/list" | tr -d ' ')" "$#" "--list-scripts: one line per script"
is "$(grep '^cputop ' "$TMP/list" | tr -s ' ')" \
	"cputop CPU time per task and per CPU, from context switches (the set of LTTng's analyses: cputop)." \
	"--list-scripts: the name and the header's first sentence"
is "$("$MT" --script countdown 2 | tr '\n' ' ')" "2... 1... liftoff " "--script NAME: the words after it are the script's arguments"
is "$("$MT" --script hello.stp)" "hello from marktap" "--script NAME.stp is NAME"
"$MT" --script nosuch > "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "1:marktap: no analysis 'nosuch' in $MARKTAP_SCRIPT_DIR ('marktap --list-scripts' lists them)" \
	"an unknown analysis: exit 1, where it looked"
"$MT" --script ../scripts/hello > /dev/null 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "1:marktap: --script takes the name of an analysis (cputop), not a path: '../scripts/hello'" \
	"--script refuses a path"

# ---- over an LTTng kernel trace ------------------------------------------
python3 "$top_srcdir/tests/translator/lttng-kernel.py" "$TMP/lt" || bail_out "lttng-kernel.py failed"
# cputop: CPU0 runs app 1000-7000 us and worker 7000-10000, CPU1 app2
# 1500-8000 and 9100-9900; the switches span 1000-10000 us
"$MT" --script cputop --trace "$TMP/lt" > "$TMP/out"
is "$(tr -s ' ' < "$TMP/out")" "TASK TID CPU_US PCT SWITCHES
app2 300 7300 81 2
app 100 6000 66 1
worker 200 3000 33 1
CPU BUSY_US PCT
0 9000 100
1 7300 81" "cputop over sched_switch: time per task and per CPU"
"$MT" --script syscallstats --trace "$TMP/lt" > "$TMP/out"
is "$(tr -s ' ' < "$TMP/out" | sort)" "PROCESS SYSCALL COUNT ERRORS AVG_NS MAX_NS
app openat 1 1 400000 400000
app read 1 0 500000 500000
app2 read 1 0 1000000 1000000
worker read 1 0 800000 800000" "syscallstats over syscall_entry_NAME/syscall_exit_NAME: names, errors, latency"
"$MT" --script irqstats --trace "$TMP/lt" > "$TMP/out"
is "$(tr -s ' ' < "$TMP/out")" "HARD IRQ COUNT TOTAL_US AVG_NS MAX_NS
19 2 500 250000 300000
SOFT IRQ COUNT TOTAL_US AVG_NS MAX_NS RAISED
NET_RX 1 500 500000 500000 1" "irqstats over irq_handler_* and softirq_*"
"$MT" --script schedlog --trace "$TMP/lt" 3 > "$TMP/out"
is "$(tr -s ' ' < "$TMP/out" | sed -n 1,5p)" "1700000000001000000 cpu 0: swapper/0[0] -> app[100]
1700000000001500000 cpu 1: swapper/1[0] -> app2[300]
1700000000007000000 cpu 0: app[100] -> worker[200] (woken 1000000 ns ago)
7 switches
TASK TID WAKEUPS AVG_NS MAX_NS" "schedlog over sched_switch and sched_waking, its LIMIT argument"
is "$(sed '1,5d' "$TMP/out" | tr -s ' ' | sort | tr '\n' ',')" "app2 300 1 600000 600000,worker 200 1 1000000 1000000," \
	"schedlog: wake-up latency per task"
"$MT" --script ctxswitch --trace "$TMP/lt" > "$TMP/out"
is "$(sed -n '2,6p' "$TMP/out" | tr -s ' ' | sort | tr '\n' ',')" \
	"app 100 1,app2 300 2,swapper/0 0 1,swapper/1 0 2,worker 200 1," "ctxswitch: the switches into each task"
like "$(grep latency "$TMP/out")" "^run-queue latency \(us\): 2 wakeups, avg 800, max 1000$" "ctxswitch: the wake-up to switch latency"
# schedtop: worker waited 1000 us (woken by app), app2 600 us (by CPU1's idle task)
"$MT" --script schedtop --trace "$TMP/lt" > "$TMP/out"
is "$(tr -s ' ' < "$TMP/out")" "2 wake-ups: avg 800000 ns, max 1000000 ns
SWITCH_IN LATENCY_NS CPU TID TASK WOKEN_BY
1700000000007000000 1000000 0 200 worker app
1700000000009100000 600000 1 300 app2 swapper/1" "schedtop: the longest wake-up latencies, longest first"
is "$("$MT" --script schedtop --trace "$TMP/lt" 1 | tail -n +3 | tr -s ' ')" "1700000000007000000 1000000 0 200 worker app" \
	"schedtop LIMIT: the LIMIT longest only"

# ---- --begin, --end, --tid ------------------------------------------------
# from 1500 us: CPU0's first switch is out, so app's time is not known
is "$("$MT" --script cputop --trace "$TMP/lt" --begin +0.0005 | tr -s ' ' | tr '\n' ',')" \
	"TASK TID CPU_US PCT SWITCHES,app2 300 7300 85 2,worker 200 3000 35 1,CPU BUSY_US PCT,0 3000 35,1 7300 85," \
	"--begin +SECONDS: from the first event's time on"
is "$("$MT" --script cputop --trace "$TMP/lt" --begin +0.0059 --end +0.0091 | tr -s ' ' | tr '\n' ',')" \
	"TASK TID CPU_US PCT SWITCHES,worker 200 3000 100 1,app2 300 800 26 1,CPU BUSY_US PCT,0 3000 100,1 800 26," \
	"--begin and --end: the switches between 6900 and 10100 us"
is "$("$MT" --script schedlog --trace "$TMP/lt" --begin 22:13:20.0065 --end '2023-11-14 22:13:20.0075' | head -2)" \
	"1700000000007000000 cpu 0: app[100] -> worker[200]
1 switches" "--begin HH:MM:SS.F and --end YYYY-MM-DD HH:MM:SS.F (local time)"
is "$("$MT" --script syscallstats --trace "$TMP/lt" --tid 200,300 | tr -s ' ' | sort | tr '\n' ',')" \
	"PROCESS SYSCALL COUNT ERRORS AVG_NS MAX_NS,app2 read 1 0 1000000 1000000,worker read 1 0 800000 800000," \
	"--tid N,M: those threads' calls only"
is "$("$MT" --script syscallstats --trace "$TMP/lt" --end 1700000000003300000 | tr -s ' ' | sort | tr '\n' ',')" \
	"PROCESS SYSCALL COUNT ERRORS AVG_NS MAX_NS,app read 1 0 500000 500000,app2 read 1 0 1000000 1000000," \
	"--end NANOSECONDS: the calls that returned by 3300 us"
"$MT" --script cputop --trace "$TMP/lt" --begin 5x > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --begin: cannot read '5x' as a time (+SECONDS, HH:MM:SS[.FRACTION], YYYY-MM-DD HH:MM:SS[.FRACTION] or nanoseconds since the epoch)" \
	"--begin: a time marktap cannot read is a usage error"
"$MT" --script cputop --trace "$TMP/lt" --begin +2 --end +1 > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --begin is after --end" "--begin after --end is a usage error"
"$MT" --script cputop --tid 1 -T 1 > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --begin, --end and --tid choose events of a stored trace: they go with --trace" \
	"--tid without --trace is a usage error"

# ---- --min/--max and --mi on the LTTng analyses -----------------------------
is "$("$MT" --script syscallstats --trace "$TMP/lt" --min 600 | tr -s ' ' | sort | tr '\n' ',')" \
	"PROCESS SYSCALL COUNT ERRORS AVG_NS MAX_NS,app2 read 1 0 1000000 1000000,worker read 1 0 800000 800000," \
	"syscallstats --min 600: the calls of 600 us and more"
is "$("$MT" --script irqstats --trace "$TMP/lt" --max 250 | tr -s ' ' | tr '\n' ',')" \
	"HARD IRQ COUNT TOTAL_US AVG_NS MAX_NS,19 1 200 200000 200000,SOFT IRQ COUNT TOTAL_US AVG_NS MAX_NS RAISED," \
	"irqstats --max 250: the handler of 200 us only"
is "$("$MT" --script schedtop --trace "$TMP/lt" --max 800 | head -1)" "1 wake-ups: avg 600000 ns, max 600000 ns" \
	"schedtop --max 800: the latency of 600 us only"
is "$("$MT" --script schedlog --trace "$TMP/lt" --min 700 | head -2 | tr '\n' ',')" \
	"1700000000007000000 cpu 0: app[100] -> worker[200] (woken 1000000 ns ago),1 switches," \
	"schedlog --min 700: the switches after a wake-up of 700 us or more"
# one JSON document each; the values those of the text
mi() { "$MT" --script "$1" --trace "$TMP/lt" --mi | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }
is "$(mi cputop '[(t["name"], t["cpu_us"], t["pct"]) for t in d["tasks"]], [(c["cpu"], c["busy_us"]) for c in d["cpus"]]')" \
	"[('app2', 7300.0, 81), ('app', 6000.0, 66), ('worker', 3000.0, 33)] [(0, 9000.0), (1, 7300.0)]" "cputop --mi"
is "$(mi syscallstats 'sorted((s["process"], s["syscall"], s["count"], s["errors"], s["max_us"]) for s in d["syscalls"])')" \
	"[('app', 'openat', 1, 1, 400.0), ('app', 'read', 1, 0, 500.0), ('app2', 'read', 1, 0, 1000.0), ('worker', 'read', 1, 0, 800.0)]" \
	"syscallstats --mi"
is "$(mi irqstats '[(h["irq"], h["count"], h["total_us"]) for h in d["hard"]], [(s["name"], s["count"], s["raised"]) for s in d["soft"]]')" \
	"[(19, 2, 500.0)] [('NET_RX', 1, 1)]" "irqstats --mi"
is "$(mi schedtop '[(l["tid"], l["latency_us"], l["woken_by"]) for l in d["latencies"]]')" \
	"[(200, 1000.0, 'app'), (300, 600.0, 'swapper/1')]" "schedtop --mi"
is "$(mi schedlog 'len(d["switches"]), d["count"], [(t["task"], t["max_us"]) for t in d["tasks"]]')" \
	"7 7 [('worker', 1000.0), ('app2', 600.0)]" "schedlog --mi"

# ---- what the tapset binds ---------------------------------------------
is "$("$MT" -p2 "$top_srcdir/scripts/cputop.stp" | grep -c 'trace\.event')" "0" \
	"without --trace the LTTng points add nothing"
is "$("$MT" -p2 --trace "$TMP/lt" "$top_srcdir/scripts/syscallstats.stp" | grep -o '^trace\.event("[a-z_]*")' | sort | tr '\n' ' ')" \
	'trace.event("syscall_entry_openat") trace.event("syscall_entry_read") trace.event("syscall_exit_openat") trace.event("syscall_exit_read") ' \
	"with --trace, syscall_any and its .return bind each syscall_*_NAME of the trace"
! "$MT" --trace "$TMP/lt" -e 'probe syscall_any { println(syscall_nr) }' > /dev/null 2> "$TMP/err"
ok $? "syscall_nr over an LTTng trace is an error"
like "$(head -1 "$TMP/err")" "^semantic error: variable 'syscall_nr' is not available in syscall_any: an LTTng trace names the system call" \
	"... that says why"
done_testing
