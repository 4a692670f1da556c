#!/bin/sh
# Deep nesting and long operator chains: a clean parse or
# semantic error with a place, never a signal; a 50 000-term chain works at
# every pass and runs; memory stays bounded (ulimit -v, not timing).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 31
gen() { # gen FILE PYTHON-EXPRESSION-FOR-THE-TEXT
	python3 -c "import sys; sys.stdout.write($2)" > "$1"
}
# A run under a 1 GB address-space limit; prints the exit status.
bounded() { (ulimit -v 1000000; "$MT" "$@" > "$TMP/out" 2> "$TMP/err"); echo $?; }

gen "$TMP/paren.stp" "'probe begin { x = ' + '('*10000 + '1' + ')'*10000 + '; println(x) }\n'"
is "$(bounded -p1 "$TMP/paren.stp")" 1 "10 000 nested parentheses: exit 1, no signal"
is "$(sed -n 1p "$TMP/err")" "parse error: too many nested levels (more than 1000)" "in stap's shape"
like "$(sed -n 2p "$TMP/err")" "saw: operator '\(' at .*paren.stp:1:[0-9]+" "what was seen and where"
is "$(bounded -p1 -e 'probe begin { x = -(-(-(-(1)))) }')" 0 "moderate nesting parses"

# Under a small stack the bound is what the stack holds, not a crash.
gen "$TMP/p990.stp" "'probe begin { x = ' + '('*990 + '1' + ')'*990 + ' }\n'"
is "$( (ulimit -s 1024; "$MT" -p2 "$TMP/p990.stp" > /dev/null 2> "$TMP/err"); echo $?)" 1 "990 parentheses with a 1 MB stack: exit 1, no signal"
like "$(sed -n 1p "$TMP/err")" "^parse error: too many nested levels for the stack" "saying why"
gen "$TMP/neg.stp" "'probe begin { x = ' + '- '*20000 + '1 }\n'"
is "$(bounded -p1 "$TMP/neg.stp")" 1 "20 000 unary minus: a parse error, no signal"
gen "$TMP/assign.stp" "'probe begin { ' + 'x = '*20000 + '1 }\n'"
is "$(bounded -p1 "$TMP/assign.stp")" 1 "20 000 chained assignments: a parse error, no signal"
gen "$TMP/pp.stp" "'%( ' + '('*20000 + 'arch == \"x\"' + ')'*20000 + ' %? probe begin {} %: probe end {} %)\n'"
is "$(bounded -p1 "$TMP/pp.stp")" 1 "20 000 parentheses in a preprocessor condition: an error, no signal"
like "$(cat "$TMP/err")" "expected 'arch', 'kernel_v'" "stap's message there (no parentheses in conditions)"

# 50 000 terms: each pass, and the run prints the sum.
gen "$TMP/sum.stp" "'probe begin { x = ' + '+'.join(['1']*50000) + '; println(x); exit() }\n'"
is "$(bounded -p1 "$TMP/sum.stp")" 0 "a 50 000-term sum at -p1"
is "$(grep -c '^(x) = ((((' "$TMP/out")" 1 "printed as stap prints it"
is "$(bounded -p2 "$TMP/sum.stp")" 0 "... at -p2"
is "$(bounded -p3 "$TMP/sum.stp")" 0 "... at -p3"
is "$(bounded "$TMP/sum.stp")" 0 "... runs"
is "$(cat "$TMP/out")" 50000 "and prints the right sum"
# Mixed operators in long chains keep stap's meaning, left to right.
gen "$TMP/mix.stp" "'probe begin { x = 1000000' + ' - 1 + 2'*30000 + ' / 1'*100 + '; s = \"\" ' + ' . \"ab\"'*100 + '; y = 1' + ' && 1'*100 + ' || 0'*100 + '; z = 0' + ' < 1' + ' <= 1'*100 + '; printf(\"%d %d %d %d\\\\n\", x, strlen(s), y, z); exit() }\n'"
is "$(bounded "$TMP/mix.stp")" 0 "long chains of - + / . && || < run"
is "$(cat "$TMP/out")" "1030000 200 1 1" "with stap's values"
gen "$TMP/sc.stp" "'global n\nfunction f() { n++; return 1 }\nprobe begin { y = 0' + ' && f()'*40 + ' || f()'*40 + '; printf(\"%d %d\\\\n\", y, n); exit() }\n'"
is "$(bounded "$TMP/sc.stp")" 0 "a long && || chain runs"
is "$(cat "$TMP/out")" "1 1" "short-circuiting as stap: f() once"

# 10 000 nested ifs: a clean error in bounded memory.
gen "$TMP/ifs.stp" "'probe begin { x = 1; ' + 'if (x) '*10000 + 'println(x) }\n'"
is "$(bounded -p3 "$TMP/ifs.stp")" 1 "10 000 nested ifs: exit 1 under 1 GB"
like "$(sed -n 1p "$TMP/err")" "^parse error: too many nested levels" "a parse error"
# Deeper than Lua takes, shallower than the parser's bound: a semantic error.
gen "$TMP/ifs200.stp" "'probe begin { x = 1; ' + 'if (x) '*200 + 'println(x) }\n'"
is "$(bounded -p3 "$TMP/ifs200.stp")" 1 "200 nested ifs: exit 1"
like "$(sed -n 1p "$TMP/err")" "^semantic error: nested too deeply to translate" "a semantic error, not Lua's C stack overflow"
gen "$TMP/ifs50.stp" "'probe begin { x = 1; ' + 'if (x) '*50 + 'println(x) }\n'"
is "$(bounded "$TMP/ifs50.stp")" 0 "50 nested ifs run"
# A long else-if chain is one Lua level (elseif).
gen "$TMP/elif.stp" "'probe begin { x = 700; ' + ' else '.join('if (x == %d) y = %d' % (i, i) for i in range(800)) + '; println(y) }\n'"
is "$(bounded "$TMP/elif.stp")" 0 "an 800-branch else-if chain runs"
is "$(cat "$TMP/out")" 700 "and takes the right branch"
# Long lists: right past 64 conversions, and Lua's own limits as errors.
gen "$TMP/fmt100.stp" "'probe begin { printf(\"' + '%d'*100 + '\\\\n\", ' + ', '.join(['1']*100) + '); exit() }\n'"
is "$(bounded "$TMP/fmt100.stp")" 0 "printf with 100 conversions runs (types were checked for 64 only)"
is "$(cat "$TMP/out")" "$(printf '1%.0s' $(seq 100))" "and prints them all"
gen "$TMP/args.stp" "'probe begin { printf(\"' + '%d'*300 + '\\\\n\", ' + ', '.join(['1']*300) + '); exit() }\n'"
is "$(bounded "$TMP/args.stp"; sed -n 1p "$TMP/err" | cut -c1-55)" "1
semantic error: too many arguments to translate (300, a" "300 arguments: a semantic error, not Lua's at load"
gen "$TMP/params.stp" "'function f(' + ', '.join('a%d' % i for i in range(300)) + ') { return a0 }\nprobe begin { println(f(' + ', '.join(['1']*300) + ')) }\n'"
is "$(bounded -p3 "$TMP/params.stp"; sed -n 1p "$TMP/err" | cut -c1-60)" "1
semantic error: too many parameters and local variables to t" "300 parameters: a semantic error"
done_testing
