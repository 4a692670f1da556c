# The guest's part of tapsets.t: translated scripts (/bin/*.mtm) run by
# marktap over actions whose events are known.
check() { # check NAME REGEX DESCRIPTION: NAME's output has a line matching
	sed "s/^/# $1: /" "/tmp/$1.out" | head -30
	if grep -Eq "$2" "/tmp/$1.out"; then say ok "$3"; else say "not ok" "$3"; fi
}
run() { # run NAME CMD: marktap -c CMD /bin/NAME.mtm
	marktap -c "$2" "/bin/$1.mtm" >"/tmp/$1.out" 2>&1 || echo "exit $?" >>"/tmp/$1.out"
}
ln -sf busybox /bin/ping; ln -sf busybox /bin/true
insmod /marktap.ko || say "not ok" "insmod marktap.ko"
export MARKTAP_DATADIR=/share/marktap
echo "tapsets file" >/tmp/file.txt

run t_exec 'sh -c "/bin/true; /bin/true"'
check t_exec '^exec execve /bin/true$' "kprocess.exec: name and the exec'd file name"
check t_exec '^create new_pid==new_tid 1$' "kprocess.create: the new task's pid and tid"
# the signal goes once the child has exec'd sleep: handlers in the kernel
# name the recipient at the hit, handlers on recorded events a moment later
run t_signal 'sh -c "sleep 2 & wait_for 10 grep -q sleep /proc/\$!/comm; kill -CONT \$!; wait"'
check t_signal '^signal 18 SIGCONT from sh to sleep sig_pid>1 1$' "signal.send: sig, sig_name, sender, pid_name, sig_pid"
run t_sched 'ping -c 3 127.0.0.1'
check t_sched '^ctxswitch ping out>0 1 in>0 1 ids 1$' "scheduler.ctxswitch: prev/next task names, pids and tids"
run t_fault 'dd if=/dev/zero of=/dev/null bs=1M count=4'
check t_fault '^pagefault dd n>0 1 user-range 1 writes>0 1$' "vm.pagefault: dd's faults, addresses and write access"
run t_net 'ping -c 2 127.0.0.1'
check t_net '^net xmit-ipv4>0 1 create INET>0 1 sendmsg>0 1$' "netdev.transmit protocol IPv4, socket.create and socket.sendmsg of a loopback ping"
run t_syscall 'dd if=/tmp/file.txt of=/dev/null'
check t_syscall '^syscall openat any>0 1 named==any 1 read>0 1$' "syscall_any and syscall.openat names, syscall.read's fd and count"
run t_sysall 'dd if=/tmp/file.txt of=/dev/null bs=4'
check t_sysall '^sysall read [4-9] openat [1-9][0-9]* close>0 1$' "syscall.* (some 360 aliases): dd's reads counted once each, openat, close"
# its 360 handlers on one marker merge into a binary search over the
# system call number: nested ifs the module's parser must take (its C
# depth is bounded for the kernel stack), else they run on recorded events
. /bin/tapsets.env
marktap -v -c true /bin/t_sysall.mtm >/tmp/t_sysall-v.out 2>&1
grep '^marktap: kernel handlers' /tmp/t_sysall-v.out | sed 's/^/# t_sysall -v: /'
if grep -q 'kernel handlers: [1-9][0-9]* runs in the kernel' /tmp/t_sysall-v.out; then w=kernel; else w=events; fi
[ "$w" = "${TAPSETS_WHERE:-events}" ] && say ok "syscall.*'s handlers ran where expected ($w)" ||
	say "not ok" "syscall.*'s handlers ran where expected (${TAPSETS_WHERE:-events}, not $w)"
