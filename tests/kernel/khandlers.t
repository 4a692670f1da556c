#!/bin/sh
# khandlers.t - kernel handlers as stap's, in Debian's kernel under qemu:
# kernel_string() and the kernel_long/int/short/char/pointer reads of an
# address (root's; a bad address is stap's copy fault error; the group is
# refused), printf widths and precisions past two digits printed as a
# begin probe prints them, try/catch nested 50 deep (each level a C
# level of Lua, on the state's own stack), runaway recursion ending in an
# error, the group's arena limit (marktap.ko's group_arena_kib), and
# is_myproc() of marktap's user's process and another's; -t's report of
# handlers run in the kernel.  The guest's checks (khandlers-body.sh) are
# renumbered into our plan.
guest_tag=-khandlers
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
guest_boot "$top_srcdir/tests/kernel/khandlers-body.sh" 600 "$(guest_real "$guest_dir/klua")"
guest_report $? 40
grep '^KHANDLERS-DEPTH' "$guest_out" | sed 's/^/# /'
n=$guest_nchecks
[ "$n" -ge 15 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
