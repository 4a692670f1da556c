#!/bin/sh
# stap's tapset functions that need no kernel memory, as stap documents
# them: device numbers, byte order, durations and sizes, wait statuses,
# randint, speculation, assert, the environment, task ids; and the user_*
# readers on a <sys/sdt.h> probe's char * operand (sdt-target's app:name).
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
T=$top_builddir/tests/script/sdt-target
D=$top_builddir/tests/script/tapset-target
[ -x "$MTBIN" ] && [ -x "$T" ] && [ -x "$D" ] || skip_all "build first (make check builds tests/script/sdt-target, tapset-target)"
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"
export MARKTAP_TAPSET_DIR
mt() { timeout 60 "$MTBIN" "$@"; }
b() { mt -e "probe begin { $1; exit() }" 2>&1; }
plan 53

is "$(b 'printf("%d %d %d %d", MAJOR(MKDEV(8, 17)), MINOR(MKDEV(8, 17)), MKDEV(259, 1048575), usrdev2kerndev(0x1234567))')" \
	"8 17 272629759 877662823" "MAJOR, MINOR, MKDEV, usrdev2kerndev (st_dev's layout)"
is "$(b 'printf("%x %x %x %x %x", htons(0x1234), htonl(0x12345678), htonll(0x0102030405060708), ntohs(htons(0xbeef)), ntohl(0x78563412))')" \
	"3412 78563412 807060504030201 beef 12345678" "htons, htonl, htonll, ntohs, ntohl"
is "$(b 'printf("%x %x %x %x %x", big_endian2(0x11223344), big_endian4(0x11223344), little_endian2(0x11223344), little_endian4(-1), little_endian8(-1))')" \
	"4433 44332211 3344 ffffffff ffffffffffffffff" "big_endian narrows and swaps, little_endian narrows"
is "$(b 'printf("%s %s %s %s", msecs_to_string(123456), usecs_to_string(61000001), nsecs_to_string(5), cputime_to_string(1500000000))')" \
	"2m3.456s 1m1.000001s 0m0.000000005s 0m1.500s" "msecs/usecs/nsecs/cputime_to_string as stap prints durations"
is "$(b 'printf("[%s][%s][%s][%s][%s]", bytes_to_string(100), bytes_to_string(5000), bytes_to_string(50000), bytes_to_string(5000000), bytes_to_string(500000000000))')" \
	"[  100][4.88K][48.8K][4.76M][ 465G]" "bytes_to_string: bytes, then K/M/G with 2, 1 or 0 decimals"
is "$(b 'printf("%d %d %d %d", WIFEXITED(0x300), WEXITSTATUS(0x300), WIFEXITED(9), WTERMSIG(9))')" "1 3 0 9" "WIFEXITED, WEXITSTATUS, WTERMSIG"
is "$(b 'printf("%d %d %s", AF_INET(), AF_INET6(), format_ipaddr(0x0100007f, AF_INET()))')" "2 10 127.0.0.1" "AF_INET, AF_INET6, format_ipaddr of IPv4"
out=$(mt -e 'global seen probe begin { for (i = 0; i < 2000; i++) { r = randint(7); if (r < 0 || r >= 7) bad++; seen[r] = 1 } printf("%d %d", bad, 0 in seen && 6 in seen); exit() }' 2>&1)
is "$out" "0 1" "randint(7) stays in [0, 7) and reaches both ends in 2000 draws"
like "$(b 'x = randint(2000000)')" "ERROR: randint: range too wide" "randint above 1048576: stap's error"
is "$(b 'a = speculation(); b = speculation(); speculate(a, "x"); speculate(b, "no "); speculate(a, "y\n"); discard(b); commit(a); commit(b)')" \
	"xy" "speculate/commit print in order, discard drops"
is "$(b 'assert(1, "fine"); try { assert(0, "boom") } catch (e) { println(e) } try { assert(0) } catch (e) { print(e) }')" \
	"boom
Assertion failed" "assert(expr, msg) and assert(expr) as stap's"
is "$(MARKTAP_TF_VAR=value42 mt -e 'probe begin { printf("%s|%s|", env_var("MARKTAP_TF_VAR"), env_var("MARKTAP_TF_NONE")); exit() }' 2>&1)" \
	"value42||" "env_var: set and unset"
