#!/bin/sh
# The files of a trace: 0600 files in 0700 directories
# by default, whatever the umask, --mode to widen; links planted in an
# existing -o directory are replaced, never followed; -o naming a link is
# refused; a recording that is refused (-p of a process that cannot be
# recorded, a command that cannot run, --kernel without the module)
# leaves nothing behind.
. "$(dirname "$0")/../lib/record.sh"
chmod 755 "$W"
trap 'kill $spid 2>/dev/null; rm -rf "$W"' EXIT
plan 30

modes() { # DIR: "DIRMODE FILEMODES" of the trace folder, its files' modes (distinct)
	echo "$(stat -c %a "$1") $(stat -c %a "$1"/* | sort -u | tr '\n' ' ')" | sed 's/ *$//'
}

# 1. default permissions, under a permissive umask too
(umask 000; "$MT" record -q -o "$W/def/sub" -- "$STRESS" 1 10)
ok $? "record with umask 000"
is "$(modes "$W/def/sub")" "700 600" "trace folder 0700, stream files and metadata 0600"
is "$(stat -c %a "$W/def")" "700" "a parent marktrace created is 0700 too"
is "$("$MT" stats "$W/def/sub" | awk '/^events:/ { print $2 }')" "10" "the trace reads back"

# 2. --mode widens, exactly (the umask does not narrow it)
(umask 077; "$MT" record -q --mode 0644 -o "$W/wide" -- "$STRESS" 1 10)
ok $? "record --mode 0644 with umask 077"
is "$(modes "$W/wide")" "755 644" "--mode 0644: files 0644, folder 0755"
"$MT" record -q --mode 640 -o "$W/group" -- "$STRESS" 1 10
is "$(modes "$W/group")" "750 640" "--mode 640: files 0640, folder 0750"
for bad in 0777 0400 0466 abc 1644 ''; do
	"$MT" record -q --mode "$bad" -o "$W/bad" -- "$STRESS" 1 10 2> "$W/bad.err"
	st=$?
	ok $(( st != 2 )) "--mode '$bad' is a usage error"
done
like "$(cat "$W/bad.err")" "--mode '': expected an octal file mode" "... with a message that says what is expected"
ok $([ ! -e "$W/bad" ]; echo $?) "... and creates nothing"

# 3. links planted in an existing -o directory (as in a directory others
# can write) are replaced by the trace's files, their targets untouched
mkdir -m 1777 "$W/pub"
mkdir "$W/pub/t"
for f in channel0_0 channel0_1 metadata .metadata.tmp; do
	echo "precious $f" > "$W/victim-$f"
	ln -s "$W/victim-$f" "$W/pub/t/$f"
done
"$MT" record -q -o "$W/pub/t" -- "$STRESS" 1 10
ok $? "record into a folder holding planted links"
same=0
for f in channel0_0 channel0_1 metadata .metadata.tmp; do
	[ "$(cat "$W/victim-$f")" = "precious $f" ] || same=1
done
ok $same "no link target was written or truncated"
ok $([ ! -L "$W/pub/t/metadata" ] && [ ! -L "$W/pub/t/channel0_0" ]; echo $?) "metadata and streams are files of their own"
ok $([ ! -e "$W/pub/t/.metadata.tmp" ]; echo $?) "no .metadata.tmp is left"
is "$("$MT" stats "$W/pub/t" | awk '/^events:/ { print $2 }')" "10" "and they hold the trace"

# 4. -o naming a link is refused
mkdir "$W/elsewhere"
ln -s "$W/elsewhere" "$W/link"
"$MT" record -q -o "$W/link" -- "$STRESS" 1 10 2> "$W/link.err"
is "$?" "1" "-o naming a symbolic link fails"
like "$(cat "$W/link.err")" "is a symbolic link \(not followed" "... saying why"
is "$(ls -A "$W/elsewhere" | wc -l)" "0" "... and writes nothing where it points"

# 5. refused recordings leave nothing behind
"$MT" record -q -o "$W/r1/a/b" -p 999999999 2> "$W/r1.err"
is "$?" "1" "-p of no process fails"
ok $([ ! -e "$W/r1" ]; echo $?) "... and creates no folder"
sleep 30 & spid=$!
"$MT" record -q -o "$W/r2" -p "$spid" 2> "$W/r2.err"
like "$(cat "$W/r2.err")" "no marktap agent" "-p of a process without libmarktap fails"
ok $([ ! -e "$W/r2" ]; echo $?) "... and creates no folder"
kill $spid
"$MT" record -q -o "$W/r3" -- "$W/no-such-program" 2> "$W/r3.err"
like "$(cat "$W/r3.err")" "cannot run" "a command that cannot run fails"
ok $([ ! -e "$W/r3" ]; echo $?) "... and creates no folder"
if [ ! -e /dev/marktap ]; then
	"$MT" record -q --kernel -o "$W/r4" 2> /dev/null
	ok $([ ! -e "$W/r4" ]; echo $?) "--kernel without marktap.ko creates no folder"
else
	ok 0 "# SKIP marktap.ko is loaded here"
fi
done_testing
