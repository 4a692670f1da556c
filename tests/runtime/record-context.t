#!/bin/sh
# marktrace record --context: LTTng's context fields (lttng add-context -t
# names) written in every event of a user recording, declared in the
# stream's event context as LTTng-UST declares them.  A program of four
# named threads (ctx4) recorded with --context vpid,vtid --context
# procname,ip: babeltrace2 shows _vpid, _vtid, _procname and _ip with each
# event's true values, marktrace view and export and marktap --trace use
# them; the bytes of every event walked by hand (ctxwalk.py); an unknown
# name is refused with the known ones, --kernel refused; the default
# recording's layout is the one it was before --context.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
P=$B/tests/runtime/ctx4
MTAP=$B/translator/marktap
PY=/usr/bin/python3
WALK=$top_srcdir/tests/runtime/ctxwalk.py
BT=${BABELTRACE2:-$(command -v babeltrace2)}
[ -x "$MT" ] && [ -x "$P" ] || skip_all "build first"
[ -n "$BT" ] || skip_all "babeltrace2 is not installed"
[ -x "$PY" ] || skip_all "no $PY"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
plan 22

N=300
"$MT" record -q -o "$W/c" --context vpid,vtid --context procname,ip -- "$P" $N > "$W/c.out"
ok $? "record 4 threads x $N events with --context vpid,vtid --context procname,ip"
pid=$(sed -n 's/^pid //p' "$W/c.out")
site=$(sed -n '1,/^thread/s/^thread .* site //p' "$W/c.out" | head -1)

# the metadata: LTTng-UST 2.13's declarations, the tid named _vtid
sed -n '/event.context := struct {/,/};/p' "$W/c/metadata" > "$W/ctx.decl"
is "$(cat "$W/ctx.decl")" "	event.context := struct {
		int32_t _vtid;
		integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;
		integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _procname[17];
		integer { size = 64; align = 8; signed = 0; encoding = none; base = 10; } _ip;
	};" "the stream's event context declares _vtid, _vpid, _procname[17], _ip as LTTng-UST does"

# babeltrace2: the right values for every event
"$BT" "$W/c" > "$W/bt.txt" 2> "$W/bt.err"
is "$?:$(grep -c ' ctx_ev: ' "$W/bt.txt")" "0:$((4 * N))" "babeltrace2 reads the $((4 * N)) ctx_ev events"
# expected "thread T: vpid, vtid, procname" from what ctx4 printed
awk -v pid="$pid" '/^thread / { print $2 " " pid " " $4 " \"" $6 "\"" }' "$W/c.out" | sort > "$W/want"
sed -n 's/.* ctx_ev: .*{ vtid = \([0-9]*\), vpid = \([0-9]*\), procname = \("[^"]*"\), ip = \([0-9]*\) }, { thread = \([0-9]*\), seq = [0-9]* }$/\5 \2 \1 \3/p' \
	"$W/bt.txt" | sort | uniq -c | awk '{ print $2, $3, $4, $5, $1 }' > "$W/got"
is "$(cat "$W/got")" "$(awk -v n=$N '{ print $0, n }' "$W/want")" \
	"every event: _vpid the process, _vtid its thread's tid, _procname its thread's name"
is "$(grep ' ctx_ev: ' "$W/bt.txt" | sed 's/.* ip = \([0-9]*\) .*/\1/' | sort -u | wc -l)" 1 "one _ip for the one ctx_ev site"
ip=$(grep -m1 ' ctx_ev: ' "$W/bt.txt" | sed 's/.* ip = \([0-9]*\) .*/\1/')
ok $(( ip <= site || ip - site >= 4096 )) "... an address in the function that holds it (run at $site, ip $ip)"
end_ip=$(grep ' ctx_end: ' "$W/bt.txt" | sed 's/.* ip = \([0-9]*\) .*/\1/')
like "$end_ip:$(grep -c ' marktap_statedump:thread: .* vpid = '"$pid"',' "$W/bt.txt")" "^[1-9][0-9]*:[1-9]" \
	"ctx_end has its own ip; the thread events carry the context too"
[ "$end_ip" != "$ip" ]
ok $? "... and ctx_end's ip differs from ctx_ev's"

# the bytes: 4 + 17 + 8 after each tid, nothing else
is "$("$PY" "$WALK" "$W/c" 29 | sed 's/ extended.*//')" "events $(grep -c . "$W/bt.txt")" \
	"every event is header, tid, 29 bytes of context, payload (walked by hand)"

# marktrace view, export, stats, marktap --trace
"$MT" view --no-delta "$W/c" > "$W/mt.txt" 2> "$W/mt.err"
is "$?:$(cat "$W/mt.err"):$(grep -c ' ctx_ev: ' "$W/mt.txt")" "0::$((4 * N))" "marktrace view reads them"
sed -n 's/.* ctx-\([0-3]\)\[\([0-9]*\)\/\([0-9]*\)\] ctx_ev: thread=\([0-3]\) seq=[0-9]* {ctx ip='"$ip"'}$/\4 \2 \3 "ctx-\1"/p' \
	"$W/mt.txt" | sort | uniq -c | awk '{ print $2, $3, $4, $5, $1 }' > "$W/mgot"
is "$(cat "$W/mgot")" "$(awk -v n=$N '{ print $0, n }' "$W/want")" \
	"view: name[vpid/vtid] of every event and {ctx ip=$ip}, as babeltrace2 reads them"
