# The guest's part of ktrace.t (run by /init; TAP-like lines on the console):
# kernel.trace probes resolved from the guest kernel's BTF by marktap, run
# by marktap.ko's tracepoint probes with the handlers' Lua; as root and as
# a member of the device's group (uid 1000, group 4242).
show() { sed "s/^/# $1: /" "/tmp/$1.out" | head -${2:-8}; }

insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
chgrp 4242 /dev/marktap
export MARKTAP_DATADIR=/share/marktap
cd /tmp
check "the guest kernel has BTF" test -r /sys/kernel/btf/vmlinux
# programs of known names: copies of kreader (busybox's applets go by argv[0])
cp /bin/kreader /tmp/kt-exec
cp /bin/kreader /tmp/kt-busy
G='kreader as 1000 4242'

{ marktap -L 'kernel.trace("sched_switch")'; marktap -L 'kernel.trace("sched_process_exec")'; } >kt0.out 2>&1
show kt0 3
check "-L: the parameters from BTF, SYSTEM from tracefs" sh -c \
	"grep -q '^kernel.trace(\"sched:sched_switch\") \$preempt:bool \$prev:struct task_struct\* \$next:struct task_struct\* \$prev_state:unsigned int$' kt0.out &&
	 grep -q '^kernel.trace(\"sched:sched_process_exec\") \$p:struct task_struct\* \$old_pid:pid_t \$bprm:struct linux_binprm\*$' kt0.out"

# sched_process_exec: kt-exec's exec, its file through $bprm, its pid through $p
marktap -c '/tmp/kt-exec nap 1' -e 'probe kernel.trace("sched_process_exec") { if (execname() == "kt-exec")
  printf("exec %s pid=%d self=%d old=%d int_arg=%d\nparms %s\n", kernel_string($bprm->filename), $p->pid,
         pid(), $old_pid, int_arg(2), $$parms) }' >kt1.out 2>&1
show kt1 4
check "sched_process_exec: kernel_string(\$bprm->filename) is the program, \$p->pid, \$old_pid and int_arg(2) its pid" \
	grep -q '^exec /tmp/kt-exec pid=\([1-9][0-9]*\) self=\1 old=\1 int_arg=\1$' kt1.out
check "\$\$parms: p, old_pid and bprm" grep -q '^parms p=0x[0-9a-f]* old_pid=0x[0-9a-f]* bprm=0x[0-9a-f]*$' kt1.out

# sched_switch: busy processes switched out ($prev) and in ($next): three
# of them on two CPUs, so that the scheduler must take turns
/tmp/kt-busy spin 1000000000 >/dev/null &
busy=$!
/tmp/kt-busy spin 1000000000 >/dev/null &
busy2=$!
/tmp/kt-busy spin 1000000000 >/dev/null &
busy3=$!
marktap -DSTP_NO_OVERLOAD -e 'global prevok, prevbad, nextn, nextpid
probe kernel.trace("sched_switch") {
  if (kernel_string($prev->comm) == "kt-busy") { if ($prev->pid == pid() && execname() == "kt-busy") prevok++; else prevbad++ }
  if (kernel_string($next->comm) == "kt-busy") { nextn++; nextpid = $next->pid }
}
probe timer.s(2) { exit() }
probe end { printf("prev=%d bad=%d next=%d nextpid=%d\n", prevok, prevbad, nextn, nextpid) }' >kt2.out 2>&1
kill $busy $busy2 $busy3; wait $busy $busy2 $busy3 2>/dev/null
show kt2 4
check "sched_switch: \$next->pid is a busy process's ($busy $busy2 $busy3), \$prev->comm by kernel_string" \
	grep -qE "^prev=[1-9][0-9]* bad=0 next=[1-9][0-9]* nextpid=($busy|$busy2|$busy3)$" kt2.out

# sched:sched_process_fork: a loop's 25 forks, counted by the parent's pid
cat >/tmp/forker.sh <<'SH'
echo $$ >/tmp/forker.pid
i=0
while [ $i -lt 25 ]; do /tmp/kt-exec nap 0; i=$((i + 1)); done
SH
marktap -c 'sh /tmp/forker.sh' -e 'global n
probe kernel.trace("sched:sched_process_fork") { if ($child->pid != $parent->pid) n[$parent->pid]++ }
probe end { foreach (p in n) printf("forks %d %d\n", p, n[p]) }' >kt3.out 2>&1
show kt3 4
check "sched:sched_process_fork counts the loop's 25 forks exactly" grep -q "^forks $(cat /tmp/forker.pid) 25$" kt3.out

