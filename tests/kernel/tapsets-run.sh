# tapsets-run.sh - the body of tapsets.t and tapsets-klua.t (sourced after
# tap.sh and guest.sh, with guest_tag set): the subsystem tapsets in
# Debian's kernel under qemu.  Each alias checked fires on a known action
# with the values the action implies, and the example scripts print what
# their action implies.  Scripts are translated here (-p4, tapsets
# included) and run by marktap in the guest (tapsets-body.sh); its checks
# are renumbered into our plan.
#
# The guest gets, besides marktap: tapsets-act (user actions), mt_acts.ko
# (kernel actions: tests/kernel/tapsets-kmod.c, built here against the
# guest's kernel), and modules of the guest kernel's linux-image package:
# zsmalloc, zram (swap), loop, fat, msdos, nls_cp437 (a FAT file system
# on a loop device, whose buffer waits come from fat.ko: fs/buffer.c's own
# waits are inlined there, out of the probe's reach).

# tapsets_modules DIR NAME...: NAME.ko of the guest's kernel into DIR, from
# linux-image-$KVER (cached next to the kernel: $cache/modules-$KVER).  A
# temporary folder per process and a rename per module: tapsets.t and
# tapsets-klua.t may fetch at the same time (make -j).
tapsets_modules() {
	dir=$1; shift
	mods=$(guest_cache_dir)/modules-$KVER
	for m in "$@"; do
		[ -s "$mods/$m.ko" ] && continue
		tmp=$mods.tmp$$
		rm -rf "$tmp" && mkdir -p "$tmp" "$mods" &&
		(cd "$tmp" && apt-get download "linux-image-$KVER" >apt.log 2>&1) || {
			diag "apt-get download linux-image-$KVER failed: $(tail -1 "$tmp/apt.log")"
			rm -rf "$tmp"; return 1; }
		dpkg-deb --fsys-tarfile "$tmp"/linux-image-"$KVER"_*.deb |
			tar -x -C "$tmp" --wildcards "./lib/modules/$KVER/kernel/*.ko"
		for want in "$@"; do
			f=$(find "$tmp/lib" -name "$want.ko" | head -1)
			[ -n "$f" ] && mv "$f" "$mods/$want.ko"   # a rename: atomic
		done
		rm -rf "$tmp"
		break
	done
	for m in "$@"; do
		cp "$mods/$m.ko" "$dir/" || return 1
	done
}

# mt_acts.ko, built like marktap.ko against the guest kernel's headers.
tapsets_kmod() { # BUILD-DIR
	rm -rf "$1" && mkdir -p "$1" &&
	cp "$top_srcdir/tests/kernel/tapsets-kmod.c" "$1/mt_acts.c" &&
	echo 'obj-m := mt_acts.o' >"$1/Kbuild" &&
	make -C "/lib/modules/$KVER/build" M="$1" modules >"$1/build.log" 2>&1 &&
	[ -f "$1/mt_acts.ko" ]
}

guest_start
MTAP=$top_builddir/translator/marktap
[ -x "$MTAP" ] || skip_all "marktap not built"
[ -f "$top_builddir/tapsets/syscalls.stp" ] || skip_all "tapsets/syscalls.stp not generated"
ACT=$(guest_real "$guest_dir/tapsets-act")
[ -x "$ACT" ] || skip_all "tests/kernel/tapsets-act not built"
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"; export MARKTAP_TAPSET_DIR
mtm="$guest_dir/root-mtm$guest_tag"   # (make clean removes root-*)
rm -rf "$mtm"; mkdir -p "$mtm"
translate() { # NAME FILE|-e SCRIPT
	name=$1; shift
	(cd "$mtm" && "$MTAP" -p4 -m "$name" "$@" >/dev/null 2>"$name.err") || {
		ok 1 "$name translates"; sed 's/^/# /' "$mtm/$name.err"; return; }
}
for s in "$top_srcdir"/tests/kernel/tapsets/*.stp; do
	translate "t_$(basename "$s" .stp)" "$s"
done
for s in syscalls-top ctxswitch sigmon pagefaults nettop; do
	translate "x_$(echo $s | tr - _)" "$top_srcdir/scripts/$s.stp"
done
grep '^probe [a-z]' "$top_srcdir/tests/kernel/tapsets/fire.stp" | grep -v '^probe end' >"$mtm/fire.list"
nfire=$(grep -c . "$mtm/fire.list")
# the acts' checks: one per "acheck " line of the guest's part
nacts=$(grep -o 'acheck "' "$top_srcdir/tests/kernel/tapsets-body.sh" | wc -l)
extra=
if tapsets_kmod "$guest_dir/kbuild-acts$guest_tag"; then
	extra="$guest_dir/kbuild-acts$guest_tag/mt_acts.ko"
else
	diag "mt_acts.ko does not build:"; tail -5 "$guest_dir/kbuild-acts$guest_tag/build.log" | sed 's/^/# /'
fi
mkdir -p "$mtm/ko"
kos="zsmalloc zram loop fat msdos nls_cp437"
tapsets_modules "$mtm/ko" $kos && extra="$extra $(for m in $kos; do echo "$mtm/ko/$m.ko"; done)"
# select's timeout is in jiffies: the guest's HZ; where handlers must run
{ sed -n 's/^CONFIG_HZ=/HZ=/p' "$(guest_cache_dir)/config-$KVER"
  echo "TAPSETS_WHERE=$tapsets_where"; } >"$mtm/tapsets.env"
guest_boot "$top_srcdir/tests/kernel/tapsets-body.sh" 900 "$mtm"/*.mtm "$mtm/fire.list" "$ACT" \
	"$mtm/tapsets.env" $extra
guest_report $? 200
n=$guest_nchecks
want=$((27 + nfire + nacts))
[ "$n" = $want ]; ok $? "the guest reported its $want checks ($n)"
plan $_tap_n
done_testing
