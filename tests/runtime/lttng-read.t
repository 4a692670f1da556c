#!/bin/sh
# marktrace view and stats read traces written by LTTng 2.x.
# 1. A trace in the shape of LTTng's kernel traces (lttng/gen-compact.py:
#    packetized metadata, the compact event header, bit fields, variants...),
#    which cannot be recorded here, against babeltrace2.
# 2. A program with LTTng-UST tracepoints of every field kind
#    (lttng/mtlt_tp.h) recorded by Debian's lttng-tools into two sessions
#    under one directory (two traces, different event contexts; -r merges
#    the two recordings): every field of every event must equal
#    babeltrace2's reading, and stats must count what was fired.  Skipped when lttng-sessiond cannot start.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
LT=$top_srcdir/tests/runtime/lttng
PY=/usr/bin/python3
BT=$(command -v babeltrace2)
[ -n "$BT" ] || skip_all "babeltrace2 is not installed"
[ -x "$PY" ] || skip_all "no $PY"
plan 27

# same_values BT_TEXT MT_TEXT DESCRIPTION: canon.py's records, sorted, equal
# (the event with last=-1 is checked apart: see lttng/mtlt.c)
same_values() {
	"$PY" "$LT/canon.py" bt < "$1" | grep -v "'last': -1}" | sort > "$TMP/bt.n"
	"$PY" "$LT/canon.py" mt < "$2" | grep -v "'last': -1}" | sort > "$TMP/mt.n"
	if [ -s "$TMP/bt.n" ] && diff "$TMP/bt.n" "$TMP/mt.n" > "$TMP/diff"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		head -20 "$TMP/diff" | sed 's/^/# /'
	fi
}

"$PY" "$LT/gen-compact.py" "$TMP/compact/kernel"
TZ=UTC "$BT" "$TMP/compact" > "$TMP/cbt.txt" 2> "$TMP/cbt.err"
ok $? "compact headers: babeltrace2 reads the generated trace"
TZ=UTC "$MT" view --no-delta "$TMP/compact" > "$TMP/cmt.txt" 2> "$TMP/cmt.err"
is "$?:$(cat "$TMP/cmt.err")" "0:" "compact headers: marktrace view reads it"
same_values "$TMP/cbt.txt" "$TMP/cmt.txt" \
	"compact headers: the same $(grep -c . "$TMP/cbt.txt") events and values (bit fields, 27-bit clock wrap, extended header, variants)"

# Damage: a clear error naming the file and the byte, what came before shown.
# damaged DESCRIPTION REGEX EVENTS
damaged() {
	TZ=UTC "$MT" view --no-delta "$TMP/cd" > "$TMP/d.out" 2> "$TMP/d.err"
	is "$?:$(grep -c . "$TMP/d.out")" "1:$3" "$1: exit 1 after $3 events"
	like "$(cat "$TMP/d.err")" "$2" "$1: message"
}
fresh() { rm -rf "$TMP/cd" && cp -r "$TMP/compact" "$TMP/cd"; }
fresh; truncate -s 300 "$TMP/cd/kernel/stream_0"
damaged "truncated stream" "^marktrace: $TMP/cd/kernel/stream_0: byte 0: packet_size 406 bytes runs past the end of the file \\(300 bytes left\\)" 0
# content_size cut in the middle of the third event of stream_0
fresh; "$PY" -c 'import struct, sys
p = sys.argv[1]; d = bytearray(open(p, "rb").read())
struct.pack_into("<Q", d, 40, (68 + 100) * 8); open(p, "wb").write(d)' "$TMP/cd/kernel/stream_0"
damaged "content cut mid-event" "^marktrace: $TMP/cd/kernel/stream_0: byte 1[0-9][0-9]: field '_?[a-z0-9]+' runs past the packet content" 3
# the second metadata packet's magic
fresh; "$PY" -c 'import struct, sys
p = sys.argv[1]; d = bytearray(open(p, "rb").read())
off = struct.unpack_from("<I", d, 28)[0] // 8; d[off] ^= 0xff; open(p, "wb").write(d); print(off)' \
	"$TMP/cd/kernel/metadata" > "$TMP/off"
