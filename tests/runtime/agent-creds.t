#!/bin/sh
# agent-creds.t - the agent of a process that root started and that then
# dropped to another user for good (a daemon's pattern, tests/runtime/
# dropper.c) keeps that user out, as the kernel does: such a process is
# not dumpable (nobody cannot ptrace it nor open its /proc/PID/fd), yet it
# holds what root opened.  Before, its agent took nobody's "script
# PLUGIN" request and dlopen'ed nobody's library there, which read a
# root-only file through the process's descriptor; marktap -x ran
# nobody's handlers in it.  Root, and a process that never changed its
# credentials (the control), still attach; marktrace record -p is refused
# as well.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
B=$top_builddir
MTAP=$B/translator/marktap
D=$B/tests/runtime/dropper
PY=/usr/bin/python3
[ -x "$MTAP" ] && [ -x "$D" ] || skip_all "build first (make check builds tests/runtime/dropper)"
[ "$(id -u)" = 0 ] || skip_all "needs root (to start a process that drops to nobody)"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv (util-linux) not installed"
[ -x "$PY" ] || skip_all "no /usr/bin/python3"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
TMP=$(mktemp -d)
chmod 755 "$TMP"
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$TMP"' EXIT
plan 8

echo "root's secret" > "$TMP/secret" && chmod 600 "$TMP/secret"
mkdir "$TMP/out" && chmod 777 "$TMP/out"
cat > "$TMP/evil.c" <<C
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	char buf[64] = "";
	FILE *f = fopen("$TMP/out/loaded", "w");
	for (int fd = 3; fd < 64; fd++)
		if (pread(fd, buf, sizeof(buf) - 1, 0) > 0 && buf[0] == 'r')
			break;
	if (f) { fprintf(f, "%s", buf); fclose(f); }
}
C
${CC:-cc} -shared -fPIC -o "$TMP/evil.so" "$TMP/evil.c" || skip_all "cannot build a shared library"
chmod 755 "$TMP/evil.so"

# start MODE: dropper in the background; its pid in $pid once it is ready
start() {
	rm -f "$TMP/ready"
	"$D" "$TMP/secret" 30 $1 > "$TMP/ready" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	for i in $(seq 100); do grep -q ready "$TMP/ready" 2>/dev/null && break; sleep 0.05; done
}
# agent PID REQUEST: nobody's raw request to the agent; what came back
agent() {
	nobody "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(3)
try:
    s.connect("\0marktap-agent-" + sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
    print(len(s.recv(300)))
except OSError as e:
    print(type(e).__name__)' "$1" "$2"
}
count() { # PID USER...: hits of tick in 1 s through marktap -x
	pid_=$1; shift
	"$@" timeout 20 "$MTAP" -x "$pid_" -e "global c probe process(\"$D\").mark(\"tick\") { c++ }
		probe timer.s(1) { printf(\"hits %d\\n\", c); exit() }" 2>&1 | tail -1
}

# 1. the control: started as nobody, never changed credentials
nobody "$D" "$TMP/out/none" 30 keep > "$TMP/ctl" 2>&1 &
PIDS="$PIDS $!"
for i in $(seq 100); do grep -q ready "$TMP/ctl" 2>/dev/null && break; sleep 0.05; done
ctl=$(pgrep -u 65534 -f "^$D $TMP/out/none")
PIDS="$PIDS $ctl"
like "$(count $ctl nobody)" "^hits [1-9]" "control: nobody scripts nobody's own process (marktap -x)"

# 2. root started it, it dropped to nobody
start
like "$(grep -E '^Uid' /proc/$pid/status)" "65534.65534.65534" "the process now runs as nobody (all its uids)"
out=$(count $pid nobody)
ok $(expr "$out" : 'hits [1-9]' > /dev/null; [ $? = 1 ]; echo $?) "nobody's marktap -x runs no handler in it"
diag "nobody's marktap -x: $out"
out=$(nobody timeout 20 "$MTAP" -x "$pid" -e 'probe timer.s(1) { exit() }' 2>&1)
like "$out" "permission denied: not the process's user" "and says the agent's reason (not a broken frame)"
agent $pid "script $TMP/evil.so" > /dev/null
ok $([ ! -e "$TMP/out/loaded" ]; echo $?) "nobody's 'script PLUGIN' request loads nothing there"
[ -e "$TMP/out/loaded" ] && diag "the plugin read: $(cat "$TMP/out/loaded")"
out=$(nobody "$B/runtime/marktrace/marktrace" record -p $pid -o "$TMP/out/rec" 2>&1)
like "$?:$out" "^1:.*permission denied" "nobody's marktrace record -p: refused"
like "$(count $pid)" "^hits [1-9]" "root's marktap -x still does"
ok $([ ! -e "$TMP/out/loaded" ]; echo $?) "and nothing of nobody's was loaded meanwhile"
done_testing
