#!/bin/sh
# marktap --trace DIR SCRIPT: a script's marker probes over a
# stored trace, in time order over every stream, with the events' context;
# begin before, end after, timers on trace time; the same output as the
# script run live on the same program.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
MTAP=$top_builddir/translator/marktap
DEMO=$top_builddir/runtime/demo/marktap-demo
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"
MARKTAP_MARKERS="$top_srcdir/tapsets/markers.tsv"
export MARKTAP_TAPSET_DIR MARKTAP_MARKERS
[ -x "$MTAP" ] || skip_all "marktap not built"
[ -x "$DEMO" ] || skip_all "no demo program at $DEMO"
plan 24

# basic.trace: events at known times (1000 ns apart) on two CPUs, losses.
# The demo's fs_open marker has the same fields (fd, filename).
gen "$TMP/basic" < "$VIEWDIR/basic.trace"
cat > "$TMP/ctx.stp" <<'STP'
probe begin { println("begin") }
probe process(@1).mark("fs_open") {
	printf("%d %s/%d %d %d %s %d %d\n", $fd, substr($filename, 0, 5), strlen($filename), pid(), tid(), execname(), cpu(),
	       gettimeofday_ns() % 100000)
}
probe timer.us(2) { printf("timer %d\n", gettimeofday_ns() % 100000) }
probe end { println("end") }
STP
"$MTAP" --trace "$TMP/basic" "$TMP/ctx.stp" "$DEMO" > "$TMP/out" 2> "$TMP/err"
is "$?" 0 "--trace runs the script over the trace"
# fields by name, pid/tid/execname/cpu of each event, its time; timers
# every 2 us of trace time from the first event, before the events at their time
is "$(cat "$TMP/out")" 'begin
3 /etc//11 1234 1235 demo 0 57789
timer 59789
7 /0 99 100 other 1 60789
timer 61789
-1 quote/26 1234 1235 demo 0 61789
8 x/1 99 101 other 1 62789
timer 63789
end' "events in time order over both streams, their context, timers on trace time"
like "$(cat "$TMP/err")" "WARNING: the trace lost 12 events and 3 packets" "the trace's losses said"

# exit() in a handler: no more events, end still runs
printf 'global n\nprobe process(@1).mark("fs_open") { n++; exit() }\nprobe end { printf("n=%%d\\n", n) }\n' > "$TMP/exit.stp"
is "$("$MTAP" --trace "$TMP/basic" "$TMP/exit.stp" "$DEMO" 2> /dev/null)" "n=1" "exit() ends the replay, end runs"

# A recording of the demo: the same output as the script run live.
cat > "$TMP/count.stp" <<'STP'
global n, bytes, names
probe process(@1).mark("fs_open") { n[execname(), $filename]++ }
probe process(@1).mark("fs_read") { bytes += $count; reads <<< $count; names[pid()] = execname() }
probe process(@1).mark("demo_round") { rounds++ }
global rounds, reads
probe end {
	foreach ([e, f] in n+) printf("%s %s %d\n", e, f, n[e, f])
	printf("read %d bytes in %d reads, max %d\n", bytes, @count(reads), @max(reads))
	foreach (p in names) printf("%s\n", names[p])
	printf("rounds %d\n", rounds)
}
STP
"$MT" record -o "$TMP/rec" -- "$DEMO" 3 > /dev/null 2>&1
ok $? "marktrace record of the demo"
"$MTAP" --trace "$TMP/rec" -o "$TMP/replay" "$TMP/count.stp" "$DEMO" 2> "$TMP/replay.err"
is "$?:$(cat "$TMP/replay.err")" "0:" "--trace over our own recording"
"$MTAP" -c "$DEMO 3" -o "$TMP/live" "$TMP/count.stp" "$DEMO" > /dev/null 2> "$TMP/live.err"
ok $? "the same script live (-c)"
like "$(cat "$TMP/replay")" "rounds 3" "replay: every round seen"
if [ -s "$TMP/live" ] && diff "$TMP/live" "$TMP/replay" > "$TMP/diff"; then
	ok 0 "--trace gives the live run's output"
else
	ok 1 "--trace gives the live run's output"
	sed 's/^/# /' "$TMP/diff"
