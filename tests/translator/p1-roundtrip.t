#!/bin/sh
# Pass 1 reads its own output back as the same tree.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
set -- "$top_srcdir"/tests/translator/corpus/*.stp "$top_srcdir"/scripts/*.stp
plan $(( $# * 2 ))
for f; do
	p1 "$f" > "$TMP/a"
	grep -q '^# parse tree dump' "$TMP/a"; ok $? "$(basename "$f") parses"
	"$MT" -g -p1 - < "$TMP/a" 2>&1 | sed '/^# file /d' > "$TMP/b"
	if cmp -s "$TMP/a" "$TMP/b"; then ok 0 "$(basename "$f") round-trips"; else
		ok 1 "$(basename "$f") round-trips"; diff "$TMP/a" "$TMP/b" | sed 's/^/# /' | head -20; fi
done
done_testing
