#!/bin/sh
# timeline-markers.t - what `marktrace timeline` shows of user-space
# markers, read from the data the page embeds (not from pixels): a colour
# per marker name, the same in HTML and SVG and from one recording to the
# next, and a legend naming each; the fields of an event in its tick's
# tooltip; the number of events where ticks merge.  And what it refuses:
# a picture type it does not make (x.png), --from or --to past the end of
# the trace (naming its range); --max-rows ranks a user-space trace's
# threads by their events.  Headless Chromium, where installed, renders the
# page: the screenshot holds both colours of a request's two markers.
. "$(dirname "$0")/../lib/tap.sh"
MT=$top_builddir/runtime/marktrace/marktrace
REQ=$top_builddir/tests/runtime/timeline/requests
CHECK="/usr/bin/python3 $top_srcdir/tests/runtime/timeline/check.py"
[ -x "$MT" ] && [ -x "$REQ" ] || skip_all "build first"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
plan 25

N=10
"$MT" record -q -o "$W/r" -- "$REQ" $N && "$MT" record -q -o "$W/r2" -- "$REQ" 3
ok $? "record two runs of a program serving requests"

# data.py FILE.html: the page's data, line by line
cat > "$W/data.py" <<'PY'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="data">\n(.*?)\n</script>', text, re.S).group(1))
for name, colour in zip(d["names"], d["ncolors"]):
    print("colour %s %s" % (name, colour))
for sec in d["sections"]:
    for r in sec["rows"]:
        label = r["label"].split(" ")[0]
        k, f = r["k"], r["f"]
        texts = {f[i]: f[i + 1] for i in range(0, len(f), 2)}
        for i in range(len(k) // 3):
            count, name = k[3 * i + 1], d["names"][k[3 * i + 2]]
            print("tick %s %s %d %s" % (label, name, count, texts.get(i, "-")))
PY

# (at the finest resolution; the events of a request are 1 ms apart, and
# so are requests: each its own tick in the SVG's pixels too)
"$MT" timeline --resolution 1048576 "$W/r" -o "$W/r.html" && /usr/bin/python3 "$W/data.py" "$W/r.html" > "$W/r.data"
ok $? "timeline -o FILE.html; its data reads back"
is "$(grep -c '^colour ' "$W/r.data"):$(awk '/^colour / { print $3 }' "$W/r.data" | sort -u | grep -c .)" "10:10" \
	"10 markers, 10 colours: each its own"
rs=$(sed -n 's/^colour req_start //p' "$W/r.data"); rd=$(sed -n 's/^colour req_done //p' "$W/r.data")
ok $([ -n "$rs" ] && [ -n "$rd" ] && [ "$rs" != "$rd" ]; echo $?) "req_start ($rs) and req_done ($rd) differ"
like "$(grep -c '"ncolors":' "$W/r.html"):$(grep -c 'key marker' "$W/r.html")" "^1:1$" \
	"the legend: each marker's colour box and name (the viewer builds it from names and ncolors)"
"$MT" timeline --resolution 1048576 "$W/r2" -o "$W/r2.html" && /usr/bin/python3 "$W/data.py" "$W/r2.html" > "$W/r2.data"
is "$(grep '^colour ' "$W/r2.data" | sort)" "$(grep '^colour ' "$W/r.data" | sort)" \
	"another recording: each marker keeps its colour"

# the tooltip: an event's fields with its tick
is "$(grep -c '^tick worker1 req_start 1 id=3 url="/item/3"$' "$W/r.data"):$(grep -c '^tick worker1 req_done 1 id=3 status=201$' "$W/r.data")" "1:1" \
	"a tick of one event carries its fields (req_start id=3 url=\"/item/3\", req_done id=3 status=201)"
is "$(grep -c '^tick worker2 op_end 1 step=-1$' "$W/r.data")" 1 "... negative numbers too"
like "$(cat "$W/r.html")" 'tickText\(r, t\)' "the viewer's tooltip shows them (tickText)"

# merged ticks: their count in the data and written on the SVG
"$MT" timeline --resolution 16 "$W/r" -o "$W/m.html" && /usr/bin/python3 "$W/data.py" "$W/m.html" > "$W/m.data"
total=$(awk '/^tick / { n += $4 } END { print n }' "$W/m.data")
is "$total:$(awk '/^tick / && $4 > 1 && $5 != "-" { n++ } END { print n + 0 }' "$W/m.data")" "$((5 * N + (1 + 4 * N + 5) + (1 + 4 * (N / 2) + 5))):0" \
	"--resolution 16: merged ticks count every event, and keep no one event's fields"
"$MT" timeline --resolution 16 --width 400 "$W/r" -o "$W/m.svg" && $CHECK svg "$W/m.svg" > "$W/m.svgrows"
ok $? "the SVG is well-formed"
counts=$(grep -o '<text class="count"[^>]*>[0-9]*<' "$W/m.svg" | sed 's/.*>\([0-9]*\)<$/\1/' | sort -n | tail -1)
like "$counts" '^[0-9]+$' "where ticks merge the SVG writes their number (at most $counts)"
ok $([ "${counts:-0}" -gt 1 ] && [ "${counts:-0}" -le "$total" ]; echo $?) "... more than one event, no more than the trace holds"
"$MT" timeline "$W/r" -o "$W/r.svg"
svg=$(grep -o '<rect class="marker"[^>]*fill="#[0-9a-f]*"/><text class="marker"[^>]*>[^<]*<' "$W/r.svg" |
	sed 's/.*fill="\(#[0-9a-f]*\)".*>\([^<]*\)<$/colour \2 \1/' | sort)
is "$(echo "$svg" | grep -c .):$svg" "10:$(grep '^colour ' "$W/r.data" | sort)" "the SVG's legend: every marker with the HTML's colour"
like "$(grep -c "stroke=\"$rs\"" "$W/r.svg")" '^[1-9]' "its ticks in the marker's colour"

