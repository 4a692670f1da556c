#!/bin/sh
# ksessions.t - several kernel sessions at once, in Debian's kernel under
# qemu: scripts and recordings side by side, as root and as the device's
# group, each counting exactly what it alone asked for; the group bounded
# by marktap.ko's group_scripts and group_recordings without locking root
# out; arrays of 100 000 string keys moved whole to the end probe; every
# child's release seen at the end of a -c session.  The guest's checks
# (ksessions-body.sh) are renumbered into our plan.
guest_tag=-ksessions
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
guest_boot "$top_srcdir/tests/kernel/ksessions-body.sh" 1200
guest_report $? 80
n=$guest_nchecks
[ "$n" -ge 20 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
