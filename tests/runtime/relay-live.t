#!/bin/sh
# marktap --trace net://HOST:PORT/host/H/SESSION: a script
# follows a live session of a real lttng-relayd on loopback while
# marktrace records it, and prints what it prints over the finished -o
# copy; ^C ends it with the end probe; bad URLs, a missing session, and
# peers that are not relayd (silent, garbage, lying lengths) give errors;
# an LTTng-UST live session is read too (trace.event probes).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/lttng.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
MTAP=$B/translator/marktap
STRESS=$B/tests/runtime/stress
[ -x "$MT" ] && [ -x "$MTAP" ] && [ -x "$STRESS" ] || skip_all "build first"
command -v lttng-relayd >/dev/null || skip_all "lttng-relayd not installed (lttng-tools)"
command -v python3 >/dev/null || skip_all "python3 needed to find free ports"
# the program itself, for process("...").mark (libtool may wrap it)
BIN=$STRESS
[ -x "$B/tests/runtime/.libs/stress" ] && BIN=$B/tests/runtime/.libs/stress
MARKTAP_TAPSET_DIR="$top_srcdir/tapsets:$top_builddir/tapsets"; export MARKTAP_TAPSET_DIR
W=$(mktemp -d)
RELAYD= FAKE=
SESSIOND_PID= LSESSION=
trap '[ -n "$LSESSION" ] && lttng destroy "$LSESSION" >/dev/null 2>&1; lttng_sessiond_stop; [ -n "$RELAYD" ] && kill -9 $RELAYD 2>/dev/null; [ -n "$FAKE" ] && kill $FAKE 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$W"' EXIT
plan 30

