# The guest's part of kdata.t (run by /init; TAP-like lines on the console):
# kernel.data(...) hardware watchpoints on vm_dirty_ratio, which a write
# to /proc/sys/vm/dirty_ratio stores once (proc_dointvec_minmax) and a
# read of it loads; then kernel arrays subscripted by a variable.
show() { sed "s/^/# $1: /" "/tmp/$1.out" | head -${2:-8}; }

insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
export MARKTAP_DATADIR=/share/marktap
cd /tmp
orig=$(cat /proc/sys/vm/dirty_ratio)
addr=$(grep ' vm_dirty_ratio$' /proc/kallsyms | cut -d' ' -f1)
echo "# vm_dirty_ratio at 0x$addr, value $orig"
WRITE5='sh -c "for v in 11 12 13 14 15; do echo \$v >/proc/sys/vm/dirty_ratio; done"'

# by symbol: one hit per write, in the writing process, with its context
marktap -c "$WRITE5" -e 'global n, other
probe kernel.data("vm_dirty_ratio").write { if (pid() == target()) { n++; if (n == 1) printf("%s %s\n", pp(), execname()) } else other++ }
probe end { printf("n=%d\n", n) }' >kd1.out 2>&1
show kd1 6
check "kernel.data(\"vm_dirty_ratio\").write: 5 hits for 5 writes to dirty_ratio" grep -q '^n=5$' kd1.out
check "pp() is stap's, with the default length; execname() the writer's" \
	grep -q '^kernel.data("vm_dirty_ratio").length(1).write sh$' kd1.out
check "the value written last is in place (the watchpoint only watches)" test "$(cat /proc/sys/vm/dirty_ratio)" = 15

