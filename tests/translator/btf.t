#!/bin/sh
# kernel.function / kprobe.function / @cast through the kernel's BTF
# (translator/btf.c), at -L, -l, -p2 and -p3, without debuginfo.  The BTF
# is the Debian guest kernel's that the kernel tests cache (MARKTAP_BTF,
# -r its release), else the running kernel's /sys/kernel/btf/vmlinux: the
# facts asserted (vfs_read's parameters, struct file's f_flags) hold for both.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
use_kernel_btf
plan 92
# shellcheck disable=SC2086
mt() { "$MT" $R "$@" 2>&1; }

# -L: parameters with their types, as stap prints them from DWARF
is "$(mt -L 'kernel.function("vfs_read")')" \
	'kernel.function("vfs_read") $file:struct file* $buf:char* $count:size_t $pos:loff_t*' \
	"-L kernel.function(\"vfs_read\"): file, buf, count, pos with their types"
is "$(mt -L 'kernel.function("vfs_read").return')" \
	'kernel.function("vfs_read").return $file:struct file* $buf:char* $count:size_t $pos:loff_t* $return:ssize_t' \
	".return adds \$return with the function's type"
like "$(mt -L 'kernel.function("do_sys_openat2")')" '\$filename:char const\*' "const as stap writes it: char const*"
out=$(mt -l 'kernel.function("vfs_*")')
n=$(echo "$out" | grep -c '^kernel\.function("vfs_[a-z_0-9]*")$')
[ "$n" -gt 20 ] && [ "$n" = "$(echo "$out" | wc -l)" ]; ok $? "-l of a glob: every vfs_* function of BTF, one a line ($n)"
is "$(mt -l 'kernel.function("vfs_read").call')" 'kernel.function("vfs_read")' ".call is the function's entry"
is "$(mt -l 'kprobe.function("vfs_read").return')" 'kprobe.function("vfs_read").return' "kprobe.function(...).return lists"

# kprobe.statement(ADDR).absolute, kernel.statement(ADDR).absolute: guru's
is "$(mt -g -l 'kprobe.statement(0xffffffff81000000).absolute')" 'kprobe.statement(0xffffffff81000000).absolute' \
	"-l kprobe.statement(ADDR).absolute: the address in hex"
like "$(mt -p2 -e 'probe kernel.statement(0xffffffff81000000).absolute { }')" \
	'kernel.statement\(0xffffffff81000000\).absolute: an absolute address needs guru mode \(-g\)' "without -g: refused, naming -g"
abs_dir=$(mktemp -d)
(cd "$abs_dir" && "$MT" $R -g -p4 -m abs -e 'probe kernel.statement(0xffffffff81000010).absolute { println(pp()) }' >/dev/null 2>&1)
is "$(grep -o '^-- mark: probe_0 kprobe:[0-9a-fx]*' "$abs_dir/abs.mtm")" '-- mark: probe_0 kprobe:0xffffffff81000010' \
	"the binding marktap.ko gets: kprobe:0xADDRESS"
rm -rf "$abs_dir"
like "$(mt -p2 -e 'probe kernel.statement("do_sys_open@fs/open.c:*") { }')" \
	'no match \(a source line needs the kernel.s DWARF debuginfo; marktap reads BTF, which has no lines' \
	"kernel.statement(\"F@FILE:LINE\"): refused, saying a line needs DWARF"
like "$(mt -g -p2 -e 'probe kprobe.statement(0xffffffff81000000).absolute { println($x) }')" \
	"a probe at an absolute address has no variables" "\$x there: no variables, saying why"