cat >/tmp/values.sh <<'VAL'
echo 0123456789 >/tmp/v
dd if=/tmp/v bs=1 skip=3 count=2 </tmp/v 2>/dev/null | cat >/dev/null
dd if=/tmp/v of=/tmp/w bs=4 count=1 2>/dev/null
ping -c 1 127.0.0.1 >/dev/null
ip addr add 10.9.9.9/32 dev lo; ip addr del 10.9.9.9/32 dev lo
insmod /mt_hello.ko; rmmod mt_hello
VAL
run t_values 'sh /tmp/values.sh'
check t_values '^fs.open /tmp/v fd>=0 1$' "fs.open: the opened file's name and fd"
check t_values '^syscall.lseek [0-9]+, 3, SEEK_CUR$' "syscall.lseek: argstr with whence_str (dd skip=3 bs=1)"
check t_values '^syscall.close argstr 0$' "syscall.close: argstr"
check t_values '^syscall.write fd 1 count 4$' "syscall.write: fd and count (dd bs=4 count=1)"
check t_values '^socket.create INET (DGRAM|RAW) ICMP$' "socket.create: ping's family, type and protocol"
check t_values '^process_fork parent_is_sh 1 child>parent 1$' "scheduler.process_fork: parent and child thread groups"
check t_values '^kprocess.release tid>1$' "kprocess.release: released_tid"
check t_values '^kmodule.load mt_hello$' "kmodule.load: the module's name"
check t_values '^kmodule.free mt_hello$' "kmodule.free: the module's name"
check t_values '^ipv4_addr_add lo 10.9.9.9$' "netdev.ipv4_addr_add: label and address"

# the example scripts
run x_syscalls_top 'dd if=/tmp/file.txt of=/dev/null'
check x_syscalls_top '^dd +read +[1-9]' "scripts/syscalls-top.stp counts dd's reads"
# ping lives a second past each switch-in but its last: on recorded events
# its name is read from /proc when the handler runs (sleep had exited)
run x_ctxswitch 'ping -c 3 127.0.0.1'
check x_ctxswitch '^ping +[1-9][0-9]* +[1-9]' "scripts/ctxswitch.stp counts switches into ping"
check x_ctxswitch '^run-queue latency \(us\): [1-9][0-9]* wakeups' "scripts/ctxswitch.stp: run-queue latency of woken tasks"
run x_sigmon 'sh -c "sleep 2 & wait_for 10 grep -q sleep /proc/\$!/comm; kill -CONT \$!; wait"'
check x_sigmon '^[0-9]+ +sh +[0-9]+ +sleep +SIGCONT$' "scripts/sigmon.stp: sh sends SIGCONT to sleep"
run x_pagefaults 'dd if=/dev/zero of=/dev/null bs=1M count=4'
check x_pagefaults '^dd +[0-9]+ +write +[1-9]' "scripts/pagefaults.stp: dd's write faults"
run x_nettop 'ping -c 2 127.0.0.1'
check x_nettop '^xmit +IPv4 +[1-9]' "scripts/nettop.stp: IPv4 packets transmitted"
check x_nettop '^ping +socket.sendmsg +INET +[1-9]' "scripts/nettop.stp: ping's INET messages"

# every alias of fire.stp fires during one mixed action (sh's read -t
# polls: marktap's own polls are the reading of the events, not shown)
cat >/tmp/mixed.sh <<'MIX'
sleep 0.1 & wait
echo data >/tmp/a; cat /tmp/a >/dev/null
dd if=/tmp/a of=/dev/null bs=1 skip=2 2>/dev/null
stty -F /dev/console >/dev/null 2>&1
ping -c 1 127.0.0.1 >/dev/null
echo x | { read -t 1 x; }
ip addr add 10.9.9.9/32 dev lo; ip addr del 10.9.9.9/32 dev lo
insmod /mt_hello.ko; rmmod mt_hello
echo marktap-tapsets >/dev/kmsg
kill -CONT $$
MIX
ln -sf busybox /bin/stty
marktap -c 'sh /tmp/mixed.sh' /bin/t_fire.mtm >/tmp/fire.out 2>&1 || echo "exit $?" >>/tmp/fire.out
for a in $(sed -n 's/^probe \([a-z0-9_.]*\) .*/\1/p' /bin/fire.list); do
	n=$(sed -n "s/^fired $a \([0-9]*\)$/\1/p" /tmp/fire.out)
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then say ok "$a fires ($n)"; else say "not ok" "$a fires"; fi
done
grep -v '^fired ' /tmp/fire.out | sed 's/^/# fire: /' | head -10

