#!/bin/sh
# process("P") probes on the objects and processes they name: no .return
# on a function nothing calls (the program's entry point).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
command -v cc >/dev/null || skip_all "no C compiler"
plan 4

cat > "$TMP/loop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int __attribute__((noinline)) work(int i) { return i * 2; }
int main(int argc, char **argv)
{
	int s = 0;
	if (argc > 1 && !strcmp(argv[1], "forever"))
		for (int i = 0;; i++) {
			s += work(i);
			usleep(20000);
		}
	for (int i = 0; i < argc; i++)
		s += work(i);
	printf("argc=%d s=%d\n", argc, s);
	return 0;
}
C
cc -g -O0 -include string.h -o "$TMP/loop" "$TMP/loop.c" || bail_out "cannot build loop.c"
L=$TMP/loop

# function("*").return: _start is entered by the kernel with argc where a
# return address would be; a return probe there made main's argc an
# address (the loop ran for millions of turns)
out=$(timeout 30 "$MT" -c "$L" -e "global n probe process(\"$L\").function(\"*\").return { n[ppfunc()]++ }
	probe end { foreach (f+ in n) if (f == \"main\" || f == \"work\") printf(\"%s %d\\n\", f, n[f]) }" 2>&1)
is "$out" "argc=1 s=0
main 1
work 1" "function(\"*\").return: the program runs as alone, main and work return once each"
is "$("$MT" -p2 -e "probe process(\"$L\").function(\"*\").return { next }" 2>&1 | grep -c '"_start"')" 0 \
	"function(\"*\").return leaves the entry point out"
like "$("$MT" -p2 -e "probe process(\"$L\").function(\"_start\").return { next }" 2>&1 | head -1)" \
	"^semantic error: while resolving probe point: no match \\(_start is entered without a call, as a program's entry point is: it has no return to probe\\)" \
	"function(\"_start\").return named: an error saying why"
like "$("$MT" -p2 -e "probe process(\"$L\").function(\"_start\") { next }" 2>&1 | grep _start)" \
	"^process\\(\"$L\"\\)\\.function\\(\"_start\"\\)" "function(\"_start\") (its entry) is still there"

done_testing
