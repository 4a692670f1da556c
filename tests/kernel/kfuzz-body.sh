# The guest's part of kfuzz.t: kfuzz as a member of the device's group
# (uid 1000, group 4242), beside a load that fires markers (system calls,
# processes, timers); then the kernel's log must be clean and the device
# still record.  KFUZZ_SEED and KFUZZ_OPS are set by kfuzz.t before this.
# what the kernel must never say
BAD='BUG|Oops|WARNING|general protection|soft lockup|hard LOCKUP|rcu.*stall|Call Trace|Kernel panic|list_del corruption|refcount_t'
insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
chgrp 4242 /dev/marktap
echo "fuzz file" >/tmp/fuzz-file
dmesg -c >/dev/null
# the load: processes and files, many small system calls, timers
(while :; do cat /tmp/fuzz-file >/dev/null; done) & l1=$!
(while :; do dd if=/dev/zero of=/dev/null bs=16 count=2000 2>/dev/null; done) & l2=$!
(while :; do sleep 0.02; done) & l3=$!
# its progress on the console as it goes: the last operations before a panic
kfuzz -s "$KFUZZ_SEED" -n "$KFUZZ_OPS" -u 1000:1000:4242 2>&1 | tee /tmp/kfuzz.out
kill $l1 $l2 $l3
wait
check "kfuzz ran its $KFUZZ_OPS operations as uid 1000 in the device's group" \
	grep -q "^kfuzz: done $KFUZZ_OPS ops" /tmp/kfuzz.out
# accepted/drawn of an operation, from kfuzz's last line
accepted() { sed -n "s|^kfuzz: done .* $1 \([0-9]*\)/.*|\1|p" /tmp/kfuzz.out; }
st=$(accepted start) rs=$(accepted restart) sc=$(accepted scribble) ch=$(accepted child)
st=$((${st:-0} + ${rs:-0}))
check "and reached the writers: $st starts that armed markers, $sc scribbles, $ch racing scribblers" \
	[ "${st:-0}" -ge $((KFUZZ_OPS / 1000)) -a "${sc:-0}" -ge $((KFUZZ_OPS / 100)) -a "${ch:-0}" -ge 1 ]
dmesg >/tmp/dmesg1.txt
grep -E "$BAD" /tmp/dmesg1.txt | head -20 | sed 's/^/# dmesg: /'
check "no oops, BUG, WARNING, lockup or stall in dmesg after the fuzzing" \
	eval '! grep -qE "$BAD" /tmp/dmesg1.txt'
# the module still records: a short recording as root, through marktrace
marktrace record --kernel -q -o /tmp/after -e fs_open -- cat /tmp/fuzz-file >/tmp/after.out 2>&1
n=$(marktrace view /tmp/after 2>/dev/null | grep -c 'fs_open: .*fuzz-file')
check "the device still records afterwards ($n fs_open of the file)" [ "${n:-0}" -ge 1 ]
check "marktap.ko unloads: every file the fuzzer opened was released" rmmod marktap
dmesg >/tmp/dmesg2.txt
check "and dmesg is still clean" eval '! grep -qE "$BAD" /tmp/dmesg2.txt'