fi
# One run at once: the script live on the demo while marktrace records it,
# then over the recording; pids included, so the same activity.
sed 's/n\[execname(), \$filename\]/n[execname(), pid(), $filename]/; s/foreach (\[e, f\] in n+) printf("%s %s %d\\n", e, f, n\[e, f\])/foreach ([e, p, f] in n+) printf("%s %d %s %d\\n", e, p, f, n[e, p, f])/' \
	"$TMP/count.stp" > "$TMP/count-pid.stp"
"$MTAP" -o "$TMP/both.live" -c "$MT record -o $TMP/both -- $DEMO 3" "$TMP/count-pid.stp" "$DEMO" > /dev/null 2>&1
is "$?:$(grep -c 'marktap-demo [0-9]* /etc/passwd 3' "$TMP/both.live")" "0:1" "the script live on a run marktrace records"
"$MTAP" --trace "$TMP/both" -o "$TMP/both.replay" "$TMP/count-pid.stp" "$DEMO" 2> /dev/null
if diff "$TMP/both.live" "$TMP/both.replay" > "$TMP/diff"; then
	ok 0 "over that recording, the live output exactly (pids too)"
else
	ok 1 "over that recording, the live output exactly (pids too)"
	sed 's/^/# /' "$TMP/diff"
fi
pid=$("$MT" view "$TMP/rec" | sed -n '1s/.*marktap-demo\[\([0-9]*\)\/.*/\1/p')
is "$(printf 'probe process(@1).mark("demo_start") { println(pid(), " ", execname(), " ", $rounds) }' |
      "$MTAP" --trace "$TMP/rec" - "$DEMO")" "$pid marktap-demo 3" "pid() and execname() are the recorded process's"

# trace.event("NAME"): any event of any trace, fields as $field; here a
# trace in the shape of LTTng's kernel traces (lttng/gen-compact.py)
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 "$top_srcdir/tests/runtime/lttng/gen-compact.py" "$TMP/compact/kernel"
	"$MTAP" --trace "$TMP/compact" -e 'probe trace.event("bits") {
		printf("%d %d %d %d %x %d %d %s %s\n", cpu(), tid(), $a, $b, $be12, $s33, $e2, $pt, $val) }
		probe trace.event("far") { printf("far %d %d\n", cpu(), $n) }' > "$TMP/out" 2> "$TMP/err"
	is "$?:$(cat "$TMP/err")" "0:" "trace.event over an LTTng-shaped trace"
	is "$(sed -n '1p;4p;9p' "$TMP/out")" '0 100 0 -64 abc -4294967296 0 { x = 200, y = -30000 } { -5 }
1 101 1 -39 abb -4294967289 1 { x = 201, y = -29999 } { "v1" }
far 0 -9223372036854775805' "its fields: bit fields, big endian, 33 bits, enum, structure, variant"
else
	echo "ok $((_tap_n + 1)) # SKIP no /usr/bin/python3"; echo "ok $((_tap_n + 2)) # SKIP no /usr/bin/python3"
	_tap_n=$((_tap_n + 2))
fi
"$MTAP" -e 'probe trace.event("x") { }' > /dev/null 2> "$TMP/err"
like "$?:$(head -1 "$TMP/err")" "^1:semantic error: trace.event probes run over a stored trace: marktap --trace DIR" \
	"trace.event without --trace: a semantic error"

# Tapset aliases over kernel.mark: scheduler.ctxswitch on recorded
# kernel_sched_schedule events (a kernel trace as marktrace record -k writes)
printf 'trace kernel domain=kernel\nmarker 0 kernel_sched_schedule prev_pid %%d next_pid %%d prev_state %%ld\nstream 0\npacket\nev 1000 kernel_sched_schedule 10 10 bash 10 20 1\nev 2000 kernel_sched_schedule 20 20 sleep 20 0 0\nstream 1\npacket\nev 1500 kernel_sched_schedule 30 31 worker 31 10 2\n' |
	gen "$TMP/ktrace"
is "$("$MTAP" --trace "$TMP/ktrace" -e 'probe scheduler.ctxswitch {
	printf("%d %s %d->%d %d\n", cpu(), prev_task_name, prev_tid, next_tid, prevtsk_state) }' 2>&1)" \
   "0 bash 10->20 1
