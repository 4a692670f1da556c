#!/bin/sh
# --filter: name globs, every comparison operator on every kind of field,
# context fields, and/or/not and parentheses; malformed filters.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
gen "$TMP/f" < "$VIEWDIR/filter.trace"

# ids EXPR: the n of the events that pass, in order
ids() { "$MT" view --no-delta --filter "$1" "$TMP/f" | sed -n 's/.* n=\([0-9]*\).*/\1/p' | tr '\n' ' ' | sed 's/ $//'; }
# check EXPR EXPECTED
check() { is "$(ids "$1")" "$2" "filter '$1'"; }
# bad EXPR MESSAGE-REGEX
bad() {
	"$MT" view --filter "$1" "$TMP/f" > "$TMP/out" 2> "$TMP/err"
	_rc=$?
	is "$_rc" 2 "bad filter '$1': exit 2"
	like "$(cat "$TMP/err")" "$2" "bad filter '$1': message"
	is "$(cat "$TMP/out")" "" "bad filter '$1': no output"
}
plan 80

check 'fs_open' '1 5 3'
check 'fs_*' '1 5 2 6 3'
check '*_wake*' '7 4'
check 'fs_[o]pen || noargs' '1 5 3 8'
check 'nosuch' ''
check 'fd == 3' '1 2'
check 'fd = 3' '1 2'
check 'fd != 3' '5 6 3'
check 'fd < 3' '3'
check 'fd <= 3' '1 2 3'
check 'fd > 3' '5 6'
check 'fd >= 3' '1 5 2 6'
check 'fd == 4294967295' ''
check 'fd == -1' '3'
check 'count > 100' '2'
check 'count == 0x200' '2'
check 'prio < 0' '4'
check 'prio == 120' '7'
check 'load < 0' '7'
check 'load == 0.25' '4'
check 'load >= -2.5' '7 4'
check 'fd > 2.5' '1 5 2 6'
check "c == 'x'" '4'
check "c > 'x'" '7'
check 'ip == 0xffffffff81000010' '4'
check 'ip < 0x100' '7'
check 'filename == "/etc/*"' '1 5'
check 'filename == "/etc/passwd"' '1'
check 'filename != "/etc/*"' '3'
check 'filename < "/etc/p"' '5'
check 'filename >= "/n"' '3'
check 'filename == /etc/hosts' '5'
check 'filename == /etc/h*' '5'
check 'pid == 200' '5 6 7 8'
check 'pid != 200 and tid == 102' '3 4'
check 'tid >= 201' '8'
check 'cpu == 1' '5 6 7 8'
check 'cpu == 0 && fs_*' '1 2 3'
check 'procname == "sl*"' '8'
check 'procname == demo' '1 2 3 4'
check 'name == "fs_r*"' '2 6'
check '_pid == 100' '7'
check 'not fs_*' '7 4 8'
check '!fs_* && !noargs' '7 4'
check 'fs_open or fd > 3 and cpu == 0' '1 5 3'
check '(fs_open or fd > 3) and cpu == 0' '1 3'
check 'not (fd > 3)' '1 2 3 7 4 8'
check 'nosuchfield == 1 or noargs' '8'
check 'filename == 3' ''
check 'fd == "3"' ''
check '((( fs_read )))' '2 6'

bad 'fd >' 'filter:1:5: expected a value.*saw end of filter'
bad '(fs_open' "filter:1:9: expected '\\)', saw end of filter"
bad 'fs_open and' "filter:1:12: expected an event name.*saw end of filter"
bad 'fd > 2 foo' "filter:1:8: expected 'and', 'or'.*saw 'foo'"
bad 'fs_* == 1' "filter:1:6: expected a field name.*saw the pattern 'fs_\\*'"
bad 'filename == "abc' "filter:1:13: expected a closing"
bad 'fd # 2' "filter:1:4: expected .*saw '#'"
bad '' "filter:1:1: expected .*saw end of filter"
bad 'fd > 2)' "filter:1:7: .*saw '\\)'"
"$MT" view --filter "$(yes 'fs_open or' | head -5000 | tr '\n' ' ')x" "$TMP/f" > "$TMP/out" 2> "$TMP/err"
is "$?" 2 "a filter of 5000 terms: exit 2"
like "$(cat "$TMP/err")" "filter:1:[0-9]+: expected at most 4096 terms, saw 'fs_open'" "a filter of 5000 terms: message"
done_testing