"$MT" export "$W/c" -o "$W/x.json"
"$PY" - "$W/x.json" "$pid" "$ip" > "$W/x.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pid, ip = int(sys.argv[2]), int(sys.argv[3])
ev = [e for e in d["traceEvents"] if e["ph"] == "i" and e["name"] == "ctx_ev"]
print(len(ev), sum(1 for e in ev if e["pid"] == pid and e["args"]["ctx"] == {"ip": ip}))
PY
is "$(cat "$W/x.txt")" "$((4 * N)) $((4 * N))" "export: every ctx_ev with its pid and args.ctx.ip"
like "$("$MT" stats "$W/c")" "events: +$((4 * N + 1))
" "stats counts the events, not the thread events"
PBIN=$P   # the ELF file (not libtool's wrapper script), for marktap
[ -x "$B/tests/runtime/.libs/ctx4" ] && PBIN=$B/tests/runtime/.libs/ctx4
if [ -x "$MTAP" ]; then
	"$MTAP" --trace "$W/c" -e 'global n
		probe process(@1).mark("ctx_ev") { n[execname(), pid()]++ }
		probe end { foreach ([e, p] in n) printf("%s %d %d\n", e, p, n[e, p]) }' "$PBIN" \
		> "$W/tr.out" 2> "$W/tr.err"
	is "$(sort "$W/tr.out" | tr '\n' ' '):$(cat "$W/tr.err")" \
		"ctx-0 $pid $N ctx-1 $pid $N ctx-2 $pid $N ctx-3 $pid $N :" "marktap --trace: execname() and pid() of every event"
	"$MTAP" --trace "$W/c" -e 'global n, parms
		probe process(@1).mark("ctx_ev") { n[$ctx_ip]++; parms[$$parms =~ "ctx"]++ }
		probe end { foreach (i in n) printf("%d %d\n", i, n[i]); foreach (p in parms) printf("ctx in parms %d\n", p) }' "$PBIN" \
		> "$W/tr.out" 2> "$W/tr.err"
	is "$(cat "$W/tr.out" "$W/tr.err" | tr '\n' ' ')" "$ip $((4 * N)) ctx in parms 0 " \
		"marktap --trace: \$ctx_ip of every event, as babeltrace2 reads it, and not in \$\$parms"
	"$MTAP" --trace "$W/c" -e 'probe process(@1).mark("ctx_ev") { println($ctx_pthread_id) }' "$PBIN" \
		> /dev/null 2> "$W/tr.err"
	like "$?:$(head -1 "$W/tr.err")" "^1:semantic error: the trace has no event context field 'pthread_id' for \\\$ctx_pthread_id \\(alternatives: \\\$ctx_ip\\)" \
		"... one it does not carry: an error naming those it does"
else
	skip 3 "marktap not built"
fi

# vpid alone: the name still comes from the thread events
"$MT" record -q -o "$W/v" --context vpid -- "$P" 5 > "$W/v.out"
"$MT" view "$W/v" > "$W/v.txt"
is "$(grep -c ' ctx-[0-3]\['"$(sed -n 's/^pid //p' "$W/v.out")"'/[0-9]*\] ctx_ev: ' "$W/v.txt")" 20 \
	"--context vpid alone: view names each thread from its thread events"

# refusals
"$MT" record -q -o "$W/bad" --context vpid,nosuch -- "$P" 1 > /dev/null 2> "$W/bad.err"
st=$?
is "$st:$(cat "$W/bad.err")" \
	"2:marktrace: record: --context 'vpid,nosuch': unknown context 'nosuch' (known: vpid, vtid, procname, ip, pthread_id, vppid, vuid, vgid)" \
	"an unknown context name is refused with the known ones"
ok $([ -e "$W/bad" ]; echo $((!$?))) "... and nothing is recorded"
"$MT" record -q --kernel --context vpid -o "$W/k" > /dev/null 2> "$W/k.err"
is "$?:$(cat "$W/k.err")" \
	"2:marktrace: record: --context is for user-space recordings: kernel events carry pid, tid and procname in every event already" \
	"--kernel --context is refused, saying why"

# the default: the layout it had before --context
"$MT" record -q -o "$W/d" -- "$P" $N > /dev/null
sed -n '/^stream {/,/^};/p' "$W/d/metadata" > "$W/d.stream"
cat > "$W/d.want" <<'EOT'
stream {
	id = 0;
	packet.context := struct packet_context;
	/* compact: 24 bits of the clock, extended against the previous
	   event's time (or timestamp_begin); pid and name of a tid are in
	   the latest marktap_statedump:thread event of that tid, which
	   libmarktap writes in every packet before the thread's first event */
	event.header := struct {
		enum : uint8_t { compact = 0 ... 254, extended = 255 } id;
		variant <id> {
			struct { integer { size = 24; align = 8; signed = false; map = clock.monotonic.value; } timestamp; } compact;
			struct { uint16_t id; uint64_clock_monotonic_t timestamp; } extended;
		} v;
	};
	event.context := struct {
		int32_t _tid;
	};
};
EOT
is "$(cat "$W/d.stream")" "$(cat "$W/d.want")" "default: the stream's header and context as before (_tid alone)"
is "$("$PY" "$WALK" "$W/d" 0 | sed 's/ extended.*//')" "events $("$BT" "$W/d" | grep -c .)" \
	"default: header, tid and payload, no byte more (walked by hand)"
done_testing