# The aliases of acts.stp, over actions that write down what they did
# (tapsets-act FACTS ACTION, mt_acts.ko on the kernel log), with swap on
# zram, two loop devices (FAT mounted dirsync on one), one huge page.  A
# missing piece shows as failed checks.
. /bin/tapsets.env
[ -f /bin/zram.ko ] || echo "# acts: no zram.ko, loop.ko (linux-image not fetched)"
insmod /bin/zsmalloc.ko && insmod /bin/zram.ko num_devices=1 &&
	echo 16M >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null ||
	echo "# acts: no zram swap device"
ln -sf busybox /bin/mkdosfs; ln -sf busybox /bin/losetup; mkdir -p /mnt
insmod /bin/loop.ko && dd if=/dev/zero of=/tmp/loop0.img bs=1M count=4 2>/dev/null &&
	dd if=/dev/zero of=/tmp/loop1.img bs=1M count=4 2>/dev/null &&
	losetup /dev/loop0 /tmp/loop0.img && losetup /dev/loop1 /tmp/loop1.img ||
	echo "# acts: no loop devices"
insmod /bin/fat.ko && insmod /bin/msdos.ko && insmod /bin/nls_cp437.ko &&
	mkdosfs /dev/loop0 >/dev/null && mount -t msdos -o sync,dirsync /dev/loop0 /mnt ||
	echo "# acts: no FAT file system on loop0"
# writes to the loop devices from cgroup "slow" are throttled to 20 a
# second: the buffers fat.ko writes are still locked when it waits for them,
# the pages dd writes still under writeback when its fsync waits (without,
# the loop device may finish first when the other CPU is idle)
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
	echo +io >/sys/fs/cgroup/cgroup.subtree_control && mkdir /sys/fs/cgroup/slow &&
	echo "$(cat /sys/block/loop0/dev) wiops=20" >/sys/fs/cgroup/slow/io.max &&
	echo "$(cat /sys/block/loop1/dev) wiops=20" >/sys/fs/cgroup/slow/io.max ||
	echo "# acts: no io.max throttling on the loop devices"
echo 1 >/proc/sys/vm/nr_hugepages
ln -sf busybox /bin/swapon; ln -sf busybox /bin/swapoff; ln -sf busybox /bin/mkswap
cat >/tmp/acts.sh <<'ACTS'
for a in ipc itimer rw select trap huge; do tapsets-act /tmp/acts.facts $a; done
swapon /dev/zram0 && tapsets-act /tmp/acts.facts swap; swapoff /dev/zram0
for a in migrate ptrace tty; do tapsets-act /tmp/acts.facts $a; done
echo "tapsets: a line for the serial port's interrupt" >/dev/ttyS0
insmod /bin/mt_acts.ko && rmmod mt_acts
# each mkdir writes its new cluster and the directory entry synchronously:
# fat.ko waits on each buffer the loop device has not written back yet
sh -c 'echo $$ >/sys/fs/cgroup/slow/cgroup.procs; exec mkdir /mnt/a1 /mnt/a2'
sh -c 'echo $$ >/sys/fs/cgroup/slow/cgroup.procs
exec dd if=/dev/zero of=/dev/loop1 bs=4k seek=16 count=64 conv=fsync 2>/dev/null'
ACTS
marktap -v -c 'sh /tmp/acts.sh' /bin/t_acts.mtm >/tmp/acts.out 2>&1 || echo "exit $?" >>/tmp/acts.out
sed 's/^/# acts facts: /' /tmp/acts.facts
grep -v '^irq_handler\|^scheduler.migrate\|^kthread.create\|^printk' /tmp/acts.out |
	sed 's/^/# acts: /' | head -80