# -p3: what crosses to marktap.ko: the binding and the reads
p3=$(mt -p3 -e 'probe kernel.function("vfs_read") { printf("%d %d\n", $file->f_flags, $count) }')
like "$p3" '__mt_bind|rt\.probe\("probe_0"' "a kernel.function probe is a handler like a marker's"
like "$p3" 'rt\.kernel_read\(\(a1 \+ [0-9]+\), 4, false' "\$file->f_flags: a 4-byte unsigned read at file + offset, in the kernel"
off=$(echo "$p3" | sed -n 's/.*rt\.kernel_read((a1 + \([0-9]*\)), 4.*/\1/p')
p3c=$(mt -p3 -e 'probe kernel.function("vfs_read") { println(@cast($file, "file")->f_flags) }')
like "$p3c" "rt\\.kernel_read\\(\\(a1 \\+ $off\\), 4, false" "@cast(\$file, \"file\")->f_flags: the same offset ($off)"
p3=$(mt -p3 -e 'probe kernel.function("vfs_read").return { println($return, kernel_string(@cast($file, "file")->f_path->dentry->d_name->name)) }')
like "$p3" 'function\(mk_name, mk_fmt, a1, a2, a3, a4, a5, a6, a7\)' ".return: the six arguments then the return value"
like "$p3" 'rt\.kernel_read\(\(rt\.kernel_read\(\(a1 \+ [0-9]+\), 8, false' "a chain through an embedded struct then pointers: one read per pointer"
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { println($$parms) }')" 'file=%#x buf=%#x count=%#x pos=%#x' "\$\$parms: the parameters by name, as stap"
like "$(mt -p3 -e 'probe kernel.function("do_sys_openat2") { println($dfd) }')" '0xffffffff\) ~ 0x80000000' "an int parameter: cut to 32 bits, signed"
like "$(mt -p3 -e 'probe begin { println(@cast(0, "task_struct")->sched_reset_on_fork) exit() }')" '>> [0-9]+\) & 0x1\)' "a bitfield member: read, shifted, masked"

# refused, with the reason
like "$(mt -p2 -e 'probe kernel.function("vfs_reed") { }')" \
	'semantic error: while resolving probe point kernel.function\("vfs_reed"\): no match \(no function of the kernel.s BTF .*\(similar: vfs_read' \
	"a function BTF lacks: stap's no match, why, and similar names"
like "$(mt -p2 -e 'probe kernel.function("vfs_read@fs/read_write.c:450") { }')" "needs the kernel's DWARF debuginfo" "@file:line needs DWARF: refused saying so"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { println($nosuch) }')" \
	"unable to find local 'nosuch'.* \\\$file:struct file\\*" "an unknown \$variable: stap's error, with the parameters"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { println($return) }')" '\$return is only in a .return probe' "\$return outside .return"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { println($file->no_member) }')" "struct has no member 'no_member'" "a member struct file lacks"
like "$(mt -p2 -e 'probe kprobe.function("vfs_read") { println($file) }')" 'kprobe.function probes have no variables' "kprobe.function has no \$variables, as in stap"
like "$(mt -p2 -e 'probe kernel.function("*") { }')" 'functions match; marktap.ko probes at most 1024' "a glob over thousands of functions: refused by its count"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { println(@cast($file, "no_such_struct")->x) }')" 'type "no_such_struct" is not in the kernel.s BTF' "@cast to a type BTF lacks"
like "$(env -u MARKTAP_BTF "$MT" -r 0.0-none -p2 -e 'probe kernel.function("vfs_read") { }' 2>&1)" \
	'no BTF for kernel 0.0-none: .*/sys/kernel/btf/vmlinux.*MARKTAP_BTF.*/usr/lib/debug/boot/vmlinux-0.0-none.*/boot/vmlinux-0.0-none' \
	"another release without BTF: every place looked at, named"
like "$(MARKTAP_BTF=/nonexistent "$MT" -r 0.0-none -p2 -e 'probe kernel.function("vfs_read") { }' 2>&1)" \
	'cannot read BTF from /nonexistent' "MARKTAP_BTF that cannot be read"
printf '0x0-0x0\tvfs_read\n0x0-0x0\tvfs_readv [x]\n' >"$TMP/blacklist"
like "$(MARKTAP_KPROBE_BLACKLIST=$TMP/blacklist mt -p2 -e 'probe kernel.function("vfs_read") { }')" \
	"vfs_read is on the kernel's kprobe blacklist \\($TMP/blacklist\\)" "a function of the kprobe blacklist: refused by name"
is "$(MARKTAP_KPROBE_BLACKLIST=$TMP/blacklist mt -l 'kernel.function("vfs_read*")')" 'kernel.function("vfs_readlink")' \
	"a glob leaves the blacklisted functions out"
# native plans (handlers that only add) take a field as it is: not a read
p3=$(mt -p3 -e 'global c probe kernel.function("vfs_read") { c[$file->f_flags]++ }')
case $p3 in *rt.native*) ok 1 "c[\$file->f_flags]++ has no native plan (it would count \$file)" ;;
*) like "$p3" 'rt\.kernel_read' "c[\$file->f_flags]++ has no native plan: the read runs in Lua" ;; esac
like "$(mt -p3 -e 'global c probe kernel.function("vfs_read") { c[$count]++ }')" 'rt\.native\("probe_0", "1 #1 a3"' \
	"c[\$count]++ (a plain 64-bit parameter) keeps its native plan"
