#!/bin/sh
# Bad scripts: stap's "parse error:" with file:line:col, the source line and
# a caret; every error of the pass; exit status 1; never a crash.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 19
"$MT" -p1 -e 'probe begin { x = 1 + }' > "$TMP/out" 2> "$TMP/err"; rc=$?
is "$rc" 1 "a parse error exits 1"
is "$(sed -n 1p "$TMP/err")" "parse error: expected literal string or number" "message in stap's words"
is "$(sed -n 2p "$TMP/err")" "        saw: operator '}' at <input>:1:23" "what was seen, where"
is "$(sed -n 3p "$TMP/err")" "     source: probe begin { x = 1 + }" "the source line"
is "$(sed -n 4p "$TMP/err")" "                                   ^" "a caret under the column"
like "$(cat "$TMP/err")" "Pass 1: parse failed" "pass 1 failure line"
printf 'probe begin { x = }\nprobe end { y = ( }\nglobal 3\nfunction f( { }\nprobe timer.ms(1) { println("ok") }\n' > "$TMP/multi.stp"
"$MT" -v -p1 "$TMP/multi.stp" 2> "$TMP/err" >/dev/null; rc=$?
is "$rc" 1 "several errors exit 1"
is "$(grep -c '^parse error' "$TMP/err")" 4 "every error of the file is reported (-v: no folding)"
like "$(cat "$TMP/err")" "4 parse errors\." "the count"
like "$(cat "$TMP/err")" "multi.stp:4:" "an error after others still has its line"
"$MT" -p1 -e 'probe begin { x = "abc }' 2> "$TMP/err"; is "$?" 1 "unterminated string"
like "$(cat "$TMP/err")" "Could not find matching closing quote" "stap's message for it"
"$MT" -p1 -e 'probe begin { return 1 }' 2> "$TMP/err"
like "$(cat "$TMP/err")" "found 'return' not in function context" "return in a probe"
"$MT" -p1 -e 'function f() %{ x %} probe begin {}' 2> "$TMP/err"
like "$(cat "$TMP/err")" "embedded code in unprivileged script; need marktap -g" "embedded code needs -g"
"$MT" -p1 -e 'probe begin { x = $1 }' 2> "$TMP/err"
like "$(cat "$TMP/err")" "command line argument out of range \[1-0\]" "missing script argument"
# Every file of bad/ fails cleanly: status 1, a message, no signal.
st=0
for f in "$top_srcdir"/tests/translator/bad/*.stp; do
	"$MT" -p2 "$f" >/dev/null 2>"$TMP/err"; rc=$?
	if [ "$rc" != 1 ] || ! grep -q 'error' "$TMP/err"; then st=1; diag "$f: rc=$rc"; fi
done
ok $st "every script of tests/translator/bad fails with a message and status 1"
# a $N argument that holds $N again: stap's error, not an endless expansion
out=$("$MT" -p1 -e '$1' '$1' 2>&1); st=$?
is "$st $(printf '%s' "$out" | head -1)" "1 parse error: invalid nested substitution of command line arguments" "\$1 whose text is \$1: a parse error, exit 1"
out=$("$MT" -p1 -e 'probe begin { x = $1 }' 'y + $#' 2>&1); is "$?" 1 "\$# inside an argument is nested too"
is "$("$MT" -p1 -e 'probe begin { x = $1 }' '3 + @1' 2>&1 | grep -c 'invalid nested')" 1 "@1 inside an argument: one error"
done_testing
