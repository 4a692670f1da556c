#!/bin/sh
# The subsystem tapsets: every alias elaborates over its kernel marker(s)
# and lists with its variables; stap's names and variables that marktap
# claims elaborate with real SystemTap too; what a marker cannot give is
# a semantic error that says why.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
[ -f "$top_builddir/tapsets/syscalls.stp" ] || skip_all "tapsets/syscalls.stp not generated"

# Every alias name (the tapsets define them with one to three components).
"$MT" -l '*' > "$TMP/l1" && "$MT" -l '*.*' > "$TMP/l2" && "$MT" -l '*.*.*' > "$TMP/l3" ||
	{ echo "1..0 # marktap -l failed"; exit 1; }
cat "$TMP/l1" "$TMP/l2" "$TMP/l3" | sort -u > "$TMP/aliases"
# (input.*, prometheus and json_data stand on procfs, perf.* on perf events, netfilter.*
# on netfilter hooks (examples.t), not on
# kernel markers: points.t; nfsd.* on the nfsd module's functions and
# stap.*, staprun.*, stapio.* on SystemTap's SDT markers: examples.t;
# analysis.period on a trace's events or a process's markers:
# analyses-period.t)
grep -v '^n\{0,1\}d\{0,1\}_\{0,1\}syscall\.' "$TMP/aliases" | grep -v '^input\.\|^prometheus$\|^init$\|^json_data$\|^perf\.\|^netfilter\.\|^nfsd\.\|^stap\.\|^staprun\.\|^stapio\.\|^analysis\.period$' > "$TMP/subsystem"
# (send and recv: 32-bit tasks' socketcall, not x86_64 calls: examples.t)
grep -v '^n\{0,1\}d\{0,1\}_\{0,1\}syscall\.\(send\|recv\)\(\.return\)\{0,1\}$' "$TMP/aliases" > "$TMP/aliases64"
grep '^syscall\.' "$TMP/aliases64" | grep -v '\.return$' > "$TMP/syscalls"
grep '^nd_syscall\.' "$TMP/aliases64" | grep -v '\.return$' > "$TMP/nd_syscalls"
grep '^syscall\..*\.return$' "$TMP/aliases64" > "$TMP/syscalls_return"
grep '^nd_syscall\..*\.return$' "$TMP/aliases64" > "$TMP/nd_syscalls_return"
# x86_64 system calls from the generated table (the header has ~360)
nsys=$(grep -c '^		names\[[0-9]' "$top_builddir/tapsets/syscalls.stp")

# stap's aliases and variables that marktap provides under the same names
cat > "$TMP/claims" <<'CLAIMS'
scheduler.ctxswitch name prev_pid next_pid prev_tid next_tid prev_task_name next_task_name prevtsk_state nexttsk_state prev_task next_task prev_priority next_priority
scheduler.wakeup name task_pid task_tid task_state task task_priority task_cpu
scheduler.wakeup_new name task_pid task_tid task_state task task_priority task_cpu
scheduler.migrate name pid cpu_to task priority
scheduler.wait_task name task_pid task_priority
scheduler.process_fork name parent_pid child_pid
scheduler.process_exit name pid priority
scheduler.process_free name
scheduler.process_wait name pid
scheduler.signal_send name pid signal_number
scheduler.kthread_stop name thread_pid
scheduler.kthread_stop.return name return_value
kprocess.create new_pid new_tid
kprocess.exec name filename
kprocess.exit
kprocess.release released_tid
signal.send name sig sig_name sig_pid pid_name
irq_handler.entry irq
irq_handler.exit
softirq.entry vec_nr
softirq.exit vec_nr
vm.pagefault name address write_access
vm.pagefault.return name
netdev.transmit protocol
netdev.receive protocol
socket.create name family type protocol requester
socket.sendmsg name size family type protocol
socket.recvmsg name size family type protocol
syscall.read name fd count
syscall.write name fd count
syscall.pread name fd count offset
syscall.pwrite name fd count offset
syscall.readv name fd count
syscall.writev name fd count
syscall.close name fd argstr
syscall.lseek name fildes offset whence whence_str argstr
syscall.ioctl name fd request argp argstr
nd_syscall.read name fd count
nd_syscall.close name fd argstr
nd_syscall.lseek name fildes offset whence whence_str argstr
syscall.openat name
syscall.getpid name
syscall.execve name
nd_syscall.openat name
syscall_any syscall_nr name
syscall_any.return retval syscall_nr name
CLAIMS
nclaims=$(grep -c . "$TMP/claims")
nsub=$(grep -c . "$TMP/subsystem")

