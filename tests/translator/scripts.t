#!/bin/sh
# Every example of scripts/ translates; those that end by themselves run.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
set -- "$top_srcdir"/scripts/*.stp
plan $(( $# + 8 ))
for f; do "$MT" -p3 "$f" >/dev/null; ok $? "$(basename "$f") translates"; done
is "$("$MT" "$top_srcdir/scripts/hello.stp")" "hello from marktap" "hello.stp"
is "$("$MT" "$top_srcdir/scripts/countdown.stp" 2 | tr '\n' ' ')" "2... 1... liftoff " "countdown.stp 2"
like "$("$MT" "$top_srcdir/scripts/latency-hist.stp" | head -1)" "^n=100 min=0 max=96 avg=46" "latency-hist.stp"
# The kernel examples reach their markers through the subsystem tapsets.
points() { "$MT" -p2 "$top_srcdir/scripts/$1" | sed -n 's|^\(kernel.mark("[a-z0-9_]*")\) /\* <- \(.*\) \*/$|\1 <- \2|p' | sort | tr '\n' ' '; }
is "$(points syscalls-top.stp)" 'kernel.mark("kernel_arch_syscall_entry") <- syscall_any ' "syscalls-top.stp: syscall_any"
is "$(points ctxswitch.stp)" 'kernel.mark("kernel_sched_schedule") <- scheduler.ctxswitch kernel.mark("kernel_sched_try_wakeup") <- scheduler.wakeup ' \
	"ctxswitch.stp: scheduler.ctxswitch and scheduler.wakeup"
is "$(points sigmon.stp)" 'kernel.mark("kernel_send_signal") <- signal.send ' "sigmon.stp: signal.send"
is "$(points pagefaults.stp)" 'kernel.mark("mm_handle_fault_entry") <- vm.pagefault ' "pagefaults.stp: vm.pagefault"
is "$(points nettop.stp)" 'kernel.mark("net_dev_receive") <- netdev.receive kernel.mark("net_dev_xmit") <- netdev.transmit kernel.mark("net_socket_recvmsg") <- socket.recvmsg kernel.mark("net_socket_sendmsg") <- socket.sendmsg ' \
	"nettop.stp: netdev.transmit/receive, socket.sendmsg/recvmsg"
done_testing
