#!/bin/sh
# Pass 2: types, probe points, aliases, tapsets, context variables, and
# stap's semantic errors.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 49
out=$("$MT" -p2 -e 'global g, h, a; function f(x) { return x + 1 } probe begin { g = f(2); h <<< 1; println(g, @count(h)); exit() } probe timer.ms(100) { s = "x"; a[s] = 1; printf("%s %d\n", s, strlen(s)) }')
is "$out" "# globals
g:long
h:stats
a:long [string]
# functions
exit:unknown ()
f:long (x:long)
strlen:long (s:string)
# probes
begin /* <- begin */
timer.ms(100) /* <- timer.ms(100) */
  # locals
  s:string" "-p2 prints globals, functions, probes as stap does"
err() { "$MT" -p2 -e "$1" 2>&1 >/dev/null; }
like "$(err 'probe begin { x = 1; x = "s"; println(x) }')" "semantic error: type mismatch" "type mismatch"
# stap 4.8 first drops stores to locals nothing reads: no mismatch left
like "$(err 'probe begin { x = 1; x = "s" }')" "^WARNING: Eliding assignment to 'x': operator '=' at <input>:1:17" \
	"x = 1; x = \"s\", x never read: stores elided, as stap"
like "$(err 'probe begin { x = 1; x = "s" }' | grep error)" "^semantic error: no probes found" "... the probe left empty, no probes (stap's answer)"
like "$(err 'probe begin { a[1] = 1 }')" "unresolved arity-1 global array a, missing global declaration" "array without global"
like "$(err 'probe begin { foo() }')" "semantic error: unresolved function foo( \\(similar: [a-z_, ]+\\))?: identifier 'foo'" "unknown function, stap's similar names"
like "$(err 'probe nosuch { }')" "semantic error: while resolving probe point nosuch" "unknown probe point"
is "$("$MT" -p2 -e 'probe nosuch ?, begin { next }' | tail -1)" "begin /* <- begin */" "optional point"
like "$(err 'probe begin { println($arg1) }')" "unresolved target-symbol expression" "\$arg1 in begin"
like "$(err 'probe kernel.mark("fs_open") { println($arg0) }')" "invalid marker argument number" "\$arg0"
like "$(err 'probe kernel.mark("fs_open") { $fd = 1 }')" "write to marker parameter not permitted" "writing a marker argument"
like "$(err 'probe kernel.mark("fs_open") { println($fdd) }')" \
	"invalid target symbol for marker, .* expected \\(alternatives: \\\$fd, .*\\\$filename\\)" "a misspelt marker field: stap's error, the names there, nearest first"
NF='probe netfilter.hook("NF_INET_PRE_ROUTING").pf("NFPROTO_IPV4")'
like "$(err "$NF { \$verdict = 0 }")" "write to netfilter verdict requires guru mode; need stap -g: identifier '\\\$verdict'" \
	"netfilter's \$verdict written without -g: stap's error"
is "$("$MT" -g -p2 -e "$NF { \$verdict = 0 }" 2>&1 | head -1)" "# probes" "... with -g it elaborates, as stap's"
like "$(err "$NF { \$hooknum = 0 }")" "write to netfilter parameter not permitted" "another netfilter parameter written: stap's error"
like "$(err "$NF { println(\$verdit) }")" "unsupported context variable \\(alternatives: \\\$verdict, " "a misspelt netfilter variable: the alternatives"
like "$(err 'probe procfs("x").read { println($valu) }')" "invalid target symbol for procfs probe, \\\$value expected" \
	"procfs: stap's error for another variable"
like "$(err 'probe kernel.mark("fs_open") { x = $fd[1] }')" "marker argument may not be used as array" "marker argument as array"
is "$("$MT" -p2 -e 'probe kernel.mark("fs_open") { printf("%d %s %s %s\n", $fd, $filename, $name, $$parms); x = @defined($nope); println(x) }' | sed -n '/locals/,$p')" "  # locals
  x:long" "marker context variables typed from the format, @defined"
