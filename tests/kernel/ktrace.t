#!/bin/sh
# ktrace.t - kernel.trace probes in Debian's kernel under qemu: marktap
# resolves the tracepoints and their parameters from the guest kernel's
# BTF (translator/btf.c, ktrace.c), marktap.ko probes them with the
# handlers' Lua (kmod/mt_tracepoint.c): parameters past the five in
# registers, and a module's tracepoints, its module loaded, unloaded and
# loaded again while probed.  The guest's checks
# (ktrace-body.sh) are renumbered into our plan.
guest_tag=-ktrace
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
# modules of the guest kernel's linux-image package, cached next to the
# kernel as kfunc-tapsets.t caches its own: i2c-stub (an SMBus adapter in
# software: smbus_write's seven parameters) and i2c-dev (busybox's i2cset
# reaches it), vsock and its loopback transport (the tracepoints of
# vmw_vsock_virtio_transport_common, a module's)
mods=$(guest_cache_dir)/modules-$KVER
want="i2c-stub i2c-dev vsock vmw_vsock_virtio_transport_common vsock_loopback"
missing=
for m in $want; do
	[ -s "$mods/$m.ko" ] && continue
	f=$(find "$mods-all" -name "$m.ko" 2>/dev/null | head -1)   # bench/examples-lib.sh's
	if [ -n "$f" ]; then mkdir -p "$mods" && cp "$f" "$mods/$m.ko.tmp$$" && mv "$mods/$m.ko.tmp$$" "$mods/$m.ko"
	else missing="$missing $m"; fi
done
if [ -n "$missing" ]; then
	tmp=$mods.tmp$$
	rm -rf "$tmp" && mkdir -p "$tmp" "$mods" &&
	(cd "$tmp" && apt-get download "linux-image-$KVER" >apt.log 2>&1) &&
	dpkg-deb --fsys-tarfile "$tmp"/linux-image-"$KVER"_*.deb | tar -x -C "$tmp" --wildcards \
		"./lib/modules/$KVER/kernel/drivers/i2c/*.ko" "./lib/modules/$KVER/kernel/net/vmw_vsock/*.ko" 2>/dev/null
	for m in $missing; do
		f=$(find "$tmp" -name "$m.ko" 2>/dev/null | head -1)
		[ -n "$f" ] && mv "$f" "$mods/$m.ko"   # a rename: atomic
	done
	rm -rf "$tmp"
fi
extra=
for m in $want; do
	if [ -s "$mods/$m.ko" ]; then extra="$extra $mods/$m.ko"; else diag "no $m.ko of $KVER: its checks fail"; fi
done
# shellcheck disable=SC2086
guest_boot "$top_srcdir/tests/kernel/ktrace-body.sh" 900 "$(guest_real "$guest_dir/klua")" $extra
guest_report $? 80
n=$guest_nchecks
[ "$n" -ge 22 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
