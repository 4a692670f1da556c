#!/bin/sh
# trace-hostile.t - traces another user made, read by root: the strings of
# their metadata (event names, env values) are the maker's choice.  An
# event name holding a newline and Lua must not become code of the script
# that `marktap --trace` runs over it (it did: the name went raw into a
# "-- probe point" comment of the generated Lua).
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
MTAP=$top_builddir/translator/marktap
[ -x "$MTAP" ] || skip_all "marktap not built"
[ "$(id -u)" = 0 ] || skip_all "needs root (the trace is made by nobody)"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
plan 4

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
"$MTAP" -g --trace "$T" -e 'global n probe trace.event("*") { n++ }' > "$TMP/out" 2>&1
is "$(grep -c INJECTED "$TMP/out")" 0 "nor with -g (where Lua could do anything)"

done_testing
