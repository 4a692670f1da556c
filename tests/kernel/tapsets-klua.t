#!/bin/sh
# tapsets-klua.t - tapsets.t with the handlers in the kernel: marktap.ko
# built with Lua runs the aliases' handlers at the probe point.  Skipped
# when the module cannot have Lua (no lua5.4 source: kmod/Makefile says
# so).  See tapsets-run.sh.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-tapsets-klua
. "$top_srcdir/tests/kernel/guest.sh"
tapsets_where=kernel
if guest_prepare && [ ! -f "$guest_kbuild/lua/lvm.c" ]; then
	skip_all "marktap.ko built without Lua: $(grep -m1 'WITHOUT Lua' "$guest_dir/kbuild$guest_tag.log")"
fi
. "$top_srcdir/tests/kernel/tapsets-run.sh"
