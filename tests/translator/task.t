#!/bin/sh
# stap's task_*() and proc_mem_*() functions (SystemTap tapset reference:
# task.stp, task_time.stp, proc_mem.stp), over marktap's task values,
# thread ids read in /proc when the handler runs.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 19
out=$("$MT" -c 'sleep 0.2' -e 'global me probe begin { me = pid() }
	probe process.begin { t = task_current()
		printf("%d %d %d %s %d\n", t == target(), task_pid(t) == target(), task_tid(t) == target(),
		       task_execname(t), task_parent(t) == me) }' 2>&1)
is "$out" "1 1 1 sleep 1" "task_current, task_pid, task_tid, task_execname, task_parent of -c's process"
# the command line, as stap's cmdline_* give it
out=$("$MT" -c 'sleep 0.2' -e 'probe process.begin {
	printf("[%s] [%s] [%s] [%s]\n", cmdline_str(), cmdline_arg(1), cmdline_args(0, 0, ""), cmdline_arg(5)) }' 2>&1)
is "$out" "[sleep 0.2] [0.2] [sleep] []" "cmdline_str, cmdline_arg, cmdline_args of -c's process; past the last argument: \"\""
is "$("$MT" -e 'probe begin { printf("[%s]\n", cmdline_args(1, 2, "|")); exit() }' -- x y z 2>&1)" \
	"[-e|probe begin { printf(\"[%s]\\n\", cmdline_args(1, 2, \"|\")); exit() }]" "cmdline_args(1, 2, delim) in begin: marktap's own"
# a busy command: its user time, in ns, a whole number of clock ticks
out=$("$MT" -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' -e 'probe process.end {
	u = task_utime(); printf("%d %d %d\n", u > 0, u % 1000000 == 0, task_stime() >= 0) }' 2>&1)
is "$out" "1 1 1" "task_utime/task_stime of the process at its end: ns, from clock ticks"
out=$("$MT" -c 'sleep 0.2' -e 'probe process.begin {
	printf("%d %d %d %d\n", proc_mem_size() >= proc_mem_rss(), proc_mem_rss() > 0, proc_mem_shr() >= 0,
	       proc_mem_size(target()) > 0 && target() == pid()) }' 2>&1)
# (not equal sizes: process.begin comes while the program still maps its
# libraries, so two reads a moment apart may differ)
is "$out" "1 1 1 1" "proc_mem_size >= proc_mem_rss > 0 (pages), with and without a pid"
is "$("$MT" -e "probe begin { println(mem_page_size()); exit() }")" "$(getconf PAGESIZE)" "mem_page_size()"
# a task that is not there: stap's answers for one it cannot find
is "$("$MT" -e 'probe begin { printf("%d [%s] %d %d\n", task_pid(2147483646), task_execname(2147483646),
	proc_mem_size(2147483646), task_utime(2147483646)); exit() }' 2>&1)" "-1 [] 0 0" "a task that is gone: -1, \"\", 0"
is "$("$MT" -e 'probe begin { printf("%d %d\n", task_parent(-5), task_pid(0)); exit() }' 2>&1)" "-1 0" \
	"no task: -1 (0 is the idle task's group)"
# target_set_pid: the target and what descends from it, not its parent
out=$("$MT" -c 'sleep 0.2' -e 'global me probe begin { me = pid() }
	probe process.begin { printf("%d %d %d\n", target_set_pid(target()), target_set_pid(me), target_set_pid(1)) }' 2>&1)
is "$out" "1 0 0" "target_set_pid: the target yes; marktap (its parent) and init no"
is "$("$MT" -e 'probe begin { println(target_set_pid(pid())); exit() }' 2>&1)" "0" "without a target: 0"
# target_set_report: stap's report, the target's parent (marktap) begat
# the target, which begat its two children, by pid
out=$("$MT" -c 'sleep 2 & sleep 2 & wait' -e 'global me, n probe begin { me = pid() }
	probe process.begin { if (pid() != target() && target_set_pid(pid()) && ++n == 2) {
		printf("%d %d\n", me, target()); target_set_report(); exit() } }' 2>&1)
set -- $out
me=$1 t=$2
like "$(echo "$out" | sed 1d | tr '\n' ,)" "^target set:,$me begat $t,$t begat [0-9]*,$t begat [0-9]*,\$" \
	"target_set_report: the target's parent begat it, it begat its two children"
is "$("$MT" -e 'probe begin { target_set_report(); exit() }' 2>&1)" "target set:" "without a target: the header alone"
is "$("$MT" -c 'true' -e 'global me probe begin { me = pid() } probe process.begin { println(stp_pid() == me, " ", pid() == target()) }' 2>&1)" \
	"1 1" "stp_pid() in process.begin: marktap's pid, not the process's"
# is_myproc: the hit's task runs with the effective uid of marktap's user
is "$("$MT" -c 'true' -e 'probe process.begin { println(is_myproc()) }' 2>&1)" 1 "is_myproc: a process of marktap's user"
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	# (at sleep's exec, while it runs as that user: a process.begin at the
	# fork, read after the child is gone, would read no user)
	sl=$(command -v sleep)
	is "$("$MT" -c 'setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "sleep 2 & wait"' \
		-e 'probe process("'"$sl"'").begin { if (target_set_pid(pid())) { println(is_myproc()); exit() } }' 2>&1)" \
		0 "is_myproc: not a process of another user"
else
	skip 1 "not root, or no setpriv: no process of another user"
fi
# pn(): the point as the script names it (stap's tapset reference)
is "$("$MT" -e 'probe foo = begin { } probe foo { println(pn()) } probe begin { println(pn()); exit() }' 2>&1)" "foo
begin" "pn(): an alias's name, else the point"
# the time zone (stap's tzinfo tapset): seconds west of UTC, its name
is "$(TZ=UTC "$MT" -e 'probe begin { printf("%d %s|%s\n", tz_gmtoff(), tz_name(), tz_ctime(0)); exit() }' 2>&1)" \
	"0 UTC|Thu Jan  1 00:00:00 1970 UTC" "tz_gmtoff, tz_name, tz_ctime in UTC"
is "$(TZ=EST5 "$MT" -e 'probe begin { printf("%d %s|%s\n", tz_gmtoff(), tz_name(), tz_ctime(0)); exit() }' 2>&1)" \
	"18000 EST|Wed Dec 31 19:00:00 1969 EST" "and five hours west (TZ=EST5)"
# pid2task: the task of a process id (a thread id in marktap), 0 if none
sleep 30 & sp=$!
like "$("$MT" -e "probe begin { printf(\"%d %d %d\\n\", pid2task($sp), pid2task(pid()) == pid(), pid2task(2147483646)); exit() }" 2>&1)" \
	"^$sp 1 0$" "pid2task: a process's id, this one's, 0 for none"
kill $sp
