#!/bin/sh
# Families of SystemTap scripts that stap -p2 elaborates (its example
# scripts among them: the group p2-ok) and marktap must accept too,
# with honest values at run time: each family's variables and functions
# elaborate, and where user space can run them (a recorded kernel trace,
# marktap --trace), they give the values the trace says.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
GEN=$top_builddir/tests/runtime/view/gentrace
[ -f "$top_builddir/tapsets/syscalls.stp" ] || skip_all "tapsets/syscalls.stp not generated"
[ -x "$GEN" ] || skip_all "no gentrace at $GEN (make check builds it)"
gen() { rm -rf "$1" && "$GEN" "$1"; }
plan 60

# 1. syscall_any.return: name and syscall_nr of the call returning, noted
#    at the entry marker as syscall.NAME.return does (stap's variables);
#    a thread whose entry came before the session: -1, "unknown".
printf 'trace kernel domain=kernel\nmarker 0 kernel_arch_syscall_entry syscall_id %%d ip %%ld\nmarker 1 kernel_arch_syscall_exit ret %%ld\nstream 0\npacket\nev 900 kernel_arch_syscall_exit 12 12 c 5\nev 1000 kernel_arch_syscall_entry 10 10 a 110 0\nev 1100 kernel_arch_syscall_entry 11 11 b 0 0\nev 1200 kernel_arch_syscall_exit 10 10 a 9\nev 1300 kernel_arch_syscall_exit 11 11 b -2\n' |
	gen "$TMP/sc"
is "$("$MT" --trace "$TMP/sc" -e 'probe syscall_any.return { printf("%s %d %s %d\n", execname(), syscall_nr, name, retval) }' 2>&1)" \
   "c -1 unknown 5
a 110 getppid 9
b 0 read -2" "syscall_any.return: syscall_nr and name of the call each thread returns from, retval"
"$MT" -p2 -e 'global e probe syscall_any.return { if (retval < 0) e[pid(), retval, name] <<< 1 }' > /dev/null 2>&1
is "$?" 0 "syscall_any.return with name elaborates (errno.stp, syscallbypid-nd.stp)"
is "$("$MT" -L syscall_any.return 2>&1 | cut -d' ' -f1-4 | sort -u)" 'syscall_any.return retval:long syscall_nr:long name:string' "-L lists its variables"
# syscall.* and syscall.*.return: each one handler for the some 360
# aliases on the syscall markers, whose locals together are more than a
# Lua function may hold (errsnoop.stp, strace.stp failed at pass 3)
is "$("$MT" --trace "$TMP/sc" -e 'global error, trace probe syscall.* { trace[tid()] = argstr }
	probe syscall.*.return { if (retval < 0) error[name, execname(), trace[tid()]] <<< 1 }
	probe end { foreach ([n, e, a] in error) printf("%s|%s|%s|%d\n", n, e, a, @count(error[n, e, a])) }' 2>&1)" \
   "read|b||1" "syscall.* with every alias's locals: translated and run"

# 2. argv.stp (stap's): argc and argv[1..32], the script's arguments,
#    filled by an init probe (init.stp: before every begin probe); -G
#    sets a slot (argv_N) or argc (ucalls.stp, net_xmit_json.stp)
is "$("$MT" -e 'probe begin(-1000) { printf("%d [%s] [%s] [%s]\n", argc, argv[1], argv[2], argv[3]); exit() }' a 'b c' 2>&1)" \
   "2 [a] [b c] []" "argc, argv[]: the arguments, before a begin probe of any priority"
is "$("$MT" -G argv_2=zz -G argc=5 -e 'probe begin { printf("%d [%s] [%s]\n", argc, argv[1], argv[2]); exit() }' a 'b c' 2>&1)" \
   "5 [a] [zz]" "-G argv_2=... and -G argc=... set them"
is "$("$MT" -e 'probe begin(-9223372036854775807) { print("b ") } probe init { print("i ") } probe begin { exit() }' 2>&1)" \
   "i b " "probe init runs before the first begin probe"
is "$("$MT" -e 'probe begin { n = 0; for (i = 1; i <= argc; i++) n += strlen(argv[i]); println(n); exit() }' $(seq 1 40) 2>&1)" \
   "WARNING: argv holds the first 32 arguments only
