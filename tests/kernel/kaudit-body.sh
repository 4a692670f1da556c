# The guest's part of kaudit.t (the device and the kernel recorder); TAP-like
# lines "ok - ..." / "not ok - ..." on the console, renumbered by kaudit.t.
echo "marktap probe file" >/tmp/probe-file.txt
export MARKTAP_DATADIR=/share/marktap
insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
chgrp 4242 /dev/marktap

# --- who may open /dev/marktap -----------------------------------
out=$(kreader access 0 0); check "root opens /dev/marktap ($out)" [ "$out" = "open: ok" ]
out=$(kreader access 65534 65534 4242)
check "a member of the configured group (4242) opens it ($out)" [ "$out" = "open: ok" ]
out=$(kreader access 65534 65534)
check "another user does not ($out)" [ "$out" != "open: ok" ]
# The module's own check, behind a node as open as a careless udev rule
# would leave it: the mode lets everyone past the file permissions.
chmod 0666 /dev/marktap
out=$(kreader access 65534 65534)
check "mode 0666: another user is refused by the module ($out)" [ "$out" = "open: Operation not permitted" ]
out=$(kreader userns 65534 65534 0 0)
check "root of a user namespace (unshare -r as nobody) is refused ($out)" \
	[ "$out" = "open: Operation not permitted" ]
out=$(kreader userns 65534 65534 0 4242)
check "nobody mapping gid 4242 onto its own group in a user namespace is refused ($out)" \
	[ "$out" = "open: Operation not permitted" ]
out=$(kreader userns 65534 4242 0 4242)
check "a user whose own group is 4242 opens it, in a user namespace too ($out)" \
	[ "$out" = "open: ok, configure: ok" ]
chmod 0660 /dev/marktap

# --- marktap -L against the device --------------------------------
cat /dev/marktap >/tmp/dev.txt
nun=$(grep -c "	unavailable: ." /tmp/dev.txt)
marktap -L 'kernel.mark("*")' >/tmp/L.txt 2>&1
nL=$(grep -c '# unavailable: .' /tmp/L.txt)
check "marktap -L 'kernel.mark(\"*\")' flags the device's $nun unavailable markers ($nL)" \
	[ "$nun" -gt 0 -a "$nL" = "$nun" ]
check "with the device's reason, once ('unavailable: ' not doubled)" \
	[ "$(grep -c 'unavailable: unavailable' /tmp/L.txt)" = 0 ]
U=$(awk -F '\t' '$3 ~ /^unavailable: / { print $1; exit }' /tmp/dev.txt)
why=$(awk -F '\t' -v u="$U" '$1 == u { sub(/^unavailable: /, "", $3); print $3 }' /tmp/dev.txt)
echo "# unavailable marker used below: $U ($why)"
check "marktap -L of that one marker says why" grep -qF "kernel.mark(\"$U\")" /tmp/L.txt
grep -F "kernel.mark(\"$U\")" /tmp/L.txt | grep -qF "# unavailable: $why" ||
	say "not ok" "the -L line of $U carries the device's reason"

# --- marktrace list --kernel, kernel_vprintk's loglevel -----------
marktrace list --kernel >/tmp/list.txt 2>&1
check "marktrace list --kernel: no 'unavailable: unavailable:'" \
	[ "$(grep -c 'unavailable: unavailable' /tmp/list.txt)" = 0 ]
check "and every unavailable marker listed once with its reason ($nun)" \
	[ "$(grep -c "\" unavailable: ." /tmp/list.txt)" = "$nun" ]
marktrace record --kernel -q -o /tmp/kp -e kernel_vprintk \
	-- sh -c 'echo "<6>marktap-vprintk-test" >/dev/kmsg' >/tmp/kp.out 2>&1
marktrace view /tmp/kp >/tmp/kp.txt 2>&1
line=$(grep 'marktap-vprintk-test' /tmp/kp.txt | head -1)
echo "# $line"
check "kernel_vprintk's loglevel is the number 6" eval 'echo "$line" | grep -q "loglevel=6 "'