# a glob over sched:*: every tracepoint attached, hits seen, detached
marktap -l 'kernel.trace("sched:*")' >kt4l.out 2>&1
echo "# sched:* names $(wc -l <kt4l.out) tracepoints"
marktap -DSTP_NO_OVERLOAD -e 'global n probe kernel.trace("sched:*") { n++ }
probe timer.ms(500) { exit() }
probe end { printf("hits=%d\n", n) }' >kt4.out 2>&1
rc=$?
show kt4 6
check "kernel.trace(\"sched:*\") attaches every sched tracepoint, sees hits, ends cleanly (exit $rc)" \
	sh -c "[ $rc = 0 ] && [ \$(wc -l <kt4l.out) -ge 15 ] && grep -q '^hits=[1-9]' kt4.out && ! grep -q ERROR kt4.out"

# more markers than a script may probe (three globs of kernel functions,
# each under the translator's bound, together past marktap.ko's 1024),
# refused before any is armed
marktap -e 'probe kernel.function("*proc*"), kernel.function("*sched*"), kernel.function("tcp_*") { next }' >kt4a.out 2>&1
rc=$?
show kt4a 3
check "1 500 kernel functions in one script: refused with the module's bound (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'too many probed markers: [0-9]*, where a script may probe at most 1024' kt4a.out"

# refused at pass 2: an event that is no tracepoint
marktap -p2 -e 'probe kernel.trace("syscalls:sys_enter_openat") { next }' >kt5.out 2>&1
rc=$?
show kt5 2
check "syscalls:sys_enter_openat is refused at pass 2, pointing to syscall.* (exit $rc)" \
	sh -c "[ $rc != 0 ] && grep -q 'no tracepoints.*syscall.NAME' kt5.out"

# the module's side: 50 attach/detach cycles under load (klua, binding
# tracepoint:NAME:NARGS), and a count the kernel's contradicts refused
cat >/tmp/kt-cycle.lua <<'LUA'
probe("tracepoint:sched_switch:4", function(name, fmt, preempt, prev, next, state) end)
LUA
/tmp/kt-busy spin 1000000000 >/dev/null &
busy=$!
bad=0 hits=0 i=0
while [ $i -lt 50 ]; do
	klua run /tmp/kt-cycle.lua /tmp/kt-exec nap 0 >cyc.out 2>&1
	grep -q '^klua: runs=[0-9]* skipped=[0-9]* errors=0 ' cyc.out || bad=$((bad + 1))
	grep -q '^klua: runs=[1-9]' cyc.out && hits=$((hits + 1))
	i=$((i + 1))
done
kill $busy; wait $busy 2>/dev/null
show cyc 2
check "50 attach/detach cycles of sched_switch, each clean ($bad failed, $hits saw hits)" \
	sh -c "[ $bad = 0 ] && [ $hits -gt 0 ]"
printf 'probe("tracepoint:sched_switch:5", function() end)\n' >/tmp/kt-lie.lua
chmod 644 /tmp/kt-cycle.lua /tmp/kt-lie.lua
$G klua load /tmp/kt-lie.lua >kt6.out 2>&1
show kt6 2
check "a parameter count the kernel contradicts is refused at load" grep -q 'sched_switch has 4 parameters, not 5' kt6.out

# the device's group: tracepoints and their plain parameters, no memory
$G marktap -c '/tmp/kt-exec nap 1' -e 'probe kernel.trace("sched_process_exec") { if (execname() == "kt-exec")
  printf("exec old=%d self=%d p=%d\n", $old_pid, pid(), $p) }' >kg1.out 2>&1
show kg1 4
check "the group: kernel.trace with plain parameters (\$old_pid), \$p a 32-bit hash" \
	sh -c "grep -q '^exec old=\([1-9][0-9]*\) self=\1 p=[0-9]*$' kg1.out && \
	       awk '/^exec/ { split(\$4, a, \"=\"); if (a[2] < 0 || a[2] >= 4294967296) exit 1 }' kg1.out"
$G marktap -c '/tmp/kt-exec nap 1' -e 'probe kernel.trace("sched_process_exec") { if (execname() == "kt-exec")
  println(kernel_string($bprm->filename)) }' >kg2.out 2>&1
show kg2 4
check "the group: pointer reads refused (CAP_SYS_ADMIN)" grep -q 'reading memory needs CAP_SYS_ADMIN' kg2.out
$G klua run /tmp/kt-cycle.lua /tmp/kt-exec nap 0 >kg3.out 2>&1
show kg3 2
check "the group: the module attaches a tracepoint for it" grep -q '^klua: runs=[0-9]* skipped=[0-9]* errors=0 ' kg3.out

