#!/bin/sh
# C++ names for function probes (translator/dwarf.c, runtime/script/usym.c)
# on tests/script/ufunc-cxx.cc built with g++ -g -O0 and -O2: functions in
# namespaces and classes probed by their qualified names ("geo::sum", both
# overloads; "geo::Shape::area"; "*::area": the last scopes, as stap
# matches them) and by their linkage names; pp() and ppfunc() show them as
# stap does; usymname() and backtraces demangle; -L lists as stap -L
# (when stap is there), class types named "class".
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
SRC=$top_srcdir/tests/script/ufunc-cxx.cc
[ -x "$MTBIN" ] || skip_all "build first"
CXX=${CXX:-g++}
command -v "$CXX" > /dev/null || skip_all "no C++ compiler"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && cp "$SRC" cx.cc && "$CXX" -g -O0 -o x0 cx.cc && "$CXX" -g -O2 -o x2 cx.cc) || skip_all "cannot build $SRC"
mt() { timeout 60 "$MTBIN" "$@"; }
plan 19

for O in 0 2; do
	X=$TMP/x$O
	P="process(\"$X\")"
	out=$(mt -c "$X 3" -e "probe $P.function(\"geo::sum\") { printf(\"%s|\", ppfunc()) }
		probe $P.function(\"geo::sum\").return { printf(\"%d|\", \$return) }" 2>&1)
	is "$out" "geo::sum|2|geo::sum|10|geo::sum|3|geo::sum|11|geo::sum|4|geo::sum|12|$("$X" 3)" \
		"-O$O: geo::sum probes both overloads; ppfunc() is the qualified name; their returns"
	out=$(mt -c "$X 2" -e "probe $P.function(\"geo::Shape::area\") { printf(\"%s %d|\", pp(), \$h) }" 2>&1)
	is "$out" "process(\"$X\").function(\"geo::Shape::area@$TMP/cx.cc:20\") 0|process(\"$X\").function(\"geo::Shape::area@$TMP/cx.cc:20\") 1|$("$X" 2)" \
		"-O$O: a member function by class and namespace: pp() as stap's"
	out=$(mt -c "$X 1" -e "probe $P.function(\"*::area\") { println(ppfunc()) }" 2>&1)
	is "$out" "Shape::area
$("$X" 1)" "-O$O: *::area matches the last two scopes, as stap"
	out=$(mt -c "$X 1" -e "probe $P.function(\"_ZN3geo3sumEii\") { println(ppfunc(), \" \", \$a + \$b) }" 2>&1)
	is "$out" "sum 10
$("$X" 1)" "-O$O: a linkage name probes the function it names; pp() shows its DWARF name"
	out=$(mt -c "$X 1" -e "probe $P.function(\"geo::sum\") { println(usymname(addr())) }
		probe $P.function(\"plain\") { println(usymdata(addr())) }" 2>&1 | sed 's/+0x[0-9a-f]*\/0x[0-9a-f]* \[.*\]$//')
	is "$(echo "$out" | sort)" "$(printf '%s\n' "geo::sum(geo::Point const*)" "geo::sum(int, int)" "plain(int)" "$("$X" 1)" | sort)" \
		"-O$O: usymname() and usymdata() demangle (libstdc++'s __cxa_demangle in the process)"
	out=$(mt -c "$X 1" -e "probe $P.function(\"geo::sum\").return { if (\$return == 10) print_ubacktrace() }" 2>&1)
	like "$(echo "$out" | head -1)" "^ 0x[0-9a-f]+ : main\\+0x[0-9a-f]+/0x[0-9a-f]+ \\[$X\\]\$" "-O$O: a backtrace from a .return: the caller"
	out=$(mt -c "$X 1" -e "probe $P.function(\"geo::sum\") { if (\$\$parms == \"a=0x0 b=0xa\") print_ubacktrace() }" 2>&1)
	like "$(echo "$out" | head -1)" "^ 0x[0-9a-f]+ : geo::sum\\(int, int\\)\\+0x[0-9a-f]+/0x[0-9a-f]+ \\[$X\\]\$" "-O$O: backtrace lines demangled"
done
# a member of the class through $this (-O0: -O2 passes it in a register
# the entry value of which DWARF describes)
out=$(mt -c "$TMP/x0 2" -e "probe process(\"$TMP/x0\").function(\"geo::Shape::area\") { printf(\"%d %d|\", \$this->bias, \$w) }" 2>&1)
is "$out" "7 2|7 2|$("$TMP/x0" 2)" "-O0: \$this->bias, a member of a class"
# -L as stap -L, for globs with scopes and linkage names (for "*", stap
# leaves out some inlined member functions that marktap lists)
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | sed -E 's/^linux-headers-([^ ,]+).*/\1/')
for f in 'geo::*' '*::area' 'geo::sum' '_ZN3geo3sumEii'; do
	if command -v stap > /dev/null && [ -n "$KVER" ] &&
		stap -r "$KVER" -L "process(\"$TMP/x2\").function(\"$f\")" > "$TMP/stap" 2> /dev/null && [ -s "$TMP/stap" ]; then
		mt -L "process(\"$TMP/x2\").function(\"$f\")" > "$TMP/ours" 2>&1
		is "$(sort "$TMP/ours" | diff - "$(sort "$TMP/stap" > "$TMP/stap.s"; echo "$TMP/stap.s")")" "" "-L '$f' equals stap -L's"
	else
		ok 0 "# SKIP no stap -L here"
	fi
done
