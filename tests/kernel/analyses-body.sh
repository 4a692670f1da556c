# The guest's part of analyses.t: each of LTTng's analyses as a script of
# scripts/, run live (handlers in the kernel) on a known workload, and with
# marktap --trace over a recording of the same workload; the lines the
# workload determines must be there, and equal, both ways.
show() { sed "s/^/# $1: /" "/tmp/$1" | head -${2:-8}; }
insmod /marktap.ko || say "not ok" "insmod marktap.ko"
export MARKTAP_DATADIR=/share/marktap
S=/share/marktap/scripts
cd /tmp
# run NAME SCRIPT EVENTS WORKLOAD [ARG]: NAME.live and NAME.trace
run() {
	# (hits skipped under emulation are counted, and do not end the session)
	marktap -DMAXSKIPPED=1000000 -c "$4" "$S/$2.stp" $5 >$1.live 2>$1.live.err
	marktrace record -q --kernel $3 -o /tmp/T-$1 -- sh -c "$4" >/dev/null 2>$1.rec.err
	marktap --trace /tmp/T-$1 "$S/$2.stp" $5 >$1.trace 2>$1.trace.err
	show $1.live 6; show $1.trace 6
	grep -v '^$' $1.live.err $1.rec.err $1.trace.err | head -4 | sed 's/^/# err: /'
}
# both NAME DESCRIPTION AWK-PROGRAM: the program prints the determined
# line from each output; they must be equal and not empty
both() {
	a=$(awk "$3" /tmp/$1.live); b=$(awk "$3" /tmp/$1.trace)
	check "$2: live [$a] = --trace [$b]" sh -c "[ -n '$a' ] && [ '$a' = '$b' ]"
}

run sys syscallstats "-e kernel_arch_syscall_*" "kreader spin 1000 >/dev/null"
both sys "syscallstats: kreader's 1000 getppid(), no error" '$1 == "kreader" && $2 == "getppid" { print $1, $2, $3, $4 }'

# tee opens its file itself (dd and shell redirections move theirs to fd 1)
run io iolatencytop "-e fs_* -e kernel_arch_syscall_exit" "head -c 409600 /dev/zero | tee /tmp/io.dat >/dev/null"
both io "iolatencytop: tee wrote 409600 bytes to /tmp/io.dat" '$1 == "tee" && $2 == "write" && $3 == "/tmp/io.dat" { print $1, $2, $3, $5 }'
# head's reads: all of them, or fewer and marktap's count of the hits it
# skipped says so (under emulation a handler can hold the shared state
# past a hit's wait): a loss is reported, never silent
a=$(awk '$1 == "head" && $2 == "read" && $3 == "/dev/zero" { print $5 }' /tmp/io.live)
b=$(awk '$1 == "head" && $2 == "read" && $3 == "/dev/zero" { print $5 }' /tmp/io.trace)
k=$(sed -n 's/.*skipped probes: \([0-9]*\).*/\1/p' /tmp/io.live.err | tail -1)
check "iolatencytop: head read 409600 bytes of /dev/zero: live [$a] = --trace [$b], or the skipped hits said [${k:-0}]" \
	sh -c "[ '$b' = 409600 ] && { [ '$a' = '$b' ] || [ \$(( ($b - ${a:-0}) / 4096 )) -le ${k:-0} ]; }"

run mem memtop "-e mm_handle_fault_*" "dd if=/dev/zero of=/dev/null bs=4M count=1 2>/dev/null"
both mem "memtop: dd faults in its 4 MiB buffer (at least 1024 faults, 1024 writes)" '$1 == "dd" { print $1, ($3 >= 1024), ($4 >= 1024) }'
check "memtop: ... which it says" grep -q '^dd  *[0-9]*  *[0-9]*' mem.live

run cpu cputop "-e kernel_sched_* -e kernel_process_* -e fs_exec" "kreader spin 2000000 >/dev/null"
both cpu "cputop: the spinning kreader takes most of the CPU time" 'NR > 1 && $1 == "kreader" && $4 >= 30 { print $1, "busy" }'
both cpu "cputop: one row per CPU" '$1 ~ /^[01]$/ && NF == 3 { n++ } END { print n }'

