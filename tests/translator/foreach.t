#!/bin/sh
# SystemTap fidelity, foreach and limits: array slices, '*' in
# membership tests, limit evaluated once, sort directives on any slot, the
# bound of begin/end/error probes.  Expected values are from SystemTap's
# language reference (langref "foreach", "in", and the MAXACTION /
# MAXACTION_INTERRUPTIBLE limits in stap(1)).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 24
run() { "$MT" -e "$1" 2>&1; }
A='global arr, n, x
function f() { n++; return 2 }
probe begin { arr[1,2] = 10; arr[2,2] = 20; arr[3,1] = 30; arr[1,1] = 40; arr[4,2] = 5 }'

is "$(run "$A probe begin { foreach ([a+, b] in arr[*, 2]) printf(\"%d,%d \", a, b); exit() }")" \
	"1,2 2,2 4,2 " "foreach over a slice arr[*, 2]: only the matching elements"
is "$(run "$A probe begin { foreach ([a, b] in arr[3, *]) printf(\"%d,%d \", a, b); exit() }")" \
	"3,1 " "a slice with the first index fixed"
is "$(run "$A probe begin { foreach ([a, b] in arr[*, *]-) printf(\"%d \", arr[a, b]); exit() }")" \
	"40 30 20 10 5 " "a slice of all '*' is the whole array, sorted by value"
is "$(run "$A probe begin { foreach ([a, b] in arr[7, *]) println(a); println(\"none\"); exit() }")" \
	"none" "a slice that matches nothing runs no iteration"
is "$(run "$A probe begin { foreach ([a, b] in arr[*, 2] limit f()) printf(\"%d \", a); printf(\"n=%d\", n); exit() }")" \
	"1 2 n=1" "limit f(): evaluated once, before the loop"
is "$(run "$A probe begin { x = 2; foreach ([a, b] in arr limit x) { x = 100; printf(\"%d \", a) }; exit() }")" \
	"1 2 " "the body changing the limit's variable changes no limit"
is "$(run "global arr, x probe begin { arr[1] = 1; arr[2] = 2; x = 0; foreach (k in arr[++x]+ limit x) printf(\"%d \", k); printf(\"x=%d\", x); exit() }")" \
	"1 x=1" "foreach (k in arr[++x]+ limit x): the slice's index first, then the limit"
is "$(run "global s, n function f() { n++; return 2 } probe begin { s <<< 1; s <<< 2; s <<< 3; foreach (b in @hist_linear(s, 0, 10, 1) limit f()) printf(\"%d \", b); printf(\"n=%d\", n); exit() }")" \
	"0 1 n=1" "limit over a histogram's buckets: evaluated once"
# sort directives
is "$(run "$A probe begin { foreach ([a, b-] in arr) printf(\"%d,%d \", a, b); exit() }")" \
	"1,2 2,2 4,2 3,1 1,1 " "sort on the second key, descending (ties in insertion order)"
is "$(run "$A probe begin { foreach (v+ = [a, b] in arr) printf(\"%d \", v); exit() }")" \
	"5 10 20 30 40 " "sort on the value with 'v+ ='"
is "$(run "$A probe begin { foreach ([a, b] in arr+ limit 2) printf(\"%d \", arr[a, b]); exit() }")" \
	"5 10 " "sort on the value, then limit"
# [..] in with '*'
is "$(run "$A probe begin { printf(\"%d %d %d %d\", [*, 2] in arr, [5, *] in arr, [3, *] in arr, [*, *] in arr); exit() }")" \
	"1 0 1 1" "[*, 2] in arr: any element with that index"
is "$(run "$A probe begin { if (!([*, 9] in arr)) println(\"no\"); exit() }")" "no" "! of a wildcard membership test"
"$MT" -p1 -e 'global a probe begin { if (![*, 9] in a) print(1) }' > /dev/null 2>&1
is "$?" 1 "![*, 9] in a is a parse error, as in stap"
"$MT" -p1 -e 'global a probe begin { foreach ([x, y] in a[*, 2]) print(x); if ([*, 1] in a) print(1) }' > "$TMP/out" 2>&1
like "$(cat "$TMP/out")" "foreach \(\[x, y\] in a\[\*, 2\]\)" "-p1 prints a slice as stap does"
"$MT" -p2 -e 'global a probe begin { a[1,2] = 1; foreach ([x] in a[*, 2]) print(x) }' > "$TMP/out" 2>&1
like "$(cat "$TMP/out")" "semantic error: inconsistent arity" "keys and slice of different arity: stap's error"
# stap forbids changing the array a foreach walks
"$MT" -p2 -e 'global a probe begin { a[1] = 1; foreach (k in a) { a[k + 1] = 2 } }' > /dev/null 2> "$TMP/err"
like "$(sed -n 1p "$TMP/err")" "^semantic error: variable 'a' modified during 'foreach' iteration: identifier 'a' at <input>:1:53" \
	"assigning to the walked array: stap's error, at the array"
"$MT" -p2 -e 'global a probe begin { a[1] = 1; foreach (k in a) { delete a[k] } }' > /dev/null 2> "$TMP/err"
like "$(sed -n 1p "$TMP/err")" "modified during 'foreach' iteration" "deleting from it too"
is "$(run 'global a, b probe begin { a[1] = 1; a[2] = 2; foreach (k in a) b[k] = a[k] + 1; foreach (k+ in b) print(b[k]); exit() }')" "23" \
	"writing another array in the loop is fine"
# limits: begin/end/error probes get 10 x MAXACTION, others MAXACTION
L='for (i = 0; i < 3000; i++) n++'
is "$(run "global n probe begin { $L; println(n); exit() }")" "3000" "a loop of 6000 actions finishes in begin"
is "$(run "global n probe begin { exit() } probe end { $L; println(n) }")" "3000" "... and in end"
like "$(run "global n probe timer.ms(1) { $L; println(n); exit() }")" "ERROR: MAXACTION exceeded" "... not in a timer probe"
is "$("$MT" -e "global n probe begin { z = 0; println(1 / z) } probe error { $L; println(n) }" 2>/dev/null)" "3000" "... and in an error probe"
is "$("$MT" -DMAXACTION_INTERRUPTIBLE=1000 -e "global n probe begin { $L; println(n); exit() }" 2>&1 | grep -c 'MAXACTION exceeded')" 1 \
	"-DMAXACTION_INTERRUPTIBLE=N sets that bound"
done_testing