plan $((nsub + 2 * nclaims + 67))

# 1. Each subsystem alias: -p2 resolves it to kernel markers (or, for
#    the aliases built on kernel functions: vfs.*, ioblock.*, tcp.*...,
#    to kernel.function/kprobe.function points, through the kernel's
#    BTF), and a body reading every variable -L lists for it elaborates
#    (-L lists an alias's alternative definitions too, each on its line:
#    the first, with its variables, is checked).
while read -r a; do
	vars=$("$MT" -L "$a" | head -1 | tr ' ' '\n' | sed -n 's/^\([a-z_][a-z0-9_]*\):[a-z]*$/\1/p' | tr '\n' ' ')
	body=$(for v in $vars; do printf 'println(%s) ' "$v"; done)
	out=$("$MT" -u -p2 -e "probe $a { $body}" 2>&1)   # -u: keep a probe with no variables
	rc=$?
	n=$(printf '%s\n' "$out" | grep -c "^\(kernel.mark(\"[a-z0-9_]*\")\|kernel.function(\"[a-z0-9_]*\")\(.return\)\{0,1\}\|kprobe.function(\"[a-z0-9_.]*\")\|kernel.trace(\"[a-z0-9_:]*\")\) /\* <- $a \*/\$")
	missing=$(for v in $vars; do printf '%s\n' "$out" | grep -q "^  $v:" || printf '%s ' "$v"; done)
	if [ $rc != 0 ] && printf '%s\n' "$out" | grep -q 'no BTF for kernel'; then
		ok 0 "# SKIP $a stands on kernel functions: no BTF here"
	elif [ $rc = 0 ] && [ "$n" -ge 1 ] && [ -z "$missing" ]; then
		ok 0 "$a elaborates over $n marker(s) or function(s) with: $vars"
	else
		ok 1 "$a elaborates (rc $rc, $n markers, missing: $missing)"
		printf '%s\n' "$out" | sed 's/^/# /' | head -20
	fi
done < "$TMP/subsystem"

# 2. The system calls: syscall.NAME for every call of the table (those
#    fs.stp defines over fs_* markers included), nd_syscall.NAME as well.
is "$(grep -c . "$TMP/syscalls")" "$nsys" "syscall.NAME for each of the $nsys x86_64 system calls (pread64, pwrite64 as stap's pread, pwrite)"
is "$(grep -c . "$TMP/nd_syscalls")" "$nsys" "nd_syscall.NAME for each of them"
is "$(grep -c . "$TMP/syscalls_return") $(grep -c . "$TMP/nd_syscalls_return")" "$nsys $nsys" \
	"syscall.NAME.return and nd_syscall.NAME.return for each of them"
out=$("$MT" -p2 -e 'global c probe syscall.* { c[name]++ }' 2>&1)
is "$(printf '%s\n' "$out" | grep -c '^kernel.mark("kernel_arch_syscall_entry") /\* <- syscall.\* \*/$')" \
	"1" "syscall.*: the $((nsys - 9)) generated calls are one probe on kernel_arch_syscall_entry"
like "$("$MT" -p3 -e 'global c probe syscall.* { c[name]++ }' | tr '\n' ' ')" \
	"if \\(a1 < [0-9]+\\) then .*if \\(a1 == 2\\) then +local l_name = \"\" +do +l_name = \"open\"" \
	"which picks the call's branch by a binary search on \$syscall_id, each branch with its own locals"
is "$("$MT" -p3 -e 'global c probe syscall.* { c[name]++ }' | grep -c 'if (a1 ~= ')" "0" "(the aliases' own selectors are gone)"
is "$(printf '%s\n' "$out" | grep -c '^kernel.mark("fs_[a-z0-9]*") /\* <- syscall.\* \*/$')" "9" \
	"syscall.* resolves read, write, pread, pwrite, readv, writev, close, lseek, ioctl to fs_* markers"
