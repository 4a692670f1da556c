#!/bin/sh
# run-test.sh TEST [ARGS...] - the harness's wrapper around every test
# (LOG_COMPILER in tests/local.mk): TEST runs under a deadline, 900 s for
# those that boot qemu (tests/kernel/*, *-guest.t), 300 s for the others;
# MARKTAP_TEST_TIMEOUT sets another (seconds; 0: none).  The deadline is
# far above a test's time on a loaded machine: it is there so that a hung
# test fails, saying so, instead of hanging the run.  At the deadline
# timeout(1) ends the test's whole process group (what it started in the
# background too, which would otherwise keep the harness's pipe open),
# with SIGKILL 30 s after SIGTERM, and a "Bail out!" tells the TAP driver.
case $1 in
*tests/kernel/* | *-guest.t) limit=900 ;;
*) limit=300 ;;
esac
limit=${MARKTAP_TEST_TIMEOUT:-$limit}
[ "$limit" = 0 ] && exec "$@"
start=$(date +%s)
exec 3<&0   # (an asynchronous command's stdin is /dev/null unless said)
timeout -k 30 "$limit" "$@" <&3 3<&- &
pid=$!
# make interrupted (^C): timeout passes the signal on to the test's group,
# which is not the terminal's foreground group
trap 'kill -TERM $pid 2>/dev/null' INT TERM HUP
wait $pid
rc=$?
while kill -0 $pid 2>/dev/null; do wait $pid; rc=$?; done
if [ $(( $(date +%s) - start )) -ge "$limit" ] && { [ $rc = 124 ] || [ $rc = 137 ]; }; then
	echo "Bail out! $1 did not end within $limit s: killed (MARKTAP_TEST_TIMEOUT sets the limit)"
fi
exit $rc
