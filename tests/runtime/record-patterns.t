#!/bin/sh
# marktrace record -e: exclusions apply whatever their order, and "!X"
# alone is "all but X" (as LTTng's event rules with exclusions); what
# takes nothing is said: a pattern that matches no marker (an exclusion
# too), one whose markers the exclusions all take, a view that shows
# nothing (no event, or a filter that takes none), a command
# that never joins the recording (not linked with libmarktap), and
# marktrace list of a file without markers.  A recording that could take
# nothing at all exits 1.
. "$(dirname "$0")/../lib/record.sh"
DEMO=$B/runtime/demo/marktap-demo
[ -x "$DEMO" ] || skip_all "no $DEMO (make builds it)"
plan 33

# markers DIR: the markers a trace holds events of, sorted, on one line
markers() {
	"$MT" stats "$1" | awk '/^events per marker:/ { on = 1; next } /^$/ { on = 0 } on { print $2 }' |
		sort | tr '\n' ' ' | sed 's/ $//'
}
# rec NAME ARGS...: record into $W/NAME; status in rc, stderr in $W/NAME.err
rec() {
	_n=$1
	shift
	"$MT" record -o "$W/$_n" "$@" > /dev/null 2> "$W/$_n.err"
	rc=$?
}

ALL="demo_end demo_round demo_start fs_close fs_open fs_read"

rec a -e 'fs_*' -e '!fs_read' -- "$DEMO" 1
is "$rc:$(markers "$W/a")" "0:fs_close fs_open" "-e 'fs_*' -e '!fs_read': fs_read excluded"
rec b -e '!fs_read' -e 'fs_*' -- "$DEMO" 1
is "$rc:$(markers "$W/b")" "0:fs_close fs_open" "the exclusion first: the same"
rec c -e '!fs_read' -- "$DEMO" 1
is "$rc:$(markers "$W/c")" "0:demo_end demo_round demo_start fs_close fs_open" \
	"-e '!fs_read' alone: every marker but fs_read"
rec d -e '!fs_read' -e '!demo_*' -- "$DEMO" 1
is "$rc:$(markers "$W/d")" "0:fs_close fs_open" "two exclusions alone: every marker but theirs"
rec e -e 'demo_start' -e 'fs_*' -e '!fs_r*' -e '!fs_close' -- "$DEMO" 1
is "$rc:$(markers "$W/e")" "0:demo_start fs_open" "includes and excludes mixed"
rec f -- "$DEMO" 1
is "$rc:$(markers "$W/f")" "0:$ALL" "no -e: every marker"
like "$(cat "$W/f.err")" "^marktrace: [0-9]+ events recorded, 0 lost, in $W/f\$" "... and nothing said but the summary"

# a pattern that takes nothing: said, by name
rec g -e 'req_dne' -e 'fs_open' -- "$DEMO" 1
is "$rc:$(markers "$W/g")" "0:fs_open" "a pattern that matches nothing beside one that does: exit 0"
like "$(cat "$W/g.err")" "marktrace: record: warning: -e 'req_dne' matched no marker of '$DEMO'" \
	"... a warning names the pattern and the program"
is "$(grep -c fs_open "$W/g.err")" 0 "... and not the pattern that matched"
rec h -e 'req_dne' -- "$DEMO" 1
is "$rc" 1 "the only pattern matches nothing: exit 1"
like "$(cat "$W/h.err")" "-e 'req_dne' matched no marker" "... the pattern named"
like "$(cat "$W/h.err")" "nothing recorded: .* the -e patterns take none of its markers" \
	"... and why nothing was recorded"
"$MT" view "$W/h" > "$W/hv.out" 2> "$W/hv.err"
is "$?:$(cat "$W/hv.out"):$(cat "$W/hv.err")" "0::marktrace: view: warning: the trace holds no event" \
	"view of the trace that took nothing: said"