# --- unknown and unavailable markers ------------------------------
marktrace record --kernel -o /tmp/r1 -e no_such_marker >/tmp/r1.out 2>&1; rc=$?
sed 's/^/# r1: /' /tmp/r1.out
check "record --kernel -e no_such_marker: an error naming it (exit $rc)" \
	eval '[ $rc != 0 ] && grep -q "no kernel marker matches .no_such_marker" /tmp/r1.out && [ ! -e /tmp/r1 ]'
marktrace record --kernel -o /tmp/r2 -e "$U" -e fs_open -- true >/tmp/r2.out 2>&1; rc=$?
sed 's/^/# r2: /' /tmp/r2.out
check "record --kernel -e UNAVAILABLE -e fs_open: a warning with the reason, recorded (exit $rc)" \
	eval '[ $rc = 0 ] && grep -qF "warning: kernel marker $U is unavailable on this kernel: $why" /tmp/r2.out'
marktrace record --kernel -o /tmp/r3 -e "$U" -- true >/tmp/r3.out 2>&1; rc=$?
sed 's/^/# r3: /' /tmp/r3.out
check "record --kernel -e UNAVAILABLE alone: nothing to record is an error (exit $rc)" \
	eval '[ $rc != 0 ] && grep -q "no kernel marker to record" /tmp/r3.out && [ ! -e /tmp/r3 ]'
# patterns that take nothing: an exclusion of no kernel marker, and with a
# command, patterns that took neither kernel nor user markers (at the end)
marktrace record --kernel -q -o /tmp/r4 -e fs_open -e '!fs_opne' -- true >/tmp/r4.out 2>&1; rc=$?
sed 's/^/# r4: /' /tmp/r4.out
check "record --kernel -e fs_open -e '!fs_opne' -- true: the exclusion that excluded nothing said (exit $rc)" \
	eval '[ $rc = 0 ] && grep -qF "warning: -e '"'!fs_opne'"' excluded nothing: no marker of '"'true'"' nor any kernel marker matches" /tmp/r4.out'
marktrace record --kernel -q -o /tmp/r5 -e fs_open -e 'app_*' -- true >/tmp/r5.out 2>&1; rc=$?
sed 's/^/# r5: /' /tmp/r5.out
check "record --kernel -e 'app_*' -- true (no libmarktap): the pattern and why, at the end (exit $rc)" \
	eval '[ $rc = 0 ] && grep -qF "warning: -e '"'app_*'"' matched no marker of '"'true'"' nor any kernel marker" /tmp/r5.out &&
	      grep -q "no process joined the recording of user markers: .true. .*not linked with libmarktap" /tmp/r5.out &&
	      [ "$(grep -c fs_open /tmp/r5.out)" = 0 ]'
if [ -x /bin/target ]; then
	marktrace record --kernel -q -o /tmp/r6 -e fs_open -e ev -e '!tick' -- target count 3 >/dev/null 2>/tmp/r6.err; rc=$?
	sed 's/^/# r6: /' /tmp/r6.err
	check "record --kernel -e ev -e '!tick' -- target: its marker taken, the exclusion that matched its other marker silent (exit $rc)" \
		eval '[ $rc = 0 ] && [ ! -s /tmp/r6.err ] && marktrace view /tmp/r6/ust | grep -q " ev: "'
fi
marktap -e "probe kernel.mark(\"$U\") { println(\"never\") }" >/tmp/m1.out 2>&1; rc=$?
sed 's/^/# m1: /' /tmp/m1.out
check "marktap: a script probing only an unavailable marker: warning, then an error (exit $rc)" \
	eval '[ $rc != 0 ] && grep -qF "WARNING: probe point kernel.mark(\"$U\") is unavailable on this kernel: $why" /tmp/m1.out && grep -q "semantic error: no probes left" /tmp/m1.out'
