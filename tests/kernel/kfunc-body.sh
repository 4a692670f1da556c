# The guest's part of kfunc.t (run by /init; TAP-like lines on the console):
# kernel.function / kprobe.function probes resolved from the guest kernel's
# BTF by marktap, run as kprobes by marktap.ko with the handlers' Lua.
show() { sed "s/^/# $1: /" "/tmp/$1.out" | head -${2:-8}; }

insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
export MARKTAP_DATADIR=/share/marktap
cd /tmp
dd if=/dev/zero of=/tmp/kf-data bs=4096 count=10 2>/dev/null
echo "kfunc probe file" >/tmp/kf-file
check "the guest kernel has BTF" test -r /sys/kernel/btf/vmlinux
DD='dd if=/tmp/kf-data of=/dev/null bs=4096 count=10'

# counts and $count of vfs_read, for dd's ten reads of 4096 bytes
marktap -c "$DD" -e 'global n, c
probe kernel.function("vfs_read") { if (execname() == "dd") { n++; if ($count == 4096) c++ } }
probe end { printf("n=%d c=%d\n", n, c) }' >kf1.out 2>&1
show kf1 6
check "kernel.function(\"vfs_read\") counts dd's reads, \$count is the block size" grep -q '^n=1[01] c=1[01]$' kf1.out

# the file cat opens, from do_sys_openat2's $filename (user memory)
marktap -c 'sh -c "exec cat /tmp/kf-file >/dev/null"' -e 'probe kernel.function("do_sys_openat2") { if (execname() == "cat") println("open ", user_string($filename)) }' >kf2.out 2>&1
show kf2 6
check "user_string(\$filename) of do_sys_openat2 names the file cat opens" grep -q '^open /tmp/kf-file$' kf2.out

# .return: $return is the bytes read, $count still the call's
marktap -c "$DD" -e 'probe kernel.function("vfs_read").return { if (execname() == "dd") printf("ret %d count %d entry %d\n", $return, $count, @entry($count)) }' >kf3.out 2>&1
show kf3 4
check ".return: \$return = 4096 bytes read, \$count and @entry(\$count) the call's" sh -c "[ \$(grep -c '^ret 4096 count 4096 entry 4096$' kf3.out) = 10 ]"

# members through BTF: f_flags by -> and by @cast, and a bad pointer
marktap -c "$DD" -e 'global bad, good, name
probe kernel.function("vfs_read") { if (execname() == "dd") {
  f = $file->f_flags; if (f != 0 && f == @cast($file, "file")->f_flags) good++; else bad++
  name = kernel_string($file->f_path->dentry->d_name->name) } }
probe end { printf("good=%d bad=%d name=%s\n", good, bad, name) }' >kf4.out 2>&1
show kf4 4
check "\$file->f_flags non-zero and equal to @cast(\$file, \"file\")->f_flags; the dentry's name" \
	grep -q '^good=1[01] bad=0 name=kf-data$' kf4.out
marktap -c "$DD" -e 'probe kernel.function("vfs_read") { if (execname() == "dd") { println(@cast(16, "file")->f_flags); exit() } }' >kf5.out 2>&1
show kf5 4
check "a read at a bad address: stap's kernel read fault error, no oops" grep -q 'ERROR: kernel read fault at 0x' kf5.out

# kprobe.function(...).return
marktap -c "$DD" -e 'global n, m probe kprobe.function("vfs_read").return { if (execname() == "dd" && returnval() == 4096) n++ }
probe kprobe.function("vfs_read") { if (execname() == "dd" && ulong_arg(3) == 4096 && int_arg(3) == 4096) m++ }
probe end { printf("n=%d m=%d\n", n, m) }' >kf6.out 2>&1
show kf6 4
check "kprobe.function(\"vfs_read\")[.return]: returnval() and ulong_arg(3), int_arg(3) are dd's 4096" grep -q '^n=10 m=10$' kf6.out

