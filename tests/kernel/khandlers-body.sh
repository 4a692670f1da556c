# The guest's part of khandlers.t (run by /init; TAP-like lines on the
# console): kernel handlers run by marktap.ko as stap's, through marktap,
# as root and as the device's group (uid 1000, group 4242).
show() { sed "s/^/# $1: /" "/tmp/$1.out" | head -${2:-6}; }

insmod /marktap.ko gid=4242 || say "not ok" "insmod marktap.ko"
chgrp 4242 /dev/marktap
export MARKTAP_DATADIR=/share/marktap
cd /tmp
echo "khandlers probe file" >/tmp/kh-file
chmod 644 /tmp/kh-file
OPEN='sh -c "exec cat /tmp/kh-file >/dev/null"'
# kh NAME SCRIPT [MARKTAP-OPTIONS]: SCRIPT's handler of the one open of
# /tmp/kh-file (HIT stands for the test of it) runs in the kernel, as root
# (each check rests on one hit: MAXTRYLOCK at 1 s, so that the hit waits
# out a vCPU the loaded host took away while it held the shared state
# rather than being skipped after stap's 20 ms)
kh() {
	name=$1 script=$2; shift 2
	printf '%s\n' "$script" | sed 's|HIT|$filename == "/tmp/kh-file"|' >$name.stp
	marktap -v -DMAXTRYLOCK=100000 "$@" -c "$OPEN" $name.stp >$name.out 2>&1
	show $name 14
}
# has NAME PATTERN: NAME.out has a line PATTERN and its handlers ran in the kernel
has() { grep -q "$2" "$1.out" && grep -q 'kernel handlers: [1-9][0-9]* runs in the kernel' "$1.out"; }

