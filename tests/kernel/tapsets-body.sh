# The guest's part of tapsets.t: translated scripts (/bin/*.mtm) run by
# marktap over actions whose events are known.
say() { echo "$1 - $2"; }   # say ok|not ok DESCRIPTION
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
run t_signal 'sh -c "sleep 2 & kill -CONT \$!; wait"'
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
run x_sigmon 'sh -c "sleep 2 & kill -CONT \$!; wait"'
check x_sigmon '^[0-9]+ +sh +[0-9]+ +sleep +SIGCONT$' "scripts/sigmon.stp: sh sends SIGCONT to sleep"
run x_pagefaults 'dd if=/dev/zero of=/dev/null bs=1M count=4'
check x_pagefaults '^dd +[0-9]+ +write +[1-9]' "scripts/pagefaults.stp: dd's write faults"
run x_nettop 'ping -c 2 127.0.0.1'
check x_nettop '^xmit +IPv4 +[1-9]' "scripts/nettop.stp: IPv4 packets transmitted"
check x_nettop '^ping +socket.sendmsg +INET +[1-9]' "scripts/nettop.stp: ping's INET messages"

# every alias of fire.stp fires during one mixed action
cat >/tmp/mixed.sh <<'MIX'
sleep 0.1 & wait
echo data >/tmp/a; cat /tmp/a >/dev/null
dd if=/tmp/a of=/dev/null bs=1 skip=2 2>/dev/null
stty -F /dev/console >/dev/null 2>&1
ping -c 1 127.0.0.1 >/dev/null
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
rmmod marktap
