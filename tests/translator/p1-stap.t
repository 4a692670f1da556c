#!/bin/sh
# Pass 1 against the oracle: real "stap -p1" prints the same tree.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
command -v stap >/dev/null 2>&1 || skip_all "stap not installed"
# stap wants a kernel release with a build tree even for pass 1.
KREL=$(ls /lib/modules 2>/dev/null | while read -r r; do [ -e "/lib/modules/$r/build/.config" ] && echo "$r"; done | head -1)
[ -n "$KREL" ] || skip_all "no kernel build tree for stap"
stap -r "$KREL" -p1 -e 'probe begin {}' >/dev/null 2>&1 || skip_all "stap -p1 does not work here"
# corpus/: larger scripts; fidelity/: one construct each (the families
# of fidelity/README.md), stap's rejections included (both then print nothing)
set -- "$top_srcdir"/tests/translator/corpus/*.stp "$top_srcdir"/tests/translator/fidelity/*.stp
plan $#
for f; do
	stap -r "$KREL" -g -p1 "$f" 2>/dev/null | sed '/^# file /d' |
		perl -p "$top_srcdir/tests/translator/stap-norm.pl" > "$TMP/stap.out"
	"$MT" -g -p1 "$f" 2>/dev/null | sed '/^# file /d' > "$TMP/mt.out"
	if diff -u "$TMP/stap.out" "$TMP/mt.out" > "$TMP/diff"; then
		ok 0 "stap -p1 and marktap -p1 agree on $(basename "$f")"
	else
		ok 1 "stap -p1 and marktap -p1 agree on $(basename "$f")"
		sed 's/^/# /' "$TMP/diff" | head -40
	fi
done
done_testing