# (busybox's sleep renames itself after its exec: kreader keeps its name)
run sched schedlog "-e kernel_sched_* -e kernel_process_* -e fs_exec" "kreader nap 3" 1000
both sched "schedlog: kreader woken from each of its 3 naps" '$1 == "kreader" && $3 >= 3 { print $1, "woken" }'
both sched "schedlog: switches logged with both tasks" '/ cpu [01]: .*\[[0-9]+\] -> .*\[[0-9]+\]/ { n++ } END { print (n > 0) }'
both sched "schedlog: kreader's switches in are logged, named" '/ -> kreader\[[0-9]+\]/ { n++ } END { print (n >= 3) }'

run irq irqstats "-e kernel_irq_* -e kernel_softirq_*" "sleep 1"
both irq "irqstats: the timer softirq ran and was raised" '$1 == "TIMER" && $2 > 0 && $6 > 0 { print "TIMER" }'
check "irqstats: both tables printed" sh -c "grep -q '^HARD IRQ' irq.live && grep -q '^SOFT IRQ' irq.trace"

# the frequency analyses: their histograms' counts, live = --trace
run sysf syscallfreq "-e kernel_arch_syscall_*" "kreader spin 1000 >/dev/null" "--freq-resolution 5"
both sysf "syscallfreq: getppid's histogram holds kreader's 1000 calls" '/^getppid: / { print ($2 >= 1000) }'
check "syscallfreq --freq-resolution 5: 5 buckets for getppid" \
	sh -c "[ \$(sed -n '/^getppid: /,/^[^ ]/p' sysf.trace | grep -c '^  *[0-9]') = 5 ]"
run irqf irqfreq "-e kernel_irq_* -e kernel_softirq_*" "sleep 1"
both irqf "irqfreq: the timer softirq's histogram" '/^softirq TIMER: / { print "TIMER", ($2 > 0) }'
run schedf schedfreq "-e kernel_sched_* -e kernel_process_* -e fs_exec" "kreader nap 3"
both schedf "schedfreq: the wake-ups to switch-in, at least kreader's 3" '/^all tasks: / { print ($3 >= 3) }'
# --max 0.001: no handler runs within a nanosecond; --mi: one JSON object
marktap --script irqfreq -T 1 --max 0.001 > irqf.none 2>&1
check "irqfreq --max 0.001 live: nothing kept" grep -qx 'no interrupt handler ran' irqf.none
marktap --script irqfreq --trace /tmp/T-irqf --mi > irqf.mi 2>&1
check "irqfreq --mi: one JSON object of histograms, the timer softirq's among them" \
	sh -c "[ \$(wc -l < irqf.mi) = 1 ] && grep -q '^{\"analysis\": \"irqfreq\", \"histograms\": \\[.*{\"name\": \"softirq TIMER\", \"count\": [1-9].*\\]}\$' irqf.mi"
show irqf.mi 1
# --mi of the analyses of fs_* and mm_* markers, over their recordings
marktap --trace /tmp/T-io "$S/iolatencytop.stp" --mi > io.mi 2>&1
check "iolatencytop --mi: one JSON object, tee's write of /tmp/io.dat in it" \
	sh -c "[ \$(wc -l < io.mi) = 1 ] && grep -q '^{\"analysis\": \"iolatencytop\", \"operations\": \\[.*{\"process\": \"tee\", \"operation\": \"write /tmp/io.dat\", \"calls\": [0-9]*, \"bytes\": 409600, .*\\]}\$' io.mi"
marktap --trace /tmp/T-mem "$S/memtop.stp" --mi > mem.mi 2>&1
check "memtop --mi: one JSON object, dd's faults in it" \
	sh -c "[ \$(wc -l < mem.mi) = 1 ] && grep -q '^{\"analysis\": \"memtop\", \"processes\": \\[.*{\"process\": \"dd\", \"pid\": [0-9]*, \"faults\": [0-9]*, .*\\]}\$' mem.mi"
show io.mi 1; show mem.mi 1
rmmod marktap
dmesg | grep -E -q 'WARNING|BUG|Oops|Call Trace' && say "not ok" "no warning, bug or oops in dmesg" || say ok "no warning, bug or oops in dmesg"
