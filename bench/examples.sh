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
top=$(cd "$(dirname "$0")/.." && pwd)
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
MT=$B/translator/marktap
EX=/usr/share/systemtap/examples
[ -x "$MT" ] || { echo "examples.sh: no $MT (build first)" >&2; exit 1; }
[ -d "$EX" ] || { echo "examples.sh: no $EX (apt-get install systemtap-doc)" >&2; exit 1; }
KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | sed -E 's/^linux-headers-([^ ,]+).*/\1/')
: "${MARKTAP_BTF:=/var/cache/marktap-kernel/vmlinux-$KVER}"
export MARKTAP_BTF MARKTAP_TAPSET_DIR="$top/tapsets:$B/tapsets"
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
total=0 ok=0 sok=0 have_stap=
command -v stap >/dev/null 2>&1 && have_stap=1
for meta in "$EX"/*/*.meta; do
	dir=$(dirname "$meta")
	line=$(sed -n 's/^test_installcheck: *//p' "$meta" | head -1)
	[ -n "$line" ] || line=$(sed -n 's/^test_check: *//p' "$meta" | head -1)
	name=$(sed -n 's/^name: *//p' "$meta" | head -1)
	case $line in stap\ *) ;; *) line="stap $name" ;; esac
	[ -f "$dir/$name" ] || continue
	total=$((total + 1))
	args=${line#stap }
	# the .meta lines are shell words; -p2 after them wins over their -p4
	(cd "$dir" && eval "set -- $args" && timeout 60 "$MT" -r "$KVER" "$@" -p2) \
		> /dev/null 2> "$TMP/err" </dev/null
	rc=$?
	rel=${dir#"$EX"/}/$name
	if [ $rc = 0 ]; then
		ok=$((ok + 1))
		res=ok
	else
		why=$(grep -m1 -E 'error|ERROR' "$TMP/err" | sed -E 's/ at [^ ]+:[0-9]+:[0-9]+.*//; s/"[^"]*"/"…"/g; s/'"'"'[^'"'"']*'"'"'/'"'"'…'"'"'/g' | cut -c1-110)
		[ -n "$why" ] || why="exit $rc: $(head -1 "$TMP/err" | cut -c1-100)"
		printf '%s\n' "$why" >> "$TMP/why"
		res="FAIL: $why"
	fi
	if [ -n "$have_stap" ]; then
		(cd "$dir" && eval "set -- $args" && timeout 120 stap -r "$KVER" "$@" -p2) \
			> /dev/null 2>&1 </dev/null && { sok=$((sok + 1)); res="$res (stap: ok)"; }
	fi
	[ -n "$verbose" ] && printf '%-45s %s\n' "$rel" "$res"
done
echo "marktap -p2 elaborates $ok of $total examples (systemtap-doc, .meta command lines, BTF of $KVER)"
[ -n "$have_stap" ] && echo "stap -p2 elaborates $sok of $total on this machine"
if [ -s "$TMP/why" ]; then
	echo "first errors of the others, grouped:"
	sort "$TMP/why" | uniq -c | sort -rn | head -40
fi
