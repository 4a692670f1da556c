#!/bin/sh
# How many of SystemTap's example scripts (Debian's systemtap-doc) marktap
# elaborates with the command line their .meta file gives, against the
# guest kernel's BTF, and why the others do not: the first error of each,
# grouped.
#
#   bench/examples.sh [BUILDDIR] [-v]
#
# BUILDDIR defaults to _build.  MARKTAP_BTF defaults to the guest vmlinux
# the kernel tests cache (/var/cache/marktap-kernel/vmlinux-KVER); KVER is
# the kernel of Debian's linux-headers-amd64.  -v lists every script with
# its result.  With stap installed, it runs stap -p2 on the same lines.
B=${1:-_build}
[ "$1" ] && shift
verbose=; [ "$1" = -v ] && verbose=1
. "$(dirname "$0")/examples-lib.sh"
ex_setup "$B" examples.sh
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
total=0 ok=0 sok=0 have_stap=
command -v stap >/dev/null 2>&1 && have_stap=1
one() {
	total=$((total + 1))
	ex_p2 "$TMP/err"
	rc=$?
	if [ $rc = 0 ]; then
		ok=$((ok + 1))
		res=ok
	else
		why=$(ex_why "$TMP/err" $rc)
		printf '%s\n' "$why" >> "$TMP/why"
		res="FAIL: $why"
	fi
	if [ -n "$have_stap" ]; then
		(cd "$ex_dir" && eval "set -- $ex_args" && timeout 120 stap -r "$KVER" "$@" -p2) \
			> /dev/null 2>&1 </dev/null && { sok=$((sok + 1)); res="$res (stap: ok)"; }
	fi
	[ -n "$verbose" ] && printf '%-45s %s\n' "$ex_rel" "$res"
}
ex_each one
echo "marktap -p2 elaborates $ok of $total examples (systemtap-doc, .meta command lines, BTF of $KVER)"
[ -n "$have_stap" ] && echo "stap -p2 elaborates $sok of $total on this machine"
if [ -s "$TMP/why" ]; then
	echo "first errors of the others, grouped:"
	sort "$TMP/why" | uniq -c | sort -rn | head -40
fi
