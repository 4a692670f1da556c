#!/bin/sh
# timeline-flood.t - traces made by another user to be slow to read:
# the thread table of tstate.c (timeline, export, marktap --trace's task
# names) hashed tids with a fixed multiplier, so a trace could choose
# 200000 tids that all fall in one cluster (quadratic: 3 minutes for a
# 7.6 MB trace), and CPU rows were looked up and sorted one by one (a
# new cpu_id in each of 150000 packets: minutes).  Each run here must end
# well within its `timeout` (a guard against hangs, not a measurement),
# and export's output must not depend on the hash's random seed.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
MTAP=$top_builddir/translator/marktap
CC=${CC:-cc}
[ -x "$MTAP" ] || skip_all "marktap not built"
[ "$(id -u)" = 0 ] || skip_all "needs root (the traces are made by nobody)"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
chmod 755 "$TMP"
mkdir "$TMP/n" && chown 65534:65534 "$TMP/n"
# tids whose products with the old multiplier share bits 40..49 (one
# cluster at every table size)
cat > "$TMP/n/tids.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
int main(void)
{
	unsigned n = 0;
	for (uint64_t t = 1; t < (1ull << 31) && n < 200000; t++)
		if (((t * 0x9E3779B97F4A7C15ull) >> 40 & ((1u << 21) - 1)) < 1024)
			printf("%llu\n", (unsigned long long)t), n++;
	return 0;
}
EOF
nobody $CC -O2 -o "$TMP/n/tids" "$TMP/n/tids.c" 2>"$TMP/cc.log" || skip_all "$CC cannot build a helper"
plan 7

# 1. 200000 threads in one cluster, an event each
nobody sh -c "'$TMP/n/tids' | awk 'BEGIN { print \"trace . domain=kernel\"; print \"marker 0 ping v %d\";
	print \"stream 0\"; print \"packet\" } { printf \"ev %d ping %d %d p 1\n\", NR * 10, \$1, \$1 }' |
	'$GEN' '$TMP/n/tids.trace'"
like "$(stat -c %U "$TMP/n/tids.trace/channel0_0"):$(wc -c < "$TMP/n/tids.trace/channel0_0")" '^nobody:[0-9]{7}$' \
	"nobody wrote a trace of 200000 threads"
timeout 60 "$MT" export "$TMP/n/tids.trace" -o "$TMP/a.json"
is "$?" 0 "export of colliding tids ends (exit 0)"
timeout 60 "$MT" export "$TMP/n/tids.trace" -o "$TMP/b.json"
ok $(cmp -s "$TMP/a.json" "$TMP/b.json"; echo $?) "the same JSON twice (whatever the hash's seed)"
timeout 60 "$MT" timeline "$TMP/n/tids.trace" -o "$TMP/t.html"
is "$?" 0 "timeline of colliding tids ends (exit 0)"
out=$(timeout 60 "$MTAP" --trace "$TMP/n/tids.trace" -e 'global n probe trace.event("ping") { n++ } probe end { println(n) }' 2>&1)
is "$?:$out" "0:200000" "marktap --trace over it: every event, ends"

# 2. a new cpu_id in each of 150000 packets of a kernel trace
nobody sh -c "awk 'BEGIN { print \"trace . domain=kernel\"; print \"marker 0 ping v %d\"; print \"stream 0\";
	for (i = 1; i <= 150000; i++) { print \"packet\"; printf \"ev %d ping 5 5 p 1\n\", i * 10 } }' |
	'$GEN' '$TMP/n/cpus.trace'"
nobody /usr/bin/python3 - "$TMP/n/cpus.trace/channel0_0" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off = i = 0
while off < len(b):          # packet context: packet_size at 56, cpu_id at 80
    size = struct.unpack_from("<Q", b, off + 56)[0] // 8
    struct.pack_into("<I", b, off + 80, i if i % 2 else 0xffffffff - i)
    off += size
    i += 1
open(sys.argv[1], "wb").write(b)
PY
timeout 60 "$MT" timeline "$TMP/n/cpus.trace" -o "$TMP/c.html"
is "$?" 0 "timeline of 150000 CPU numbers ends (exit 0)"
timeout 60 "$MT" export "$TMP/n/cpus.trace" -o "$TMP/c.json"
is "$?" 0 "export of them ends (exit 0)"
done_testing