damaged "metadata packet magic" "^marktrace: $TMP/cd/kernel/metadata: byte $(cat "$TMP/off"): bad metadata packet magic" 0

skip_rest() {
	while [ $_tap_n -lt 27 ]; do echo "ok $((_tap_n + 1)) # SKIP $1"; _tap_n=$((_tap_n + 1)); done
	done_testing
}
for tool in lttng lttng-sessiond; do
	command -v $tool > /dev/null 2>&1 || skip_rest "$tool is not installed (lttng-tools)"
done
${CC:-cc} -O1 -I"$LT" -o "$TMP/mtlt" "$LT/mtlt.c" -llttng-ust -ldl > "$TMP/cc.log" 2>&1 ||
	skip_rest "cannot build an LTTng-UST program (liblttng-ust-dev): $(head -1 "$TMP/cc.log")"

# A session daemon: the one running, else one of ours, stopped at the end.
# relay-live.t does the same: under make -j the one that started the
# daemon killed it under the other's session (CI: a live session cut at
# half its events), so the two take turns (a lock held to the end).
. "$top_srcdir/tests/lib/lttng.sh"
lttng_take_turns
S1=mtlt-a-$$ S2=mtlt-b-$$ S3=mtlt-c-$$
cleanup() {
	lttng destroy "$S1" > /dev/null 2>&1
	lttng destroy "$S2" > /dev/null 2>&1
	lttng destroy "$S3" > /dev/null 2>&1
	lttng_sessiond_stop
	rm -rf "$TMP"
}
trap cleanup EXIT
lttng_sessiond skip_rest

N=30
record() {
	lttng create "$S1" --output="$TMP/rec/a" &&
	lttng enable-event -s "$S1" -u 'mtlt:*' &&
	lttng add-context -s "$S1" -u -t vpid -t procname -t vtid &&
	lttng create "$S2" --output="$TMP/rec/b" &&
	lttng enable-event -s "$S2" -u 'mtlt:ints' &&
	lttng add-context -s "$S2" -u -t vpid &&
	lttng create "$S3" --output="$TMP/chan" &&
	lttng enable-channel -s "$S3" -u chb &&
	lttng enable-event -s "$S3" -u -c channel0 'mtlt:texts' &&
	lttng enable-event -s "$S3" -u -c chb 'mtlt:ints,mtlt:empty' &&
	lttng add-context -s "$S3" -u -c chb -t vtid &&
	lttng start "$S1" && lttng start "$S2" && lttng start "$S3" &&
	"$TMP/mtlt" $N &&
	lttng stop "$S1" && lttng stop "$S2" && lttng stop "$S3" &&
	lttng destroy "$S1" && lttng destroy "$S2" && lttng destroy "$S3"
}
record > "$TMP/lttng.log" 2>&1 || { sed 's/^/# /' "$TMP/lttng.log"; skip_rest "lttng could not record"; }

TZ=UTC "$BT" "$TMP/rec" > "$TMP/bt.txt" 2> "$TMP/bt.err"
ok $? "babeltrace2 reads the recording"
TZ=UTC "$MT" view -r --no-delta "$TMP/rec" > "$TMP/mt.txt" 2> "$TMP/mt.err"
ok $? "marktrace view reads it"
is "$(cat "$TMP/mt.err")" "" "nothing on stderr"

same_values "$TMP/bt.txt" "$TMP/mt.txt" "every field of every event equals babeltrace2's reading"
# both traces: N ints each, N texts + 1 and N/5 empty in the first
is "$(wc -l < "$TMP/mt.n" | tr -d ' ')" "$((2 * N + N + N / 5))" "every event but the last read"
like "$(grep -c 'procname=.mtlt. ' "$TMP/mt.n")" "^$((N + N + N / 5))\$" \
	"the event context (vpid, procname, vtid) of the first trace"