# kprobe.statement(ADDR).absolute (guru): vfs_read's address from
# /proc/kallsyms; an address inside an instruction is the kernel's refusal
va=$(grep ' [Tt] vfs_read$' /proc/kallsyms | cut -d' ' -f1)
marktap -g -c "$DD" -e "global n probe kprobe.statement(0x$va).absolute { if (execname() == \"dd\") n++ } probe end { printf(\"abs n=%d\\n\", n) }" >kfa.out 2>&1
show kfa 4
check "kprobe.statement(0x$va).absolute (vfs_read's address) counts dd's 10 reads" grep -q '^abs n=1[01]$' kfa.out
vb=${va%?}1   # functions start 16-byte aligned: one byte into the first instruction
marktap -g -e "global n probe kernel.statement(0x$vb).absolute { n++ }" -T 1 >kfx.out 2>&1; rc=$?
show kfx 4
check "an address inside an instruction: the kernel refuses the probe, marktap says why (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'cannot probe kernel function 0x' kfx.out"
marktap -e "global n probe kprobe.statement(0x$va).absolute { n++ }" -p2 >kfy.out 2>&1; rc=$?
check "without -g an absolute address is refused at -p2 (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'needs guru mode' kfy.out"

# refused: a symbol kallsyms lacks (at -p2, from /proc/kallsyms; the
# module's reason when no symbol table is read), a blacklisted function
marktap -e 'probe kprobe.function("no_such_function_kf") { println("hit") }' >kf7.out 2>&1
rc=$?
show kf7 4
check "a kprobe on a missing symbol: no match at -p2, naming the symbol table (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'no_such_function_kf is in neither the kernel.s BTF nor its symbol table' kf7.out"
MARKTAP_SYSTEM_MAP=/nonexistent marktap -e 'probe kprobe.function("no_such_function_kf") { println("hit") }' >kf7b.out 2>&1
rc=$?
show kf7b 4
check "... and without a symbol table, the module's error naming kallsyms (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'no such symbol in kallsyms' kf7b.out"
# do_int3: NOKPROBE_SYMBOL (the int3 handler kprobes themselves use), in BTF
bl=do_int3
grep -q "	$bl\$" /sys/kernel/debug/kprobes/blacklist && echo "# $bl is on the kprobe blacklist"
marktap -p2 -e "probe kernel.function(\"${bl:-do_int3}\") { println(\"hit\") }" >kf8.out 2>&1
rc=$?
show kf8 4
check "a function of the kprobe blacklist is refused at -p2, saying so (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'kprobe blacklist' kf8.out"
MARKTAP_KPROBE_BLACKLIST=/dev/null marktap -e "probe kernel.function(\"${bl:-do_int3}\") { println(\"hit\") }" >kf9.out 2>&1
rc=$?
show kf9 4
check "the module refuses it too, with the kernel's reason (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'the kernel refuses to kprobe it' kf9.out"

# guru mode (stap -g): a parameter and $return written in the registers
# the function and its caller resume with
marktap -g -c "$DD" -e 'probe kernel.function("vfs_read") { if (execname() == "dd" && $count == 4096) $count = 512 }' >kf11.out 2>&1
show kf11 6
# (busybox dd counts whole and partial blocks: 10+0 unchanged, 0+10 short)
check "-g: \$count = 512 at vfs_read's call: each of dd's reads is short" grep -q '^0+10 records in' kf11.out
marktap -g -c "$DD" -e 'probe kernel.function("vfs_read").return { if (execname() == "dd" && $return == 4096) $return = 100 }' >kf12.out 2>&1
show kf12 6
check "-g: \$return = 100 at vfs_read's return: dd gets short reads" grep -q '^0+10 records in' kf12.out
marktap -g -c "$DD" -e 'probe kernel.function("vfs_read") { if (execname() == "dd") { $return = 1; exit() } }' >kf13.out 2>&1
show kf13 4
check "-g: \$return at the call: a semantic error" grep -q 'semantic error' kf13.out

# guru mode in a system call's probe: its arguments written in the
# registers the call reads them from, after its entry's markers
marktap -g -c "$DD" -e 'probe syscall.read { if (execname() == "dd" && $count == 4096) $count = 512 }' >ks1.out 2>&1
show ks1 6
check "-g: syscall.read's \$count = 512: each of dd's reads is short" grep -q '^0+10 records in' ks1.out
marktap -g -c 'cat /tmp/kf-data' -e 'probe syscall.openat { if (execname() == "cat" && user_string($filename) == "/tmp/kf-data") { printf("flags %d\n", $flags & 3); $filename = 0 } }' >ks2.out 2>&1
show ks2 6
check "-g: syscall.openat's \$filename = 0: cat's open fails (EFAULT), the flags read as O_RDONLY" \
	sh -c "grep -q '^flags 0$' ks2.out && grep -q 'Bad address' ks2.out"