# the generated table is the header's: spot-check numbers against it
hdr=$(sed -n 's|^// by tapsets/gen-syscalls.sh from \(.*\)$|\1|p' "$top_builddir/tapsets/syscalls.stp")
want=$(sed -n 's/^#define __NR_openat[ 	]*\([0-9]*\)$/\1/p' "$hdr")
like "$(grep -A3 '^probe syscall.openat =' "$top_builddir/tapsets/syscalls.stp" | tr '\n' ' ')" \
	"syscall_id != $want\\) next.*name = \"openat\"" "syscall.openat filters on __NR_openat ($want) from $hdr"
"$MT" -p3 -e 'probe begin { printf("%s %s %s\n", syscall_name(0), syscall_name(59), syscall_name(99999)) exit() }' > "$TMP/sn.lua"
is "$("$MT" -e 'probe begin { printf("%s %s %s\n", syscall_name(0), syscall_name(59), syscall_name(99999)) exit() }')" \
	"read execve syscall_99999" "syscall_name() from the generated table"

# the generator refuses what is not a system call table
echo '#define __NR_read 0' > "$TMP/short.h"
out=$(sh "$top_srcdir/tapsets/gen-syscalls.sh" "$TMP/short.h" 2>&1 >/dev/null)
like "$? $out" "^1 gen-syscalls.sh: .*short.h has no x86_64 system call table" "gen-syscalls.sh: a header without the table is an error"
out=$(sh "$top_srcdir/tapsets/gen-syscalls.sh" "$TMP/none.h" 2>&1 >/dev/null)
like "$? $out" "^1 gen-syscalls.sh: cannot read .*none.h" "gen-syscalls.sh: an unreadable header is an error"

# 3. Functions scripts use with the aliases.
is "$("$MT" -e 'probe begin { printf("%s %s %s %s\n", signal_str(9), signal_str(17), signal_str(34), signal_str(0)) exit() }')" \
	"SIGKILL SIGCHLD SIGRTMIN+2 UNKNOWN SIGNAL 0" "signal_str()"
is "$("$MT" -e 'probe begin { printf("%s %s %s %s %s\n", sock_fam_num2str(2), sock_type_num2str(2), sock_prot_num2str(6), netproto_str(8), ip_ntop(16777343)) exit() }')" \
	"INET DGRAM TCP IPv4 127.0.0.1" "sock_*_num2str() and netproto_str() (of skb->protocol, network byte order)"
is "$("$MT" -e "probe begin { printf(\"%s %d\\n\", pid2execname($$), __marktap_task_tgid($$)) exit() }")" \
	"$(cat /proc/$$/comm) $$" "pid2execname() and the tgid of another task, read from /proc"

# 4. A variable stap documents that the marker cannot give: a semantic
#    error naming why, not a silent 0.
out=$("$MT" -p2 -e 'probe scheduler.migrate { println(cpu_from) }' 2>&1)
rc=$?
like "$rc $out" "^1 semantic error: variable 'cpu_from' is not available in scheduler.migrate: kernel_sched_migrate_task carries the destination cpu only: identifier 'cpu_from' at <input>:1:35" \
	"unavailable variable: stap-style semantic error with the reason"
out=$("$MT" -p2 -e 'probe syscall.clone { println(argstr) }' 2>&1)
like "$out" "variable 'argstr' is not available in syscall.clone: kernel_arch_syscall_entry carries the system call number only" \
	"argstr of a call whose parameters the kernel headers leave open is an error"
# the generated syscall aliases give the call's arguments by the kernel's
# names, from the registers at its entry (marktap.ko reads them); what
# stap decodes beyond them (flags_str...) is an error with the reason
out=$("$MT" -p3 -e 'probe syscall.openat { printf("%s %d %d %d\n", filename, flags, dfd, mode) }' 2>&1)
like "$?" "^0$" "syscall.openat with filename, flags, dfd and mode: translated"
like "$out" "__marktap_syscall_arg/1\"\\]\\(1, " "syscall.openat's filename: read from argument 1's address"
like "$out" "rt.syscall_arg\\(n\\)" "... which marktap.ko's rt.syscall_arg gives"
like "$out" "rt.user_string" "... as a user string"
out=$("$MT" -p3 -e 'probe syscall.openat { println(flags) }' 2>&1)
case $out in *user_string*) r=1 ;; *) r=0 ;; esac
ok $r "a handler reading flags only reads no string (the others are elided)"
out=$("$MT" -p2 -e 'probe syscall.openat { println(flags_str) }' 2>&1)
like "$? $out" "^1 semantic error: variable 'flags_str' is not available in syscall.openat: marktap gives this call's arguments by stap's names and the kernel's \\(filename_uaddr dfd filename filename_unquoted flags mode\\) and argstr" \
	"stap's decoded flags_str: an error naming what there is"
