#!/bin/sh
# The command line: --help, bad options, -p3, -p4 module files, -l/-L, -D.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 9
"$MT" --help > "$TMP/help"; is "$?" 0 "--help exits 0"
like "$(cat "$TMP/help")" "-p NUM" "--help lists options"
"$MT" --bogus 2>/dev/null; is "$?" 1 "an unknown option exits 1"
"$MT" -p9 -e 'probe begin {}' 2>/dev/null; is "$?" 1 "a bad pass number exits 1"
like "$("$MT" -p3 -e 'probe begin { println("x") }')" 'rt.probe\("probe_0"' "-p3 prints the generated Lua"
(cd "$TMP" && "$MT" -p4 -m hello_mod -e 'probe begin { println("x") }' >/dev/null)
like "$(head -3 "$TMP/hello_mod.mtm")" "-- name: hello_mod" "-p4 -m writes NAME.mtm with a manifest"
like "$(grep -- '-- probe:' "$TMP/hello_mod.mtm")" "probe_0 begin" "the manifest lists the probes"
is "$("$MT" -l 'begin')" "begin" "-l begin"
"$MT" -D NOSUCH=1 -e 'probe begin {}' 2>/dev/null; is "$?" 1 "unknown -D setting"
done_testing