# guru mode's printk from a handler in marktap.ko: the kernel log's line
marktap -g -c "$DD" -e 'global n probe kernel.function("vfs_read") { if (execname() == "dd" && !n++) printk(4, "mt-kprintk " . execname()) }' >ks3.out 2>&1
show ks3 4
check "-g: printk() in a kernel function's handler writes the kernel log" sh -c "dmesg | grep -q 'mt-kprintk dd\$'"

# a second session after those works; nothing registered is left
marktap -c "$DD" -e 'global n probe kernel.function("vfs_read") { if (execname() == "dd") n++ } probe end { printf("n=%d\n", n) }' >kf10.out 2>&1
check "a second session counts again" grep -q '^n=1[01]$' kf10.out
check "no kprobe of ours is left registered" sh -c "! grep -q marktap /sys/kernel/debug/kprobes/list 2>/dev/null && ! grep -q 'vfs_read' /sys/kernel/debug/kprobes/list"

# a module's function by MODULE:SYMBOL: mt_hello's exit, run by rmmod
insmod /mt_hello.ko
marktap -c 'rmmod mt_hello' -e 'probe kprobe.module("mt_hello").function("mt_hello_exit") { println("exit ", execname()) }' >kf11.out 2>&1
show kf11 4
check "kprobe.module(\"mt_hello\").function(\"mt_hello_exit\") fires at rmmod" grep -q '^exit rmmod$' kf11.out

# attach and detach 20 times while reads go on, kprobes and kretprobes
( while [ ! -e /tmp/kf-stop ]; do dd if=/tmp/kf-data of=/dev/null bs=4096 2>/dev/null; done ) &
bad=0
for i in $(seq 20); do
	marktap -e 'global n probe kernel.function("vfs_read") { n++ } probe kernel.function("vfs_read").return.maxactive(8) { n += $return > 0 }
probe timer.ms(50) { exit() }' >kf12.out 2>&1 || bad=$((bad + 1))
done
touch /tmp/kf-stop
wait
show kf12 4
check "20 sessions attach and detach under reads, each ends cleanly ($bad failed)" test $bad = 0

# cost of a hit: getppid() with a kernel.function handler (__task_pid_nr_ns:
# getppid's one call) and with a kernel.mark one (the system call's entry)
base=$(kreader spin 200000)
marktap -DSTP_NO_OVERLOAD -c 'sh -c "kreader spin 200000 >/tmp/spin-kf.txt"' -e 'global n probe kernel.function("__task_pid_nr_ns") { if (execname() == "kreader") n++ } probe end { printf("n=%d\n", n) }' >kfb.out 2>&1
show kfb 4
check "a kernel.function handler runs at each of 200000 calls" grep -q '^n=20000[0-9]$' kfb.out
marktap -DSTP_NO_OVERLOAD -c 'sh -c "kreader spin 200000 >/tmp/spin-km.txt"' -e 'global n probe kernel.mark("kernel_arch_syscall_entry") { if ($syscall_id == 110 && execname() == "kreader") n++ } probe end { printf("n=%d\n", n) }' >kmb.out 2>&1
show kmb 4
echo "KFUNC-BENCH ns per getppid(): none $base, kernel.function $(cat /tmp/spin-kf.txt), kernel.mark $(cat /tmp/spin-km.txt)"

# @entry(expr) at .return: evaluated at the call (the module fires the
# handler there too), taken back at the return of that same call
dd if=/dev/zero of=/tmp/kf-e bs=4096 count=5 2>/dev/null
marktap -c 'dd if=/tmp/kf-e of=/dev/null bs=4096 count=5' -e 'global n, sum, bad
probe kernel.function("vfs_read").return { if (pid() == target() && @entry(kernel_string($file->f_path->dentry->d_name->name)) == "kf-e") {
  n++; sum += @entry($file->f_pos)
  if (gettimeofday_ns() < @entry(gettimeofday_ns()) || @entry(execname()) != "dd" || $return != 4096) bad++ } }
probe end { printf("n=%d sum=%d bad=%d\n", n, sum, bad) }' >en1.out 2>&1
show en1 4
check "@entry(expr): f_pos, the time and execname() at each of dd's 5 calls, matched to their returns" \
	grep -q '^n=5 sum=40960 bad=0$' en1.out

