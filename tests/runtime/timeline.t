#!/bin/sh
# timeline.t - marktrace timeline (HTML, SVG) and export --format=chrome on
# user-space traces recorded here: rows per thread with their events as
# ticks, the picture rendered by headless Chromium and its pixels read,
# the JSON checked event by event, hostile strings, sizes bounded whatever
# the number of events, damaged traces.  (Kernel states: timeline-guest.t.)
. "$(dirname "$0")/../lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
STRESS=$B/tests/runtime/stress
HOSTILE=$B/tests/runtime/timeline/hostile
CHECK="/usr/bin/python3 $top_srcdir/tests/runtime/timeline/check.py"
[ -x "$MT" ] && [ -x "$STRESS" ] && [ -x "$HOSTILE" ] || skip_all "build first"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
plan 45

# 1. three threads of 20000 events each
"$MT" record -q -o "$W/u" -- "$STRESS" 3 20000
ok $? "record 3 threads x 20000 events"
"$MT" timeline "$W/u" -o "$W/u.html" 2>"$W/err"
ok $? "timeline DIR -o FILE.html"
$CHECK html "$W/u.html" >"$W/u.rows"
ok $? "the HTML's data block is JSON"
is "$(grep -c '^thread|stress \[[0-9]*\]||20000$' "$W/u.rows")" 3 "a row per thread, named after the process, 20000 events ticked on each"
is "$(grep -c '^cpu|' "$W/u.rows")" 0 "no CPU rows: a user-space trace has no kernel state"
is "$(grep '^scripts' "$W/u.rows")" "scripts 2" "two scripts (data, viewer) and nothing loaded from the network"
is "$(grep -Ec '(src|href)="?(https?:)?//' "$W/u.html")" 0 "no outside resources"
like "$(cat "$W/u.html")" "No kernel trace: threads show their events as ticks" "the picture says why there are no states"

"$MT" timeline "$W/u" -o "$W/u.svg"
ok $? "timeline DIR -o FILE.svg"
$CHECK svg "$W/u.svg" >"$W/u.svgrows"
ok $? "the SVG is well-formed XML"
is "$(grep -c '^text|stress \[[0-9]*\]$' "$W/u.svgrows")" 3 "the SVG labels the 3 thread rows"
# the ticks of stress_ev in its colour (the legend's)
tick=$(sed -n 's/^colour stress_ev //p' "$W/u.rows")
like "$(grep -c "stroke=\"$tick\"" "$W/u.svg")" '^3$' "and draws their ticks"


"$MT" export --format=chrome "$W/u" -o "$W/u.json"
ok $? "export --format=chrome DIR -o FILE.json"
/usr/bin/python3 -m json.tool "$W/u.json" >/dev/null
ok $? "python3 -m json.tool reads it"
$CHECK chrome "$W/u.json" >"$W/u.chrome"
is "$(grep '^stress|i|stress_ev|' "$W/u.chrome")" "stress|i|stress_ev|60000" "60000 instant events on threads named stress"
is "$(grep -c '"ph":"M","name":"thread_name"' "$W/u.json")" 3 "3 thread names"
first=$(grep -m1 '"name":"stress_ev"' "$W/u.json")
like "$first" '"args":\{"thread":[0-2],"seq":0,"tag":"abc","cpu":[0-9]+\}' "an instant carries the event's fields as args"
"$MT" export "$W/u" >"$W/u2.json"
cmp -s "$W/u.json" "$W/u2.json"
ok $? "chrome is the default format, standard output the default file"
"$MT" timeline "$W/u" -o - >"$W/u2.html" && cmp -s "$W/u.html" "$W/u2.html" && [ ! -e ./- ]
ok $? "timeline -o - writes the same picture to standard output"

