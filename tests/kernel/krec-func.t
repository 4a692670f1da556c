#!/bin/sh
# krec-func.t - marktrace record --kernel --function (kernel functions
# through perf's kprobe PMU, their parameters from BTF: runtime/marktrace/
# kfunc.c) and list --kernel --function.  Here, against the guest
# kernel's BTF (MARKTAP_BTF): the listing and the errors before any probe;
# in Debian's kernel under qemu (krec-func-body.sh): vfs_read while dd
# reads, a glob, refusals; its trace comes back and babeltrace2 reads it.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-krec-func
. "$top_srcdir/tests/kernel/guest.sh"

BT=${BABELTRACE2:-babeltrace2}
command -v "$BT" >/dev/null || skip_all "babeltrace2 not installed"
M=$top_builddir/runtime/marktrace/marktrace
guest_start

# --- on the host, the guest kernel's BTF ---
MARKTAP_BTF=$guest_vmlinux
export MARKTAP_BTF
out=$("$M" list --kernel --function vfs_read --function 'vfs_write*' 2>&1)
like "$out" '^ssize_t vfs_read\(struct file \*file, char \*buf, size_t count, loff_t \*pos\)$' \
	"list --kernel --function: the prototype, as C writes it"
like "$out" 'ssize_t vfs_writev\(struct file \*file, const struct iovec \*vec, long unsigned int vlen, loff_t \*pos, rwf_t flags\)' \
	"a glob's functions too"
is "$("$M" list --kernel --function xstateregs_get)" \
	'int xstateregs_get(struct task_struct *target, const struct user_regset *regset, struct membuf to) /* not recorded: to (a struct or union passed by value) */' \
	"a struct passed by value: not recorded, said"
is "$("$M" list --kernel --function vfs_caches_init)" 'void vfs_caches_init(void)' "no parameter: (void)"
out=$("$M" list --kernel --function no_such_function_here 2>&1); rc=$?
is "$rc/$out" "1/marktrace: list: --function no_such_function_here: no function of that name in the kernel's BTF" \
	"list: a function not in BTF"
out=$("$M" record --kernel -o "$guest_dir/krec-none" --function no_such_function_here -- true 2>&1); rc=$?
like "$rc/$out" "^1/marktrace: record: --kernel: --function no_such_function_here: no function of that name in the kernel's BTF" \
	"record: a function not in BTF, exit 1"
out=$("$M" record --kernel -o "$guest_dir/krec-none" --function 'vfs_*' --function '*_init' -- true 2>&1); rc=$?
like "$rc/$out" "^1/marktrace: record: --kernel: the --function patterns take [0-9]+ functions; a recording probes at most 256" \
	"record: a glob of too many functions, exit 1"
out=$("$M" record --kernel -o "$guest_dir/krec-none" --function 'vfs_read%exit' -- true 2>&1); rc=$?
is "$rc/$out" "1/marktrace: record: --kernel: --function 'vfs_read%exit': expected NAME, NAME%entry or NAME%return" \
	"record: a suffix not %entry or %return"
out=$("$M" record --function vfs_read -- true 2>&1); rc=$?
is "$rc/$out" "2/marktrace: record: --function records kernel functions: give --kernel too" \
	"record: --function without --kernel"
[ ! -e "$guest_dir/krec-none" ]; ok $? "no trace left by the refusals"
unset MARKTAP_BTF

# --- in the guest ---
guest_boot "$top_srcdir/tests/kernel/krec-func-body.sh" 600
guest_report $? 30
n=$guest_nchecks
[ "$n" = 20 ]; ok $? "the guest reported its 20 checks ($n)"

T=$guest_dir/krec-func-trace
rm -rf "$T"; mkdir -p "$T"
sed -n '/^KF-BEGIN$/,/^KF-END$/p' "$guest_out" | sed '1d;$d' | base64 -d 2>/dev/null |
	gzip -dc 2>/dev/null | tar -C "$T" -xf - 2>/dev/null
"$BT" "$T/kf" >"$T/kf.bt" 2>"$T/kf.bt.err"
ok $? "babeltrace2 reads the guest's trace"
sed 's/^/# bt: /' "$T/kf.bt.err" | head -5
grep 'procname = "dd"' "$T/kf.bt" | grep -m2 vfs_read | sed 's/^/# bt: /'
is "$(grep 'procname = "dd" }' "$T/kf.bt" | grep -cE 'vfs_read_entry: .*\{ file = 0x[0-9A-Fa-f]+, buf = 0x[0-9A-Fa-f]+, count = 4096, pos = 0x[0-9A-Fa-f]+ \}$')" 10 \
	"babeltrace2: dd's 10 vfs_read entries, count = 4096"
is "$(grep 'procname = "dd" }' "$T/kf.bt" | grep -cE 'vfs_read_return: .*\{ ret = 4096 \}$')" 10 \
	"babeltrace2: their returns, ret = 4096"
plan $_tap_n
done_testing
