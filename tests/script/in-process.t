#!/bin/sh
# Marker probes run inside the traced process (libmarktap's script host),
# begin/timer/end in marktap; globals, output and errors meet in marktap.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
T=$top_builddir/tests/script/target
[ -x "$MTBIN" ] && [ -x "$T" ] || skip_all "build first (make check builds tests/script/target)"
T=$(own_copy "$T") || bail_out "cannot copy $T"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
P="process(\"$T\")"
# a hang is a failure, not a stuck suite
mt() { timeout 60 "$MTBIN" "$@"; }
plan 32

# 1. arguments of every type, in the process, in order
out=$(mt -c "$T count 4" -e "probe $P.mark(\"ev\") { printf(\"%d %s %d|\", \$n, \$s, \$l) }" 2>&1)
is "$out" "0 even 0|1 odd 1000000000|2 even 2000000000|3 odd 3000000000|done" \
	"-c: the handler runs at each hit with \$n \$s \$l, output before the program's own"

# 2. \$argN, \$name, \$format, pp()
out=$(mt -c "$T count 1" -e "probe $P.mark(\"ev\") { println(\$arg1, \" \", \$arg2, \" \", \$\$name, \" \", \$format) }" 2>&1 | head -1)
is "$out" "0 even ev n %d s %s l %ld" "\$arg1 \$arg2 \$\$name \$format"

# 3. globals: counted in the process, printed by end in marktap
out=$(mt -c "$T threads 2 100000" -e "global c probe $P.mark(\"ev\") { c++ } probe end { println(c) }" 2>&1)
is "$(echo "$out" | tail -1)" "200000" "2 threads x 100000 hits counted exactly (the end probe sees them)"

# many threads at once: one handler at a time, no deadlock, every hit counted
out2=$(mt -c "$T threads 8 20000" -e "global c, t probe $P.mark(\"ev\") { c++; t[tid()]++ } probe end { n = 0; foreach (k in t) n++; printf(\"%d %d\\n\", c, n) }" 2>&1)
ok $? "8 threads hitting a marker together: no deadlock"
is "$(echo "$out2" | tail -1)" "160000 8" "8 x 20000 hits counted, 8 threads seen"

