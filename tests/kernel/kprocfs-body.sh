# The guest's part of kprocfs.t: SystemTap's procfs files, served by
# marktap.ko under /proc/systemtap/MODULE and answered by marktap, as
# root and as the device's group (uid 1000, group 4242).
show() { sed "s/^/# $1: /" "/tmp/$1" | head -${2:-4}; }

insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
chgrp 4242 /dev/marktap
export MARKTAP_DATADIR=/share/marktap
cd /tmp
P=/sys/module/marktap/parameters
G="kreader as 1000 4242"
D=/proc/systemtap
check "marktap.ko made $D" test -d $D

# A session with files of every kind: a count its kernel handler keeps,
# a value of 1250 bytes, a file written and read back, one deep with a umask
S1='global n, last, writes, bytes
probe syscall.getppid { n++ }
probe procfs("count").read { $value = sprintf("%d\n", n) }
probe procfs("big").read.maxsize(20000) { for (i = 0; i < 250; i++) $value .= sprintf("%04d|", i) }
probe procfs("cmd").write { last = $value; writes++; bytes += strlen($value) }
probe procfs("cmd").read { $value = last }
probe procfs("stats").read { $value = sprintf("%d %d\n", writes, bytes) }
probe procfs("sub/dir/f").umask(0004).read { $value = "deep\n" }
probe procfs.read { $value = module_name() . "\n" }
probe end { printf("end writes=%d\n", writes) }'
marktap -m s1 -e "$S1" >s1.out 2>&1 &
s1=$!
wait_for 300 test -e $D/s1/command
check "the files are there while the session runs" test -r $D/s1/count -a -r $D/s1/big -a -e $D/s1/sub/dir/f
ls -ln $D/s1 $D/s1/sub/dir | sed 's/^/# ls: /'
mode() { ls -ln "$1" | cut -c1-10; }
check "read only: 0444; read and write: 0666; umask(0004): 0440" \
	sh -c "[ $(mode $D/s1/count) = -r--r--r-- ] && [ $(mode $D/s1/cmd) = -rw-rw-rw- ] && [ $(mode $D/s1/sub/dir/f) = -r--r----- ]"
check "procfs.read is the file \"command\", module_name() the directory's" grep -qx s1 $D/s1/command
check "a file in a subdirectory" grep -qx deep $D/s1/sub/dir/f

# the value: the kernel handlers' count, pulled at the read
c0=$(cat $D/s1/count)
kreader spin 500 >/dev/null
above="[ \$(cat $D/s1/count) -ge $((c0 + 500)) ]"
wait_for 20 sh -c "$above"
check "a read sees the kernel handlers' count ($c0, then $(cat $D/s1/count) after 500 getppid())" sh -c "$above"

# a value larger than one read() call: continued where the last stopped
dd if=$D/s1/big of=/tmp/big bs=100 2>/dev/null
check "1250 bytes read 100 at a time ($(wc -c </tmp/big))" [ "$(wc -c </tmp/big)" = 1250 ]
check "in order, to the last" sh -c "[ \"\$(head -c 10 /tmp/big)\" = '0000|0001|' ] && [ \"\$(tail -c 5 /tmp/big)\" = '0249|' ]"

# writes, as root and as the group; a long write in pieces of MAXSTRINGLEN - 1
echo hello >$D/s1/cmd
check "a write runs the write probe: read back" grep -qx hello $D/s1/cmd
$G sh -c "echo grp >$D/s1/cmd"
check "the group writes" grep -qx grp $D/s1/cmd
check "and reads" sh -c "$G cat $D/s1/cmd | grep -qx grp"
w0=$(cut -d' ' -f1 $D/s1/stats); b0=$(cut -d' ' -f2 $D/s1/stats)
head -c 1200 /dev/zero | tr '\0' x >/tmp/long
cat /tmp/long >$D/s1/cmd
check "a write of 1200 bytes: three runs of the probe, 1200 bytes ($w0 $b0 -> $(cat $D/s1/stats))" \
	sh -c "[ \"\$(cat $D/s1/stats)\" = '$((w0 + 3)) $((b0 + 1200))' ]"
check "writing a read-only file is refused" sh -c "! echo x 2>/dev/null >$D/s1/count"

# a session of the group beside root's: its own directory, its files its own
S2='probe procfs("who").read { $value = "group " . module_name() . "\n" } probe procfs("w").umask(0077).write { if ($value == "q") exit() }'
$G marktap -m g1 -e "$S2" >g1.out 2>&1 &
g1=$!
wait_for 300 test -e $D/g1/who
check "two sessions at once: root's and the group's" sh -c "grep -qx 'group g1' $D/g1/who && grep -qx s1 $D/s1/command"
check "the group's files are the group's user's, its umask applied" \
	sh -c "ls -ln $D/g1/who | grep -q ' 1000 *4242 ' && [ $(mode $D/g1/w) = --w------- ]"
marktap -m g1 -e "$S2" >dup.out 2>&1; rc=$?
show dup.out 2
check "a session of a name in use is refused (exit $rc)" sh -c "[ $rc = 1 ] && grep -q 'is another session' dup.out"
check "and the first one's files still answer" grep -qx 'group g1' $D/g1/who
# the default name: marktap_PID
marktap -e 'probe procfs("p").read { $value = "pid\n" }' >mp.out 2>&1 &
mp=$!
wait_for 300 test -e $D/marktap_$mp/p
check "without -m: /proc/systemtap/marktap_PID" grep -qx pid $D/marktap_$mp/p
kill -INT $mp; wait $mp