set -- $(python3 -c '
import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
CTRL=$1 DATA=$2 LIVE=$3 SPARE=$4
URL=net://127.0.0.1:$CTRL:$DATA
HOST=$(hostname)
lttng-relayd -C tcp://127.0.0.1:$CTRL -D tcp://127.0.0.1:$DATA \
	-L tcp://127.0.0.1:$LIVE -o "$W/relay" > "$W/relayd.log" 2>&1 &
RELAYD=$!
python3 -c '
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close(); sys.exit(0)
    except OSError: time.sleep(0.05)
sys.exit(1)' "$LIVE"
ok $? "lttng-relayd listens on 127.0.0.1 (live port $LIVE)"

# tick lines in FILE so far (0 before it exists); at least N of them
ticks() { c=$(grep -c '^tick' "$1" 2>/dev/null); echo "${c:-0}"; }
has_ticks() { [ "$(ticks "$1")" -ge "$2" ]; }   # FILE N

# record NAME CMD...: marktrace records CMD into relayd (live) and -o
# $W/NAME in the background; waits until the program says "ready"
record() {
	name=$1; shift
	("$MT" record --relay "$URL" --live --switch-timer 100 -o "$W/$name" -- "$@" \
		> "$W/$name.out" 2> "$W/$name.err"; echo $? > "$W/$name.rc") &
	REC=$!
	wait_for 10 grep -q ready "$W/$name.out"
}

# 1. the ticks of a program running 3 s, followed while it runs
cat > "$W/tick.stp" <<EOF
global n
probe process("$BIN").mark("tick") { n++; printf("tick %d\n", \$n) }
probe end { printf("total %d\n", n) }
EOF
record live sh -c "'$STRESS' 1 0 loop 3; echo done > '$W/live.done'"
"$MTAP" --trace "net://127.0.0.1:$LIVE/host/$HOST/live" "$W/tick.stp" > "$W/live.txt" 2> "$W/live.mterr" &
VIEW=$!
running=no
wait_for 5 has_ticks "$W/live.txt" 10 && { [ -e "$W/live.done" ] || running=yes; }
is "$running" "yes" "marktap prints the handlers' output while the program still runs"
wait $VIEW
is "$?:$(cat "$W/live.mterr")" "0:" "marktap ends with the session, status 0, nothing on stderr"
wait $REC
is "$(cat "$W/live.rc")" "0" "marktrace record --relay --live: status 0"
"$MTAP" --trace "$W/live" "$W/tick.stp" > "$W/live.off" 2>&1
ok $(cmp -s "$W/live.txt" "$W/live.off"; echo $?) "the same output as the script over the finished -o copy"
is "$(tail -n 1 "$W/live.txt")" "total 300" "every event of the session (300 ticks)"

# 2. two threads, events on both CPUs' streams: merged in time order as
#    over the stored trace (each event's thread and seq printed)
cat > "$W/ev.stp" <<EOF
global n
probe process("$BIN").mark("stress_ev") { n[\$thread]++; printf("%d %d %d\n", cpu(), \$thread, \$seq) }
probe end { foreach (t+ in n) printf("thread %d: %d\n", t, n[t]) }
EOF
# (the program goes on a while after its burst: relayd 2.13 hangs up a
# viewer's streams as soon as the recorder closes them, so a viewer still
# behind then would miss the last packets; babeltrace2's as ours)
record two sh -c "'$STRESS' 1 0 loop 1; '$STRESS' 2 40000; '$STRESS' 1 0 loop 3"
"$MTAP" --trace "net://127.0.0.1:$LIVE/host/$HOST/two" "$W/ev.stp" > "$W/two.txt" 2> "$W/two.mterr"
rc=$?
wait $REC
is "$rc:$(cat "$W/two.rc")" "0:0" "a two-thread session followed to its end"
"$MTAP" --trace "$W/two" "$W/ev.stp" > "$W/two.off" 2>&1
ok $(cmp -s "$W/two.txt" "$W/two.off"; echo $?) "the same 80000 events, in the same order, as over the -o copy"
is "$(tail -n 2 "$W/two.txt" | tr '\n' ' ')" "thread 0: 40000 thread 1: 40000 " "each thread's events counted"

# 3. ^C: marktap stops following, runs the end probe, status 0; the
#    recording goes on unharmed
record int sh -c "'$STRESS' 1 0 loop 4"
"$MTAP" --trace "net://127.0.0.1:$LIVE/host/$HOST/int" "$W/tick.stp" > "$W/int.txt" 2> "$W/int.mterr" &
VIEW=$!
wait_for 10 has_ticks "$W/int.txt" 5
kill -INT $VIEW
wait $VIEW
rc=$?
like "$rc $(tail -n 1 "$W/int.txt")" "^0 total [1-9]" "SIGINT: the end probe runs, status 0"
wait $REC
is "$(cat "$W/int.rc")" "0" "the recording is not disturbed"

# 4. errors: a URL without a session, a session relayd does not have,
#    nothing listening
out=$("$MTAP" --trace "net://127.0.0.1:$LIVE/live" "$W/tick.stp" 2>&1)
like "$? $out" "^1 ERROR: 'net://127.0.0.1:$LIVE/live': expected net://HOST\[:PORT\]/host/HOSTNAME/SESSION" \
	"a URL without /host/H/SESSION: exit 1, the form said"
out=$("$MTAP" --trace "net://127.0.0.1:$LIVE/host/$HOST/nosuch" "$W/tick.stp" 2>&1)
like "$? $out" "^1 ERROR: relayd at 127.0.0.1 port $LIVE: it has no live session 'nosuch' of host '$HOST'" \
	"a session relayd does not have: exit 1, said so"
out=$("$MTAP" --trace "net://127.0.0.1:$SPARE/host/$HOST/live" "$W/tick.stp" 2>&1)
like "$? $out" "^1 ERROR: cannot connect to relayd at 127.0.0.1 port $SPARE" "nothing listening: exit 1"
out=$("$MTAP" --trace "net://127.0.0.1:$LIVE/host/$HOST/nosuch" -e 'probe trace.event("tick") { }' 2>&1)
like "$? $out" "^1 .*it has no live session 'nosuch'" "trace.event probes of a missing session: the same error"

# 5. an LTTng-UST live session (lttng create --live) into the same relayd:
#    its events through trace.event, as relayd has them (bench/ust's
#    emitter: 4000 events, a = 0..3999)
EU=$B/bench/ust/emit-ust
lttng_ok=no
if [ -x "$EU" ] && command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null; then
	# lttng-read.t starts and kills a session daemon too: one at a time
	# (a lock held to the end; see there)
	exec 8>"${TMPDIR:-/tmp}/marktap-tests-lttng.lock"
	flock 8
	[ "$(id -u)" = 0 ] && TMP=$W lttng_sessiond :
	LSESSION=mtlive$$
	lttng create "$LSESSION" --live=200000 --set-url="net://127.0.0.1:$CTRL:$DATA" >"$W/lttng.log" 2>&1 &&
		lttng enable-event -s "$LSESSION" -u 'bench_ust:*' >>"$W/lttng.log" 2>&1 &&
		lttng start "$LSESSION" >>"$W/lttng.log" 2>&1 && lttng_ok=yes
	[ $lttng_ok = yes ] || LSESSION=
fi
if [ $lttng_ok = yes ]; then
	"$EU" rate 1000 4 >"$W/ust.out" 2>&1 &
	EMIT=$!
	# registered: its event class is in the session's metadata at relayd
	wait_for 30 sh -c 'grep -rqs "bench_ust:ev" "$1"/*/' sh "$W/relay/$HOST"
	"$MTAP" --trace "net://127.0.0.1:$LIVE/host/$HOST/$LSESSION" \
		-e 'global n, sum probe trace.event("bench_ust:ev") { n++; sum += $a; if (n == 4000) println("all 4000") }
		    probe end { printf("%d %d\n", n, sum) }' \
		>"$W/ust.txt" 2>"$W/ust.err" &
	VIEW=$!
	wait $EMIT
	# the session is destroyed once the viewer has had every event
	wait_for 30 grep -q '^all 4000$' "$W/ust.txt"
	lttng stop "$LSESSION" >/dev/null 2>&1; lttng destroy "$LSESSION" >/dev/null 2>&1; LSESSION=
	wait $VIEW
	is "$?:$(cat "$W/ust.err")" "0:" "an LTTng-UST live session followed until lttng destroys it"
	is "$(tail -n 1 "$W/ust.txt")" "4000 7998000" "trace.event on its events: every one, fields by name"
else
	diag "lttng: $(tail -2 "$W/lttng.log" 2>/dev/null)"
	for i in 1 2; do ok 0 "# SKIP an LTTng-UST live session needs lttng-tools, a session daemon and bench/ust/emit-ust"; done
fi
lttng_sessiond_stop

# 6. peers that are not relayd, or lie: an error, never a crash or a hang.
#    fake.py speaks the viewer protocol up to where it misbehaves; the
#    metadata and a packet are the "live" recording's.
META=$(ls "$W/live/metadata")
cat > "$W/fake.py" <<'PY'
import socket, struct, sys
port, mode, meta, chan, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(1)
open(ready, "w").close()
c, _ = l.accept()
def cmd():
    h = b""
    while len(h) < 16:
        d = c.recv(16 - len(h))
        if not d: sys.exit(0)
        h += d
    n, op, _ = struct.unpack(">QII", h); d = b""
    while len(d) < n: d += c.recv(n - len(d))
    return op
if mode == "silent":                                         # says nothing for 30 s
    c.recv(100); import time; time.sleep(30); sys.exit(0)
if mode == "garbage":
    c.recv(100); c.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n" * 4); c.close(); sys.exit(0)
cmd(); c.sendall(struct.pack(">QIII", 0, 2, 4, 1))           # connect
cmd(); c.sendall(struct.pack(">I", 1))                       # viewer session
cmd()                                                        # list
if mode == "many":
    c.sendall(struct.pack(">I", 0xffffffff)); c.close(); sys.exit(0)
c.sendall(struct.pack(">I", 1) + struct.pack(">QIII", 7, 100000, 0, 2)
          + b"fakehost".ljust(64, b"\0") + b"s".ljust(255, b"\0"))
cmd()                                                        # attach
def stream(i, md, name):
    return struct.pack(">QQI", i, 1, md) + b"fakehost/s".ljust(4096, b"\0") + name.ljust(255, b"\0")
c.sendall(struct.pack(">II", 1, 2) + stream(1, 1, b"metadata") + stream(2, 0, b"channel0_0"))
text = open(meta, "rb").read()
sent = False
grown = 0
pkt = open(chan, "rb").read()
size = struct.unpack_from("<Q", pkt, 56)[0]
while True:
    op = cmd()
    if op == 6:                                              # metadata
        if mode == "metagrow" and sent == 1:                 # 2000 more event classes
            grown += 1; sent = 2
            more = "".join('event {\n\tname = "g%d";\n\tid = %d;\n\tstream_id = 0;\n'
                           '\tfields := struct { integer { size = 32; align = 8; signed = true; } _a; };\n};\n'
                           % (k, k) for k in range(10000 + 2000 * grown, 12000 + 2000 * grown)).encode()
            c.sendall(struct.pack(">QI", len(more), 1) + more)
        elif sent: c.sendall(struct.pack(">QI", 0, 2))
        else: c.sendall(struct.pack(">QI", len(text), 1) + text); sent = True
    elif op == 4 and mode == "metagrow":                     # retry later, new metadata
        sent = 1 if sent else sent
        c.sendall(struct.pack(">QQQQQQQII", 0, 0, 0, 0, 0, 0, 2, 2, 1))
    elif op == 4:                                            # next index
        bits = 1 << 60 if mode == "huge" else size
        r = struct.pack(">QQQQQQQII", 0, bits, bits, 0, 0, 0, 2, 1, 0)
        if mode == "drip":                                   # a byte every 2 s: 128 s
            import time
            open(ready + ".drip", "w").close()
            for b in r: c.sendall(bytes([b])); time.sleep(2)
        c.sendall(r)
    elif op == 5:                                            # packet
        n = size // 8
        if mode == "metaloop":
            c.sendall(struct.pack(">III", 3, 0, 1))          # "new metadata first", for ever
        elif mode == "short":
            c.sendall(struct.pack(">III", 1, n - 1, 0) + pkt[:n - 1])
        elif mode == "damaged":
            c.sendall(struct.pack(">III", 1, n, 0) + b"\xff" * n)
        else:
            c.sendall(struct.pack(">III", 1, n, 0) + pkt[:n])
    else:
        c.close(); sys.exit(0)
PY
# a stream file of the "live" recording that has packets
CHAN=$(ls -S "$W"/live/channel0_* | head -1)
fake() { # MODE: start fake.py on $SPARE, run marktap against it
	rm -f "$W/fake.ready"
	python3 "$W/fake.py" "$SPARE" "$1" "$W/live/metadata" "$CHAN" "$W/fake.ready" 2>>"$W/fake.err" &
	FAKE=$!
	wait_for 10 test -e "$W/fake.ready"
	out=$(timeout 60 "$MTAP" --trace "net://127.0.0.1:$SPARE/host/fakehost/s" "$W/tick.stp" 2>&1)
	rc=$?
	kill $FAKE 2>/dev/null; wait $FAKE 2>/dev/null; FAKE=
}
fake garbage
like "$rc $out" "^1 ERROR: relayd at 127.0.0.1 port $SPARE: not lttng-relayd's live port" "a peer sending garbage: exit 1, said so"
fake silent
like "$rc $out" "^1 ERROR: relayd at 127.0.0.1 port $SPARE: reading its reply: no answer in 10 s" "a silent peer: exit 1 after the timeout"
fake many
like "$rc $out" "^1 ERROR: .*it lists 4294967295 sessions" "a session count of 2^32-1: refused before reading"
fake huge
like "$rc $out" "^1 ERROR: .*channel0_0: a packet of 1152921504606846976 bits" "an index with a 2^60-bit packet: refused"
fake short
like "$rc $out" "^1 ERROR: .*a packet of [0-9]* bytes where the index says" "a packet shorter than its index: refused"
fake metaloop
like "$rc $out" "^1 ERROR: .*keeps asking to read new metadata before a packet" "a peer asking for new metadata for ever: refused after a few tries"
fake damaged
like "$rc $out" "^1 ERROR: .*channel0_0: byte 0: bad packet magic" "a packet of garbage: the reader's error, exit 1"
# a peer whose metadata grows by 2000 event classes before every poll: each
# version parsed again (and, before, every one kept: gigabytes); now the
# bytes parsed and the versions kept are bounded, under a 2 GiB ulimit
rm -f "$W/fake.ready"
python3 "$W/fake.py" "$SPARE" metagrow "$W/live/metadata" "$CHAN" "$W/fake.ready" 2>>"$W/fake.err" &
FAKE=$!
wait_for 10 test -e "$W/fake.ready"
out=$(ulimit -v 2097152; timeout -k 5 300 "$MTAP" --trace "net://127.0.0.1:$SPARE/host/fakehost/s" "$W/tick.stp" 2>&1)
rc=$?
kill $FAKE 2>/dev/null; wait $FAKE 2>/dev/null; FAKE=
like "$rc $out" "^1 ERROR: .*MiB parsed in [0-9]+ versions, and it grows again: refused" \
	"metadata growing before every poll: refused once 1 GiB was parsed, within 2 GiB of memory"
# the same with 2000 classes from the start, probed by trace.event("w*"),
# and a comment more before every poll: each version's classes got the
# probes' bindings (~2 KB each), kept when the version was freed; now
# they go with it
cat > "$W/wide.py" <<'PY'
import socket, struct, sys
port, meta, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(2)
open(ready, "w").close()
wide = open(meta, "rb").read() + "".join('event {\n\tname = "w%d";\n\tid = %d;\n\tstream_id = 0;\n'
    '\tfields := struct { integer { size = 32; align = 8; signed = true; } _a; };\n};\n'
    % (k, k) for k in range(10000, 12000)).encode()
def stream(i, md, name):
    return struct.pack(">QQI", i, 1, md) + b"fakehost/s".ljust(4096, b"\0") + name.ljust(255, b"\0")
for conn in range(2):
    c, _ = l.accept()
    def cmd():
        h = b""
        while len(h) < 16:
            d = c.recv(16 - len(h))
            if not d: raise EOFError
            h += d
        n, op, _ = struct.unpack(">QII", h); d = b""
        while len(d) < n: d += c.recv(n - len(d))
        return op
    state = 0                  # 0: nothing sent, 1: more to send, 2: sent
    try:
        while True:
            op = cmd()
            if op == 1: c.sendall(struct.pack(">QIII", 0, 2, 4, 1))
            elif op == 8: c.sendall(struct.pack(">I", 1))
            elif op == 2: c.sendall(struct.pack(">I", 1) + struct.pack(">QIII", 7, 100000, 0, 2)
                                    + b"fakehost".ljust(64, b"\0") + b"s".ljust(255, b"\0"))
            elif op == 3: c.sendall(struct.pack(">II", 1, 2) + stream(1, 1, b"metadata") + stream(2, 0, b"channel0_0"))
            elif op == 6:
                if state == 0: c.sendall(struct.pack(">QI", len(wide), 1) + wide); state = 2
                elif state == 1:
                    more = b"/*" + b"x" * 16384 + b"*/\n"
                    c.sendall(struct.pack(">QI", len(more), 1) + more); state = 2
                else: c.sendall(struct.pack(">QI", 0, 2))
            elif op == 4:
                state = 1; c.sendall(struct.pack(">QQQQQQQII", 0, 0, 0, 0, 0, 0, 2, 2, 1))
            else: break
    except (EOFError, OSError):
        pass
    c.close()
PY
rm -f "$W/fake.ready"
python3 "$W/wide.py" "$SPARE" "$W/live/metadata" "$W/fake.ready" 2>>"$W/fake.err" &
FAKE=$!
wait_for 10 test -e "$W/fake.ready"
out=$(ulimit -v 786432; timeout -k 5 300 "$MTAP" --trace "net://127.0.0.1:$SPARE/host/fakehost/s" \
	-e 'global n probe trace.event("w*") { n++ }' 2>&1)
rc=$?
kill $FAKE 2>/dev/null; wait $FAKE 2>/dev/null; FAKE=
like "$rc $out" "^1 ERROR: .*MiB parsed in [0-9]+ versions, and it grows again: refused" \
	"2000 probed classes in every version: their bindings go with the version (within 768 MiB)"
# a peer that trickles a reply (one byte every 2 s) keeps each read short of
# the 10 s silence: the read as a whole has a deadline, and ^C works meanwhile
fake drip
like "$rc $out" "^1 ERROR: .*reading its reply: too slow" "a reply trickled byte by byte: given up, exit 1"
rm -f "$W/fake.ready" "$W/fake.ready.drip"
python3 "$W/fake.py" "$SPARE" drip "$W/live/metadata" "$CHAN" "$W/fake.ready" 2>>"$W/fake.err" &
FAKE=$!
wait_for 10 test -e "$W/fake.ready"
"$MTAP" --trace "net://127.0.0.1:$SPARE/host/fakehost/s" "$W/tick.stp" > "$W/drip.out" 2>&1 &
VIEW=$!
# ^C once marktap waits for the trickled reply
wait_for 30 test -e "$W/fake.ready.drip"
kill -INT $VIEW
wait_for 30 exited $VIEW || { kill -9 $VIEW; diag "still running 30 s after SIGINT"; }
wait $VIEW
rc=$?
like "$rc $(tail -n 1 "$W/drip.out")" "^0 total" "SIGINT while a reply trickles in: the end probe runs, status 0"
kill $FAKE 2>/dev/null; wait $FAKE 2>/dev/null; FAKE=

# 7. a peer answering a whole session (metadata, one packet, hang-up) with
#    one reply of each conversation damaged at random (bytes flipped, cut
#    short, or replaced): marktap ends each with status 0 or an ERROR and
#    status 1, never a signal, never a hang
cat > "$W/fuzz.py" <<'PY'
import random, socket, struct, sys
port, runs, meta, chan, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(4)
open(ready, "w").close()
text = open(meta, "rb").read()
pkt = open(chan, "rb").read()
size = struct.unpack_from("<Q", pkt, 56)[0]
def stream(i, md, name):
    return struct.pack(">QQI", i, 1, md) + b"fakehost/s".ljust(4096, b"\0") + name.ljust(255, b"\0")
for run in range(runs):
    c, _ = l.accept(); c.settimeout(1)
    rng = random.Random(run); at = rng.randrange(9); kind = rng.randrange(3)
    state = {"meta": False, "pkt": False}
    def reply(op):
        if op == 1: return struct.pack(">QIII", 0, 2, 4, 1)
        if op == 8: return struct.pack(">I", 1)
        if op == 2: return struct.pack(">I", 1) + struct.pack(">QIII", 7, 100000, 0, 2) + \
                b"fakehost".ljust(64, b"\0") + b"s".ljust(255, b"\0")
        if op == 3: return struct.pack(">II", 1, 2) + stream(1, 1, b"metadata") + stream(2, 0, b"channel0_0")
        if op == 6:
            if state["meta"]: return struct.pack(">QI", 0, 2)
            state["meta"] = True; return struct.pack(">QI", len(text), 1) + text
        if op == 4:
            if state["pkt"]: return struct.pack(">QQQQQQQII", 0, 0, 0, 0, 0, 0, 2, 3, 0)
            return struct.pack(">QQQQQQQII", 0, size, size, 0, 0, 0, 2, 1, 0)
        if op == 5:
            state["pkt"] = True; return struct.pack(">III", 1, size // 8, 0) + pkt[:size // 8]
        if op == 7: return struct.pack(">II", 4, 0)
        return b""
    try:
        for j in range(40):
            h = b""
            while len(h) < 16:
                d = c.recv(16 - len(h))
                if not d: raise EOFError
                h += d
            n, op, _ = struct.unpack(">QII", h); d = b""
            while len(d) < n: d += c.recv(n - len(d))
            r = bytearray(reply(op))
            if j == at and kind == 0 and r:
                for _ in range(rng.randrange(1, 9)): r[rng.randrange(len(r))] = rng.randrange(256)
            elif j == at:
                r = r[:rng.randrange(len(r) + 1)] if kind == 1 else bytes(rng.randrange(256) for _ in range(rng.randrange(80)))
                c.sendall(r); break
            c.sendall(r)
    except Exception:
        pass
    c.close()
PY
rm -f "$W/fake.ready"
python3 "$W/fuzz.py" "$SPARE" 40 "$W/live/metadata" "$CHAN" "$W/fake.ready" 2>> "$W/fake.err" &
FAKE=$!
wait_for 10 test -e "$W/fake.ready"
bad= zero=0
for i in $(seq 1 40); do
	timeout 60 "$MTAP" --trace "net://127.0.0.1:$SPARE/host/fakehost/s" "$W/tick.stp" > "$W/fuzz.out" 2> "$W/fuzz.err"
	rc=$?
	case "$rc" in
	0) zero=$((zero + 1)) ;;
	1) grep -q '^ERROR: ' "$W/fuzz.err" || bad="$bad $i:no-error-message" ;;
	*) bad="$bad $i:$rc"; sed "s/^/# run $i: /" "$W/fuzz.err" | head -3 ;;
	esac
done
wait $FAKE; FAKE=
is "$bad" "" "40 conversations damaged at random: status 0 or 1 with an ERROR, no signal, no hang"
diag "$zero of them read to the end (the damage fell where nothing reads it)"
ok $([ "$zero" -lt 40 ]; echo $?) "the damage is seen (not every conversation ends well)"
diag "metadata used by the fake peer: $META"
done_testing