# 4. arrays keyed by tid, and statistics merged exactly
out=$(mt -c "$T threads 2 1000" -e "global a, s probe $P.mark(\"ev\") { a[tid()]++; s <<< \$n }
	probe end { foreach (k in a) n++; printf(\"%d %d %d %d %d %d\\n\", n, @count(s), @sum(s), @min(s), @max(s), @avg(s)) }" 2>&1)
is "$(echo "$out" | tail -1)" "2 2000 999000 0 999 499" "per-thread array keys and @count @sum @min @max @avg"

# 5. what begin set is seen by the handlers in the process
out=$(mt -c "$T count 3" -e "global base probe begin { base = 40 } probe $P.mark(\"ev\") { printf(\"%d \", base + \$n) }" 2>&1)
is "$out" "40 41 42 done" "a global set by begin is seen in the process"

# 6. a handler in the process writes a global, end adds to begin's value
out=$(mt -c "$T count 5" -e "global t = 100 probe $P.mark(\"ev\") { t += \$n } probe end { println(t) }" 2>&1)
is "$(echo "$out" | tail -1)" "110" "initialiser + the process's changes"

# 7. strings: last written value
out=$(mt -c "$T count 5" -e "global last probe $P.mark(\"ev\") { last = \$s . sprint(\$n) } probe end { println(last) }" 2>&1)
is "$(echo "$out" | tail -1)" "even4" "a string global written in the process"

# 8. timers in marktap see the live counts of the process
mt -c "$T slow 40 25" -e "global c probe $P.mark(\"ev\") { c++ } probe timer.ms(200) { printf(\"t %d\\n\", c) } probe end { printf(\"end %d\\n\", c) }" > "$TMP/timer" 2>&1
max=$(awk '$1 == "t" && $2 > m { m = $2 } END { print m + 0 }' "$TMP/timer")
ok $(( max <= 0 || max > 40 )) "a timer saw the process's count while it ran (up to $max of 40)"
is "$(grep '^end' "$TMP/timer")" "end 40" "and the end saw all 40"

# 9. a timer resets a counter; the process keeps counting from there
mt -c "$T slow 40 25" -e "global c, total probe $P.mark(\"ev\") { c++ } probe timer.ms(150) { total += c; c = 0 } probe end { println(total + c) }" > "$TMP/reset" 2>&1
is "$(tail -1 "$TMP/reset")" "40" "c = 0 in a timer reaches the process; nothing lost or counted twice"

# 10. exit() in the process ends the session; the end probe runs
start=$(date +%s)
out=$(mt -c "$T slow 1000 10" -e "probe $P.mark(\"ev\") { if (\$n == 3) exit() } probe end { println(\"end\") }" 2>&1)
dur=$(( $(date +%s) - start ))
is "$out" "end" "exit() in a marker handler ends the session, end runs"
ok $(( dur > 8 )) "the session ended early (${dur}s of a 10 s program)"

# 11. a handler error: stap's ERROR line, status 1, the program unharmed
mt -D MAXERRORS=5 -c "$T count 3" -e "probe $P.mark(\"ev\") { println(1 / \$n) }" > "$TMP/out" 2> "$TMP/err"
rc=$?
is "$rc" 1 "a handler error in the process: marktap exits 1"
like "$(cat "$TMP/err")" "ERROR: division by 0" "stap's ERROR line from the process"
like "$(cat "$TMP/err")" "Number of errors: 1," "the summary counts the process's error"
like "$(cat "$TMP/out")" "done" "the traced program ran to its end (MAXERRORS=5)"

# 12. fork: the child runs the script too, counted as its own process
out=$(mt -c "$T fork 50" -e "global c probe $P.mark(\"ev\") { c[pid()]++ } probe end { foreach (p in c) printf(\"%d \", c[p]); println(\"\") }" 2>&1)
is "$(echo "$out" | tail -1)" "50 50 " "a forked child's hits are counted under its own pid"

# several processes of one -c command: counters add up, stats merge
out=$(mt -c "$T threads 2 500 & $T count 300; wait" -e "global c, s probe $P.mark(\"ev\") { c++; s <<< \$n } probe end { printf(\"%d %d %d\\n\", c, @count(s), @max(s)) }" 2>&1)
is "$(echo "$out" | tail -1)" "1300 1300 499" "two processes (through /bin/sh): a counter and a statistic add up exactly"

# 13. -x PID: attach to a running process
"$T" loop 30 > "$TMP/loop.out" &
tpid=$!
wait_for 30 grep -qs ready "$TMP/loop.out"
out=$(mt -x "$tpid" -T 1 -e "global c probe $P.mark(\"tick\") { c++ } probe end { println(c > 20 ? \"ticks\" : sprint(c)) }" 2>&1)
is "$out" "ticks" "-x PID: handlers ran in the running process for 1 s"
is "$(cat /proc/$tpid/stat 2>/dev/null | cut -d' ' -f3 | tr -d 'RS')" "" "the process still runs after marktap detached"

# 14. a process started during the session, outside -c, is picked up
# (time to spare: on a loaded machine the scan and the attach take a while);
# it starts once the begin probe has run (a warning: stderr is unbuffered)
mt -T 4 -e "global c probe begin { warn(\"session began\") }
	probe $P.mark(\"tick\") { c[pid()]++ } probe end { foreach (p in c) println(p) }" > "$TMP/scan" 2>&1 &
mpid=$!
wait_for 30 grep -q '^WARNING: session began$' "$TMP/scan"
"$T" loop 5 > /dev/null &
t2=$!
wait $mpid
like "$(cat "$TMP/scan")" "^$t2\$" "a process that starts running the binary is picked up ($(tr '\n' ' ' < "$TMP/scan"))"
kill "$tpid" "$t2" 2>/dev/null
wait 2>/dev/null

# pp() names the probe point that fired
out=$(mt -c "$T count 1" -e "probe $P.mark(\"*\") { println(pp()) } probe begin { println(pp()) }" 2>&1)
is "$(echo "$out" | tr '\n' '|')" "begin|$P.mark(\"ev\")|done|" "pp() in begin and in a marker handler"

# 15. -o FILE: the process writes into marktap's output file, in order
mt -o "$TMP/o.txt" -c "$T count 2" -e "probe begin { println(\"A\") } probe $P.mark(\"ev\") { println(\$n) } probe end { println(\"Z\") }" > "$TMP/stdout" 2>&1
is "$(tr '\n' ' ' < "$TMP/o.txt")" "A 0 1 Z " "-o: begin, the process's hits, end, in order in the file"
is "$(cat "$TMP/stdout")" "done" "the program's own output stays on stdout"

# 16. a program without the script host plugin reachable still runs
out=$(MARKTAP_SCRIPT_LIB=/nonexistent/plugin.so mt -c "$T count 2" -e "probe $P.mark(\"ev\") { println(\$n) }" 2>&1)
like "$out" "ERROR: process [0-9]*: cannot load the script host" "a missing plugin is reported"
like "$out" "done" "and the program still runs"

# 17. exec: the new image joins the session by itself
out=$(mt -c "$T exec 3" -e "probe $P.mark(\"ev\") { printf(\"%d:%d \", pid(), \$n) }" 2>&1)
pid1=$(echo "$out" | awk '{ split($1, a, ":"); print a[1] }')
is "$out" "$pid1:0 $pid1:1 $pid1:2 $pid1:0 $pid1:1 $pid1:2 done" "the image exec'd by a traced process runs the script too"

# 18. a module written by -p4 runs later, without the script
(cd "$TMP" && mt -p4 -m hitmod -e "global c probe begin { println(\"start\") } probe $P.mark(\"ev\") { c += \$n } probe end { println(c) }") > /dev/null
out=$(mt -c "$T count 10" "$TMP/hitmod.mtm" 2>&1)
is "$(echo "$out" | tr '\n' ' ')" "start done 45 " "-p4's module file runs with -c: begin, hits in the process, end"
printf 'not a module\n' > "$TMP/bad.mtm"
out=$(mt "$TMP/bad.mtm" 2>&1); rc=$?
is "$rc" 1 "a file that is no module: status 1"
like "$out" "bad.mtm:1: not a marktap module" "and says where"

done_testing