# @entry in .return: the call's parameter, which the module kept at entry
like "$(mt -p3 -e 'probe kernel.function("vfs_read").return { println(@entry($count), @entry($file)->f_flags) }')" \
	'rt_println\(a3, rt\.kernel_read\(\(a1 \+ [0-9]+\), 4' "@entry(\$count), @entry(\$file)->f_flags: the entry's values"
# @entry of any other expression: evaluated at the call, where the module
# fires the return's handler too (binding ":entry", fields cookie and entry)
p3=$(mt -p3 -e 'global t probe kernel.function("vfs_read").return { t <<< gettimeofday_ns() - @entry(gettimeofday_ns()); println(@entry($file->f_flags), @entry(execname())) }')
like "$(printf '%s\n' "$p3" | tr '\n' ' ')" 'if a9 ~= 0 then +ev_0\[a8\] = \{rt_d_gettimeofday_ns\(\), rt\.kernel_read\(\(a1 \+ [0-9]+\), 4, false, [^}]*\), rt_d_execname\(\)\} +return +end +local ev = ev_0\[a8\]' \
	"at the call: the expressions kept under the call's cookie (a member read at the call too)"
like "$p3" 'rt_d_gettimeofday_ns\(\) - ev\[1\]' "at the return: @entry's value taken back"
# two tracepoints that name nothing: two errors with similar names, no crash
# (the similar names once freed the list of tracepoints the next used)
out=$(mt -p2 -e 'probe kernel.trace("mm_anon_fault") { } probe kernel.trace("kvm_exitt") { }'); rc=$?
like "$rc $out" '^1 semantic error: while resolving probe point kernel.trace\("mm_anon_fault"\): no match \(similar tracepoints: ' \
	"unknown tracepoints: stap's error with similar names, exit 1 (not a crash)"
# '&' of a member, constant subscripts, @cast's sizeof and offsetof macros
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { printf("%d %d\n", &$file->f_pos, $file->f_path->dentry->d_name->name[2]) }')" \
	'rt_printf\("%d %d\\n", \(a1 \+ [0-9]+\), rt\.kernel_read\(\(rt\.kernel_read\(' "&\$file->f_pos: the address, no read; ->name[2] read at name + 2"
like "$(mt -p3 -e 'probe begin { printf("%d %d %d\n", @cast_sizeof("struct file"), @offsetof("struct file", f_pos), @type_defined("struct nosuchtype")) }')" \
	'rt_printf\("%d %d %d\\n", \(0 \+ [1-9][0-9]*\), \(0 \+ [1-9][0-9]*\), 0\)' "@cast_sizeof, @offsetof, @type_defined from BTF"
# stap's headers of user space: @cast(p, "T", "<h.h>"), what cc -gbtf
# makes of them; here addresses only (sizeof, offsetof), as C computes them
printf '%s\n' '#include <stdio.h>' '#include <stddef.h>' '#include <netinet/in.h>' '#include <sys/stat.h>' \
	'int main(void) { printf("%zu %zu %zu\n", sizeof(FILE), offsetof(struct sockaddr_in, sin_port), sizeof(struct stat)); return 0; }' >"$TMP/hdr.c"
cc -o "$TMP/hdr" "$TMP/hdr.c" && want=$("$TMP/hdr")
is "$(mt -e 'probe begin { printf("%d %d %d\n", @cast_module_sizeof("<stdio.h>", "FILE"),
  &@cast(0, "struct sockaddr_in", "<sys/types.h><netinet/in.h>")->sin_port, &@cast(0, "struct stat", "</usr/include/x86_64-linux-gnu/sys/stat.h>")[1]) }')" \
	"$want" "@cast with <headers>: sizeof(FILE) (a typedef), offsetof and sizeof as C gives them ($want)"
like "$( (mt -p2 -e 'probe begin { println(@cast(0, "FILE", "<stdio.h>")->_flags) }'; echo "rc=$?") | tr '\n' ' ')" \
	"a header's types are read in a process probe; here marktap computes addresses with them.*rc=1" \
	"a read through a header's type outside a process: refused at -p2 with the reason"
like "$( (mt -p2 -e 'probe begin { println(&@cast(0, "FILE", "<nosuch-header.h>")[1]) }'; echo "rc=$?") | tr '\n' ' ')" \
	'cannot compile <nosuch-header.h> with cc -gbtf \(GCC 12 or later\): fatal error: nosuch-header.h: No such file or directory.*rc=1' \
	"a header cc cannot find: cc's error, exit 1"
like "$(mt -p2 -e 'probe begin { println(&@cast(0, "FILE", "stdio.h")[1]) }')" \
	'only the kernel.s types and C headers. are read here \("kernel", "kernel:MODULE", "<header.h>"\)' "a module that is neither: the forms marktap reads"
# subscripts by any expression: the address moves at run time by
# rt.kernel_index (index, element size, a fixed array's count or 0)
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { i = 1; println($file->f_path->dentry->d_name->name[i]) }')" \
	'rt\.kernel_read\(\(rt\.kernel_read\(\(rt\.kernel_read\(\(a1 \+ [0-9]+\), 8, false, [^)]*\) \+ [0-9]+\), 8, false, [^)]*\) \+ rt\.kernel_index\(l_i, 1, 0, "identifier .i. at <input>:1:[0-9]+"\)\), 1, false' \
	"a pointer's subscript by a variable: the pointer read, index * 1 added, unbounded, then the read"
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { i = 2; println(@cast(task_current(), "task_struct")->comm[i]) }')" \
	'rt\.kernel_read\(\(\(rt\.task_addr\(F\["task_current/0"\]\(\)\) \+ rt\.kernel_index\(l_i, 1, 16, [^)]*\)\) \+ [0-9]+\), 1, [a-z]*' \
	"a member array's: in place, bounded by its 16 elements"
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { println(&@cast($buf, "iovec")[$count], @cast($buf, "iovec")[$count + 1]->iov_len) }')" \
	'rt_println\(\(a2 \+ rt\.kernel_index\(a3, 16, 0, [^)]*\)\), rt\.kernel_read\(\(\(a2 \+ rt\.kernel_index\(\(a3 \+ 1\), 16, 0, [^)]*\)\) \+ 8\), 8, false' \
	"@cast(p, \"T\")[\$n]: the nth T from p (traceaio.stp's iovecs), an expression as index"
