# lib.sh - shared setup of the translator tests: source after tap.sh.
MT="$top_builddir/translator/marktap"
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"
MARKTAP_MARKERS="$top_srcdir/tapsets/markers.tsv"
# no map of the kernel's sources unless a test writes one (ksrc.t): the
# machine's own, if any, would change what FUNCTION@FILE resolves to
MARKTAP_KERNEL_SOURCES=/dev/null
export MARKTAP_TAPSET_DIR MARKTAP_MARKERS MARKTAP_KERNEL_SOURCES
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mt-tr.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
[ -x "$MT" ] || skip_all "marktap not built"
# The parse tree of a file without its "# file" line.
p1() { "$MT" -g -p1 "$@" 2>&1 | sed '/^# file /d'; }
# The kernel's BTF for the tests of kernel points: the Debian guest
# kernel's that the kernel tests cache (MARKTAP_BTF exported, R="-r KVER",
# guest its path, cache their folder), else the running kernel's; neither
# skips the whole test.
use_kernel_btf() {
	cache=${MARKTAP_KERNEL_CACHE:-/var/cache/marktap-kernel}
	guest=$(ls "$cache"/vmlinux-* "$top_builddir"/tests/kernel/cache/vmlinux-* 2>/dev/null | head -1)
	if [ -n "$guest" ]; then
		MARKTAP_BTF=$guest
		export MARKTAP_BTF
		R="-r ${guest##*/vmlinux-}"
		diag "BTF of $guest"
	elif [ -r /sys/kernel/btf/vmlinux ]; then
		R=
		diag "BTF of the running kernel"
	else
		skip_all "no BTF: neither a cached guest vmlinux nor /sys/kernel/btf/vmlinux"
	fi
}
