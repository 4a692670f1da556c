#!/bin/sh
# marktrace record --kernel -e SUBSYS:NAME: kernel tracepoints through
# perf, on the host (no marktap.ko): the fields their tracefs formats
# declare, with exact values (a __data_loc string, an array, the pid, the
# count of a known command's openat calls), marktrace view and babeltrace2
# agreeing; their clock is our user events' (a marker right after its
# open(2) follows the openat tracepoint); losses counted alike in the
# summary, view and babeltrace2; a pattern that matches nothing, and a
# user without the right to trace, refused with a clear message.
. "$(dirname "$0")/../lib/record.sh"
OPENER=$B/tests/runtime/tp-opener
DEMO=$B/runtime/demo/marktap-demo
[ -x "$OPENER" ] && [ -x "$DEMO" ] || skip_all "build first (tp-opener, marktap-demo)"
[ "$(id -u)" = 0 ] || skip_all "needs root (perf tracepoints system-wide)"
command -v babeltrace2 >/dev/null 2>&1 || skip_all "babeltrace2 not installed"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
TRACEFS=/sys/kernel/tracing
[ -r $TRACEFS/available_events ] || TRACEFS=/sys/kernel/debug/tracing
[ -r $TRACEFS/available_events ] || skip_all "no tracefs (/sys/kernel/tracing)"
for e in sched/sched_process_exec sched/sched_process_exit syscalls/sys_enter_openat \
	 raw_syscalls/sys_enter; do
	[ -r $TRACEFS/events/$e/format ] || skip_all "no tracepoint $e on this kernel"
done
if ! "$MT" record --kernel -q -o "$W/probe" -e sched:sched_process_exec -- true 2> "$W/probe.err"; then
	skip_all "perf tracepoints unavailable: $(cat "$W/probe.err")"
fi
plan 39

# view's and babeltrace2's text of trace DIR, in DIR.view and DIR.bt
read_both() {
	"$MT" view "$1" > "$1.view" 2> "$1.view.err"
	babeltrace2 "$1" > "$1.bt" 2> "$1.bt.err"
}
# count REGEX FILE
count() { grep -cE "$1" "$2"; }

is "$("$MT" list --tracepoints 'sched:sched_process_e?ec')" \
	'sched:sched_process_exec "filename %s pid %d old_pid %d"' \
	"list --tracepoints GLOB: the fields of the tracefs format"
"$MT" list --tracepoints 'nosuch:*' > /dev/null 2> "$W/list.err"
is "$?:$(cat "$W/list.err")" "1:marktrace: list: --tracepoints: no tracepoint matches 'nosuch:*'" \
	"list --tracepoints: a glob that matches nothing is an error"

# --- a known command: exec, 100 openat of one buffer, exit ---
N=100
echo x > "$W/target"
"$MT" record --kernel -o "$W/a" -e 'sched:sched_process_e*' -e 'syscalls:sys_enter_openat' \
	-e 'raw_syscalls:sys_enter' -- "$OPENER" "$W/target" $N > "$W/a.out" 2> "$W/a.err"
is "$?" 0 "record --kernel -e SUBSYS:NAME -- CMD: exit 0"
like "$(head -1 "$W/a.err")" "^marktrace: 4 tracepoints enabled\$" "the globs took 4 tracepoints"
like "$(tail -1 "$W/a.err")" \
	"^marktrace: [0-9]+ tracepoint events recorded, 0 lost; 0 user events, in $W/a\$" \
	"the summary counts events and losses"
read -r _ P _ A < "$W/a.out"
ADEC=$(printf '%d' "$A")
diag "tp-opener: pid $P, buffer $A"
read_both "$W/a"
is "$(cat "$W/a.view.err" "$W/a.bt.err")" "" "view and babeltrace2 read it without a word"
is "$(count "sched:sched_process_exec: filename=\"$OPENER\" pid=$P old_pid=$P\$" "$W/a.view")" 1 \
	"view: the exec, its __data_loc filename and pids exact"
is "$(count "\\{ pid = $P, tid = $P, procname = \"tp-opener\" \\}, \\{ filename = \"$OPENER\", pid = $P, old_pid = $P \\}" "$W/a.bt")" 1 \
	"babeltrace2: the same, with pid, tid and procname in the context"
if grep -q 'field:const char \* filename;' $TRACEFS/events/syscalls/sys_enter_openat/format; then
	WANT="filename=$A "
	WANTBT="filename = $(echo "$A" | tr a-f A-F | sed 's/^0X/0x/'),"
else   # a kernel that reads the user string itself
	WANT="filename=\"$W/target\""
	WANTBT="filename = \"$W/target\""
