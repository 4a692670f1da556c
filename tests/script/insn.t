#!/bin/sh
# runtime/script/insn.c, which says which instructions a function probe
# may run out of line, against objdump over real code: every instruction
# it accepts has objdump's length and no jump, call or return; where it
# finds a RIP-relative operand (moved when the copy runs elsewhere), its
# displacement is where the decoder says and gives objdump's address; a
# branch a copy redoes (ret, jmp, jcc, call rel) is one, to objdump's target.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
T=$top_builddir/tests/script/insn-test
[ -x "$T" ] || skip_all "build first (make check builds tests/script/insn-test)"
command -v objdump > /dev/null || skip_all "no objdump"
LIBC=$(ldd /bin/sh | awk '/libc\.so/ { print $3 }')
plan 10
for B in "$LIBC" "$top_builddir/translator/marktap"; do
	set -- $(objdump -h "$B" | awk '$2 == ".text" { print $4, $6 }')
	out=$(objdump -d --no-show-raw-insn -j .text "$B" | "$T" "$B" $(( 0x$1 - 0x$2 )))
	is "$(echo "$out" | sed -n 's/^accepted [0-9]* //p')" "wrong 0" "$(basename "$B"): no instruction accepted wrongly"
	n=$(echo "$out" | sed -n 's/^accepted \([0-9]*\) .*/\1/p')
	ok $(( ${n:-0} < 1000 )) "$(basename "$B"): and many are accepted ($n)"
	r=$(echo "$out" | sed -n 's/^rip-relative //p')
	ok $(( ${r:-0} < 100 )) "$(basename "$B"): RIP-relative ones among them ($r)"
	j=$(echo "$out" | sed -n 's/^branches //p')
	ok $(( ${j:-0} < 100 )) "$(basename "$B"): branches among them ($j)"
done
# a PLT's "jmp *GOT(%rip)", which plt probes run from a copy
set -- $(objdump -h "$LIBC" | awk '$2 == ".plt" { print $4, $6 }')
out=$(objdump -d --no-show-raw-insn -j .plt "$LIBC" | "$T" "$LIBC" $(( 0x$1 - 0x$2 )))
is "$(echo "$out" | sed -n 's/^accepted [0-9]* //p')" "wrong 0" "libc's .plt: no instruction accepted wrongly"
j=$(echo "$out" | sed -n 's/^branches //p')
ok $(( ${j:-0} < 10 )) "libc's .plt: its jumps through the GOT are accepted ($j)"