# --- kernel_string() and the integer reads at an address: linux_banner
banner=$(sed -n 's/^\([0-9a-f]*\) [A-Za-z] linux_banner$/\1/p' /proc/kallsyms)
echo "# linux_banner at 0x$banner"
kh kstr "probe kernel.mark(\"fs_open\") { if (HIT) {
  println(\"string \", kernel_string(0x$banner))
  println(\"n \", kernel_string_n(0x$banner, 5), \" quoted \", substr(kernel_string_quoted(0x$banner), 0, 7))
  printf(\"char %d short %x int %x long %x pointer %x\\n\", kernel_char(0x$banner),
    kernel_short(0x$banner), kernel_int(0x$banner), kernel_long(0x$banner) & 0xffffffffff,
    kernel_pointer(0x$banner) & 0xff)
  println(\"fallback \", kernel_string(16, \"bad\"), \" \", kernel_string2(-4096, \"bad2\"), \" \", kernel_string_quoted(16))
  exit() } }" -DMAXACTION_US=1000000
# (the reads, not the time bound: a vCPU the loaded host sets aside in
# the handler takes it past MAXACTION_US's 20 ms of wall time)
check "kernel_string(linux_banner's address) in a kernel handler: \"Linux version ...\"" \
	has kstr '^string Linux version '

check "kernel_string_n(addr, 5) and kernel_string_quoted(addr)" grep -q '^n Linux quoted "Linux $' kstr.out
check "kernel_char/short/int/long/pointer of \"Linux\": its bytes, little-endian" \
	grep -q '^char 76 short 694c int 756e694c long 78756e694c pointer 4c$' kstr.out
check "a bad address: kernel_string(addr, err_msg) and kernel_string2 give err_msg, kernel_string_quoted the address" \
	grep -q '^fallback bad bad2 0x10$' kstr.out
kh kfault 'probe kernel.mark("fs_open") { if (HIT) println(kernel_string(16)) }'
check "kernel_string(16): stap's ERROR \"kernel string copy fault at 0x0000000000000010 [man error::fault]\"" \
	grep -q '^ERROR: kernel string copy fault at 0x0000000000000010 \[man error::fault\]' kfault.out
kh kfault2 'probe kernel.mark("fs_open") { if (HIT) println(kernel_long(16)) }'
check "kernel_long(16): stap's kernel read fault error" grep -q '^ERROR: kernel read fault at 0x' kfault2.out
# the group: reading memory is root's
printf 'probe kernel.mark("fs_open") { if ($filename == "/tmp/kh-file") println(kernel_string(0x%s)) }\n' \
	"$banner" >kgroup.stp
chmod 644 kgroup.stp
kreader as 1000 4242 marktap -v -c "$OPEN" kgroup.stp >kgroup.out 2>&1
show kgroup
check "as the group, kernel_string(addr) in a kernel handler is refused: CAP_SYS_ADMIN" \
	has kgroup '^ERROR: kernel_string: reading memory needs CAP_SYS_ADMIN'

# --- kernel memory in the probes marktap runs itself (begin, end,
# timers), read for root by marktap.ko: init_task through @cast at the end
init=$(sed -n 's/^\([0-9a-f]*\) [A-Za-z] init_task$/\1/p' /proc/kallsyms)
echo "# init_task at 0x$init"
printf '%s\n' "probe begin { println(\"begin \", kernel_string_n(0x$banner, 5)) }
probe timer.ms(100) { printf(\"timer %d\\n\", kernel_int(0x$banner)) exit() }
probe end { printf(\"end %s %d\\n\", kernel_string(@cast(0x$init, \"task_struct\")->comm), @cast(0x$init, \"task_struct\")->pid)
  println(\"fault \", kernel_string(16, \"bad\")) }" >kbeg.stp
marktap -c 'sleep 2' kbeg.stp >kbeg.out 2>&1
show kbeg
check "kernel_string_n in begin, kernel_int in a timer, @cast(init_task)->comm and ->pid at the end: read by marktap.ko" \
	sh -c "grep -q '^begin Linux$' kbeg.out && grep -q '^timer 1970170188$' kbeg.out && grep -q '^end swapper/0 0$' kbeg.out && grep -q '^fault bad$' kbeg.out"
chmod 644 kbeg.stp
kreader as 1000 4242 marktap -c 'sleep 1' kbeg.stp >kbeg2.out 2>&1
show kbeg2
check "as the group, kernel memory in begin is refused: CAP_SYS_ADMIN" \
	grep -q '^ERROR: kernel_string_n: reading kernel memory needs CAP_SYS_ADMIN' kbeg2.out


# --- @cast(task_current(), "task_struct"): marktap's task values are thread
# ids, which become the task's address for the read (stap's idiom), in a
# kernel handler and in begin (through marktap.ko)
marktap -c 'dd if=/proc/version of=/dev/null' -e 'global n, good
probe begin { printf("begin %d %d %s\n", @cast(task_current(), "task_struct")->tgid == pid(),
  @cast(task_current(), "task_struct")->pid == tid(), kernel_string(@cast(task_current(), "task_struct")->comm)) }
probe kernel.function("vfs_read") { if (pid() == target()) { n++
  if (@cast(task_current(), "task_struct")->tgid == pid() && kernel_string(@cast(task_current(), "task_struct")->comm) == "dd") good++ } }
probe end { printf("hits %d good %d\n", n > 0, n == good) }' >kcur.out 2>&1
show kcur
check "@cast(task_current(), \"task_struct\")->tgid == pid(), ->comm, in a kernel handler and in begin" \
	sh -c "grep -q '^begin 1 1 marktap$' kcur.out && grep -q '^hits 1 good 1$' kcur.out"

# --- is_myproc(): the hit's task has the effective uid of marktap's user
# (stap's), here root's; another user's process is not
kh kmine 'probe kernel.mark("fs_open") { if (HIT) { printf("mine %d %d\n", is_myproc(), euid()); exit() } }'
check "is_myproc() in a kernel handler: 1 for a process of marktap's user" has kmine '^mine 1 0$'
printf '%s\n' 'probe kernel.mark("fs_open") { if ($filename == "/tmp/kh-file") { printf("mine %d %d\n", is_myproc(), euid()); exit() } }' >kother.stp
# (cat's output goes elsewhere: busybox's cat writes with sendfile(),
# which moves the shared file offset without the lock write() takes, so
# that a line marktap wrote at the same moment was overwritten)
marktap -v -DMAXTRYLOCK=100000 -c 'exec kreader as 1000 4242 cat /tmp/kh-file >/dev/null' kother.stp >kother.out 2>&1
show kother 14
check "is_myproc() in a kernel handler: 0 for another user's process" has kother '^mine 0 1000$'

# --- where handlers run: one that uses no global in the state of the CPU
# it hit (no waiting for the shared one, as stap's handlers lock only the
# globals they use); one that uses a global in the shared state
kh kown 'probe kernel.mark("fs_open") { if (HIT) printf("own %s\n", $filename) }'
check "a handler that uses no global runs in the state of the CPU it hit: every run (-v)" \
	sh -c "grep -q '^own /tmp/kh-file$' kown.out && grep -q 'kernel handlers: \([1-9][0-9]*\) runs in the kernel (\1 in Lua, 0 native), 0 skipped; \1 in the state of the CPU hit' kown.out"
kh kshared 'global last probe kernel.mark("fs_open") { if (HIT) last = $filename } probe end { printf("last %s\n", last) }'
check "one that writes a global runs in the shared state: none in the CPU's own (-v)" \
	sh -c "grep -q '^last /tmp/kh-file$' kshared.out && grep -q 'kernel handlers: [1-9][0-9]* runs in the kernel ([1-9][0-9]* in Lua, 0 native), 0 skipped; 0 in the state of the CPU hit' kshared.out"

# --- -F without -o: the kernel handlers' output reaches the in-memory
# recorder, and marktap -A prints it
fpid=$(marktap -F -e 'probe kernel.mark("fs_open") { if ($filename == "/tmp/kh-file") println("flight ", $filename) }' 2>/dev/null)
marktap -A "$fpid" >kfl.out 2>kfl.err &
apid=$!
wait_for 60 sh -c "cat /tmp/kh-file >/dev/null; grep -q '^flight /tmp/kh-file$' kfl.out"
kill "$fpid" 2>/dev/null
wait $apid; arc=$?
show kfl 3
check "-F: a kernel handler's output in the recorder, printed by marktap -A, which ends with the session (exit $arc)" \
	sh -c "grep -q '^flight /tmp/kh-file$' kfl.out && [ $arc = 0 ]"

# --- printf widths and precisions of three digits, in the kernel as in begin
S=$(printf '%0300d' 0 | tr 0 s)
F='"[%0120d][%.150s][%-200s|][%*d][%#110x][%-+105d][%.101d]\n", -42, "'$S'", "ab", 101, 7, 255, 9, -3'
kh kfmt "probe begin { printf($F) }
probe kernel.mark(\"fs_open\") { if (HIT) { printf($F); exit() } }"
same_lines() { [ "$(grep -c '^\[' kfmt.out)" = 2 ] &&
	[ "$(grep '^\[' kfmt.out | head -1)" = "$(grep '^\[' kfmt.out | tail -1)" ]; }
check "printf %0120d, %.150s, %-200s, %*d, %#110x... in a kernel handler: as in begin" same_lines
check "(the handler ran in the kernel)" has kfmt '^\['

line=$(grep -m1 '^\[' kfmt.out)
check "and what begin prints is C's layout (${#line} characters)" \
	sh -c "[ ${#line} = 903 ] && echo '$line' | grep -q '^\[-0*42\]\[s\{150\}\]\[ab  *|\]'"

# --- strtol, tokenize and ctime in a kernel handler (mt_krt.lua's), as
# user space's in begin
SF='printf("%d %d %d %d|%s %s [%s]|%s|%s\n", strtol("-0x1f", 0), strtol("017", 0), strtol("FFz", 16),
  strtol("18446744073709551615", 10), tokenize("a,,b c,", ", "), tokenize(", "), tokenize(", "),
  ctime(951782400), ctime(-62167219201))'
kh kstrf "probe begin { $SF }
probe kernel.mark(\"fs_open\") { if (HIT) { $SF; exit() } }"
L='-31 15 255 -1|a b [c]|Tue Feb 29 00:00:00 2000|<invalid time>'
twice() { [ "$(grep -cxF -e "$L" kstrf.out)" = 2 ]; }
check "strtol, tokenize and ctime in a kernel handler: [$L], as in begin" twice
check "(the handler ran in the kernel)" has kstrf '^-31 '

# --- try/catch nested 50 deep: each level a function and a pcall
TRY='global deepest
function f(n) {
	try {
		if (n > 1) return f(n - 1) + 1
		error("deep")
	} catch (e) {
		deepest = n
		return 1
	}
}'
kh ktry "$TRY
probe kernel.mark(\"fs_open\") { if (HIT) { printf(\"levels %d, caught at %d\\n\", f(50), deepest); exit() } }" \
	-DMAXNESTING=60
check "try/catch nested 50 deep in a kernel handler (MAXNESTING=60): the innermost catches" \
	has ktry '^levels 50, caught at 1$'

# the same at interrupts and softirqs: the state's own stack, whatever
# stack the hit came on
printf '%s\n' "$TRY" 'global good, hits
probe kernel.mark("kernel_irq_entry"), kernel.mark("kernel_softirq_entry") {
  deepest = 0; if (f(50) == 50 && deepest == 1) good++
  if (++hits >= 300) exit() }
probe end { printf("irq good %d of %d\n", good, hits) }' >kirq.stp
marktap -v -DMAXNESTING=60 -DSTP_NO_OVERLOAD -c 'kreader nap 30' kirq.stp >kirq.out 2>&1
show kirq
check "try/catch 50 deep in handlers of interrupts and softirqs, every hit: $(grep '^irq good' kirq.out)" \
	sh -c "grep -q '^irq good \([1-9][0-9]*\) of \1$' kirq.out"
# runaway recursion: stap's MAXNESTING error ...
kh krec 'function r(n) { return r(n + 1) }
probe kernel.mark("fs_open") { if (HIT) println(r(0)) }'
check "runaway recursion in a kernel handler: stap's MAXNESTING error" grep -q '^ERROR: MAXNESTING exceeded' krec.out
# ... and with MAXNESTING out of reach, a try at every level: the C stack
# is measured, its end an error the try above catches, never an overflow
kh kdeep 'global depth, why
function g(n) {
	try { return g(n + 1) } catch (e) { if (why == "") { why = e; depth = n } return n }
}
probe kernel.mark("fs_open") { if (HIT) { g(1); printf("depth %d: %s\n", depth, why); exit() } }' \
	-DMAXNESTING=100000 -DMAXACTION=1000000
d=$(sed -n 's/^depth \([0-9]*\): .*C stack overflow.*/\1/p' kdeep.out)
echo "KHANDLERS-DEPTH try/catch levels in a kernel handler before the C stack's limit: ${d:-?}"
check "try at every level of a runaway recursion: 'C stack overflow' caught past 50 levels (${d:-?})" \
	sh -c "[ -n '$d' ] && [ '$d' -gt 50 ]"

# --- the group's arenas: marktap.ko's group_arena_kib
P=/sys/module/marktap/parameters/group_arena_kib
check "group_arena_kib is a parameter of the module (default 0: a sixteenth of RAM, at least 64 MiB)" \
	sh -c "[ \"\$(cat $P)\" = 0 ]"
echo 'probe("fs_open", function() end)' >arena.lua
chmod 644 arena.lua
# an arena per possible CPU (numbered from 0)
ncpu=$(($(sed 's/.*[-,]//' /sys/devices/system/cpu/possible) + 1))
# (each CPU's output ring counts with its arena: 64 KiB asked here)
limit=$((ncpu * (512 + 64)))
echo $limit >$P
kreader as 1000 4242 klua load -a 512 -r 64 arena.lua >arena1.out 2>&1
show arena1 2
check "as the group, arenas and output rings within group_arena_kib ($ncpu x (512 + 64) KiB of $limit) load" \
	grep -q '^load: ok' arena1.out
kreader as 1000 4242 klua load -a 512 arena.lua >arena2.out 2>&1
show arena2 2
check "as the group, past it with the default 1 MiB rings ($ncpu x (512 + 1024) KiB): refused, naming group_arena_kib" \
	grep -q "^load: error.*more than marktap.ko's group_arena_kib ($limit KiB)" arena2.out
klua load -a 512 arena.lua >arena3.out 2>&1
show arena3 2
check "root's arenas are not the group's: the same load as root" grep -q '^load: ok' arena3.out
klua load -r 100 arena.lua >ring1.out 2>&1
klua load -r 8192 arena.lua >ring2.out 2>&1
show ring1 1
check "an output ring that is no power of two, or past 4 MiB: refused" \
	sh -c "grep -q '^load: error' ring1.out && grep -q '^load: error' ring2.out"
# what a call prints waits in its CPU's ring until drained (klua drains
# after the call): 1.5 MB in a 64 KiB ring is lost past it, counted, in
# whole lines; a 4 MiB ring (marktap -s 4) holds it all
cat >ring.lua <<'EOF'
probe("fs_open", function() end)
function finish(cpu) if cpu == 0 then local l = string.rep("r", 99) .. "\n" for i = 1, 15000 do __out(l) end end end
EOF
chmod 644 ring.lua
klua run -m 100000000 -t 1000000 -r 64 ring.lua >ring3.out 2>&1
klua run -m 100000000 -t 1000000 -r 4096 ring.lua >ring4.out 2>&1
show ring3 1
tail -1 ring3.out | sed 's/^/# ring3: /'
tail -1 ring4.out | sed 's/^/# ring4: /'
n3=$(grep -c '^r\{99\}$' ring3.out) n4=$(grep -c '^r\{99\}$' ring4.out)
check "a call's 1.5 MB of output: lost past a 64 KiB ring (counted, whole lines: $n3 kept), whole in a 4 MiB one ($n4)" \
	sh -c "[ $n3 -gt 600 ] && [ $n3 -le 655 ] && grep -q ' lost=[1-9]' ring3.out &&
	       [ $n4 = 15000 ] && grep -q ' lost=0 ' ring4.out"
echo 0 >$P
kreader as 1000 4242 klua load -a 100000 arena.lua >arena4.out 2>&1
show arena4 2
check "the default bound refuses the group's $ncpu x 100000 KiB on this 512 MiB guest" \
	grep -q "^load: error.*group_arena_kib (65536 KiB)" arena4.out

# --- another task's /proc values, read in the kernel: task_parent(),
# task_state(), task_prio/nice/cpu, proc_mem_*, target_set_pid()
kh ktask 'probe kernel.mark("fs_open") { if (HIT) {
  t = task_current()
  printf("parent %d ppid %d\n", task_parent(t), ppid())
  printf("state %d prio %d nice %d cpu %d now %d\n", task_state(t), task_prio(t), task_nice(t), task_cpu(t), cpu())
  printf("size %d rss %d\n", proc_mem_size(), proc_mem_rss())
  printf("utime %d\n", task_utime() >= 0)
  printf("target child %d\n", target_set_pid(pid()))
  exit() } }'
check "task_parent(task_current()) in a kernel handler: ppid()" \
	awk '/^parent / { ok = ($2 == $4 && $2 > 0) } /kernel handlers: [1-9][0-9]* runs in the kernel/ { k = 1 } END { exit !(ok && k) }' ktask.out
check "task_state running (0), task_prio 20, task_nice 0, task_cpu the hit's cpu()" \
	awk '/^state / { ok = ($2 == 0 && $4 == 20 && $6 == 0 && $8 == $10) } END { exit !ok }' ktask.out
check "proc_mem_size and proc_mem_rss of cat: pages, more than 0" \
	awk '/^size / { ok = ($2 > 0 && $4 > 0 && $4 <= $2) } END { exit !ok }' ktask.out
check "target_set_pid(pid()) of -c's command: true in the kernel" grep -q '^target child 1$' ktask.out
kreader as 1000 4242 sh -c "marktap -v -c 'sleep 1' -e 'global c probe syscall_any { if (target() && !target_set_pid(pid())) next; c[execname()]++ } probe end { foreach (e in c) printf(\"%s %d\\n\", e, c[e] > 0) }'" >ktask2.out 2>&1
show ktask2
check "the target_set_pid() filter of syscall_any runs in the kernel as the group" \
	sh -c "grep -q '^sleep 1$' ktask2.out && grep -q 'kernel handlers: [1-9][0-9]* runs in the kernel' ktask2.out"
kh ktask4 'probe kernel.mark("fs_open") { if (HIT) { println("cmdline ", cmdline_str(), " arg1 ", cmdline_arg(1)) exit() } }'
check "cmdline_str() and cmdline_arg() of the current process, read in the kernel" \
	has ktask4 '^cmdline cat /tmp/kh-file arg1 /tmp/kh-file$'
kh ktask3 'probe kernel.mark("fs_open") { if (HIT) { println(__marktap_task_stat(pid(), 22)) exit() } }'
check "a /proc field the module does not read: an error naming the ones it does" \
	grep -q 'ERROR: .*field 22 of /proc/PID/stat is not read in the kernel' ktask3.out

# stap's register helpers in a system call's probe: its arguments
# (nd_syscall.kill as killsnoop-nd.stp reads it; @entry of pointer_arg)
marktap -v -c 'sh -c "kill -0 \$\$; exec cat /tmp/kh-file >/dev/null"' -e 'probe nd_syscall.kill {
  if (int_arg(2) == 0 && uint_arg(1) == pid()) printf("kill self %s\n", execname()) }
probe nd_syscall.openat.return { if (user_string(@entry(pointer_arg(2)), "") == "/tmp/kh-file")
  printf("open %s %d\n", user_string(@entry(pointer_arg(2))), retval) }' >ksysarg.out 2>&1
show ksysarg
check "uint_arg(1), int_arg(2) in nd_syscall.kill: the call's pid and signal" grep -q '^kill self sh$' ksysarg.out
check "@entry(pointer_arg(2)) in nd_syscall.openat.return: the file name's address" \
	sh -c "grep -q '^open /tmp/kh-file 3$' ksysarg.out && grep -q 'kernel handlers: [1-9][0-9]* runs in the kernel' ksysarg.out"

# syscall.*.return as errsnoop.stp probes it: the some 360 aliases on each
# marker of their pair are one handler there, which picks the call by
# the thread's entry (translator/elab_probe.c), not 360 handlers at every
# call, each looking it up, which took the CPU past stap's overload guard.
# 300 failing stat()s of -c's shell, a pause every 20: the session runs
# to its end and counts them under their call's name (all but those whose
# hits were skipped, the shared state busy on the other CPU: not a limit
# here).
cat >kerr.stp <<'EOF2'
global error, trace
probe syscall.* { trace[tid()] = argstr }
probe syscall.*.return {
  errno = errno_p(retval)
  if (errno != 0 && pid() == target() && isinstr(trace[tid()], "/tmp/kerr-none"))
    error[sprintf("%s %s", errno_str(errno), name)] <<< 1
  delete trace[tid()]
}
probe end { foreach (k in error) printf("%d %s\n", @count(error[k]), k) }
EOF2
marktap -v -DMAXSKIPPED=1000000 -c 'sh -c "for i in \$(seq 300); do test -e /tmp/kerr-none\$i; [ \$((i % 20)) = 0 ] && sleep 0.05; done; true"' \
	kerr.stp >kerr.out 2>&1
echo "kerr exit $?" >>kerr.out
show kerr 8
check "syscall.*.return in the kernel over 300 failing calls: counted by name, no overload error, exit 0" \
	sh -c "awk '\$2 == \"ENOENT\" && \$3 ~ /^(stat|newfstatat|statx)\$/ && \$1 > 250 && \$1 <= 300 { f = 1 } END { exit !f }' kerr.out &&
	       ! grep -q ERROR kerr.out &&
	       grep -q '^kerr exit 0$' kerr.out && grep -q 'kernel handlers: [1-9][0-9]* runs in the kernel' kerr.out"
# and the guard still ends a session whose handlers do take the CPU
# (-T bounds it: the command loops until the guard ends the session;
# MAXACTION_US raised so that one run a loaded host stretches past 20 ms
# is not what ends it)
marktap -T 60 -DMAXACTION_US=1000000 -c 'sh -c "while :; do test -e /tmp/kerr-none; done"' \
	-e 'probe syscall.*.return { s = "" for (i = 0; i < 300; i++) s .= "x" }' >kspin.out 2>&1
echo "kspin exit $?" >>kspin.out
show kspin 4
check "a syscall.*.return handler that spins: stap's overload error ends the session" \
	grep -q '^ERROR: probe overhead exceeded threshold' kspin.out

# -t: the hits and cycles of handlers run in marktap.ko come home with
# the globals: the report's count for the marker handler is the count
# the handler kept itself, on stap's line form
marktap -t -c 'sh -c "for i in 1 2 3 4 5 6 7 8; do cat /proc/self/stat >/dev/null; done"' \
	-e 'global n probe kernel.mark("kernel_arch_syscall_entry") { n++ }
	probe end { printf("n=%d\n", n) }' >ktime.out 2>&1
echo "ktime exit $?" >>ktime.out
show ktime 6
check "-t: the kernel handler's hits in stap's probe hit report, as many as it counted itself" \
	sh -c "grep -q '^ktime exit 0$' ktime.out && grep -q '^----- probe hit report: $' ktime.out &&
	       h=\$(sed -n 's/^kernel.mark(\"kernel_arch_syscall_entry\"), (<input>:1:10), hits: \\([0-9]*\\), cycles: [0-9]*min\\/[0-9]*avg\\/[0-9]*max, variance: [0-9]*, from: kernel.mark(\"kernel_arch_syscall_entry\"), index: 0$/\\1/p' ktime.out) &&
	       [ -n \"\$h\" ] && [ \"\$h\" -gt 8 ] && grep -q \"^n=\$h\\$\" ktime.out && grep -q '^end, (<input>:2:2), hits: 1, ' ktime.out"

# the kernel said nothing
dmesg >dmesg.out
BAD='stack overflow|stack guard|double fault|stack-protector|soft lockup|WARNING:|BUG:|Oops:'
grep -E "$BAD" dmesg.out | head -5 | sed 's/^/# dmesg: /'
check "dmesg: no stack overflow, warning or oops" sh -c "! grep -qE '$BAD' dmesg.out"
