#!/bin/sh
# marktrace record takes a higher priority than the program it
# records (niceness -10 by default, --nice N), where it may, so that it
# copies the buffers before they fill; the command runs at the niceness
# marktrace was started with.  Without the permission: the default stays
# silent, an explicit --nice says why it cannot and records anyway.
. "$(dirname "$0")/../lib/record.sh"
plan 12

# the command prints its own niceness and its parent's (marktrace's):
# field 19 of /proc/PID/stat; then it runs a program linked with libmarktap
# (a recording that takes nothing is an error, record-patterns.t)
NICES='echo $(cut -d" " -f19 /proc/$$/stat) $(cut -d" " -f19 /proc/$PPID/stat); '"'$STRESS'"' 1 1'
mine=$(cut -d" " -f19 /proc/$$/stat)

if [ "$(id -u)" = 0 ]; then
	is "$("$MT" record -q -o "$W/t" -- sh -c "$NICES")" "$mine -10" \
		"root, by default: marktrace at -10, the command at the caller's niceness"
	is "$(nice -n 5 "$MT" record -q -o "$W/t" -- sh -c "$NICES")" "$((mine + 5)) -10" \
		"started at +5: the command at +5, marktrace at -10"
	# (relative to the caller's niceness: a suite run under nice starts higher)
	hi=$((mine - 15 < -20 ? -20 : mine - 15))
	is "$(nice -n $((hi - mine)) "$MT" record -q -o "$W/t" -- sh -c "$NICES")" "$hi $((hi < -10 ? hi : -10))" \
		"started at $hi: marktrace at the higher priority of that and -10"
	is "$("$MT" record --nice -3 -q -o "$W/t" -- sh -c "$NICES")" "$mine -3" "--nice -3"
	is "$("$MT" record --nice 4 -q -o "$W/t" -- sh -c "$NICES")" "$mine 4" \
		"--nice 4: as asked, even a lower priority"
	is "$("$MT" record --nice 0 -q -o "$W/t" -- sh -c "$NICES")" "$mine 0" "--nice 0: no change"
	# without the permission: a user with no RLIMIT_NICE to spend
	chmod 777 "$W"
	if command -v setpriv > /dev/null 2>&1; then
		as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"; }
		out=$(as_nobody "$MT" record -q -o "$W/n1" -- sh -c "$NICES" 2> "$W/n1.err")
		is "$out $(cat "$W/n1.err")" "$mine $mine " \
			"a user without the permission: the default changes nothing, says nothing"
		out=$(as_nobody "$MT" record --nice -3 -q -o "$W/n2" -- "$STRESS" 1 100 2> "$W/n2.err")
		is "$?" "0" "--nice -3 without the permission: recorded anyway"
		like "$(cat "$W/n2.err")" "--nice -3: Permission denied; recording at niceness $mine" \
			"... and says why marktrace could not take it"
		is "$("$MT" stats "$W/n2" | awk '/^events:/ { print $2 }')" "100" "... every event recorded"
	else
		for i in 1 2 3 4; do ok 0 "# SKIP no setpriv"; done
	fi
else
	for i in 1 2 3 4 5 6 7 8 9 10; do ok 0 "# SKIP not root"; done
fi

"$MT" record --nice 20 -q -o "$W/t" -- true 2> "$W/bad.err"
is "$? $(cat "$W/bad.err")" "2 marktrace: record: --nice '20': expected a niceness from -20 to 19" \
	"--nice out of range: an error, status 2"
"$MT" record --nice x -q -o "$W/t" -- true 2> /dev/null
is "$?" "2" "--nice x: status 2"
done_testing
