#!/bin/sh
# Guru mode (-g): a function probe's handler writes the traced program's
# variables, as stap -g does (translator/dwarf_var.c tr_dw_store,
# runtime/script/ufunc_recipe.c ufunc_store): a parameter in memory (-O0) and in
# a register (-O2), a member through a pointer, an array element through
# a pointer, a global (@var), $return in a .return probe; both ways a
# probe runs (the jump to a stub, the int3 trap).  A write through a bad
# pointer or into read-only memory is a handler ERROR, and the program
# goes on; without -g, and for what cannot be written, stap's errors.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
[ -x "$MTBIN" ] || skip_all "build first"
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/g.c" <<'EOF'
#include <stdio.h>
#define NOIPA __attribute__((noinline, noipa))
struct box { int id; long weight; };
int counter = 1;
NOIPA int take(int x) { return x; }
NOIPA void fill(struct box *b) { printf("fill %d %ld\n", b->id, b->weight); }
NOIPA int answer(void) { return 7; }
NOIPA int sum3(int *a) { return a[0] + a[1] + a[2]; }
NOIPA int poke(struct box *b) { return b != NULL; }
NOIPA int look(const char *s) { return s[0]; }
NOIPA int bump(void) { return counter; }
NOIPA double half(int x) { return x / 2.0; }
NOIPA int scaled(int x) { int k = x * 3 + 1; printf("k %d\n", k); return 0; }
int main(int argc, char **argv)
{
	struct box b = { 1, 10 };
	int a[3] = { 1, 2, 3 };

	(void)argv;
	printf("take %d\n", take(1));
	fill(&b);
	printf("box %d %ld\n", b.id, b.weight);
	printf("answer %d\n", answer());
	printf("sum %d\n", sum3(a));
	printf("poke %d\n", poke(NULL));
	printf("look %c %s\n", look("hello"), "hello");
	printf("counter %d\n", bump());
	printf("half %g\n", half(3));
	return scaled(argc);
}
EOF
(cd "$TMP" && "$CC" -g -O0 -o g0 g.c && "$CC" -g -O2 -o g2 g.c) || skip_all "cannot build the test program"
mt() { timeout 60 "$MTBIN" "$@"; }
plan 18

for O in 0 2; do
	T=$TMP/g$O
	P="process(\"$T\")"
	WRITES="probe $P.function(\"take\") { \$x = 5 }
		probe $P.function(\"fill\") { \$b->weight = 99 }
		probe $P.function(\"answer\").return { \$return = 42 }
		probe $P.function(\"sum3\") { \$a[2] = 7 }
		probe $P.function(\"bump\") { @var(\"counter\") = 5 }"
	WANT="take 5|fill 1 99|box 1 99|answer 42|sum 10|poke 0|look h hello|counter 5|half 1.5|k 4|"
	out=$(mt -g -c "$T" -e "$WRITES" 2>&1 | tr '\n' '|')
	is "$out" "$WANT" "-O$O: \$x, \$p->m, \$a[i], @var(\"g\") and \$return written; the program sees the new values"
	out=$(MARKTAP_UFUNC_JUMP=0 mt -g -c "$T" -e "$WRITES" 2>&1 | tr '\n' '|')
	is "$out" "$WANT" "-O$O: the same through the int3 trap (MARKTAP_UFUNC_JUMP=0)"
	# the handler sees what it wrote; ++ and += write the variable too
	out=$(mt -g -c "$T" -e "probe $P.function(\"take\") { \$x = 5; printf(\"saw %d|\", \$x) }
		probe $P.function(\"fill\") { \$b->id++; \$b->weight += 5 }" 2>&1 | tr '\n' '|')
	is "$out" "saw 5|take 5|fill 2 15|box 2 15|answer 7|sum 6|poke 0|look h hello|counter 1|half 1.5|k 4|" \
		"-O$O: the handler reads back \$x; \$p->m++ and \$p->m += n write the program's memory"
	# a write through NULL, and into the read-only string literal: ERRORs,
	# the program untouched and still running
	out=$(mt -g -DMAXERRORS=2 -c "$T" -e "probe $P.function(\"poke\") { \$b->id = 1 }
		probe $P.function(\"look\") { \$s[0] = 65 }" 2> "$TMP/err" | tr '\n' '|')
	err=$(tr '\n' '|' < "$TMP/err")
	is "$out" "take 1|fill 1 10|box 1 10|answer 7|sum 6|poke 0|look h hello|counter 1|half 1.5|k 4|" \
		"-O$O: after writes through NULL and into read-only memory the program goes on unchanged"
	like "$err" "^ERROR: user write fault at 0x0 near identifier '\\\$b' at <input>:1:[0-9]+\\|ERROR: user write fault at 0x[0-9a-f]+ near identifier '\\\$s' at <input>:2:[0-9]+\\|WARNING: Number of errors: 2" \
		"-O$O: each is a handler ERROR: user write fault at the address"
done

# -O2: the parameter is written in its register, which the function goes on with
out=$(mt -g -p3 -e "probe process(\"$TMP/g2\").function(\"take\") { \$x = 5 }
	probe process(\"$TMP/g0\").function(\"take\") { \$x = 5 }" 2>&1 | grep -o 'rt.ustore("[rm] [0-9]*[su]*' | tr '\n' '|')
is "$out" 'rt.ustore("r 4s|rt.ustore("m 4|' "the -O2 write goes to a register, the -O0 one to memory"
out=$(mt -c "$TMP/g0" -e "probe process(\"$TMP/g0\").function(\"take\") { \$x = 5 }" 2>&1)
like "$out" "semantic error: write to target variable not permitted; need stap -g: identifier '\\\$x'" "without -g: stap's error"
out=$(mt -g -c "$TMP/g2" -e "probe process(\"$TMP/g2\").function(\"scaled\") { \$k = 1 }" 2>&1)
like "$out" "semantic error: location is computed value, cannot store: identifier '\\\$k'" \
	"-O2: a value the compiler computes (DW_OP_stack_value) cannot be written: stap's error"
out=$(mt -g -c "$TMP/g0" -e "probe process(\"$TMP/g0\").function(\"take\").return { \$x = 5 }" 2>&1)
like "$out" "semantic error: cannot write to '\\\$x' in a .return probe" "a .return probe writes \$return only"
out=$(mt -g -c "$TMP/g0" -e "probe process(\"$TMP/g0\").function(\"fill\") { \$b = 1; \$b->id = \"x\" }" 2>&1)
like "$out" "semantic error: type mismatch" "a string is not written into a number"
out=$(mt -g -c "$TMP/g0" -e "probe process(\"$TMP/g0\").function(\"fill\") { \$\$parms = 1 }" 2>&1)
like "$out" "semantic error: cannot write to '\\\$\\\$parms'" "\$\$parms cannot be written"
out=$(mt -g -c "$TMP/g0" -e "probe process(\"$TMP/g0\").function(\"fill\") { \$nosuch = 1 }" 2>&1)
like "$out" "semantic error: unable to find local 'nosuch'" "an unknown variable: stap's error"
out=$(mt -g -c "$TMP/g0" -e "probe process(\"$TMP/g0\").function(\"half\").return { \$return = 1 }" 2>&1)
like "$out" "semantic error: cannot write to '\\\$return': marktap writes integers and pointers, not floating point" \
	"a double \$return (xmm0): a clear error"
done_testing