# (cat's output elsewhere: busybox cat writes with sendfile(), which moves
# the shared file offset without its lock, so a line marktap writes at the
# same moment into the same file can be overwritten)
marktap -c 'cat /tmp/probe-file.txt >/dev/null' -e "probe kernel.mark(\"$U\") { println(\"never\") }
probe kernel.mark(\"fs_open\") { if (isinstr(\$filename, \"probe-file\")) println(\"seen\") }" \
	>/tmp/m2.out 2>&1; rc=$?
sed 's/^/# m2: /' /tmp/m2.out
check "marktap: an unavailable probe beside an available one: warning, the other runs (exit $rc)" \
	eval '[ $rc = 0 ] && grep -qF "unavailable on this kernel: $why" /tmp/m2.out && grep -q "^seen$" /tmp/m2.out'

# --- a 32-bit process's system calls ------------------------------
if [ -x /bin/ia32 ]; then
	marktrace record --kernel -q -o /tmp/k32 -e 'fs_*' -e 'ipc_*' -e 'net_socket_create' \
		-- /bin/ia32 >/tmp/k32.out 2>&1
	marktrace view /tmp/k32 2>&1 | grep ' ia32\[' >/tmp/k32.txt
	sed 's/^[^]]*] [^ ]* /# k32: /' /tmp/k32.txt
	fd=$(sed -n 's/.* fs_open: fd=\([0-9]*\) filename="\/tmp\/probe-file.txt".*/\1/p' /tmp/k32.txt)
	check "ia32: fs_open of the file (fd $fd)" [ -n "$fd" ]
	for want in "fs_read: fd=$fd count=7" "fs_lseek: fd=$fd offset=-2 origin=2" \
		    "fs_pread64: fd=$fd count=3 pos=4294967298" "fs_select: fd=$fd timeout=12[0-9][0-9]$" \
		    "fs_pollfd: fd=$fd" "fs_close: fd=$fd" \
		    "net_socket_create: sock=0x[0-9a-f]* family=2 type=2 protocol=17 fd=[0-9]" \
		    "net_socket_create: sock=0x[0-9a-f]* family=2 type=1 protocol=6 fd=[0-9]" \
		    "ipc_msg_create: id=[0-9]* flags=896" "ipc_msg_create: id=[0-9]* flags=897" \
		    "ipc_sem_create: id=[0-9]* flags=898" "ipc_shm_create: id=[0-9]* flags=900"; do
		check "ia32: $want" grep -q "$want" /tmp/k32.txt
	done
	check "plain recording has no credentials in its events" eval '! grep -q ctx_uid /tmp/k32/metadata'
else
	say "not ok" "a 32-bit test program in the guest"
fi

# --- a kernel.mark handler sees the event's context and time ------
# The traced command stops marktap while it opens the file as another user
# and sleeps, so the handler runs a second or more after the event.
cat >/tmp/t13.sh <<'SH'
kill -STOP $PPID
kreader as 1234 5678 cat /tmp/probe-file.txt >/dev/null
echo "shell $$"
sleep 1
kill -CONT $PPID
SH
marktap -c 'sh /tmp/t13.sh' -e 'global ev_ms, ev_ns
probe kernel.mark("fs_open") {
	if (isinstr($filename, "probe-file") && execname() == "cat") {
		printf("cred uid=%d euid=%d gid=%d egid=%d ppid=%d\n", uid(), euid(), gid(), egid(), ppid())
		ev_ms = gettimeofday_ms(); ev_ns = local_clock_ns()
	}
}
probe end { printf("lag wall=%d mono=%d\n", gettimeofday_ms() - ev_ms, (local_clock_ns() - ev_ns) / 1000000) }' \
	>/tmp/m13.out 2>&1; rc=$?
sed 's/^/# m13: /' /tmp/m13.out
sh=$(sed -n 's/^shell //p' /tmp/m13.out)
check "kernel.mark handler: uid() euid() gid() egid() ppid() of the task that hit it" \
	grep -q "^cred uid=1234 euid=1234 gid=5678 egid=5678 ppid=$sh\$" /tmp/m13.out
wall=$(sed -n 's/^lag wall=\([0-9-]*\) .*/\1/p' /tmp/m13.out)
mono=$(sed -n 's/^lag .* mono=\([0-9-]*\)$/\1/p' /tmp/m13.out)
check "gettimeofday_ms() and local_clock_ns() give the event's time: a second before the end ($wall ms, $mono ms)" \
	[ "${wall:-0}" -ge 1000 -a "${mono:-0}" -ge 1000 -a $((wall - mono)) -le 100 -a $((mono - wall)) -le 100 ]
rmmod marktap
