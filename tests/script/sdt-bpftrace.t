#!/bin/sh
# Our markers are SDT probes: bpftrace lists them and probes them, reading
# the arguments from the .note.stapsdt operands and setting the semaphore
# (the marker's gate in .probes) so the site takes its slow path.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
T=$top_builddir/tests/script/target
[ -x "$T" ] || skip_all "build first"
T=$(own_copy "$T") || bail_out "cannot copy $T"
command -v bpftrace > /dev/null 2>&1 || skip_all "no bpftrace"
[ "$(id -u)" = 0 ] || skip_all "bpftrace needs root"
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
timeout 60 bpftrace -l "usdt:$T:*" > "$TMP/list" 2> "$TMP/err" || skip_all "bpftrace cannot list probes here: $(head -1 "$TMP/err")"
plan 4

is "$(sort "$TMP/list" | tr '\n' ' ')" "usdt:$T:marktap:clk usdt:$T:marktap:ev usdt:$T:marktap:tick " "bpftrace -l lists the markers, provider marktap"

timeout 120 bpftrace -q -c "$T count 4" -e "usdt:$T:marktap:ev { printf(\"%d %s %ld\\n\", arg0, str(arg1), arg2); }" > "$TMP/out" 2> "$TMP/err"
ok $? "bpftrace -c runs a probe on a marker"
is "$(grep -v '^done' "$TMP/out" | grep . | tr '\n' '|')" "0 even 0|1 odd 1000000000|2 even 2000000000|3 odd 3000000000|" \
	"it reads the int, string and long arguments"

timeout 120 bpftrace -q -c "$T threads 2 10000" -e "usdt:$T:marktap:ev { @n = count(); }" > "$TMP/cnt" 2>&1
is "$(awk '/^@n:/ { print $2 }' "$TMP/cnt")" "20000" "every hit of 2 threads x 10000 reaches bpftrace"

done_testing
