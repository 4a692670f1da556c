#!/bin/sh
# s =~ "RE" as an automaton made at translation (translator/regex.c), the
# way marktap.ko matches: for every pattern and subject below it answers
# as regexec does (a script that calls matched() keeps regexec for all its
# matches: the same script with one is the reference).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"

plan 9

# patterns (stap string bodies: \\ is one backslash) and subjects
cat >"$TMP/patterns" <<'EOF'
b+
^b
^abc$
(\\.tar\\.(gz|bz2|xz)|\\.zip|\\.tgz|\\.tbz)$
^(sda|sdb)[0-9]*$
a|b|c
(ab)*c
^(ab)*$
x{2,3}
^x{2}$
^x{2,}$
[[:digit:]]+
^[[:alpha:]_][[:alnum:]_]*$
[^a-z]
^[^/]*$
[]x]
[a-]z
.
^.$
^$
a.c
(a|ab)(c|bcd)(d*)
^(a?){3}a{3}$
^(()|a)+b
\\$
\\^x
a\\.b
[.]
^[ \t]+
(^a|b$)
(foo|bar)baz
^/tmp/[a-z]+-file$
EOF
cat >"$TMP/subjects" <<'EOF'

a
b
abc
ab
abcd
x.tar.gz
x.tar.gzz
file.zip
sda
sda12
sdc
xx
xxx
xxxx
x
123
_id9
9id
]
-z
a.c
abd
abcd
aaa
aaaa
ab
/tmp/kh-file
/tmp/kh-file2
$
^x
a.b
axb
 	lead
foobaz
barbaz
bazfoo
EOF

# one script: every pattern against every subject, a line of 0s and 1s each
script() { # EXTRA
	{
		echo 'probe begin {'
		n=0
		while IFS= read -r p; do
			printf '  s = ""\n'
			while IFS= read -r sub; do
				esc=$(printf '%s' "$sub" | sed 's/\\/\\\\/g; s/"/\\"/g; s/	/\\t/g')
				printf '  s .= sprint("%s" =~ "%s")\n' "$esc" "$p"
			done <"$TMP/subjects"
			printf '  printf("%%s %%s\\n", s, %s)\n' "\"$(printf '%s' "$p" | sed 's/\\/\\\\/g; s/"/\\"/g')\""
			n=$((n + 1))
		done <"$TMP/patterns"
		echo "  $1"
		echo '  exit() }'
	} >"$TMP/$2.stp"
}
script '' dfa
script 'if (s == "never") println(matched(0))' regexec
"$MT" -p3 "$TMP/dfa.stp" >"$TMP/dfa.lua" 2>&1
"$MT" -p3 "$TMP/regexec.stp" >"$TMP/regexec.lua" 2>&1
npat=$(wc -l <"$TMP/patterns")
is "$(grep -c '^rt\.re\[[0-9]*\] = {cls = ' "$TMP/dfa.lua")" "$npat" \
	"every pattern of the list is an automaton, one for all its uses"
is "$(grep -c 'rt_regmatch(' "$TMP/dfa.lua")" 0 "... and none is left to regexec"
grep -q 'rt_regmatch(' "$TMP/regexec.lua" && ! grep -q 'rt\.dfa_match' "$TMP/regexec.lua"
ok $? \
	"a script calling matched() matches with regexec"
"$MT" "$TMP/dfa.stp" >"$TMP/dfa.out" 2>&1
"$MT" "$TMP/regexec.stp" >"$TMP/regexec.out" 2>&1
is "$(wc -l <"$TMP/dfa.out")" "$npat" "a line per pattern"
diff "$TMP/regexec.out" "$TMP/dfa.out" >"$TMP/diff"
is "$(cat "$TMP/diff")" "" "$npat patterns x $(wc -l <"$TMP/subjects") subjects: the automaton answers as regexec"
# the SystemTap example's pattern (regex.stp), !~ and a pattern from @1
is "$("$MT" -e 'probe begin { printf("%d %d %d\n", "a.tgz" =~ "(\\.tar\\.(gz|bz2|xz)|\\.zip|\\.tgz|\\.tbz)$", "sdb" !~ @1, "hda" !~ @1); exit() }' '^sd' 2>&1)" \
	"1 0 1" "regex.stp's pattern, !~, a pattern given as @1"
# what stays regexec's: GNU's escapes, back-references, equivalence classes
for p in '\\bword' 'a\\w' '(a)\\1' '[[=a=]]'; do
	"$MT" -p3 -e "probe begin { println(\"x\" =~ \"$p\") }" 2>&1 | grep -q 'rt_regmatch(' && r=$((${r:-0} + 1))
done
is "${r:-0}" 4 "\\\\b, \\\\w, back-references, [[=a=]]: regexec's (in user space), not an automaton"
# an invalid one is still regcomp's error, at -p2
like "$("$MT" -p2 -e 'probe begin { println("a" =~ "a{2,1}") }' 2>&1)" "regex compilation error" \
	"an invalid pattern: regcomp's error"
# a large bounded repeat stays within the automaton's bounds or falls back
is "$("$MT" -e 'probe begin { x = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
  printf("%d %d\n", x =~ "^x{3,200}y?$", substr(x, 0, 2) =~ "^x{3,200}y?$"); exit() }' 2>&1)" "1 0" \
	"x{3,200}: matched (automaton or regexec)"
