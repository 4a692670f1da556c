#!/bin/sh
# Kernel memory by address, stap's signatures (conversions.stp): every
# form of kernel_string and the integer reads take a long address at -p2,
# the string form of a marker's argument still passes, and outside a
# kernel handler (begin, end, --trace) there is no kernel memory: an
# ERROR saying so, or stap's fallback for the forms that have one.  And
# printf: '*' widths count as arguments; widths and precisions of three
# digits print (tests/kernel/khandlers.t prints the same in the kernel).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 12

"$MT" -p2 -e 'probe begin { println(kernel_string(1), kernel_string(1, "e"), kernel_string2(1, "e"),
  kernel_string_n(1, 2), kernel_string_quoted(1), kernel_long(1), kernel_int(1), kernel_short(1),
  kernel_char(1), kernel_pointer(1)) }' >"$TMP/p2" 2>&1
is "$(grep '^kernel' "$TMP/p2")" "kernel_char:long (addr:long)
kernel_int:long (addr:long)
kernel_long:long (addr:long)
kernel_pointer:long (addr:long)
kernel_short:long (addr:long)
kernel_string:string (addr:long)
kernel_string:string (addr:long, err_msg:string)
kernel_string2:string (addr:long, err_msg:string)
kernel_string_n:string (addr:long, n:long)
kernel_string_quoted:string (addr:long)" "-p2: stap's signatures, each address a long"
"$MT" -p2 -e 'probe begin { s = "x"; println(kernel_string(s), kernel_string(1, "e"), kernel_string_quoted(1)) }' >"$TMP/p2s" 2>&1
ok $? "kernel_string(a string) and the address forms in one script: no type mismatch"
like "$(grep '^kernel_string:' "$TMP/p2s")" "kernel_string:string \\(addr:string\\)" "(the one-argument form takes the script's string as it is)"

out=$("$MT" -e 'probe begin { println(kernel_string(4096)) }' 2>&1); rc=$?
# (marktap.ko reads kernel memory for begin probes: not loaded here)
like "$out" "^ERROR: kernel_string: kernel memory is read by marktap.ko: no /dev/marktap: load the kernel module first" \
	"kernel_string(addr) in begin without marktap.ko: an ERROR that says why"
[ "$rc" != 0 ]; ok $? "and marktap's exit status says it failed ($rc)"
like "$("$MT" -e 'probe begin { println(kernel_long(4096)) }' 2>&1)" "^ERROR: kernel_long: kernel memory is read by marktap.ko: no /dev/marktap" "kernel_long(addr) likewise"
like "$("$MT" -e 'probe begin { println(kernel_string_n(4096, 4)) }' 2>&1)" "^ERROR: kernel_string_n: kernel memory is read by marktap.ko" "kernel_string_n(addr, n) likewise"
is "$("$MT" -e 'probe begin { println(kernel_string(16, "e"), " ", kernel_string2(16, "e2"), " ", kernel_string_quoted(16)) }' 2>&1)" "e e2 0x10" \
	"kernel_string(addr, err_msg), kernel_string2 and kernel_string_quoted: stap's fallbacks"
is "$("$MT" -e 'probe begin { println(kernel_string("marker string"), "|", kernel_string_n("abcdef", 3), "|", kernel_string_n("abc", 0), "|") }' 2>&1)" \
	"marker string|abc||" "a marker's string passes as it is (kernel_string_n cuts it)"

is "$("$MT" -e 'probe begin { printf("[%*d][%-*d]\n", 5, 1, 4, 2) }' 2>&1)" "[    1][2   ]" "two '*' widths: four arguments"
line=$("$MT" -e 'probe begin { printf("[%0120d][%.150s][%-200s|]\n", -42, sprintf("%0300d", 0), "ab") }' 2>&1)
is "${#line}" 477 "printf %0120d, %.150s, %-200s in begin: 477 characters"
like "$line" '^\[-0{117}42\]\[0{150}\]\[ab {198}\|\]$' "laid out as C's printf"
done_testing
