# The guest's part of krelay.t: marktrace record --kernel --relay to an
# lttng-relayd running in the guest (loopback only there).  The relayd's
# output and the -o copies go back to the host, which reads them with
# babeltrace2.
check() { if [ "$1" = 0 ]; then say ok "$2"; else say "not ok" "$2"; fi; }
for t in cat touch date hostname find; do ln -sf busybox /bin/$t; done
hostname mtguest
insmod /marktap.ko || say "not ok" "insmod marktap.ko"
echo "marktap relay file" >/tmp/relay-file.txt
U=net://127.0.0.1:5342:5343
# relayd wants its run directory and the tracing group (it runs without)
mkdir -p /tmp/relay /var/run/lttng /etc /root
echo 'root:x:0:0:root:/root:/bin/sh' >/etc/passwd
echo 'root:x:0:' >/etc/group
export HOME=/root
lttng-relayd -C tcp://127.0.0.1:5342 -D tcp://127.0.0.1:5343 -L tcp://127.0.0.1:5344 \
	-o /tmp/relay >/tmp/relayd.log 2>&1 &
RELAYD=$!
# listening: 127.0.0.1:5342 (0x14DE) in state 0A
wait_for 30 grep -q ':14DE 00000000:0000 0A' /proc/net/tcp
check $? "lttng-relayd runs in the guest and listens on 127.0.0.1:5342"
sed 's/^/# relayd: /' /tmp/relayd.log | head -5
echo "# host name: $(hostname)"

# relayd not there: an error, nothing armed, the command never runs
out=$(marktrace record --kernel --relay net://127.0.0.1:5999 -o /tmp/none -e 'fs_*' \
	-- sh -c 'touch /tmp/ran' 2>&1)
rc=$?
echo "# unreachable: $rc $out"
case "$rc $out" in
"1 "*"cannot connect to relayd at 127.0.0.1 port 5999"*) r=0 ;;
*) r=1 ;;
esac
check $r "--kernel --relay to no relayd: exit 1, the address said"
[ ! -e /tmp/ran ] && [ ! -e /tmp/none ]
check $? "the command never ran, no trace directory"
armed=$(marktrace list --kernel | grep -c '\[armed\]')
[ "$armed" = 0 ]
check $? "no kernel marker armed ($armed)"

# 1. kernel and user markers, to relayd and to -o
marktrace record --kernel --relay $U -o /tmp/kr -e 'kernel_arch_syscall_*' -e 'fs_open' \
	-e 'fs_close' -e 'ev' -- /bin/target count 5 >/tmp/kr.out 2>/tmp/kr.err
rc=$?
sed 's/^/# kr: /' /tmp/kr.err
check $rc "record --kernel --relay -o DIR -- target count 5"
grep -q '^done$' /tmp/kr.out
check $? "the program ran to its end"
grep -q "user events, in /tmp/kr and relayd's $(hostname)/kr-" /tmp/kr.err
check $? "the summary names DIR and relayd's folder"

# 2. the kernel alone, to relayd only, ended by SIGINT
mkdir -p /tmp/cwd && cd /tmp/cwd || exit 1
marktrace record --kernel --relay $U -e 'fs_open' -e 'fs_close' -e 'kernel_process_*' \
	>/tmp/ka.out 2>/tmp/ka.err &
REC=$!
wait_for 30 grep -q armed /tmp/ka.err
# (the opens are in the kernel's rings once cat returns: SIGINT flushes them)
for i in 1 2 3; do cat /tmp/relay-file.txt >/dev/null; done
kill -INT $REC
wait $REC
rc=$?
cd /
sed 's/^/# ka: /' /tmp/ka.err
check $rc "record --kernel --relay without -o, stopped by SIGINT: exit 0"
grep -q "kernel events, in relayd's mtguest/marktap-" /tmp/ka.err
check $? "its summary names relayd's folder"
[ -z "$(ls -A /tmp/cwd)" ]
check $? "no local trace directory"

# 3. a live kernel session, followed by marktap --trace net://... as it is
#    recorded: the same output as the script over the finished -o copy
export MARKTAP_DATADIR=/share/marktap
cat >/tmp/kl.stp <<'STP'
global n
probe kernel.mark("fs_open") { if (isinstr($filename, "relay-file")) { n++; printf("open %s\n", $filename) } }
probe process("/bin/target").mark("ev") { printf("ev %d %s\n", $n, $s) }
probe end { printf("opens %d\n", n) }
STP
marktrace record --kernel --relay $U --live --switch-timer 200 -o /tmp/kl -e fs_open -e ev \
	-- sh -c 'wait_for 30 grep -q ":14E0 [0-9A-F]*:[0-9A-F]* 01 " /proc/net/tcp; for i in 1 2 3; do cat /tmp/relay-file.txt >/dev/null; /bin/target slow 3 100; done' \
	>/tmp/kl.out 2>/tmp/kl.err &
REC=$!
wait_for 30 grep -q armed /tmp/kl.err
# the program starts once marktap is connected to relayd's live port
# (5344, 0x14E0: a connection there in state 01, established)
marktap --trace net://127.0.0.1:5344/host/mtguest/kl /tmp/kl.stp >/tmp/kl.live 2>/tmp/kl.live.err
rc=$?
wait $REC
check $? "record --kernel --relay --live -o DIR"
sed 's/^/# kl: /' /tmp/kl.err /tmp/kl.live.err
sed 's/^/# kl.live: /' /tmp/kl.live | head -14
check $rc "marktap --trace net://.../host/mtguest/kl follows the kernel session to its end"
marktap --trace /tmp/kl /tmp/kl.stp >/tmp/kl.off 2>&1
cmp -s /tmp/kl.live /tmp/kl.off
check $? "its output is the script's over the finished -o copy"
[ "$(grep -c '^ev [0-2] slow$' /tmp/kl.live) $(tail -n 1 /tmp/kl.live)" = "9 opens 3" ]
check $? "every event: the 3 opens of the file (kernel) and the 9 ev hits (user)"

# 4. relayd killed while the kernel is recorded: the program is unharmed,
#    the -o copy whole, the loss said, exit 1
marktrace record --kernel --relay $U -o /tmp/kk --switch-timer 50 -e 'ev' -e 'fs_open' \
	-- /bin/target slow 40 50 >/tmp/kk.out 2>/tmp/kk.err &
REC=$!
# killed once relayd has some of the program's events (a slow guest
# could get nothing there in a fixed time)
wait_for 10 sh -c '[ -n "$(find /tmp/relay -path "*/kk-*/ust/channel0_*" -size +300c 2>/dev/null)" ]'
kill -9 $RELAYD
wait $RELAYD 2>/dev/null
wait $REC
rc=$?
sed 's/^/# kk: /' /tmp/kk.err
[ "$rc" = 1 ]
check $? "relayd killed mid-run: marktrace exits 1 ($rc)"
grep -q '^done$' /tmp/kk.out
check $? "the program's output is unchanged"
grep -q 'relayd lost (.*): [1-9][0-9]* events were not sent to it' /tmp/kk.err
check $? "the loss is reported with its count"
n=$(marktrace view /tmp/kk | grep -c ' ev:')
[ "$n" = 40 ]
check $? "the -o copy has the program's 40 events ($n)"

rmmod marktap
echo RELAY-BEGIN; tar -C /tmp -cf - relay kr kk | gzip | base64; echo RELAY-END
