#!/bin/sh
# timeline-guest.t - marktrace timeline and export on a kernel trace: one
# recorded with marktrace record --kernel in Debian's kernel under qemu
# (tests/kernel/guest.sh) while a shell runs target, sleep 0.3, dd and a
# threaded target.  On the host: rows per CPU and per thread named after
# the processes, the states each must show (sleep blocked 0.3 s, dd in
# system calls, CPUs idle), user events as ticks on their thread's row,
# slices of the Chrome JSON never overlapping on a track, and the HTML
# rendered by headless Chromium with every state's colour in its rows.
guest_tag=-timeline
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"
MT=$top_builddir/runtime/marktrace/marktrace
CHECK="/usr/bin/python3 $top_srcdir/tests/runtime/timeline/check.py"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3"
[ -x "$top_builddir/tests/script/target" ] || skip_all "build tests/script/target first"
guest_prepare || skip_all "no guest: ${guest_why:-marktap.ko does not build}"
plan 22
if guest_boot "$top_srcdir/tests/runtime/timeline-guest-body.sh" 600; then
	ok 0 "the guest ran to the end (console: $guest_out)"
else
	ok 1 "the guest ran to the end (console: $guest_out)"
fi
grep '^# tl: ' "$guest_out" | head -5
is "$(sed -n 's/^RC //p' "$guest_out" | head -1)" 0 "marktrace record --kernel exits 0 in the guest"
W=$guest_dir/root$guest_tag-traces   # removed by make clean (root-*)
rm -rf "$W" && mkdir -p "$W"
sed -n '/^TRACE-BEGIN$/,/^TRACE-END$/p' "$guest_out" | sed '1d;$d' | base64 -d 2>/dev/null |
	gzip -dc 2>/dev/null | tar -C "$W" -xf - 2>/dev/null
T=$W/tl
"$MT" stats "$T" | sed -n 's/^\(events\|lost\|duration\): */# \1: /p'

"$MT" timeline "$T" -o "$W/k.html"
ok $? "timeline of the kernel trace"
$CHECK html "$W/k.html" >"$W/k.rows"
ok $? "its data block is JSON"
sed 's/^/# /' "$W/k.rows" | head -40
is "$(grep -c '^cpu|cpu [01]|' "$W/k.rows")" 2 "a row per CPU"
like "$(grep '^cpu|' "$W/k.rows" | cut -d'|' -f3 | tr ',' '\n' | sort -u | tr '\n' ' ')" \
	'idle irq .*syscall' "the CPUs go idle, serve interrupts (the serial port's) and run system calls"
# (rows with no tick: the threaded target's main thread, and an agent
# thread that may exit before it takes its own name)
like "$(grep '^thread|target \[' "$W/k.rows" | cut -d'|' -f4 | grep -vx 0 | sort | tr '\n' ' ')" '^3 3 5 $' \
	"target's rows carry its user events as ticks: 5 (count 5), 3 and 3 (2 threads)"
like "$(grep '^thread|sleep \[' "$W/k.rows")" 'blocked' "sleep's row shows it blocked"
like "$(grep '^thread|dd \[' "$W/k.rows")" 'running.*syscall|syscall.*running' "dd's row shows it running and in system calls"
# busy box sh -c execs its last command: the shell's row ends as target's
like "$(grep '^thread|target \[.*|0$' "$W/k.rows" | grep -c blocked)" '^[1-9]' "the shell (exec'd into target, named so) waits blocked for its children and threads"

"$MT" export "$T" -o "$W/k.json"
ok $? "export of the kernel trace"
/usr/bin/python3 -m json.tool "$W/k.json" >/dev/null
ok $? "python3 -m json.tool reads it"
$CHECK chrome "$W/k.json" >"$W/k.chrome"
is "$(grep '^overlaps' "$W/k.chrome")" "overlaps 0" "slices of a track never overlap (Perfetto nests them)"
r=$(awk -F'|' '$1 == "dd" && $2 == "X" && $3 == "syscall read" { print $4 }' "$W/k.chrome")
w=$(awk -F'|' '$1 == "dd" && $2 == "X" && $3 == "syscall write" { print $4 }' "$W/k.chrome")
ok $(( ${r:-0} < 500 || ${w:-0} < 500 )) "dd's 500 reads and writes: slices named after the system call (read ${r:-0}, write ${w:-0})"
blocked=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
print(int(max([e["dur"] for e in d["traceEvents"] if e["ph"] == "X" and e["name"] == "blocked" and names.get((e["pid"], e["tid"])) == "sleep"] or [0])))' "$W/k.json")
ok $(( blocked < 250000 )) "sleep 0.3: blocked once for at least 0.25 s ($blocked us)"
is "$(awk -F'|' '$1 == "target" && $2 == "i" && $3 == "ev" { n += $4 } END { print n + 0 }' "$W/k.chrome")" 11 \
	"the 11 user events of target are instants on target's threads"
like "$(grep -c '"ph":"X","cat":"state","name":"target \[' "$W/k.json")" '^[1-9]' "CPU tracks show target running"

if command -v chromium >/dev/null; then
	timeout 120 chromium --headless=new --no-sandbox --user-data-dir="$W/chromium-profile" --disable-gpu --hide-scrollbars \
		--window-size=1600,2400 --screenshot="$W/k.png" "file://$W/k.html" >"$W/chromium.log" 2>&1
	ok $? "chromium renders the HTML"
	$CHECK png "$W/k.png" 238 15 unknown=#c8c8c8 running=#00b000 syscall=#ff8c00 trap=#d62728 irq=#1f5fff \
		softirq=#b040ff runnable=#e8d800 blocked=#8b1a1a zombie=#606060 idle=#dde4ee tick=#003c78 >"$W/k.pixels"
	sed 's/^/# /' "$W/k.pixels"
	like "$(grep -E '^colour (running|syscall|blocked|idle) [1-9]' "$W/k.pixels" | wc -l)" '^4$' \
		"running, syscall, blocked and idle are drawn"
	rows=$(grep -c '^\(cpu\|thread\)|' "$W/k.rows")
	is "$(sed -n 's/^bands //p' "$W/k.pixels")" "$rows" "one band of colour per row ($rows)"
else
	for d in "chromium renders" "states drawn" "one band per row"; do ok 0 "# SKIP chromium not installed (build-aux/install-deps.sh installs it)"; done
fi
"$MT" timeline "$T" -o "$W/k.svg" && $CHECK svg "$W/k.svg" >"$W/k.svgrows"
ok $? "the SVG of the kernel trace is well-formed"
like "$(grep -c '^fill|#\(00b000\|ff8c00\|8b1a1a\|dde4ee\)|' "$W/k.svgrows")" '^4$' "and draws running, syscall, blocked and idle"
done_testing
