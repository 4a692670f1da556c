#!/bin/sh
# stap-agree.sh - how often marktap agrees with real SystemTap.
#
# usage: stap-agree.sh [-m MARKTAP] [-v] FILE.stp|DIR...
#
# Every .stp file (directories searched recursively) goes through
# "stap -p1" and "stap -r KVER -p2" (Debian's systemtap; pass 1 and 2 need
# no kernel build) and through marktap at the same passes, and falls into
# one group by stap's answer:
#   p1-ok      stap -p1 accepts: marktap accepts and prints the same tree
#   p1-reject  stap -p1 rejects: marktap rejects at pass 1 or 2
#   p2-ok      stap -p2 accepts: marktap -p2 accepts
#   p2-reject  stap -p1 accepts, stap -p2 rejects: marktap -p2 rejects
# (a p2-* file is also counted in p1-ok).  A file stap fails on for want of
# kernel debuginfo ("Kernel function symbol table missing" alone is only a
# warning) counts as p2-reject: the kernel-only parts are out of scope, and
# marktap has to reject such a script too.  Prints one line per group,
# "GROUP agreed/total percent", then the overall figure; -v lists each
# disagreement.  Exit status 0, or 2 when stap cannot run here.
#
# A second table leaves out the files that need the kernel's own debug
# information or types, which marktap does not read (the kernel-only
# parts are out of its scope), by two rules, each checkable:
#   - stap -p2 fails on the file naming missing kernel debuginfo
#     ("missing x86_64 kernel/module debuginfo"): kernel.function,
#     kernel.statement, module("M").function, @cast/@var of kernel types,
#     and stap's tapset aliases built on them (vfs.*, ioblock.*, tcp.*...);
#   - a kernel.trace probe dereferences a tracepoint parameter ($p->pid):
#     stap compiles the kernel's headers for the member's type.
# Such files are counted in the first table and listed with -v as
# "kernel-dwarf FILE".
set -u
here=$(cd "$(dirname "$0")" && pwd)
MT=${MT:-$here/../../translator/marktap}
verbose=0
while getopts m:v o; do
	case $o in
	m) MT=$OPTARG ;;
	v) verbose=1 ;;
	*) echo "usage: $0 [-m MARKTAP] [-v] FILE.stp|DIR..." >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
command -v stap >/dev/null 2>&1 || { echo "stap not installed" >&2; exit 2; }
KREL=$(ls /lib/modules 2>/dev/null | while read -r r; do [ -e "/lib/modules/$r/build/.config" ] && echo "$r"; done | head -1)
[ -n "$KREL" ] || { echo "no kernel build tree for stap" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stap-agree.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cache=${STAP_AGREE_CACHE:-$tmp/cache}
mkdir -p "$cache"
# the source tree's tapsets and the build tree's (the generated syscalls.stp)
: "${MARKTAP_TAPSET_DIR:=$here/../../tapsets:$(dirname "$MT")/../tapsets}"
export MARKTAP_TAPSET_DIR

for g in p1-ok p1-reject p2-ok p2-reject; do
	for t in "" x; do echo 0 > "$tmp/$g$t.n"; echo 0 > "$tmp/$g$t.a"; done
done
count() { # count GROUP AGREED(0/1) FILE
	echo $(($(cat "$tmp/$1.n") + 1)) > "$tmp/$1.n"
	[ "$2" = 1 ] && echo $(($(cat "$tmp/$1.a") + 1)) > "$tmp/$1.a"
	if [ "$kdwarf" = 0 ]; then  # the second table's ("x")
		echo $(($(cat "$tmp/${1}x.n") + 1)) > "$tmp/${1}x.n"
		[ "$2" = 1 ] && echo $(($(cat "$tmp/${1}x.a") + 1)) > "$tmp/${1}x.a"
	fi
	[ "$2" != 1 ] && [ "$verbose" = 1 ] && echo "disagree $1: $3"
	return 0
}

find "$@" -name '*.stp' -type f | sort > "$tmp/files"
while read -r f; do
	# stap's answers are kept in $cache (STAP_AGREE_CACHE): several
	# marktaps are compared with one run of stap; the key is the file's
	# name and content, so an edited case is asked again
	c="$cache/$( (echo "$f"; cat "$f") | cksum | tr ' ' _)"
	if [ ! -e "$c.s2" ]; then
		# -g: guru code is no error for either; </dev/null: no waiting
		timeout 60 stap -r "$KREL" -g -p1 "$f" < /dev/null 2> /dev/null > "$c.out"
		echo $? > "$c.s1"
		sed '/^# file /d' "$c.out" | perl -p "$here/stap-norm.pl" > "$c.p1"
		if [ "$(cat "$c.s1")" = 0 ]; then
			timeout 120 stap -r "$KREL" -g -p2 "$f" < /dev/null > /dev/null 2> "$c.e2"
			echo $? > "$c.s2"
		else
			echo - > "$c.s2"
		fi
	fi
	s1=$(cat "$c.s1") s2=$(cat "$c.s2")
	# the two rules of the second table (see the top)
	kdwarf=0
	if { [ "$s2" != 0 ] && [ "$s2" != - ] && grep -q 'kernel/module debuginfo' "$c.e2" 2>/dev/null; } ||
	   perl -0ne 'exit(!(/kernel\.trace\s*\(/ && /\$\w+\s*->/))' "$f"; then
		kdwarf=1
		[ "$verbose" = 1 ] && echo "kernel-dwarf $f"
	fi
	cp "$c.p1" "$tmp/s1"
	timeout 60 "$MT" -r "$KREL" -g -p1 "$f" < /dev/null > "$tmp/m1.raw" 2> /dev/null
	m1=$?
	sed '/^# file /d' "$tmp/m1.raw" > "$tmp/m1"
	if [ "$s1" != 0 ]; then
		m2=$(timeout 60 "$MT" -r "$KREL" -g -p2 "$f" < /dev/null > /dev/null 2>&1; echo $?)
		count p1-reject $([ "$m1" != 0 ] || [ "$m2" != 0 ] && echo 1 || echo 0) "$f"
		continue
	fi
	count p1-ok $([ "$m1" = 0 ] && cmp -s "$tmp/s1" "$tmp/m1" && echo 1 || echo 0) "$f"
	m2=$(timeout 60 "$MT" -r "$KREL" -g -p2 "$f" < /dev/null > /dev/null 2>&1; echo $?)
	if [ "$s2" = 0 ]; then
		count p2-ok $([ "$m2" = 0 ] && echo 1 || echo 0) "$f"
	else
		count p2-reject $([ "$m2" != 0 ] && echo 1 || echo 0) "$f"
	fi
done < "$tmp/files"

table() { # table SUFFIX
	ta=0 tn=0
	for g in p1-ok p1-reject p2-ok p2-reject; do
		n=$(cat "$tmp/$g$1.n") a=$(cat "$tmp/$g$1.a")
		ta=$((ta + a)) tn=$((tn + n))
		[ "$n" -gt 0 ] && pct=$((100 * a / n)) || pct=-
		printf '%-10s %4d/%-4d %s%%\n' "$g" "$a" "$n" "$pct"
	done
	[ "$tn" -gt 0 ] && pct=$((100 * ta / tn)) || pct=-
	printf '%-10s %4d/%-4d %s%%\n' all "$ta" "$tn" "$pct"
}
table ""
echo "without the files that need kernel debuginfo or types:"
table x
