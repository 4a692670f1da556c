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
lttng_take_turns() {
	exec 9>"${TMPDIR:-/tmp}/marktap-tests-lttng.lock"
	flock 9
}

lttng_sessiond() {
	SESSIOND_PID=
	lttng list > /dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ]; then _lt_pidfile=/var/run/lttng/lttng-sessiond.pid
	else _lt_pidfile=$HOME/.lttng/lttng-sessiond.pid; fi
	if lttng-sessiond --daemonize --no-kernel > "$TMP/sessiond.log" 2>&1 && lttng list > /dev/null 2>&1; then
		SESSIOND_PID=$(cat "$_lt_pidfile" 2> /dev/null)
		return 0
	fi
	"$1" "lttng-sessiond cannot start: $(head -1 "$TMP/sessiond.log")"
}