55" "past 32 arguments: a warning, argv holds the first 32"

# 3. Tasks: stap's task_struct pointers are marktap's task, a thread id
#    (task, prev_task, next_task...), and the task functions read /proc:
#    task_prio (prio - 100), task_nice, task_cpu, task_state (the kernel's
#    state bits); the aliases' priorities are the kernel's prio
#    (sched_switch.stp)
# (a sleeping process of ours, under nice 5 whatever make check runs at:
# its priority and nice are proc(5)'s fields 18 and 19, 5 more than ours)
nice -n 5 sleep 5 & sleeper=$!
wait_for 10 grep -q ') S ' /proc/$sleeper/stat
set -- $(sed 's/^.*) //' /proc/$sleeper/stat)   # $1 is field 3
out=$("$MT" -e "probe begin { t = $sleeper
	printf(\"%d %d %d %d\\n\", task_prio(t), task_nice(t), task_state(t), task_cpu(t)); exit() }" 2>&1)
is "$out" "${16} ${17} 1 ${37}" "task_prio, task_nice, task_state (S: 1), task_cpu of a sleeping process: /proc's"
is "$((${17} - $(sed 's/^.*) //' /proc/$$/stat | cut -d' ' -f17)))" 5 "(its nice is 5 more than ours: the fields are the right ones)"
is "$("$MT" -e "probe begin { printf(\"%d %d %d\\n\", __marktap_task_prio_raw($sleeper), __marktap_task_prio_raw(0), __marktap_task_prio_raw(2147483646)); exit() }" 2>&1)" \
   "$((${16} + 100)) 120 -1" "the aliases' priorities: the kernel's prio (+ 100), the idle task's 120, -1 for a task gone"
kill $sleeper; wait $sleeper 2>/dev/null
sleep 5 & stopped=$!
kill -STOP $stopped
# (the stop is delivered asynchronously: wait until /proc shows it)
wait_for 10 grep -q ') T ' /proc/$stopped/stat
is "$("$MT" -e "probe begin { printf(\"%d\\n\", task_state($stopped)); exit() }" 2>&1)" "4" \
   "task_state of a stopped process: 4 (__TASK_STOPPED)"
kill -KILL $stopped; wait $stopped 2>/dev/null
is "$("$MT" -e 'probe begin { printf("%d %d %d\n", task_prio(2147483646), task_state(2147483646), task_cpu(-3)); exit() }' 2>&1)" \
   "-1 -1 -1" "a task that is gone: -1"
out=$("$MT" -p2 -e 'probe scheduler.wakeup { printf("%d %d %d %s\n", task_cpu(task), task_prio(task), task_priority, task_execname(task)) }
	probe scheduler.ctxswitch { printf("%d %d %d\n", task_cpu(prev_task), prev_priority, next_priority) }
	probe kprocess.create, signal.send, kprocess.release { println(task_execname(task)) }' 2>&1)
is "$?" 0 "task, prev_task, the priorities and task_cpu/task_prio of them elaborate (sched_switch.stp)"
printf 'trace kernel domain=kernel\nmarker 0 kernel_sched_try_wakeup pid %%d state %%ld\nstream 0\npacket\nev 1000 kernel_sched_try_wakeup 10 10 a 10 1\n' |
	gen "$TMP/wk"
out=$("$MT" --trace "$TMP/wk" -e 'probe scheduler.wakeup { printf("%d %d\n", task, task_priority) }' 2>&1)
is "$?:$out" "1:ERROR: task priorities: no /proc here (a stored trace's tasks)
WARNING: Number of errors: 1, skipped probes: 0" "over a stored trace: /proc does not know its tasks, an error"

# 4. syscall.send, syscall.recv (socket-events.stp): no x86_64 calls;
#    32-bit tasks' socketcall(SYS_SEND/SYS_RECV), s from its marker, and
#    their returns matched per thread
printf 'trace kernel domain=kernel\nmarker 0 kernel_arch_syscall_entry syscall_id %%d ip %%ld\nmarker 1 kernel_arch_syscall_exit ret %%ld\nmarker 2 net_socket_call call %%d a0 %%lu\nstream 0\npacket\nev 1000 kernel_arch_syscall_entry 10 10 a 102 0\nev 1001 net_socket_call 10 10 a 9 5\nev 1100 kernel_arch_syscall_entry 11 11 b 102 0\nev 1101 net_socket_call 11 11 b 10 6\nev 1200 kernel_arch_syscall_exit 10 10 a 12\nev 1300 kernel_arch_syscall_exit 11 11 b -11\nev 1400 kernel_arch_syscall_entry 10 10 a 39 0\nev 1500 kernel_arch_syscall_exit 10 10 a 10\n' |
	gen "$TMP/sock"
is "$("$MT" --trace "$TMP/sock" -e 'probe syscall.send, syscall.recv { printf("%s %s s=%d\n", execname(), name, s) }
	probe syscall.send.return, nd_syscall.recv.return { printf("%s %s %d %s\n", execname(), name, retval, retstr) }' 2>&1)" \
   "a send s=5
b recv s=6
a send 12 12
b recv -11 -11 (EAGAIN)" "send and recv: the socket; each return once, by its sub-call (not getpid's after it)"
# their other arguments come from socketcall's array in user memory,
# which marktap.ko reads (root); recorded events do not carry them
"$MT" -p2 -e 'probe syscall.send, syscall.recv { println(argstr, buf_uaddr, len, flags, flags_str) } probe syscall.send { println(buf) }' > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "0:" "their other arguments: argstr, buf_uaddr, len, flags, flags_str (send: buf) elaborate (errsnoop.stp, strace.stp)"
is "$("$MT" --trace "$TMP/sock" -e 'probe syscall.send { println(argstr) }' 2>&1 | head -1)" \
   "ERROR: system call arguments are read by handlers in marktap.ko only: kernel_arch_syscall_entry events carry the call number, not its arguments" \
   "over a stored trace: an ERROR, not a guess"
is "$("$MT" -e 'probe begin { printf("%s|%s|%s\n", _msg_flags_str(0), _msg_flags_str(0x4040), _msg_flags_str(0x80000002)); exit() }' 2>&1)" \
   "0x0|MSG_DONTWAIT|MSG_NOSIGNAL|MSG_PEEK" "_msg_flags_str: the MSG_ flags by name (MSG_CMSG_COMPAT left out)"
is "$("$MT" -e 'probe begin { printf("%d %d %d %d\n", errno_p(2), errno_p(-13), errno_p(0), errno_p(41)); exit() }' 2>&1)" \
   "2 13 0 0" "errno_p: an error number with a name, else 0 (errsnoop.stp)"
is "$("$MT" -l 'syscall.se*' | grep -c '^syscall.send$')" 1 "-l lists syscall.send"
# (regression: nd_syscall.X.return matched both the alias of that name
# and nd_syscall.X extended with .return: every handler ran twice; as
# stap, the longer alias wins)
is "$("$MT" -p2 -e 'probe nd_syscall.getppid.return { println(name) }' | grep -c '^kernel.mark')" 2 \
   "nd_syscall.X.return: its own alias only (the entry and exit markers once)"

# 5. netfilter (netfilter_summary.stp, who_sent_it.stp, packet_contents.stp,
#    stp_dump.stp, netfilter_drop.stp): stap's hook point and aliases with
#    its variables elaborate; they run in marktap.ko's netfilter hooks
#    only (tests/kernel/knetfilter.t): without the module, an error at
#    pass 5, before begin
out=$("$MT" -p2 -e 'global p probe netfilter.ipv4.pre_routing { p[saddr, daddr] <<< length }
	probe netfilter.ip.local_out { if (dport == 53) printf("%s %s %s\n", execname(), daddr, indev_name) }
	probe netfilter.*.* { printf("%s %d %s %s\n", pf, length, data_hex, data_str) }
	probe netfilter.bridge.* { if (protocol == llcproto_stp) printf("%x %s %d\n", br_prid, br_mac, br_cost) }
	probe netfilter.arp.in { println(ar_sip) }' 2>&1)
is "$?" 0 "netfilter.ipv4/ipv6/ip/arp/bridge aliases elaborate with stap's variables"
is "$(printf '%s\n' "$out" | grep -c '^netfilter.hook("NF_[A-Z0-9_]*").pf("NFPROTO_[A-Z0-9]*") /\* <- ')" 37 \
   "over stap's hooks: 1 + 2 (ip: ipv4 and ipv6) + 28 (*.*: ipv4 5, ipv6 5, ip 10, arp 3, bridge 5) + 5 + 1"
(cd "$TMP" && "$MT" -p4 -m nf_points -e 'probe netfilter.ipv4.local_in { println(length) }
	probe netfilter.pf("NFPROTO_IPV6").hook("NF_IP6_POST_ROUTING").priority("-5") { println($outdev_name) }
	probe netfilter.hook("1").pf("3") { next }' >/dev/null 2>&1)
is "$?:$(grep -o '^-- mark: probe_[0-9] netfilter:[-0-9:]*' "$TMP/nf_points.mtm" | cut -d' ' -f4 | tr '\n' ' ')" \
   "0:netfilter:1:2:0 netfilter:4:10:-5 netfilter:1:3:0 " \
   "bound to the module's netfilter:HOOK:PF:PRIORITY, names and numbers as stap pastes them"
(cd "$TMP" && "$MT" -p4 -m nf_length -e 'probe netfilter.ipv4.local_in { println(length) }' >/dev/null 2>&1)
grep -q '__marktap_nf_data\|kernel_read' "$TMP/nf_length.mtm"
is "$?:$(grep -c '^ *l_length = a10$' "$TMP/nf_length.mtm")" "1:1" "an alias variable nothing reads is not computed, in a try or an if too (length alone: no packet read)"
"$MT" -p2 -e 'probe netfilter.hook("NF_INET_LOCAL_INN").pf("NFPROTO_IPV4") { next }' > /dev/null 2> "$TMP/err"
like "$?:$(head -1 "$TMP/err")" '^1:semantic error: while resolving probe point netfilter[.]hook[(]"NF_INET_LOCAL_INN"[)][.]pf[(]"NFPROTO_IPV4"[)]: unknown netfilter hook "NF_INET_LOCAL_INN" [(]expected NF_INET_[*]' \
   "a hook name marktap does not know: a semantic error that says which"
"$MT" -e 'probe netfilter.ip.local_out { println(daddr) } probe begin { println("began") }' > "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/out")" "1:" "without marktap.ko they do not run: exit 1, begin not run"
like "$(cat "$TMP/err")" '^ERROR: netfilter probes work only in marktap.ko built with Lua: no /dev/marktap' \
   "the error says where they run"
"$MT" -g -e 'probe netfilter.ipv4.local_in { $verdict = nf_drop }' > "$TMP/out" 2> "$TMP/err"
like "$?:$(cat "$TMP/err")" '^1:ERROR: netfilter probes that give a verdict \(\$verdict, decided as the packet passes: a recorded event comes after it\) work only in marktap.ko' \
   "a verdict cannot come from handlers on recorded events: said at start"
if [ -r /sys/kernel/btf/vmlinux ]; then
	"$MT" -p3 -e 'probe netfilter.pf("NFPROTO_IPV4").hook("NF_INET_LOCAL_IN").priority("5") { println($skb->len, kernel_string($in->name)) }' > "$TMP/lua" 2> "$TMP/err"
	like "$?:$(grep -c 'rt.kernel_read((a2 + [0-9]*), 4, false' "$TMP/lua")" "^0:1$" \
	     "the hook point (pf first, priority): \$skb->len read through the kernel's BTF"
else
	skip "no kernel BTF here: \$skb->len through BTF"
fi
"$MT" -p2 -e 'probe netfilter.ipv4.local_in { println($okfn->x) }' > /dev/null 2> "$TMP/err"
like "$?:$(head -1 "$TMP/err")" "^1:semantic error: unresolved target-symbol expression: '->' of netfilter hook parameter '\\\$okfn' \\(int \\(\\*\\)" \
   "\$okfn is no pointer to a struct: an error that says so"

# 6. stap's optimizer drops a "<<<" into a local nothing reads before it
#    checks types (fidelity/lang-39.stp): no stat-local error, a warning;
#    what is read stays an error, and -u (no optimizer) keeps it
"$MT" -e 'probe begin { println(1); a = 1; a <<< 2; exit() }' > "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/out")" "0:1" "a = 1; a <<< 2 with a never read: runs"
like "$(head -1 "$TMP/err")" "^WARNING: Eliding assignment to 'a': operator '=' at <input>:1:29" "with stap's warning (its first)"
"$MT" -p2 -e 'probe begin { a <<< 2; println(@count(a)) }' > /dev/null 2> "$TMP/err"
like "$?:$(head -1 "$TMP/err")" "^1:semantic error: stat locals not supported" "a statistics local that is read: still the error"
"$MT" -u -p2 -e 'probe begin { println(1); a = 1; a <<< 2 }' > /dev/null 2> "$TMP/err"
like "$?:$(head -1 "$TMP/err")" "^1:semantic error: type mismatch \\(stats\\)" "-u: no elision, stap -u's type mismatch"

# 7. stap's register tapset (killsnoop-nd.stp, accept2close-nd.stp):
#    int_arg(N) & co. elaborate, as stap's; in a system call's probe they
#    are the call's arguments, which only marktap.ko reads: over a stored
#    trace they fail when they run, saying so
"$MT" -p2 -e 'global t probe nd_syscall.kill { asmlinkage(); t[tid()] = uint_arg(1) + int_arg(2) + long_arg(3) + ulong_arg(4) + pointer_arg(5) + s32_arg(1) + u32_arg(1) + s64_arg(1) + u64_arg(1) + longlong_arg(1) + ulonglong_arg(1) + register("rax") + u_register("rdi") + arch_bytes() }' > /dev/null 2>&1
is "$?" 0 "int_arg, uint_arg, long_arg, ulong_arg, pointer_arg, s32/u32/s64/u64_arg, register, asmlinkage elaborate"
printf 'trace kernel domain=kernel\nmarker 0 fs_close fd %%u\nstream 0\npacket\nev 1000 fs_close 10 10 a 7\n' | gen "$TMP/close"
"$MT" --trace "$TMP/close" -e 'probe nd_syscall.close { printf("%d\n", fd); printf("%d\n", int_arg(1)) }' > "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/out"):$(cat "$TMP/err")" "1:7:ERROR: system call arguments are read by handlers in marktap.ko only: kernel_arch_syscall_entry events carry the call number, not its arguments
WARNING: Number of errors: 1, skipped probes: 0" "at run time: an error naming why (the alias's fd is there)"
is "$("$MT" -e 'probe begin { fastcall(); regparm(3); println(arch_bytes()); exit() }' 2>/dev/null)" "8" \
   "fastcall, regparm: nothing to do; arch_bytes: 8"
is "$("$MT" -e 'probe begin { println(probing_32bit_app()); exit() }' 2>&1)" "0" \
   "probing_32bit_app: 0 (marktap probes 64-bit programs only; cve-2018-6485.stp)"

# 8. stap's JSON tapset (netfilter_summary_json.stp, net_xmit_json.stp):
#    json_add_* and the @json_output_* macros elaborate (corpus/json.stp:
#    their expansion is stap's, p1-stap.t); data.json and metadata.json
#    are procfs files, which marktap.ko serves: without it, an error at
#    pass 5 (tests/kernel/kprocfs.t runs them)
"$MT" -p2 "$top_srcdir/tests/translator/corpus/json.stp" > "$TMP/out" 2>&1
is "$?" 0 "json_set_prefix, json_add_*, json_data and every @json_output_* macro elaborate"
if [ -e /dev/marktap ]; then
	ok 0 "# SKIP /dev/marktap is here: procfs files are served"
	ok 0 "# SKIP /dev/marktap is here: procfs files are served"
else
	"$MT" -e 'probe json_data { @json_output_data_start @json_output_numeric_value("n", 1) @json_output_data_end }
		probe begin { println("began") }' > "$TMP/out" 2> "$TMP/err"
	is "$?:$(cat "$TMP/out")" "1:" "without marktap.ko they do not run: exit 1, begin not run"
	like "$(cat "$TMP/err" | tr '\n' ' ')" '^ERROR: probe point procfs\("data.json"\).read.maxsize\(8192\) cannot run: its file is served by marktap.ko: no /dev/marktap.*ERROR: probe point procfs\("metadata.json"\).read.maxsize\(8192\) cannot run' \
	   "the error names data.json and metadata.json"
fi

# 9. switch_file() (switchfile.stp) and -S SIZE[,N]: -o FILE's output in
#    FILE.0, FILE.1..., switched at SIZE MB or by switch_file(), the last
#    N kept; to standard output switch_file() does nothing, as stap's;
#    with -o but no -S it is an error that says so
is "$("$MT" -e 'probe begin { println("a"); switch_file(); println("b"); exit() }' 2>&1)" "a
b" "switch_file() without -o: nothing to switch, output goes on"
"$MT" -o "$TMP/o.txt" -e 'probe begin { println("a"); switch_file(); println("b"); exit() }' > /dev/null 2> "$TMP/err"
is "$?:$(cat "$TMP/o.txt")" "1:a" "with -o and no -S: the handler stops there, exit 1"
like "$(head -1 "$TMP/err")" "^ERROR: switch_file: -o's file is switched with -S SIZE\\[,N\\]" "the error says why"
"$MT" -DMAXACTION=100000 -o "$TMP/sw" -S 1,2 -e 'probe begin { for (i = 0; i < 5; i++) { for (k = 0; k < 10; k++) printf("%d %d\n", i, k); switch_file() } exit() }' 2>&1
is "$(ls "$TMP" | grep '^sw' | tr '\n' ' ')$(cat "$TMP/sw.4" | wc -l) $(head -1 "$TMP/sw.4")" "sw.4 sw.5 10 4 0" \
	"-S 1,2 and switch_file(): FILE.N each time, the last 2 kept, each with its lines"
"$MT" -DMAXACTION=100000 -o "$TMP/big" -S 1 -e 'probe begin { for (i = 0; i < 3000; i++) printf("%0499d\n", i); exit() }' 2>&1
a=$(stat -c %s "$TMP/big.0"); b=$(cat "$TMP/big.0" "$TMP/big.1" | wc -l)
ok $([ "$a" -ge 1048576 ] && [ -s "$TMP/big.1" ] && [ "$b" = 3000 ] && [ ! -e "$TMP/big.2" ] && echo 0 || echo 1) \
	"-S 1: FILE.0 ends at the first write past 1 MB ($a bytes), FILE.1 has the rest ($b lines in all)"
like "$({ "$MT" -S 1 -e 'probe begin { exit() }'; echo "rc=$?"; } 2>&1 | tr '\n' ' ')" "ERROR: -S switches the files of -o FILE: give -o.*rc=1" "-S without -o: an error"
like "$({ "$MT" -S 0 -o "$TMP/x" -e 'probe begin { exit() }'; echo "rc=$?"; } 2>&1 | tr '\n' ' ')" "-S: expected SIZE\\[,N\\].*saw '0'.*rc=1" "-S 0: stap's range, an error"

# (regression: a tapset function only an elided alias statement called
# stayed in the chunk: the priorities' /proc reader made marktap.ko
# refuse scheduler.* scripts that never read a priority)
out=$("$MT" -p2 -e 'probe scheduler.ctxswitch { println(prev_tid) } probe scheduler.wait_task { println(task_pid) }' 2>&1)
is "$(printf '%s\n' "$out" | grep -c '__marktap_task_prio_raw')" 0 "functions of elided alias variables leave the session"
is "$("$MT" -p3 -e 'probe scheduler.wait_task { println(task_pid) }' 2>&1 | grep -c 'rt.task_stat')" 0 \
   "so the kernel's chunk has no /proc reader (it runs in marktap.ko)"

# 10. The aliases of stap's examples over the guest kernel's BTF (the
#     kernel tests' cache; without it, skipped): tcpipstat.stp's
#     tcpmib/ipmib/linuxmib, nfsd's aliases over the nfsd module's
#     functions (its BTF from the kernel's modules, which
#     bench/examples.sh fetches), syscall.connect's sockaddr and
#     stap_time.stp's SDT markers of stap itself.
ex=/usr/share/systemtap/examples
cache=${MARKTAP_KERNEL_CACHE:-/var/cache/marktap-kernel}
guest=$(ls "$cache"/vmlinux-* 2>/dev/null | head -1)
kver=${guest##*/vmlinux-}
mods=$cache/modules-$kver-all/lib/modules/$kver/kernel
if [ -z "$guest" ]; then
	for i in 1 2 3 4 5 6 7; do ok 0 "# SKIP no cached guest kernel BTF in $cache"; done
else
	gmt() { MARKTAP_BTF=$guest MARKTAP_MODULE_PATH=$mods "$MT" -r "$kver" "$@"; }
	out=$(gmt -p2 -e 'probe tcpmib.*, ipmib.*, linuxmib.* { n[pp(), op, key] <<< 1 } global n' 2>&1)
	is "$?:$(printf '%s\n' "$out" | grep -c '^kernel.function(.*/\* <- [a-z]*mib\.\* \*/$')" "0:28" \
	   "tcpmib.*, ipmib.*, linuxmib.*: 28 probes on kernel functions of 6.1, op and key"
	if [ -f "$ex/network/tcpipstat.stp" ]; then
		(cd "$ex/network" && gmt -p2 tcpipstat.stp) > /dev/null 2> "$TMP/err"
		is "$?:$(head -1 "$TMP/err")" "0:" "tcpipstat.stp elaborates (its filter functions over the tapset's)"
	else
		ok 0 "# SKIP no tcpipstat.stp (systemtap-doc)"
	fi
	if [ -d "$mods" ]; then
		bad=
		for p in 'nfsd.*' 'nfsd.*.*' 'nfsd.*.*.*'; do gmt -l "$p"; done | sort -u > "$TMP/nfsd"
		for a in $(cat "$TMP/nfsd"); do
			vars=$(gmt -L "$a" | head -1 | tr ' ' '\n' | sed -n 's/^\([a-z_][a-z0-9_]*\):[a-z]*$/\1/p' | tr '\n' ' ')
			body=$(for v in $vars; do printf 'println(%s) ' "$v"; done)
			# (the unions: what all their aliases have)
			case $a in *.entries|nfsd.return|nfsd.proc.return) body='println(name, client_ip) ' ;; esac
			gmt -u -p2 -e "probe $a { $body}" 2>&1 | grep -q "^module(\"nfsd\").function(\"[a-z0-9_]*\")\(.return\)\{0,1\} /\* <- $a \*/\$" ||
				bad="$bad $a"
		done
		is "$(grep -c . "$TMP/nfsd"):$bad" "64:" \
		   "every nfsd alias elaborates over nfsd's functions with every variable -L lists"
		like "$(gmt -p2 -e 'probe nfsd.rename { println(tname) }' 2>&1)" \
		     "variable 'tname' is not available in nfsd.rename: its length is nfsd_rename's 7th argument, passed on the stack" \
		     "nfsd.rename's new name: an error that says why"
		ok_ex=
		for f in nfsd-recent.stp nfsd_unlink.stp; do
			[ -f "$ex/network/$f" ] && (cd "$ex/network" && gmt -p2 "$f") > /dev/null 2>&1 || ok_ex="$ok_ex $f"
		done
		is "$ok_ex" "" "stap's nfsd-recent.stp and nfsd_unlink.stp elaborate"
	else
		for i in 1 2 3; do ok 0 "# SKIP no modules of $kver in $mods (bench/examples.sh fetches them)"; done
	fi
	out=$(gmt -p3 -e 'probe syscall.connect { printf("%s %s %s %s\n", uaddr_af, uaddr_ip, uaddr_ip_port, argstr) }' 2>&1)
	like "$?:$(printf '%s' "$out" | tr '\n' ' ')" '^0:.*rt\.user_read\(' "syscall.connect's uaddr_*: the sockaddr read from user memory"
	if [ -f "$ex/network/connect_stat.stp" ]; then
		(cd "$ex/network" && gmt -p2 connect_stat.stp 127.0.0.1) > /dev/null 2> "$TMP/err"
		is "$?:$(head -1 "$TMP/err")" "0:" "connect_stat.stp elaborates"
	else
		ok 0 "# SKIP no connect_stat.stp (systemtap-doc)"
	fi
fi
if command -v stap > /dev/null 2>&1; then
	is "$("$MT" -p2 -e 'probe stap.pass0, stap.pass4.end { println(session) } probe stap.cache_get { println(source_path, module_path) }' 2>&1 | grep -c '^process(".*stap")\.mark("[a-z0-9_]*") /\* <- stap\.')" 3 \
	   "stap.pass0, stap.pass4.end, stap.cache_get: stap's own SDT markers"
else
	ok 0 "# SKIP no stap here"
fi
