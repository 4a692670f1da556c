#!/bin/sh
# kaudit.t - the device and the kernel recorder held to account, in
# Debian's kernel under qemu:
# who may open /dev/marktap (initial user namespace, not the caller's),
# marktap -L and marktrace list --kernel against the real device,
# unknown and unavailable markers in record --kernel and kernel.mark
# probes, a 32-bit process's system calls, kernel_vprintk's loglevel, and
# kernel.mark handlers seeing the event's credentials and time.
# The guest's checks (kaudit-body.sh) are renumbered into our plan.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
guest_tag=-kaudit
. "$top_srcdir/tests/kernel/guest.sh"

# kernel.mark handlers run by marktap on recorded events: the module
# without in-kernel Lua, whatever the default
LUA=no; export LUA
guest_start
# A static 32-bit program without libc: gcc -m32 needs no 32-bit libraries.
extra=
ia32="$guest_dir/ia32"
if ${CC:-gcc} -m32 -static -nostdlib -ffreestanding -fno-pic -no-pie -fno-stack-protector \
	-fno-asynchronous-unwind-tables -O1 -o "$ia32" "$top_srcdir/tests/kernel/ia32.c" \
	>"$guest_dir/ia32.log" 2>&1; then
	extra=$ia32
else
	diag "gcc -m32 cannot build the 32-bit test program: $(head -1 "$guest_dir/ia32.log")"
fi
guest_boot "$top_srcdir/tests/kernel/kaudit-body.sh" 300 $extra
guest_report $? 80
n=$guest_nchecks
[ "$n" -ge 30 ]; ok $? "the guest reported its checks ($n)"
plan $_tap_n
done_testing
