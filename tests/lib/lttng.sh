# lttng.sh - a session daemon for the tests that drive lttng (lttng-read.t,
# lttng-clock.t, lttng-context.t, relay-live.t).  Source it after tap.sh,
# with TMP set:
#
#   lttng_take_turns            one test at a time drives lttng: under make
#                               -j the one that started the daemon killed it
#                               under the other's session (a lock held to
#                               the test's end)
#   lttng_sessiond SKIP         the daemon running, else one started here
#                               (its pid in SESSIOND_PID, for the cleanup to
#                               stop); if none can start, SKIP (skip_all or
#                               the test's own) says why
#   lttng_sessiond_stop         the daemon started here stopped, and waited
#                               for (15 s at most): the next test's daemon
#                               must not start beside one still closing its
#                               sockets (both then hang, lttng destroy first)
lttng_take_turns() {
	exec 9>"${TMPDIR:-/tmp}/marktap-tests-lttng.lock"
	flock 9
}

lttng_sessiond() {
	SESSIOND_PID=
	timeout 20 lttng list > /dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ]; then _lt_pidfile=/var/run/lttng/lttng-sessiond.pid
	else _lt_pidfile=$HOME/.lttng/lttng-sessiond.pid; fi
	# a daemon still going away (another test's, stopped): its end first
	_lt_old=$(cat "$_lt_pidfile" 2> /dev/null)
	[ -n "$_lt_old" ] && wait_for 15 _lt_gone "$_lt_old"
	# (the daemon keeps no descriptor of ours: not the turn's lock)
	if lttng-sessiond --daemonize --no-kernel > "$TMP/sessiond.log" 2>&1 8>&- 9>&- &&
	   timeout 20 lttng list > /dev/null 2>&1; then
		SESSIOND_PID=$(cat "$_lt_pidfile" 2> /dev/null)
		return 0
	fi
	"$1" "lttng-sessiond cannot start: $(head -1 "$TMP/sessiond.log")"
}

# Is process $1 gone (or a zombie nobody reaps)?
_lt_gone() {
	[ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2> /dev/null
}

lttng_sessiond_stop() {
	[ -n "$SESSIOND_PID" ] || return 0
	kill "$SESSIOND_PID" 2> /dev/null
	wait_for 15 _lt_gone "$SESSIOND_PID" || kill -9 "$SESSIOND_PID" 2> /dev/null
	SESSIOND_PID=
}
