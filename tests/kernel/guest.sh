# guest.sh - boot Debian's kernel under qemu with marktap.ko; source it.
#
#   guest_prepare || skip_all "$guest_why"   kernel, module, tools ready
#   guest_boot SCRIPT [SECONDS]               run SCRIPT as the guest's test
#                                             body; its console in $guest_out
#
# The kernel is the one linux-headers-amd64 depends on (it changes with
# point releases, so it is worked out at run time), taken from its
# linux-image package without installing it and cached, uncompressed, in
# $MARKTAP_KERNEL_CACHE (default /var/cache/marktap-kernel if writable,
# else $top_builddir/tests/kernel/cache).  qemu uses software emulation:
# these machines' /dev/kvm cannot run Debian's kernel.  One TCG thread for
# both vCPUs (GUEST_ACCEL overrides): with a thread per vCPU, QEMU 7.2 let
# a vCPU keep executing kernel text that the other had just patched (an
# int3 of text_poke_bp, retried forever by kprobes' int3 handler: soft
# lockup), which arming tracepoints and kprobes does all the time.
# GUEST_LOGLEVEL and GUEST_CMDLINE add to the kernel's command line;
# GUEST_MEM sets its memory (MiB, default 512); GUEST_QEMU_ARGS adds to
# qemu's ("-s": a gdb stub on :1234, to see where a wedged guest runs); GUEST_INSTALL names host
# programs packed with their shared libraries into the guest's /bin.
# guest_tag (set before sourcing) keeps a test's module build, initramfs
# and console apart from the other kernel tests', so that make -j runs
# them side by side.
# A guest that dies before its test body starts (a kernel that panics at
# boot under TCG: "IO-APIC + timer doesn't work"), or shows no sign of it
# within GUEST_BOOT_LIMIT seconds (default 240), is booted again, up to
# GUEST_BOOT_TRIES boots (default 3); each retry is a TAP comment.  Once
# the body has begun, its failures are the test's: never retried.
# In the guest, wait_for SECONDS COMMAND... (a program in /bin, so that
# sh -c and traced commands have it too) polls like tap.sh's.

guest_dir="$top_builddir/tests/kernel"
guest_tag=${guest_tag:-}

guest_skip() { guest_why="$*"; return 1; }

guest_cache_dir() {
	if [ -n "$MARKTAP_KERNEL_CACHE" ]; then
		echo "$MARKTAP_KERNEL_CACHE"
	elif mkdir -p /var/cache/marktap-kernel 2>/dev/null && [ -w /var/cache/marktap-kernel ]; then
		echo /var/cache/marktap-kernel
	else
		echo "$guest_dir/cache"
	fi
}

# The uncompressed kernel (ELF with a PVH entry: qemu boots it directly).
guest_fetch_kernel() {
	cache=$(guest_cache_dir)
	mkdir -p "$cache" || guest_skip "cannot create $cache" || return 1
	guest_vmlinux="$cache/vmlinux-$KVER"
	[ -s "$guest_vmlinux" ] && return 0
	command -v python3 >/dev/null || { guest_skip "python3 missing (decompresses the kernel)"; return 1; }
	(cd "$cache" && rm -f linux-image-"$KVER"_*.deb &&
	 apt-get download "linux-image-$KVER" >apt.log 2>&1) ||
		{ guest_skip "apt-get download linux-image-$KVER failed (no network?): $(tail -1 "$cache/apt.log")"; return 1; }
	deb=$(ls "$cache"/linux-image-"$KVER"_*.deb | head -1)
	rm -rf "$cache/x" && mkdir -p "$cache/x" &&
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$cache/x" ./boot ||
		{ guest_skip "cannot unpack $deb"; return 1; }
	# vmlinuz = boot code + XZ stream of vmlinux: find the stream, inflate it
	python3 - "$cache/x/boot/vmlinuz-$KVER" "$guest_vmlinux.tmp" <<'EOF' || { guest_skip "cannot decompress vmlinuz"; return 1; }
import lzma, sys
data = open(sys.argv[1], 'rb').read()
at = data.find(b'\xfd7zXZ\x00')
if at < 0:
    sys.exit("no XZ stream in " + sys.argv[1])
open(sys.argv[2], 'wb').write(lzma.LZMADecompressor().decompress(data[at:]))
EOF
	mv "$guest_vmlinux.tmp" "$guest_vmlinux"
	cp "$cache/x/boot/config-$KVER" "$cache/config-$KVER" 2>/dev/null
	rm -rf "$cache/x" "$deb"
}