# the group makes nothing outside its directory, and a bounded number of entries
$G kreader procfs gx ../x a/../b /abs 'sp ace' 'a//b' ok x/y >gx.out 2>&1
show gx.out 9
check "the group's bad paths: EINVAL each, good ones made" \
	sh -c "[ \"\$(tr '\n' ' ' <gx.out)\" = 'dir ok file EINVAL file EINVAL file EINVAL file EINVAL file EINVAL file 0 file 2 ' ]"
check "nothing of it left" sh -c "! test -e $D/gx && ! test -e /proc/x && ! test -e $D/x"
$G kreader procfs '../gy' >gy.out 2>&1
check "a directory name of other than letters, digits and '_': EINVAL" grep -qx 'dir EINVAL' gy.out
echo 3 >$P/group_procfs_entries
$G kreader procfs gz a b c >gz.out 2>&1
show gz.out 4
check "group_procfs_entries bounds the group (its own session's entries counted: EUSERS)" \
	sh -c "grep -qx 'dir EUSERS' gz.out || grep -qx 'file EUSERS' gz.out"
kreader procfs rz a b c >rz.out 2>&1
check "root is not counted" sh -c "[ \"\$(tr '\n' ' ' <rz.out)\" = 'dir ok file 0 file 1 file 2 ' ]"
echo 256 >$P/group_procfs_entries

# a reader waits for marktap: a stopped marktap times the reader out
echo 1000 >$P/procfs_wait_ms
kill -STOP $s1
cat $D/s1/count >to.out 2>to.err; rc=$?
show to.err 1
check "marktap stopped: the read fails with ETIMEDOUT after procfs_wait_ms (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'timed out' to.err"
kill -CONT $s1
check "marktap again: it answers" grep -q '^[0-9]' $D/s1/count
# killed while a reader waits: the reader gets EIO at once, the files go
echo 30000 >$P/procfs_wait_ms
kill -STOP $s1
t0=$(cut -d. -f1 /proc/uptime)
cat $D/s1/count >kw.out 2>kw.err &
reader=$!
# (asleep with the file open: in its read)
wait_for 20 sh -c "grep -q '^State:.*S' /proc/$reader/status && ls -l /proc/$reader/fd | grep -q s1/count"
kill -KILL $s1
wait $reader; rc=$?
t1=$(cut -d. -f1 /proc/uptime)
wait $s1
show kw.err 1
show s1.out 3
check "marktap killed: the waiting reader fails with EIO (exit $rc, after $((t1 - t0)) s of 30)" \
	sh -c "[ $rc != 0 ] && grep -q -e 'I/O error' -e 'Input/output error' kw.err && [ $((t1 - t0)) -lt 20 ]"
check "the killed session's directory is gone" sh -c "! test -e $D/s1"
echo 5000 >$P/procfs_wait_ms
kill -INT $g1; wait $g1
check "a session that ended: its directory is gone, the others' too" sh -c "! test -e $D/g1 && [ -z \"\$(ls $D)\" ]"

# Debian's systemtap-doc examples with their prometheus probes
# (/proc/systemtap/MODULE/__prometheus, stap's), if they are here
if [ -f /bin/topsys.stp ]; then
	marktap -m topsys /bin/topsys.stp >topsys.out 2>&1 &
	tp=$!
	wait_for 300 test -e $D/topsys/__prometheus
	# (the example empties its counts every 5 s: calls before each look)
	has_getppid="kreader spin 300 >/dev/null; grep -q '^top_syscall_count{name=\"getppid\"} [0-9]' $D/topsys/__prometheus"
	wait_for 30 sh -c "$has_getppid"
	head -3 $D/topsys/__prometheus | sed 's/^/# topsys: /'
	check "topsys.stp: its prometheus file counts getppid" sh -c "$has_getppid"
	kill -INT $tp; wait $tp; rc=$?
	show topsys.out 2
	check "topsys.stp ends well (exit $rc)" [ $rc = 0 ]
else
	say ok "# SKIP no topsys.stp (systemtap-doc)"
	say ok "# SKIP no topsys.stp (systemtap-doc)"
fi
if [ -f /bin/errno.stp ]; then
	$G marktap -m errno /bin/errno.stp >errno.out 2>&1 &
	ep=$!
	wait_for 300 test -e $D/errno/__prometheus
	enoent="cat /nonexistent/x 2>/dev/null; grep -q '^syscall_error_count{pid=\"[0-9]*\",errno=\"-2\",name=\"open' $D/errno/__prometheus"
	wait_for 30 sh -c "$enoent"
	head -3 $D/errno/__prometheus | sed 's/^/# errno: /'
	check "errno.stp, run by the group: its prometheus file has ENOENT of open" sh -c "$enoent"
	kill -INT $ep; wait $ep; rc=$?
	show errno.out 2
	check "errno.stp ends well (exit $rc)" [ $rc = 0 ]
else
	say ok "# SKIP no errno.stp (systemtap-doc)"
	say ok "# SKIP no errno.stp (systemtap-doc)"
fi

dmesg | grep -E 'BUG|WARNING|lockup|stall|Oops' | head -5 | sed 's/^/# dmesg: /'
check "dmesg: no BUG, warning, lockup or stall" sh -c "! dmesg | grep -q -E 'BUG|WARNING|lockup|stall|Oops'"
rmmod marktap
check "the module unloads, and $D with it" sh -c "! grep -q '^marktap ' /proc/modules && ! test -e $D"