out=$("$MT" -p2 -e 'probe syscall.futex { println(futex_uaddr, op, val3) } probe syscall.exit { println(status) } probe syscall.rename { println(oldpath, newpath) } probe syscall.connect { println(sockfd, serv_addr_uaddr, addrlen) }' 2>&1)
is "$?" 0 "stap's own names of the arguments: futex_uaddr, exit's status, rename's oldpath, connect's sockfd"
out=$("$MT" -p2 -e 'probe syscall.kill { printf("%d %d %s\n", pid, sig, argstr) }' 2>&1)
is "$?" 0 "syscall.kill: pid, sig and argstr"
"$MT" -p2 -e 'probe syscall.* { printf("%s(%s)\n", name, argstr) }' >/dev/null 2>&1
is "$?" 0 "syscall.*'s argstr elaborates (send's too: socketcall's arguments)"
out=$("$MT" -e 'probe syscall.openat { println(flags) exit() }' 2>&1)
[ -e /dev/marktap ] && skip 1 "a marktap.ko is loaded here" ||
like "$? $out" "^1 ERROR: system call arguments work only in marktap.ko built with Lua" \
	"without marktap.ko the arguments are an ERROR, never read as 0 from recorded events"
# @entry(expr) in a syscall .return alias: evaluated at the entry marker,
# where the alias calls __marktap_entry(), kept for the thread
out=$("$MT" -p3 -e 'global t probe syscall.read.return { t <<< gettimeofday_ns() - @entry(gettimeofday_ns()) }' 2>&1)
like "$(printf '%s' "$out" | tr '\n' ' ')" 'ev_0\[rt\.tid\(\)\] = \{rt_d_gettimeofday_ns\(\)\}.*rt\.probe\("probe_1".*local ev = ev_0\[ev_t\]' \
	"@entry in syscall.read.return: kept at the entry for the thread, read at the exit"
# syscall.*.return (errsnoop.stp's, strace.stp's nd_): its aliases are
# one handler on each marker of their pair, their selector called once in
# each (elab_probe.c); send and recv keep their own, over three markers
for p in syscall nd_syscall; do
	out=$("$MT" -p3 -e "probe $p.*.return { if (retval < 0) println(name) }" 2>&1)
	is "$(printf '%s\n' "$out" | grep -c '^-- kernel.mark("kernel_arch_syscall_entry")') $(printf '%s\n' "$out" |
		grep -c '^-- kernel.mark("kernel_arch_syscall_exit")') $(printf '%s\n' "$out" | grep -c 'F\["__marktap_syscall_select/1"\](')" \
		"3 3 2" "$p.*.return: one merged handler per marker (and send's and recv's), the selector called once in each"
done
# a script's global does not capture a tapset function's local of that name
out=$("$MT" -p2 -e 'global t probe syscall.read.return { t <<< 1 }' 2>&1)
is "$?" 0 "a script's 'global t' beside the tapsets' local t (x86_64.stp)"
out=$("$MT" -p2 -e 'probe syscall.kill.return { printf("%d %d\n", retval, sig) }' 2>&1)
like "$? $out" "^1 semantic error: variable 'sig' is not available in syscall.kill.return: kernel_arch_syscall_exit carries the return value only" \
	"a return alias: retval is there, the call's arguments are not"