# kernel backtraces: the stack saved before the handler's Lua runs,
# from a kprobe's registers, a tracepoint's and a catalogue marker's place
marktap -c 'dd if=/dev/zero of=/dev/null count=1' -e 'probe kernel.function("vfs_read") { if (pid() == target()) {
  print_backtrace(); printf("callers %s\ncaller %s\n", callers(2), caller()); exit() } }' >bt1.out 2>&1
show bt1 12
check "print_backtrace at vfs_read: vfs_read+0x0 first, ksys_read below; callers(2) two addresses; caller() ksys_read" \
	sh -c "grep ' : ' bt1.out | head -1 | grep -q '^ 0xffffffff[0-9a-f]\{8\} : vfs_read+0x0/0x[0-9a-f]* \[kernel\]$' &&
	       grep -q ' : ksys_read+0x[0-9a-f]*/0x[0-9a-f]* \[kernel\]$' bt1.out &&
	       grep -q '^callers 0xffffffff[0-9a-f]\{8\} 0xffffffff[0-9a-f]\{8\}$' bt1.out &&
	       grep -q '^caller ksys_read 0xffffffff[0-9a-f]\{8\}$' bt1.out"
marktap -c 'kreader nap 0' -e 'probe kernel.trace("sched_process_exec") { if (pid() == target()) { print_backtrace(); exit() } }' >bt2.out 2>&1
show bt2 8
check "print_backtrace at a tracepoint: its caller chain (do_execveat_common), no frame of marktap.ko" \
	sh -c "grep -q ' : do_execveat_common[.a-z0-9]*+0x[0-9a-f]*/0x[0-9a-f]* \[kernel\]$' bt2.out && ! grep -q '\[marktap\]' bt2.out"
marktap -c 'kreader nap 0' -e 'probe kernel.mark("kernel_arch_syscall_entry") { if (pid() == target()) { printf("%s\n", sprint_backtrace()); exit() } }' >bt3.out 2>&1
show bt3 8
check "sprint_backtrace at a catalogue marker: the system call path, no frame of marktap.ko" \
	sh -c "grep -q ' : [a-z_0-9]*+0x[0-9a-f]*/0x[0-9a-f]* \[kernel\]$' bt3.out && ! grep -q 'marktap\]\|ERROR' bt3.out"
# pretty printing, as stap's $x$ / $$parms$: a struct through its
# pointer, {.member=value...}, strings quoted, nested structs {...} or,
# with $$, expanded; NULL as 0x0
marktap -DMAXSTRINGLEN=4096 -c "$DD" -e 'probe kernel.function("vfs_read") { if (execname() == "dd") {
  println($file->f_path->dentry->d_name$); println($file->f_path$); println($$parms$); exit() } }' >pp1.out 2>&1
show pp1 6
check "\$p->m\$: {.hash=N, .len=7, .hash_len=N, .name=\"kf-data\"} (an anonymous union's members, a string quoted)" \
	grep -q '^{.hash=[0-9]*, .len=7, .hash_len=[0-9]*, .name="kf-data"}$' pp1.out
check "\$file->f_path\$: {.mnt=0x..., .dentry=0x...}" grep -q '^{.mnt=0xffff[0-9a-f]*, .dentry=0xffff[0-9a-f]*}$' pp1.out
check "\$\$parms\$: file={...struct...} buf=0x... count=4096 pos=0x..." \
	grep -q '^file={.*, .f_flags=[0-9]*, .f_mode=[0-9]*, .*} buf=0x[0-9a-f]* count=4096 pos=0x[0-9a-f]*$' pp1.out
marktap -DMAXSTRINGLEN=4096 -c 'sh -c "sleep 0.1; sleep 0.1; sleep 0.1"' -e 'probe kernel.trace("sched_switch") { if ($next->pid == target()) { println($next$); println($next$$); exit() } }' >pp2.out 2>&1
show pp2 4
check "\$next\$ of sched_switch: nested structs {...}; \$next\$\$ expands them; the first 48 values, then ..." \
	sh -c "grep -q '^{.thread_info={...}, .__state=[0-9]*, .*, \.\.\.}$' pp2.out && grep -q '^{.thread_info={.flags=[0-9]*, .*, \.\.\.}$' pp2.out"

# stap's autocast: locals that hold typed pointers read through them
marktap -c "$DD" -e 'probe kernel.function("vfs_read") { if (execname() == "dd") { f = $file; p = &f->f_path
  printf("%d %s\n", f->f_flags == $file->f_flags, kernel_string(p->dentry->d_name->name)); exit() } }' >ac1.out 2>&1