like "$(mt -p3 -e 'probe kernel.function("ksys_ioctl") ?, kernel.function("__x64_sys_ioctl") { fd = 3
  println(@cast(task_current(), "struct task_struct", "kernel")->files->fdt->fd[fd]->f_op->unlocked_ioctl) }')" \
	'\+ rt\.kernel_index\(l_fd, 8, 0, [^)]*\)\), 8, false, [^)]*\) \+ [0-9]+\), 8, false' \
	"ioctl_handler.stp's fdt->fd[fd]->f_op: a pointer to pointers indexed, then followed"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { println($file->f_path->dentry->d_name->name["a"]) }')" \
	'semantic error: type mismatch' "an index that is a string: a type mismatch"
i=$(mt -e 'probe begin { i = 64; println(@cast(0, "dentry")->d_iname[i]); exit() }')
like "$i" "^ERROR: kernel array index 64 is out of bounds: the array has [0-9]+ elements near identifier 'i' at <input>:1:" \
	"an index past a fixed array: the handler's ERROR names it (stap would read past)"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { println(@entry($count)) }')" '@entry is only in a .return probe' "@entry outside .return"
# stap's register helpers in a kernel function's handler: its arguments
like "$(mt -p3 -e 'probe kprobe.function("vfs_read") { printf("%d %x\n", int_arg(3), pointer_arg(1)) }')" \
	'rt_printf\("%d %x\\n", \(\(\(a3 & 0xffffffff\) ~ 0x80000000\) - 0x80000000\), a1\)' "int_arg(3) cut to a signed int, pointer_arg(1) as it is"
like "$(mt -p3 -e 'probe kprobe.function("vfs_read").return { println(returnval()) }')" 'rt_println\(a7\)' "returnval() in .return: the return value"
# guru mode: a parameter and $return written in the registers, as stap -g;
# without -g, or into kernel memory, refused at -p2
like "$(mt -p2 -e 'probe kernel.function("vfs_read").return { $return = 1 }')" \
	"semantic error: write to target variable not permitted; need stap -g: identifier '\\\$return'" "\$return = v needs -g"
