#!/bin/sh
# Pass 5 in the marktap process: begin/end/timer probes with the runtime
# library; expected outputs written from stap's documented semantics.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 10
is "$("$MT" -e 'probe begin { println("hi"); exit() }')" "hi" "hello world"
d="$top_srcdir/tests/translator/run"
"$MT" "$d/features.stp" > "$TMP/out" 2>&1
if cmp -s "$TMP/out" "$d/features.expected"; then ok 0 "arrays, foreach, stats, try, functions, unread globals"; else
	ok 1 "arrays, foreach, stats, try, functions, unread globals"; diff "$d/features.expected" "$TMP/out" | sed 's/^/# /'; fi
is "$("$MT" -e 'global n probe timer.ms(5) { n++; if (n == 3) exit() } probe end { println(n) }')" "3" "timer loop until exit()"
is "$("$MT" -T 0.2 -e 'probe timer.ms(10) { } probe end { println("ended") }')" "ended" "-T ends the session, end probes run"
is "$("$MT" -e 'probe begin(2) { println("b") } probe begin(1) { println("a"); }  probe begin(3) { exit() }')" "a
b" "begin priorities"
"$MT" -e 'probe begin { x = 1 / 0 }' > "$TMP/out" 2> "$TMP/err"; rc=$?
is "$rc" 1 "a handler error ends with status 1"
like "$(cat "$TMP/err")" "ERROR: division by 0" "stap's ERROR line"
is "$("$MT" -e 'global c probe begin { c = 5; exit() }')" "c=5" "a global written, never read, is printed at the end"
is "$("$MT" -G c=7 -e 'global c = 1 probe begin { println(c); exit() }')" "7" "-G sets a global"
"$MT" -o "$TMP/o.txt" -e 'probe begin { println("to file"); exit() }'
is "$(cat "$TMP/o.txt")" "to file" "-o writes handler output to a file"
done_testing
