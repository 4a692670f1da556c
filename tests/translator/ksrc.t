#!/bin/sh
# kernel.function("PATTERN@FILE") without DWARF: marktap-ksrc's map of the
# kernel's sources (which file defines which function), made here from a
# small tree in the kernel's style, and the translator's use of it
# (translator/ksrc.c) over the kernel's BTF: globs by file, -l with
# @FILE:LINE, the errors.  The run in Debian's kernel is kfunc.t's.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
use_kernel_btf
plan 23
KSRC=$top_builddir/translator/marktap-ksrc
[ -x "$KSRC" ] || skip_all "marktap-ksrc not built"
# shellcheck disable=SC2086
mt() { "$MT" $R "$@" 2>&1; }

mkdir -p "$TMP/linux-9.9/fs" "$TMP/linux-9.9/kernel"
cat >"$TMP/linux-9.9/fs/read_write.c" <<'C'
/*
 * not_a_function(int x)
 * {
 */
ssize_t vfs_readv(struct file *file, const struct iovec __user *vec);

ssize_t vfs_read(struct file *file, char __user *buf, size_t count,
		 loff_t *pos)
{
	return 0;
}

static __always_inline ssize_t
vfs_write(struct file *file, const char __user *buf, size_t count, loff_t *pos)
{
	return 0;
}

struct file_operations generic_ro_fops = {
	.read = vfs_read,
};

ssize_t ksys_read(unsigned int fd, char __user *buf, size_t count)
{
	return 0;
}

SYSCALL_DEFINE3(read, unsigned int, fd, char __user *, buf, size_t, count)
{
	return ksys_read(fd, buf, count);
}
C
cat >"$TMP/linux-9.9/fs/open.c" <<'C'
static int __init proc_cmdline_init(void)
{
	return 0;
}

static long do_sys_openat2(int dfd, const char __user *filename,
			   struct open_how *how)
{
	return 0;
}
C
cat >"$TMP/linux-9.9/kernel/bpf_helpers.c" <<'C'
BPF_CALL_2(bpf_strncmp, const char *, s1, u32, s1_sz)
{
	return 0;
}
C

# 1. the map of a tree
"$KSRC" -r 9.9.0-test -o "$TMP/tree.map" "$TMP/linux-9.9" >"$TMP/out" 2>&1
is "$?" 0 "marktap-ksrc over a source tree"
like "$(cat "$TMP/out")" '^marktap-ksrc: 10 function definitions of kernel 9.9.0-test' "it says how many definitions it found"
is "$(grep -v '^#' "$TMP/tree.map")" "__do_sys_read fs/read_write.c 28
__ia32_sys_read fs/read_write.c 28
__se_sys_read fs/read_write.c 28
__x64_sys_read fs/read_write.c 28
bpf_strncmp kernel/bpf_helpers.c 1
do_sys_openat2 fs/open.c 6
ksys_read fs/read_write.c 23
proc_cmdline_init fs/open.c 1 init
vfs_read fs/read_write.c 7
vfs_write fs/read_write.c 14" \
	"definitions by name, file and line: parameters on later lines, the type on its own line, SYSCALL_DEFINE and BPF_CALL, __init marked; no prototype, initializer or comment"
