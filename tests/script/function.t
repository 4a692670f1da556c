#!/bin/sh
# process("P").function("F") and .return probes (translator/dwarf.c,
# runtime/script/ufunc*.c) on tests/script/func-target.c, built here with
# -g -O0 and with -g -O2: probe addresses, values of parameters, members,
# array elements, $return, $$parms, globs, errors in stap's words, a
# program that longjmps, threads, -x and the bytes it leaves behind.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
SRC=$top_srcdir/tests/script/func-target.c
[ -x "$MTBIN" ] || skip_all "build first"
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$SRC" "$TMP/func-target.c"
(cd "$TMP" && "$CC" -g -O0 -o f0 func-target.c -lpthread &&
	"$CC" -g -O2 -freorder-blocks-and-partition -o f2 func-target.c -lpthread) ||
	skip_all "cannot build $SRC"
L1=$(grep -n '^NOIPA int helper_one' "$SRC" | cut -d: -f1)
L2=$(grep -n '^NOIPA int helper_two' "$SRC" | cut -d: -f1)
LADD=$(grep -n '^NOIPA int add' "$SRC" | cut -d: -f1)
LRET=$(grep -n '^	return c;' "$SRC" | cut -d: -f1)
mt() { timeout 60 "$MTBIN" "$@"; }
plan 77

