#!/bin/sh
# tapsets.t - the subsystem tapsets in Debian's kernel under qemu: each
# alias checked here fires on a known action with the values the action
# implies (the exec'd file, the signal and both tasks, the switched-to
# task, the faulting process, a loopback packet's protocol, system call
# names), and the example scripts print what their action implies.
# Scripts are translated here (-p4, tapsets included) and run by marktap
# in the guest (tapsets-body.sh); its checks are renumbered into our plan.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-tapsets
. "$top_srcdir/tests/kernel/guest.sh"

LUA=no; export LUA   # handlers run by marktap on recorded events
if ! guest_prepare; then
	if [ -n "$guest_build_failed" ]; then
		echo "1..1"; echo "not ok 1 - marktap.ko builds against $KVER"
		sed 's/^/# /' "$guest_dir/kbuild$guest_tag.log" | tail -30
		exit 1
	fi
	skip_all "$guest_why"
fi
MTAP=$top_builddir/translator/marktap
[ -x "$MTAP" ] || skip_all "marktap not built"
[ -f "$top_builddir/tapsets/syscalls.stp" ] || skip_all "tapsets/syscalls.stp not generated"
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"; export MARKTAP_TAPSET_DIR
mtm="$guest_dir/root-mtm$guest_tag"   # (make clean removes root-*)
rm -rf "$mtm"; mkdir -p "$mtm"
translate() { # NAME FILE|-e SCRIPT
	name=$1; shift
	(cd "$mtm" && "$MTAP" -p4 -m "$name" "$@" >/dev/null 2>"$name.err") || {
		ok 1 "$name translates"; sed 's/^/# /' "$mtm/$name.err"; return; }
}
for s in "$top_srcdir"/tests/kernel/tapsets/*.stp; do
	translate "t_$(basename "$s" .stp)" "$s"
done
for s in syscalls-top ctxswitch sigmon pagefaults nettop; do
	translate "x_$(echo $s | tr - _)" "$top_srcdir/scripts/$s.stp"
done
grep '^probe [a-z]' "$top_srcdir/tests/kernel/tapsets/fire.stp" | grep -v '^probe end' >"$mtm/fire.list"
nfire=$(grep -c . "$mtm/fire.list")
guest_boot "$top_srcdir/tests/kernel/tapsets-body.sh" 600 "$mtm"/*.mtm "$mtm/fire.list"
guest_report $? 150
n=$guest_nchecks
[ "$n" = $((25 + nfire)) ]; ok $? "the guest reported its $((25 + nfire)) checks ($n)"
plan $_tap_n
done_testing