# 2. the picture in headless Chromium: ticks in 3 bands
if command -v chromium >/dev/null; then
	timeout 120 chromium --headless=new --no-sandbox --user-data-dir="$W/chromium-profile" --disable-gpu --hide-scrollbars \
		--window-size=1400,500 --screenshot="$W/u.png" "file://$W/u.html" >"$W/chromium.log" 2>&1
	ok $? "chromium renders the HTML"
	$CHECK png "$W/u.png" 238 7 tick=$tick >"$W/u.pixels"
	sed 's/^/# /' "$W/u.pixels"
	like "$(grep '^colour tick' "$W/u.pixels")" 'tick [1-9][0-9]{2,}' "the ticks are drawn (hundreds of pixels)"
	is "$(grep '^bands' "$W/u.pixels")" "bands 3" "in three rows"
	# the viewer ran: FILE.html#A-B opens on seconds A..B (the zoom's own
	# code path); here the trace's first half, in whole microseconds
	half=$(awk -v s="$(sed -n 's/^span //p' "$W/u.rows")" 'BEGIN { printf "%d", int(s / 2000) * 1000 }')
	shown=$(awk -v v="$half" 'BEGIN { if (v >= 1e9) printf "%.3f s", v / 1e9; else if (v >= 1e6) printf "%.3f ms", v / 1e6;
		else if (v >= 1e3) printf "%.3f us", v / 1e3; else printf "%d ns", v }')
	range=$(timeout 120 chromium --headless=new --no-sandbox --user-data-dir="$W/chromium-profile" --disable-gpu \
		--dump-dom "file://$W/u.html#0-$(awk -v v="$half" 'BEGIN { printf "%.6f", v / 1e9 }')" 2>/dev/null |
		grep -o '<span id="range">[^<]*</span>')
	is "$range" "<span id=\"range\">0 ns .. $shown ($shown of $(awk -v v="$(sed -n 's/^span //p' "$W/u.rows")" \
		'BEGIN { if (v >= 1e9) printf "%.3f s", v / 1e9; else if (v >= 1e6) printf "%.3f ms", v / 1e6; else printf "%.3f us", v / 1e3 }'))</span>" \
		"the viewer zooms to a window given in the URL"
else
	for d in "chromium renders" "ticks drawn" "three rows" "zoom"; do ok 0 "# SKIP chromium not installed (build-aux/install-deps.sh installs it)"; done
