# The guest's part of kmod.t (run by /init; TAP lines go to the console).
vmalloc() { awk '/^VmallocUsed/ { print $2 }' /proc/meminfo; }
if insmod /marktap.ko gid=4242; then say ok "insmod marktap.ko"; else say "not ok" "insmod marktap.ko"; fi
echo LIST-BEGIN; kreader list; echo LIST-END
kreader test
chgrp 4242 /dev/marktap
kreader abuse
out=$(kreader access 1000 1000); [ "$out" = "open: ok" ] && r="not ok" || r=ok
say "$r" "a user outside the marktap group cannot open /dev/marktap ($out)"
out=$(kreader access 1000 1000 4242); [ "$out" = "open: ok" ] && r=ok || r="not ok"
say "$r" "a member of the marktap group (gid=4242) can ($out)"
# unload while a consumer is reading: refused, and the module keeps working
kreader hold 30 >/tmp/hold.out & reader=$!
n=0; while ! grep -q holding /tmp/hold.out && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done
if rmmod marktap 2>/dev/null; then say "not ok" "rmmod refused while a consumer reads"; else say ok "rmmod refused while a consumer reads"; fi
kill $reader; wait $reader
if rmmod marktap; then say ok "rmmod once the consumer is gone"; else say "not ok" "rmmod once the consumer is gone"; fi
# 100 loads and unloads under load, recording in every tenth.  (This hung
# under multi-threaded TCG: a vCPU kept re-executing an int3 that another
# vCPU had already patched out of kernel text -- kprobes retries such a
# trap -- so guest.sh runs qemu with one TCG thread.)
before=$(vmalloc)
# (stopped through a file, not kill: a killed loop left its last ls running
# into the flight-recorder test below, whose newest events it then owned)
(while [ ! -e /tmp/stop-load ]; do ls -R / >/dev/null 2>&1; done) & load=$!
i=0; bad=0
while [ $i -lt 100 ]; do
	insmod /marktap.ko || bad=$((bad + 1))
	if [ $((i % 10)) = 0 ]; then
		kreader record 'kernel_sched_*
fs_*
kernel_process_*
mm_page_*' 200 >/dev/null || bad=$((bad + 1))
	fi
	rmmod marktap || bad=$((bad + 1))
	i=$((i + 1))
done
touch /tmp/stop-load; wait $load 2>/dev/null
after=$(vmalloc)
say "$([ $bad = 0 ] && echo ok || echo 'not ok')" "100 loads and unloads under load, recording in 10 of them ($bad failures)"
say "$([ $((after - before)) -lt 2048 ] && echo ok || echo 'not ok')" "no vmalloc leak (VmallocUsed $before kB -> $after kB)"
# marktrace record --kernel in the guest; the traces go back to the host
echo "marktap probe file" >/tmp/probe-file.txt
insmod /marktap.ko
if marktrace record --kernel -q -o /tmp/kt -e 'fs_open' -e 'fs_close' -e 'kernel_process_*' \
	-- cat /tmp/probe-file.txt >/tmp/kt.out 2>&1; then r=ok; else r="not ok"; fi
say "$r" "marktrace record --kernel -- cat FILE in the guest"
if marktrace record --kernel -o /tmp/kt2 -e 'kernel_arch_syscall_*' -e 'ev' \
	-- /bin/target count 5 >/tmp/kt2.out 2>&1; then r=ok; else r="not ok"; fi
say "$r" "marktrace record --kernel -- a program with markers"
sed 's/^/# kt2: /' /tmp/kt2.out
# flight recorder: 4 x 4 KiB per CPU, many syscalls, then the file's open
if marktrace record --kernel -q --overwrite --subbuf-size 4k --num-subbuf 4 -o /tmp/kt3 \
	-e 'kernel_arch_syscall_*' -e 'fs_open' \
	-- sh -c 'for i in $(seq 3000); do true </dev/null; done; cat /tmp/probe-file.txt' >/tmp/kt3.out 2>&1
then r=ok; else r="not ok"; fi
say "$r" "marktrace record --kernel --overwrite in the guest"
# kernel.mark handlers: marktap runs a module translated on the host
if [ -x /bin/marktap ] && [ -f /kfsopen.mtm ]; then
	export MARKTAP_DATADIR=/share/marktap
	# (cat writes elsewhere: its sendfile() does not serialise with marktap's
	# writes to the same file, and handlers in marktap.ko print at once)
	marktap -c 'cat /tmp/probe-file.txt >/dev/null' /kfsopen.mtm >/tmp/kh.out 2>&1
	r=$?
	sed 's/^/# kh: /' /tmp/kh.out
	say "$([ $r = 0 ] && echo ok || echo 'not ok')" "marktap runs kernel.mark handlers (exit $r)"
	if grep -q '^open cat /tmp/probe-file.txt pid=[1-9][0-9]* tid=[1-9]' /tmp/kh.out; then r=ok; else r="not ok"; fi
	say "$r" "kernel.mark(\"fs_open\") handler: \$filename, execname(), pid(), tid() of the opener"
	if grep -q '^opens 1 closes>0 1$' /tmp/kh.out; then r=ok; else r="not ok"; fi
	say "$r" "one open of the file, cat's closes counted, end probe after the last event"
	# handlers run while the command still runs: exit() at the open ends
	# the session long before the command's sleep would
	t0=$(cut -d. -f1 /proc/uptime)
	marktap -c 'sh -c "cat /tmp/probe-file.txt >/dev/null; sleep 60"' -e 'probe kernel.mark("fs_open") { if (isinstr($filename, "probe-file")) { println("seen"); exit() } }' >/tmp/kh3.out 2>&1
	t1=$(cut -d. -f1 /proc/uptime)
	if grep -q '^seen$' /tmp/kh3.out && [ $((t1 - t0)) -lt 30 ]; then r=ok; else r="not ok"; fi
	say "$r" "a rare kernel event's handler runs while the command runs ($((t1 - t0)) s, exit() ends it)"
	# the example script of scripts/
	marktap -c 'cat /tmp/probe-file.txt >/dev/null' /share/marktap/fsopen-top.stp >/tmp/kh4.out 2>&1
	rc=$?
	sed 's/^/# kh4: /' /tmp/kh4.out | head -12
	if [ $rc = 0 ] && grep -q '^cat  *\/tmp\/probe-file.txt  *1$' /tmp/kh4.out; then r=ok; else r="not ok"; fi
	say "$r" "scripts/fsopen-top.stp counts cat's open of the file"
	marktap -e 'probe kernel.mark("no_such_marker") { }' >/tmp/kh2.out 2>&1
	rc=$?
	sed 's/^/# kh2: /' /tmp/kh2.out
	if [ $rc != 0 ] && grep -q 'no_such_marker' /tmp/kh2.out && ! grep -q 'catalogue' /tmp/kh2.out; then r=ok; else r="not ok"; fi
	say "$r" "an unknown kernel marker is an error"
else
	say "not ok" "marktap and kfsopen.mtm in the guest"
fi
rmmod marktap
echo TRACE-BEGIN; tar -C /tmp -cf - kt kt2 kt3 | gzip | base64; echo TRACE-END
dmesg >/tmp/dmesg
if grep -qE 'WARNING|BUG|Oops|Call Trace|general protection|refcount_t' /tmp/dmesg; then
	say "not ok" "no warning, bug or oops in dmesg"; grep -E -A5 'WARNING|BUG|Oops|Call Trace' /tmp/dmesg | sed 's/^/# /' | head -40
else
	say ok "no warning, bug or oops in dmesg"
fi
