#!/bin/sh
# kfuzz.t - a fuzzer of /dev/marktap as a member of its group (not root),
# in Debian's kernel under qemu: random open, configure, mmap, scribbling
# over the mapped session and ring headers (geometry, positions, commit
# counts), every ioctl with random sizes and pointers, START and STOP,
# tiny Lua scripts, beside a load that fires markers; no oops, warning,
# lockup or stall may follow, and the device still records.
#   KFUZZ_OPS   operations (default 3000: about two minutes under TCG)
#   KFUZZ_SEED  replay a run (default: a new seed, printed)
# bench/kfuzz.sh runs it long.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-kfuzz
. "$top_srcdir/tests/kernel/guest.sh"

ops=${KFUZZ_OPS:-3000}
seed=${KFUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
diag "seed $seed, $ops operations (KFUZZ_SEED=$seed KFUZZ_OPS=$ops replays them)"
guest_start
GUEST_INSTALL="$(guest_real "$guest_dir/kfuzz")"
# the oops text, not only the panic line, on the console (warnings too)
GUEST_LOGLEVEL=${GUEST_LOGLEVEL:-5}
body="$guest_dir/kfuzz-run.sh"
{ echo "KFUZZ_SEED=$seed KFUZZ_OPS=$ops"; cat "$top_srcdir/tests/kernel/kfuzz-body.sh"; } >"$body"
guest_boot "$body" $((240 + ops / 20))
guest_report $? 20
n=$guest_nchecks
[ "$n" -ge 5 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
