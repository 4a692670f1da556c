#!/bin/sh
# The command line: --help, bad options, -p3, -p4 module files, -l/-L, -D.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 17
"$MT" --help > "$TMP/help"; is "$?" 0 "--help exits 0"
like "$(cat "$TMP/help")" "-p NUM" "--help lists options"
"$MT" --bogus 2>/dev/null; is "$?" 1 "an unknown option exits 1"
"$MT" -p9 -e 'probe begin {}' 2>/dev/null; is "$?" 1 "a bad pass number exits 1"
like "$("$MT" -p3 -e 'probe begin { println("x") }')" 'rt.probe\("probe_0"' "-p3 prints the generated Lua"
(cd "$TMP" && "$MT" -p4 -m hello_mod -e 'probe begin { println("x") }' >/dev/null)
like "$(head -3 "$TMP/hello_mod.mtm")" "-- name: hello_mod" "-p4 -m writes NAME.mtm with a manifest"
like "$(grep -- '-- probe:' "$TMP/hello_mod.mtm")" "probe_0 begin" "the manifest lists the probes"
is "$("$MT" -l 'begin')" "begin" "-l begin"
# stap -l/-L: nothing matched is exit 1 with nothing said; what matches is
# listed and the rest ignored; a parse error is counted, no pass named
out=$("$MT" -l 'nosuch.point' 2>&1); is "$? [$out]" "1 []" "-l with no match: exit 1, silent"
out=$("$MT" -L 'process("/nonexistent/prog").mark("*")' 2>&1); is "$? [$out]" "1 []" "-L of a missing program: exit 1, silent"
out=$("$MT" -l 'process("/bin/true").function("no_such_fn_xyz")' 2>&1); is "$? [$out]" "1 []" "-l of an unknown function: exit 1, silent"
out=$("$MT" -l 'nosuch.point, end' 2>&1); is "$? [$out]" "0 [end]" "-l lists the points that match"
is "$("$MT" -l 'begin?, end!, timer.s(1) if (x > 1)' 2>&1)" "begin?
end!
timer.s(1) if ((x) > (1))" "-l prints each point with its ?, ! and condition, as stap"
out=$("$MT" -l 'begin(' 2>&1); is "$?" 1 "-l with a parse error exits 1"
like "$out" "^1 parse error\.\$" "-l parse error: counted, no pass line"
out=$("$MT" -p2 "$TMP/no-such-script.stp" 2>&1); like "$? $out" "^1 Input file '.*no-such-script.stp' is missing\." "a missing script file in stap's words"
"$MT" -D NOSUCH=1 -e 'probe begin {}' 2>/dev/null; is "$?" 1 "unknown -D setting"
done_testing
