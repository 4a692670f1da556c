# The guest's part of ktp.t: marktrace record --kernel -e SUBSYS:NAME in
# Debian's kernel (perf tracepoints, no marktap.ko): the tracefs formats of
# another kernel than the host's, a known command's events exact.  The
# trace goes back to the host, which reads it with babeltrace2.
echo "tracepoint file" >/tmp/target
line=$(marktrace list --tracepoints 'sched:sched_process_exec')
echo "# list: $line"
[ "$line" = 'sched:sched_process_exec "filename %s pid %d old_pid %d"' ]
check "list --tracepoints: sched_process_exec's fields" [ $? = 0 ]
marktrace record --kernel -o /tmp/tp -e 'sched:sched_process_e*' -e 'syscalls:sys_enter_openat' \
	-e 'irq:*' -- /bin/tp-opener /tmp/target 50 >/tmp/tp.out 2>/tmp/tp.err
rc=$?
sed 's/^/# record: /' /tmp/tp.err
check "record --kernel -e SUBSYS:NAME -- CMD: exit 0" [ $rc = 0 ]
check "the summary: 0 lost" grep -q '^marktrace: [0-9]* tracepoint events recorded, 0 lost' /tmp/tp.err
read -r _ P _ A </tmp/tp.out
echo "# tp-opener: pid $P, buffer $A"
marktrace view /tmp/tp >/tmp/tp.view 2>/tmp/tp.view.err
check "view reads it without a word" [ ! -s /tmp/tp.view.err ]
n=$(grep -c "sched:sched_process_exec: filename=\"/bin/tp-opener\" pid=$P old_pid=$P\$" /tmp/tp.view)
check "the exec's __data_loc filename and pids ($n)" [ "$n" = 1 ]
n=$(grep -c "tp-opener\\[$P/$P\\] syscalls:sys_enter_openat: .*filename=$A " /tmp/tp.view)
check "the command's 50 openat of its buffer ($n)" [ "$n" = 50 ]
n=$(grep -c "sched:sched_process_exit: comm=\"tp-opener\" pid=$P " /tmp/tp.view)
check "its exit, comm a string ($n)" [ "$n" = 1 ]
echo "$P $A" >/tmp/tp/ids
echo TP-BEGIN; tar -C /tmp -cf - tp | gzip | base64; echo TP-END
