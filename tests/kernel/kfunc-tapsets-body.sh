# The guest's part of kfunc-tapsets.t (run by /init; TAP-like lines on the
# console): the tapset aliases over kernel functions, resolved by marktap
# from the guest kernel's BTF and run by marktap.ko, against actions whose
# values are known.
show() { sed "s/^/# $1: /" "/tmp/$1.out" | head -${2:-8}; }

insmod /marktap.ko || say "not ok" "insmod marktap.ko"
for t in stat losetup nc touch rm; do busybox ln -sf busybox /bin/$t; done
export MARKTAP_DATADIR=/share/marktap
cd /tmp
dd if=/dev/zero of=/tmp/vt-data bs=4096 count=10 2>/dev/null
ino=$(stat -c %i /tmp/vt-data)
udev=$(stat -c %d /tmp/vt-data)
DD='dd if=/tmp/vt-data of=/dev/null bs=4096 count=10'

# vfs.read: dd's ten reads of its block size, of the file's inode and device
marktap -c "$DD" -e "global n, good
probe vfs.read { if (execname() == \"dd\" && ino == $ino) { n++
  if (bytes_to_read == 4096 && dev == usrdev2kerndev($udev) && devname == \"N/A\" && file != 0 && buf != 0) good++ } }
probe end { printf(\"n=%d good=%d\\n\", n, good) }" >v1.out 2>&1
show v1 6
check "vfs.read: dd's 10 reads, bytes_to_read = bs 4096, ino and dev of the file (stat's), devname N/A on tmpfs" \
	grep -q '^n=10 good=10$' v1.out

# vfs.read.return: what each read returned
marktap -c "$DD" -e "global r
probe vfs.read.return { if (execname() == \"dd\" && ino == $ino) r[bytes_read, ret, error, bytes_to_read]++ }
probe end { foreach ([b, t, e, c] in r) printf(\"%d %d %d %d x%d\\n\", b, t, e, c, r[b, t, e, c]) }" >v2.out 2>&1
show v2 6
check "vfs.read.return: bytes_read = ret = 4096, error 0, bytes_to_read the call's, 10 times" \
	grep -q '^4096 4096 0 4096 x10$' v2.out

# vfs.write and its return: dd writes three blocks of 1000 bytes to a new file
rm -f /tmp/vt-out
marktap -c 'dd if=/dev/zero of=/tmp/vt-out bs=1000 count=3' -e 'global w, d, wino
probe vfs.write { if (execname() == "dd") { w[bytes_to_write]++; if (bytes_to_write == 1000) wino = ino } }
probe vfs.write.return { if (execname() == "dd") d[bytes_written, error_str]++ }
probe end { foreach (b in w) printf("write %d x%d\n", b, w[b]); foreach ([b, e] in d) printf("written %d [%s] x%d\n", b, e, d[b, e]); printf("ino %d\n", wino) }' >v3.out 2>&1
show v3 6
check "vfs.write: bytes_to_write 1000 three times (and dd's report to stderr)" grep -q '^write 1000 x3$' v3.out
check "vfs.write.return: bytes_written 1000, no error, three times" grep -q '^written 1000 \[\] x3$' v3.out
check "vfs.write: ino is the written file's" grep -q "^ino $(stat -c %i /tmp/vt-out)\$" v3.out

# a failed read: EISDIR from a directory, in error and error_str
marktap -c 'sh -c "cat /tmp 2>/dev/null; true"' -e 'probe vfs.read.return { if (execname() == "cat") printf("%d %d [%s]\n", ret, error, error_str) }' >v4.out 2>&1
show v4 4
check "vfs.read.return of a directory: ret = error = -21, error_str EISDIR" grep -q '^-21 -21 \[EISDIR\]$' v4.out

# vfs.open: cat opens the file; its return 0
marktap -c 'sh -c "cat /tmp/vt-data >/dev/null"' -e 'global o, r probe vfs.open { if (execname() == "cat" && path != 0 && cred != 0) o++ }
probe vfs.open.return { if (execname() == "cat" && ret == 0) r++ } probe end { printf("open=%d ret0=%d\n", o, r) }' >v5.out 2>&1
show v5 4
check "vfs.open and .return fire for cat's opens, path and cred set, ret 0" grep -q '^open=[1-9][0-9]* ret0=[1-9][0-9]*$' v5.out

# pathname: the full path, walked over the dentries and across mounts
# (/proc is a mount of its own); dentry.stp's functions on the same file
# (dd: busybox cat copies with sendfile, not read)
marktap -c 'sh -c "dd if=/tmp/vt-data of=/dev/null bs=4096 count=1; dd if=/proc/version of=/dev/null" 2>/dev/null' -e 'global p, q
probe vfs.read { if (execname() == "dd") p[pathname]++ }
probe vfs.open.return { if (execname() == "dd" && ret == 0) q[pathname]++ }
probe kernel.function("vfs_read") { if (execname() == "dd" && d_name($file->f_path->dentry) == "vt-data")
  printf("name=%s rev=%s ipath=%s iname=%s mnt=%d\n", d_name($file->f_path->dentry),
    reverse_path_walk($file->f_path->dentry), inode_path($file->f_inode), inode_name($file->f_inode),
    real_mount($file->f_path->mnt) + &@cast(0, "mount")->mnt == $file->f_path->mnt) }
probe end { foreach (n in p) printf("read %s\n", n); foreach (n in q) printf("open %s\n", n) }' >v6.out 2>&1
show v6 12
check "vfs.read pathname: /tmp/vt-data" grep -q '^read /tmp/vt-data$' v6.out
check "vfs.read pathname across the /proc mount: /proc/version" grep -q '^read /proc/version$' v6.out
check "vfs.open.return pathname (struct path): /proc/version" grep -q '^open /proc/version$' v6.out
check "d_name, reverse_path_walk, inode_path, inode_name, real_mount of the file" \
	grep -q '^name=vt-data rev=vt-data ipath=/tmp/vt-data iname=vt-data mnt=1$' v6.out

# signal.* over kernel functions: sh sends SIGUSR1 to a sleep it started
# (the permission check, prepare_signal's ignore check; the wake-up is
# inlined into the signal's delivery there, so signal.wakeup need not
# fire), and a shell that traps SIGUSR2 sets its action and runs its
# handler.  The USR1 waits until the child is sleep: busybox runs it
# through an exec of itself, named "exe" until then.
cat >/tmp/sig.sh <<'SIGEOF'
sleep 5 & p=$!
n=0
until [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] || [ $n -ge 100 ]; do n=$((n + 1)); sleep 0.05; done
kill -USR1 $p
trap "echo trapped" USR2
kill -USR2 $$
true
SIGEOF
marktap -c 'sh /tmp/sig.sh' -e 'global c, w, i, ir, a, h
probe signal.checkperm { if (sig == 10) c[sig_name, pid_name] <<< 1 }
probe signal.wakeup { if (pid_name == "sleep") w++ }
probe signal.check_ignored { if (sig == 10 && pid_name == "sleep") i++ }
probe signal.check_ignored.return { if (execname() == "sh") ir[retstr]++ }
probe signal.do_action { if (sig == 12 && sa_handler > 1) a[sig_name]++ }
probe signal.handle { if (sig == 12) h[sig_name, sig_code]++ }
probe end { foreach ([n, p] in c) printf("checkperm %s %s\n", n, p)
  printf("wakeup %d ignored %d\n", w > 0, i > 0); foreach (r in ir) printf("ignored.return %s\n", r)
  foreach (n in a) printf("do_action %s\n", n); foreach ([n, k] in h) printf("handle %s %d\n", n, k) }' >sg.out 2>&1
show sg 12
check "signal.checkperm: sh's SIGUSR1 to sleep, its name" grep -q '^checkperm SIGUSR1 sleep$' sg.out
check "signal.check_ignored fires for the sleep" grep -q '^wakeup [01] ignored 1$' sg.out
check "signal.check_ignored.return: SIGUSR1 to sleep is not ignored (0)" grep -q '^ignored.return 0$' sg.out
check "signal.do_action: the trap sets SIGUSR2's handler" grep -q '^do_action SIGUSR2$' sg.out
check "signal.handle: sh's SIGUSR2 handler runs, si_code SI_USER (0)" grep -q '^handle SIGUSR2 0$' sg.out

# inodewatch.stp (Debian's example): the writes to one inode, by device numbers
if [ -f /bin/inodewatch.stp ]; then
	touch /tmp/vt-watch
	wdev=$(stat -c %d /tmp/vt-watch) wino=$(stat -c %i /tmp/vt-watch)
	marktap -c 'sh -c "echo hello >>/tmp/vt-watch"' /bin/inodewatch.stp $((wdev >> 8 & 0xfff)) $((wdev & 0xff | (wdev >> 12 & 0xfff00))) $wino >v7.out 2>&1
	show v7 4
	check "inodewatch.stp: sh's write to the watched inode, with its device and inode" grep -q "^sh([0-9]*) vfs_write 0x[0-9a-f]*/$wino\$" v7.out
else
	say ok "# SKIP inodewatch.stp absent on the host (systemtap-doc)"
fi

# iotop.stp (Debian's example) runs; dd's 40 KB read shows under its name
if [ -f /bin/iotop.stp ]; then
	# (the session ends with the command: after iotop's 5 s timer)
	marktap -c 'sh -c "dd if=/tmp/vt-data of=/dev/null bs=4096; dd if=/tmp/vt-data of=/dev/null bs=4096; sleep 6"' /bin/iotop.stp >v8.out 2>&1
	show v8 6
	check "iotop.stp: dd's reads, 80 KB, in its table" grep -q '^ *dd[[:space:]]*80[[:space:]]' v8.out
else
	say ok "# SKIP iotop.stp absent on the host (systemtap-doc)"
fi

# ioblock.request/.end and ioblock_trace.request on a loop device
if insmod /bin/loop.ko 2>/dev/null || [ -e /dev/loop0 ]; then
	dd if=/dev/zero of=/tmp/vt-img bs=1M count=4 2>/dev/null
	losetup /dev/loop0 /tmp/vt-img
	marktap -c 'sh -c "dd if=/dev/loop0 of=/dev/null bs=4096 count=1 iflag=direct; dd if=/dev/zero of=/dev/loop0 bs=4096 seek=8 count=1 oflag=direct"' -e 'global reqs, e, t
probe ioblock.request { if (devname == "loop0") reqs[bio_rw_str(rw), sector, size, bdev == bdev_contains, p_start_sect, ino]++ }
probe ioblock.end { if (devname == "loop0") e[bio_rw_str(rw), error]++ }
probe ioblock_trace.request { if (devname == "loop0" && q != 0) t[bio_rw_str(rw), sector, bytes_done]++ }
probe end { foreach ([r, s, z, w, p, i] in reqs) printf("req %s %d %d %d %d %d\n", r, s, z, w, p, i)
  foreach ([r, x] in e) printf("end %s %d x%d\n", r, x, e[r, x]); foreach ([r, s, z] in t) printf("trace %s %d %d\n", r, s, z) }' >b1.out 2>&1
	show b1 10
	check "ioblock.request: loop0's direct read at sector 0, 4096 bytes, the whole disk (bdev = bdev_contains), ino -1" \
		grep -q '^req R 0 4096 1 0 -1$' b1.out
	check "ioblock.request: the write at sector 64 (block 8), rw W" grep -q '^req W 64 4096 1 0 -1$' b1.out
	check "ioblock.end: both complete with error 0" sh -c "grep -q '^end R 0 x1\$' b1.out && grep -q '^end W 0 x1\$' b1.out"
	check "ioblock_trace.request: the same bios, bytes_done their size, q set" \
		sh -c "grep -q '^trace R 0 4096\$' b1.out && grep -q '^trace W 64 4096\$' b1.out"
	losetup -d /dev/loop0
else
	say "not ok" "loop.ko loads (ioblock checks)"
fi

# tcp.*: a loopback transfer of 1000 bytes to nc listening on port 5555
dd if=/dev/zero of=/tmp/vt-1000 bs=1000 count=1 2>/dev/null
cat >/tmp/vt-tcp.sh <<'TCP'
nc -l -p 5555 >/tmp/vt-rcv & server=$!
wait_for 10 sh -c "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q ':15B3 [0-9A-F:]* 0A '"
nc 127.0.0.1 5555 </tmp/vt-1000 & client=$!
wait_for 10 sh -c "[ \$(wc -c </tmp/vt-rcv) -ge 1000 ]"
kill $server $client 2>/dev/null
wait
TCP
marktap -c 'sh /tmp/vt-tcp.sh' -e 'global snd, sr, r, rr, rx
probe tcp.sendmsg { if (execname() == "nc" && family == 2) snd[size]++ }
probe tcp.sendmsg.return { if (execname() == "nc") sr[size]++ }
probe tcp.recvmsg { if (execname() == "nc" && sport == 5555) r[saddr, daddr, family]++ }
probe tcp.recvmsg.return { if (execname() == "nc" && size > 0) rr[size, sport, saddr]++ }
probe tcp.receive { if (dport == 5555 && syn && !ack) rx[saddr, daddr, protocol]++ }
probe end { foreach (z in snd) printf("send %d\n", z); foreach (z in sr) printf("sent %d\n", z)
  foreach ([a, b, f] in r) printf("recv %s %s %d\n", a, b, f); foreach ([z, p, a] in rr) printf("received %d %d %s\n", z, p, a)
  foreach ([a, b, p] in rx) printf("syn %s %s %d\n", a, b, p) }' >t1.out 2>&1
show t1 12
check "the transfer happened (nc received 1000 bytes)" sh -c "[ \$(wc -c </tmp/vt-rcv) = 1000 ]"
check "tcp.sendmsg: nc sends 1000 bytes on an AF_INET socket" grep -q '^send 1000$' t1.out
check "tcp.sendmsg.return: size 1000 sent" grep -q '^sent 1000$' t1.out
# (busybox's nc listens on an IPv6 socket: the IPv4 peer is a mapped address)
check "tcp.recvmsg: the listener's socket (AF_INET6), ::ffff:127.0.0.1 both ends" grep -q '^recv ::ffff:127.0.0.1 ::ffff:127.0.0.1 10$' t1.out
check "tcp.recvmsg.return: 1000 bytes received on local port 5555" grep -q '^received 1000 5555 ::ffff:127.0.0.1$' t1.out
check "tcp.receive: the SYN to port 5555 from 127.0.0.1, protocol 6" grep -q '^syn 127.0.0.1 127.0.0.1 6$' t1.out

# vm.kmem_cache_alloc: allocations with their sizes
marktap -c 'sh -c "ls / >/dev/null"' -e 'global n, bad
probe vm.kmem_cache_alloc { n++; if (bytes_req <= 0 || bytes_alloc < bytes_req) bad++ }
probe end { printf("n=%d bad=%d\n", n, bad) }' >m1.out 2>&1
show m1 4
check "vm.kmem_cache_alloc fires, bytes_alloc >= bytes_req > 0" grep -q '^n=[1-9][0-9]* bad=0$' m1.out

# netdev.register: dummy.ko registers dummy0
if [ -f /bin/dummy.ko ]; then
	marktap -c 'insmod /bin/dummy.ko numdummies=1' -e 'probe netdev.register { println("register ", dev_name) }' >n1.out 2>&1
	show n1 4
	check "netdev.register fires at insmod dummy, dev_name dummy%d or dummy0" grep -q '^register dummy\(%d\|0\)$' n1.out
else
	say "not ok" "dummy.ko is in the guest (netdev.register check)"
fi

# scheduler.cpu_on (a kprobe on finish_task_switch's clone) and cpu_off
grep 'finish_task_switch' /proc/kallsyms | sed 's/^/# kallsyms: /' | head -3
marktap -c 'sh -c "sleep 0.2; sleep 0.2"' -e 'global on, off, idle_on
probe scheduler.cpu_on { if (execname() == "sleep") on++; if (idle) idle_on++ }
probe scheduler.cpu_off { if (execname() == "sleep" && task_prev == tid() && task_next != task_prev) off++ }
probe end { printf("on=%d off=%d idle=%d\n", on > 0, off > 0, idle_on > 0) }' >s1.out 2>&1
show s1 4
check "scheduler.cpu_on in sleep's context, cpu_off with task_prev = tid(), the idle task too" grep -q '^on=1 off=1 idle=1$' s1.out

# kprocess.start (in the new task) and kprocess.exec_complete
marktap -c 'sh -c "/bin/nonexistent-vt 2>/dev/null; /bin/kreader >/dev/null 2>&1; true"' -e 'global st, ok, fail
probe kprocess.start { if (execname() == "sh") st++ }
probe kprocess.exec_complete { if (success && execname() == "kreader") ok++; if (!success && errno == -2) fail++ }
probe end { printf("start=%d ok=%d fail=%d\n", st > 0, ok, fail) }' >p1.out 2>&1
show p1 4
check "kprocess.start in sh's forked children; exec_complete: kreader's success, -ENOENT's failure" grep -q '^start=1 ok=1 fail=1$' p1.out

# module("loop").function: resolved from loop.ko's BTF before the module is
# loaded, registered by marktap.ko when it comes (before its init runs),
# taken back when it goes, registered again at its next load
rmmod loop 2>/dev/null
MARKTAP_MODULE_PATH=/bin marktap -c 'sh -c "insmod /bin/loop.ko max_loop=2; rmmod loop; insmod /bin/loop.ko max_loop=1"' \
	-e 'global n probe module("loop").function("loop_add") { printf("add %d\n", $i); n++ } probe end { printf("n=%d\n", n) }' >mod1.out 2>&1
show mod1 6
check "module(\"loop\").function(\"loop_add\") before loop.ko is loaded: its init's 2 calls, then 1 after a reload" \
	sh -c "grep -q '^n=3$' mod1.out && [ \$(grep -c '^add 0$' mod1.out) = 2 ] && grep -q '^add 1$' mod1.out"
grep -q '^loop ' /proc/modules || insmod /bin/loop.ko

# netdev.transmit's dev_name, length and truesize through the skb (BTF)
marktap -c 'sh /tmp/vt-tcp.sh' -e 'global n, good, big probe netdev.transmit { if (dev_name == "lo") { n++
  if (length >= 54 && length < 65536 && truesize > 0) good++; if (length >= 1000) big++ } }
probe end { printf("n=%d good=%d big=%d\n", n >= 2, n == good, big > 0) }' >nd1.out 2>&1
show nd1 4
check "netdev.transmit: dev_name lo, each packet's length (headers at least) and truesize from the skb, the 1000 bytes' among them" \
	grep -q '^n=1 good=1 big=1$' nd1.out

# @entry in a syscall .return alias: the entry's time and name, this thread's
marktap -c 'dd if=/dev/zero of=/dev/null bs=1 count=3' -e 'global n, bad probe syscall.read.return { if (pid() == target()) { n++
  if (gettimeofday_ns() < @entry(gettimeofday_ns()) || @entry(execname()) != "dd" || @entry(__marktap_syscall_int(2)) != 1) bad++ } }
probe end { printf("n=%d bad=%d\n", n >= 3, bad) }' >ent1.out 2>&1
show ent1 4
check "@entry(expr) in syscall.read.return: the time, execname() and count of each read's entry" grep -q '^n=1 bad=0$' ent1.out

# syscall.NAME's arguments: from the registers saved at the call's entry
# (MAXTRYLOCK at 1 s: the hit waits out a vCPU the loaded host took away
# while it held the shared state, rather than being skipped); cat's output
# away from marktap's (busybox's cat writes with sendfile(), which moves
# the shared offset without write()'s lock: a line could be overwritten)
echo hello >/tmp/vt-name
marktap -DMAXTRYLOCK=100000 -c 'exec cat /tmp/vt-name >/dev/null' -e 'probe syscall.openat { if (pid() == target() && filename_uaddr != 0 && filename == "\"/tmp/vt-name\"")
  printf("open %d %d %s|%s\n", dfd, flags & 3, filename, argstr) }' >a1.out 2>&1
show a1 4
check "syscall.openat: dfd AT_FDCWD, O_RDONLY, filename quoted as stap's, argstr" \
	grep -q '^open -100 0 "/tmp/vt-name"|-100, "/tmp/vt-name", [0-9]*, [0-9]*$' a1.out
marktap -c 'kill -0 1' -e 'probe syscall.kill { if (pid() == target()) printf("kill %d %d %s\n", pid, sig, argstr) }
probe syscall.kill.return { if (pid() == target()) printf("ret %s\n", retstr) }' >a2.out 2>&1
show a2 4
check "syscall.kill: pid 1 and signal 0 as kill -0 1 passed them, and its return" \
	sh -c "grep -q '^kill 1 0 1, 0$' a2.out && grep -q '^ret 0$' a2.out"

# irq_handler.entry/.exit over the irq tracepoints when the handler reads
# the irqaction (the alternative definitions): a line to the console, the
# serial port, brings its interrupt, named as /proc/interrupts names it
irq=$(sed -n 's/^ *\([0-9]*\):.*ttyS0$/\1/p' /proc/interrupts)
marktap -c 'sh -c "echo irq-line >/dev/console; sleep 0.2"' -e "global d, r
probe irq_handler.entry { if (irq == ${irq:-4}) d[dev_name, flags_str != \"\", action != 0, dev_id != 0]++ }
probe irq_handler.exit { if (irq == ${irq:-4}) r[kernel_string(dev_name), ret]++ }
probe end { foreach ([n, f, a, i] in d) printf(\"entry %s %d %d %d\\n\", n, f, a, i); foreach ([n, x] in r) printf(\"exit %s %d\\n\", n, x) }" >i1.out 2>&1
show i1 6
check "irq_handler.entry: the serial port's irq (${irq:-none}): dev_name ttyS0 as /proc/interrupts, flags_str, action, dev_id" \
	grep -q '^entry ttyS0 1 1 1$' i1.out
check "irq_handler.exit: dev_name ttyS0, ret 1 (IRQ_HANDLED)" grep -q '^exit ttyS0 1$' i1.out
if [ -f /bin/interrupts-by-dev.stp ]; then
	marktap -c 'sh -c "echo a >/dev/console; sleep 0.3; echo b >/dev/console; sleep 0.3"' /bin/interrupts-by-dev.stp >i2.out 2>&1
	show i2 6
	check "interrupts-by-dev.stp: ttyS0's interrupts by name, in its timer (kernel_string of the name in marktap)" \
		grep -q '^ *ttyS0 :  *[1-9][0-9]*$' i2.out
else
	say ok "# SKIP interrupts-by-dev.stp absent on the host (systemtap-doc)"
fi

# vm.pagefault.return's fault_type (handle_mm_fault's return): dd's 1 MiB
# buffer, 256 pages, each faulted in once as read(2) fills it; every
# fault minor (all in memory)
marktap -c 'dd if=/dev/zero of=/dev/null bs=1M count=1' -e 'global minor, major, other, s
probe vm.pagefault.return { if (pid() == target()) { s[vm_fault_to_str(fault_type)]++
  if (vm_fault_contains(fault_type, VM_FAULT_MINOR)) minor++ else if (vm_fault_contains(fault_type, VM_FAULT_MAJOR)) major++ else other++ } }
probe end { printf("minor>=256 %d major %d other %d\n", minor >= 256, major, other); foreach (k in s) printf("# %s %d\n", k, s[k]) }' >pf1.out 2>&1
show pf1 6
check "vm.pagefault.return: dd's 1 MiB buffer, at least 256 minor faults, none major" grep -q '^minor>=256 1 major 0 other 0$' pf1.out
if [ -f /bin/pfaults.stp ]; then
	marktap -c 'dd if=/dev/zero of=/dev/null bs=64k count=1' /bin/pfaults.stp >pf2.out 2>&1
	show pf2 4
	# (its "%id" prints the address, then a d, as stap does)
	check "pfaults.stp: minor faults with their address and access, vm.pagefault (marker) beside .return (function)" \
		grep -q '^[0-9]*:[0-9]*:[0-9]*d:[rw]:minor:[0-9]*$' pf2.out
else
	say ok "# SKIP pfaults.stp absent on the host (systemtap-doc)"
fi

# syscall.connect's sockaddr (user memory, read by marktap.ko) and the
# tcpmib counters of nc's loopback connection to port 5555
marktap -c 'sh /tmp/vt-tcp.sh' -e 'global c, ao, po, ce
probe syscall.connect { if (execname() == "nc") c[uaddr_af, uaddr_ip, uaddr_ip_port, argstr]++ }
probe tcpmib.ActiveOpens { if (tcpmib_remote_port(sk) == 5555) ao += op }
probe tcpmib.PassiveOpens { if (tcpmib_local_port(sk) == 5555) po += op }
probe tcpmib.CurrEstab { if (tcpmib_local_port(sk) == 5555 || tcpmib_remote_port(sk) == 5555) ce[op]++ }
probe end { foreach ([a, i, p, s] in c) printf("connect %s %s %s|%s\n", a, i, p, s); printf("active %d passive %d estab %d\n", ao, po, ce[1]) }' >c1.out 2>&1
show c1 6
check "syscall.connect: nc's sockaddr, uaddr_af AF_INET, uaddr_ip 127.0.0.1, uaddr_ip_port 5555; argstr as stap's" \
	grep -q '^connect AF_INET 127.0.0.1 5555|[0-9]*, {AF_INET, 127.0.0.1, 5555}, 16$' c1.out
check "tcpmib: one active open to 5555, one passive open on it, both ends established once" grep -q '^active 1 passive 1 estab 2$' c1.out
if [ -f /bin/connect_stat.stp ]; then
	marktap -c 'sh /tmp/vt-tcp.sh' /bin/connect_stat.stp 127.0.0.1 >c2.out 2>&1
	show c2 4
	check "connect_stat.stp 127.0.0.1: nc's connect, with its process tree" grep -q '^127.0.0.1: nc ([0-9]*),0,0 -> sh ([0-9]*),0,0 -> ' c2.out
else
	say ok "# SKIP connect_stat.stp absent on the host (systemtap-doc)"
fi

# tcpipstat.stp (Debian's example): its 28 tcpmib/ipmib/linuxmib probes and
# tcp.sendmsg/recvmsg.return, its own filter function over the tapset's;
# nc's connection to 5555 by remote port: one active open, 1000 bytes sent
if [ -f /bin/tcpipstat.stp ]; then
	marktap -c 'sh /tmp/vt-tcp.sh' /bin/tcpipstat.stp index=rport '*.*.*.*:*-127.0.0.1:5555' >ts1.out 2>&1
	show ts1 40
	check "tcpipstat.stp: remote port 5555, ActiveOpens 1, the 1000 bytes sent" \
		sh -c "grep -q '^Remote port: 5555\$' ts1.out && grep -q 'ActiveOpens = 1\$' ts1.out && grep -q 'Bytes Sent = 1000\$' ts1.out"
else
	say ok "# SKIP tcpipstat.stp absent on the host (systemtap-doc)"
fi

# syscall.send and syscall.recv: a 32-bit task's socketcall (ia32-send.c),
# the arguments read from its array in user memory
if [ -x /bin/ia32-send ]; then
	marktap -c /bin/ia32-send -e 'probe syscall.send, syscall.recv { if (pid() == target()) printf("%s %d %d %d %s|%s\n", name, s, len, flags, flags_str, argstr) }
probe syscall.send { if (pid() == target()) printf("buf %s\n", buf) }
probe syscall.send.return, syscall.recv.return { if (pid() == target()) printf("%s ret %s\n", name, retstr) }' >sd1.out 2>&1
	show sd1 8
	check "syscall.send (32-bit socketcall): s, len 5, flags 64 MSG_DONTWAIT; argstr as stap's" \
		grep -q '^send [0-9]* 5 64 MSG_DONTWAIT|[0-9]*, "hello", 5, MSG_DONTWAIT$' sd1.out
	check "syscall.send: buf, the bytes sent, quoted" grep -q '^buf "hello"$' sd1.out
	check "syscall.recv: s, len 16, no flags (0x0)" grep -q '^recv [0-9]* 16 0 0x0|[0-9]*, 0x[0-9a-f]*, 16, 0x0$' sd1.out
	check "syscall.send.return, syscall.recv.return: 5 bytes each" sh -c "grep -q '^send ret 5\$' sd1.out && grep -q '^recv ret 5\$' sd1.out"
else
	say "not ok" "ia32-send is in the guest (gcc -m32 on the host)"
fi

check_clean_unload