dmesg | grep 'mt_acts: ' | sed 's/^[^m]*/# dmesg: /'
fact() { sed -n "s/^$1 //p" /tmp/acts.facts | head -1; }     # fact KEY: its values
kfact() { dmesg | sed -n "s/.*mt_acts: $1 //p" | head -1; }  # the module's
has() { grep -Eq "$1" /tmp/acts.out; }
acheck() { # acheck DESCRIPTION REGEX...: acts.out has a line matching each REGEX
	d=$1; shift
	for re in "$@"; do
		has "$re" || { say "not ok" "$d (no line matching $re)"; return; }
	done
	say ok "$d"
}
if grep -q 'kernel handlers: [1-9][0-9]* runs in the kernel' /tmp/acts.out; then where=kernel; else where=events; fi
grep '^marktap: kernel handlers' /tmp/acts.out | sed 's/^/# /'
[ "$where" = "${TAPSETS_WHERE:-events}" ] && say ok "the handlers ran where expected ($where)" ||
	say "not ok" "the handlers ran where expected (${TAPSETS_WHERE:-events}, not $where)"

set -- $(fact msg); acheck "ipc.msg_create: id and flags of msgget" "^ipc.msg_create $1 $2\$"
set -- $(fact sem); acheck "ipc.sem_create: id and flags of semget" "^ipc.sem_create $1 $2\$"
set -- $(fact shm); acheck "ipc.shm_create: id and flags of shmget" "^ipc.shm_create $1 $2\$"
set -- $(fact itimer)
acheck "itimer.set: ITIMER_REAL (0), interval 7.5 s, value 30 ms" "^itimer.set $1 0 $2 $3 $4 $5\$"
acheck "itimer.expired: the process whose ITIMER_REAL expired" "^itimer.expired $1\$"
set -- $(fact rw)
acheck "syscall.pwrite: fd, count and offset" "^syscall.pwrite $1 $3 $4\$"
acheck "syscall.pread: fd, count and offset" "^syscall.pread $1 $6 $7\$"
acheck "syscall.writev: fd and vector length" "^syscall.writev $1 $9\$"
acheck "syscall.readv: fd and vector length" "^syscall.readv $1 ${11}\$"
set -- $(fact select)
jiffies=$((($2 * ${HZ:-250} + 999999) / 1000000))
acheck "fs.select: the ready fd, the time left ($2 us) in jiffies at HZ=$HZ" \
	"^fs.select $1 ($jiffies|$((jiffies - 1)))\$"
set -- $(fact trap)
acheck "trap.entry: the divide error (0) at the idivl, in the child" "^trap.entry $1 $2 $3\$"
acheck "trap.exit: in the child" "^trap.exit $1\$"
set -- $(fact huge)
acheck "vm.hugepage_alloc: the huge page's pfn" "^vm.hugepage_alloc $1\$"
acheck "vm.hugepage_free: the same pfn at munmap" "^vm.hugepage_free $1\$"
filp=$(sed -n 's|^vm.swapfile_open \([0-9a-f]*\) /dev/zram0$|\1|p' /tmp/acts.out | head -1)
acheck "vm.swapfile_open: swapon /dev/zram0 with its file" "^vm.swapfile_open ${filp:-none} /dev/zram0\$"
acheck "vm.swapfile_close: swapoff, the same file" "^vm.swapfile_close ${filp:-none}\$"
set -- $(fact swap)
acheck "vm.swap_out: the page's pfn, the swap file and offset" "^vm.swap_out $1 ${filp:-none} $2\$"
acheck "vm.swap_in: the page read back, the file and offset" "^vm.swap_in $3 ${filp:-none} $2\$"
set -- $(fact migrate)
acheck "scheduler.migrate: the pinned process (pid, tid) to cpu 1 and back to 0" \
	"^scheduler.migrate $1 $1 1 " "^scheduler.migrate $1 $1 0 "
