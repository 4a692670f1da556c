#!/bin/sh
# trace-hostile.t - traces another user made, read by root: the strings of
# their metadata (event names, env values) are the maker's choice.  An
# event name holding a newline and Lua must not become code of the script
# that `marktap --trace` runs over it (it did: the name went raw into a
# "-- probe point" comment of the generated Lua), and no reader may hand
# the maker's escape sequences to the terminal (view, stats, marktap -L,
# messages about the metadata).  Control bytes show as \xHH.  Timer
# probes fire on trace time: a gap of 2^62 ns in the maker's timestamps
# under timer.ms(1) was 4.6 * 10^12 firings, ^C ignored meanwhile.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
MTAP=$top_builddir/translator/marktap
[ -x "$MTAP" ] || skip_all "marktap not built"
[ "$(id -u)" = 0 ] || skip_all "needs root (the trace is made by nobody)"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
plan 24

ESC=$(printf '\033') BEL=$(printf '\007')
# raw ESC or BEL anywhere in FILE: "raw", else "clean"
raw() { if grep -q "[$ESC$BEL]" "$1"; then echo raw; else echo clean; fi; }

# nobody's trace: basic.trace with its event "noargs" renamed to a name
# that closes a Lua comment and prints, and colours the terminal; the
# env's domain rings the bell
chmod 755 "$TMP"
mkdir "$TMP/n" && chown 65534:65534 "$TMP/n"
nobody "$GEN" "$TMP/n/t" < "$VIEWDIR/basic.trace"
nobody sed -i -e 's/name = "noargs"/name = "noargs\\nprint(\\"INJECTED\\")\\n--\x1b[31m\x07"/' \
	-e 's/domain = "ust"/domain = "u\x1b]0;title\x07"/' "$TMP/n/t/metadata"
T=$TMP/n/t
like "$(stat -c %U "$T/metadata"):$(grep -c INJECTED "$T/metadata")" "^nobody:1" "nobody made the trace"

# 1. the name is not code
"$MTAP" --trace "$T" -e 'global n probe trace.event("*") { n++ } probe end { printf("n=%d\n", n) }' \
	> "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/out")" "0:n=7" "marktap --trace: the script runs, every event counted"
is "$(grep -c INJECTED "$TMP/out")" 0 "the Lua in an event name is not run"
"$MTAP" -g --trace "$T" -e 'probe trace.event("noargs*") { println(pn()) exit() }' > "$TMP/out" 2>&1
is "$(cat "$TMP/out")" 'trace.event("noargs\x0aprint("INJECTED")\x0a--\x1b[31m\x07")' \
	"nor with -g; pn() names it with its control bytes as text"

# 2. no reader passes the maker's control bytes to the terminal
"$MTAP" --trace "$T" -L 'trace.event("*")' > "$TMP/list" 2>&1
is "$(raw "$TMP/list")" clean "marktap -L: no raw escape sequence"
"$MT" view "$T" > "$TMP/view" 2>&1
is "$(raw "$TMP/view"):$(wc -l < "$TMP/view")" "clean:9" "marktrace view: no raw escape, no line added"
"$MT" stats "$T" > "$TMP/stats" 2>&1
is "$(raw "$TMP/stats")" clean "marktrace stats: no raw escape in names or the env"
like "$(cat "$TMP/stats")" '\(u\\x1b\]0;title\\x07\)' "the env's value shown with \\xHH"

