#!/bin/sh
# krelay.t - marktrace record --kernel --relay in Debian's kernel under
# qemu: lttng-relayd runs in the guest (loopback only), the
# kernel's and a program's markers go to it as they are recorded; its
# output comes back here and babeltrace2 reads it: every event of the -o
# copy, equal, and complete.  relayd unreachable (nothing armed) and
# relayd killed mid-run are checked in the guest (krelay-body.sh).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-krelay
. "$top_srcdir/tests/kernel/guest.sh"

BT=${BABELTRACE2:-babeltrace2}
RELAYD=$(command -v lttng-relayd) || skip_all "lttng-relayd not installed (lttng-tools)"
command -v "$BT" >/dev/null || skip_all "babeltrace2 not installed"
if ! guest_prepare; then
	if [ -n "$guest_build_failed" ]; then
		echo "1..1"; echo "not ok 1 - marktap.ko builds against $KVER"
		sed 's/^/# /' "$guest_dir/kbuild$guest_tag.log" | tail -30
		exit 1
	fi
	skip_all "$guest_why"
fi
[ -x "$top_builddir/tests/script/target" ] || skip_all "tests/script/target not built"
# relayd and its libraries (ICU's data among them) unpacked in the guest
GUEST_INSTALL=$RELAYD GUEST_MEM=1024
export GUEST_INSTALL GUEST_MEM
guest_boot "$top_srcdir/tests/kernel/krelay-body.sh" 600
guest_report $? 20
n=$guest_nchecks
[ "$n" = 18 ]; ok $? "the guest reported its 18 checks ($n)"

# relayd's output and the -o copies, back on the host
T=$guest_dir/krelay-traces
rm -rf "$T"; mkdir -p "$T"
sed -n '/^RELAY-BEGIN$/,/^RELAY-END$/p' "$guest_out" | sed '1d;$d' | base64 -d 2>/dev/null |
	gzip -dc 2>/dev/null | tar -C "$T" -xf - 2>/dev/null
set -- "$T"/relay/mtguest/kr-*
R=$1
ok $([ -s "$R/kernel/metadata" ] && [ -s "$R/ust/metadata" ]; echo $?) \
	"relayd's folder mtguest/kr-DATE holds the kernel and the ust trace"
"$BT" "$R" >"$T/kr.relay" 2>"$T/kr.relay.err"
ok $? "babeltrace2 reads relayd's traces"
"$BT" "$T/kr" >"$T/kr.local" 2>/dev/null
n=$(wc -l <"$T/kr.relay")
ok $([ "$n" -gt 5 ] && cmp -s "$T/kr.relay" "$T/kr.local"; echo $?) \
	"relayd's traces give babeltrace2 the -o copy's events, equal ($n)"
is "$(grep -c ' ev:' "$T/kr.relay")" 5 "the program's 5 user events are there"
is "$(grep ' ev:' "$T/kr.relay" | sed -n 's/.*n = \([0-9]*\).*/\1/p' | tr '\n' ' ')" "0 1 2 3 4 " "in order, with their values"
like "$(grep -c 'kernel_arch_syscall_entry:' "$T/kr.relay")" '^[1-9]' "with the kernel's system call events"
like "$(grep -c 'fs_open:' "$T/kr.relay")" '^[1-9]' "and fs_open events (the program's loader)"
for tr in kernel ust; do
	is "$(grep -c 'recording_complete = 1' "$R/$tr/metadata")" 1 "relayd's $tr metadata says the recording completed"
done
# one index entry per packet in each stream
bad=$(python3 - "$R" <<'PY'
import glob, os, struct, sys
bad = 0
files = glob.glob(sys.argv[1] + "/*/channel0_*")
if not files: bad = "no stream files"
for f in files:
    d = open(f, "rb").read(); off = n = 0
    while off + 84 <= len(d):
        size = struct.unpack_from("<Q", d, off + 56)[0] // 8
        if size < 84: break
        n += 1; off += size
    idx = os.path.join(os.path.dirname(f), "index", os.path.basename(f) + ".idx")
    ents = (os.path.getsize(idx) - 16) // 72 if os.path.exists(idx) else 0
    if ents != n: bad += 1; print(f, n, ents, file=sys.stderr)
print(bad)
PY
)
is "$bad" 0 "every stream at relayd has one index entry per packet"

# the kernel alone, relayd only
set -- "$T"/relay/mtguest/marktap-*
ok $([ -s "$1/metadata" ] && [ ! -d "$1/kernel" ]; echo $?) "--kernel alone: one trace in relayd's folder mtguest/marktap-DATE"
"$BT" "$1" >"$T/ka.relay" 2>&1
like "$(grep 'fs_open:' "$T/ka.relay" | grep -c '/tmp/relay-file.txt')" '^[3-9]' "babeltrace2 reads it: the 3 opens of the file, with its name"
# relayd killed: what it kept is the start of the -o copy
set -- "$T"/relay/mtguest/kk-*
"$BT" "$1/ust" 2>/dev/null | grep ' ev:' | sed -n 's/.*n = \([0-9]*\).*/\1/p' >"$T/kk.relay"
kept=$(wc -l <"$T/kk.relay")
diag "relayd kept $kept of the 40 events before it was killed"
ok $([ "$kept" -gt 0 ] && [ "$kept" -lt 40 ] && [ "$(seq 0 $((kept - 1)) | tr '\n' ' ')" = "$(tr '\n' ' ' <"$T/kk.relay")" ]; echo $?) \
	"relayd's copy is the start of the recording, in order ($kept events)"
plan $_tap_n
done_testing