set -- $(fact ptrace)
acheck "scheduler.wait_task: the stopped tracee (pid, tid)" "^scheduler.wait_task $1 $1\$"
set -- $(fact tty)
acheck "ktimer.timeout: the tty reader's timeout" "^ktimer.timeout $1\$"
irq=$(sed -n 's/^ *\([0-9]*\):.*ttyS0$/\1/p' /proc/interrupts)
acheck "irq_handler.entry: the serial port's irq ($irq)" "^irq_handler.entry ${irq:-none} [01] [1-9]"
acheck "irq_handler.exit fires" "^irq_handler.exit [1-9]"
set -- $(kfact tasklets)
acheck "tasklet.entry: TASKLET_SOFTIRQ's func and data, HI_SOFTIRQ's" \
	"^tasklet.entry ${1:-none} ${2:-none} 0 " "^tasklet.entry ${3:-none} ${4:-none} 1 "
acheck "tasklet.exit: both, with func and data" \
	"^tasklet.exit ${1:-none} ${2:-none} 0 " "^tasklet.exit ${3:-none} ${4:-none} 1 "
kt=$(kfact thread)
acheck "kthread.create: the module's thread ($kt), started by kthread()" \
	"^kthread.create ${kt:-none} $(sed -n 's/^0*\([0-9a-f]*\) [Tt] kthread$/\1/p' /proc/kallsyms)\$"
acheck "scheduler.kthread_stop: the module's thread" "^scheduler.kthread_stop ${kt:-none}\$"
acheck "scheduler.kthread_stop.return: its return value ($(kfact stopped))" "^scheduler.kthread_stop.return 42\$"
set -- $(kfact sems)
acheck "semaphore.down, .down.return: insmod sleeps on the module's semaphore" \
	"^semaphore.down ${1:-none} insmod\$" "^semaphore.down.return ${1:-none} insmod\$"
acheck "semaphore.up: the thread wakes insmod, then insmod the thread" \
	"^semaphore.up ${1:-none} mt_acts\$" "^semaphore.up ${2:-none} insmod\$"
acheck "semaphore.down_interruptible, .return: the thread sleeps, gets it" \
	"^semaphore.down_interruptible ${2:-none} mt_acts\$" "^semaphore.down_interruptible.return ${2:-none} mt_acts\$"
acheck "semaphore.down_interruptible.fail: a signal interrupts the thread" \
	"^semaphore.down_interruptible ${3:-none} mt_acts\$" "^semaphore.down_interruptible.fail ${3:-none} mt_acts\$"
say_at=$(kfact say)
ip_in=none   # a printk.call ip less than 256 bytes into say_called()
for ip in $(sed -n 's/^printk.call //p' /tmp/acts.out); do
	[ "${ip%????????}" = "${say_at%????????}" ] &&
		[ $((0x${ip#????????} - 0x${say_at#????????})) -ge 0 ] &&
		[ $((0x${ip#????????} - 0x${say_at#????????})) -lt 256 ] && ip_in=$ip
done
acheck "printk.call: an ip in the module function that called printk ($say_at)" "^printk.call $ip_in\$"
bh=$(sed -n 's/^fs.buffer_wait \([0-9a-f]*\) 0 [0-9]*$/\1/p' /tmp/acts.out | head -1)
acheck "fs.buffer_wait, .return: mkdir on FAT mounted dirsync waits for its buffers" \
	"^fs.buffer_wait ${bh:-none} 0 " "^fs.buffer_wait.return ${bh:-none} 0 "
pfn=$(sed -n 's/^vm.filemap_wait \([0-9a-f]*\) 15 [0-9]*$/\1/p' /tmp/acts.out | head -1)
acheck "vm.filemap_wait, .return: dd's fsync waits for writeback (PG_writeback, 15)" \
	"^vm.filemap_wait ${pfn:-none} 15 " "^vm.filemap_wait.return ${pfn:-none} 15 "
rmmod marktap
