# The guest's part of timeline-guest.t (run by /init): a kernel trace of a
# known activity with the markers the timeline draws states from (scheduler,
# processes, system calls, interrupts, the state dump) and the user
# markers of /bin/target; lines written to the serial port make its
# interrupts.  The trace goes back to the host (TRACE-BEGIN, tar | gzip |
# base64).
insmod /marktap.ko
marktrace record --kernel -q -o /tmp/tl -e 'kernel_sched_*' -e 'kernel_process_*' -e 'fs_exec' \
	-e 'kernel_arch_syscall_*' -e 'kernel_irq_*' -e 'kernel_softirq_*' -e 'statedump_*' -e 'ev' \
	-- sh -c '/bin/target count 5; sleep 0.3; dd if=/dev/zero of=/dev/null bs=4k count=500 2>/dev/null;
		  for i in 1 2 3 4 5 6 7 8; do echo timeline-uart-irq >/dev/ttyS0; done
		  /bin/target threads 2 3' >/tmp/tl.out 2>&1
echo "RC $?"
sed 's/^/# tl: /' /tmp/tl.out
echo TRACE-BEGIN; tar -C /tmp -cf - tl | gzip | base64; echo TRACE-END
