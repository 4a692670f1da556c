#!/bin/sh
# Pass 5 in the marktap process: begin/end/timer probes with the runtime
# library; expected outputs written from stap's documented semantics.
#
# The run corpus: every tests/translator/run/NAME.stp but features.stp runs
# with the options in NAME.opts (if any) and must print NAME.expected
# exactly, standard error included; NAME.status holds an exit status other
# than 0.  Each case names in a comment the SystemTap test or document its
# expected output comes from.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
d="$top_srcdir/tests/translator/run"
cases=$(cd "$d" && ls *.stp | grep -v '^features\.stp$' | sed 's/\.stp$//')
plan $((15 + $(echo "$cases" | grep -c .)))
is "$("$MT" -e 'probe begin { println("hi"); exit() }')" "hi" "hello world"
"$MT" "$d/features.stp" > "$TMP/out" 2>&1
if cmp -s "$TMP/out" "$d/features.expected"; then ok 0 "arrays, foreach, stats, try, functions, unread globals"; else
	ok 1 "arrays, foreach, stats, try, functions, unread globals"; diff "$d/features.expected" "$TMP/out" | sed 's/^/# /'; fi
is "$("$MT" -e 'global n probe timer.ms(5) { n++; if (n == 3) exit() } probe end { println(n) }')" "3" "timer loop until exit()"
is "$("$MT" -T 0.2 -e 'probe timer.ms(10) { } probe end { println("ended") }')" "ended" "-T ends the session, end probes run"
is "$("$MT" -e 'probe begin(2) { println("b") } probe begin(1) { println("a"); }  probe begin(3) { exit() }')" "a
b" "begin priorities"
"$MT" -e 'probe begin { z = 0; println(1 / z) }' > "$TMP/out" 2> "$TMP/err"; rc=$?
is "$rc" 1 "a handler error ends with status 1"
like "$(cat "$TMP/err")" "ERROR: division by 0" "stap's ERROR line"
is "$("$MT" -e 'global c probe begin { c = 5; exit() }')" "c=5" "a global written, never read, is printed at the end"
is "$("$MT" -G c=7 -e 'global c = 1 probe begin { println(c); exit() }')" "7" "-G sets a global"
"$MT" -o "$TMP/o.txt" -e 'probe begin { println("to file"); exit() }'
is "$(cat "$TMP/o.txt")" "to file" "-o writes handler output to a file"
# @variance(s, SHIFT): stap's checks of the shift (stap -p2 gives these messages)
"$MT" -e 'global x probe begin { x <<< 1; println(@variance(x, 63)) }' > "$TMP/out" 2>&1; rc=$?
is "$rc" 1 "@variance shift out of range: status 1"
like "$(cat "$TMP/out")" "semantic error: bit shift \(63\) out of range <0\.\.62>: operator '@variance' at <input>:1:41" "@variance shift out of range"
"$MT" -e 'global y probe begin { y <<< 1; println(@variance(y, 1), @variance(y)) }' > "$TMP/out" 2>&1
like "$(cat "$TMP/out")" "semantic error: conflicting bit shifts declared \(previously 1\): operator '@variance' at <input>:1:58" "one bit shift per statistic"
like "$(p1 -e 'global y probe begin { println(@variance(y, 0x3), @variance(y, -2)) }')" "println\(@variance\(y, 3\), @variance\(y, -2\)\)" "-p1 prints the shift"
"$MT" -e 'global a probe begin { a[1] <<< 1; print(@hist_log(a[1])); print(@hist_linear(a[1], 0, 10, 1)) }' > "$TMP/out" 2>&1
like "$(cat "$TMP/out")" "semantic error: multiple histogram types declared on '__global_a': operator '@hist_linear' at <input>:1:66" \
	"one histogram per statistic (stap -p2's message)"
for c in $cases; do
	opts=$(cat "$d/$c.opts" 2>/dev/null)
	want=$(cat "$d/$c.status" 2>/dev/null || echo 0)
	# shellcheck disable=SC2086
	(cd "$d" && "$MT" $opts "$c.stp") > "$TMP/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ] && cmp -s "$TMP/out" "$d/$c.expected"; then ok 0 "run corpus: $c"; else
		ok 1 "run corpus: $c (exit $rc, expected $want)"
		diff "$d/$c.expected" "$TMP/out" | head -40 | sed 's/^/# /'
	fi
done
done_testing