guest_prepare() {
	KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		sed -E 's/^linux-headers-([^ ,]+).*/\1/')
	[ -n "$KVER" ] || { guest_skip "linux-headers-amd64 is not installed"; return 1; }
	[ -d "/lib/modules/$KVER/build" ] || { guest_skip "no /lib/modules/$KVER/build"; return 1; }
	command -v qemu-system-x86_64 >/dev/null || { guest_skip "qemu-system-x86_64 missing (qemu-system-x86)"; return 1; }
	[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q static ||
		{ guest_skip "no static /bin/busybox (busybox-static)"; return 1; }
	command -v cpio >/dev/null || { guest_skip "cpio missing"; return 1; }
	guest_fetch_kernel || return 1
	guest_kbuild="$guest_dir/kbuild-$KVER$guest_tag"
	make -s -C "$top_srcdir/kmod" KVER="$KVER" BUILD="$guest_kbuild" >"$guest_dir/kbuild$guest_tag.log" 2>&1 ||
		{ guest_skip "marktap.ko does not build (see $guest_dir/kbuild$guest_tag.log)"; guest_build_failed=1; return 1; }
	return 0
}

# guest_start: guest_prepare for a .t file; if it cannot, the TAP that says
# why (a module that does not build fails; missing tools skip) and exit.
guest_start() {
	guest_prepare && return 0
	if [ -n "$guest_build_failed" ]; then
		echo "1..1"; echo "not ok 1 - marktap.ko builds against $KVER"
		tail -30 "$guest_dir/kbuild$guest_tag.log" | sed 's/^/# /'
		exit 1
	fi
	skip_all "$guest_why"
}

# guest_need_lua: skip the test when marktap.ko was built without Lua
# (kmod/Makefile says why in the build log).
guest_need_lua() {
	[ -f "$guest_kbuild/lua/lvm.c" ] ||
		skip_all "marktap.ko built without Lua: $(grep -m1 'WITHOUT Lua' "$guest_dir/kbuild$guest_tag.log")"
}

