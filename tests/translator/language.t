#!/bin/sh
# SystemTap fidelity, the language: what stap's parser accepts
# marktap accepts (target expressions parse, then fail in pass 2 with a
# clear error, since they need DWARF), and what it rejects marktap rejects,
# with stap's words.  Cases from SystemTap's language reference (langref,
# "Target variables", "@cast", "printd") and its parseko tests' rules.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 71
p1err() { "$MT" -p1 -e "$1" > /dev/null 2> "$TMP/err"; echo $?; }
p2err() { "$MT" -p2 -e "$1" > /dev/null 2> "$TMP/err"; echo $?; }

is "$(p2err 'probe begin { x = $foo->bar[2]->baz }')" 1 "a member chain parses, pass 2 fails"
like "$(sed -n 1p "$TMP/err")" "^semantic error: unresolved target-symbol expression: '->' needs DWARF debuginfo" \
	"the error says why"
# (@cast of a kernel type resolves through BTF: translator/btf.c, btf.t)
is "$(p2err 'probe begin { x = @cast(0, "no_such_struct_t")->pid }')" 1 "@cast of a type the kernel lacks: pass 2 fails"
like "$(cat "$TMP/err")" "unresolved target-symbol expression: .*operator '@cast' at <input>:1:19" "at the operator"
is "$(p2err 'probe begin { x = &@var("jiffies") }')" 1 "& and @var: pass 2 fails"
like "$(cat "$TMP/err")" "'&' needs DWARF" "naming '&'"
is "$("$MT" -e 'probe begin { println(@defined($foo->bar) ? 1 : 2); println(@defined(@var("x"))); exit() }' 2>&1)" "2
0" "@defined of what needs DWARF is 0, no error"
is "$(p1err 'probe begin { x = @kderef(4, p) }')" 1 "@kderef without -g"
like "$(sed -n 1p "$TMP/err")" "^parse error: using @kderef operator not permitted; need stap -g" "stap's words"
is "$("$MT" -g -p1 -e 'probe begin { x = @kderef(4, p) }' 2>&1 | sed -n 4p)" "(x) = (@kderef(4, p));" "with -g it parses"
# '&' of a plain variable: stap 4.8 reads it, "&(y)", and pass 2 refuses it
is "$("$MT" -p1 -e 'probe begin { x = &y }' 2>&1 | sed -n 4p)" "(x) = (&(y));" "'&' of a plain variable parses, as stap prints it"
is "$(p1err 'function f(a, b, a) { return 1 } probe begin { f(1, 2, 3) }')" 1 "duplicate parameter names"
like "$(tr "\n" " " < "$TMP/err")" "duplicate parameter names.*saw: identifier 'a' at <input>:1:18" "at the second one"
is "$(p1err 'probe begin { printdln(",", 1) }')" 1 "printdln with one value"
is "$(p1err 'probe begin { printd(",", 1) }')" 1 "printd with one value"
is "$(p1err 'probe @foo = begin { } probe @foo { }')" 1 "no @-named probe aliases"
is "$(p1err 'probe begin { x = @nosuch(1) }'; sed -n 1p "$TMP/err")" "1
parse error: unknown operator @nosuch" "an unknown @operator in stap's words"
is "$("$MT" -p1 -e 'probe {a,b}.{c,d} {}' 2>&1 | sed -n 3p)" "probe a.c,a.d,b.c,b.d{" "brace alternatives expand as stap expands them"
is "$("$MT" -e 'global n probe {begin,end} { n++; printf("%s %d\n", pp(), n) } probe begin { exit() }' 2>&1)" "begin 1
end 2" "each alternative is a probe"
is "$("$MT" -e 'global a%[3] probe begin { for (i = 1; i <= 5; i++) a[i] = i; foreach (k+ in a) print(k); exit() }' 2>&1)" "345" \
	"global a%[3]: a wrapping array of 3 (the oldest entries replaced)"
is "$(p1err 'global a[3]% probe begin { }')" 1 "global a[3]% is no declaration in stap either"
is "$("$MT" -e 'probe begin { println(@choose_defined($nosuch, 7)); exit() }' 2>&1)" "7" \
	"@choose_defined (stock macro): the defined one, the other not resolved"
is "$("$MT" -e 'probe begin { if (@defined($b)) println($b) else println("no b"); exit() }' 2>&1)" "no b" \
	"if (@defined(x)): the branch not taken is not resolved, as in stap"