fi
# --from/--to: a window of the trace (its second quarter), at full resolution
span=$(sed -n 's/^span //p' "$W/u.rows")
from=$(awk -v s="$span" 'BEGIN { printf "%.6f", s / 4e9 }')
to=$(awk -v s="$span" 'BEGIN { printf "%.6f", s / 2e9 }')
"$MT" timeline --from "$from" --to "$to" "$W/u" -o "$W/w.html" && $CHECK html "$W/w.html" >"$W/w.rows"
ok $? "timeline --from $from --to $to"
ticks_w=$(awk -F'|' '/^thread/ { n += $4 } END { print n + 0 }' "$W/w.rows")
in_window=$(/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
a, b = float(sys.argv[2]) * 1e6, float(sys.argv[3]) * 1e6
print(sum(1 for e in d["traceEvents"] if e["ph"] == "i" and a <= e["ts"] <= b))' "$W/u.json" "$from" "$to")
is "$ticks_w" "$in_window" "it ticks the events of that window only ($ticks_w of 60000)"
# 3. hostile strings in fields and in the thread's name
name=$(printf '<b>&"x\047\001\377')
s1='</script><script>alert(1)</script>'
s2=$(printf 'q"b\\c\n\t\001\177')
s3=$(printf '\377\376 \303\251 \342\200\250 \355\240\200 end')
"$MT" record -q -o "$W/h" -- "$HOSTILE" "$name" "$s1" "$s2" "$s3"
ok $? "record a program with hostile strings"
"$MT" export "$W/h" -o "$W/h.json" && "$MT" timeline "$W/h" -o "$W/h.html" && "$MT" timeline "$W/h" -o "$W/h.svg"
ok $? "export and timeline write them"
/usr/bin/python3 -m json.tool "$W/h.json" >/dev/null
ok $? "the JSON stays valid"
$CHECK hostile "$W/h.json" "$W/h.html" "$W/h.svg" "$name" "$s1" "$s2" "$s3" >"$W/h.check" 2>&1
sed 's/^/# /' "$W/h.check"
is "$(grep -c 'same$' "$W/h.check")" 4 "strings and thread name read back as they were (invalid bytes as \\xHH) in JSON, HTML and SVG"
is "$(grep '^html scripts' "$W/h.check")" "html scripts 2" "a </script> in the trace does not end the HTML's script"

# 4. bounded: 10^6 events give a picture of the same bounded size as 10^5
"$MT" record -q -o "$W/m" --subbuf-size 4M --num-subbuf 8 -- "$STRESS" 2 500000
"$MT" record -q -o "$W/k" -- "$STRESS" 2 50000
"$MT" timeline --resolution 1024 "$W/m" -o "$W/m.html" && "$MT" timeline --resolution 1024 "$W/k" -o "$W/k.html"
ok $? "timeline of 10^6 and 10^5 events"
big=$(wc -c <"$W/m.html"); small=$(wc -c <"$W/k.html")
diag "10^6 events: $big bytes, 10^5 events: $small bytes (--resolution 1024)"
most=$(/usr/bin/python3 -c 'import json, re, sys
t = open(sys.argv[1]).read()
d = json.loads(re.search(r"id=\"data\">\n(.*?)\n</script>", t, re.S).group(1))
print(max(len(r["k"]) // 3 for s in d["sections"] for r in s["rows"]))' "$W/m.html")
ok $(( most > 1025 )) "10^6 events: at most 1025 ticks a row ($most)"
ok $(( big > 120000 )) "and the file stays small ($big bytes)"
$CHECK html "$W/m.html" >"$W/m.rows"
# (the recording may have lost some when the consumer fell behind: stats counts what is there)
is "$(awk -F'|' '/^thread/ { n += $4 } END { print n }' "$W/m.rows")" "$("$MT" stats "$W/m" | sed -n 's/^events: *//p')" \
	"merged ticks still count every event of the trace"

# 5. bad input: a clear error naming the file and the byte, exit 1
cp -r "$W/k" "$W/bad"
f=$(ls -S "$W/bad"/channel0_* | head -1)   # the biggest: an empty stream has no packet
printf '\001\002\003\004' | dd of="$f" bs=1 seek=0 conv=notrunc 2>/dev/null
"$MT" timeline "$W/bad" -o "$W/bad.html" 2>"$W/bad.err"
is "$?" 1 "a damaged trace: timeline exits 1"
like "$(cat "$W/bad.err")" "^marktrace: $f: byte 0: bad packet magic" "naming the file and the byte"
"$MT" export "$W/bad" -o "$W/bad.json" 2>"$W/bad2.err"
is "$?" 1 "export exits 1 too"
like "$(cat "$W/bad2.err")" "$f: byte 0: bad packet magic" "with the same message"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["otherData"]["complete"] is not False)' "$W/bad.json"
ok $? "and its JSON stays valid, saying it is not complete"
"$MT" timeline "$W/nonexistent" -o "$W/x.html" 2>"$W/none.err"
ok $(( $? != 1 )) "a missing directory: exit 1 ($(head -1 "$W/none.err"))"
"$MT" timeline "$W/u" 2>"$W/noout.err"
is "$?" 2 "no -o: exit 2"
"$MT" timeline --resolution 3 "$W/u" -o "$W/x.html" 2>"$W/res.err"
like "$?:$(cat "$W/res.err")" '^2:marktrace: timeline: --resolution wants a number from 16' "a bad --resolution says what it wants"
"$MT" export --format=ctf "$W/u" 2>"$W/fmt.err"
like "$?:$(cat "$W/fmt.err")" "^2:marktrace: export: unknown format 'ctf'" "an unknown export format"
# a window inside a gap between events (a program that went quiet before
# it ended): drawn as asked, not "past the end" (the first event after
# the window shows the trace goes on)
printf 'trace .\nmarker 0 tick n %%d\nstream 0\npacket\nev 1000 tick 5 5 gap 1\nev 1001000 tick 5 5 gap 2\nev 10001000 tick 5 5 gap 3\n' |
	"$top_builddir/tests/runtime/view/gentrace" "$W/gap"
"$MT" timeline --from 0.002 --to 0.005 "$W/gap" -o "$W/gap.html" 2>"$W/gap.err" && $CHECK html "$W/gap.html" >"$W/gap.rows"
is "$?:$(cat "$W/gap.err"):$(sed -n 's/^span //p' "$W/gap.rows")" "0::3000000" \
	"--from/--to inside a gap between events: the 3 ms asked for, no error"
"$MT" timeline --from 0.02 "$W/gap" -o "$W/gap2.html" 2>"$W/gap2.err"
like "$?:$(cat "$W/gap2.err")" "^2:marktrace: timeline: --from 0.02 is past the end of .*: its events span 0 to 0.010000000 seconds" \
	"--from past the last event: refused, with the span there is"
done_testing