n=$("$MT" -u -p2 -e 'probe kernel.mark("fs_*") { }' | grep -c 'kernel.mark')
is "$n" "$(grep -c '^fs_' "$top_srcdir/tapsets/markers.tsv")" "wildcard expands to every matching marker"
is "$("$MT" -p2 -e 'probe my.pre = begin { a = 1 } probe my.post += begin { a = 2 } probe my.* { println(a) }' | grep -c '^begin')" 2 "aliases with = and +=, wildcard over aliases"
# stap's optimizer, before types: stores nothing reads, then statements
# without effects, round after round (the alias statements of a user's
# file too: stap has "no probes found" for this one)
is "$(err 'probe my.pre = begin { a = 1 } probe my.post += begin { b = "x" } probe my.* { c = a }' | grep 'semantic error')" \
	"semantic error: no probes found" "stores nothing reads go, then what they read, to the aliases' statements"
is "$(err 'probe begin { x = y = z = 0; exit() }' | grep -o "Eliding [a-z-]* [a-z]*[ to']*[xyz]*")" "Eliding assignment to 'z
Eliding assignment to 'y
Eliding assignment to 'x
Eliding side-effect-free expression " "x = y = z = 0 nothing reads: each store, innermost first, then the statement"
is "$("$MT" -p2 -e 'global arr probe begin { i = [1] in arr && 3 in arr; exit() }' 2>/dev/null | sed -n 2p)" "arr:long" \
	"an array that only an elided test read needs no types (stap's answer)"
is "$(err 'function f() { x = 1; return x } probe begin { f()++; 1 / 0; sprintf("x"); exit() }' | grep -o "expression : .* at <input>:1:[0-9]*")" \
	"expression : identifier 'f' at <input>:1:48
expression : number '1' at <input>:1:55
expression : identifier 'sprintf' at <input>:1:62" \
	"calls of functions without effects, f()++, 1 / 0 and sprintf() as statements go, as stap's"
is "$(err 'function g() { println(1); return 2 } global n probe begin { g(); n++; x = 1; x++; a = 1; a && g(); exit() }')" \
	"" "calls with effects, globals and locals written (x++ reads x) stay"
like "$(err 'probe begin { if (x) {}; exit() }')" "unresolved type : identifier 'x'" \
	"if (x) {} alone keeps x, untyped: the if becomes x the round nothing else changed (stap's)"
is "$("$MT" -p2 -e 'probe begin { sprintf("x"); if (x) {} else if (y) ; exit() }' 2>/dev/null | tail -1)" "begin /* <- begin */" \
	"... and goes when a round before did change something"
is "$("$MT" -e 'function f() { println("f"); return 1 } probe begin { x = f(); exit() }' 2>/dev/null)" "f" \
	"a store elided keeps its value's effects"
like "$(err 'probe begin { printf("%d\n", "s") }')" "type mismatch" "printf checks argument types"
# a probe's local nothing types is stap's "unresolved type" (after the
# never-assigned warning), unless stap's optimizer would drop it first
out=$("$MT" -p2 -e 'probe begin { println(x) }' 2>&1); rc=$?
is "$rc" 1 "println of a never-assigned local: exit 1"
like "$out" "^semantic error: unresolved type : identifier 'x' at <input>:1:23" "println of a never-assigned local: unresolved type"
"$MT" -p2 -e 'probe begin { y = x; println(y) }' > /dev/null 2>&1; is "$?" 1 "a local copied from an untyped one: unresolved type"
"$MT" -p2 -e 'probe begin { delete x }' > /dev/null 2>&1; is "$?" 1 "a local only deleted: unresolved type"
"$MT" -p2 -e 'probe begin { x++; println(x) }' > /dev/null 2>&1; is "$?" 0 "x++ types x as long"
# stap's optimizer: a probe whose handler does nothing is elided with a
# warning (its first component named, at the probe keyword, or at the
# user's point when it came through an alias); none left is an error
out=$("$MT" -p2 -e 'probe begin, timer.s(1) { } probe end { println(1) }' 2>&1); rc=$?
is "$rc $(printf '%s\n' "$out" | grep -c 'WARNING: Probe .* has been elided')" "0 2" "empty probes: one warning per point"
like "$out" "^WARNING: Probe 'begin' has been elided: keyword at <input>:1:1" "empty probe: stap's warning, at the probe keyword"
is "$(printf '%s\n' "$out" | grep -v '^ \|^$\|WARNING')" "# probes
end /* <- end */" "the elided probes are gone from -p2's listing"
like "$("$MT" -p2 -e 'probe foo = begin { } probe foo { ; {} } probe end { println(1) }' 2>&1)" \
	"^WARNING: Probe 'begin' has been elided: identifier 'foo' at <input>:1:29" "an empty probe through an alias: the point is named"
out=$("$MT" -p2 -e 'probe begin { } probe kernel.mark("fs_open") { }' 2>&1); rc=$?
like "$rc $(echo $out)" "^1 .*semantic error: no probes found" "only empty probes: no probes found, exit 1"
is "$("$MT" -u -p2 -e 'probe begin { }' 2>&1)" "# probes
begin /* <- begin */" "-u keeps an empty probe, silently"
is "$("$MT" -e 'probe begin { } probe begin { println("ran"); exit() }' 2>/dev/null)" "ran" "the others run"
# stap's optimizer reduces an if whose branches do nothing to its
# condition, before types: an untyped local there is "unresolved type"
# (stap -p2 says so for these two and accepts the third)
"$MT" -p2 -e 'probe begin { println(1); if (x) ; else ; }' > /dev/null 2> "$TMP/err"
like "$? $(grep '^semantic error' "$TMP/err")" "^1 semantic error: unresolved type : identifier 'x' at <input>:1:31" "if (x) ; else ;: unresolved type"
"$MT" -p2 -e 'probe begin { println(1); if (x) {} }' > /dev/null 2>&1; is "$?" 1 "if (x) {}: the same"
"$MT" -p2 -e 'probe begin { if (x) println(1) }' > /dev/null 2>&1; is "$?" 0 "if (x) with a branch: x is a long"
# Tapset files are parsed when a name of theirs is looked up: what their
# index finds past comments, strings, embedded code and nested braces
mkdir -p "$TMP/ts"
cat > "$TMP/ts/tricky.stp" <<'EOF'
/* a comment with a brace } and "function fake" */
global tricky_count = 3   // a global the script reads
function tricky_str:string () { return "}{ not a block" }
function tricky_embed:long () %{ return 41 --[[ } ]] %}
probe tricky.point = begin { tricky_v = tricky_embed() + 1 }
function tricky_last:long (x:long) { if (x) { return x } return 0 }
EOF
out=$("$MT" -I "$TMP/ts" -e 'probe tricky.point { printf("%s %d %d %d\n", tricky_str(), tricky_v, tricky_count, tricky_last(7)); exit() }' 2>&1)
is "$out" "}{ not a block 42 3 7" "a tapset's function, alias, global and a function after embedded code, found by the index"
"$MT" -p2 -e 'probe begin { println(1) }' -v 2>&1 | grep -q "analyzed script and 0 library scripts"
ok $? "a script that uses no tapset parses none (-v: 0 library scripts)"
out=$("$MT" -p2 -e 'probe begin { println(tricky_nosuch()) }' -I "$TMP/ts" 2>&1)
like "$out" "unresolved function tricky_nosuch \\(similar: tricky_str" "an unknown function: the similar names of every tapset (all parsed then)"
is "$("$MT" -I "$TMP/ts" --dump-functions 2>/dev/null | grep -c '^tricky_')" 3 "--dump-functions lists every tapset's functions"
done_testing