show ac1 4
check "autocast: f = \$file; f->f_flags is \$file->f_flags; p = &f->f_path; p->dentry->d_name->name is the file" \
	grep -q '^1 kf-data$' ac1.out

# addr_to_node: a kernel address of the direct map (a struct file), a
# user page present (dd's buffer, at its 5th read), and where no page is
marktap -c "$DD" -e 'global n
probe kernel.function("vfs_read") { if (execname() == "dd" && ++n == 5) {
  printf("file %d buf %d\n", addr_to_node($file), addr_to_node($buf))
  try { println(addr_to_node(16)) } catch (e) { println(e) } } }' >an1.out 2>&1
show an1 4
check "addr_to_node: node 0 for a slab object and a present user page; no page at 0x10 is an error" \
	sh -c "grep -q '^file 0 buf 0$' an1.out && grep -q '^addr_to_node: no page at 0x10 ' an1.out"

# FUNCTION@FILE through a map of the kernel's sources (marktap-ksrc's
# format, written here: the fixture names read_write.c's functions and a
# decoy of another file)
printf '%s\n' '# marktap-ksrc map' 'ksys_read fs/read_write.c 613' 'vfs_read fs/read_write.c 450' \
	'vfs_readv fs/other.c 1' 'vfs_write fs/read_write.c 570' >/tmp/ksrc.map
MARKTAP_KERNEL_SOURCES=/tmp/ksrc.map marktap -c "$DD" -e 'global c
probe kernel.function("*@fs/read_write.c") { if (execname() == "dd") c[ppfunc()]++ }
probe end { foreach (f+ in c) printf("%s %d\n", f, c[f]) }' >ks1.out 2>&1
show ks1 6
check "kernel.function(\"*@fs/read_write.c\"): the map's functions of that file hit, dd's 10 reads each, no decoy" \
	sh -c "grep -q '^ksys_read 1[01]$' ks1.out && grep -q '^vfs_read 1[01]$' ks1.out && ! grep -q 'vfs_readv\|ERROR' ks1.out"
# a file of 400 functions: call and return probes, 800 kprobes, in one
# script; ended without one grace period each
marktap -l 'kernel.function("*proc*")' | sed -n 's/^kernel.function("\(.*\)")$/\1 fs\/many.c 1/p' | head -400 |
	sort >/tmp/many.map
start=$(date +%s)
MARKTAP_KERNEL_SOURCES=/tmp/many.map marktap -c 'cat /proc/self/status' -e 'global c, r
probe kernel.function("*@fs/many.c").call { c++ }
probe kernel.function("*@fs/many.c").return { r++ }
probe end { printf("calls %d returns %d\n", c, r) }' >ks2.out 2>&1
rc=$?
echo "# ks2: $(wc -l </tmp/many.map) functions' call and return probes: $(($(date +%s) - start)) s from start to exit"
show ks2 4
check "800 probes (*@FILE over 400 functions, .call and .return) run and end (exit $rc)" \
	sh -c "[ $rc = 0 ] && [ \$(wc -l </tmp/many.map) = 400 ] && grep -q '^calls [1-9][0-9]* returns [1-9]' ks2.out"

chgrp 4242 /dev/marktap
kreader as 1000 4242 marktap -e 'probe kernel.mark("kernel_arch_syscall_entry") { print_backtrace(); exit() }' >bt4.out 2>&1
show bt4 4
check "a member of the device's group gets no kernel addresses: backtrace needs CAP_SYS_ADMIN" \
	grep -q 'backtrace: kernel addresses need CAP_SYS_ADMIN' bt4.out
kreader as 1000 4242 marktap -e 'probe kernel.mark("kernel_arch_syscall_entry") { println(addr_to_node(16)); exit() }' >an2.out 2>&1
show an2 4
check "... nor addr_to_node, which tells which pages are present: it needs CAP_SYS_ADMIN" \
	grep -q 'addr_to_node: it needs CAP_SYS_ADMIN' an2.out
kreader as 1000 4242 marktap -g -c "$DD" -e 'probe syscall.read { if (execname() == "dd") $count = 1 }' >ss2.out 2>&1
show ss2 4
check "... nor writes a system call's argument with -g: it needs CAP_SYS_ADMIN, no read of dd's is cut" \
	sh -c "grep -q 'syscall_store: writing registers needs CAP_SYS_ADMIN' ss2.out && ! grep -q '^0+' ss2.out"

check_clean_unload