# 3. messages about broken metadata quote it without its control bytes
mkdir "$TMP/n/e" && chown 65534:65534 "$TMP/n/e"
nobody cp -r "$T" "$TMP/n/e/t"
nobody sed -i 's/^env {/"\x1b[2J\x1b]0;x\x07" env {/' "$TMP/n/e/t/metadata"
"$MT" view "$TMP/n/e/t" > "$TMP/e1" 2>&1
like "$(raw "$TMP/e1"):$(cat "$TMP/e1")" '^clean:.*saw string "\\x1b\[2J' "a token quoted in a metadata error: as text"
nobody cp "$T/metadata" "$TMP/n/e/t/metadata"
nobody sed -i '/name = "noargs/,/stream_id/ s/id = 2;/id = 0;/' "$TMP/n/e/t/metadata"
"$MTAP" --trace "$TMP/n/e/t" -e 'probe begin { exit() }' > "$TMP/e2" 2>&1
like "$(raw "$TMP/e2"):$(cat "$TMP/e2")" "^clean:ERROR: .*two events with id 0 \\('fs_open' and 'noargs\\\\x0aprint" "an event name in an error: as text"
"$MT" timeline "$TMP/n/e/t" -o "$TMP/x.html" > "$TMP/e3" 2>&1
is "$(raw "$TMP/e3")" clean "marktrace timeline's error: as text"

# 3b. a string a traced program wrote: C1 controls (CSI as UTF-8 U+009B,
#     and as the lone byte 0x9b) are shown as text; other UTF-8 as it is
nobody sh -c "printf 'trace .\nmarker 0 s v %%s\nstream 0\npacket\nev 1000 s 5 5 p \"a\302\2332Jb \303\251 \2333J \342\202\254\"\n' |
	'$GEN' '$TMP/n/c1'"
"$MT" view "$TMP/n/c1" > "$TMP/c1" 2>&1
like "$(cat "$TMP/c1")" 's: v="a\\xc2\\x9b2Jb é \\x9b3J €"$' "marktrace view: C1 controls in a string as \\xHH, UTF-8 kept"

# 3c. names of the trace's files and folders (stats lists them, messages
#     quote them)
nobody mkdir "$TMP/n/d" "$TMP/n/d/sub$ESC[2J"
nobody sh -c "'$GEN' '$TMP/n/d/sub$ESC[2J' < '$VIEWDIR/basic.trace' &&
	mv '$TMP/n/d/sub$ESC[2J/channel0_1' '$TMP/n/d/sub$ESC[2J/channel0_1$ESC]0;t$BEL'"
"$MT" stats "$TMP/n/d" > "$TMP/d1" 2>&1
like "$(raw "$TMP/d1"):$(tr "\n" " " < "$TMP/d1")" '^clean:.*sub\\x1b\[2J.*channel0_1\\x1b\]0;t\\x07' \
	"marktrace stats: folder and file names as text"
nobody sh -c "printf XXXX | dd of='$TMP/n/d/sub$ESC[2J/channel0_1$ESC]0;t$BEL' conv=notrunc 2>/dev/null"
"$MT" view "$TMP/n/d" > /dev/null 2> "$TMP/d2"
like "$(raw "$TMP/d2"):$(cat "$TMP/d2")" '^clean:marktrace: .*channel0_1\\x1b\]0;t\\x07: byte 0: bad packet magic' \
	"an error about a damaged file: its name as text"

# 3d. links in the trace: nobody's link to root's private trace is not
#     followed (export would hand root's events back to nobody); root's
#     own link in root's trace is
mkdir -m 700 "$TMP/private"
"$GEN" "$TMP/private/k" < "$VIEWDIR/basic.trace"
nobody sh -c "'$GEN' '$TMP/n/l' < '$VIEWDIR/basic.trace' && ln -s '$TMP/private/k/channel0_0' '$TMP/n/l/channel0_7'"
"$MT" export "$TMP/n/l" -o "$TMP/l.json" 2> "$TMP/l.err"
like "$?:$(cat "$TMP/l.err")" "^1:marktrace: .*/channel0_7: a symbolic link of user 65534, not followed" \
	"nobody's link to root's private trace: not followed, said"
ln -s "$TMP/private/k/channel0_0" "$TMP/private/k/channel0_5"
like "$("$MT" stats "$TMP/private/k" 2>&1 | grep -c channel0_)" '^3$' "root's own link in root's trace: followed"

