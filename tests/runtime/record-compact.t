#!/bin/sh
# The compact event layout of user traces (runtime/core/mt_event.h):
# 24-bit timestamps extended across gaps longer than their 16.7 ms, thread
# names from marktap_statedump:thread events (renames included) in every
# reader, ids past 254, babeltrace2's reading of all of it, and a damaged
# extended header read as a clear error.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
C=$top_builddir/tests/runtime/compact
CBIN=$C   # the ELF file (not libtool's wrapper script), for marktap
[ -x "$top_builddir/tests/runtime/.libs/compact" ] && CBIN=$top_builddir/tests/runtime/.libs/compact
MTAP=$top_builddir/translator/marktap
BT=${BABELTRACE2:-$(command -v babeltrace2)}
[ -x "$C" ] || skip_all "build first"
plan 31

# agree DIR WHAT: babeltrace2 and marktrace view show the same events,
# values, pid and procname (tests/runtime/view/normalize.awk resolves the
# thread events in babeltrace2's text as the readers do)
agree() {
	if [ -z "$BT" ]; then
		ok 0 "# SKIP babeltrace2 not installed"
		return
	fi
	"$BT" "$1" > "$TMP/bt.txt" 2> "$TMP/bt.err"
	"$MT" view --no-delta --no-symbols "$1" > "$TMP/mt.txt"
	awk -v mode=bt -f "$VIEWDIR/normalize.awk" "$TMP/bt.txt" > "$TMP/bt.n"
	awk -v mode=mt -f "$VIEWDIR/normalize.awk" "$TMP/mt.txt" > "$TMP/mt.n"
	if [ -s "$TMP/bt.n" ] && diff "$TMP/bt.n" "$TMP/mt.n" > "$TMP/diff"; then
		ok 0 "$2: babeltrace2 reads the same $(wc -l < "$TMP/mt.n" | tr -d ' ') events, values, pid and name"
	else
		ok 1 "$2: babeltrace2 reads the same events, values, pid and name"
		head -20 "$TMP/diff" | sed 's/^/# /'
	fi
}

# 1. 40 ms between events: past the 24-bit field (2^24 ns), so extended
#    headers; the times read are the times written, which babeltrace2's
#    own reading of the clock confirms, and no gap is shorter than the sleep
"$MT" record -q -o "$TMP/gap" -- "$C" gap 40
ok $? "record events 40 ms apart"
"$MT" view --relative --no-delta "$TMP/gap" > "$TMP/gap.txt"
is "$(grep -c 'gap_ev: k=' "$TMP/gap.txt")" "4" "the 4 events"
gaps=$(awk '/gap_ev:/ { t = substr($1, 2, length($1) - 2) + 0; if (n++) printf "%s ", (t - last >= 0.040 ? "ok" : t - last); last = t }' "$TMP/gap.txt")
is "$gaps" "ok ok ok " "every gap is at least the 40 ms slept (not cut to 16.7 ms)"
if [ -n "$BT" ]; then
	"$MT" view --no-delta "$TMP/gap" | awk '/gap_ev:/ { print $1 }' > "$TMP/gap.mt"
	"$BT" --no-delta "$TMP/gap" | awk '/gap_ev:/ { print $1 }' > "$TMP/gap.bt"
	ok $(cmp -s "$TMP/gap.mt" "$TMP/gap.bt"; echo $?) "babeltrace2 reads the same times, to the ns"
else
	ok 0 "# SKIP babeltrace2 not installed"