fi
is "$(count "tp-opener\\[$P/$P\\] syscalls:sys_enter_openat: .*$WANT" "$W/a.view")" $N \
	"view: $N openat of the buffer by the command, named by its procname"
is "$(grep "procname = \"tp-opener\" }" "$W/a.bt" | grep -c "sys_enter_openat: .*$WANTBT")" $N \
	"babeltrace2: the same $N"
is "$(count "tp-opener\\[$P/$P\\] raw_syscalls:sys_enter: id=257 args=\\[ \\[0\\] = 4294967196, \\[1\\] = $ADEC, \\[2\\] = 0," "$W/a.view")" $N \
	"view: raw_syscalls' args[6] as a CTF array, args[1] the buffer"
is "$(count "pid = $P, tid = $P, .* raw_syscalls:sys_enter|raw_syscalls:sys_enter: .*pid = $P, tid = $P, .*\\{ id = 257, args = \\[ \\[0\\] = 4294967196, \\[1\\] = $ADEC," "$W/a.bt")" $N \
	"babeltrace2: the same array"
is "$(count "sched:sched_process_exit: comm=\"tp-opener\" pid=$P prio=" "$W/a.view")" 1 \
	"view: the exit, its char[16] comm a string"
is "$(count "sched:sched_process_exit: .*\\{ comm = \"tp-opener\", pid = $P, prio = " "$W/a.bt")" 1 \
	"babeltrace2: the same"
is "$(grep -cE '\] (sched|syscalls|raw_syscalls):' "$W/a.view")" \
	"$(grep -cE '\) [^ ]+ (sched|syscalls|raw_syscalls):' "$W/a.bt")" \
	"view and babeltrace2 count the same events"
is "$(awk '/sched_process_exec: .*pid='"$P"' /{ e = NR } /tp-opener\['"$P"'\/'"$P"'\] syscalls:sys_enter_openat/ { if (!o) o = NR } END { print (e && o > e) }' "$W/a.view")" 1 \
	"the exec comes before the command's openat calls"
is "$(awk -v p="[$P/$P]" 'index($0, p) && / sched:sched_process_exec: / { e = 1; next }
	index($0, p) { if ($4 == "tp-opener" p && !e || $4 != "tp-opener" p && e) bad++ }
	END { print bad + 0 }' "$W/a.view")" 0 \
	"procname: the parent's name before the exec, the command's after (exec and fork on two CPUs)"
like "$(grep -A3 'name = "syscalls:sys_enter_openat"' "$W/a/kernel/metadata" | head -1)" \
	'name = "syscalls:sys_enter_openat"' "the class is named SUBSYS:NAME in the metadata"
is "$(ls "$W/a")" "kernel
ust" "with a command: DIR/kernel and DIR/ust, as for marktap.ko's markers"

# --- one clock with user events: fs_open right after its open(2) ---
"$MT" record --kernel -q -o "$W/c" -e 'syscalls:sys_enter_openat' -e 'fs_open' -- "$DEMO" 2 \
	> /dev/null 2>&1
is "$?" 0 "tracepoints and the command's user markers in one recording"
"$MT" view --no-delta "$W/c" > "$W/c.view"
# per fs_open: the same tid's previous event, and how long before
awk '{
	tid = $0; sub(/^[^[]*\[[^]]*\] [^[]*\[[0-9]+\//, "", tid); sub(/\].*/, "", tid)
	t = substr($1, 2, length($1) - 2); split(t, hms, ":"); s = hms[1] * 3600 + hms[2] * 60 + hms[3]
	if ($0 ~ / fs_open: /) { n++; if (last[tid] ~ /sys_enter_openat/ && s - when[tid] >= 0 && s - when[tid] < 0.001) good++ }
	last[tid] = $0; when[tid] = s
} END { print n + 0, good + 0 }' "$W/c.view" > "$W/c.pairs"
read -r NOPEN GOOD < "$W/c.pairs"
ok "$([ "$NOPEN" -ge 2 ]; echo $?)" "the user trace has the fs_open events ($NOPEN)"
is "$GOOD" "$NOPEN" "each follows its openat tracepoint by less than 1 ms: one clock"

# --- losses: the recorder stopped while the command opens 20000 times ---
N=20000
"$MT" record --kernel -o "$W/l" --subbuf-size 4k --num-subbuf 2 -e 'syscalls:sys_enter_openat' \
	-- sh -c 'kill -STOP $PPID; "$1" "$2" "$3"; kill -CONT $PPID' sh "$OPENER" "$W/target" $N \
	> "$W/l.out" 2> "$W/l.err"
is "$?" 0 "a recording that lost events: exit 0"
SUMLOST=$(sed -n 's/^marktrace: [0-9]* tracepoint events recorded, \([0-9]*\) lost.*/\1/p' "$W/l.err")
read -r _ P _ A < "$W/l.out"
read_both "$W/l"
GOT=$(grep -c "tp-opener\\[$P/$P\\] syscalls:sys_enter_openat" "$W/l.view")
BTLOST=$(sed -n 's/.*[Tt]racer discarded \([0-9]*\) events\{0,1\} .*/\1/p' "$W/l.bt.err" | awk '{ s += $1 } END { print s + 0 }')
diag "delivered $GOT of $N, lost $SUMLOST"
ok "$([ "${SUMLOST:-0}" -gt 0 ]; echo $?)" "losses are counted ($SUMLOST)"
is "$(view_lost "$W/l.view")" "$SUMLOST" "view says as many lost as the summary"
is "$BTLOST" "$SUMLOST" "babeltrace2 too (events_discarded)"
# a loss is carried by the packet after the events it followed: never by
# a stream's first packet, whose count babeltrace2 cannot place
is "$(grep -c 'may have discarded' "$W/l.bt.err")" 0 "no loss in a stream's first packet (babeltrace2's \"may have discarded\")"
ok "$([ "$GOT" -lt $N ] && [ $((GOT + SUMLOST)) -ge $N ]; echo $?)" \
	"delivered + lost cover the command's $N openat calls"

# --- without a command: until SIGINT ---
"$MT" record --kernel -o "$W/s" -e 'sched:sched_switch' > /dev/null 2> "$W/s.err" &
SPID=$!
wait_for 20 grep -q 'tracepoints enabled' "$W/s.err"
# a packet on disk (the switch timer's, within a second)
has_packet() { [ "$(cat "$1"/channel0_* 2>/dev/null | wc -c)" -gt 0 ]; }
wait_for 20 has_packet "$W/s"
kill -INT $SPID
wait $SPID
is "$?" 0 "no command: SIGINT ends the recording, exit 0"
SN=$(sed -n 's/^marktrace: \([0-9]*\) tracepoint events recorded, 0 lost, in .*/\1/p' "$W/s.err")
ok "$([ "${SN:-0}" -gt 0 ]; echo $?)" "... sched_switch events recorded ($SN)"
is "$("$MT" stats "$W/s" | sed -n 's/^events: *//p'):$(grep -c 'recording_complete = 1' "$W/s/metadata")" \
	"$SN:1" "... all in the trace, which says it is complete"

# --- refusals ---
"$MT" record --kernel -o "$W/n" -e 'sched:sched_nonesuch' -e 'sched:sched_process_exec' \
	-- true > /dev/null 2> "$W/n.err"
is "$?:$(cat "$W/n.err")" \
	"1:marktrace: record: --kernel: no tracepoint matches 'sched:sched_nonesuch' (marktrace list --tracepoints lists them)" \
	"a pattern that matches no tracepoint is an error naming it"
ok "$([ ! -e "$W/n" ]; echo $?)" "... and leaves no trace"
"$MT" record --kernel -o "$W/m" -e 'sched:sched_process_exec' -e 'fs_open' > /dev/null 2> "$W/m.err"
is "$?" 1 "without a command, a pattern that is no tracepoint is an error"
like "$(cat "$W/m.err")" "'fs_open' is not a tracepoint \\(SUBSYS:NAME\\)" "... naming it"
mkdir -m 777 "$W/nobody"
setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" record --kernel -o "$W/nobody/t" \
	-e 'sched:sched_process_exec' -- true > /dev/null 2> "$W/nobody.err"
is "$?" 1 "nobody is refused"
like "$(cat "$W/nobody.err")" "tracepoints take root, or CAP_PERFMON" "... saying what it takes"
setpriv --bounding-set=-all --inh-caps=-all "$MT" record --kernel -o "$W/nocap" \
	-e 'sched:sched_process_exec' -- true > /dev/null 2> "$W/nocap.err"
rc=$?
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 0 ]; then
	is "$rc:$([ -e "$W/nocap/kernel/metadata" ]; echo $?)" "1:1" \
		"root without capabilities: refused by perf, no trace left"
	like "$(cat "$W/nocap.err")" "tracepoints take root or CAP_PERFMON \\(kernel.perf_event_paranoid is [0-9]+\\): perf_event_open sched:sched_process_exec on CPU [0-9]+: Permission denied" \
		"... saying what it takes"
else
	skip 2 "perf_event_paranoid is -1: anyone may trace"
fi
done_testing