for O in 0 2; do
	T=$TMP/f$O
	P="process(\"$T\")"
	# entry values: ints, a struct member through a pointer, a member's
	# member, an array element, an unsigned char, a string member
	out=$(mt -c "$T calls 3" -e "probe $P.function(\"add\") { printf(\"add %d %d|\", \$a, \$b) }
		probe $P.function(\"weigh\") { printf(\"weigh %d %d %d %d %s|\", \$it->weight, \$factors[1], \$k,
			\$it->next->id, user_string(\$it->name)) }" 2>&1)
	is "$out" "add 0 0|weigh 100 3 200 7 item|add 1 10|weigh 101 3 201 7 item|add 2 20|weigh 102 3 202 7 item|$("$T" calls 3)" \
		"-O$O: entry probes fire once per call with \$param, \$p->m, \$p->m->m, \$arr[i], a string member"
	# @cast: a pointer read as a type of the program's (a member's member,
	# a string member), and from the value saved at the call in a .return
	out=$(mt -c "$T calls 2" -e "probe $P.function(\"weigh\") { printf(\"%d %s %d|\",
			@cast(\$it, \"struct item\")->next->id, user_string(@cast(\$it, \"item\", \"$T\")->name),
			@cast(\$it, \"struct item\")->weight) }
		probe $P.function(\"weigh\").return { printf(\"r%d|\", @cast(\$it, \"struct item\")->weight) }" 2>&1)
	is "$out" "7 item 100|r100|7 item 101|r101|$("$T" calls 2)" "-O$O: @cast(\$it, \"struct item\")->member, at the entry and the return"
	out=$(mt -p2 -e "probe $P.function(\"weigh\") { println(@cast(\$it, \"struct nosuch\")->id) }" 2>&1)
	like "$out" "semantic error: type definition 'struct nosuch' not found in '$T': operator '@cast'" "-O$O: @cast to a type the program lacks: stap's error"
	out=$(mt -c "$T calls 3" -e "probe $P.function(\"add\").return { printf(\"%d=%d+%d|\", \$return, \$a, \$b) }
		probe $P.function(\"weigh\").return { printf(\"w%d|\", \$return) }" 2>&1)
	is "$out" "0=0+0|w507|11=1+10|w511|22=2+20|w515|$("$T" calls 3)" \
		"-O$O: .return probes: \$return, and parameters as they were at the call"
	out=$(mt -c "$T calls 2" -e "probe $P.function(\"add\") { println(\$\$parms) }
		probe $P.function(\"unused_first\") { println(\$\$parms) }" 2>&1)
	is "$out" "a=0x0 b=0x0
ignored=0x0 used=0x0
a=0x1 b=0xa
ignored=0x1 used=0x1
$("$T" calls 2)" "-O$O: \$\$parms as stap prints it"
	out=$(mt -c "$T calls 2" -e "probe $P.function(\"add\").return { println(\$\$parms, \"|\", \$\$return, \"|\", @entry(\$b)) }
		probe $P.function(\"add\") { println(\$\$vars, \"|\", \$\$locals) }" 2>&1)
	like "$(echo "$out" | tr '\n' '#')" "^a=0x0 b=0x0 c=(0x[0-9a-f]+|\\?)\\|c=(0x[0-9a-f]+|\\?)#a=0x0 b=0x0\\|return=0x0\\|0#a=0x1 b=0xa c=[^|]*\\|c=[^#]*#a=0x1 b=0xa\\|return=0xb\\|10#" \
		"-O$O: \$\$vars, \$\$locals; in .return \$\$parms of the call, \$\$return, @entry()"
	out=$(mt -c "$T calls 4" -e "global c probe $P.function(\"helper_*\") { c[pp()]++ }
		probe end { foreach (p in c+) printf(\"%d %s\\n\", c[p], p) }" 2>&1 | sed "s|$TMP/||g")
	is "$out" "$("$T" calls 4)
4 process(\"f$O\").function(\"helper_one@func-target.c:$L1\")
4 process(\"f$O\").function(\"helper_two@func-target.c:$L2\")" \
		"-O$O: a glob probes each function it names, pp() as stap's"
	# a program that longjmps out of a probed function: it runs as alone
	out=$(mt -c "$T longjmp 9" -e "global c, r probe $P.function(\"jumper\") { c++ }
		probe $P.function(\"jumper\").return { r++ } probe end { printf(\"%d calls %d returns\\n\", c, r) }" 2>&1)
	is "$(echo "$out" | grep -v '^WARNING')" "sum 16
9 calls 5 returns" "-O$O: longjmp out of a .return-probed function: no crash, the 5 returns seen"
	like "$out" "WARNING: process [0-9]+: at least [1-4] call\\(s\\) hooked by \\.return probes ended without a return \\(longjmp" \
		"-O$O: ... and the calls left by longjmp are counted"
	mt -u -c "$T longjmp 9" -e "probe $P.function(\"jumper\").return { }" > "$TMP/out" 2> /dev/null   # -u: an empty probe stays attached
	ok $? "-O$O: marktap ends with success"
	is "$(cat "$TMP/out")" "$("$T" longjmp 9)" "-O$O: the program's output is its own"
	# threads: add()'s first instruction runs out of line (or a jump),
	# every hit counts; so does read_global()'s, which reads memory
	# relative to RIP (its copy's displacement moved; it was stepped
	# over in place, and other threads passed while the byte was back)
	out=$(mt -c "$T threads 4 5000" -e "global c, r, g, gr probe $P.function(\"add\") { c++ }
		probe $P.function(\"add\").return { r++ }
		probe $P.function(\"read_global\") { g++ } probe $P.function(\"read_global\").return { gr += \$return == 5 }
		probe end { printf(\"%d %d %d %d\\n\", c, r, g, gr) }" 2>&1)
	is "$out" "$("$T" threads 4 5000)
20000 20000 20000 20000" "-O$O: 4 threads through entry and .return probes: every hit and every return counted, RIP-relative too"
	out=$(mt -c "$T calls 3" -e "probe $P.function(\"read_global\") { printf(\"%d|\", \$x) }
		probe $P.function(\"read_global\").return { printf(\"%d|\", \$return) }" 2>&1)
	is "$out" "0|5|1|6|2|7|$("$T" calls 3)" "-O$O: a RIP-relative instruction at the probe: values and returns"
	out=$(mt -c "$T calls 2" -e "probe $P.statement(\"add@func-target.c:$LRET\") { printf(\"%d=%d+%d|\", \$c, \$a, \$b) }" 2>&1)
	is "$out" "0=0+0|11=1+10|$("$T" calls 2)" "-O$O: .statement(\"add@FILE:LINE\"): a local computed by then"
	out=$(mt -c "$T calls 1" -e "probe $P.function(\"read_global\") { printf(\"%d %d|\", @var(\"counter\"), @var(\"counter@func-target.c\")) }" 2>&1)
	is "$out" "5 5|$("$T" calls 1)" "-O$O: @var(\"global\") and @var(\"global@file\")"
	out=$(mt -c "$T calls 3" -e "probe $P.function(\"checked\") { printf(\"%d|\", \$x) }
		probe $P.function(\"checked\").return { printf(\"%d|\", \$return) }" 2>&1)
	is "$out" "0|0|1|3|2|6|$("$T" calls 3)" "-O$O: a function in two parts (f, f.cold): values and returns"
done

T=$TMP/f0
P="process(\"$T\")"
# fork: the child has the probes too (a stepped one writes its own code)
out=$(mt -c "$T fork 4" -e "global c, g probe $P.function(\"add\").return { c[pid() == target()]++ }
	probe $P.function(\"read_global\") { g[pid() == target()]++ }
	probe end { printf(\"%d %d %d %d\\n\", c[1], g[1], c[0], g[0]) }" 2>&1)
is "$out" "$("$T" fork 4)
4 4 4 4" "fork: parent and child each run the entry and .return probes, in place and out of line"

# a probed function also called from a signal handler, which interrupts
# the trap handler too (a hit inside a handler is skipped and counted, as
# stap does): the program runs as alone, every hooked call returns
out=$(mt -c "$T signals 30000" -e "global c, r probe $P.function(\"add\") { c++ }
	probe $P.function(\"add\").return { r++ } probe end { println(c > 30000 && c == r ? \"ok\" : sprintf(\"%d %d\", c, r)) }" 2>&1)
is "$(echo "$out" | grep -v '^WARNING: Number of errors: 0, skipped probes: [0-9]*$')" "$("$T" signals 30000)
ok" "a probed function called from a signal handler as well: no crash, every call returned"
# recursion: every level's return, innermost first
out=$(mt -c "$T fact 5" -e "probe $P.function(\"fact\").return { printf(\"%d:%d \", \$n, \$return) }" 2>&1)
is "$out" "1:1 2:2 3:6 4:24 5:120 sum 120" "a recursive function's returns, each with its own \$n"

# deeper than the shadow stack: the calls beyond it are not hooked, and
# marktap says so (never silently)
out=$(mt -c "$T fact 300" -e "global r probe $P.function(\"fact\").return { r++ } probe end { println(r) }" 2>&1)
is "$(echo "$out" | grep -v WARNING)" "sum 0
190" "a recursion 300 deep: the returns of the 190 outermost calls seen"
like "$out" "WARNING: process [0-9]+: probe_0: \\.return probes miss calls nested deeper than 190 in one thread" \
	"and a warning for the others"

# backtraces and symbols: a recursion 4 deep, through frames whose return
# addresses .return probes replaced (they get them back while unwinding)
out=$(mt -c "$T fact 4" -e "probe $P.function(\"fact\") { if (\$n == 1) { print_ubacktrace(); println(usymname(uaddr()), \" \", umodname(uaddr())) } }
	probe $P.function(\"fact\").return { if (\$n == 2) println(\"return to \", usymname(uaddr())) }" 2>&1)
is "$(echo "$out" | sed -n 's/^ 0x[0-9a-f]* : \([a-z_]*\)+0x[0-9a-f]*\/0x[0-9a-f]* \[.*/\1/p' | head -5 | tr '\n' ' ')" \
	"fact fact fact fact main " "print_ubacktrace(): the probed frame, its callers through hooked frames, main"
is "$(echo "$out" | grep -v '^ 0x')" "fact $T
return to fact
$("$T" fact 4)" "usymname(uaddr()), umodname(), uaddr() in a .return is where it returns to; the returns still run"
# unwinding from the probe's registers (usym.c) gives glibc's
# backtrace()'s frames (MARKTAP_UNWIND=backtrace): at entries and returns,
# through hooked frames, -O0 and -O2, jump and trap
# (-O2 makes fact() a loop: add() called from main there)
for B in "$T fact 5 fact n==1 n==3" "$TMP/f2 calls 2 add a==1 a==0"; do
	set -- $B
	for jump in 1 0; do
		S="probe process(\"$1\").function(\"$4\") { if (\$$5) print(sprint_ubacktrace()) }
			probe process(\"$1\").function(\"$4\").return { if (\$$6) print(sprint_ubacktrace()) }"
		# (the addresses of one run and the next differ: ASLR)
		ours=$(MARKTAP_UFUNC_JUMP=$jump mt -c "$1 $2 $3" -e "$S" 2>&1 | sed -E 's/0x[0-9a-f]{9,}/A/g')
		glibc=$(MARKTAP_UFUNC_JUMP=$jump MARKTAP_UNWIND=backtrace mt -c "$1 $2 $3" -e "$S" 2>&1 |
			sed -E 's/0x[0-9a-f]{9,}/A/g')
		[ "$(echo "$ours" | grep -c ' : main+')" -ge 2 ] || ours="too few frames: $ours"
		is "$ours" "$glibc" "$(basename "$1"), MARKTAP_UFUNC_JUMP=$jump: backtraces from the probe's registers equal glibc's backtrace()'s"
	done
done
out=$(mt -c "$TMP/f2 calls 1" -e "probe process(\"$TMP/f2\").function(\"weigh\") { println(ubacktrace() =~ \"^0x[0-9a-f]+( 0x[0-9a-f]+)+\$\" ? \"ok\" : ubacktrace()); println(usymdata(uaddr())) }" 2>&1)
like "$out" "^ok
weigh\+0x0/0x[0-9a-f]+ \[$TMP/f2\]" "-O2: ubacktrace() and usymdata() at an entry probe"

# a function the compiler inlined (stdlib.h's atoi at -O2): its copies are
# probed where they start, with their variables; they have no .return
out=$(mt -c "$TMP/f2 calls 2" -e "probe process(\"$TMP/f2\").function(\"atoi\") { printf(\"%s %s|\", pp(), user_string(\$__nptr)) }" 2>&1)
like "$out" "^process\\(\"$TMP/f2\"\\)\\.function\\(\"atoi@/usr/include/stdlib\\.h:[0-9]+\"\\) 2\\|$("$T" calls 2)\$" \
	"-O2: an inlined function's copy: probed, its parameter read"
mt -p2 -e "probe process(\"$TMP/f2\").function(\"atoi\").return { }" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^semantic error: while resolving probe point: no match \\(atoi is only inlined" \
	"and .return of an only inlined function is a semantic error"
# .inline and .call as stap: the inlined copies only, the function's own
# code only (what stap -l lists for them)
out=$(mt -c "$TMP/f2 calls 2" -e "probe process(\"$TMP/f2\").function(\"atoi\").inline { printf(\"%s %s|\", pp(), user_string(\$__nptr)) }
	probe process(\"$TMP/f2\").function(\"add\").call { printf(\"%s %d|\", pp(), \$b) }" 2>&1)
like "$out" "^process\\(\"$TMP/f2\"\\)\\.function\\(\"atoi@/usr/include/stdlib\\.h:[0-9]+\"\\)\\.inline 2\\|process\\(\"$TMP/f2\"\\)\\.function\\(\"add@[^\"]*func-target\\.c:$LADD\"\\)\\.call 0\\|process[^|]*\\.call 10\\|$("$T" calls 2)\$" \
	"-O2: .function(\"atoi\").inline probes the inlined copy, .function(\"add\").call the function"
# writes to target variables: stap's error without -g; with -g they are
# written (tests/script/ufunc-guru.t)
like "$(mt -p2 -e "probe process(\"$TMP/f2\").function(\"add\") { \$a = 5 }" 2>&1 | head -1)" \
	"^semantic error: write to target variable not permitted; need stap -g: identifier '\\\$a'" "\$a = 5 without -g: stap's error"
like "$(mt -g -c "$TMP/f2 calls 2" -e "probe process(\"$TMP/f2\").function(\"add\") { \$a++ }
	probe process(\"$TMP/f2\").function(\"add\").return { printf(\"%d|\", \$return) }" 2>&1 | head -1)" \
	"^1\\|12\\|" "\$a++ with -g: add() returns one more (0+0 and 1+10 before)"

like "$(mt -p2 -e "probe process(\"$TMP/f2\").function(\"add\").inline { }" 2>&1 | head -1)" \
	"^semantic error: while resolving probe point: no match \\(add has no inlined copies\\)" ".inline of a function never inlined: a semantic error"
like "$(mt -p2 -e "probe process(\"$TMP/f2\").function(\"atoi\").call { }" 2>&1 | head -1)" \
	"^semantic error: while resolving probe point: no match \\(atoi is only inlined: inlined copies have no \\.call\\)" \
	".call of an only inlined function: a semantic error"

# a -p4 module keeps its function probes (address and recipes)
(cd "$TMP" && mt -p4 -m fmod -e "probe $P.function(\"add\") { printf(\"%d %s|\", \$b, \$\$parms) }
	probe $P.function(\"add\").return { printf(\"=%d|\", \$return) }" > /dev/null 2>&1)
is "$(mt -c "$T calls 2" "$TMP/fmod.mtm" 2>&1)" "0 a=0x0 b=0x0|=0|10 a=0x1 b=0xa|=11|$("$T" calls 2)" \
	"a -p4 module with function probes runs them"

# ppfunc(), probefunc()
is "$(mt -c "$T calls 1" -e "probe $P.function(\"helper_*\") { println(ppfunc(), \" \", probefunc()) } probe begin { println(\"[\", ppfunc(), \"]\") }" 2>&1)" \
	"[]
helper_one helper_one
helper_two helper_two
$("$T" calls 1)" "ppfunc() and probefunc() name the probed function (nothing in begin)"

# function("NAME@FILE:LINE"): the function declared at that line
is "$(mt -l "$P.function(\"*@func-target.c:$LADD\")" | sed "s|$TMP/||g")" "process(\"f0\").function(\"add@func-target.c:$LADD\")" \
	"function(\"*@FILE:LINE\"): the function declared there"

# errors in stap's words
mt -p2 -e "probe $P.function(\"nosuch\") { }" > /dev/null 2> "$TMP/err"
ok $(( $? == 0 )) "a function that is not there: rejected"
like "$(head -1 "$TMP/err")" "^semantic error: while resolving probe point: no match \\(similar functions: .*add" \
	"with stap's message and similar functions"
mt -p2 -e "probe $P.function(\"add\") { println(\$zz) }" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^semantic error: unable to find local 'zz', \\[man error::dwarf\\] .*alternatives: \\\$a, \\\$b, \\\$c\\)\\): identifier '\\\$zz' at " \
	"an unknown variable: stap's error with the alternatives"
# a local the optimiser has not placed yet at main's entry, as stap says it
mt -p2 -e "probe process(\"$TMP/f2\").function(\"main\") { println(\$sum) }" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^semantic error: not accessible at this address \\(pc: 0x[0-9a-f]+\\) \\[man error::dwarf\\]: identifier '\\\$sum' at <input>:1:" \
	"-O2: a variable without a location at the probe: stap's error"
mt -p2 -e "probe $P.function(\"add\") { println(@var(\"nosuch\")) }" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^semantic error: unable to find global 'nosuch' in " "@var of a global that is not there"
mt -p2 -e "probe $P.function(\"add\") { println(\$return) }" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^semantic error: .*return" "\$return outside .return: rejected"
mt -p2 -e "probe $P.function(\"weigh\") { println(\$it->nosuch) }" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^semantic error: unable to find member 'nosuch' for struct item \\(alternatives: id, name, next, weight\\)" \
	"an unknown member: stap's error with the alternatives"
is "$(mt -c "$T calls 1" -e "probe $P.function(\"add\") { println(@defined(\$zz) ? 1 : 2, @defined(\$a) ? 3 : 4) }" 2>&1)" \
	"23
$("$T" calls 1)" "@defined(\$zz) is 0, @defined(\$a) 1, silently"

# -L lists functions, parameters and locals as stap -L does
mt -L "$P.function(\"*\")" > "$TMP/ours"
like "$(grep 'function("weigh' "$TMP/ours")" "weigh@.*\\) \\\$it:struct item\\* \\\$factors:int\\* \\\$k:unsigned char\$" \
	"-L: a function's parameters with their types"
if command -v stap > /dev/null && KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		sed -E 's/^linux-headers-([^ ,]+).*/\1/') && [ -n "$KVER" ] &&
		stap -r "$KVER" -L "$P.function(\"*\")" > "$TMP/stap" 2> /dev/null && [ -s "$TMP/stap" ]; then
	is "$(diff "$TMP/ours" "$TMP/stap")" "" "-O0: the listing equals stap -L's"
	mt -L "process(\"$TMP/f2\").function(\"*\")" > "$TMP/ours2"
	stap -r "$KVER" -L "process(\"$TMP/f2\").function(\"*\")" > "$TMP/stap2" 2> /dev/null
	is "$(diff "$TMP/ours2" "$TMP/stap2")" "" "-O2: the listing equals stap -L's (inlined functions too)"
else
	ok 0 "# SKIP no stap -L here"
	ok 0 "# SKIP no stap -L here"
fi

# debug information in a separate file: found through .gnu_debuglink, or
# by build id under a debug directory; without it, the symbol table
mkdir -p "$TMP/dl" "$TMP/bi/dbg"
cp "$T" "$TMP/dl/fs" && (cd "$TMP/dl" && objcopy --only-keep-debug fs fs.debug && strip -g fs &&
	objcopy --add-gnu-debuglink=fs.debug fs)
out=$(mt -c "$TMP/dl/fs calls 2" -e "probe process(\"$TMP/dl/fs\").function(\"add\") { printf(\"%s|\", \$\$parms) }" 2>&1)
is "$out" "a=0x0 b=0x0|a=0x1 b=0xa|$("$T" calls 2)" "a stripped program: its variables from the .gnu_debuglink file"
cp "$T" "$TMP/bi/fs" && (cd "$TMP/bi" && objcopy --only-keep-debug fs fs.debug && strip -g fs)
id=$(readelf -n "$TMP/bi/fs" | sed -n 's/.*Build ID: //p')
mkdir -p "$TMP/bi/dbg/.build-id/${id%"${id#??}"}" && mv "$TMP/bi/fs.debug" "$TMP/bi/dbg/.build-id/${id%"${id#??}"}/${id#??}.debug"
is "$(MARKTAP_DEBUGINFO_PATH=$TMP/bi/dbg mt -L "process(\"$TMP/bi/fs\").function(\"add\")" | sed "s|$TMP/||g")" \
	"process(\"bi/fs\").function(\"add@func-target.c:$LADD\") \$a:int \$b:int \$c:int" \
	"a stripped program: DWARF found by its build id (MARKTAP_DEBUGINFO_PATH)"
out=$(mt -c "$TMP/bi/fs calls 2" -e "global n probe process(\"$TMP/bi/fs\").function(\"add\") { n++ } probe end { println(n) }" 2>&1)
is "$out" "$("$T" calls 2)
2" "without its debug file: probed through the symbol table"
mt -p2 -e "probe process(\"$TMP/bi/fs\").function(\"add\") { println(\$a) }" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^semantic error: unable to find local 'a', .*no debuginfo" "and its variables are a semantic error"

# a shared library's function, .library() or the library's own path
(cd "$TMP" && printf 'int lib_twice(int x) { return 2 * x; }\n' > lib.c &&
	printf 'int lib_twice(int);\nint main(void) { int s = 0; for (int i = 0; i < 3; i++) s += lib_twice(i); return s == 6 ? 0 : 1; }\n' > uselib.c &&
	"$CC" -g -O0 -shared -fPIC -o libtw.so lib.c && "$CC" -g -o uselib uselib.c -L. -ltw -Wl,-rpath,"$TMP")
out=$(mt -c "$TMP/uselib" -e "probe process(\"$TMP/uselib\").library(\"$TMP/libtw.so\").function(\"lib_twice\") { printf(\"%d \", \$x) }
	probe process(\"$TMP/libtw.so\").function(\"lib_twice\").return { printf(\"=%d \", \$return) }" 2>&1)
is "$out" "0 =0 1 =2 2 =4 " "a shared library's function: entry and return"
is "$(LD_LIBRARY_PATH=/nowhere:$TMP mt -l "process(\"$TMP/uselib\").library(\"libtw.so\").function(\"lib_*\")" | sed "s|$TMP/||g")" \
	"process(\"libtw.so\").function(\"lib_twice@lib.c:1\")" ".library(\"NAME\") found where the dynamic linker looks (LD_LIBRARY_PATH)"
# another name of a function, at its first instruction (glibc's public
# names: free is DWARF's __libc_free, pthread_mutex_init@@GLIBC_2.2.5 its
# ___pthread_mutex_init): that function, with its variables; a symbol of
# the default version ("NAME@@V" in .symtab) is NAME
(cd "$TMP" && printf '%s\n' 'int impl_twice(int x) { return 2 * x; }' \
	'extern int pub_twice(int) __attribute__((alias("impl_twice")));' \
	'__asm__(".symver impl_twice, ver_twice@@V2");' \
	'__asm__(".symver impl_old, ver_twice@V1");' \
	'int impl_old(int y) { return y; }' > alias.c &&
	printf 'V1 { global: ver_twice; };\nV2 { global: pub_twice; ver_twice; local: *; };\n' > alias.map &&
	"$CC" -g -O0 -shared -fPIC -Wl,--version-script=alias.map -o libalias.so alias.c)
is "$(mt -L "process(\"$TMP/libalias.so\").function(\"pub_twice\")" | sed "s|$TMP/||g")" \
	"process(\"libalias.so\").function(\"pub_twice@alias.c:1\") \$x:int" \
	"a function's other name (an alias): under the name written, with the function's parameters"
is "$(mt -L "process(\"$TMP/libalias.so\").function(\"ver_twice\")" | sed "s|$TMP/||g")" \
	"process(\"libalias.so\").function(\"ver_twice@alias.c:1\") \$x:int" \
	"a versioned name of the default version (NAME@@V): the same"

# libc's functions by a glob: the threads of libmarktap and of the script
# host, which block other signals, keep SIGTRAP (a trap with it blocked
# makes the kernel kill the process; accept4() here did); the allocator's
# internals are left out of globs
LIBC=$(ldd "$T" | awk '/libc\.so/ { print $3 }')
# (the last exchange at exit is sometimes missed with these probes, and
# marktap says so: an open issue, not checked here)
# A probe on libc reaches every process of the machine that runs libmarktap's
# agent (as stap's would): in a PID namespace of its own where possible,
# so that the tests running beside this one are left alone.
iso=
unshare -pf --mount-proc true 2>/dev/null && iso="unshare -pf --mount-proc"
out=$(timeout 60 $iso "$MTBIN" -c "$T calls 1" -e "global n probe process(\"$LIBC\").function(\"a*\") { n++ } probe end { println(n > 0) }" 2>&1 |
	grep -v '^WARNING: 1 process(es) ended without handing their last results')
is "$out" "$("$T" calls 1)
1" "probes on libc's a* functions: the program and its agent thread run on"
like "$(mt -l "process(\"$LIBC\").function(\"*\")" | grep -c 'function("__brk\|function("sbrk\|function("__clone3')" "^0\$" \
	"a glob over libc leaves out brk, sbrk, clone3"

# -x: a running process (libmarktap preloaded, as its agent); detaching
# puts back every byte it patched
LIBMT=$top_builddir/runtime/.libs/libmarktap.so.0
LD_PRELOAD=$LIBMT "$T" slow 250 > "$TMP/slow.out" &
tpid=$!
wait_for 30 grep -qs ready "$TMP/slow.out"
out=$(mt -u -x "$tpid" -T 1 -e "global c probe $P.function(\"add\") { c++ } probe $P.function(\"weigh\").return { }
	probe end { println(c > 10 ? \"hits\" : sprint(c)) }" 2>&1)
is "$out" "hits" "-x PID: an entry probe ran in the running process"
wait "$tpid"
is "$(sed -n 2p "$TMP/slow.out")" "$("$T" slow 0 | sed -n 2p)" "after -x, the function's bytes are the program's again"