# Copy a program and the shared libraries it needs into the initramfs root.
guest_install() { # FILE DEST-DIR
	mkdir -p "$guest_root$2"
	cp -L "$1" "$guest_root$2/"
	ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
		mkdir -p "$guest_root$(dirname "$lib")"
		[ -e "$guest_root$lib" ] || cp -L "$lib" "$guest_root$lib"
		# a build tree's library (RUNPATH) may sit under /tmp, which the
		# guest mounts over: the loader's default directory finds it too
		case $lib in
		/lib/* | /lib64/* | /usr/lib/*) ;;
		*) mkdir -p "$guest_root/usr/lib"; cp -L "$lib" "$guest_root/usr/lib/" ;;
		esac
	done
}

# The binary behind a program of the build tree (libtool may wrap it).
guest_real() {
	if [ -x "$(dirname "$1")/.libs/$(basename "$1")" ]; then
		echo "$(dirname "$1")/.libs/$(basename "$1")"
	else
		echo "$1"
	fi
}

# guest_report BOOT-STATUS DIAG-LINES: TAP for a finished boot: whether the
# guest got to the end (else the console's oops lines), its first diag lines,
# then one check per "ok - " / "not ok - " line it printed, counted in
# guest_nchecks.
guest_report() {
	if [ "$1" = 0 ]; then
		ok 0 "the guest ran its tests to the end (console: $guest_out)"
	else
		ok 1 "the guest ran its tests to the end (console: $guest_out)"
		grep -E 'BUG|Oops|RIP|soft lockup|panic' "$guest_out" | head -12 | sed 's/^/# /'
	fi
	grep -E '^# ' "$guest_out" | head -"$2"
	guest_nchecks=0
	while IFS= read -r line; do
		case $line in
		"not ok - "*) ok 1 "guest: ${line#not ok - }" ;;
		"ok - "*) ok 0 "guest: ${line#ok - }" ;;
		*) continue ;;
		esac
		guest_nchecks=$((guest_nchecks + 1))
	done <"$guest_out"
}

# guest_boot BODY-SCRIPT [TIMEOUT] [EXTRA-FILES...]: pack and boot; the
# extra files (static programs) go to the guest's /bin.
guest_boot() {
	body=$1
	limit=${2:-150}
	if [ $# -ge 2 ]; then shift 2; else set --; fi
	guest_root="$guest_dir/root$guest_tag"
	rm -rf "$guest_root"
	mkdir -p "$guest_root"/bin "$guest_root"/dev "$guest_root"/proc "$guest_root"/sys "$guest_root"/tmp
	cp /bin/busybox "$guest_root/bin/busybox"
	for tool in sh insmod rmmod lsmod mount umount poweroff ip sleep cat grep dmesg true \
		    echo kill chgrp ls wc head tail tr sed seq dd mkdir tar gzip base64; do
		ln -sf busybox "$guest_root/bin/$tool"
	done
	cp "$guest_kbuild/marktap.ko" "$guest_kbuild/mt_hello.ko" "$guest_root/"
	guest_install "$(guest_real "$guest_dir/kreader")" /bin
	# marktrace and a user program with markers, for record --kernel
	[ -x "$top_builddir/runtime/marktrace/marktrace" ] &&
		guest_install "$(guest_real "$top_builddir/runtime/marktrace/marktrace")" /bin
	[ -x "$top_builddir/tests/script/target" ] &&
		guest_install "$top_builddir/tests/script/target" /bin
	# marktap and the modules kmod.t translated on the host (*.mtm)
	[ -x "$top_builddir/translator/marktap" ] &&
		guest_install "$(guest_real "$top_builddir/translator/marktap")" /bin
	for m in "$guest_dir"/*.mtm; do
		[ -f "$m" ] && cp "$m" "$guest_root/"
	done
	# its data, for scripts translated in the guest (MARKTAP_DATADIR)
	mkdir -p "$guest_root/share/marktap/tapset"
	cp "$top_srcdir"/tapsets/*.stp "$top_srcdir"/tapsets/*.stpm "$guest_root/share/marktap/tapset/"
	for f in "$top_builddir"/tapsets/*.stp; do   # generated (syscalls.stp)
		[ -f "$f" ] && cp "$f" "$guest_root/share/marktap/tapset/"
	done
	cp "$top_srcdir/tapsets/markers.tsv" "$guest_root/share/marktap/"
	cp "$top_srcdir/scripts/fsopen-top.stp" "$guest_root/share/marktap/"
	mkdir -p "$guest_root/share/marktap/scripts"
	cp "$top_srcdir"/scripts/*.stp "$guest_root/share/marktap/scripts/"
	# the kernel's configuration where Debian keeps it: stap's %( CONFIG_X
	# %) conditions of scripts translated in the guest read it (pp.c)
	if [ -f "$(guest_cache_dir)/config-$KVER" ]; then
		mkdir -p "$guest_root/boot"
		cp "$(guest_cache_dir)/config-$KVER" "$guest_root/boot/"
	fi
	for f in "$@"; do
		cp "$f" "$guest_root/bin/"
	done
	# dynamic programs of the host, with their libraries (bench/kernel packs
	# bpftrace this way); GUEST_MEM must then hold them unpacked
	for f in ${GUEST_INSTALL:-}; do
		guest_install "$f" /bin
	done
	{
		echo '#!/bin/sh'
		echo 'export PATH=/bin'
		echo 'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev'
		echo 'mount -t tmpfs tmp /tmp; mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null'
		echo 'mount -t debugfs nodev /sys/kernel/debug 2>/dev/null; ip link set lo up'
		echo 'echo GUEST-BEGIN'
		cat "$top_srcdir/tests/kernel/body-lib.sh" "$body"
		echo 'echo GUEST-END'
		echo 'poweroff -f'
	} >"$guest_root/init"
	chmod +x "$guest_root/init"
	cat >"$guest_root/bin/wait_for" <<'EOF'
#!/bin/sh
# wait_for SECONDS COMMAND...: run COMMAND every 50 ms until it succeeds
# (status 0) or SECONDS (whole) have passed (status 1, said in a "# " line)
end=$(( $(cut -d. -f1 /proc/uptime) + $1 )); limit=$1; shift
until "$@"; do
	if [ "$(cut -d. -f1 /proc/uptime)" -ge "$end" ]; then
		echo "# gave up after $limit s waiting for: $*"
		exit 1
	fi
	sleep 0.05
done
EOF
	chmod +x "$guest_root/bin/wait_for"
	(cd "$guest_root" && mknod dev/console c 5 1 2>/dev/null; true)
	(cd "$guest_root" && find . -print0 | cpio --null -o -H newc -R 0:0 2>/dev/null | gzip -1) \
		>"$guest_dir/initrd$guest_tag.gz"
	guest_out="$guest_dir/console$guest_tag.log"
	guest_try=1
	while ! guest_run; do
		if [ "$guest_try" -ge "${GUEST_BOOT_TRIES:-3}" ]; then
			echo "# guest boot failed ($guest_failure) $guest_try times: giving up"
			break
		fi
		echo "# guest boot failed ($guest_failure), retrying"
		guest_try=$((guest_try + 1))
	done
	grep -q GUEST-END "$guest_out"
}

# guest_run: one boot of the initramfs guest_boot made, to its end.
# Status 1 when the guest died or stayed silent before its test body began
# (guest_failure says how: the panic's line, else the console's last),
# else 0, whatever the body did.
guest_run() {
	guest_raw="$guest_out.raw"
	: >"$guest_raw"
	timeout "$limit" qemu-system-x86_64 -accel ${GUEST_ACCEL:-tcg,thread=single} -cpu max -m ${GUEST_MEM:-512} -smp 2 -nodefaults \
		-nic none -display none -serial stdio -no-reboot \
		-kernel "$guest_vmlinux" -initrd "$guest_dir/initrd$guest_tag.gz" ${GUEST_QEMU_ARGS:-} \
		-append "console=ttyS0 quiet loglevel=${GUEST_LOGLEVEL:-1} panic=-1 oops=panic ${GUEST_CMDLINE:-}" \
		</dev/null >"$guest_raw" 2>&1 &
	guest_qemu=$!
	guest_deadline=$(( $(date +%s) + ${GUEST_BOOT_LIMIT:-240} ))
	guest_silent=no
	# qemu writes the console unbuffered: GUEST-BEGIN shows at once
	until grep -q GUEST-BEGIN "$guest_raw" || guest_gone "$guest_qemu"; do
		if [ "$(date +%s)" -ge "$guest_deadline" ]; then
			guest_silent=yes
			kill "$guest_qemu" 2>/dev/null   # (timeout passes it on to qemu)
			break
		fi
		sleep 0.2
	done
	wait "$guest_qemu"
	tr -d '\r' <"$guest_raw" >"$guest_out"
	rm -f "$guest_raw"
	grep -q GUEST-BEGIN "$guest_out" && return 0
	# the panic's reason, else the kernel's last word
	guest_failure=$(grep -m1 -E 'Kernel panic|BUG:|Oops' "$guest_out")
	[ -n "$guest_failure" ] ||
		guest_failure=$(grep -v -e '^[[:space:]]*$' -e '^qemu-system' "$guest_out" | tail -1)
	guest_failure=$(printf '%s' "$guest_failure" | sed 's/^\[ *[0-9.]*\] //' | cut -c1-120)
	[ -n "$guest_failure" ] || guest_failure="nothing on the console"
	if [ "$guest_silent" = yes ]; then
		guest_failure="no test body within ${GUEST_BOOT_LIMIT:-240} s: $guest_failure"
	fi
	return 1
}

# guest_gone PID: the process has ended (a zombie not reaped yet included)
guest_gone() {
	! kill -0 "$1" 2>/dev/null || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]
}
