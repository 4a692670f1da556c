#!/bin/sh
# kdata.t - kernel.data(...) hardware watchpoints in Debian's kernel under
# qemu: marktap binds them to marktap.ko's wide hardware breakpoints
# (kmod/mt_hwbp.c), whose hits run the handlers' Lua; and kernel arrays
# subscripted by a variable (translator/btf.c).  The guest's checks
# (kdata-body.sh) are renumbered into our plan; systemtap-doc's
# hw_watch_*.stp examples run there too when installed.
guest_tag=-kdata
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
extra=
ex=/usr/share/systemtap/examples/memory
config=$(guest_cache_dir)/config-$KVER
if [ -f "$ex/hw_watch_sym.stp" ] && [ -f "$ex/hw_watch_addr.stp" ] && [ -f "$config" ]; then
	extra="$ex/hw_watch_sym.stp $ex/hw_watch_addr.stp $config"
fi
# shellcheck disable=SC2086
guest_boot "$top_srcdir/tests/kernel/kdata-body.sh" 600 $extra
guest_report $? 60
n=$guest_nchecks
[ "$n" -ge 16 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
