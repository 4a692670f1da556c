#!/bin/sh
# kprocfs.t - SystemTap's procfs files in Debian's kernel under qemu:
# marktap.ko serves /proc/systemtap/MODULE/PATH and marktap answers,
# its handlers on globals the kernel handlers count; reads larger than
# one read() call, writes in pieces, stap's modes and umask; root's and
# the group's sessions side by side, the group's names and count
# bounded; a stopped marktap times its readers out, a killed one fails
# them at once and its directory goes; Debian's topsys.stp and errno.stp
# with their prometheus files.  The guest's checks (kprocfs-body.sh) are
# renumbered into our plan.
guest_tag=-kprocfs
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
# Debian's examples run in the guest (systemtap-doc), if installed
ex=/usr/share/systemtap/examples
extra=
for f in profiling/topsys.stp profiling/errno.stp; do
	[ -f "$ex/$f" ] && extra="$extra $ex/$f"
done
guest_boot "$top_srcdir/tests/kernel/kprocfs-body.sh" 900 $extra
guest_report $? 40
n=$guest_nchecks
[ "$n" -ge 25 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
