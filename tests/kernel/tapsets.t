#!/bin/sh
# tapsets.t - the subsystem tapsets in Debian's kernel under qemu, their
# handlers run by marktap on recorded events (marktap.ko without Lua);
# tapsets-klua.t runs the same with the handlers in the kernel.  See
# tapsets-run.sh.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-tapsets
. "$top_srcdir/tests/kernel/guest.sh"
LUA=no; export LUA   # handlers run by marktap on recorded events
tapsets_where=events
. "$top_srcdir/tests/kernel/tapsets-run.sh"
