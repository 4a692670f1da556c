#!/bin/sh
# Trust boundaries of libmarktap and marktap, crossed as another user
# (nobody) would cross them: the environment of a setuid program, the
# session socket of "marktap -c", the agent socket's name, a peer that
# stalls mid-frame.  doc/security.md says who may do what.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
MTR=$top_builddir/runtime/marktrace/marktrace
T=$top_builddir/tests/script/target
PEER="$top_srcdir/tests/script/peer.py"
[ -x "$MTBIN" ] && [ -x "$T" ] || skip_all "build first (make check builds tests/script/target)"
T=$(own_copy "$T") || bail_out "cannot copy $T"
[ "$(id -u)" = 0 ] || skip_all "needs root (to make a setuid program and act as nobody)"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
chmod 755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
P="process(\"$T\")"
plan 14

# 1. A setuid-root program linked with libmarktap ignores the caller's
#    MARKTAP_SESSION / MARKTAP_SCRIPT_LIB: the caller's plugin never loads.
cat > "$TMP/evil.c" <<'C'
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	FILE *f = fopen(EVIL_OUT, "w");
	if (f) { fprintf(f, "%d\n", (int)geteuid()); fclose(f); }
}
C
${CC:-cc} -shared -fPIC -DEVIL_OUT="\"$TMP/out/pwned\"" -o "$TMP/evil.so" "$TMP/evil.c"
mkdir "$TMP/out" && chmod 777 "$TMP/out"
cp "$T" "$TMP/suid" && chmod 4755 "$TMP/suid"
cp "$T" "$TMP/plain" && chmod 755 "$TMP/plain"
evil_run() { # PROGRAM: run it as nobody with a listening "session" of nobody's
	rm -f "$TMP/out/pwned" "$TMP/squat.out"
	nobody "$PY" "$PEER" squat "evil-$$-$1" 2 > "$TMP/squat.out" &
	sq=$!
	wait_for 10 grep -qs bound "$TMP/squat.out"
	nobody env MARKTAP_SESSION="evil-$$-$1" MARKTAP_SCRIPT_LIB="$TMP/evil.so" "$1" count 1 > /dev/null 2>&1
	wait $sq
}
evil_run "$TMP/plain"
is "$(cat "$TMP/out/pwned" 2>/dev/null)" "65534" \
	"control: an unprivileged program honours MARKTAP_SCRIPT_LIB (its own user's choice)"
evil_run "$TMP/suid"
ok $([ ! -e "$TMP/out/pwned" ]; echo $?) "a setuid-root program does not load the caller's plugin"
out=$(nobody env MARKTAP_SHM_FD=0 "$TMP/suid" count 1 2>&1)
is "$out" "done" "a setuid-root program ignores MARKTAP_SHM_FD (no attach to the caller's memory)"

# 2. Another user cannot join root's "marktap -c" session.
# (not under timeout: the test needs marktap's own pid; its commands end by themselves)
mt_bg() { "$MTBIN" "$@" > "$TMP/mt.out" 2> "$TMP/mt.err" & mtpid=$!; }
session_name() { # the listening abstract socket of marktap $1 (any user can list them)
	for i in $(seq 50); do
		n=$(awk -v p="@marktap-session-$1" '$8 == p || index($8, p "-") == 1 { print substr($8, 2); exit }' /proc/net/unix)
		[ -n "$n" ] && { echo "$n"; return; }
		sleep 0.1
	done
}
mt_bg -c "$T slow 100 20" -e "global c probe $P.mark(\"ev\") { c++ } probe end { println(c) }"
name=$(session_name $mtpid)
got=$(nobody "$PY" "$PEER" join "$name" 2>/dev/null)
wait $mtpid; rc=$?
is "$got" "0" "nobody receives nothing from root's session socket (no script, globals or descriptors)"
is "$(tail -1 "$TMP/mt.out"):$rc" "100:0" "and cannot stop it: all 100 hits counted"
like "$(cat "$TMP/mt.err")" "refused process [0-9]+ \\(uid 65534\\) on the session socket" \
	"the refusal is logged"

# 3. A peer that stalls mid-frame does not freeze marktap: it is dropped,
#    the session ends when the command does.
mt_bg -c "$T slow 30 20" -e "global c probe $P.mark(\"ev\") { c++ } probe end { println(c) }"
name=$(session_name $mtpid)
"$PY" "$PEER" stall "$name" 40 > /dev/null &
st=$!
wait $mtpid; rc=$?
kill -0 $st 2>/dev/null; held=$?
kill $st 2>/dev/null; wait $st 2>/dev/null
is "$(tail -1 "$TMP/mt.out"):$rc:$held" "30:0:0" "a stalled partial frame: marktap ends with the command, while the peer still stalls"
mt_bg -T 1 -c "$T slow 1000 20" -e "global c probe $P.mark(\"ev\") { c++ } probe end { println(c > 0) }"
name=$(session_name $mtpid)
"$PY" "$PEER" stall "$name" 40 > /dev/null &
st=$!
wait $mtpid; rc=$?
kill -0 $st 2>/dev/null; held=$?
kill $st 2>/dev/null; wait $st 2>/dev/null
is "$(tail -1 "$TMP/mt.out"):$rc:$held" "1:0:0" "-T still ends the session while a peer stalls"

# 4. A squatter bound to a process's agent name gets nothing from root's tools.
MARKTAP_AGENT=0 "$T" slow 200 20 > /dev/null &
tp=$!
rm -f "$TMP/squat.out"
nobody "$PY" "$PEER" squat "marktap-agent-$tp" 3 > "$TMP/squat.out" &
sq=$!
wait_for 10 grep -qs bound "$TMP/squat.out"
err=$(timeout 20 "$MTBIN" -x $tp -e "probe $P.mark(\"ev\") { exit() }" 2>&1); rc=$?
ok $([ $rc != 0 ] && [ $rc != 124 ]; echo $?) "marktap -x refuses an agent socket bound by another process (status $rc)"
like "$err" "belongs to process" "and says whose it is"
err=$(timeout 20 "$MTR" record -o "$TMP/tr" -p $tp 2>&1); rc=$?
ok $([ $rc != 0 ] && [ $rc != 124 ]; echo $?) "marktrace record -p refuses it too (status $rc)"
wait $sq
is "$(tail -1 "$TMP/squat.out")" "fds 0 bytes 0" "the squatter received no descriptor and no byte"
kill $tp 2>/dev/null; wait $tp 2>/dev/null

# 5. The traced side checks the session socket's owner too: a process
#    whose MARKTAP_SESSION names a socket of another user does not join.
rm -f "$TMP/squat.out"
nobody "$PY" "$PEER" squat "stale-$$" 2 > "$TMP/squat.out" &
sq=$!
wait_for 10 grep -qs bound "$TMP/squat.out"
out=$(MARKTAP_SESSION="stale-$$" "$T" count 2 2>&1)
wait $sq
is "$out" "done" "root's program runs untraced instead of joining nobody's socket"
like "$(cat "$TMP/squat.out")" "^fds 0 bytes 0" "and sends it nothing"
done_testing
