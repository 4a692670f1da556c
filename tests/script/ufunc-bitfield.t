#!/bin/sh
# Bit fields as target variables ($s->b where b is one; translator/
# dwarf.c): signed and unsigned, 1 to 61 bits, across bytes and words, in
# a packed record; placed by DW_AT_data_bit_offset (DWARF 5) or by the
# old DW_AT_bit_offset from a storage unit's high end (DWARF 4, and
# DWARF 2 with its member offsets as expressions); at -O0 and -O2.  The
# values are the ones the program prints; a write is a clear error.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
SRC=$top_srcdir/tests/script/ufunc-bitfield.c
[ -x "$MTBIN" ] || skip_all "build first"
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mt() { timeout 120 "$MTBIN" "$@"; }
plan 14

READ='probe process("BIN").function("use") {
	printf("a=%d b=%d c=%d d=%d e=%d f=%d g=%d h=%d tag=%d y=%d z=%d\n", $s->a, $s->b, $s->c, $s->d,
	       $s->e, $s->f, $s->g, $s->h, $s->tag, $p->y, $p->z) }'
for dw in "-gdwarf-5" "-gdwarf-4" "-gdwarf-2 -gstrict-dwarf"; do
	for O in -O0 -O2; do
		# DWARF 2 at -O2: gcc leaves the pointers without a location at the entry
		[ "$dw" = "-gdwarf-2 -gstrict-dwarf" ] && [ $O = -O2 ] && continue
		B=$TMP/bf$O${dw%% *}
		"$CC" $O $dw -o "$B" "$SRC" || { ok 1 "build $dw $O"; continue; }
		form=$(readelf --debug-dump=info "$B" | grep -c 'DW_AT_data_bit_offset')
		want=$("$B" 7)
		out=$(mt -c "$B 7" -e "$(printf "%s" "$READ" | sed "s|BIN|$B|")" 2>&1)
		is "$out" "$want
$want" "$dw $O: every field as the program reads it ($([ "$form" -gt 0 ] && echo DW_AT_data_bit_offset || echo DW_AT_bit_offset))"
		out=$(mt -c "$B -16" -e "probe process(\"$B\").function(\"use\") { println(\$s->b, \" \", \$s->b + 1) }" 2>&1 | head -1)
		is "$out" "-16 -15" "$dw $O: a signed field at its minimum, sign-extended"
	done
done
B=$TMP/bf-O0-gdwarf-5
out=$(mt -g -p2 -e "probe process(\"$B\").function(\"use\") { \$s->b = 3 }" 2>&1)
like "$out" "semantic error: cannot write to '\\\$s->b': a bit field" "guru mode: a write to a bit field is refused clearly"
out=$(mt -c "$B" -e "probe process(\"$B\").function(\"use\") { println(\$s->h ? \"set\" : \"clear\") }" 2>&1 | head -1)
is "$out" "set" "a 1-bit _Bool"
out=$(mt -p2 -e "probe process(\"$B\").function(\"use\") { println(\$s->nosuch) }" 2>&1)
like "$out" "unable to find member 'nosuch' for struct bf \(alternatives: a, b, c, d, e, f, g, h, tag\)" \
	"an unknown member: stap's error, the bit fields among the alternatives"
out=$(mt -c "$B tail" -e "probe process(\"$B\").function(\"use_tail\") { printf(\"x=%d y=%d\\n\", \$t->x, \$t->y) }" 2>&1)
is "$out" "x=987654 y=-5
x=987654 y=-5" "a packed record ending a page before an unmapped one: its fields read without a fault"
