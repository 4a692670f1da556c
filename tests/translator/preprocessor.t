#!/bin/sh
# %( %? %: %) conditionals and @define macros (also from .stpm files).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 17
body() { "$MT" -p1 "$@" 2>&1 | sed -n '/^probe begin{/,/^}/p' | sed '1d;$d'; }
is "$(body -e 'probe begin { %( arch == "x86_64" %? a = 1 %: a = 2 %) }')" "(a) = ($( [ "$(uname -m)" = x86_64 ] && echo 1 || echo 2 ));" "arch condition"
is "$(body -e 'probe begin { %( kernel_v >= "2.6" && kernel_v < "999" %? a = 1 %: a = 2 %) }')" "(a) = (1);" "kernel version comparison with &&"
is "$(body -e 'probe begin { %( kernel_vr == "*" %? a = 1 %: a = 2 %) }')" "(a) = (1);" "glob on kernel_vr"
is "$(body -e 'probe begin { %( $# > 1 %? a = 1 %: a = $1 %) }' 7)" "(a) = (7);" "\$# and the else branch"
is "$(body -e 'probe begin { %( guru_mode == 1 %? a = 1 %: %( runtime == "marktap" %? a = 3 %) %) }')" "(a) = (3);" "nested conditionals, runtime"
is "$(body -e '@define TWICE(x) %( (@x) * 2 %) probe begin { a = @TWICE(1 + 2) }')" "(a) = (((1) + (2)) * (2));" "macro with a parameter"
is "$(body -e '@define Z %( 0 %) @define Y %( @Z + 1 %) probe begin { a = @Y }')" "(a) = ((0) + (1));" "macro using a macro"
mkdir "$TMP/inc"
printf '@define ANSWER %%( 42 %%)\n' > "$TMP/inc/m.stpm"
is "$(body -I "$TMP/inc" -e 'probe begin { a = @ANSWER }')" "(a) = (42);" ".stpm macros from -I"
"$MT" -p1 -e 'probe begin { %( arch == "x" %? a = 1 }' 2> "$TMP/err"
like "$(cat "$TMP/err")" "parse error: incomplete conditional" "unterminated conditional"
# stap 4.8's rules (its -p1 is the oracle): no parentheses in conditions,
# systemtap_privilege, no macro defined twice in one file
"$MT" -p1 -e 'probe begin { %( (arch == "x86_64") %? a = 1 %) }' > /dev/null 2> "$TMP/err"
is "$?" 1 "parentheses in a condition: an error, as in stap"
like "$(sed -n 1p "$TMP/err")" "^parse error: expected 'arch', 'kernel_v', 'kernel_vr', 'systemtap_v',$" "in stap's words"
is "$(body -e 'probe begin { %( systemtap_privilege == "stapdev" %? a = 1 %: a = 2 %) }')" "(a) = (1);" "systemtap_privilege (stapdev)"
"$MT" -p1 -e '@define f %( 1 %) @define f %( 2 %) probe begin { a = @f }' > /dev/null 2> "$TMP/err"
like "$(sed -n 1p "$TMP/err")" "^parse error: attempt to redefine macro '@f' in the same file" "a macro defined twice"
# a macro that uses itself twice: one error at the bound, then nothing more
# (each branch used to run into the bound again: 2^64 ways, 1 GB under ASan)
(ulimit -v 200000; "$MT" -p1 -e '@define A %( @A @A %) probe begin { x = @A }' > /dev/null 2> "$TMP/err"); rc=$?
is "$rc" "1" "a self-referencing macro: a parse error within 200 MB"
like "$(sed -n 1p "$TMP/err")" "^parse error: too many nested macro expansions" "stopped at the nesting bound"
# a condition's macros are expanded before it is weighed (stap 4.8 -p1)
is "$(body -e '@define c %( 1 %) @define arch_is(a) %( arch == @a %) probe begin { %( @c == 1 && @arch_is("*") %? a = 1 %: a = 2 %) }')" \
	"(a) = (1);" "macros in a condition: expanded first"
"$MT" -p1 -e '%( 1 == 1 junk %? probe begin {} %)' > /dev/null 2> "$TMP/err"
like "$(sed -n 1,2p "$TMP/err" | tr '\n' ' ')" "^parse error: expected '%\?' marker for conditional +saw: identifier 'junk'" \
	"a token left over in a condition: stap's error there"
done_testing