if [ -r /proc/config.gz ] || [ -r "/boot/config-$(uname -r)" ] || [ -r "/lib/modules/$(uname -r)/build/.config" ]; then
	is "$("$MT" -p1 -e 'probe begin { %( CONFIG_64BIT == "y" %? x = 64 %: x = 32 %) }' 2>&1 | sed -n 4p)" \
		"(x) = ($([ "$(getconf LONG_BIT)" = 64 ] && echo 64 || echo 32));" "CONFIG_ tests answered from the running kernel's configuration"
else
	ok 0 "# SKIP no kernel configuration readable here"
fi
is "$("$MT" -p2 -e 'probe begin { x <<< 1; println(@count(x)) }' 2>&1 | sed -n 1p)" \
	"semantic error: stat locals not supported, missing global declaration? : identifier 'x' at <input>:1:15" "statistics as a local: stap's error"
is "$(p2err 'probe begin { println("a" =~ "(") }'; sed -n 1p "$TMP/err")" "1
semantic error: regex compilation error: Unmatched ( or \\(: string \"(\" at <input>:1:30" "an invalid regular expression is a pass 2 error, at the pattern"
is "$("$MT" -e 'probe begin { printf("%d%d\n", "abc" =~ "b+", "abc" !~ "^b"); exit() }' 2>&1)" "11" "valid ones still match"
is "$(p2err 'probe timer.hz(100).randomize(2) { println(1) }')" 1 "timer.hz has no randomize, as in stap"
# messages in stap's words
like "$(p2err 'function f(a) { return a } probe begin { println(f(1, 2)) }'; sed -n 1p "$TMP/err")" \
	"semantic error: arity mismatch found \\(function 'f' takes 1 args\\)" "the arity error names the count"
like "$(p2err 'probe begin { println(strlenn("a")) }'; sed -n 1p "$TMP/err")" \
	"semantic error: unresolved function strlenn \\(similar: strlen[,)]" "an unknown function: similar names, nearest first"
is "$("$MT" -G c=abc -e 'global c = 1 probe begin { println(c); exit() }' 2>&1 | sed -n 1p)" \
	"semantic error: -G c=abc: 'abc' is not a number, and global 'c' is a long" "-G with a string for a long global"
# string literals as stap's lexer reads them
is "$("$MT" -p1 -e 'probe begin { println("a\qb\n") }' | sed -n 4p)" 'println("aqb\n");' "an escape stap does not know loses its backslash"
is "$(p1err 'probe begin { x = "a
b" }'; sed -n 1p "$TMP/err")" "1
parse error: Could not find matching closing quote" "a literal ends on its line"
# embedded expressions (guru mode): Lua here, typed by stap's pragma
is "$("$MT" -g -e 'probe begin { x = %{ 1 + 2 %} * 2; println(x, " ", %{ /* string */ "s" .. "t" %}); exit() }' 2>&1)" "6 st" \
	"%{ %} as a value with -g: a Lua expression, /* string */ types it"
is "$("$MT" -g -p1 -e 'probe begin { if (%{ 1 %}) x = 1 }' | sed -n 4p)" "if (%{  1  %}) (x) = (1)" "printed as stap prints it"
is "$(p1err 'probe begin { x = %{ 1 %} }')" 1 "without -g: a parse error"
# stap's embedded C cannot run here: refused at pass 2, naming the block
out=$("$MT" -g -p2 -e 'function f:long (x:long) %{ STAP_RETVALUE = STAP_ARG_x * 2; %} probe begin { println(f(2)) }' 2>&1); st=$?
like "$st $out" "^1 semantic error: embedded C code cannot run in marktap \(it has 'STAP_ARG_'\): marktap's %\{ %\} blocks hold Lua: identifier 'f' at <input>:1:10" \
	"a function of stap's C: a semantic error at pass 2 that names what is C"
out=$("$MT" -g -p2 -e 'function f:long () %{ return 1 + %} probe begin { println(f()) }' 2>&1); st=$?
like "$st $out" "^1 semantic error: embedded code is not Lua: embedded code:2: unexpected symbol near 'end'" \
	"Lua that does not compile: refused at pass 2 with Lua's words, at the block"
like "$("$MT" -g -p2 -e 'probe begin { x = %{ ((struct task_struct *)p)->pid %} }' 2>&1)" "embedded C code cannot run in marktap \(it has '->'\)" \
	"a C expression block is refused too"
is "$("$MT" -g -e 'probe begin { println(%{ -EIO %}, " ", %{ ENOENT %}, " ", %{ S_DEAD %}); exit() }' 2>&1)" "-5 2 16" \
	"%{ -EIO %} and other kernel constants become their numbers"
# indexing what is no array: stap reads it, pass 2 rejects it (it crashed -p3)
is "$(p2err 'function f() { return 1 } probe begin { x = f()[2]; println(x) }'; sed -n 1p "$TMP/err")" "1
semantic error: unknown type in dereference: operator '[' at <input>:1:48" "f()[2]: stap's error, no crash"
is "$("$MT" -p3 -e 'global a probe begin { a[1] = 1; x = a[1][2]; println(x) }' > /dev/null 2>&1; echo $?)" 1 "a[1][2] at -p3: exit 1, no signal"
like "$(p1err 'global x probe begin { x = 1 } global x'; tr '\n' ' ' < "$TMP/err")" \
	"parse error: duplicate global name +saw: identifier 'x' at <input>:1:39" "a global declared twice: stap's parse error"
is "$(timeout 20 "$MT" -u -e 'probe oneshot { println("once") } probe timer.ms(10) { } probe end { println("end") }' 2>&1)" "once
end" "oneshot: the handler once at begin, then the session ends (a timer keeps none running)"
p2err 'probe begin { x = 1; x = "s"; println(x) }' > /dev/null
is "$(grep '^semantic error' "$TMP/err")" "semantic error: type mismatch (string): identifier 'x' at <input>:1:22
semantic error: type was first inferred here (long): identifier 'x' at <input>:1:15" \
	"a type mismatch points where the type was inferred, as stap"
like "$(p2err 'probe begin { printf("%d\n", "s") }'; sed -n 1p "$TMP/err")" \
	"semantic error: type mismatch: expected long but found string: string \"s\" at <input>:1:30" "an operand of the wrong type, in stap's words"
like "$(p2err 'probe begn { }'; sed -n 1p "$TMP/err")" "probe point mismatch \\(similar: begin, end[,)]" "a misspelt probe point: stap's mismatch, similar names"
# stap's texts for a point that leaves every known shape: the names
# expected at the component that is wrong, not the probe types
like "$(p2err 'probe timer.sex(1) { }'; sed -n 1p "$TMP/err")" \
	"^semantic error: while resolving probe point timer.sex\\(1\\): probe point mismatch \\(similar: sec[,)].*: identifier 'sex' at <input>:1:13\$" \
	"timer.sex: a mismatch at 'sex', sec suggested"
like "$(p2err 'probe syscall.opn { }'; sed -n 1p "$TMP/err")" \
	"probe point mismatch \\(similar: open[,)].*identifier 'opn'" "an alias's next part: its names (open), not the alias itself"
is "$(sed -n 1p "$TMP/err" | grep -c 'similar: [^)]*syscall')" 0 "... syscall is not among them"
like "$(p2err 'probe syscall.open.retrun { }'; sed -n 1p "$TMP/err")" "probe point mismatch \\(similar: return\\)" \
	"a misspelt part after an alias's name: the longer aliases' parts"
like "$(p2err 'probe timer { }'; sed -n 1p "$TMP/err")" \
	"probe point truncated \\(follow: hz\\(number\\) jiffies\\(number\\) ms\\(number\\) .* profile s\\(number\\) .*usec\\(number\\)\\)" \
	"a point that stops short: stap's truncated, with what may follow"
like "$(p2err 'probe begin.foo { }'; sed -n 1p "$TMP/err")" "begin.foo: invalid suffix for probe: identifier 'foo'" \
	"a part past a complete point: stap's invalid suffix"
like "$(p2err 'probe kernel.mark("fs_ioctll") { }'; sed -n 1p "$TMP/err")" \
	"kernel.mark\\(\"fs_ioctll\"\\): no match \\(similar markers: fs_ioctl[,)]" "an unknown kernel marker: names of the catalogue"
like "$(p2err 'probe process("/bin/true").mark("x") { }'; sed -n 1p "$TMP/err")" \
	"no match \\(/[a-z/]*true has no markers and no SDT probes\\)" "a mark of a program that has none: said so"
# Number literals: any that fits 64 bits unsigned, wrapping past INT64_MAX
# (stap -p1 prints -1 for 0xffffffffffffffff); one past that is stap's error
is "$("$MT" -e 'probe begin { printf("%d %d %d %d %x\n", 0xffffffffffffffff, 18446744073709551615,
	0x8000000000000000, 01777777777777777777777, 0xffffffff82a4b0c0); exit() }' 2>&1)" \
	"-1 -1 -9223372036854775808 -1 ffffffff82a4b0c0" "hex, decimal, octal up to 2^64-1 wrap to a long"
is "$("$MT" -p1 -e 'probe begin { x = $1 }' 0xffffffff82a4b0c0 2>&1 | sed -n 4p)" "(x) = (-2103136064);" \
	"a kernel address given as \$1"
is "$(p1err 'probe begin { x = 0x10000000000000000 }')" 1 "a hex literal past 64 bits is a parse error"
is "$(sed -n 1,2p "$TMP/err")" "parse error: number invalid or out of range
        saw: number '0x10000000000000000' at <input>:1:19" "stap's words, the number seen"
like "$(p1err 'probe begin { x = 18446744073709551616 }'; sed -n 2p "$TMP/err")" \
	"saw: number '18446744073709551616'" "decimal 2^64 too"
like "$(p1err 'probe begin { x = 0x }'; sed -n 1p "$TMP/err")" "number invalid or out of range" "0x alone"
# what stap 4.8 reads at pass 1 and refuses later, each at stap's pass
# and in its words (its -p1, -p2 and -p3 are the oracle)
p2err() { "$MT" -p2 -e "$1" > /dev/null 2> "$TMP/err"; echo "$? $(grep -m1 '^semantic error' "$TMP/err")"; }
p3err() { "$MT" -p3 -e "$1" > /dev/null 2> "$TMP/err"; echo "$? $(grep -m1 '^semantic error' "$TMP/err")"; }
like "$(p2err 'probe begin { x = 1; println(&x) }')" "^1 semantic error: unknown type in dereference: operator '&' at <input>:1:30" \
	"&x: pass 2 refuses it"
is "$("$MT" -p1 -e 'probe begin { println((x)[1][2]->b, &x[1]->y, "s"[1], (x + 1)[2]) }' 2>&1 | sed -n 4p)" \
	'println((x)[1][2]->b, &(x[1])->y, ("s")[1], ((x) + (1))[2]);' "(x)[1], \"s\"[1]: an index of a value (autocast), as stap prints it"
like "$(p2err 'probe begin { x = 1; println((x)[1]) }')" "^1 semantic error: unknown type in dereference: operator '\[' at <input>:1:33" \
	"... refused at pass 2, at the '['"
is "$("$MT" -p1 -e 'function f() { return 1 } probe begin { x = 1++ + f()++; y = ++f(); println(-x--) }' 2>&1 | sed -n 4,6p | tr '\n' ' ')" \
	'(x) = (((1)++) + ((f())++)); (y) = (++(f())); println(-((x)--)); ' "++ and -- of any value parse, as in stap"
is "$(p1err 'probe begin { a = 1; ++a++ }')" 1 "... but not ++a++, as in stap"
"$MT" -p2 -e 'probe begin { x = 1++ + 2; println(x) }' > /dev/null 2>&1
is "$?" 0 "1++ passes pass 2, as in stap"
like "$(p3err 'probe begin { x = 1++ + 2; println(x) }')" "^1 semantic error: invalid lvalue type: number '1' at <input>:1:19" \
	"... pass 3 refuses it in stap's words"
"$MT" -p2 -e 'global s probe begin { s[1] <<< 3; foreach (k in s) println(s[k]) }' > /dev/null 2>&1
is "$?" 0 "a statistics value printed passes pass 2, as in stap"
like "$(p3err 'global s probe begin { s[1] <<< 3; foreach (k in s-) println(s[k]) }')" \
	"^1 semantic error: print format actual argument evaluation type unsupported: identifier 's' at <input>:1:62" \
	"... pass 3 refuses it in stap's words"
like "$(p2err 'function f() { return 1 } probe begin { delete f() }')" \
	"^1 semantic error: invalid operand of delete expression: identifier 'f' at <input>:1:48" "delete f(): pass 2, stap's words"
done_testing