# 3e. what export and timeline write: 0600 (a kernel trace's file names
#     are not for everyone), and not through a link nobody planted
echo keep > "$TMP/rootfile"
nobody ln -s "$TMP/rootfile" "$TMP/n/out.json"
"$MT" export "$T" -o "$TMP/n/out.json" 2> "$TMP/o.err"
like "$?:$(cat "$TMP/rootfile"):$(cat "$TMP/o.err")" "^1:keep:marktrace: export: cannot write .*: a symbolic link, not followed" \
	"export -o onto nobody's link: refused, the file it points to untouched"
nobody ln -s "$TMP/rootfile" "$TMP/n/out.svg"
"$MT" timeline "$T" -o "$TMP/n/out.svg" 2> "$TMP/o.err"
is "$?:$(cat "$TMP/rootfile")" "1:keep" "timeline -o onto nobody's link: refused"
(umask 022; "$MT" export "$T" -o "$TMP/m.json" 2>/dev/null; "$MT" timeline "$T" -o "$TMP/m.html" 2>/dev/null)
is "$(stat -c %a "$TMP/m.json") $(stat -c %a "$TMP/m.html")" "600 600" "export and timeline create their files 0600"

# 3f. a trace of 100000 event classes (8 MB of metadata): trace.event
#     probes resolve and bind by name, not by comparing every class with
#     every other (52 s for -L) and every probe point (over a minute)
nobody /usr/bin/python3 - "$T/metadata" "$TMP/n/many" <<'PY' || true
import os, sys
base = open(sys.argv[1]).read()
head = base[:base.index("/* marktap format:")]
os.mkdir(sys.argv[2])
open(sys.argv[2] + "/metadata", "w").write(head + "".join(
    'event {\n\tname = "e%d";\n\tid = %d;\n\tstream_id = 0;\n\tfields := struct {\n\t};\n};\n' % (k, k)
    for k in range(100000)))
PY
is "$(timeout -k 2 30 "$MTAP" --trace "$TMP/n/many" -L 'trace.event("e1*")' 2>&1 | wc -l)" 11111 \
	"marktap -L over 100000 classes: every match, in time"
out=$(timeout -k 2 30 "$MTAP" --trace "$TMP/n/many" -e 'global n probe trace.event("*") { n++ } probe end { println(n) }' 2>&1)
is "$?:$out" "0:0" "a probe on all 100000 classes binds in time (the trace has no events)"

# 4. timers over a gap of 2^62 ns: bounded (said), and ^C stops them
nobody sh -c "printf 'trace .\nmarker 0 ping v %%d\nstream 0\npacket\nev 1000 ping 5 5 p 1\nev 4611686018427387904 ping 5 5 p 2\nev 4611686018427388904 ping 5 5 p 3\n' |
	'$GEN' '$TMP/n/gap'"
timeout -k 5 120 "$MTAP" --trace "$TMP/n/gap" -e 'global n probe timer.ms(1) { n++ }
	probe trace.event("ping") { printf("%d ", $v) } probe end { printf("n>0:%d\n", n > 0) }' > "$TMP/out" 2> "$TMP/err"
is "$?:$(cat "$TMP/out")" "0:1 2 3 n>0:1" "timer.ms(1) over a gap of 146 years: every event, an end"
like "$(cat "$TMP/err")" "WARNING: [0-9]+ timer firings skipped over gaps in the trace" "the firings given up are said"
"$MTAP" --trace "$TMP/n/gap" -e 'global x, k probe timer.ms(1) { for (i = 0; i < 200; i++) x += i; if (++k == 1000) warn("catching up") }
	probe end { println("end") }' > "$TMP/out" 2>&1 &
mt=$!
# ^C once the timers fire over the gap (said on stderr, which is not buffered)
wait_for 30 grep -q "^WARNING: catching up$" "$TMP/out"
kill -INT $mt
wait_for 10 exited $mt || { kill -9 $mt; diag "still running 10 s after SIGINT"; }
wait $mt
is "$?:$(tail -n 1 "$TMP/out")" "0:end" "SIGINT while timers catch up: the end probe runs, status 0"
done_testing