# by address, four bytes: the same writes
marktap -c "$WRITE5" -e "global n
probe kernel.data(0x$addr).length(4).write { if (pid() == target()) n++ }
probe end { printf(\"n=%d\n\", n) }" >kd2.out 2>&1
show kd2 6
check "kernel.data(0x$addr).length(4).write: 5 hits" grep -q '^n=5$' kd2.out

# a read: .rw sees it, .write does not
marktap -c 'cat /proc/sys/vm/dirty_ratio' -e 'global r, w
probe kernel.data("vm_dirty_ratio").rw { if (pid() == target()) r++ }
probe kernel.data("vm_dirty_ratio").write { if (pid() == target()) w++ }
probe end { printf("r=%d w=%d\n", r, w) }' >kd3.out 2>&1
show kd3 6
check ".rw fires at cat's read of dirty_ratio, .write does not" grep -q '^r=[1-9][0-9]* w=0$' kd3.out

# the backtrace starts at the access: the sysctl's handler below it
marktap -c 'sh -c "echo 16 >/proc/sys/vm/dirty_ratio"' -e 'probe kernel.data("vm_dirty_ratio").write { if (pid() == target()) print_backtrace() }' >kd4.out 2>&1
show kd4 10
check "print_backtrace at the write: dirty_ratio_handler's call, no frame of marktap.ko" \
	sh -c "grep -q ' : dirty_ratio_handler+0x[0-9a-f]*/0x[0-9a-f]* \[kernel\]$' kd4.out && ! grep -q '\[marktap\]' kd4.out"

# x86's four debug registers: a session holding them all leaves none
marktap -e 'probe kernel.data("vm_dirty_ratio").write, kernel.data("vm_dirty_bytes").write,
	kernel.data("dirty_background_ratio").write, kernel.data("dirty_background_bytes").write { println("hit") }' >kd5.out 2>&1 &
holder=$!
wait_for 60 sh -c "echo 17 >/proc/sys/vm/dirty_ratio; grep -q '^hit' kd5.out"
marktap -e 'probe kernel.data("vm_dirty_ratio").rw { println("second") }' >kd6.out 2>&1
rc=$?
show kd6 4
check "a fifth watchpoint while four are held: refused at load, naming the debug registers (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'no debug register free' kd6.out"
kill -INT $holder
wait $holder
show kd5 4
marktap -c "$WRITE5" -e 'global n probe kernel.data("vm_dirty_ratio").write { if (pid() == target()) n++ } probe end { printf("n=%d\n", n) }' >kd7.out 2>&1
show kd7 4
check "once that session ends its debug registers are free again" grep -q '^n=5$' kd7.out
marktap -p2 -e 'probe kernel.data(0xffffffff81000000).write, kernel.data(0xffffffff81000008).write,
	kernel.data(0xffffffff81000010).write, kernel.data(0xffffffff81000018).write,
	kernel.data(0xffffffff81000020).write { println("x") }' >kd8.out 2>&1
rc=$?
show kd8 4
check "five watchpoints in one script: refused at -p2 (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'more than 4 hardware watchpoints' kd8.out"

# the device's group: refused, root's only
chgrp 4242 /dev/marktap
kreader as 1000 4242 marktap -e 'probe kernel.data("vm_dirty_ratio").write { println("hit") }' >kd9.out 2>&1
rc=$?
show kd9 4
check "the group: a watchpoint is refused at load, naming CAP_SYS_ADMIN (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'hwbp:w:1:vm_dirty_ratio: hardware watchpoints need CAP_SYS_ADMIN' kd9.out"

# systemtap-doc's examples, when the test passed them to the guest (their
# %( CONFIG_HAVE_HW_BREAKPOINT == "y" %? reads /boot's config)
mkdir -p /boot && cp /bin/config-"$(uname -r)" /boot/ 2>/dev/null
if [ -f /bin/hw_watch_sym.stp ] && [ -f /boot/config-"$(uname -r)" ]; then
	marktap -c 'sh -c "echo 18 >/proc/sys/vm/dirty_ratio"' /bin/hw_watch_sym.stp vm_dirty_ratio >kd10.out 2>&1
	show kd10 8
	check "hw_watch_sym.stp vm_dirty_ratio: the access reported, with a backtrace" \
		sh -c "grep -q '^vm_dirty_ratio value is accessed$' kd10.out && grep -q ' : [a-z_0-9.]*+0x[0-9a-f]*/0x[0-9a-f]* \[kernel\]$' kd10.out"
	marktap -c 'sh -c "echo 19 >/proc/sys/vm/dirty_ratio"' /bin/hw_watch_addr.stp 0x$addr >kd11.out 2>&1
	show kd11 8
	check "hw_watch_addr.stp 0x$addr: the access reported, with a backtrace" \
		sh -c "grep -q '^0x$addr value is accessed$' kd11.out && grep -q ' : [a-z_0-9.]*+0x[0-9a-f]*/0x[0-9a-f]* \[kernel\]$' kd11.out"
else
	say ok "# SKIP systemtap-doc's hw_watch examples not installed"
	say ok "# SKIP systemtap-doc's hw_watch examples not installed"
fi
echo "$orig" >/proc/sys/vm/dirty_ratio

# kernel arrays subscripted by a variable (translator/btf.c): the file
# dd reads, spelt from its dentry's inline name (a fixed-size array) and
# through d_name.name (a pointer); busybox cat sends files, no vfs_read
echo "subscripts" >/tmp/kd-file
marktap -c 'dd if=/tmp/kd-file of=/dev/null' -e 'probe kernel.function("vfs_read") { if (pid() == target()) {
  s = ""; n = ""; for (i = 0; i < 7; i++) { s .= sprintf("%c", $file->f_path->dentry->d_iname[i])
    n .= sprintf("%c", $file->f_path->dentry->d_name->name[i]) }
  printf("iname=%s name=%s\n", s, n); exit() } }' >ks1.out 2>&1
show ks1 4
check "d_iname[i] and d_name->name[i] with i a variable: the name of the file dd reads" \
	grep -q '^iname=kd-file name=kd-file$' ks1.out
marktap -c 'dd if=/tmp/kd-file of=/dev/null' -e 'probe kernel.function("vfs_read") { if (pid() == target()) {
  i = 40; println($file->f_path->dentry->d_iname[i]) } }' >ks2.out 2>&1
rc=$?
show ks2 4
check "d_iname[40] by a variable: the handler's ERROR names the index (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q '^ERROR: kernel array index 40 is out of bounds: the array has [0-9]* elements' ks2.out"

check_clean_unload
