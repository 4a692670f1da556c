#!/bin/sh
# ktp.t - marktrace record --kernel -e SUBSYS:NAME (perf tracepoints) in
# Debian's kernel under qemu: another kernel's tracefs formats than the
# host's (record-tp.t), a known command's exec, openat calls and exit
# exact in the guest (ktp-body.sh); the trace comes back here and
# babeltrace2 reads the same.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-ktp
. "$top_srcdir/tests/kernel/guest.sh"

BT=${BABELTRACE2:-babeltrace2}
command -v "$BT" >/dev/null || skip_all "babeltrace2 not installed"
OPENER=$top_builddir/tests/runtime/tp-opener
[ -x "$OPENER" ] || skip_all "tests/runtime/tp-opener not built"
guest_start
GUEST_INSTALL=$OPENER
export GUEST_INSTALL
guest_boot "$top_srcdir/tests/kernel/ktp-body.sh" 600
guest_report $? 20
n=$guest_nchecks
[ "$n" = 7 ]; ok $? "the guest reported its 7 checks ($n)"

T=$guest_dir/ktp-trace
rm -rf "$T"; mkdir -p "$T"
sed -n '/^TP-BEGIN$/,/^TP-END$/p' "$guest_out" | sed '1d;$d' | base64 -d 2>/dev/null |
	gzip -dc 2>/dev/null | tar -C "$T" -xf - 2>/dev/null
read -r P A < "$T/tp/ids" || P=none
AU=$(echo "$A" | tr a-f A-F | sed 's/^0X/0x/')
"$BT" "$T/tp" >"$T/tp.bt" 2>"$T/tp.bt.err"
ok $? "babeltrace2 reads the guest's trace"
is "$(grep -c "pid = $P, tid = $P, procname = \"tp-opener\" }, { filename = \"/bin/tp-opener\", pid = $P, old_pid = $P }" "$T/tp.bt")" 1 \
	"babeltrace2: the exec, exact"
is "$(grep "procname = \"tp-opener\" }" "$T/tp.bt" | grep -c "sys_enter_openat: .*filename = $AU,")" 50 \
	"babeltrace2: the 50 openat of the buffer"
plan $_tap_n
done_testing