"$MT" -p2 -e 'probe syscall.execve { filename = "x"; printf("%s %s\n", name, filename) }' >/dev/null 2>&1
is "$?" 0 "a variable the handler assigns is its own"
out=$("$MT" -p2 -e 'probe timer.s(1) { printf("%d\n", never_set) }' 2>&1)
like "$? $out" "^0 WARNING: never-assigned local variable 'never_set'" "a typed never-assigned local: stap's warning"
out=$("$MT" -p2 -e 'probe scheduler.ctxswitch { println($prev_prio) }' 2>&1)
like "$? $out" "^1 semantic error: invalid target symbol for marker" "unknown \$variable: semantic error"
out=$("$MT" -p2 -e 'probe scheduler.ctxswitch { println(prev_prio) }' 2>&1)
like "$out" "WARNING: never-assigned local variable 'prev_prio'" "unknown plain variable: stap's never-assigned warning"
# What stap's tapsets use in aliases: '!' (the first point that resolves),
# '?' (optional), @defined of a marker field.
pts() { "$MT" -u -p2 -e "$1" 2>&1 | sed -n 's|^kernel.mark("\([a-z_]*\)") /\* <- .*|\1|p' | tr '\n' ' '; }
is "$(pts 'probe a = kernel.mark("fs_open") !, kernel.mark("fs_close") { } probe a { }')" "fs_open " \
	"alias 'p !, q': q is not used when p resolves"
is "$(pts 'probe a = kernel.mark("no_such") !, kernel.mark("fs_close") { } probe a { }')" "fs_close " \
	"alias 'p !, q': q when p resolves to nothing"
like "$("$MT" -p2 -e 'probe a = kernel.mark("no_such") ?, kernel.mark("fs_open"), kernel.mark("fs_close") { x = @defined($filename) ? 1 : 0 } probe a { println(x) }' 2>&1 | tr '\n' ' ')" \
	'fs_open.*x:long.*fs_close.*x:long' "alias with an optional point and @defined of a field"

# (regression: of "probe a.*" the probes share @entry's table, which only
# the first probe declared: when that alias kept no @entry value, a later
# one's table was an undeclared global, nil at its first hit
# (tcpipstat.stp's linuxmib.*))
out=$("$MT" -p3 -e 'probe mt_t.a = kernel.function("vfs_read") { c = 1 } probe mt_t.b = kernel.function("vfs_write").return { c = @entry($file->f_flags) } probe mt_t.* { println(c) }' 2>&1)
t=$(printf '%s\n' "$out" | sed -n 's/^ *\(ev_[0-9]*\)\[a[0-9]*\] = {.*/\1/p' | head -1)
like "${t:-none} $(printf '%s\n' "$out" | grep -c "^local ${t:-none} = {}\$")" '^ev_[0-9]* 1$' \
	"@entry in the second of an alias wildcard's probes: its table is declared"

# Nested aliases: the inner alias's body runs first ("b = a" over "a =
# P": a's, b's, the user's); "+=" bodies after the user's, inner last.
is "$("$MT" -e 'probe a = begin { v = 1 } probe b = a { w = v + 1 } probe b { println(w); exit() }')" "2" \
	"nested alias prologues run innermost first"
is "$("$MT" -e 'probe a += begin { print("a") } probe b += a { print("b") } probe b { print("u") } probe end { println("") }')" "uba" \
	"nested alias epilogues run innermost last"

# Alias variables nothing reads are not computed (as stap elides them):
# counting switches does not read /proc for next_task_name.
locals_of() { "$MT" -p2 "$@" | sed -n 's/^  \([a-z_]*\):[a-z]*$/\1/p' | tr '\n' ' '; }
is "$(locals_of -e 'global n probe scheduler.ctxswitch { n[prev_tid]++ }')" "prev_tid " \
	"unused alias variables are elided"
is "$(locals_of -e 'probe syscall.lseek { println(argstr) }')" "fildes offset whence_str argstr " \
	"what a used variable needs stays (argstr's fildes, offset, whence_str)"
like "$(locals_of -u -e 'global n probe scheduler.ctxswitch { n[prev_tid]++ }')" "^name prev_tid prev_pid prev_task_name prevtsk_state next_tid next_pid next_task_name nexttsk_state prev_task next_task prev_priority next_priority $" \
	"-u keeps them all"
# a marker field called "name" is $arg1 only: $name is the marker's name
is "$("$MT" -L kmodule.load)" 'kmodule.load name:string $arg1:string $name:string $format:string' \
	"-L: kmodule.load's \$name once (the marker's), the module's name as \$arg1 and name"