fi
first=$(od -An -tu1 -j84 -N1 "$TMP/gap/channel0_0" | tr -d ' ')
[ -s "$TMP/gap/channel0_0" ] || first=$(od -An -tu1 -j84 -N1 "$TMP/gap/channel0_1" | tr -d ' ')
is "$first" "255" "a ring's first event has the extended header (no time before it)"
agree "$TMP/gap" "gaps"
pid=$(awk '/gap_ev:/ { match($0, /\[[0-9]+\//); print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$TMP/gap.txt")
like "$(grep 'gap_ev:' "$TMP/gap.txt" | head -1)" " compact\\[$pid/$pid\\] gap_ev:" \
	"view: the program's name, pid and tid from its thread event"

# 2. renames: prctl(PR_SET_NAME) of the thread itself, pthread_setname_np
#    of another thread; each event shows the name its thread had then
"$MT" record -q -o "$TMP/ren" -- "$C" rename
ok $? "record a program that renames its threads"
"$MT" view --no-delta "$TMP/ren" > "$TMP/ren.txt"
names() { # MARKER: "name=i" of each event, in order
	awk -v m="$1:" '$0 ~ m { match($0, / [^ ]*\[[0-9]+\/[0-9]+\] /); n = substr($0, RSTART + 1, RLENGTH - 2)
		sub(/\[.*/, "", n); i = $NF; sub(/^i=/, "", i); printf "%s=%s ", n, i }' "$TMP/ren.txt"
}
is "$(names named_ev)" "before=0 before=1 before=2 after=3 after=4 after=5 " \
	"view: the main thread's name before and after its prctl rename"
is "$(names worker_ev)" "worker=0 worker=1 worker=2 worker-2=3 worker-2=4 worker-2=5 " \
	"view: the worker's names before and after pthread_setname_np"
is "$(grep -c 'marktap_statedump:thread' "$TMP/ren.txt")" "0" "view does not show thread events"
agree "$TMP/ren" "renames"
"$MT" view --no-delta --filter 'procname == "worker-2"' "$TMP/ren" > "$TMP/ren.f"
is "$(grep -c 'worker_ev' "$TMP/ren.f") $(grep -c 'named_ev' "$TMP/ren.f")" "3 0" \
	"view --filter on procname takes the resolved name"
"$MT" stats "$TMP/ren" > "$TMP/ren.stats"
like "$(cat "$TMP/ren.stats")" "events: +12
" "stats counts the 12 events, not the thread events"
"$MT" export "$TMP/ren" > "$TMP/ren.json" 2> "$TMP/ren.jerr"
like "$(grep -c 'worker-2' "$TMP/ren.json")" "^[1-9]" "export: the new name is in the export"
cat > "$TMP/ren.stp" <<'STP'
probe process(@1).mark("named_ev") { printf("%s=%d ", execname(), $i) }
probe process(@1).mark("worker_ev") { w[$i] = execname() }
global w
probe end { foreach (i+ in w) printf("%s=%d ", w[i], i) }
STP
if [ -x "$MTAP" ]; then
	out=$("$MTAP" --trace "$TMP/ren" "$TMP/ren.stp" "$CBIN" 2> "$TMP/ren.err")
	is "$out" "before=0 before=1 before=2 after=3 after=4 after=5 worker=0 worker=1 worker=2 worker-2=3 worker-2=4 worker-2=5 " \
		"marktap --trace: execname() of each event"
else
	ok 0 "# SKIP no marktap"
fi
"$MT" timeline "$TMP/ren" -o "$TMP/ren.html" > /dev/null 2> "$TMP/ren.terr"
ok $? "timeline reads the trace"
like "$(cat "$TMP/ren.html")" "worker-2" "timeline: the new name is in it"

# a rename no wrapper sees (a write to /proc/thread-self/comm): the name is
# read again at each packet the thread enters, so it shows from the next
# one (4 KiB sub-buffers: 2000 events of 12 bytes fill several)
"$MT" record -q -o "$TMP/comm" --subbuf-size 4k --num-subbuf 16 -- "$C" comm 2000
ok $? "record a program that renames itself through /proc"
"$MT" view --no-delta "$TMP/comm" | awk '/comm_ev:/ { match($0, / [^ ]*\[[0-9]+\/[0-9]+\] /)
	n = substr($0, RSTART + 1, RLENGTH - 2); sub(/\[.*/, "", n); if (n != last) printf "%s ", n; last = n; c++ }
	END { printf "(%d)", c }' > "$TMP/comm.names"
is "$(cat "$TMP/comm.names")" "before-comm after-comm (4000)" \
	"view: the old name, then the new one from a later packet on, never back"

# 3. 300 markers: ids past 254 in extended headers, read by both readers
"$MT" record -q -o "$TMP/many" -- "$C" many
ok $? "record 300 markers"
"$MT" view --no-delta "$TMP/many" > "$TMP/many.txt"
is "$(grep -c ' many_[0-9]*: k=' "$TMP/many.txt")" "600" "view: 600 events"
is "$(awk '/ many_[0-9]*: k=/ { for (i = 1; i <= NF; i++) if ($i ~ /^many_/) n[$i]++ } END { for (m in n) if (n[m] == 2) c++; print c }' "$TMP/many.txt")" \
	"300" "each of the 300 markers twice"
ok $(awk '/^\tid = / { if ($3 + 0 > 254) f = 1 } END { exit !f }' "$TMP/many/metadata"; echo $?) \
	"ids past 254 are in use"
agree "$TMP/many" "300 markers"

# 4. damage: an extended header cut by the end of the packet's content,
#    an extended id that no class has; a clear error, no crash
for f in "$TMP/gap"/channel0_*; do [ -s "$f" ] && break; done
cp -r "$TMP/gap" "$TMP/cut"
cf="$TMP/cut/$(basename "$f")"
put_u64 "$cf" 48 $(( (84 + 6) * 8 ))      # content_size: 6 bytes of the event
"$MT" view "$TMP/cut" > "$TMP/cut.out" 2> "$TMP/cut.err"
is "$?" "1" "cut extended header: exit 1"
like "$(cat "$TMP/cut.err")" "byte 84: event runs past the packet content: 6 bytes left, its extended header and context take 15" \
	"cut extended header: the message says where and what"
"$MT" stats "$TMP/cut" > /dev/null 2>&1
rc=$?
ok $(( rc != 0 && rc != 1 )) "cut extended header: stats ends with a status, not a signal"
cp -r "$TMP/gap" "$TMP/badid"
bf="$TMP/badid/$(basename "$f")"
printf '\376\377' | dd of="$bf" bs=1 seek=85 conv=notrunc 2> /dev/null   # id 65534
"$MT" view "$TMP/badid" > /dev/null 2> "$TMP/badid.err"
is "$?" "1" "unknown extended id: exit 1"
like "$(cat "$TMP/badid.err")" "byte 84: unknown event id 65534" "unknown extended id: the message"
if [ -n "$BT" ]; then
	"$BT" "$TMP/cut" > /dev/null 2>&1
	rc=$?
	ok $(( rc == 0 || rc >= 128 )) "babeltrace2 too refuses the cut header, without a crash"
else
	ok 0 "# SKIP babeltrace2 not installed"
fi
