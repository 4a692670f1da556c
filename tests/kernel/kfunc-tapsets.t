#!/bin/sh
# kfunc-tapsets.t - the tapset aliases built on kernel functions (vfs.*,
# ioblock.*, tcp.*, vm.kmem_cache_alloc, netdev.register, scheduler.cpu_on,
# kprocess.start...) in Debian's kernel under qemu: marktap resolves them
# from the guest kernel's BTF, marktap.ko runs their handlers at kprobes
# and kretprobes, and each checks values the action implies (dd's block
# size, a file's inode, a loopback transfer's size and port, a loop
# device's name), the alternative definitions over a tracepoint and a
# function (an interrupt's dev_name, a page fault's type), a connect's
# sockaddr and the tcpmib counters of it, a 32-bit task's send and recv.
# Six of Debian's systemtap examples run there too.  The guest's checks
# (kfunc-tapsets-body.sh) are renumbered into our plan.
guest_tag=-kfunctap
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
[ -f "$top_builddir/tapsets/syscalls.stp" ] || skip_all "tapsets/syscalls.stp not generated"

# modules of the guest kernel's linux-image package (loop: a block device;
# dummy: a network device to register), cached next to the kernel as
# tapsets-run.sh caches its own
mods=$(guest_cache_dir)/modules-$KVER
extra=
for m in loop dummy; do
	if [ ! -s "$mods/$m.ko" ]; then
		tmp=$mods.tmp$$
		rm -rf "$tmp" && mkdir -p "$tmp" "$mods" &&
		(cd "$tmp" && apt-get download "linux-image-$KVER" >apt.log 2>&1) &&
		dpkg-deb --fsys-tarfile "$tmp"/linux-image-"$KVER"_*.deb |
			tar -x -C "$tmp" --wildcards "./lib/modules/$KVER/kernel/*/$m.ko" 2>/dev/null
		f=$(find "$tmp" -name "$m.ko" 2>/dev/null | head -1)
		[ -n "$f" ] && mv "$f" "$mods/$m.ko"   # a rename: atomic
		rm -rf "$tmp"
	fi
	if [ -s "$mods/$m.ko" ]; then extra="$extra $mods/$m.ko"; else diag "no $m.ko of $KVER: its checks fail"; fi
done
# a static 32-bit program (no libc: gcc -m32 needs no 32-bit libraries)
# making send and recv through socketcall, as kaudit.t builds ia32.c
ia32="$guest_dir/ia32-send"
if ${CC:-gcc} -m32 -static -nostdlib -ffreestanding -fno-pic -no-pie -fno-stack-protector \
	-fno-asynchronous-unwind-tables -O1 -o "$ia32" "$top_srcdir/tests/kernel/ia32-send.c" \
	>"$guest_dir/ia32-send.log" 2>&1; then
	extra="$extra $ia32"
else
	diag "gcc -m32 cannot build ia32-send: $(head -1 "$guest_dir/ia32-send.log")"
fi
# Debian's examples run in the guest (systemtap-doc), if installed
ex=/usr/share/systemtap/examples
for f in io/inodewatch.stp io/iotop.stp interrupt/interrupts-by-dev.stp memory/pfaults.stp network/connect_stat.stp network/tcpipstat.stp; do
	[ -f "$ex/$f" ] && extra="$extra $ex/$f"
done
guest_boot "$top_srcdir/tests/kernel/kfunc-tapsets-body.sh" 900 $extra
guest_report $? 60
n=$guest_nchecks
[ "$n" -ge 20 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