like "$(grep -c "pid=[0-9]* tid=-1 procname='' {'s8'" "$TMP/mt.n")" "^$N\$" \
	"the second trace's context (vpid only)"
is "$(grep 'last=-1' "$TMP/mt.txt" | sed 's/^.*mtlt:texts: //')" \
   'str="" arr=[ [0] = 0, [1] = 0, [2] = 0 ] _seq_length=0 seq=[ ] atext="" _stext_length=0 stext="" col=( <unknown> : container = -1 ) dbl=-1.5 flt=-0.25 last=-1' \
   "empty string, empty sequences, an enum value without a label"
# merged by time over both traces
awk '{ print substr($1, 2, 18) }' "$TMP/mt.txt" > "$TMP/times"
sort -c "$TMP/times" 2> /dev/null
ok $? "events in time order over both traces"

TZ=UTC "$MT" view -r --filter 's16 == -3000 && u64 > 17999999999999999999' "$TMP/rec" > "$TMP/f.txt"
is "$(grep -c 's16=-3000' "$TMP/f.txt")" 2 "--filter on LTTng fields: i=3 in both traces"

# two channels in one session: two stream classes, each with its own
# event ids and event context (vtid on one only)
TZ=UTC "$BT" "$TMP/chan" > "$TMP/bt2.txt" 2> /dev/null
TZ=UTC "$MT" view --no-delta "$TMP/chan" > "$TMP/mt2.txt" 2> "$TMP/mt2.err"
is "$?:$(cat "$TMP/mt2.err"):$(grep -c . "$TMP/mt2.txt")" "0::$((2 * N + 1 + N / 5))" "two channels (stream classes): every event read"
same_values "$TMP/bt2.txt" "$TMP/mt2.txt" "two channels: every field equals babeltrace2's reading"

"$MT" stats -r "$TMP/rec" > "$TMP/stats.txt" 2>&1
ok $? "marktrace stats reads it"
like "$(cat "$TMP/stats.txt")" "traces: +2" "two traces"
like "$(cat "$TMP/stats.txt")" "events: +$((3 * N + 1 + N / 5))
" "every event counted"
like "$(grep -E '^ +[0-9]+  mtlt:' "$TMP/stats.txt" | sort | tr -s ' ')" \
     "^ $((N / 5)) mtlt:empty
 $((2 * N)) mtlt:ints
 $((N + 1)) mtlt:texts\$" "events per tracepoint"

# marktap --trace over the recording: trace.event probes, fields, context
MTAP=$top_builddir/translator/marktap
if [ -x "$MTAP" ]; then
	MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets" "$MTAP" --trace "$TMP/rec" -e '
		global n, s16, last, named
		probe trace.event("mtlt:*") { n[pp()]++ }
		probe trace.event("mtlt:ints") { s16 += $s16 }
		probe trace.event("mtlt:texts") { last += $last; if (execname() == "mtlt" && pid() > 0) named++ }
		probe end { foreach (p in n+) printf("%s %d\n", p, n[p]); printf("%d %d %d\n", s16, last, named) }' \
		> "$TMP/tr.out" 2> "$TMP/tr.err"
	is "$?:$(cat "$TMP/tr.err")" "0:" "marktap --trace over the LTTng recording"
	is "$(cat "$TMP/tr.out")" "trace.event(\"mtlt:empty\") $((N / 5))
trace.event(\"mtlt:texts\") $((N + 1))
trace.event(\"mtlt:ints\") $((2 * N))
$((-1000 * N * (N - 1))) $((N * (N - 1) / 2 - 1)) $((N + 1))" "every event, field values, vpid and procname as pid() and execname()"
else
	echo "ok $((_tap_n + 1)) # SKIP marktap not built"; echo "ok $((_tap_n + 2)) # SKIP marktap not built"
	_tap_n=$((_tap_n + 2))
fi
done_testing
