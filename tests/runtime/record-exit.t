#!/bin/sh
# marktrace record exits as its command did (its exit
# status, or 128+N when a signal N killed it, like a shell), its own
# failure first; metadata with an alignment of 0 or not a power of two is
# refused with an error naming the place.
. "$(dirname "$0")/../lib/record.sh"
plan 17

# 1. the command's end is marktrace's status (a command that runs a program
# linked with libmarktap: one that records nothing exits 1, record-patterns.t)
"$MT" record -q -o "$W/t" -- "$STRESS" 1 1
is "$?" "0" "a command that exits 0: status 0"
"$MT" record -q -o "$W/t" -- sh -c '"$0" 1 1; exit 3' "$STRESS"
is "$?" "3" "a command that exits 3: status 3"
"$MT" record -q -o "$W/t" -- sh -c '"$0" 1 1; kill -TERM $$' "$STRESS"
is "$?" "143" "a command killed by SIGTERM: status 128+15"
"$MT" record -q -o "$W/t" -- sh -c '"$0" 1 1; kill -KILL $$' "$STRESS"
is "$?" "137" "a command killed by SIGKILL: status 128+9"
"$MT" record -o "$W/t" -- sh -c '"$0" 1 1; kill -INT $$' "$STRESS" 2> "$W/int.err"
is "$?" "130" "a command killed by SIGINT: status 128+2"
like "$(cat "$W/int.err")" "was killed by signal 2" "... and the summary says so"
"$MT" record -q -o "$W/k" -- "$STRESS" 1 1000 kill
is "$?" "137" "a traced program that raises SIGKILL: status 137"
is "$("$MT" stats "$W/k" | awk '/^events:/ { print $2 }')" "1000" "... and its events are recorded"
"$MT" record -q -o "$W/link-here" -- true
ln -s "$W/link-here" "$W/l"
"$MT" record -q -o "$W/l" -- sh -c 'exit 3' 2> /dev/null
is "$?" "1" "marktrace's own failure (an -o it refuses) comes first: status 1"

# 2. alignments in the metadata
"$MT" record -q -o "$W/a" -- "$STRESS" 1 5
cp -r "$W/a" "$W/ok"
"$MT" view "$W/ok" > /dev/null
is "$?" "0" "the recorded trace reads (align = 8 throughout)"
bad_align() { # NAME PERL-SUBSTITUTION: a copy of the trace with its metadata changed
	rm -rf "$W/$1"
	cp -r "$W/a" "$W/$1"
	perl -0pi -e "$2" "$W/$1/metadata"
	"$MT" view "$W/$1" > /dev/null 2> "$W/$1.err"
}
bad_align zero 's/align = 8; signed = false; } := uint16_t/align = 0; signed = false; } := uint16_t/'
is "$?" "1" "align = 0: view fails"
like "$(cat "$W/zero.err")" "metadata:[0-9]+:[0-9]+: align = 0: an alignment is a power of two" "... with an error at its place"
bad_align twelve 's/size = 32; align = 8; signed = false; } := uint32_t/size = 32; align = 12; signed = false; } := uint32_t/'
is "$?" "1" "align = 12: view fails"
like "$(cat "$W/twelve.err")" "align = 12: an alignment is a power of two" "... saying why"
bad_align struct 's/(\t\};\n)(\tevent\.context)/\t} align(3);\n$2/'
is "$?" "1" "a structure's align(3): view fails"
like "$(cat "$W/struct.err")" "align\(3\): an alignment is a power of two" "... saying why"
"$MT" stats "$W/zero" > /dev/null 2>&1
is "$?" "1" "stats refuses it too"
done_testing
