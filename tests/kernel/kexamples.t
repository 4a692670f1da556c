#!/bin/sh
# kexamples.t - Debian's systemtap examples that stand on stap's socket,
# tcp, task-rlimit and netdev tapsets (tcp_connections, tcp_retransmission,
# rlimit_nofile, netdev), run as they are in Debian's kernel under qemu,
# and the functions pfiles.stp and psig.stp call (their own embedded C
# cannot run here) in small scripts: each checks what its action implies
# (the port of an accepted connection, an RTO that doubles while a
# netfilter probe drops the segment, a shell at its descriptor limit, a
# handler's address and mask).  The guest's checks (kexamples-body.sh) are renumbered into
# our plan.
guest_tag=-kexamples
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
[ -f "$top_builddir/tapsets/syscalls.stp" ] || skip_all "tapsets/syscalls.stp not generated"
ACT=$(guest_real "$guest_dir/tapsets-act")
[ -x "$ACT" ] || skip_all "tests/kernel/tapsets-act not built"
ex=/usr/share/systemtap/examples
extra=
for f in network/tcp_connections.stp network/tcp_retransmission.stp process/rlimit_nofile.stp network/netdev.stp; do
	[ -f "$ex/$f" ] && extra="$extra $ex/$f"
done
guest_boot "$top_srcdir/tests/kernel/kexamples-body.sh" 900 "$ACT" $extra
guest_report $? 60
n=$guest_nchecks
[ "$n" -ge 10 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
