# The guest's part of kexamples.t (run by /init; TAP-like lines on the
# console): Debian's examples over stap's socket, tcp, rlimit and netdev
# functions, and the functions of pfiles.stp and psig.stp, with actions
# whose values are known.
show() { sed "s/^/# $1: /" "/tmp/$1.out" | head -${2:-8}; }
absent() { say ok "# SKIP $1 absent on the host (systemtap-doc)"; }

insmod /marktap.ko || say "not ok" "insmod marktap.ko"
for t in nc awk ifconfig; do busybox ln -sf busybox /bin/$t; done
export MARKTAP_DATADIR=/share/marktap
cd /tmp
listening() { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q ":$1 [0-9A-F:]* 0A "; }

# tcp_connections.stp: nc accepts a connection on port 5555 (busybox's nc
# listens on IPv6: the peer is IPv4's mapped address)
cat >/tmp/conn.sh <<'SH'
nc -l -p 5555 >/dev/null & server=$!
wait_for 10 sh -c "cat /proc/net/tcp /proc/net/tcp6 | grep -q ':15B3 [0-9A-F:]* 0A '"
echo hi | nc 127.0.0.1 5555
wait $server
SH
if [ -f /bin/tcp_connections.stp ]; then
	marktap -c 'sh /tmp/conn.sh' /bin/tcp_connections.stp >c1.out 2>&1
	show c1 6
	check "tcp_connections.stp: its header, then nc's accept: uid 0, local port 5555, source ::ffff:127.0.0.1" \
		sh -c "grep -q '^ *UID  *CMD  *PID  *PORT  *IP_SOURCE\$' c1.out &&
		       grep -q '^ *0  *nc  *[0-9][0-9]*  *5555 ::ffff:127.0.0.1\$' c1.out"
else
	absent tcp_connections.stp
fi

# tcp_retransmission.stp: a client's message to port 5556 is lost four
# times (dropped at local_in by a netfilter probe added to the example,
# with -g), so that its segment is retransmitted, the RTO doubling each
# time, until it arrives; the connection stays open meanwhile
# (both ncs read fifos held open: nc ends its side at the end of its
# input, and the other nc then leaves)
cat >/tmp/rtx.sh <<'SH'
mkfifo /tmp/rtx-in /tmp/rtx-srv
nc -l -p 5556 </tmp/rtx-srv >/tmp/rtx-rcv & server=$!
exec 4>/tmp/rtx-srv
wait_for 10 sh -c "cat /proc/net/tcp /proc/net/tcp6 | grep -q ':15B4 [0-9A-F:]* 0A '"
nc 127.0.0.1 5556 </tmp/rtx-in & client=$!
exec 3>/tmp/rtx-in
wait_for 10 grep -q ' 0100007F:15B4 01 ' /proc/net/tcp
echo two-two-two-two >&3
wait_for 60 grep -q two-two /tmp/rtx-rcv
exec 3>&- 4>&-
kill $server $client 2>/dev/null
wait
SH
if [ -f /bin/tcp_retransmission.stp ]; then
	busybox ln -sf busybox /bin/mkfifo
	{ cat /bin/tcp_retransmission.stp; cat <<'STP'
global rtx_dropped
probe netfilter.ipv4.local_in {
  if (dport == 5556 && !syn && length > 60 && rtx_dropped < 4) { rtx_dropped++; $verdict = nf_drop } }
STP
	} >/tmp/rtx.stp
	marktap -g -c 'sh /tmp/rtx.sh' /tmp/rtx.stp >r1.out 2>&1
	show r1 8
	check "tcp_retransmission.stp: its first line" grep -q '^Printing tcp retransmission$' r1.out
	check "tcp_retransmission.stp: the client's segment to 127.0.0.1:5556 retransmitted, ESTABLISHED, with its RTO" \
		grep -q '^127\.0\.0\.1:[0-9]* => 127\.0\.0\.1:5556 STATE:TCP_ESTABLISHED RTO:[1-9][0-9]* (ms)$' r1.out
	check "tcp_retransmission.stp: then the RTO doubles (X -> 2X ms) at least twice" sh -c "
		sed -n 's/.*5556 STATE:TCP_ESTABLISHED RTO:\([0-9]*\) -> \([0-9]*\) (ms)\$/\1 \2/p' r1.out |
		awk '\$2 == 2 * \$1 { n++ } END { exit !(n >= 2) }'"
	check "the message arrived in the end" grep -q two-two /tmp/rtx-rcv
else
	absent tcp_retransmission.stp
fi

