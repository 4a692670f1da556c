#!/bin/sh
# Probe points stap elaborates without kernel debuginfo, beyond markers
# and timers: timer.profile, procfs("F").read/.write, process.begin/.end,
# input.char/input.line.  Pass 2's names are those "stap -r KVER -p2"
# prints for the same points (checked with Debian's systemtap 4.8);
# what marktap cannot run is an ERROR at pass 5 that says why.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 71

pp2() { "$MT" -p2 -e "probe $1 { println(pp()) }" 2>&1 | sed -n '/^# probes/{n;p;}'; }
is "$(pp2 timer.profile)" "timer.profile /* <- timer.profile */" "timer.profile elaborates"
is "$(pp2 'procfs("x").read')" 'procfs("x").read /* <- procfs("x").read */' "procfs(\"F\").read"
is "$(pp2 'procfs("x").umask(0040).read.maxsize(100)')" \
	'procfs("x").umask(32).read.maxsize(100) /* <- procfs("x").umask(32).read.maxsize(100) */' ".umask(N) and .maxsize(N)"
is "$(pp2 'procfs.write')" 'procfs.write /* <- procfs.write */' "procfs.write (stap's file \"command\")"
true_exe=$(realpath /bin/true)
is "$(pp2 'process("true").end')" "process(\"$true_exe\").end /* <- process(\"true\").end */" \
	"process(\"P\").end: the program found on PATH, as stap names it"
is "$(pp2 'process.thread.begin')" "process.thread.begin /* <- process.thread.begin */" "process.thread.begin"
# stap's checks of procfs paths and $value
err() { "$MT" -p2 -e "$1" 2>&1 >/dev/null | grep '^semantic error' | tail -1; }
is "$(err 'probe procfs("/x").read { }')" "semantic error: procfs path cannot start with a '/': identifier 'procfs' at <input>:1:7" "procfs path from /"
is "$(err 'probe procfs("a/../b").read { }')" "semantic error: procfs path cannot be relative (and contain '.' or '..'): identifier 'procfs' at <input>:1:7" "procfs path with .."
is "$(err 'probe procfs("a//b").read { }')" "semantic error: procfs path component cannot be empty: identifier 'procfs' at <input>:1:7" "procfs path with an empty component"
is "$(err 'probe procfs("x").read.maxsize(0) { }')" "semantic error: maxsize must be greater than 0" ".maxsize(0)"
is "$(err 'probe procfs("x").write { $value = "b" }')" \
	"semantic error: procfs \$value variable is read-only in a procfs write probe: identifier '\$value' at <input>:1:27" \
	"\$value is read-only in a write probe"
"$MT" -p2 -e 'probe procfs("x").read { $value = "a" } probe procfs("x").write { println($value) }' > /dev/null 2>&1
is "$?" 0 "a read probe sets \$value, a write probe reads it"
like "$(err 'probe timer.profile { println($x) }')" "^semantic error: unresolved target-symbol expression: identifier '\\\$x'" \
	"timer.profile has no \$variables"
is "$("$MT" -p2 -e 'probe prometheus { $value = "m 1\n" }' 2>&1 | sed -n '/^# probes/{n;p;}')" \
	'procfs("__prometheus").read.maxsize(65536) /* <- prometheus */' "prometheus: stap's alias over procfs(\"__prometheus\")"

# pass 5: what cannot run says why, before begin runs
out=$("$MT" -e 'probe begin { println("began") } probe perf.hw.instructions.process("/bin/true").counter("c") { }' 2>&1); rc=$?
like "$rc $out" "^1 ERROR: probe point perf.type\\(0\\).config\\(1\\).sample\\(0\\).process\\(\"[^\"]*\"\\).counter\\(\"c\"\\) cannot run: marktap samples perf events of every CPU" \
	"a perf event of one program: an ERROR at run time, begin not run"
