# The guest's part of ksessions.t: kernel sessions side by side, as root
# and as the device's group (uid 1000, group 4242).  A helper, ks-ppid (a
# copy of kreader: a name of its own), waits at a gate until every session
# is armed, then calls getppid() a known number of times; each session
# must count its own helper's calls exactly.
show() { sed "s/^/# $1: /" "/tmp/$1" | head -${2:-4}; }

insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
chgrp 4242 /dev/marktap
export MARKTAP_DATADIR=/share/marktap
cd /tmp
cp /bin/kreader /tmp/ks-ppid
P=/sys/module/marktap/parameters
N=1000
COUNT='global n
probe syscall.getppid { if (pid() == target() && execname() == "ks-ppid") n++ }
probe end { printf("n=%d\n", n) }'

# calls NAME TRACE PID: getppid() entries of PID in the trace
calls() {
	marktrace view "$2" 2>/dev/null | grep -c " ks-ppid\[$3/$3\] kernel_arch_syscall_entry: syscall_id=110 "
}
# ready NAME N: N helpers at NAME's gate (a program: wait_for runs it)
printf '#!/bin/sh\n[ "$(ls /tmp/$1.go.ready.* 2>/dev/null | wc -l)" = "$2" ]\n' >/bin/ready
chmod 755 /bin/ready

# four NAME AS...: three scripts, each counting its own helper, and a
# recording of every system call entry with a helper of its own, at once
four() {
	name=$1; shift
	rm -rf /tmp/$name.go* /tmp/$name.trace
	"$@" marktrace record -q --kernel -e kernel_arch_syscall_entry -o /tmp/$name.trace \
		-- sh -c "echo \$\$ >/tmp/$name.recpid; exec /tmp/ks-ppid gate /tmp/$name.go $N" \
		>$name.rec.out 2>&1 &
	rec=$!
	pids=
	for i in 1 2 3; do
		"$@" marktap -c "/tmp/ks-ppid gate /tmp/$name.go $N" -e "$COUNT" >$name.$i.out 2>&1 &
		pids="$pids $!"
	done
	# a helper is at its gate once its session is armed
	wait_for 300 ready $name 4
	check "$name: four sessions armed at once (a recording, three scripts)" ready $name 4
	touch /tmp/$name.go
	bad=0
	for p in $pids; do wait $p || bad=$((bad + 1)); done
	wait $rec || bad=$((bad + 1))
	for i in 1 2 3; do
		show $name.$i.out 3
		check "$name: script $i counted its helper's $N getppid() exactly" grep -qx "n=$N" $name.$i.out
		check "$name: script $i said no warning or error" sh -c "! grep -q -e WARNING -e ERROR $name.$i.out"
	done
	show $name.rec.out 3
	got=$(calls $name /tmp/$name.trace "$(cat /tmp/$name.recpid)")
	check "$name: the recording has its helper's $N getppid() entries ($got)" [ "$got" = $N ]
	check "$name: every session ended with status 0" [ $bad = 0 ]
}

four root
four group kreader as 1000 4242

# --- the group's limits, and root beside them -----------------------
echo 2 >$P/group_scripts
echo 1 >$P/group_recordings
rm -rf /tmp/lk.go* /tmp/lk.trace /tmp/lk.root
G="kreader as 1000 4242"
$G marktap -c "/tmp/ks-ppid gate /tmp/lk.go 10" -e "$COUNT" >lk.1.out 2>&1 & g1=$!
$G marktap -c "/tmp/ks-ppid gate /tmp/lk.go 10" -e "$COUNT" >lk.2.out 2>&1 & g2=$!
$G marktrace record -q --kernel -e kernel_arch_syscall_entry -o /tmp/lk.trace \
	-- /tmp/ks-ppid gate /tmp/lk.go 10 >lk.rec.out 2>&1 & g3=$!
wait_for 300 ready lk 3
check "the group holds its two scripts and its recording" ready lk 3
# a third script of the group: no script, no recording to fall back on
$G marktap -c true -e "$COUNT" >lk.3.out 2>&1; rc=$?
show lk.3.out 3
check "a third script of the group is refused, naming group_scripts (exit $rc)" \
	sh -c "[ $rc = 1 ] && grep -q 'group_scripts' lk.3.out"
check "and its fallback recording, naming group_recordings" grep -q 'group_recordings' lk.3.out
$G marktrace record -q --kernel -e kernel_arch_syscall_entry -o /tmp/lk.trace2 -- true >lk.4.out 2>&1; rc=$?
show lk.4.out 2
check "a second recording of the group is refused, naming group_recordings (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'group_recordings' lk.4.out"
# root is not counted: a script and a recording of root's run meanwhile
marktap -c "/tmp/ks-ppid spin $N" -e "$COUNT" >lk.root.out 2>&1; rc=$?
show lk.root.out 2
check "root's script runs beside the group's full share (exit $rc)" sh -c "[ $rc = 0 ] && grep -qx n=$N lk.root.out"
marktrace record -q --kernel -e kernel_arch_syscall_entry -o /tmp/lk.root \
	-- sh -c "echo \$\$ >/tmp/lk.rootpid; exec /tmp/ks-ppid spin $N" >lk.rootrec.out 2>&1; rc=$?
