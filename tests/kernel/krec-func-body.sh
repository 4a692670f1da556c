# The guest's part of krec-func.t: marktrace record --kernel --function in
# Debian's kernel (perf's kprobe PMU, no marktap.ko): vfs_read's entry and
# return while dd reads a file of 10 blocks, beside a tracepoint; a glob
# with functions the kernel refuses; a function it refuses named alone;
# a user perf refuses.  The first trace goes back to the host, which
# reads it with babeltrace2.
dd if=/dev/zero of=/tmp/f bs=4096 count=10 2>/dev/null
line=$(marktrace list --kernel --function vfs_read)
echo "# list: $line"
check "list --kernel --function vfs_read: the running kernel's prototype" \
	[ "$line" = 'ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)' ]
n=$(marktrace list --kernel --function 'vfs_*' | grep -c '^[a-z].* vfs_[a-z_]*(')
check "list --kernel --function 'vfs_*': the glob's functions ($n)" [ "$n" -gt 40 ]

marktrace record --kernel -o /tmp/kf -e syscalls:sys_enter_read --function vfs_read \
	-- dd if=/tmp/f of=/dev/null bs=4096 count=10 >/dev/null 2>/tmp/kf.err
rc=$?
sed 's/^/# record: /' /tmp/kf.err
check "record --kernel -e syscalls:sys_enter_read --function vfs_read -- dd: exit 0" [ $rc = 0 ]
check "1 tracepoint and 2 function probes enabled" \
	grep -q '^marktrace: 1 tracepoints and 2 function probes enabled$' /tmp/kf.err
check "the summary: 0 lost" \
	grep -q '^marktrace: [0-9]* tracepoint and function events recorded, 0 lost' /tmp/kf.err
marktrace view /tmp/kf >/tmp/kf.view 2>/tmp/kf.view.err
check "view reads it without a word" [ ! -s /tmp/kf.view.err ]
grep ' dd\[' /tmp/kf.view | head -4 | sed 's/^/# view: /'
n=$(grep -c ' dd\[[0-9]*/[0-9]*\] vfs_read_entry: file=0x[0-9a-f]* buf=0x[0-9a-f]* count=4096 pos=0x[0-9a-f]*$' /tmp/kf.view)
check "dd's 10 reads: vfs_read_entry, count=4096 ($n)" [ "$n" = 10 ]
n=$(grep -c ' dd\[[0-9]*/[0-9]*\] vfs_read_return: ret=4096$' /tmp/kf.view)
check "their returns: vfs_read_return, ret=4096 ($n)" [ "$n" = 10 ]
# each read of dd: the system call, then the function's entry and return
seq=$(grep ' dd\[' /tmp/kf.view | grep -E 'sys_enter_read: |vfs_read_(entry|return): ' |
	sed -E 's/.* (syscalls:sys_enter_read|vfs_read_entry|vfs_read_return): .*/\1/' | tr '\n' ' ')
want=$(for i in 1 2 3 4 5 6 7 8 9 10; do printf 'syscalls:sys_enter_read vfs_read_entry vfs_read_return '; done)
check "in order: sys_enter_read, vfs_read_entry, vfs_read_return, 10 times" [ "$seq" = "$want" ]
# the buffer dd passed to read(2) is vfs_read's buf
sb=$(grep ' dd\[' /tmp/kf.view | grep -m1 'sys_enter_read: ' | sed -E 's/.* buf=(0x[0-9a-f]*).*/\1/')
vb=$(grep -m1 ' dd\[.* vfs_read_entry: ' /tmp/kf.view | sed -E 's/.* buf=(0x[0-9a-f]*).*/\1/')
check "vfs_read's buf is read(2)'s ($sb, $vb)" [ -n "$sb" -a "$sb" = "$vb" ]

# a glob: vfs_[rw]* and the __init functions vfs_caches_init*, freed
# after boot: the kernel refuses those, they are left out and said
marktrace record --kernel -o /tmp/kg --function 'vfs_[rw]*' --function 'vfs_caches_init*' \
	-- dd if=/tmp/f of=/tmp/g bs=4096 count=3 >/dev/null 2>/tmp/kg.err
rc=$?
sed 's/^/# glob: /' /tmp/kg.err
check "record --function 'vfs_[rw]*' --function 'vfs_caches_init*': exit 0" [ $rc = 0 ]
check "the two refused __init functions said, once each" grep -q \
	'^marktrace: warning: the kernel refuses to probe 2 of the functions the --function globs take, not recorded: vfs_caches_init, vfs_caches_init_early$' /tmp/kg.err
marktrace view /tmp/kg >/tmp/kg.view 2>&1
n=$(grep -c ' dd\[[0-9]*/[0-9]*\] vfs_write_entry: file=0x[0-9a-f]* buf=0x[0-9a-f]* count=4096 pos=0x[0-9a-f]*$' /tmp/kg.view)
m=$(grep -c ' dd\[[0-9]*/[0-9]*\] vfs_write_return: ret=4096$' /tmp/kg.view)
check "dd's 3 writes, entries and returns ($n, $m)" [ "$n" = 3 -a "$m" = 3 ]
n=$(grep -c ' dd\[[0-9]*/[0-9]*\] vfs_read_return: ret=4096$' /tmp/kg.view)
check "and its 3 reads ($n)" [ "$n" = 3 ]
check "no class for a refused function" sh -c '! grep -rq vfs_caches_init /tmp/kg/kernel/metadata'

# a function the kernel refuses, named alone: an error naming it
grep -w notify_die /sys/kernel/debug/kprobes/blacklist | sed 's/^/# blacklist: /'
marktrace record --kernel -o /tmp/kn --function notify_die -- true 2>/tmp/kn.err
rc=$?
sed 's/^/# refused: /' /tmp/kn.err
check "record --function notify_die: exit 1" [ $rc = 1 ]
check "the refusal said with its name" \
	grep -q '^marktrace: record: --kernel: --function notify_die: the kernel refuses to probe it: ' /tmp/kn.err
check "and no trace left" [ ! -e /tmp/kn ]

# a user perf refuses kprobes to: said as for tracepoints
kreader as 1000 1000 marktrace record --kernel -o /tmp/ku --function vfs_read -- true 2>/tmp/ku.err
rc=$?
sed 's/^/# user: /' /tmp/ku.err
check "uid 1000: exit 1" [ $rc = 1 ]
check "uid 1000: root or CAP_PERFMON, and perf_event_paranoid, said" \
	grep -q '^marktrace: record: --kernel: kernel functions take root or CAP_PERFMON, whatever kernel.perf_event_paranoid allows (it is -*[0-9]*): perf_event_open of a kprobe on vfs_read ' /tmp/ku.err

echo KF-BEGIN; tar -C /tmp -cf - kf | gzip | base64; echo KF-END
