#!/bin/sh
# kernel.data(...) at passes 1 and 2 (translator/kdata.c): stap's
# hardware watchpoints, what -p2, -l and -L print of them, the binding
# that crosses to marktap.ko, and what x86's debug registers cannot
# watch, refused.  The symbol table is a fixture (MARKTAP_SYSTEM_MAP);
# tests/kernel/kdata.t runs them in a guest.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 23
printf 'ffffffff82a4b0c0 D vm_dirty_ratio\nffffffff82a4b0c8 D vm_dirty_bytes\nffffffff81000000 T _stext\n' >"$TMP/System.map"
MARKTAP_SYSTEM_MAP=$TMP/System.map
export MARKTAP_SYSTEM_MAP
p2() { "$MT" -p2 -e "probe $1 { printf(\"%s %s %d\\n\", pp(), execname(), pid()) }" 2>&1; }

# the forms, as stap -p2 prints them: the address in hex, the length always
is "$(p2 'kernel.data(0xffffffff82a4b0c0).write' | grep '^kernel')" \
	'kernel.data(0xffffffff82a4b0c0).length(1).write /* <- kernel.data(-2103136064).write */' \
	"kernel.data(ADDRESS).write: length 1, the address in hex"
like "$(p2 'kernel.data(0xffffffff82a4b0c0).length(8).rw')" '^kernel.data\(0xffffffff82a4b0c0\).length\(8\).rw ' \
	".length(8).rw"
like "$(p2 'kernel.data("vm_dirty_ratio").rw')" '^kernel.data\("vm_dirty_ratio"\).length\(1\).rw ' \
	"kernel.data(\"SYMBOL\").rw"
like "$("$MT" -p2 /usr/share/systemtap/examples/memory/hw_watch_addr.stp 0xffffffff82a4b0c0 2>&1 ||
	echo '# kernel.data(0xffffffff82a4b0c0).length(1).rw')" 'kernel.data\(0xffffffff82a4b0c0\).length\(1\).rw' \
	"hw_watch_addr.stp with a kernel address as \$1 (or the example is not installed)"
# what crosses to marktap.ko, and pp() in the handler
p3=$("$MT" -p3 -e 'probe kernel.data("vm_dirty_ratio").write { println(pp()) }' 2>&1)
like "$p3" 'cur_pp = "kernel.data\(\\"vm_dirty_ratio\\"\).length\(1\).write"' "pp(): stap's name of the point"
(cd "$TMP" && "$MT" -p4 -m sym_mod -e 'probe kernel.data("vm_dirty_ratio").write { println(1) }' >/dev/null 2>&1)
like "$(cat "$TMP/sym_mod.mtm" 2>/dev/null)" 'hwbp:w:1:vm_dirty_ratio' "the binding names the symbol: marktap.ko looks it up at load"
(cd "$TMP" && "$MT" -p4 -m addr_mod -e 'probe kernel.data(0xffffffff82a4b0c0).length(4).rw { println(1) }' >/dev/null 2>&1)
like "$(cat "$TMP/addr_mod.mtm" 2>/dev/null)" 'hwbp:rw:4:0xffffffff82a4b0c0' "an address's binding: rw, its length, the address"

# -l and -L: the point as written (stap's), no variables
is "$("$MT" -l 'kernel.data(0xffffffff82a4b0c0).write')" 'kernel.data(0xffffffff82a4b0c0).write' "-l: no .length where none is written"
is "$("$MT" -L 'kernel.data(0xffffffff82a4b0c0).length(2).rw')" 'kernel.data(0xffffffff82a4b0c0).length(2).rw' "-L: .length as written, no variables"
is "$("$MT" -L 'kernel.data("vm_dirty_ratio").write')" 'kernel.data("vm_dirty_ratio").write' "-L of a symbol's"
"$MT" -l 'kernel.data("no_such_symbol").write' >"$TMP/out" 2>&1
is "$?:$(cat "$TMP/out")" "1:" "-l of a symbol the kernel lacks: nothing, exit 1"
like "$("$MT" --dump-probe-types)" 'kernel.data\(number\).length\(number\).rw' "--dump-probe-types lists them"

# refused at -p2, with the reason
like "$(p2 'kernel.data(0xffffffff82a4b0c0).length(3).write')" \
	'while resolving probe point kernel.data\(0xffffffff82a4b0c0\).length\(3\).write: length 3 cannot be watched \(x86.s debug registers watch 1, 2, 4 or 8 bytes\)' \
	"a length x86 cannot watch"
like "$(p2 'kernel.data(0xffffffff82a4b0c2).length(4).write')" 'is not a multiple of the length 4' "an address not aligned to its length"
like "$(p2 'kernel.data(0x1000).write')" '0x1000 is no kernel address' "a user-space address"
like "$(p2 'kernel.data("no_such_symbol").rw')" 'no symbol no_such_symbol in the kernel.s symbol table' "a symbol the kernel lacks"
like "$(p2 'kernel.data("vm_dirty_ratio").length(4).write')" \
	"probe point mismatch \\(similar: rw, write\\): identifier 'length'" ".length with a symbol: stap's mismatch"
like "$(p2 'kernel.data(0x10).read')" "probe point mismatch \\(similar: rw, write\\): identifier 'read'" ".read: stap's mismatch"
like "$(p2 'kernel.data(0x10)')" 'probe point truncated \(follow: length\(number\) rw write\)' "no access: stap's truncated"
like "$("$MT" -p2 -e 'probe kernel.data(0xffffffff82a4b0c0).write { println($x) }' 2>&1)" \
	"semantic error: unresolved target-symbol expression: identifier '\\\$x'" "no context variables: stap's error"
out=$("$MT" -p2 -e 'probe kernel.data(0xffffffff81000000).write, kernel.data(0xffffffff81000008).write,
	kernel.data(0xffffffff81000010).write, kernel.data(0xffffffff81000018).write { println(1) }' 2>&1)
is "$?" 0 "four watchpoints: x86's four debug registers"
out=$("$MT" -p2 -e 'probe kernel.data(0xffffffff81000000).write, kernel.data(0xffffffff81000008).write,
	kernel.data(0xffffffff81000010).write, kernel.data(0xffffffff81000018).write,
	kernel.data(0xffffffff81000020).write { println(1) }' 2>&1)
like "$?:$out" '^1:semantic error: while resolving probe point kernel.data\(0xffffffff81000020\).length\(1\).write: more than 4 hardware watchpoints in one script' \
	"a fifth: refused at -p2, at the fifth"
# a symbol table of one line is Debian's stub System.map: no table, the
# module looks the symbol up
echo 'ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package' >"$TMP/stub"
like "$(MARKTAP_SYSTEM_MAP=$TMP/stub p2 'kernel.data("no_such_symbol").rw')" '^kernel.data\("no_such_symbol"\).length\(1\).rw' \
	"with Debian's stub System.map the symbol goes to the module unchecked"
done_testing
