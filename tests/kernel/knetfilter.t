#!/bin/sh
# knetfilter.t - netfilter probes in Debian's kernel under qemu: marktap
# binds netfilter.hook("H").pf("PF") and the netfilter.* aliases to
# marktap.ko's netfilter hooks (kmod/mt_netfilter.c), which run the
# handlers' Lua per packet and take guru mode's verdict.  The guest has
# loopback only: knet sends there and counts what arrived.  The guest's
# checks (knetfilter-body.sh) are renumbered into our plan.
guest_tag=-knetfilter
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
examples=
for f in netfilter_drop netfilter_summary; do
	[ -f "/usr/share/systemtap/examples/network/$f.stp" ] && examples="$examples /usr/share/systemtap/examples/network/$f.stp"
done
# shellcheck disable=SC2086
guest_boot "$top_srcdir/tests/kernel/knetfilter-body.sh" 900 "$(guest_real "$guest_dir/knet")" $examples
guest_report $? 80
n=$guest_nchecks
[ "$n" -ge 16 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