# -L names the alias, not the marker, as stap -L does
like "$("$MT" -L scheduler.ctxswitch)" "^scheduler.ctxswitch name:string prev_tid:long prev_pid:long prev_task_name:string prevtsk_state:long next_tid:long next_pid:long next_task_name:string nexttsk_state:long prev_task:long next_task:long prev_priority:long next_priority:long \\\$arg1:long" \
	"-L lists an alias with its variables and types"

# SystemTap's own example scripts (Debian's systemtap-doc) that use these
# aliases elaborate unchanged; those that need what the markers lack fail
# with the reason.
ex=/usr/share/systemtap/examples
for f in process/sigkill.stp process/syscalls_by_proc.stp process/forktracker.stp \
	 process/syscalls_by_pid.stp process/sig_by_pid.stp process/sig_by_proc.stp \
	 process/thread-business.stp "process/sigmon.stp sh"; do
	set -- $f
	if [ -f "$ex/$1" ]; then
		"$MT" -p2 "$ex/$1" $2 >/dev/null 2>"$TMP/ex.err"
		ok $? "stap's example $1 elaborates unchanged"
		sed 's/^/# /' "$TMP/ex.err" | head -5
	else
		ok 0 "# SKIP $ex/$1 absent (systemtap-doc)"
	fi
done
# What the marker lacks, an alternative definition of the alias gives
# (elab_probe.c): the handler that reads it gets that definition's point
# instead of the marker; the others keep the marker.
for f in 'memory/pfaults.stp:kernel\.function\("handle_mm_fault"\)\.return /\* <- vm\.pagefault\.return \*/' \
	 'interrupt/interrupts-by-dev.stp:kernel\.trace\("irq:irq_handler_entry"\) /\* <- irq_handler\.entry \*/'; do
	if [ -f "$ex/${f%%:*}" ]; then
		like "$("$MT" -p2 "$ex/${f%%:*}" 2>&1)" "${f#*:}" "stap's example ${f%%:*}: what the marker lacks, from the alias's alternative point"
	else
		ok 0 "# SKIP $ex/${f%%:*} absent (systemtap-doc)"
	fi
done
points_of() { "$MT" -p2 -e "$1" 2>&1 | sed -n 's|^\([a-z]*\.[a-z]*("[^"]*")[.a-z]*\) /\* <- .*|\1|p' | tr '\n' ' '; }
is "$(points_of 'probe irq_handler.entry { println(irq) } probe vm.pagefault.return { println(name) }')" \
   'kernel.mark("kernel_irq_entry") kernel.mark("mm_handle_fault_exit") ' \
   "a handler reading what the markers carry keeps them (no alternative)"
like "$("$MT" -L irq_handler.entry | tr '\n' ' ')" \
     '^irq_handler.entry irq:long action:long .* dev_name:string .*\$action:struct irqaction\* irq_handler.entry irq:long kernel_mode:long ' \
     "-L lists both definitions of irq_handler.entry, each with its variables"
is "$(points_of 'probe irq_handler.entry, irq_handler.exit { println(kernel_string(dev_name)) }')" \
   'kernel.trace("irq:irq_handler_entry") kernel.trace("irq:irq_handler_exit") ' \
   "dev_name: irq_handler.entry and .exit over the irq tracepoints"
is "$(points_of 'probe kprocess.release { println(released_tid) } probe kprocess.release { println(released_pid, pid) }')" \
   'kernel.mark("kernel_process_free") kernel.trace("sched:sched_process_free") ' \
   "kprocess.release: released_tid from the marker, released_pid and pid from the sched_process_free tracepoint's task"
like "$("$MT" -p2 -e 'probe irq_handler.entry { println(dev_name, kernel_mode) }' 2>&1)" \
   "semantic error: variable 'kernel_mode' is not available in irq_handler.entry: the irq_handler_entry tracepoint does not say what the irq interrupted" \
   "what neither definition gives together: the alternative's reason"
