#!/bin/sh
# sdt-names.t - SDT notes of a program another user built: their provider
# and probe names are the builder's bytes.  A probe whose names are not
# plain printable ASCII (here ESC sequences and a newline followed by Lua)
# is left out (runtime/tools/mt_sdt.c), so neither marktap -L nor the Lua
# generated for process("P").mark("*") gets them; its plain neighbour is
# listed and probed as before.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTAP=$top_builddir/translator/marktap
CC=${CC:-cc}
[ -x "$MTAP" ] || skip_all "marktap not built"
[ "$(id -u)" = 0 ] || skip_all "needs root (the program is built by nobody)"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
TMP=$(mktemp -d)
chmod 755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/n" && chown 65534:65534 "$TMP/n"
# two notes as sys/sdt.h lays them out; the second one's name is hostile
cat > "$TMP/n/p.c" <<'C'
#define NOTE(PROV, NAME) \
	"990: nop\n" \
	".pushsection .note.stapsdt,\"\",\"note\"\n.balign 4\n" \
	".4byte 992f-991f, 994f-993f, 3\n991: .asciz \"stapsdt\"\n992: .balign 4\n" \
	"993: .8byte 990b\n.8byte _.stapsdt.base\n.8byte 0\n" \
	".asciz \"" PROV "\"\n.asciz \"" NAME "\"\n.asciz \"\"\n994: .balign 4\n.popsection\n"
__asm__(".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n.hidden _.stapsdt.base\n_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n.popsection\n");
int main(void)
{
	__asm__ volatile(NOTE("prov", "good"));
	__asm__ volatile(NOTE("prov", "evil\\033[31m\\007\\nprint(\\\"INJECTED\\\")\\n--"));
	return 0;
}
C
nobody $CC -O0 -o "$TMP/n/p" "$TMP/n/p.c" 2> "$TMP/cc.log" || skip_all "cannot assemble SDT notes: $(head -1 "$TMP/cc.log")"
plan 4
ESC=$(printf '\033')

like "$(readelf -n "$TMP/n/p" 2>/dev/null | grep -c 'Name: ')" '^2$' "nobody built a program with two SDT notes"
"$MTAP" -L "process(\"$TMP/n/p\").mark(\"*\")" > "$TMP/list" 2>&1
is "$(cat "$TMP/list")" "process(\"$TMP/n/p\").provider(\"prov\").mark(\"good\")" "marktap -L lists the plain probe only"
ok $(grep -q "$ESC" "$TMP/list"; [ $? = 1 ]; echo $?) "no raw escape sequence on the terminal"
"$MTAP" -c "$TMP/n/p" -e "global n probe process(\"$TMP/n/p\").mark(\"*\") { n++ } probe end { printf(\"n=%d\\n\", n) }" \
	> "$TMP/out" 2>&1
is "$(cat "$TMP/out")" "n=1" "probing mark(\"*\"): the plain probe's hit, no Lua from the other's name"
done_testing
