#!/bin/sh
# Kernel symbols of addresses (symname, symdata, modname) from
# /proc/kallsyms, as SystemTap's tapset reference describes them: the
# function, "name+0xoff/0xsize [module]" (no module for the kernel's
# own), the module or "kernel"; an address that cannot be placed is given
# back in hex, and modname() of it is an error.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 10
line=$(grep -m1 ' T schedule$' /proc/kallsyms)
addr=${line%% *}
# the next text symbol's address (same width, so compared as strings)
next=$(awk -v a="$addr" '$2 ~ /^[tTwW]$/ && $1 > a { print $1 }' /proc/kallsyms | sort | head -1)
if [ -z "$addr" ] || [ "$addr" = 0000000000000000 ] || [ -z "$next" ]; then
	for i in 1 2 3; do ok 0 "# SKIP /proc/kallsyms shows no addresses here"; done
else
	# (the low 32 bits: the shell's arithmetic is signed 64-bit)
	size=$(printf '0x%x' $(( (0x${next#????????} - 0x${addr#????????}) & 0xffffffff )))
	is "$("$MT" -e "probe begin { println(symname(0x$addr + 2)); exit() }")" "schedule" "symname() of an address inside schedule"
	is "$("$MT" -e "probe begin { println(symdata(0x$addr + 2)); exit() }")" "schedule+0x2/$size" "symdata(): offset and size, no module for the kernel"
	is "$("$MT" -e "probe begin { println(modname(0x$addr)); exit() }")" "kernel" "modname() of the kernel's own code"
fi
is "$("$MT" -e 'probe begin { printf("%s %s\n", symname(17), symdata(17)); exit() }')" "0x11 0x11" "an address no symbol holds: hex"
out=$("$MT" -e 'probe begin { println(modname(17)); exit() }' 2>&1); rc=$?
like "$rc $out" "^1 ERROR: No module found for address 0x11" "modname() of it: an error"
# another user sees no kernel addresses in /proc/kallsyms: hex, no error
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	is "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MT" -e 'probe begin { println(symname(0xffffffff81000000)); exit() }' 2>&1)" \
		"0xffffffff81000000" "as another user: the address in hex"
else
	ok 0 "# SKIP not root"
fi
# what marktap's handlers do not get: registers and kernel stacks; stap
# takes @kregister at pass 2 (fidelity lang-10), so marktap does, and
# says at run time why there is no value
"$MT" -g -p2 -e 'probe begin { x = @kregister(2) println(x) }' > /dev/null 2>&1
is "$?" 0 "@kregister(N) elaborates (guru), as in stap"
out=$("$MT" -g -e 'probe begin { println(@kregister(2)) }' 2>&1); rc=$?
like "$rc $out" "^1 ERROR: @kregister: marktap's handlers get no registers" "and is an ERROR at run time"
out=$("$MT" -e 'probe begin { print(sprint_backtrace()) }' 2>&1); rc=$?
like "$rc $out" "^1 ERROR: backtrace: kernel stacks are saved for handlers in marktap.ko and perf samples" "kernel backtraces outside marktap.ko: an ERROR that says why"
is "$("$MT" -e 'probe begin { printf("%s %s\n", symfileline(0x1234), usymfileline(0x10)); exit() }' 2>&1)" "0x1234 0x10" \
	"symfileline/usymfileline without line tables: the address in hex, as stap's"
