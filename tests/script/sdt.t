#!/bin/sh
# <sys/sdt.h> probes of a program that does not use libmarktap
# (tests/script/sdt-target.c): marktap -c preloads libmarktap, whose script
# host turns the probes' nops into int3 and runs the handlers at the traps.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
T=$top_builddir/tests/script/sdt-target
[ -x "$MTBIN" ] && [ -x "$T" ] || skip_all "build first (make check builds tests/script/sdt-target)"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
P="process(\"$T\")"
mt() { timeout 60 "$MTBIN" "$@"; }
plan 20

# listing
out=$(mt -L "$P.mark(\"*\")")
is "$out" "$P.provider(\"app\").mark(\"global\") \$arg1:long \$arg2:long
$P.provider(\"app\").mark(\"guarded\") \$arg1:long
$P.provider(\"app\").mark(\"mix\") \$arg1:long \$arg2:long \$arg3:long
$P.provider(\"app\").mark(\"name\") \$arg1:long
$P.provider(\"app\").mark(\"tick\") \$arg1:long \$arg2:long" "-L lists the SDT probes with their operands"
is "$(mt -l "$P.provider(\"a*\").mark(\"t*\")")" "$P.provider(\"app\").mark(\"tick\")" "provider and mark globs"
mt -p2 -e "probe $P.provider(\"nosuch\").mark(\"tick\") { }" > /dev/null 2> "$TMP/err"
ok $(( $? == 0 )) "a provider with no probe: rejected"
like "$(head -1 "$TMP/err")" "^semantic error: .*no match" "with stap's semantic error"

# a truncated executable: stap's semantic error, no crash
head -c 4000 "$T" > "$TMP/trunc"
mt -p2 -e "probe process(\"$TMP/trunc\").provider(\"app\").mark(\"tick\") { }" > /dev/null 2> "$TMP/err"
ok $(( $? == 0 )) "a truncated ELF file: rejected"
like "$(head -1 "$TMP/err")" "^semantic error: .*trunc: truncated or corrupt section headers" "with what is wrong with it"

# handlers at the probes, arguments of every size and sign
out=$(mt -c "$T count 4" -e "probe $P.provider(\"app\").mark(\"tick\") { printf(\"%d %d|\", \$arg1, \$arg2) }
	probe $P.mark(\"mix\") { printf(\"[%d %d %d]\", \$arg1, \$arg2, \$arg3) }" 2>&1)
is "$out" "0 0|[0 0 0]1 3|[1 -1 -1]2 6|[2 -2 -2]3 9|[3 -3 -3]guarded 0
done" "the handlers run at each probe, in order, with int, short and signed char operands"
out=$(mt -c "$T count 1" -e "probe $P.mark(\"tick\") { println(\$\$name, \" \", \$\$provider, \" \", pp()) }" 2>&1 | head -1)
is "$out" "tick app $P.provider(\"app\").mark(\"tick\")" "\$\$name, \$\$provider and pp()"

# a pointer operand
out=$(mt -c "$T count 2" -e "probe $P.mark(\"name\") { printf(\"%s|\", user_string(\$arg1)) }" 2>&1)
is "$out" "even|odd|guarded 0
done" "a char * operand read with user_string()"

# operands in memory named by a symbol ("-4@app_counter(%rip)"), found in
# the file's symbol table
out=$(mt -c "$T count 3" -e "probe $P.mark(\"global\") { printf(\"%d %d|\", \$arg1, \$arg2) }" 2>&1)
is "$out" "41 9|42 9|43 9|guarded 0
done" "operands read from global variables"

# semaphores: up while the probe is armed
out=$(mt -c "$T count 6" -e "global s probe $P.mark(\"guarded\") { s += \$arg1 } probe end { println(s) }" 2>&1)
is "$out" "guarded 6
done
15" "a probe behind its semaphore: the semaphore is up, the handler runs"
is "$("$T" count 6 | head -1)" "guarded 0" "and the program alone does not see it up"

# threads, natively and in Lua
S="global c, s probe $P.mark(\"tick\") { c[tid()]++; s += \$arg2 } probe end { foreach (t in c) { n++; h += c[t] } printf(\"%d %d %d\\n\", n, h, s) }"
out=$(mt -v -c "$T threads 4 20000" -e "$S" 2>&1)
is "$(echo "$out" | grep -v "^Pass [0-9]:" | tail -1)" "4 80000 2399880000" "4 threads x 20000 probe hits counted exactly (native)"
like "$out" "80000 hits in native handlers, 0 in Lua" "the counting handler ran natively"
out=$(MARKTAP_NATIVE=0 mt -c "$T threads 4 20000" -e "$S" 2>&1)
is "$(echo "$out" | tail -1)" "4 80000 2399880000" "the same in Lua"

# a compiled module (-p4) keeps the SDT probe and runs without the script
(cd "$TMP" && mt -p4 -m sdtmod -e "probe $P.mark(\"tick\") { printf(\"%d|\", \$arg2) }" > /dev/null 2>&1)
is "$(mt -c "$T count 3" "$TMP/sdtmod.mtm" 2>&1)" "0|3|6|guarded 0
done" "a -p4 module with an SDT probe runs it"

# the program's own output and exit status are untouched
mt -u -c "$T count 3" -e "probe $P.mark(\"tick\") { }" > "$TMP/out" 2>&1   # -u: an empty probe stays attached
ok $? "marktap ends with the program's success"
is "$(cat "$TMP/out")" "guarded 0
done" "and its output is the program's alone"

# a library dlopen'ed after the start: found at the next exchange (every
# second); its probes run from then on
LIB=$top_builddir/tests/script/.libs/libsdtlib.so
out=$(mt -c "$T dlopen $LIB 7 2500" -e "global c, s probe process(\"$LIB\").provider(\"lib\").mark(\"hit\") { c++; s += \$arg1 }
	probe end { println(c, \" \", s) }" 2>&1)
is "$out" "guarded 0
done
7 21" "a dlopen'ed library's probe: armed within a second, every later hit counted"
is "$(mt -L "process(\"$LIB\").mark(\"*\")")" "process(\"$LIB\").provider(\"lib\").mark(\"hit\") \$arg1:long" \
	"the library's probe listed"
