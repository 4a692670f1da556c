#!/bin/sh
# system(CMD) (SystemTap tapset reference, logging): the command runs in
# the background through /bin/sh, as the user running marktap, with its
# output; a failing command is no error of the script.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 4
out=$("$MT" -e 'probe begin { println("before"); system("echo from the shell") }
	probe timer.ms(500) { println("after"); exit() }' 2>&1)
is "$out" "before
from the shell
after" "system() in begin: the command's output among the script's"
"$MT" -e "probe begin { system(\"id -u > $TMP/uid\") } probe timer.ms(500) { exit() }" > /dev/null 2>&1
is "$(cat "$TMP/uid" 2>/dev/null)" "$(id -u)" "as the user running marktap"
"$MT" -e 'probe begin { system("exit 3") } probe timer.ms(300) { exit() }' > /dev/null 2>&1
is "$?" 0 "a command that fails is no error of the script"
# a quoted argument reaches the shell as it is: no second interpretation
"$MT" -e "probe begin { system(\"printf '%s' 'a b;c' > $TMP/q\") } probe timer.ms(500) { exit() }" > /dev/null 2>&1
is "$(cat "$TMP/q" 2>/dev/null)" "a b;c" "the command string goes to /bin/sh -c unchanged"