1 worker 31->10 2
0 sleep 20->0 0" "a tapset alias (scheduler.ctxswitch) over a recorded kernel trace"
# Other tasks are named and grouped from the trace (its state dump, then
# each event's context), as they were then, not from this machine's /proc
printf 'trace kernel domain=kernel\nmarker 0 kernel_sched_schedule prev_pid %%d next_pid %%d prev_state %%ld\nmarker 1 statedump_process_state pid %%d parent_pid %%d tgid %%d name %%s\nstream 0\npacket\nev 500 statedump_process_state 1 1 marktrace 20 1 19 "sleep"\nev 1000 kernel_sched_schedule 10 10 bash 10 20 1\nev 2000 kernel_sched_schedule 19 20 sleep 20 0 0\nstream 1\npacket\nev 1500 kernel_sched_schedule 30 31 worker 31 10 2\nev 1700 kernel_sched_schedule 30 31 worker 31 %d 2\n' $$ |
	gen "$TMP/ktrace2"
is "$("$MTAP" --trace "$TMP/ktrace2" -e 'probe scheduler.ctxswitch {
	printf("%d->%d [%s] %d\n", prev_tid, next_tid, next_task_name, next_pid) }' 2>&1)" \
   "10->20 [sleep] 19
31->10 [bash] 10
31->$$ [] -1
20->0 [swapper/0] 0" "next_task_name and next_pid from the trace's state: the state dump, the events' context; a pid the trace never named is nobody (not this machine's pid $$)"

# syscall.NAME.return: the exit marker carries the value only; the alias
# notes at the entry which call each thread entered (exit_group's none)
printf 'trace kernel domain=kernel\nmarker 0 kernel_arch_syscall_entry syscall_id %%d ip %%ld\nmarker 1 kernel_arch_syscall_exit ret %%ld\nstream 0\npacket\nev 1000 kernel_arch_syscall_entry 10 10 a 110 0\nev 1100 kernel_arch_syscall_entry 11 11 b 0 0\nev 1200 kernel_arch_syscall_exit 10 10 a 9\nev 1300 kernel_arch_syscall_exit 11 11 b -2\nev 1400 kernel_arch_syscall_entry 10 10 a 231 0\nev 1500 kernel_arch_syscall_exit 10 10 a 0\n' |
	gen "$TMP/sc"
is "$("$MTAP" --trace "$TMP/sc" -e 'probe syscall.getppid.return, syscall.read.return, nd_syscall.exit_group.return {
	printf("%s %d %s %d %s\n", execname(), tid(), name, retval, retstr) }' 2>&1)" \
   "a 10 getppid 9 9
b 11 read -2 -2 (ENOENT)" "syscall.NAME.return: the call each thread returns from, retval, retstr with the errno's name"
is "$("$MTAP" --trace "$TMP/sc" -e 'probe syscall.*.return { printf("%s ", name) }' 2>&1)" "getppid read " \
   "syscall.*.return: each return once, by its call"

# Errors
"$MTAP" --trace "$TMP/rec" -c true "$TMP/exit.stp" "$DEMO" > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --trace runs over a stored trace: no -c or -x with it" "--trace with -c: a usage error"
"$MTAP" --trace "$TMP/nosuch" "$TMP/exit.stp" "$DEMO" > /dev/null 2> "$TMP/err"
is "$?:$(cat "$TMP/err")" "1:ERROR: $TMP/nosuch: No such file or directory" "no trace: an error, exit 1"
cp -r "$TMP/basic" "$TMP/bad" && truncate -s 200 "$TMP/bad/channel0_1"
"$MTAP" --trace "$TMP/bad" "$TMP/ctx.stp" "$DEMO" > "$TMP/out" 2> "$TMP/err"
is "$?" 1 "a damaged trace: exit 1"
like "$(cat "$TMP/err")" "ERROR: $TMP/bad/channel0_1: byte [0-9]+: " "the error names the file and the byte"
like "$(cat "$TMP/out")" "^begin
3 /etc//11 .*
end\$" "the events before the damage ran, then end"
done_testing