is "$("$MT" -e 'probe begin { printf("%s|%s|%s|%s\n", vm_fault_to_str(0), vm_fault_to_str(4), vm_fault_to_str(0x404), irqflags_str(0x2080)); exit() }' 2>&1)" \
   "MINOR|MAJOR|MAJOR|RETRY|IRQF_SHARED|IRQF_ONESHOT" "vm_fault_to_str, irqflags_str"
is "$("$MT" -e 'probe begin { printf("%d %d %d %d %d\n", vm_fault_contains(0, VM_FAULT_MINOR), vm_fault_contains(4, VM_FAULT_MAJOR), vm_fault_contains(4, VM_FAULT_MINOR), vm_fault_contains(1, VM_FAULT_OOM), VM_FAULT_SIGBUS); exit() }' 2>&1)" \
   "1 1 0 1 1" "vm_fault_contains with stap's VM_FAULT_* globals"

# Every alias is documented in doc/tapsets.md and marktap-tapsets(7).
undoc=$(while read -r a; do grep -qF "\`$a\`" "$top_srcdir/doc/tapsets.md" || printf '%s ' "$a"; done < "$TMP/subsystem")
is "$undoc" "" "doc/tapsets.md documents every subsystem alias"
undoc=$(while read -r a; do grep -qF "fB$a\\fR" "$top_srcdir/doc/marktap-tapsets.7" || printf '%s ' "$a"; done < "$TMP/subsystem")
is "$undoc" "" "marktap-tapsets(7) documents every subsystem alias"

# 5. stap's names: marktap provides each claimed variable of each alias ...
while read -r a vars; do
	listed=$("$MT" -L "$a" | head -1)
	missing=$(for v in $vars; do printf '%s\n' "$listed" | grep -q " $v:" || printf '%s ' "$v"; done)
	is "$missing" "" "$a: marktap gives stap's ${vars:-(no variables)}"
done < "$TMP/claims"

# ... and real SystemTap elaborates each claim (pass 2) with the same
# alias name and variables (a variable its alias does not set would be a
# never-assigned warning).  stap resolves some aliases through
# kernel.function probes, which need kernel debuginfo: those are skipped.
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | sed -E 's/^linux-headers-([^ ,]+).*/\1/')
have_stap=yes
if ! command -v stap >/dev/null 2>&1 || [ -z "$KVER" ] || [ ! -d "/usr/src/linux-headers-$KVER" ]; then
	have_stap=
fi
stap_p2() { # stap_p2 FILE: 0 elaborated cleanly, 1 failed, 2 needs debuginfo
	stap -r "$KVER" -p2 "$1" > "$TMP/stap.p2" 2> "$TMP/stap.err" &&
		! grep -q 'never-assigned' "$TMP/stap.err" && return 0
	grep -q 'debuginfo' "$TMP/stap.err" && return 2
	sed 's/^/# /' "$TMP/stap.err" | head -10
	return 1
}
nstap=0
while read -r a vars; do
	printf 'probe %s { println(0%s) }\n' "$a" "$(for v in $vars; do printf ', %s' "$v"; done)" > "$TMP/one.stp"
	if [ -z "$have_stap" ]; then
		ok 0 "# SKIP stap or the kernel headers are absent ($a)"
		continue
	fi
	stap_p2 "$TMP/one.stp"
	case $? in
	0) ok 0 "stap -p2 elaborates $a with ${vars:-no variables}"; nstap=$((nstap + 1)) ;;
	2) ok 0 "# SKIP stap's $a needs kernel debuginfo here" ;;
	*) ok 1 "stap -p2 elaborates $a with $vars" ;;
	esac
done < "$TMP/claims"
echo 'probe begin { println(signal_str(9), pid2execname(1), syscall_name(0), sock_fam_num2str(2), sock_type_num2str(1), sock_prot_num2str(6), ip_ntop(16777343)) }' > "$TMP/funcs.stp"
if [ -n "$have_stap" ]; then
	stap_p2 "$TMP/funcs.stp"
	ok $? "stap -p2 has the functions signal_str, pid2execname, syscall_name, sock_*_num2str, ip_ntop"
else
	ok 0 "# SKIP stap absent"
fi
"$MT" -p2 "$TMP/funcs.stp" > /dev/null
ok $? "marktap -p2 has them too"
diag "$nstap of $nclaims claimed aliases elaborated with real stap"
done_testing
