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
#
# The agent admits exactly whom the kernel lets ptrace the process (the
# client proves it by reading a fresh challenge out of the process's
# memory with process_vm_readv, lib/mt_agent.h): before, it compared
# effective uids only, and nobody ran marktap -g -x and its own plugin in
# a daemon running as nobody with group shadow, which read /etc/shadow
# through it.  Here: a process of nobody with another group, and one of
# nobody that made itself not dumpable, refuse nobody and admit root; a
# wrong proof is refused; a client that says nothing does not hold the
# agent.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
B=$top_builddir
MTAP=$B/translator/marktap
D=$B/tests/runtime/dropper
[ -x "$MTAP" ] && [ -x "$D" ] || skip_all "build first (make check builds tests/runtime/dropper)"
as_nobody_setup
plan 20

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
	wait_for 30 grep -qs ready "$TMP/ready"
}
# agent PID REQUEST [WHO]: a client of the agent (nobody's unless WHO is
# given) that answers the challenge as best it can (process_vm_readv, else
# a wrong proof; an agent without challenge gets the request at once),
# then sends REQUEST; prints the agent's verdict or what came back
agent() {
	${3:-nobody} "$PY" -c '
import ctypes, socket, sys
pid, req = int(sys.argv[1]), sys.argv[2]
def line(s):
    got = b""
    while not got.endswith(b"\n"):
        d = s.recv(1)
        if not d:
            break
        got += d
    return got
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
s = socket.socket(socket.AF_UNIX)
s.settimeout(3)
try:
    s.connect("\0marktap-agent-%d" % pid)
    s.settimeout(1)
    try:
        first = line(s)
    except socket.timeout:
        first = b""
    s.settimeout(3)
    verdict = b""
    if first.startswith(b"challenge"):
        addr, n = int(first.split()[1], 16), int(first.split()[2])
        buf = ctypes.create_string_buffer(n)
        here, there = iovec(ctypes.cast(buf, ctypes.c_void_p), n), iovec(addr, n)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong,
                                          ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
        got = libc.process_vm_readv(pid, ctypes.byref(here), 1, ctypes.byref(there), 1, 0)
        proof = buf.raw.hex() if got == n else "00" * n
        s.sendall(b"proof " + proof.encode() + b"\n")
        verdict = line(s)
        if not verdict.startswith(b"welcome"):
            print(verdict.decode().strip())
            sys.exit(0)
    s.sendall(req.encode() + b"\n")
    print(verdict.decode().strip() or len(s.recv(300)))
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
wait_for 30 grep -qs ready "$TMP/ctl"
ctl=$(pgrep -u 65534 -f "^$D $TMP/out/none")
PIDS="$PIDS $ctl"
like "$(count $ctl nobody)" "^hits [1-9]" "control: nobody scripts nobody's own process (marktap -x)"

# 2. root started it, it dropped to nobody
start
like "$(grep -E '^Uid' /proc/$pid/status)" "65534.65534.65534" "the process now runs as nobody (all its uids)"
out=$(count $pid nobody)
ok $(expr "$out" : 'hits [1-9]' > /dev/null; [ $? = 1 ]; echo $?) "nobody's marktap -x runs no handler in it"
diag "nobody's marktap -x: $out"
out=$(nobody timeout 20 "$MTAP" -x "$pid" -e "global c probe process(\"$D\").mark(\"tick\") { c++ } probe timer.s(1) { exit() }" 2>&1)
like "$out" "permission denied" "and says why (not a broken frame)"
agent $pid "script $TMP/evil.so" > /dev/null
ok $([ ! -e "$TMP/out/loaded" ]; echo $?) "nobody's 'script PLUGIN' request loads nothing there"
[ -e "$TMP/out/loaded" ] && diag "the plugin read: $(cat "$TMP/out/loaded")"
out=$(nobody "$B/runtime/marktrace/marktrace" record -p $pid -o "$TMP/out/rec" 2>&1)
like "$?:$out" "^1:.*permission denied" "nobody's marktrace record -p: refused"
like "$(count $pid)" "^hits [1-9]" "root's marktap -x still does"
ok $([ ! -e "$TMP/out/loaded" ]; echo $?) "and nothing of nobody's was loaded meanwhile"
# 3. a daemon of nobody running with another group (42, shadow's on
#    Debian) and a file only that group reads: the kernel refuses nobody
#    (of group nobody), so does the agent
echo "root's shadow" > "$TMP/shadow" && chgrp 42 "$TMP/shadow" && chmod 640 "$TMP/shadow"
rm -f "$TMP/out/loaded"
setpriv --reuid=65534 --regid=42 --clear-groups "$D" "$TMP/shadow" 30 keep > "$TMP/grp" 2>&1 &
gp=$!
PIDS="$PIDS $gp"
wait_for 30 grep -qs ready "$TMP/grp"
like "$(grep -E '^(Uid|Gid)' /proc/$gp/status | tr -s '\t ' ' ' | tr '\n' ' ')" \
	"Uid: 65534 65534 65534 65534 Gid: 42 42 42 42" "the daemon runs as nobody with group 42 (all its ids)"
nobody cat /proc/$gp/environ > /dev/null 2>&1
ok $([ $? != 0 ]; echo $?) "the kernel refuses nobody its /proc/PID/environ (the control)"
agent $gp "script $TMP/evil.so" > /dev/null
ok $([ ! -e "$TMP/out/loaded" ]; echo $?) "nobody's agent client cannot load its plugin there (read: $(cat "$TMP/out/loaded" 2>/dev/null))"
out=$(count $gp nobody)
ok $(expr "$out" : 'hits [1-9]' > /dev/null; [ $? = 1 ]; echo $?) "nobody's marktap -x runs no handler in it"
like "$(nobody timeout 20 "$MTAP" -g -x $gp -e "global c probe process(\"$D\").mark(\"tick\") { c++ } probe timer.s(1) { exit() }" 2>&1)" \
	"permission denied: the kernel does not let you ptrace" "nobody's marktap -g -x: refused, saying why"
# a script with no handler in the process asks nothing of it: -x only
# sets target(), as stap's, for any user
is "$(nobody timeout 20 "$MTAP" -x $gp -e 'probe timer.ms(10) { println(target()); exit() }' 2>&1)" "$gp" \
	"nobody's marktap -x of a timer-only script: target() is the PID, nothing joins the process"
like "$(count $gp)" "^hits [1-9]" "root's marktap -x still does"

# 4. a process of nobody that made itself not dumpable (as ssh-agent does)
cat > "$TMP/nodump.c" <<'C'
#include <sys/prctl.h>
__attribute__((constructor)) static void nodump(void) { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
C
${CC:-cc} -shared -fPIC -o "$TMP/nodump.so" "$TMP/nodump.c" && chmod 755 "$TMP/nodump.so"
setpriv --reuid=65534 --regid=65534 --clear-groups env LD_PRELOAD="$TMP/nodump.so" "$D" "$TMP/out/none" 30 keep > "$TMP/nd" 2>&1 &
np=$!
PIDS="$PIDS $np"
wait_for 30 grep -qs ready "$TMP/nd"
is "$(grep -E '^(Uid|Gid)' /proc/$np/status | awk '{ print $2 }' | tr '\n' ' ')" "65534 65534 " \
	"a process of nobody, with nobody's ids..."
out=$(count $np nobody)
ok $(expr "$out" : 'hits [1-9]' > /dev/null; [ $? = 1 ]; echo $?) "...but not dumpable: nobody's marktap -x runs no handler in it"
like "$(count $np)" "^hits [1-9]" "root's marktap -x does"

# 5. the proof: a wrong one is refused; a silent client does not hold the
#    agent from others (it is dropped after 2 s)
like "$(agent $np "script $TMP/evil.so")" "^error: permission denied" "a wrong proof: refused"
nobody "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect("\0marktap-agent-" + sys.argv[1])
time.sleep(8)' $ctl &
PIDS="$PIDS $!"
like "$(count $ctl nobody)" "^hits [1-9]" "a silent client of the agent does not keep its user out"
done_testing
