#!/bin/sh
# marktrace record --relay ... -o DIR: the local copy never waits on the
# network.  A relayd that takes the session and its commands but never
# reads its data port: the sends to it stall, and while they did the
# consumer stopped draining the rings (the -o copy lost 40 to 75 % of
# 400 000 events).  Now packets wait for relayd in a bounded queue of
# their own, drained by another thread: the -o copy has every event; what
# relayd did not get is counted and said, and marktrace exits 1.
. "$(dirname "$0")/../lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
CC=${CC:-cc}
[ -x "$MT" ] && [ -f "$B/runtime/.libs/libmarktap.so" ] || skip_all "build first"
command -v python3 > /dev/null || skip_all "python3 needed for the stand-in relayd"
W=$(mktemp -d)
FAKE=
trap '[ -n "$FAKE" ] && kill $FAKE 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$W"' EXIT

# 400 000 events in bursts of 1000 every 10 ms: a consumer that drains
# (or one descheduled a while on a loaded machine) keeps up, the rings
# (8 x 64 KiB) holding some 20 bursts; one held up for seconds cannot.
cat > "$W/paced.c" <<'EOF'
#include <unistd.h>
#include <marktap/marker.h>
int main(void)
{
	for (int i = 0; i < 400000; i++) {
		trace_mark(paced, "seq %d", i);
		if (i % 1000 == 999)
			usleep(10000);
	}
	return 0;
}
EOF
$CC -O2 -I"$top_srcdir/runtime/include" -o "$W/paced" "$W/paced.c" -L"$B/runtime/.libs" -lmarktap \
	-Wl,-rpath,"$B/runtime/.libs" > "$W/cc.log" 2>&1 || { cat "$W/cc.log" >&2; skip_all "$CC cannot build the test program"; }
plan 6

# The stand-in: the control protocol's replies (relay.t's noindex.py
# speaks the same), a data connection accepted and never read.
cat > "$W/stall.py" <<'PY'
import socket, struct, sys, time
ready = sys.argv[1]
def listen(rcvbuf=0):
    l = socket.socket()
    if rcvbuf:   # a small window: the sender's buffer, not ours, fills
        l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    l.bind(("127.0.0.1", 0)); l.listen(1); return l
lc, ld = listen(), listen(65536)
with open(ready + ".tmp", "w") as f:
    f.write("%d %d\n" % (lc.getsockname()[1], ld.getsockname()[1]))
import os; os.rename(ready + ".tmp", ready)
c, _ = lc.accept()
data = []
def read(n):
    d = b""
    while len(d) < n:
        x = c.recv(n - len(d))
        if not x: sys.exit(0)
        d += x
    return d
handle = 0
while True:
    _, n, cmd, _ = struct.unpack(">QQII", read(24)); read(n)
    if cmd == 5: c.sendall(struct.pack(">II", 2, 8))                    # version
    elif cmd == 2:                                                     # session
        c.sendall(struct.pack(">QI", 1, 10))
    elif cmd == 1: handle += 1; c.sendall(struct.pack(">QI", handle, 10))  # stream
    elif cmd == 3:                                                     # start data
        c.sendall(struct.pack(">I", 10))
        ld.settimeout(30); data.append(ld.accept()[0])                 # kept, never read
    elif cmd == 8: c.sendall(struct.pack(">I", 0))                     # data pending
    elif cmd in (6, 17): pass                                          # metadata
    else: c.sendall(struct.pack(">I", 10))
PY
python3 "$W/stall.py" "$W/ports" 2> "$W/stall.err" &
FAKE=$!
wait_for 30 test -e "$W/ports"
read -r CTRL DATA < "$W/ports" || { ok 1 "the stand-in relayd listens"; done_testing; }

start=$(date +%s)
timeout -k 5 120 "$MT" record --relay "net://127.0.0.1:$CTRL:$DATA" -o "$W/t" \
	--subbuf-size 64k --num-subbuf 8 \
	-- "$W/paced" > /dev/null 2> "$W/err"
rc=$?
took=$(($(date +%s) - start))
kill $FAKE 2> /dev/null; wait $FAKE 2> /dev/null; FAKE=
is "$rc" "1" "relayd never reading its data: marktrace exits 1"
like "$(cat "$W/err")" "400000 events recorded, 0 lost" "the summary: every event recorded, none lost locally"
is "$("$MT" view "$W/t" | grep -c 'paced: seq=')" "400000" "the -o copy has all 400000 events"
lost=$(sed -n 's/.*relayd lost (.*): \([0-9]*\) events were not sent to it.*/\1/p' "$W/err")
diag "relayd's loss: ${lost:-none said} events; the recording took ${took} s"
ok $([ -n "$lost" ] && [ "$lost" -gt 0 ] && [ "$lost" -le 400000 ]; echo $?) \
	"what relayd did not get is counted and said"
like "$(cat "$W/err")" "the whole trace is in $W/t" "... and where the whole trace is"
# one stalled send is given up after MT_NET_TIMEOUT_S (10 s) without progress
ok $([ "$took" -lt 60 ]; echo $?) "the end waits for relayd a bounded time (${took} s)"
done_testing
