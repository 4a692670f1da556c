#!/bin/sh
# timeline-states.t - the states marktrace timeline and export draw, exactly,
# from a kernel trace written by hand (timeline/states.trace, through
# gentrace): a thread switched in and out blocked, preempted, woken, in a
# system call across a block, interrupted by an irq and a softirq, forking,
# exiting as a zombie and freed; a child woken new, exec'ing and renamed;
# CPUs idle, running, in irq and softirq; names from the state dump.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
CHECK="/usr/bin/python3 $top_srcdir/tests/runtime/timeline/check.py"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3"
plan 8

gen "$TMP/st" < "$top_srcdir/tests/runtime/timeline/states.trace"
ok $? "gentrace writes the trace"
"$MT" export "$TMP/st" -o "$TMP/st.json"
ok $? "export"
$CHECK slices "$TMP/st.json" >"$TMP/slices"
# µs from the first event (1000 ns): thread name (at the end) | slice | start | length
cat >"$TMP/want" <<'EOT'
app|running|1.000|1.000
app|syscall read|2.000|1.000
app|irq 14|3.000|0.500
app|syscall read|3.500|0.500
app|blocked|4.000|4.000
app|runnable|8.000|1.000
app|syscall read|9.000|1.000
app|running|10.000|3.000
app|zombie|13.000|6.000
app-worker|running|0.500|4.500
app-worker|softirq 1|5.000|0.500
app-worker|running|5.500|0.500
app-worker|runnable|6.000|14.000
cpu 0|marktrace [50]|0.000|1.000
cpu 0|app [10]|1.000|1.000
cpu 0|app [10]|2.000|1.000
cpu 0|irq|3.000|0.500
cpu 0|app [10]|3.500|0.500
cpu 0|app [10]|9.000|1.000
cpu 0|app [10]|10.000|3.000
cpu 1|app-worker [11]|0.500|4.500
cpu 1|softirq|5.000|0.500
cpu 1|app-worker [11]|5.500|0.500
cpu 1|newprog [12]|12.500|7.500
marktrace|running|0.000|1.000
marktrace|blocked|1.000|19.000
newprog|runnable|11.000|1.500
newprog|running|12.500|7.500
EOT
diff "$TMP/want" "$TMP/slices" >"$TMP/diff"
ok $? "every state interval of every thread and CPU, exactly"
sed 's/^/# /' "$TMP/diff"
is "$(grep -c '"ph":"i"' "$TMP/st.json")" 23 "the 23 events as instants"
like "$(grep '"name":"fs_open"' "$TMP/st.json")" '"pid":12,"tid":12,"args":\{"fd":3,"filename":"/etc/newprog.conf","cpu":1\}' \
	"on their thread's track, with their fields"

"$MT" timeline "$TMP/st" -o "$TMP/st.html" && $CHECK html "$TMP/st.html" >"$TMP/rows"
ok $? "timeline"
cat >"$TMP/want" <<'EOT'
cpu|cpu 0|idle,irq,running,syscall|0
cpu|cpu 1|idle,running,softirq|0
thread|app [10]|blocked,irq,runnable,running,syscall,unknown,zombie|0
thread|app-worker [11]|runnable,running,softirq,unknown|0
thread|newprog [12]|runnable,running|1
thread|marktrace [50]|blocked,running|0
EOT
grep '|' "$TMP/rows" | diff "$TMP/want" - >"$TMP/diff"
ok $? "rows of CPUs and threads with their states; fs_open is a tick, the state markers are not"
sed 's/^/# /' "$TMP/diff"
like "$(grep -o '"info":"[^"]*"' "$TMP/st.html" | tr '\n' ' ')" \
	'"thread of 10, parent 1, 3 events" "info":"parent 10, was app, 3 events"' \
	"a thread's process and parent (state dump, fork) and its name before exec"
done_testing
