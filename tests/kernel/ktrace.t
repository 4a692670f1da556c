#!/bin/sh
# ktrace.t - kernel.trace probes in Debian's kernel under qemu: marktap
# resolves the tracepoints and their parameters from the guest kernel's
# BTF (translator/btf.c, ktrace.c), marktap.ko probes them with the
# handlers' Lua (kmod/mt_tracepoint.c).  The guest's checks
# (ktrace-body.sh) are renumbered into our plan.
guest_tag=-ktrace
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
guest_boot "$top_srcdir/tests/kernel/ktrace-body.sh" 900 "$(guest_real "$guest_dir/klua")"
guest_report $? 80
n=$guest_nchecks
[ "$n" -ge 15 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