like "$(mt -g -p3 -e 'probe kernel.function("vfs_read").return { $return = 1 }')" 'rt\.kernel_store\(7, a7, ' "-g: \$return = v stores the return register"
like "$(mt -g -p3 -e 'probe kernel.function("vfs_read") { $count = $count / 2 }')" 'rt\.kernel_store\(3, a3, ' "-g: \$count = v stores the third argument's"
like "$(mt -g -p2 -e 'probe kernel.function("vfs_read") { $file->f_flags = 1 }')" \
	"semantic error: write to target variable not permitted: marktap writes a kernel function's parameters in registers and \\\$return, not kernel memory" \
	"-g: a member's store (kernel memory) refused, saying why"
# a system call's parameters by the kernel's names in syscall.NAME ($fd,
# $nr_segs, as stap's DWARF gives them), from the registers saved at the
# call's entry; -g writes them before the call reads them
like "$(mt -p3 -e 'probe syscall.vmsplice { println($nr_segs, " ", $fd) }')" \
	'rt_println\(rt\.syscall_arg\(2\), " ", \(\(rt\.syscall_arg\(0\) & 0xffffffff ~ 0x80000000\) - 0x80000000\)\)' \
	"syscall.vmsplice: \$nr_segs (a long) and \$fd (an int, cut) from the call's registers"
like "$(mt -p2 -e 'probe syscall.vmsplice { $nr_segs = 0 }')" \
	"semantic error: write to target variable not permitted; need stap -g: identifier '\\\$nr_segs'" "a syscall's \$nr_segs = v needs -g"
like "$(mt -g -p3 -e 'probe syscall.vmsplice { $nr_segs = 0 }')" 'rt\.syscall_store\(2, t[0-9]+, ' "-g: \$nr_segs = v stores the third argument's register"
like "$(mt -g -p3 -e 'probe syscall.ioctl { if ($cmd == 0x2285) $cmd = 0 }')" 'rt\.syscall_store\(1, a2, ' \
	"-g: syscall.ioctl's \$cmd (a marker's field) = v: the field and the call's register"
# syscall.* is one handler over the entry marker, a branch per call: each
# branch reads its own call's parameters (openat's flags 3rd, vmsplice's 4th)
is "$(mt -p3 -e 'probe syscall.* { if (@defined($flags)) println($flags) }' | grep -o 'syscall_arg([0-9])' | sort -u | tr '\n' ' ')" \
	"syscall_arg(0) syscall_arg(1) syscall_arg(2) syscall_arg(3) syscall_arg(4) syscall_arg(5) " \
	"syscall.* merged: \$flags read at each call's own position"
like "$(mt -p2 -e 'probe syscall.vmsplice { println($nr_seg) }')" "invalid target symbol for marker.*\\\$nr_seg'" \
	"a misspelled parameter: stap's error"
# NAME@FILE: the kernel's one function of that name, the file unchecked
like "$(mt -p2 -e 'probe kernel.function("vfs_read@fs/read_write.c") { }')" \
	'WARNING: kernel.function\("vfs_read@fs/read_write.c"\): the kernel.s only function vfs_read, its file fs/read_write.c not checked' \
	"NAME@FILE: the one function NAME, with a warning that the file is not checked"
like "$(mt -p2 -e 'probe kernel.function("vfs_*@fs/read_write.c") { }')" 'which functions are in fs/read_write.c needs the kernel.s DWARF debuginfo or a map of its sources; no map of the kernel.s sources: /dev/null: not a non-empty file .marktap-ksrc makes one' \
	"a glob with @FILE and no map of the kernel's sources: refused, saying what would do (ksrc.t: with one)"