n=$("$MT" stats "$W/a" | sed -n 's/^events: *//p')
"$MT" view --filter 'pid == 1' "$W/a" > "$W/av.out" 2> "$W/av.err"
is "$?:$(cat "$W/av.out"):$(cat "$W/av.err")" "0::marktrace: view: warning: --filter took none of the trace's $n events" \
	"view --filter that takes no event: said, with how many there were"
rec i -e 'fs_*' -e '!fs_*' -- "$DEMO" 1
is "$rc" 1 "a pattern all of whose markers are excluded: exit 1"
like "$(cat "$W/i.err")" "-e 'fs_\\*' took no marker of '$DEMO': the exclusions \\(-e '!...'\\) exclude every marker it matches" \
	"... said, and why"
is "$(grep -c "'!fs_\\*'" "$W/i.err")" 0 "... the exclusion, which matched, is not"

# an exclusion that excludes nothing: misspelt, it lets through what it was meant to stop
rec n -e 'fs_*' -e '!fs_raed' -- "$DEMO" 1
is "$rc:$(markers "$W/n")" "0:fs_close fs_open fs_read" "a misspelt exclusion: nothing excluded, exit 0"
like "$(cat "$W/n.err")" "marktrace: record: warning: -e '!fs_raed' excluded nothing: no marker of '$DEMO' matches 'fs_raed'" \
	"... said, naming it"
is "$(grep -c warning "$W/n.err")" 1 "... once, and nothing of 'fs_*'"

# a program that never joined: not linked with libmarktap
rec j -- /bin/sleep 0
is "$rc" 1 "/bin/sleep (no libmarktap): exit 1"
like "$(cat "$W/j.err")" "nothing recorded: no process joined the recording: '/bin/sleep' .*not linked with libmarktap" \
	"... the program named, and why"
rec k -- sh -c "/bin/true; exit 3"
is "$rc" 1 "a command failing without joining: exit 1 (nothing could be recorded)"
rec l -- sh -c "'$DEMO' 1"
is "$rc:$(markers "$W/l")" "0:$ALL" "a shell that runs the program: its markers, exit 0"
is "$(grep -c warning "$W/l.err")" 0 "... and no warning (the program it ran joined)"
rec m -e 'fs_open' -- sh -c "'$DEMO' 1; exit 5"
is "$rc:$(markers "$W/m")" "5:fs_open" "the command's status when something was recorded"

# marktrace list
"$MT" list /bin/ls > "$W/ls.out" 2> "$W/ls.err"
is "$?:$(cat "$W/ls.out")" "0:" "list of a program without markers: exit 0, no line"
like "$(cat "$W/ls.err")" "^marktrace: list: warning: /bin/ls has no markers" "... a warning names it"
SDT=$B/tests/script/sdt-target
if [ -x "$SDT" ]; then
	"$MT" list "$SDT" > "$W/sdt.out" 2> "$W/sdt.err"
	like "$?:$(cat "$W/sdt.out"):$(cat "$W/sdt.err")" \
		"^0::marktrace: list: warning: $SDT has no markers, but 6 <sys/sdt.h> probes \\(app:tick...\\): marktrace records markers only; marktap probes them as process\\(\"$SDT\"\\).provider\\(\"app\"\\).mark\\(\"tick\"\\)" \
		"list of a program with <sys/sdt.h> probes but no markers: said, and how to probe them"
else
	skip 1 "no $SDT (make check builds it)"
fi
"$MT" list "$DEMO" > "$W/demo.out" 2> "$W/demo.err"
is "$?:$(grep -c . < "$W/demo.out"):$(cat "$W/demo.err")" "0:6:" "list of the demo: its 6 markers, no warning"
"$MT" list "$DEMO" /bin/ls > "$W/two.out" 2> "$W/two.err"
is "$(grep -c . < "$W/two.out"):$(grep -c 'ls has no markers' "$W/two.err")" "6:1" \
	"list of two files: the one without markers is named"
"$MT" list "$DEMO" -p 1 > /dev/null 2> "$W/both.err"
like "$?:$(cat "$W/both.err")" "^2:marktrace: list: give binaries, -p PID or --kernel, one of them" \
	"binaries and -p together: a usage error"
done_testing