got=$(calls lk /tmp/lk.root "$(cat /tmp/lk.rootpid)")
check "root's recording too (exit $rc, $got entries)" sh -c "[ $rc = 0 ] && [ '$got' = $N ]"
touch /tmp/lk.go
bad=0
for p in $g1 $g2 $g3; do wait $p || bad=$((bad + 1)); done
check "the group's sessions went on and ended well" sh -c "[ $bad = 0 ] && grep -qx n=10 lk.1.out && grep -qx n=10 lk.2.out"
echo 8 >$P/group_scripts
echo 4 >$P/group_recordings

# --- arrays larger than the default arena ---------------------------
# 1000 hits of 100 new string keys each; root's largest bound of a run
# and no overload guard: under emulation a table's growth (a rehash of
# 65 536 keys) or the collector's atomic step over the growing tables
# takes one hit far past the default 20 ms (once past 500 ms)
BIG='global a, n
probe syscall.getppid { if (pid() == target() && execname() == "ks-ppid")
  for (i = 0; i < 100; i++) { a[sprintf("key%d", n)] = n; n++ } }
probe end { c = 0; foreach (k in a) c++; printf("keys=%d last=%d\n", c, a["key99999"]) }'
t0=$(cut -d' ' -f1 /proc/uptime)
# (other processes' system calls run the handler too: under emulation
# some wait past MAXTRYLOCK and are skipped; the helper's may not be)
marktap -v -DMAXMAPENTRIES=100000 -DMAXACTION=1000000 -DMAXACTION_US=1000000 -DSTP_NO_OVERLOAD \
	-DMAXTRYLOCK=50000 -DMAXSKIPPED=1000000 -c "/tmp/ks-ppid spin 1000" -e "$BIG" >big.out 2>big.err; rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
show big.out 2; grep -e ERROR -e WARNING -e 'kernel handlers' -e 'globals take' big.err | head -4 | sed 's/^/# big.err: /'
check "100 000 string keys reach the end probe (exit $rc, $t0 .. $t1 s)" grep -qx 'keys=100000 last=99999' big.out
check "with no error" sh -c "! grep -q ERROR big.err"
# 10 000 string and 20 000 integer keys, past the default 4 MiB arena
MID='global a, b, n
probe syscall.getppid { if (pid() == target() && execname() == "ks-ppid")
  for (i = 0; i < 200; i++) { a[sprintf("key%d", n)] = n; b[n] = n; b[n + 10000] = n; n++ } }
probe end { c = 0; foreach (k in a) c++; d = 0; foreach (j in b) d++; printf("keys=%d ints=%d\n", c, d) }'
marktap -DMAXMAPENTRIES=20000 -DMAXACTION=200000 -DMAXACTION_US=500000 -DSTP_NO_OVERLOAD \
	-DMAXTRYLOCK=50000 -DMAXSKIPPED=1000000 -c "/tmp/ks-ppid spin 50" -e "$MID" >mid.out 2>mid.err; rc=$?
show mid.out 2; grep -e ERROR -e WARNING mid.err | head -3 | sed 's/^/# mid.err: /'
check "10 000 string and 20 000 integer keys reach the end probe (exit $rc)" grep -qx 'keys=10000 ints=20000' mid.out
# an arena too small is an error naming the limit, not a silent loss
# (root's bound of a run: near a full arena every allocation collects,
# which under emulation can take a hit past 20 ms first)
marktap -DMAXARENAKB=1024 -DMAXMAPENTRIES=20000 -DMAXACTION=200000 -DMAXACTION_US=1000000 \
	-DSTP_NO_OVERLOAD -c "/tmp/ks-ppid spin 50" -e "$MID" >small.out 2>small.err; rc=$?
show small.err 2
check "a full arena: ERROR naming MAXARENAKB (exit $rc)" sh -c "[ $rc = 1 ] && grep -q '^ERROR: .*not enough memory.*MAXARENAKB' small.err"

# --- releases after the end of a -c command --------------------------
REL='global kids, forks, released
probe kprocess.create { if (pid() == target()) { kids[new_pid] = 1; forks++ } }
probe kprocess.release { if (released_tid in kids) released++ }
probe end { printf("forks=%d released=%d\n", forks, released) }'
FORKS='for i in 1 2 3 4 5 6; do /tmp/ks-ppid nap 0; done'
for who in root group; do
	as=; [ $who = group ] && as=$G
	for r in 1 2 3; do
		$as marktap -c "$FORKS" -e "$REL" >rel.$who.$r.out 2>&1
	done
	show rel.$who.1.out 2
	check "kprocess.release of all 6 children seen at the end of -c, 3 runs as $who" \
		sh -c "grep -qx 'forks=6 released=6' rel.$who.1.out && grep -qx 'forks=6 released=6' rel.$who.2.out && grep -qx 'forks=6 released=6' rel.$who.3.out"
done

# nothing registered is left, and the kernel said nothing
check "no marker armed after the sessions" sh -c "! grep -q '	armed$' /dev/marktap"
dmesg | grep -E 'BUG|WARNING|lockup|stall|Oops' | head -5 | sed 's/^/# dmesg: /'
check "dmesg: no BUG, warning, lockup or stall" sh -c "! dmesg | grep -q -E 'BUG|WARNING|lockup|stall|Oops'"
rmmod marktap
check "the module unloads" sh -c "! grep -q '^marktap ' /proc/modules"