is "$(b 'printf("%d %d %d %d", task_uid(pid()) == uid(), task_euid(pid()) == euid(), task_gid(pid()) == gid(), task_egid(pid()) == egid())')" \
	"1 1 1 1" "task_uid/euid/gid/egid of our own task"
# in a session of its own (a CI container's session leader may lie outside
# the pid namespace: sid 0), marktap leads its session and process group
is "$(setsid -w sh -c 'exec "$0" -e "probe begin { printf(\"%d %d %d\", pgrp() == pid(), sid() == pid(), pexecname() != \"\"); exit() }"' "$MTBIN" 2>&1)" \
	"1 1 1" "pgrp, sid, pexecname"
is "$(b 'printf("%d %d", is_return(), ns_pid() == pid())')" "0 1" "is_return in begin, ns_pid"
like "$(b 'printf("%s", task_time_string())')" "^usr: [0-9]+m[0-9]+\\.[0-9]{3}s, sys: [0-9]+m[0-9]+\\.[0-9]{3}s$" "task_time_string"

# user memory through an SDT probe's char * operand ("even", "odd")
P="process(\"$T\").mark(\"name\")"
out=$(mt -c "$T count 2" -e "probe $P { printf(\"%d %x %d %d|\", user_char(\$arg1), user_int(\$arg1), user_uint8(\$arg1 + 1), user_short(\$arg1) == (user_char(\$arg1) | user_char(\$arg1 + 1) << 8)) }" 2>&1 | head -1)
is "$out" "101 6e657665 118 1|111 64646f 100 1|guarded 0" "user_char, user_int, user_uint8, user_short read the process's memory"
out=$(mt -c "$T count 1" -e "probe $P { printf(\"[%s][%s][%s]\", user_string_quoted(\$arg1), user_string_n_quoted(\$arg1, 2), user_string2(0, \"bad\")) }" 2>&1 | head -1)
is "$out" "[\"even\"][\"ev\"][bad]guarded 0" "user_string_quoted, user_string_n_quoted, user_string2 on a fault"
out=$(mt -c "$T count 1" -e "probe $P { printf(\"%d %d|\", user_int(0), user_long(8)) }" 2>&1 | head -1)
is "$out" "0 0|guarded 0" "user_int/user_long of a bad address: 0, as stap's"
out=$(mt -c "$T count 1" -e "probe $P { printf(\"%d|\", user_int_error(16)) }" 2>&1)
like "$out" "ERROR: user int copy fault at 0x10" "user_int_error of a bad address: stap's error"
out=$(mt -c "$T count 1" -e "probe $P { printf(\"%d|\", user_long_warn(16)) }" 2>&1)
like "$out" "WARNING: user long copy fault at 0x10" "user_long_warn warns"
like "$out" "0\\|" "user_long_warn returns 0"
# where there is no process memory, the readers say so
is "$(b 'printf("%d", user_int(4096))')" "0" "user_int in begin: marktap's own memory, 0 at a bad address"
like "$(b 'x = kernel_int(4096)')" "ERROR: kernel_int: kernel memory (can only be read in kernel handlers|is read by marktap.ko: no /dev/marktap)" \
	"kernel_int outside the kernel: an ERROR naming why"

# UTF-16 and UTF-32 strings, buffers and guru stores in tapset-target's
# memory (data:bufs: utf16, utf32, a lone surrogate, a buffer, a char array)
B="process(\"$D\").mark(\"bufs\")"
out=$(mt -c "$D" -e "probe $B { printf(\"[%s][%s][%s][%s]\", user_string_utf16(\$arg1), user_string_utf32(\$arg2), user_string_quoted_utf16(\$arg1), user_string_utf16(0, \"bad\")) }" 2>&1 | head -1)
is "$out" "[hé€😀][hé€😀][\"h\\u00E9\\u20AC\\U0001F600\"][bad]original" "user_string_utf16/utf32 decode surrogate pairs, _quoted escapes as string_quoted; err_msg on a fault"
out=$(mt -c "$D" -e "probe $B { x = user_string_utf16(\$arg3) }" 2>&1)
like "$out" "ERROR: invalid UTF-16 character U\\+D800 at 0x" "a lone surrogate: stap's error"
like "$(mt -c "$D" -e "probe $B { x = user_string_utf32(8) }" 2>&1)" "ERROR: user string copy fault at 0x8 " "utf32 of a bad address: stap's fault"
out=$(mt -c "$D" -e "probe $B { printf(\"%s|%s|%s|%s\", user_buffer_quoted(\$arg4, 5, 100), user_buffer_quoted(\$arg4, 5, 8), user_buffer_quoted(8, 4, 100), user_string_quoted_utf32(8)) }" 2>&1 | head -1)
is "$out" "\"a\\000b\\nc\"|\"a\"...|0x8|0x8original" "user_buffer_quoted: NULs escaped, an escape the cut splits left out, the address when unreadable"
like "$(mt -c "$D" -e "probe $B { x = user_buffer_quoted_error(8, 4, 100) }" 2>&1)" "ERROR: Unable to access user space data at 0x8" "user_buffer_quoted_error"
out=$(mt -g -c "$D" -e "probe $B { set_user_string(\$arg5, \"changed\"); set_user_char(\$arg5, 67); set_user_short(\$arg5 + 2, 0x4141); set_user_string_n(\$arg5 + 5, 2, \"xyz\") }" 2>&1)
is "$out" "ChAAgx" "set_user_string, _char, _short, _string_n write the process's memory (-g)"
like "$(mt -g -c "$D" -e "probe $B { set_user_long(16, 1) }" 2>&1)" "ERROR: user long copy fault at 0x10" "set_user_long of a bad address: stap's error"
like "$(mt -p2 -e 'probe begin { set_user_int(0, 1) }' 2>&1)" "semantic error: function may not be used unless -g is specified: identifier 'set_user_int'" "set_user_* need -g, as stap's"
like "$(mt -g -e 'probe begin { set_user_int(0, 1) }' 2>&1)" "ERROR: set_user_int: only handlers that run in the traced process can write its memory" "set_user_* in marktap's own handlers: an error naming why"
like "$(mt -g -p2 -e 'probe begin { set_kernel_int(0, 1) }' 2>&1)" "semantic error: set_kernel_int: marktap.ko does not write kernel memory" "set_kernel_*: refused at pass 2 with the reason"
# floating point (doubles in longs), queue statistics, names both ways
is "$(b 'a = string_to_fp("1.5"); b = long_to_fp(2); printf("%s %s %s %s %s %x", fp_to_string(fp_add(a, b), 3), fp_to_string(fp_sub(a, b), 2), fp_to_string(fp_mul(a, b), 1), fp_to_string(fp_sqrt(b), 6), fp_to_string(fp_rem(long_to_fp(7), b), 2), a)')" \
	"3.500 -0.50 3.0 1.414214 -1.00 3ff8000000000000" "fp_add, fp_sub, fp_mul, fp_sqrt, fp_rem (IEEE's remainder), fp_to_string"
is "$(b 'printf("%s %s %s", fp_to_string(fp_div(string_to_fp("1.5"), long_to_fp(2)), 3), fp_to_string(fp_div(long_to_fp(-7), long_to_fp(2)), 1), fp_to_string(fp_div(long_to_fp(1), long_to_fp(0)), 2))')" \
	"0.750 -3.5 inf" "fp_div: IEEE's division (1/0 an infinity, no error)"
is "$(b 'h = string_to_fp("2.5"); printf("%d %d %d %d %d %d %d %s", fp_eq(h, h), fp_lt(h, long_to_fp(3)), fp_le(long_to_fp(3), h), fp_to_long(h, 0, 0), fp_to_long(h, 4, 0), fp_to_long(string_to_fp("-2.5"), 2, 0), fp_to_long(string_to_fp("2.0"), 6, 0), fp_to_string(fp32_to_fp64(0x3fc00000), 2))')" \
	"1 1 0 2 3 -3 2 1.50" "fp_eq, fp_lt, fp_le, fp_to_long's rounding modes, fp32_to_fp64"
like "$(b 'x = string_to_fp("1.2.3")')" "ERROR: invalid format" "string_to_fp of a bad number: stap's error"
is "$(mt -e 'global t function qs_time:long () { return t } probe begin { t = 1000; qsq_start("q"); qs_wait("q"); t = 1100; qs_wait("q"); t = 1200; qs_run("q"); t = 1500; qs_done("q"); t = 1600; qs_run("q"); t = 2000; qs_done("q"); t = 3000; qsq_print("q"); exit() }' 2>&1)" \
	"q: 1000.000 ops/s, 0.350 qlen, 700 await, 350 svctm, 30% wait, 35% util" "qs_wait/run/done and qsq_print, on the script's own qs_time()"
is "$(b 'printf("%d %d %d %d %s %s", sock_fam_str2num("INET6"), sock_prot_str2num("UDP"), sock_state_str2num("CONNECTED"), sock_fam_str2num("nosuch"), sock_state_num2str(1), sock_type_num2str(0x802))')" \
	"10 17 3 -1 UNCONNECTED DGRAM" "sock_*_str2num and num2str"
is "$(b 'printf("%s|%s|%s|%s|%d|%d", sigset_mask_str(0x4002), sa_flags_str(0x14000004), sa_handler_str(1), sa_handler_str(-1), rlimit_from_str("RLIMIT_NOFILE"), rlimit_from_str("x"))')" \
	"2,15|SIGINFO|RESTART|RESTORER|ignored|error|7|-1" "sigset_mask_str, sa_flags_str, sa_handler_str, rlimit_from_str"
is "$(b 'printf("%s|%s|%s|%s|%d %d", return_str(1, -2), return_str(2, 31), return_str(3, 31), return_str(1, -5000), vm_fault_contains(4, 3), vm_fault_contains(0, 2))')" \
	"-2 (ENOENT)|0x1f|037|-5000|1 1" "return_str, vm_fault_contains"
is "$(b 'if ("abc" =~ "a(x)?(b)") printf("%s %d %s", matched_str(), ngroups(), matched(2))')" "ab 3 b" "matched_str, ngroups (the whole match and unmatched groups counted)"
is "$(b 'printf("%s %s %d %s %d %d", probe_type(), pnlabel(), remote_id(), remote_uri(), stp_pid() == pid(), @MAXSTRINGLEN)')" "begin  -1  1 512" "probe_type, pnlabel, remote_id, remote_uri, stp_pid, @MAXSTRINGLEN"
like "$(b 'printf("%d %d %d %d|%s", task_start_time(pid()) > 0, task_open_file_handles(pid()) >= 3, task_max_file_handles(pid()) > 0, is_sig_blocked(pid(), 9), proc_mem_string())')" \
	"^1 1 1 0\\|size: .*, rss: .*, shr: .*, txt: .*, data: " "task_start_time, task_*_file_handles, is_sig_blocked, proc_mem_string"
# (the chain from init runs through every shell and make above the test:
# room for it past the default 512 bytes)
like "$(mt -DMAXSTRINGLEN=16384 -e 'probe begin { println(task_ancestry(pid(), 1)); exit() }' 2>&1)" "=>marktap\\([0-9]+m[0-9]+\\.[0-9]{9}s\\)\$" "task_ancestry with start times"
like "$(b 'printf("%s|%d", sprint_loadavg(), get_loadavg_index(0) >= 0)')" "^[0-9]+\\.[0-9]{2} [0-9]+\\.[0-9]{2} [0-9]+\\.[0-9]{2}\\|1\$" "sprint_loadavg, get_loadavg_index"
is "$(b 'discard(1); delete_stopwatch("w"); print("ok")')" "ok" "discard and delete_stopwatch alone elaborate"
out=$(mt -c "$T count 1" -e "probe $P { printf(\"%d %d|\", ustack(0) == uaddr(), ucallers(0) == sprintf(\"0x%x\", uaddr())) }" 2>&1 | head -1)
is "$out" "1 1|guarded 0" "ustack(0) and ucallers(0): the probe's address"
like "$(b 'x = ustack(0)')" "ERROR: reached end of stack before unwinding to level 0" "ustack without a user stack: stap's error"
like "$(mt -p2 -e 'probe begin { ftrace("x") }' 2>&1)" "semantic error: ftrace: marktap writes no ftrace ring buffer" "ftrace: refused at pass 2 with the reason"
like "$(mt -p2 -e 'probe begin { printk(1, "x") }' 2>&1)" "semantic error: function may not be used unless -g is specified" "printk without -g: stap's error"
tag="marktap-printk-$$"
out=$(mt -g -e "probe begin { printk(6, \"$tag\"); exit() }" 2>&1)
if [ -w /dev/kmsg ] && dmesg >/dev/null 2>&1; then
	is "$out$(dmesg | grep -c "$tag")" "1" "printk with -g: the line in the kernel log (/dev/kmsg)"
else
	skip 1 "printk with -g: /dev/kmsg not writable or the log not readable here"
fi
done_testing