# rlimit_nofile.stp: a shell with a limit of 4 descriptors and 0-3 open
# fails to open another (EMFILE), then waits for a child: woken, it is
# reported (sh -c: no descriptor of a script file open)
if [ -f /bin/rlimit_nofile.stp ]; then
	marktap -c 'sh -c "echo \$\$ >/tmp/nofile.pid; ulimit -n 4; exec 3</dev/null; echo x 4</dev/null; sleep 0.2; sleep 0.2"' \
		/bin/rlimit_nofile.stp >l1.out 2>&1
	show l1 4
	check "rlimit_nofile.stp: the shell at its limit, by task_pid and task_execname of \$p: 4 open of 4, EMFILE" \
		grep -q " sh($(cat /tmp/nofile.pid)) open: 4 - max: 4 Hit: EMFILE\$" l1.out
else
	absent rlimit_nofile.stp
fi

# netdev.stp: lo's MTU changed by ifconfig's ioctl (SIOCSIFMTU 35106),
# its promiscuity by rtnetlink
cat >/tmp/netdev.sh <<'SH'
ifconfig lo mtu 1500
ifconfig lo mtu 65536
ip link set lo promisc on
ip link set lo promisc off
SH
if [ -f /bin/netdev.stp ]; then
	marktap -c 'sh /tmp/netdev.sh' /bin/netdev.stp >d1.out 2>&1
	show d1 10
	check "netdev.stp: change_mtu of lo, 65536 to 1500 and back" sh -c "
		grep -q '^Changing MTU on device lo from 65536 to 1500\$' d1.out &&
		grep -q '^Changing MTU on device lo from 1500 to 65536\$' d1.out"
	check "netdev.stp: ioctl SIOCSIFMTU (35106) on \"lo\"" \
		grep -q '^Netdev ioctl raised with param: 35106 and arg: "lo"$' d1.out
	check "netdev.stp: set_promiscuity, entering then leaving" sh -c "
		grep -q '^Device lo entering in promiscuous mode\$' d1.out &&
		grep -q '^Device lo leaving promiscuous mode\$' d1.out"
else
	absent netdev.stp
fi

# psig.stp's functions: get_sa_handler, get_sa_flags, get_sigaction_mask
# of the action do_sigaction is given (tapsets-act: SIGUSR1 with
# SA_SIGINFO|SA_RESTART blocking SIGINT and SIGTERM, SIGUSR2 ignored)
rm -f /tmp/facts
marktap -c 'tapsets-act /tmp/facts sigaction' -e 'probe kernel.function("do_sigaction") {
  if (pid() == target() && $act && ($sig == 10 || $sig == 12))
    printf("sig %d %x %s [%s] [%s]\n", $sig, get_sa_handler($act), sa_handler_str(get_sa_handler($act)),
           sa_flags_str(get_sa_flags($act)), sigset_mask_str(get_sigaction_mask($act))) }' >s1.out 2>&1
show s1 4
handler=$(sed -n 's/^sigaction 10 //p' /tmp/facts)
check "get_sa_handler: SIGUSR1's handler is the program's function; flags SIGINFO|RESTART (and libc's RESTORER), mask 2,15" \
	grep -q "^sig 10 $handler 0x0*$handler \[SIGINFO|RESTART|RESTORER\] \[2,15\]\$" s1.out
check "get_sa_handler: SIGUSR2 ignored (1)" grep -q '^sig 12 1 ignored ' s1.out

# pfiles.stp's _sys_open_flag_str of an open file's f_flags: a shell's
# append redirection (the kernel adds O_LARGEFILE, drops O_CREAT)
marktap -c 'sh -c "exec 3>>/tmp/of-x"' -e 'probe kernel.function("fd_install") {
  if (execname() == "sh" && $fd == 3) println(_sys_open_flag_str($file->f_flags)) }' >f1.out 2>&1
show f1 4
check "_sys_open_flag_str: O_WRONLY|O_APPEND|O_LARGEFILE" grep -q '^O_WRONLY|O_APPEND|O_LARGEFILE$' f1.out

# the task functions of the current task in the kernel, by thread id and
# by its task_struct ($prev of sched_switch): rlimits and descriptors of
# the only sleep there is, which has 0-2 and 5 open
marktap -c 'sh -c "ulimit -n 77; ulimit -s 1234; exec 5</dev/null; exec sleep 0.3"' -e 'global seen
probe kernel.trace("sched_switch") { if (!seen && task_execname($prev) == "sleep") { seen = 1
  printf("%d %d %d %d %d %d\n", task_rlimit_nofile(tid()), task_rlimit_nofile($prev), task_max_file_handles($prev),
         task_rlimit($prev, "RLIMIT_STACK"), task_open_file_handles($prev), task_rlimit_cpu($prev)) } }' >k1.out 2>&1
show k1 4
check "task_rlimit_nofile, task_max_file_handles, task_rlimit, task_open_file_handles of a task_struct: 77 descriptors, 1234 KiB of stack, 4 open, no CPU limit" \
	grep -q '^77 77 77 1263616 4 -1$' k1.out

check_clean_unload
