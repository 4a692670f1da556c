#!/bin/sh
# khostile.t - hostile Lua in marktap.ko, in Debian's kernel under qemu:
# scripts that copy, search, sort, format and concatenate without end,
# as the device's group and as root, through klua and through marktap.
# Each must end with stap's error text within the module's time bound
# (its own measure of the longest run, hit or call), the overload guard
# must end sessions whose handlers take half a CPU, a session whose
# handler fails on every system call must still end on -T, SIGTERM and
# SIGINT, and the kernel must report no lockup, stall or warning.  The
# guest's checks (khostile-body.sh) are renumbered into our plan.
guest_tag=-khostile
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
guest_boot "$top_srcdir/tests/kernel/khostile-body.sh" 900 "$(guest_real "$guest_dir/klua")"
guest_report $? 80
grep '^KHOSTILE-WORST' "$guest_out" | sed 's/^/# /'
n=$guest_nchecks
[ "$n" -ge 30 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