# pretty printing ($x$, $$parms$): one string of the struct's members,
# read through BTF (the values: kfunc.t, in the guest)
out=$(mt -p3 -e 'probe kernel.function("vfs_read") { println($file->f_path$) }')
like "$out" 'rt_sprintf\("\{\.mnt=%#x, \.dentry=%#x\}"' "\$file->f_path\$: {.mnt=..., .dentry=...}, pointers in hex"
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { println($$parms$) }')" 'rt_sprintf\("file=%s buf=%s count=%u pos=%#x"' \
	"\$\$parms\$: a struct pointer followed, char* as a string, size_t unsigned, loff_t* a pointer"
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { println($file$$) }')" '\.f_path=\{\.mnt=%#x, \.dentry=%#x\}' "\$file\$\$: nested structs expanded"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { println($$locals$) }')" "unable to find local '\\\$locals'" "\$\$locals\$: BTF has no locals, an error as \$\$locals"

# if (!@defined(...)): the branch not taken is dead code, its variables
# not resolved (schedtimes.stp: $rq of old kernels' sched_switch)
out=$(mt -p2 -e 'probe kernel.trace("sched_switch") { if (!@defined($next->pid)) println($rq) else println($next->pid) }')
is "$?" 0 "if (!@defined(\$next->pid)) ... \$rq ... else ...: elaborates, \$rq never resolved"
like "$(mt -p2 -e 'probe kernel.trace("sched_switch") { if (!@defined($nosuch)) println($rq) }')" "unable to find local 'rq'" \
	"... and the branch taken still is: \$rq refused there"

# stap's autocast: a local holding a typed kernel pointer reads through it
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { f = $file; println(f->f_flags) }')" \
	'rt.kernel_read\(\(l_f \+ 64\), 4, false' "f = \$file; f->f_flags: struct file's f_flags (offset 64) through the local"
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { p = &$file->f_path; println(p->dentry) }')" \
	'rt.kernel_read\(\(l_p \+ 8\), 8, false' "p = &\$file->f_path; p->dentry: the member's struct"
like "$(mt -p3 -e 'probe kernel.function("vfs_read") { b = $buf; p = $pos; f = $file; println((b)[1], (p)[0], (f)[1]->f_flags) }')" \
	'rt.kernel_read\(\(l_b \+ 1\), 1, true, .*rt.kernel_read\(l_p, 8, true, .*rt.kernel_read\(\(l_f \+ [1-9][0-9]*\), 4, false' \
	"(b)[1], (p)[0], (f)[1]->f_flags: an index through the local's pointer, by the size of what it points to"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { f = $file; println((f)[1]) }')" \
	"the value is a struct or union, not a number \\(name a member\\) \\(through f's type, struct file\\)" \
	"(f)[1] of a struct pointer, no member named: refused, saying why"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { f = 5; println((f)[1]) }')" "unknown type in dereference" \
	"(f)[1] of a local of no kernel type: stap's error"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { f = 5; println(f->f_flags) }')" \
	"unresolved target-symbol expression: 'f' holds no typed kernel pointer here" "a local of no kernel type: refused, saying why"
like "$(mt -p2 -e 'probe kernel.function("vfs_read") { f = $file; f = &$file->f_path; println(f->dentry) }')" \
	"'f' holds pointers to different types here" "a local given two types: refused"

# kprobe.function of a symbol BTF does not describe: the target's symbol
# table says whether it exists; a missing one is no match, so that '!'
# goes on to the next alternative (fslatency-nd.stp's do_sync_read)
printf 'ffffffff81234560 T __vfs_read\nffffffff81234570 t local_thing\n' >"$TMP/System.map"
is "$(MARKTAP_SYSTEM_MAP=$TMP/System.map mt -l 'kprobe.function("local_thing")')" 'kprobe.function("local_thing")' \
	"kprobe.function of a symbol the symbol table has, BTF not: kept"
like "$(MARKTAP_SYSTEM_MAP=$TMP/System.map mt -p2 -e 'probe kprobe.function("do_sync_read") { }')" \
	'no match \(do_sync_read is in neither the kernel.s BTF nor its symbol table\)' "a symbol in neither: no match, saying where it looked"
like "$(MARKTAP_SYSTEM_MAP=$TMP/System.map mt -p2 -e 'probe kprobe.function("do_sync_read") !, kprobe.function("vfs_read") { println(1) }')" \
	'^kprobe.function\("vfs_read"\) ' "kprobe.function(\"gone\") !, next: the next alternative"
# module("GLOB").function: each module the glob names that has the
# function (module files of the guest kernel, as kernel tests cache them)
mods=$(ls -d "$cache"/modules-"${guest##*/vmlinux-}" 2>/dev/null)
if [ -n "$guest" ] && [ -f "$mods/zsmalloc.ko" ] && [ -f "$mods/zram.ko" ]; then
	is "$(MARKTAP_MODULE_PATH=$mods mt -l 'module("z*").function("zs_malloc")')" 'module("zsmalloc").function("zs_malloc")' \
		"module(\"z*\"): the one module of the glob that has the function"
	like "$(MARKTAP_MODULE_PATH=$mods mt -p2 -e 'probe module("z*").function("no_such_fn") { }')" \
		'no match \(no module matching z\* has it: zram, zsmalloc\)' "a function none of them has: no match, naming them"
	like "$(MARKTAP_MODULE_PATH=$mods mt -p2 -e 'probe module("nosuch*").function("f") { }')" \
		'no match \(no module of the kernel matches nosuch\*' "a glob naming no module: no match, saying where it looked"
else
	skip 3 "no cached modules of the guest kernel (the kernel tests fetch them)"
fi
# a tracepoint renamed since stap's examples (mmwriteback.stp): the new one
out=$(mt -p2 -e 'probe kernel.trace("mm_vmscan_writepage") { println($folio) }')
like "$out" 'WARNING: kernel.trace\("mm_vmscan_writepage"\): the kernel calls it mm_vmscan_write_folio since Linux 6.0: probing that' \
	"kernel.trace(\"mm_vmscan_writepage\"): mm_vmscan_write_folio, with a warning"
# parameters past the five in registers: the binding then takes the
# tracepoint's whole count (kmod/mt_tracepoint.c reads its stack slots
# only then); a handler that reads none of them keeps five
mark() { (cd "$TMP" && rm -f m.mtm && "$MT" $R -p4 -m m "$@" >/dev/null 2>&1; sed -n 's/^-- mark: probe_0 //p' m.mtm); }
is "$(mark -e 'global s probe kernel.trace("balance_dirty_pages") { s <<< (@defined($dirtied) ? $dirtied : $count) }')" \
	'tracepoint:balance_dirty_pages:12 *' "\$dirtied of balance_dirty_pages (its 9th of 12): bound with all 12 (mmwriteback.stp)"
like "$(mt -p3 -e 'probe kernel.trace("balance_dirty_pages") { println($dirtied, $start_time) }' | tr '\n' ' ')" \
	'function\(mk_name, mk_fmt, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12\).*rt_println\(a9, a12\)' \
	"the handler gets the twelve, \$dirtied and \$start_time the 9th and 12th"
is "$(mark -e 'probe kernel.trace("balance_dirty_pages") { println($thresh) }')" 'tracepoint:balance_dirty_pages:5 *' \
	"a handler reading only parameters in registers: five, as before"
is "$(mark -e 'probe kernel.trace("smbus_write") { println($$parms) }')" 'tracepoint:smbus_write:7 *' "\$\$parms of smbus_write: its 7"
is "$(mark -e 'probe kernel.trace("smbus_write") { println(int_arg(6)) }')" 'tracepoint:smbus_write:7 *' "int_arg(6): the 7 too"
# after a struct passed by value: refused, saying why
like "$(mt -p2 -e 'probe kernel.trace("dax_pmd_insert_mapping") { println($radix_entry) }')" \
	"parameter 'radix_entry' of tracepoint dax_pmd_insert_mapping comes after a struct passed by value: marktap.ko passes the parameters before it" \
	"a parameter after a struct passed by value (pfn_t): refused with the reason"
# a module's tracepoint: its module's BTF (the file, not loaded), bound
# as tracepoint:MODULE:NAME:NARGS (kvm_service_time.stp's are kvm.ko's)
ko=$(find "$cache/modules-${guest##*/vmlinux-}" "$cache/modules-${guest##*/vmlinux-}-all" \
	-name vmw_vsock_virtio_transport_common.ko 2>/dev/null | head -1)
if [ -n "$guest" ] && [ -n "$ko" ]; then
	export MARKTAP_MODULE_PATH="${ko%/*}"
	like "$(mt -L 'kernel.trace("virtio_transport_alloc_pkt")')" \
		'^kernel.trace\("(vsock:)?virtio_transport_alloc_pkt"\) \$src_cid:__u32 \$src_port:__u32 .* \$op:__u16 \$flags:__u32$' \
		"-L of a module's tracepoint: its parameters from the module's BTF"
	is "$(mark -e 'probe kernel.trace("virtio_transport_alloc_pkt") { println($op) }')" \
		'tracepoint:vmw_vsock_virtio_transport_common:virtio_transport_alloc_pkt:8 *' \
		"its binding names the module; \$op (7th) takes the 8"
	unset MARKTAP_MODULE_PATH
else
	skip 2 "no cached vmw_vsock_virtio_transport_common.ko of the guest kernel (ktrace.t fetches it)"
fi
