# lib.sh - shared setup of the view-*.t tests; source it after tap.sh.
# MARKTRACE overrides the binary under test (view-asan.t runs these tests
# again with a sanitizer build).
# Under a bare `prove` from an out-of-tree build directory, that directory.
if [ ! -x "$top_builddir/runtime/marktrace/marktrace" ] && [ -x "$PWD/runtime/marktrace/marktrace" ]; then
	top_builddir=$PWD
fi
MT=${MARKTRACE:-$top_builddir/runtime/marktrace/marktrace}
GEN=$top_builddir/tests/runtime/view/gentrace
VIEWDIR=$top_srcdir/tests/runtime/view
TZ=UTC
export TZ
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mt-view.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
[ -x "$MT" ] || skip_all "no marktrace binary at $MT"
[ -x "$GEN" ] || skip_all "no gentrace at $GEN (make check builds it)"

# gen DIR < SCRIPT: write a trace (see gentrace.c)
gen() { rm -rf "$1" && "$GEN" "$1"; }

# put_u64 FILE OFFSET VALUE: overwrite 8 bytes, little endian
put_u64() {
	_v=$3 _i=0 _s=
	while [ $_i -lt 8 ]; do
		_s="$_s\\$(printf '%03o' $((_v & 255)))"
		_v=$((_v >> 8))
		_i=$((_i + 1))
	done
	printf "$_s" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# put_bytes FILE OFFSET OCTAL-ESCAPES: overwrite bytes, e.g. '\377\001'
put_bytes() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }
