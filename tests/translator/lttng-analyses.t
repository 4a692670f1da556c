#!/bin/sh
# The analyses by name (marktap --script NAME, --list-scripts), and the
# same analyses over a trace with lttng-modules' kernel event names
# (tapsets/lttng.stp), on a trace of known content (lttng-kernel.py: the
# numbers below are worked out from its events).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
MARKTAP_SCRIPT_DIR="$top_srcdir/scripts"
export MARKTAP_SCRIPT_DIR
command -v python3 > /dev/null || skip_all "no python3 to write the trace"
plan 17

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
# 1500-8000; the switches span 1000-10000 us
"$MT" --script cputop --trace "$TMP/lt" > "$TMP/out"
is "$(tr -s ' ' < "$TMP/out")" "TASK TID CPU_US PCT SWITCHES
app2 300 6500 72 1
app 100 6000 66 1
worker 200 3000 33 1
CPU BUSY_US PCT
0 9000 100
1 6500 72" "cputop over sched_switch: time per task and per CPU"
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
is "$(tr -s ' ' < "$TMP/out")" "1700000000001000000 cpu 0: swapper/0[0] -> app[100]
1700000000001500000 cpu 1: swapper/1[0] -> app2[300]
1700000000007000000 cpu 0: app[100] -> worker[200] (woken 1000000 ns ago)
5 switches
TASK TID WAKEUPS AVG_NS MAX_NS
worker 200 1 1000000 1000000" "schedlog over sched_switch and sched_waking, its LIMIT argument"
"$MT" --script ctxswitch --trace "$TMP/lt" > "$TMP/out"
is "$(sed -n '2,6p' "$TMP/out" | tr -s ' ' | sort | tr '\n' ',')" \
	"app 100 1,app2 300 1,swapper/0 0 1,swapper/1 0 1,worker 200 1," "ctxswitch: the switches into each task"
like "$(grep latency "$TMP/out")" "^run-queue latency \(us\): 1 wakeups, avg 1000, max 1000$" "ctxswitch: the wake-up to switch latency"

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