# procfs files are marktap.ko's to serve (tests/kernel/kprocfs.t runs them)
if [ -e /dev/marktap ]; then
	ok 0 "# SKIP /dev/marktap is here: procfs files are served"
else
	out=$("$MT" -e 'probe begin { println("began") } probe procfs("x").read { $value = "a" }' 2>&1); rc=$?
	like "$rc $out" "^1 ERROR: probe point procfs\\(\"x\"\\).read cannot run: its file is served by marktap.ko: no /dev/marktap: load the kernel module first" \
		"procfs without marktap.ko: an ERROR that says so, begin not run"
fi
out=$("$MT" -e 'probe procfs("__stdin").read { $value = "a" }' 2>&1); rc=$?
like "$rc $out" "^1 ERROR: probe point procfs\\(\"__stdin\"\\).read cannot run: procfs\\(\"__stdin\"\\) is marktap's input" \
	"procfs(\"__stdin\").read: marktap's input has write probes only"
# a read probe hands its \$value back, next included; .maxsize bounds .=
lua=$("$MT" -p3 -e 'global n probe procfs("x").read.maxsize(4000) { $value = "a"; if (n) next; $value .= "b" }')
like "$lua" 'if \(g0_n ~= 0\) then
 *do return a1 end
 *end
 *do
 *a1 = rt.procfs_cat\(a1, "b", 4000\)
 *end
 *do return a1 end' "a read probe returns \$value (after next too); .= bounded by .maxsize"
# module_name(): the session's name, its procfs directory's
like "$("$MT" -e 'probe begin { println(module_name()); exit() }')" '^marktap_[0-9][0-9]*$' "module_name(): marktap_PID"
is "$("$MT" -m my_mod -e 'probe begin { println(module_name()); exit() }')" "my_mod" "module_name() with -m"
(cd "$TMP" && "$MT" -p4 -m pfm -e 'probe procfs("f").umask(0040).read.maxsize(99) { $value = module_name() }' > /dev/null 2>&1)
like "$(grep -e '^-- name:' -e '^-- procfs:' "$TMP/pfm.mtm" | tr '\n' ' ')" "^-- name: pfm -- procfs: probe_0 r 32 99 f $" \
	"a -p4 module keeps its name, and the file's umask and maxsize"
# without -c or -x: every process, from the kernel's process connector
# (root); another user gets an ERROR that says so
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" -e 'probe process.begin { println(pid()) }' 2>&1); rc=$?
	like "$rc $out" "^1 ERROR: probe point process.begin cannot run: without -c or -x it needs the kernel's process connector: .*needs root" \
		"process.begin without -c or -x, not root: an ERROR that says why"
else
	ok 0 "# SKIP not root"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" -c true -e 'probe process.thread.end { println(tid()) }' 2>&1); rc=$?
	like "$rc $out" "^1 ERROR: probe point process.thread.end cannot run: with -c or -x, marktap sees that process start and end by itself; its threads need the kernel's process connector" \
		"thread.end with -c, not root: the same"
else
	ok 0 "# SKIP not root"
fi