# what it refuses
"$MT" timeline "$W/r" -o "$W/x.png" 2> "$W/err"
like "$?:$(cat "$W/err")" '^2:marktrace: timeline: cannot write .*/x.png: the pictures are HTML \(.html, .htm\) or SVG \(.svg\)' \
	"-o x.png: exit 2, not HTML under another name"
is "$(ls "$W" | grep -c 'x.png')" 0 "... and no file written"
"$MT" timeline --format png "$W/r" -o "$W/x.html" 2> "$W/err"
like "$?:$(cat "$W/err")" "^2:marktrace: timeline: --format is html or svg, not 'png'" "--format png: exit 2"
"$MT" timeline --format svg "$W/r" -o "$W/pic" && grep -q '^<svg ' "$W/pic"
ok $? "--format svg says it whatever the name"
"$MT" timeline --from 100 "$W/r" -o "$W/f.html" 2> "$W/err"
like "$?:$(cat "$W/err")" '^2:marktrace: timeline: --from 100 is past the end of .*: its events span 0 to 0\.[0-9]{9} seconds \(from its first event\)' \
	"--from past the end: exit 2, naming the trace's range"
"$MT" timeline --to 100 "$W/r" -o "$W/f.html" 2> "$W/err"
like "$?:$(cat "$W/err")" '^2:marktrace: timeline: --to 100 is past the end of' "--to past the end: the same"
"$MT" timeline --from 0 --to 0.00001 "$W/r" -o "$W/f.html" 2> "$W/err"
is "$?:$(cat "$W/err")" "0:" "a window inside the trace draws"

# --max-rows 2 of 3 threads: the two with the most events (reqmain 5N,
# worker1 4N+6, worker2 2N+6)
"$MT" timeline --max-rows 2 "$W/r" -o "$W/k.html" && $CHECK html "$W/k.html" > "$W/k.rows"
is "$(grep '^thread|' "$W/k.rows" | cut -d'|' -f2 | sed 's/ \[.*//' | tr '\n' ' ')" "reqmain worker1 " \
	"--max-rows 2: the threads with the most events (the main thread among them)"
like "$(cat "$W/k.html")" '1 thread with the fewest events is not drawn \(--max-rows 2\)' \
	"... said as such: a user-space trace knows no running time"

if command -v chromium > /dev/null; then
	timeout 120 chromium --headless=new --no-sandbox --user-data-dir="$W/chromium-profile" --disable-gpu --hide-scrollbars \
		--window-size=1400,300 --screenshot="$W/r.png" "file://$W/r.html" > "$W/chromium.log" 2>&1
	$CHECK png "$W/r.png" 238 1 start=$rs done=$rd > "$W/r.pixels"
	sed 's/^/# /' "$W/r.pixels"
	like "$(grep '^colour start' "$W/r.pixels"):$(grep '^colour done' "$W/r.pixels")" \
		'^colour start [1-9][0-9]*:colour done [1-9][0-9]*$' "headless Chromium draws req_start and req_done in their two colours"
else
	skip 1 "chromium not installed (build-aux/install-deps.sh installs it)"
fi
done_testing
