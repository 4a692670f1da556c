#!/bin/sh
# kfunc.t - kernel.function and kprobe.function probes without debuginfo,
# in Debian's kernel under qemu: marktap resolves them from the guest
# kernel's BTF (translator/btf.c), marktap.ko runs the handlers' Lua at
# kprobes and kretprobes (kmod/mt_kprobe.c).  The guest's checks
# (kfunc-body.sh) are renumbered into our plan.
guest_tag=-kfunc
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
guest_boot "$top_srcdir/tests/kernel/kfunc-body.sh" 600
guest_report $? 60
grep '^KFUNC-BENCH' "$guest_out" | sed 's/^/# /'
n=$guest_nchecks
[ "$n" -ge 17 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