# parameters past the five in registers: smbus_write and smbus_result
# (seven each: the 6th and 7th on the caller's stack) at a write through
# i2c-stub's software adapter, their values those i2cset asked for
insmod /bin/i2c-stub.ko chip_addr=0x50 && insmod /bin/i2c-dev.ko
ln -sf busybox /bin/i2cset
bus=none
for d in /sys/bus/i2c/devices/i2c-*; do grep -q 'SMBus stub driver' "$d/name" 2>/dev/null && bus=${d##*i2c-}; done
echo "# i2c-stub's bus: $bus"
chmod 666 /dev/i2c-$bus
marktap -c "i2cset -y $bus 0x50 0x10 0x42 b" -e 'probe kernel.trace("smbus_write") {
  printf("write nr=%d addr=%#x rw=%d cmd=%#x proto=%d byte=%#x\n", $adap->nr, $addr, $read_write, $command, $protocol, $data->byte) }
probe kernel.trace("smbus_result") { printf("result nr=%d addr=%#x proto=%d res=%d\n", $adap->nr, $addr, $protocol, $res) }' >ks1.out 2>&1
show ks1 4
check "smbus_write: \$protocol and \$data->byte (its 6th and 7th, on the stack) are i2cset's byte-data write of 0x42" \
	grep -q "^write nr=$bus addr=0x50 rw=0 cmd=0x10 proto=2 byte=0x42$" ks1.out
check "smbus_result: the same transfer, \$protocol and \$res (6th and 7th) its byte-data and success" \
	grep -q "^result nr=$bus addr=0x50 proto=2 res=0$" ks1.out
$G marktap -c "i2cset -y $bus 0x50 0x11 0x43 b" -e 'probe kernel.trace("smbus_write") {
  printf("write cmd=%#x proto=%d\n", $command, $protocol) }' >kg4.out 2>&1
show kg4 3
check "the group: smbus_write's \$protocol (on the stack) as a plain value" grep -q '^write cmd=0x11 proto=2$' kg4.out
printf 'probe("tracepoint:smbus_write:6", function() end)\n' >/tmp/kt-lie6.lua
printf 'probe("tracepoint:smbus_write:8", function() end)\n' >/tmp/kt-lie8.lua
chmod 644 /tmp/kt-lie6.lua /tmp/kt-lie8.lua
{ $G klua load /tmp/kt-lie6.lua; $G klua load /tmp/kt-lie8.lua; } >kg5.out 2>&1
show kg5 2
check "the group: a count past the registers other than the kernel's (6, 8 of smbus_write's 7) refused at load" \
	sh -c "grep -q 'smbus_write has 7 parameters, not 6' kg5.out && grep -q 'smbus_write has 7 parameters, not 8' kg5.out"

# a module's tracepoint (vmw_vsock_virtio_transport_common's, eight
# parameters): its module loaded after the script started, unloaded
# while probed, loaded again; then loaded before a script
insmod /bin/vsock.ko
cat >/tmp/vs.sh <<'SH'
insmod /bin/vmw_vsock_virtio_transport_common.ko && insmod /bin/vsock_loopback.ko
kreader vsock 5001
rmmod vsock_loopback && rmmod vmw_vsock_virtio_transport_common &&
	! grep -q '^vmw_vsock_virtio_transport_common ' /proc/modules && echo unloaded
insmod /bin/vmw_vsock_virtio_transport_common.ko && insmod /bin/vsock_loopback.ko
kreader vsock 5002
SH
VS='probe kernel.trace("virtio_transport_alloc_pkt") { if ($op == 1)
  printf("request %d:%d -> %d:%d type=%d flags=%d\n", $src_cid, $src_port > 0, $dst_cid, $dst_port, $type, $flags) }'
MARKTAP_MODULE_PATH=/bin marktap -c 'sh /tmp/vs.sh' -e "$VS" >kv1.out 2>&1
show kv1 6
check "a module's tracepoint: armed when its module comes, again after rmmod and insmod (\$op, 7th, on the stack)" \
	sh -c "grep -q '^unloaded$' kv1.out && grep -q '^request 1:1 -> 1:5001 type=1 flags=0$' kv1.out &&
	       grep -q '^request 1:1 -> 1:5002 type=1 flags=0$' kv1.out"
MARKTAP_MODULE_PATH=/bin marktap -c 'kreader vsock 5003' -e "$VS" >kv2.out 2>&1
show kv2 3
check "a module's tracepoint, its module loaded before the script" grep -q '^request 1:1 -> 1:5003 type=1 flags=0$' kv2.out
printf 'probe("tracepoint:vmw_vsock_virtio_transport_common:virtio_transport_alloc_pkt:7", function() end)\n' >/tmp/kt-lie7.lua
chmod 644 /tmp/kt-lie7.lua
$G klua load /tmp/kt-lie7.lua >kg6.out 2>&1
show kg6 2
check "the group: a module's tracepoint with a count its module contradicts, refused at load" \
	grep -q 'virtio_transport_alloc_pkt has 8 parameters, not 7' kg6.out
rmmod vsock_loopback vmw_vsock_virtio_transport_common vsock i2c_dev i2c_stub
check "the modules unload" sh -c "! grep -qE '^(vsock|i2c_stub) ' /proc/modules"

check_clean_unload
