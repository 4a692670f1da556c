#!/bin/sh
# marktap --trace on a terminal: the trace's strings (a string field, the
# process name execname() gives) are its maker's, and the handlers print
# them.  They reached the terminal with their ESC/CSI/OSC bytes raw (a
# colour, a title, a screen cleared), where marktrace view shows them as
# \xHH.  Now a terminal gets \xHH too, for the output and the error lines;
# a pipe or a file gets the bytes as printed.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
MTAP=$top_builddir/translator/marktap
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"
export MARKTAP_TAPSET_DIR
[ -x "$MTAP" ] || skip_all "marktap not built"
command -v python3 > /dev/null || skip_all "python3 needed for a pseudo-terminal"
python3 -c 'import pty' 2> /dev/null || skip_all "python3 has no pty module"
plan 8

ESC=$(printf '\033') BEL=$(printf '\007')
# A string with a colour, a title (OSC ... BEL), a C1 CSI (U+009B) and
# UTF-8; a process name that clears the screen.
printf 'trace .\nmarker 0 s v %%s\nstream 0\npacket\nev 1000 s 5 5 p\033[2J "a\033[31mred\033]0;t\007 \302\2332J \303\251"\n' |
	gen "$TMP/t"
ok $? "a trace whose string and process name hold control bytes"
cat > "$TMP/s.stp" <<'STP'
probe trace.event("s") { printf("%s|%s\n", execname(), $v); error($v) }
STP

on_tty "$MTAP" --trace "$TMP/t" "$TMP/s.stp" > "$TMP/tty"
ok $(! grep -q "[$ESC$BEL]" "$TMP/tty"; echo $?) "on a terminal: no raw ESC or BEL"
ok $(! LC_ALL=C grep -q "$(printf '\302\233')" "$TMP/tty"; echo $?) "... nor a C1 CSI"
like "$(grep '|' "$TMP/tty")" '^p\\x1b\[2J\|a\\x1b\[31mred\\x1b\]0;t\\x07 \\xc2\\x9b2J é$' \
	"the output: the control bytes as \\\\xHH, UTF-8 kept"
like "$(grep 'ERROR' "$TMP/tty")" 'ERROR: a\\x1b\[31mred\\x1b\]0;t\\x07 \\xc2\\x9b2J é' \
	"an error line quoting the string: the same"
"$MT" view "$TMP/t" > "$TMP/view"
like "$(cat "$TMP/view")" 'v="a\\x1b\[31mred\\x1b\]0;t\\x07 \\xc2\\x9b2J é"' \
	"as marktrace view shows the string"

# a pipe or a file: the bytes as the handlers printed them
"$MTAP" --trace "$TMP/t" "$TMP/s.stp" > "$TMP/file" 2> "$TMP/err"
is "$(grep '|' "$TMP/file")" "p$ESC[2J|a$ESC[31mred$ESC]0;t$BEL $(printf '\302\233')2J é" \
	"to a file: the bytes as printed"
like "$(cat "$TMP/err")" "ERROR: a$ESC\\[31m" "stderr to a file: the bytes too"
done_testing