# process.begin/.end of -c's command: after begin, before end, in its context
out=$("$MT" -c 'sleep 0.1' -e 'probe begin { println("begin") }
	probe process.begin { printf("process.begin %s %d\n", execname(), pid() == target()) }
	probe process("sleep").end { printf("process.end %s %d %d\n", execname(), pid() == target(), tid() == target()) }
	probe process("true").begin { println("not this program") }
	probe end { println("end") }' 2>&1)
is "$out" "begin
process.begin sleep 1
process.end sleep 1 1
end" "-c: process.begin and process(\"P\").end in the command's context, another program's not"
is "$("$MT" -c 'sleep 0.1' -e 'probe process.end { println(ppid() == mypid) } global mypid = '"$$"'' 2>&1)" "0" \
	"ppid() in process.end is the command's parent (marktap), not this shell"
(cd "$TMP" && "$MT" -p4 -m life -e 'probe process("sleep").end { printf("%s ended\n", execname()) }' > /dev/null 2>&1)
is "$("$MT" -c 'sleep 0.1' "$TMP/life.mtm" 2>&1)" "sleep ended" "a -p4 module keeps process(\"P\").end"

# input.char and input.line: marktap's standard input, byte by byte
is "$(printf 'ab\ncd\n' | "$MT" -e 'probe input.line { printf("[%s]", line) if (line == "cd\n") exit() }')" "[ab
][cd
]" "input.line: each line with its newline"
is "$(printf 'xyz' | "$MT" -e 'global n probe input.char { n++; printf("%s.", char) if (char == "z") exit() } probe end { printf("%d\n", n) }')" \
	"x.y.z.3" "input.char: each byte"
printf 'q' > "$TMP/in"
is "$("$MT" -e 'probe procfs("__stdin").write { println($value); exit() }' < "$TMP/in")" "q" "procfs(\"__stdin\").write is what input.* stand on"
(cd "$TMP" && "$MT" -p4 -m inp -e 'probe input.char { println(char); exit() }' > /dev/null 2>&1)
is "$("$MT" "$TMP/inp.mtm" < "$TMP/in" 2>&1)" "q" "a -p4 module keeps input.char"
# without input probes, the command keeps marktap's standard input
is "$(echo hello | "$MT" -c cat -e 'probe end { }' -u 2>&1)" "hello" "-c's command reads the input when no probe does"

# optional points ('?') that cannot resolve for any reason are dropped in
# silence, as stap drops them (ucalls.stp's process("php").mark(...)?)
out=$("$MT" -p2 -e 'probe process("/nonexistent/prog").function("f") ?, begin { next }' 2>&1); rc=$?
is "$rc $out" "0 # probes
begin /* <- begin */" "an optional point on a missing program: silent"
out=$("$MT" -p2 -e 'probe a = process("/nonexistent/prog").mark("m") ?, begin { } probe a { next }' 2>&1); rc=$?
is "$rc $out" "0 # probes
begin /* <- a */" "the same inside an alias"
# a script whose only event probes are optional and absent still runs as
# stap's does, until -T (or exit(), or a signal), then its end probes
for pt in 'process("/nonexistent/prog").function("x")' 'kernel.mark("nosuch")'; do
	t0=$(date +%s%N)
	out=$("$MT" -T 1 -e "probe begin { println(\"b\") } probe $pt ? { } probe end { println(\"e\") }" 2>&1); rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	is "$rc $out $((ms >= 1000))" "0 b
e 1" "only $pt? and absent: begin, then -T's second, then end"
done
out=$("$MT" -T 30 -e 'probe begin { println("b"); exit() } probe kernel.mark("nosuch")? { } probe end { println("e") }' 2>&1)
is "$out" "b
e" "... and exit() in begin ends it at once"
# a program given as a file pattern: each file it names (stap's globbing)
libc=$(ls /usr/lib/x86_64-linux-gnu/libc.so.[0-9] 2>/dev/null | head -1)
if [ -n "$libc" ]; then
	like "$("$MT" -p2 -e 'probe process("/usr/lib/x86_64-linux-gnu/libc.so.[0-9]").function("free") { next }' 2>&1 | tail -1)" \
		"^process\\(\"$(realpath "$libc")\"\\).function\\(\"free" "process(\"PATTERN\"): the files it names"
else
	ok 0 "# SKIP no x86_64 libc here"
fi
like "$("$MT" -p2 -e 'probe process("/nonexistent/*").function("free") { next }' 2>&1)" \
	"^semantic error: no match for the file pattern /nonexistent/\\*" "a pattern naming no file: an error"

# kernel.trace: tracepoints read from kernel headers; first a tree of our
# own (MARKTAP_KERNEL_HEADERS), in the forms the kernel's headers use
mkdir -p "$TMP/kh/include/trace/events"
cat > "$TMP/kh/include/trace/events/demo.h" <<'H'
#undef TRACE_SYSTEM
#define TRACE_SYSTEM demo
TRACE_EVENT(demo_tick,
	TP_PROTO(struct task_struct *p, int nr,
		 const char *why),
	TP_ARGS(p, nr, why),
	TP_STRUCT__entry(__field(int, nr)),
	TP_fast_assign(__entry->nr = nr;),
	TP_printk("nr=%d", __entry->nr)
);
DECLARE_EVENT_CLASS(demo_class, TP_PROTO(unsigned long addr), TP_ARGS(addr), , , );
DEFINE_EVENT(demo_class, demo_free, TP_PROTO(unsigned long addr), TP_ARGS(addr));
DEFINE_EVENT(demo_class, name##_bad, TP_PROTO(unsigned long addr), TP_ARGS(addr));
TRACE_EVENT(demo_void, TP_PROTO(void), TP_ARGS(), , , );
H
kt() { MARKTAP_KERNEL_HEADERS="$TMP/kh" "$MT" "$@" 2>&1; }
is "$(kt -L 'kernel.trace("demo_*")')" 'kernel.trace("demo:demo_free") $addr:unsigned long
kernel.trace("demo:demo_tick") $p:struct task_struct* $nr:int $why:const char*
kernel.trace("demo:demo_void")' "kernel.trace: TRACE_EVENT and DEFINE_EVENT, parameters with C types, as stap -L"
is "$(kt -l 'kernel.trace("demo:*tick")')" 'kernel.trace("demo:demo_tick")' "kernel.trace(\"SYSTEM:GLOB\")"
like "$(kt -p2 -e 'probe kernel.trace("demo_tik") { }' | head -1)" \
	"kernel.trace\\(\"demo_tik\"\\): no match \\(similar tracepoints: demo_tick[,)]" "an unknown tracepoint: stap's similar tracepoints"
# the second no-match looks the tracepoints up again after the first's
# similar names (which once freed the catalogue under it)
kt -p2 -e 'probe kernel.trace("demo_tik") { } probe kernel.trace("demo_fre") { }' >"$TMP/two" 2>&1
is "$? $(grep -c 'similar tracepoints' "$TMP/two")" "1 2" "two unknown tracepoints: both errors, no crash"
like "$(kt -p2 -e 'probe kernel.trace("demo_tick") { println($nrr) }' | head -1)" \
	"unable to find tracepoint variable '\\\$nrr' \\(alternatives: \\\$nr, " "a misspelt tracepoint variable: stap's error, the alternatives"
like "$(kt -p2 -e 'probe kernel.trace("demo_tick") { $nr = 1 }' | head -1)" \
	"write to tracepoint variable '\\\$nr' not permitted; need stap -g" "a tracepoint variable written: stap's error"
is "$(kt -p2 -e 'probe kernel.trace("demo_tick") { printf("%d %d %s\n", $p, $nr, $$parms) }' | sed -n '/^# probes/{n;p;}')" \
	'kernel.trace("demo:demo_tick") /* <- kernel.trace("demo_tick") */' "-p2: stap's name, \$param and \$\$parms resolve"
like "$(kt -p2 -e 'probe kernel.trace("demo_tick") { println($p->pid) }')" \
	"semantic error: unresolved target-symbol expression: '->' of tracepoint parameter '\\\$p' \\(struct task_struct\\*\\) needs the kernel's type information" \
	"\$p->member: an error naming the missing kernel types"
# a tracepoint the headers name and the kernel's BTF has not cannot run
# (marktap.ko attaches tracepoints with their BTF prototype)
like "$(MARKTAP_BTF=/dev/null kt -e 'probe kernel.trace("demo_free") { println($addr) }')" \
	"^ERROR: probe point kernel.trace\\(\"demo:demo_free\"\\) cannot run: no BTF for kernel .*, whose prototype marktap.ko needs to attach it" \
	"pass 5: an ERROR that says why (no BTF)"
if [ -r /sys/kernel/btf/vmlinux ]; then
	like "$(kt -e 'probe kernel.trace("demo_free") { println($addr) }')" \
		"^ERROR: probe point kernel.trace\\(\"demo:demo_free\"\\) cannot run: the kernel's BTF has no btf_trace_demo_free" \
		"pass 5: an ERROR that says why (not in the kernel's BTF)"
else
	ok 0 "# SKIP no /sys/kernel/btf/vmlinux"
fi
like "$(MARKTAP_KERNEL_HEADERS=$TMP/none "$MT" -r no-such-kernel -p2 -e 'probe kernel.trace("x") { next }' 2>&1)" \
	"semantic error: no kernel headers with include/trace/events for kernel no-such-kernel" "no headers: an error that says which"
# the running kernel's tracepoints from its BTF (btf_trace_NAME, the
# parameters' names from the functions around it): they run
# (tests/kernel/ktrace.t); $p->member reads through BTF
if "$MT" -L 'kernel.trace("sched_switch")' 2>/dev/null | grep -q '\$next:'; then
	is "$("$MT" -L 'kernel.trace("sched_process_fork")' 2>&1)" \
		'kernel.trace("sched:sched_process_fork") $parent:struct task_struct* $child:struct task_struct*' \
		"BTF: sched_process_fork's parameters, names and types"
	like "$("$MT" -p3 -e 'probe kernel.trace("sched_switch") { println($next->pid, kernel_string($prev->comm), $prev_state) }' 2>&1)" \
		'rt.kernel_read\(\(a3 \+ [0-9]+\), 4, true' "BTF: \$next->pid is a kernel read through the third parameter"
	like "$("$MT" -p2 -e 'probe kernel.trace("sched:*") { next }' 2>&1 | sed -n '/^# probes/{n;p;}')" \
		'^kernel.trace\("sched:sched_' "a glob over sched:* elaborates"
	like "$("$MT" -p2 -e 'probe kernel.trace("sched_switch") { println($return) }' 2>&1)" \
		"semantic error: unresolved target-symbol expression: a tracepoint has no return value" "\$return: an error"
else
	for i in 1 2 3 4; do ok 0 "# SKIP the running kernel has no BTF with tracepoints"; done
fi
# events that are no tracepoints: refused at pass 2 with the reason
like "$("$MT" -p2 -e 'probe kernel.trace("syscalls:sys_enter_openat") { next }' 2>&1)" \
	"semantic error: while resolving probe point kernel.trace\\(\"syscalls:sys_enter_openat\"\\): the syscalls:sys_enter_\\* and sys_exit_\\* events are no tracepoints.*probe syscall.NAME.*kernel.trace\\(\"raw_syscalls:sys_enter\"\\)" \
	"syscalls:sys_enter_openat: refused at pass 2, pointing to syscall.* and raw_syscalls"
mkdir -p "$TMP/tfs/events/syscalls/sys_enter_demo" "$TMP/tfs/events/demo/demo_tick"
like "$(MARKTAP_TRACEFS=$TMP/tfs kt -l 'kernel.trace("*demo*")')" '^kernel.trace\("demo:demo_free"\)' \
	"a glob leaves out the events that are no tracepoints"
like "$(MARKTAP_TRACEFS=$TMP/tfs kt -p2 -e 'probe kernel.trace("sys_enter_d*") { next }')" \
	"semantic error: while resolving probe point kernel.trace\\(\"syscalls:sys_enter_demo\"\\): the syscalls" \
	"one that matches only such events: refused"
# the real kernel's headers, when installed: what stap -L prints for them
KREL=$(ls /lib/modules 2>/dev/null | while read -r r; do [ -d "/lib/modules/$r/source/include/trace/events" ] && echo "$r"; done | head -1)
if [ -n "$KREL" ]; then
	is "$("$MT" -r "$KREL" -L 'kernel.trace("sched_switch")' 2>&1)" \
		'kernel.trace("sched:sched_switch") $preempt:bool $prev:struct task_struct* $next:struct task_struct* $prev_state:unsigned int' \
		"kernel $KREL: sched_switch as stap -L lists it"
	is "$("$MT" -r "$KREL" -p2 -e 'probe kernel.trace("kfree_skb") { println($$parms) }' 2>&1 | sed -n '/^# probes/{n;p;}')" \
		'kernel.trace("skb:kfree_skb") /* <- kernel.trace("kfree_skb") */' "kernel $KREL: kfree_skb as stap -p2 names it"
else
	ok 0 "# SKIP no kernel headers under /lib/modules"
	ok 0 "# SKIP no kernel headers under /lib/modules"
fi

# perf events: stap's names (perf.stp), suffixes, counters and @perf
is "$(pp2 'perf.sw.cpu_clock')" "perf.type(1).config(0).sample(1000000) /* <- perf.sw.cpu_clock */" \
	"perf.sw.cpu_clock: type 1, config 0, stap's default sample period"
is "$(pp2 'perf.type(0).config(1).hz(100)')" "perf.type(0).config(1).sample(100) /* <- perf.type(0).config(1).hz(100) */" \
	".hz(N) as stap prints it"
find_exe=$(realpath /usr/bin/find 2>/dev/null || echo /usr/bin/find)
is "$("$MT" -p2 -e 'probe perf.hw.instructions.process("/usr/bin/find").counter("x") { } probe begin { println(@perf("x")) }' 2>&1 | grep '^perf')" \
	"perf.type(0).config(1).sample(0).process(\"$find_exe\").counter(\"x\") /* <- perf.hw.instructions.process(\"/usr/bin/find\").counter(\"x\") */" \
	"a counter: not sampled, kept with an empty body (stap keeps it for @perf)"
is "$(p1 -e 'probe begin { println(@perf("x")) }' | grep perf)" 'println(@perf("x"));' "@perf(\"C\") parses and prints as in stap"
# timer.profile and perf.* samples (perf_event_open, as stap maps them),
# the handler in the sample's context; another user may not: an ERROR
if [ "$(id -u)" = 0 ] && "$MT" -T 0.1 -e 'probe timer.profile { next }' > /dev/null 2>&1; then
	cp "$(command -v sh)" "$TMP/busy"
	"$TMP/busy" -c 'i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done' & bpid=$!
	out=$("$MT" -e "global c, all probe timer.profile { all++
		if (pid() == $bpid && tid() == $bpid) c[execname(), user_mode(), uaddr() == addr()]++ }
		probe timer.ms(500) { foreach ([e, u, a] in c- limit 1) printf(\"%s %d %d\\n\", e, u, a); printf(\"%d\\n\", all > 0); exit() }" 2>&1)
	kill "$bpid" 2>/dev/null; wait "$bpid" 2>/dev/null
	is "$out" "busy 1 1
1" "timer.profile: samples of a busy program, in its context (name, user mode, its address)"
	is "$("$MT" -e 'global n probe perf.sw.cpu_clock.sample(2000000) { n++ } probe timer.ms(300) { println(n > 0); exit() }' 2>&1)" "1" \
		"perf.sw.cpu_clock.sample(N): sampled"
	# a sample's callchain: backtrace() in the kernel (a read of /dev/zero
	# keeps the program there), ubacktrace() in user space
	dd if=/dev/zero of=/dev/null bs=1M count=100000 2>/dev/null & ddpid=$!
	out=$("$MT" -e "global k, u probe timer.profile { if (pid() == $ddpid) {
		if (!user_mode() && k == \"\") k = sprint_backtrace(); if (user_mode()) u++ } }
		probe timer.ms(500) { print(k); exit() }" 2>&1)
	kill "$ddpid" 2>/dev/null; wait "$ddpid" 2>/dev/null
	like "$out" "^ 0xffffffff[0-9a-f]* : [a-z_0-9.]*\\+0x[0-9a-f]*/0x[0-9a-f]* \\[kernel\\]" \
		"timer.profile: sprint_backtrace() of a sample in the kernel, its callchain with symbols"
else
	ok 0 "# SKIP not root, or no perf events"
	ok 0 "# SKIP not root, or no perf events"
	ok 0 "# SKIP not root, or no perf events"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ]; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" -e 'probe begin { println("began") } probe timer.profile { n++ }' 2>&1); rc=$?
	like "$rc $out" "^1 ERROR: probe point timer.profile cannot run: its samples need perf_event_open: " \
		"timer.profile as another user: an ERROR naming why, begin not run"
else
	ok 0 "# SKIP not root"
fi
like "$("$MT" -e 'probe perf.hw.instructions.process("/bin/true").counter("c") { } probe begin { println(@perf("c")) }' 2>&1)" \
	"ERROR: probe point .*counter\\(\"c\"\\) cannot run" "@perf counters: an ERROR that says why"
# the connector at work: a sleep started after marktap is ready, seen
# begin (its program, after the exec) and end (its name kept from then)
if [ "$(id -u)" = 0 ] && "$MT" -T 0.1 -e 'probe process.end { next }' > /dev/null 2>&1; then
	cp "$(command -v sleep)" "$TMP/mysleep"   # a program of its own: no other process runs it
	"$MT" -T 30 -e "probe begin { system(\"touch $TMP/ready\") }
		probe process(\"$TMP/mysleep\").begin { printf(\"begin %s %d\\n\", execname(), ppid() == $$) }
		probe process(\"$TMP/mysleep\").end { printf(\"end %s\\n\", execname()); exit() }" > "$TMP/pe.out" 2>&1 &
	mpid=$!
	wait_for 30 test -e "$TMP/ready"
	"$TMP/mysleep" 0.3
	wait "$mpid"
	is "$(cat "$TMP/pe.out")" "begin mysleep 1
end mysleep" "process(\"P\").begin at its exec and .end at its exit, any process (root)"
	out=$("$MT" -T 0.5 -e 'probe process.thread.begin { n++ } global n probe end { println(n >= 0) }' 2>&1)
	is "$out" "1" "process.thread.begin runs with the connector"
	# with -c, the command's family only (stap: "restricted to the process
	# hierarchy associated with the target process"); a run of the same
	# program outside it is not counted
	# (each lives 1 s: marktap reads which program an exec ran from /proc,
	# and one that ended first is missed, with a warning)
	(sleep 0.2; "$TMP/mysleep" 1) &
	out=$("$MT" -c "sh -c '$TMP/mysleep 1; $TMP/mysleep 1; true'" -e "global b, e
		probe process(\"$TMP/mysleep\").begin { b++ } probe process(\"$TMP/mysleep\").end { e++ }
		probe process.thread.begin { t++ } global t
		probe end { printf(\"%d %d\\n\", b, e) }" 2>&1)
	wait
	is "$out" "2 2" "-c: process(\"P\").begin/.end of the command's children, with the connector"
	# stap: process.begin also runs once for each process already there
	"$TMP/mysleep" 30 & spid=$!
	out=$("$MT" -T 10 -e "probe process(\"$TMP/mysleep\").begin { printf(\"%d %s\\n\", pid() == $spid, execname()); exit() }" 2>&1)
	kill "$spid"; wait "$spid" 2>/dev/null
	is "$out" "1 mysleep" "process(\"P\").begin for a process already running at the start"
else
	ok 0 "# SKIP not root, or no process connector"
	ok 0 "# SKIP not root, or no process connector"
	ok 0 "# SKIP not root, or no process connector"
	ok 0 "# SKIP not root, or no process connector"
fi