# the same from a tarball of it, as Debian's linux-source ships
tar -cJf "$TMP/linux-source-9.9.tar.xz" -C "$TMP" linux-9.9
"$KSRC" -r 9.9.0-test -o "$TMP/tar.map" "$TMP/linux-source-9.9.tar.xz" >/dev/null 2>&1
is "$(grep -v '^#' "$TMP/tar.map")" "$(grep -v '^#' "$TMP/tree.map")" "a tarball of the tree: the same map"
# bad input: a clear error, non-zero
out=$("$KSRC" -o "$TMP/x.map" "$TMP/none" 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q "$TMP/none: not a directory, tarball or .deb"; ok $? "a SOURCE that does not exist: an error (exit $rc)"
mkdir "$TMP/empty"
out=$("$KSRC" -o "$TMP/x.map" "$TMP/empty" 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q "no function definitions found" && [ ! -e "$TMP/x.map" ]; ok $? "a tree without C: an error, no map written (exit $rc)"
out=$("$KSRC" -r 9.9 -x 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q '^usage: marktap-ksrc'; ok $? "an unknown option: usage (exit $rc)"

# 2. the translator over BTF with the map
export MARKTAP_KERNEL_SOURCES="$TMP/tree.map"
is "$(mt -l 'kernel.function("*@fs/read_write.c")')" 'kernel.function("__ia32_sys_read@fs/read_write.c:28")
kernel.function("__x64_sys_read@fs/read_write.c:28")
kernel.function("ksys_read@fs/read_write.c:23")
kernel.function("vfs_read@fs/read_write.c:7")
kernel.function("vfs_write@fs/read_write.c:14")' \
	"*@FILE: the functions of BTF the map puts in that file (no __do_sys_read: not in BTF), with @FILE:LINE as stap lists them"
is "$(mt -l 'kernel.function("vfs_*@fs/*.c").return')" 'kernel.function("vfs_read@fs/read_write.c:7").return
kernel.function("vfs_write@fs/read_write.c:14").return' "a name glob and a file glob, .return"
is "$(mt -l 'kernel.function("*@read_write.c")' | wc -l)" 5 "a relative file pattern matches after any directory, as stap's"
is "$(mt -l 'kernel.function("do_sys_openat2@fs/*")')" 'kernel.function("do_sys_openat2@fs/open.c:6")' "'*' crosses '/' as stap's (fnmatch without FNM_PATHNAME)"
is "$(mt -l 'kernel.function("*@fs/open.c")')" 'kernel.function("do_sys_openat2@fs/open.c:6")' "a glob leaves out what the map marks init (proc_cmdline_init: freed after boot)"
is "$(mt -l 'kernel.function("proc_cmdline_init@fs/open.c")')" 'kernel.function("proc_cmdline_init@fs/open.c:1")' "... which its exact name still names (the kernel then says why it refuses it)"
like "$(mt -L 'kernel.function("vfs_read@fs/read_write.c")')" '^kernel.function\("vfs_read@fs/read_write.c:7"\) \$file:struct file\* ' "-L: @FILE:LINE and the parameters"
out=$(mt -p2 -e 'probe kernel.function("vfs_read@fs/read_write.c") { println(1) }')
is "$?" 0 "NAME@FILE that the map confirms elaborates"
! echo "$out" | grep -q WARNING; ok $? "... without the warning that the file is not checked"
like "$(mt -p2 -e 'probe kernel.function("vfs_read@fs/open.c") { }')" \
	'no function of the kernel.s BTF called vfs_read is defined in fs/open.c, by the map of its sources .*tree.map: it is in fs/read_write.c:7' \
	"NAME@FILE of another file: no match, saying where the map has it"
like "$(mt -p2 -e 'probe kernel.function("*@mm/*.c") { }')" 'no function of the kernel.s BTF matching \* is defined in mm/\*.c' "a file glob the map has nothing in: no match"
like "$(mt -p2 -e 'probe kernel.function("vfs_read@fs/read_write.c:12") { }')" 'names a source line: that needs the kernel.s DWARF debuginfo' "@FILE:LINE: refused, a line needs DWARF"
is "$(mt -p2 -e 'probe kernel.function("*@fs/read_write.c") { println(1) }' | sed -n 's/ .*<- .*//p' | tr '\n' ' ')" \
	'kernel.function("__ia32_sys_read") kernel.function("__x64_sys_read") kernel.function("ksys_read") kernel.function("vfs_read") kernel.function("vfs_write") ' \
	"-p2: one probe per function of the file"

# a map that is not one (a hand-written file, any bytes): lines that are
# not NAME FILE LINE are passed over, never a crash
{ printf 'garbage\n\n  \n%%s\n' "$(head -c 3000 /dev/urandom | tr -d '\0')"; echo 'vfs_read fs/read_write.c 7'; printf 'x y'; } >"$TMP/bad.map"
out=$(MARKTAP_KERNEL_SOURCES=$TMP/bad.map mt -l 'kernel.function("vfs_rea*@fs/read_write.c")'); rc=$?
[ $rc -lt 128 ]; ok $? "a map of random bytes: no crash (exit $rc)"
like "$(MARKTAP_KERNEL_SOURCES=$TMP/empty mt -p2 -e 'probe kernel.function("vfs_*@fs/x.c") { next }')" \
	"no map of the kernel.s sources: .*/empty: not a non-empty file" "a directory as the map: the same clear error as none"

# 3. a glob leaves out the kernel's init text (freed after boot, kprobes
# refuse it), by the symbol table's addresses
printf 'ffffffff81000000 T _stext\nffffffff81100000 T vfs_read\nffffffff81200000 T ksys_read\nffffffff82000000 T _sinittext\nffffffff82000100 t vfs_write\nffffffff82100000 T _einittext\n' >"$TMP/System.map"
is "$(MARKTAP_SYSTEM_MAP=$TMP/System.map mt -l 'kernel.function("vfs_*@fs/read_write.c")')" 'kernel.function("vfs_read@fs/read_write.c:7")' \
	"a function in init text (vfs_write between _sinittext and _einittext here) is left out of a glob"
