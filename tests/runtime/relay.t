#!/bin/sh
# marktrace record --relay: the trace streamed to a real lttng-relayd on
# loopback, checked with babeltrace2 against the local copy;
# relayd unreachable at start; relayd killed while the program runs.
. "$(dirname "$0")/../lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
STRESS=$B/tests/runtime/stress
BT=${BABELTRACE2:-babeltrace2}
[ -x "$MT" ] && [ -x "$STRESS" ] || skip_all "build first"
command -v lttng-relayd >/dev/null || skip_all "lttng-relayd not installed (lttng-tools)"
command -v "$BT" >/dev/null || skip_all "babeltrace2 not installed"
command -v python3 >/dev/null || skip_all "python3 needed to find free ports"
W=$(mktemp -d)
RELAYD= NETNS=
trap '[ -n "$RELAYD" ] && kill -9 $RELAYD 2>/dev/null; for ns in $NETNS; do ip netns del "$ns"; done 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$W"' EXIT
plan 39

# five free TCP ports on 127.0.0.1 (control, data, live, two unused)
set -- $(python3 -c '
import socket
s = [socket.socket() for _ in range(5)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
CTRL=$1 DATA=$2 LIVE=$3 CLOSED=$4 CLOSED2=$5
URL=net://127.0.0.1:$CTRL:$DATA

# relayd, waited for until its control port answers
start_relayd() {
	lttng-relayd -C tcp://127.0.0.1:$CTRL -D tcp://127.0.0.1:$DATA \
		-L tcp://127.0.0.1:$LIVE -o "$W/relay" > "$W/relayd.log" 2>&1 &
	RELAYD=$!
	listening 127.0.0.1
}
listening() {
	python3 -c '
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close(); sys.exit(0)
    except OSError: time.sleep(0.05)
sys.exit(1)' "$1" "$CTRL"
}
start_relayd
ok $? "lttng-relayd listens on 127.0.0.1:$CTRL (data $DATA, live $LIVE)"
HOST=$(hostname)

# per thread, seq must run 0, 1, 2...: prints "threads events bad"
check_seqs() {
	awk '/stress_ev:/ {
		t = $0; sub(/.*thread = /, "", t); sub(/,.*/, "", t)
		s = $0; sub(/.*seq = /, "", s); sub(/,.*/, "", s)
		if (!(t in next_seq)) { next_seq[t] = 0; nt++ }
		if (s != next_seq[t]) bad++
		next_seq[t] = s + 1; n++
	} END { printf "%d %d %d\n", nt, n, bad + 0 }' "$1"
}

# 1. --relay and -o: relayd's trace is the local one, event for event
"$MT" record -q --relay "$URL" -o "$W/both" --subbuf-size 4M --num-subbuf 16 \
	-- "$STRESS" 2 100000
ok $? "record --relay $URL -o DIR: 2 threads x 100000 events"
set -- "$W/relay/$HOST"/both-*
is "$#" "1" "relayd made one directory, HOST/SESSION-DATE"
R=$1
ok $([ -s "$R/metadata" ] && [ -e "$R/channel0_0" ]; echo $?) "relayd's trace has metadata and per-CPU streams"
"$BT" "$R" > "$W/relay.txt" 2> "$W/relay.err"
ok $? "babeltrace2 reads relayd's trace"
is "$(check_seqs "$W/relay.txt")" "2 200000 0" "relayd's trace: every event, each thread's seq in order"
"$BT" "$W/both" > "$W/local.txt"
ok $(cmp -s "$W/relay.txt" "$W/local.txt"; echo $?) "babeltrace2 prints the same events, values and times from relayd's and the local trace"
is "$(grep -c 'recording_complete = 1' "$R/metadata")" "1" "relayd's metadata says the recording completed (reset at the end, once)"
n_idx=0
for f in "$R"/index/channel0_*.idx; do [ -s "$f" ] && n_idx=$((n_idx + 1)); done
ok $([ "$n_idx" -ge 1 ]; echo $?) "relayd wrote packet indexes ($n_idx index files)"
# each index entry (72 bytes after a 16-byte header) names one packet
ents=0
for f in "$R"/index/channel0_*.idx; do
	sz=$(stat -c %s "$f"); ents=$((ents + (sz - 16) / 72))
done
pk=$(python3 -c '
import struct, sys, glob
n = 0
for f in glob.glob(sys.argv[1] + "/channel0_*"):
    d = open(f, "rb").read(); off = 0
    while off + 84 <= len(d):
        size = struct.unpack_from("<Q", d, off + 56)[0] // 8
        if size < 84: break
        n += 1; off += size
print(n)' "$R")
is "$ents" "$pk" "one index entry per packet ($pk packets)"

# 2. --relay alone: no local files, the same trace at relayd
mkdir "$W/cwd"
(cd "$W/cwd" && "$MT" record -q --relay "$URL" -- "$STRESS" 1 50000)
ok $? "record --relay without -o"
is "$(ls -A "$W/cwd")" "" "no local trace directory"
set -- "$W/relay/$HOST"/marktap-*
R2=$1
is "$("$BT" "$R2" 2>/dev/null | grep -c 'stress_ev:')" "50000" "relayd's trace (session 'marktap') has the 50000 events"
out=$(cd "$W/cwd" && "$MT" record --relay "$URL" -- "$STRESS" 1 10 2>&1)
like "$out" "10 events recorded, 0 lost, in relayd's $HOST/marktap-" "the summary names relayd's directory"

# 3. relayd not reachable: a clear error, nothing run, nothing created
out=$("$MT" record --relay net://127.0.0.1:$CLOSED -o "$W/none" -- sh -c "touch '$W/ran'" 2>&1)
rc=$?
is "$rc" "1" "relayd not reachable: exit status 1"
like "$out" "cannot connect to relayd at 127.0.0.1 port $CLOSED: Connection refused" "the error names the relayd address"
ok $([ ! -e "$W/ran" ] && [ ! -e "$W/none" ]; echo $?) "the command never ran, no trace directory"
# something else at that port (relayd's live port speaks another protocol)
out=$("$MT" record --relay net://127.0.0.1:$LIVE -o "$W/none" -- sh -c "touch '$W/ran'" 2>&1)
rc=$?
like "$rc $out" "^1 .*127.0.0.1 port $LIVE does not answer as lttng-relayd's control port" "a port that is not relayd's control port: exit 1, said so"
ok $([ ! -e "$W/ran" ] && [ ! -e "$W/none" ]; echo $?) "the command never ran there either"
out=$("$MT" record --relay http://127.0.0.1 -- true 2>&1)
like "$out" "expected net://HOST\[:CTRL\[:DATA\]\]" "a URL that is not net:// is refused"

# a relayd that refuses the session (a stand-in speaking the protocol's
# first two replies): said, exit 1, nothing run
python3 -c '
import socket, struct, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
open(sys.argv[2], "w").close()
c, _ = l.accept()
def cmd():
    h = b""
    while len(h) < 24: h += c.recv(24 - len(h))
    n = struct.unpack(">QQII", h)[1]; d = b""
    while len(d) < n: d += c.recv(n - len(d))
cmd(); c.sendall(struct.pack(">II", 2, 13))
cmd(); c.sendall(struct.pack(">QI", 0, 1))
c.close()' "$CLOSED" "$W/fake.ready" &
FAKE=$!
wait_for 10 test -e "$W/fake.ready"
out=$("$MT" record --relay net://127.0.0.1:$CLOSED -o "$W/none" -- sh -c "touch '$W/ran'" 2>&1)
rc=$?
wait $FAKE
like "$rc $out" "^1 .*relayd refused the session 'none' of host '$HOST'" "a session relayd refuses: exit 1, said so"
ok $([ ! -e "$W/ran" ] && [ ! -e "$W/none" ]; echo $?) "the command never ran then either"

# a relayd that takes the session and streams but refuses packet indexes
# (whose replies marktrace reads as they come, not one by one): said, exit 1
cat > "$W/noindex.py" <<'PY'
import socket, struct, sys, threading
port, dport, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def listen(p):
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", p)); l.listen(1); return l
lc, ld = listen(port), listen(dport)
open(ready, "w").close()
def drain(l):
    c, _ = l.accept()
    while c.recv(65536): pass
threading.Thread(target=drain, args=(ld,), daemon=True).start()
c, _ = lc.accept()
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
    if cmd == 5: c.sendall(struct.pack(">II", 2, 8))
    elif cmd == 2: c.sendall(struct.pack(">QI", 1, 10))
    elif cmd == 1: handle += 1; c.sendall(struct.pack(">QI", handle, 10))
    elif cmd == 13: c.sendall(struct.pack(">I", 42))
    elif cmd == 8: c.sendall(struct.pack(">I", 0))
    elif cmd == 6: pass
    else: c.sendall(struct.pack(">I", 10))
PY
rm -f "$W/fake.ready"
python3 "$W/noindex.py" "$CLOSED" "$CLOSED2" "$W/fake.ready" 2> "$W/noindex.err" &
FAKE=$!
wait_for 10 test -e "$W/fake.ready"
out=$("$MT" record --relay "net://127.0.0.1:$CLOSED:$CLOSED2" -o "$W/noidx" -- "$STRESS" 1 1000 2>&1)
rc=$?
kill $FAKE 2> /dev/null; wait $FAKE 2> /dev/null
like "$rc $out" "^1 .*relayd refused a packet index \(code 42\)" "relayd refusing packet indexes: said, exit 1"
is "$("$MT" view "$W/noidx" | grep -c 'stress_ev:')" "1000" "the -o copy is whole"

# 4. --live: babeltrace2's lttng-live reader sees the events while the
#    program runs, and then the rest, as the local trace has them
("$MT" record --relay "$URL" --live --switch-timer 100 -o "$W/live" \
	-- sh -c "'$STRESS' 1 0 loop 3; echo status \$? > '$W/live.status'" > "$W/live.out" 2> "$W/live.err";
 echo $? > "$W/live.rc") &
REC=$!
wait_for 30 grep -q ready "$W/live.out"
(timeout 30 "$BT" --no-delta --input-format=lttng-live "net://127.0.0.1:$LIVE/host/$HOST/live" \
	> "$W/live.txt" 2> "$W/live.bterr"; echo $? > "$W/live.btrc") &
VIEW=$!
# (the program runs 3 s: past that the answer is no)
live_ticks() { [ "$(grep -c 'tick:' "$W/live.txt" 2>/dev/null)" -ge 10 ]; }
running=no
wait_for 5 live_ticks && { [ -e "$W/live.status" ] || running=yes; }
seen=$(grep -c 'tick:' "$W/live.txt" 2>/dev/null)
is "$running" "yes" "lttng-live shows events while the program runs ($seen seen)"
wait $REC $VIEW   # (not relayd)
is "$(cat "$W/live.rc") $(cat "$W/live.btrc")" "0 0" "marktrace and babeltrace2 (lttng-live) end with status 0"
"$BT" --no-delta "$W/live" > "$W/live.local"
# the ticks (thread events, one per packet, name each packet's thread)
grep 'tick:' "$W/live.txt" > "$W/live.ticks"
n=$(wc -l < "$W/live.ticks")
ok $([ "$n" -gt 0 ] && grep 'tick:' "$W/live.local" | tail -n "$n" | cmp -s - "$W/live.ticks"; echo $?) \
	"lttng-live's events are the local trace's last $n, equal, in order"
is "$(tail -n 1 "$W/live.txt" | sed 's/.*n = \([0-9]*\).*/\1/')" "299" "... up to the last event" ||
	# which side lost the tail: relayd's own copy, and what the reader said
	diag "ticks: local $(grep -c 'tick:' "$W/live.local"), lttng-live $n, relayd's copy" \
	     "$(for d in "$W/relay/$HOST"/live*; do "$BT" --no-delta "$d"; done 2>/dev/null | grep -c 'tick:'); reader: $(head -c 600 "$W/live.bterr")"
[ "$(cat "$W/live.status" 2>/dev/null)" = "status 0" ] || diag "the program: $(cat "$W/live.err")"

# 5. several hosts at once into one relayd: each recording in a network
#    namespace of its own (a veth pair to this one) with its hostname (a UTS
#    namespace); relayd listens on this side's address of the first pair
hosts_ok=no
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v unshare >/dev/null &&
   ip netns add "mtrelay$$a" 2>/dev/null; then
	NETNS="mtrelay$$a mtrelay$$b"
	hosts_ok=yes
	ip netns add "mtrelay$$b" || hosts_ok=no
	i=1
	for ns in $NETNS; do
		ip link add "mtr$$v$i" type veth peer name "mtr$$p$i" &&
		ip link set "mtr$$p$i" netns "$ns" &&
		ip addr add "10.213.$i.1/24" dev "mtr$$v$i" && ip link set "mtr$$v$i" up &&
		ip netns exec "$ns" ip addr add "10.213.$i.2/24" dev "mtr$$p$i" &&
		ip netns exec "$ns" ip link set "mtr$$p$i" up &&
		ip netns exec "$ns" ip route add default via "10.213.$i.1" || hosts_ok=no
		i=$((i + 1))
	done
fi
if [ "$hosts_ok" = yes ]; then
	lttng-relayd -C tcp://10.213.1.1:$CTRL -D tcp://10.213.1.1:$DATA \
		-L tcp://10.213.1.1:$LIVE -o "$W/fleet" > "$W/relayd2.log" 2>&1 &
	RELAYD2=$!
	listening 10.213.1.1
	i=1
	for ns in $NETNS; do
		ip netns exec "$ns" unshare -u sh -c "hostname mthost$i;
			exec '$MT' record -q --relay net://10.213.1.1:$CTRL:$DATA -o '$W/h$i' \
			--subbuf-size 4M --num-subbuf 8 -- '$STRESS' 2 50000" > "$W/h$i.err" 2>&1 &
		eval "H$i=\$!"
		i=$((i + 1))
	done
	wait $H1; rc1=$?
	wait $H2; rc2=$?
	kill $RELAYD2; wait $RELAYD2 2>/dev/null
	is "$rc1 $rc2" "0 0" "two hosts record at once into one relayd"
	is "$(cd "$W/fleet" && ls -d */ | tr -d / | tr '\n' ' ')" "mthost1 mthost2 " "relayd has one directory per host"
	for i in 1 2; do
		set -- "$W/fleet/mthost$i"/h$i-*
		"$BT" "$1" > "$W/h$i.txt" 2>/dev/null
		is "$(check_seqs "$W/h$i.txt") $(grep -c "mthost$i stress_ev" "$W/h$i.txt")" "2 100000 0 100000" \
			"host mthost$i: every event, in order, all its own"
	done
else
	for i in 1 2 3 4; do ok 0 "# SKIP network namespaces need root and ip(8)"; done
fi
for ns in $NETNS; do ip netns del "$ns"; done
NETNS=

# 6. relayd killed mid-run: the program runs on, the local copy is whole,
#    the loss is said and marktrace exits 1
("$MT" record --relay "$URL" -o "$W/k" --switch-timer 50 \
	-- sh -c "'$STRESS' 1 0 loop 3; echo status \$? > '$W/k.status'" > "$W/k.out" 2> "$W/k.err";
 echo $? > "$W/k.rc") &
wait_for 30 grep -q ready "$W/k.out"
# relayd is killed once it holds packets of the program's (of 300 events
# over 3 s, packets every 50 ms)
relayd_has_packets() { [ -n "$(find "$W/relay/$HOST" -path '*/k-*' -name 'channel0_*' -size +0c 2>/dev/null)" ]; }
wait_for 30 relayd_has_packets
kill -9 $RELAYD
wait $RELAYD 2>/dev/null
RELAYD=
wait
is "$(cat "$W/k.rc")" "1" "marktrace exits 1 when relayd is lost"
is "$(cat "$W/k.out") $(cat "$W/k.status")" "ready status 0" "the program's output and exit status are unchanged"
like "$(cat "$W/k.err")" "relayd lost \(.*\): [1-9][0-9]* events were not sent to it" "the loss is reported with its count"
ticks=$("$MT" view "$W/k" | grep -c 'tick:')
is "$ticks" "300" "the -o copy has all 300 events"
set -- "$W/relay/$HOST"/k-*
"$BT" "$1" 2>/dev/null | awk '/tick:/ { n = $0; sub(/.*n = /, "", n); sub(/ .*/, "", n); if (n + 0 != c) bad++; c++ }
	END { print c + 0, bad + 0 }' > "$W/k.relay"
read -r kept bad < "$W/k.relay"
diag "relayd kept $kept of 300 events"
ok $([ "$kept" -gt 0 ] && [ "$kept" -lt 300 ] && [ "$bad" = 0 ]; echo $?) "relayd's copy is the start of the recording, in order ($kept events)"

# 7. a relayd that answers the handshake, then trickles its index replies
#    (a byte every 2 s): each recv got a byte before its 10 s timeout, so
#    marktrace waited for ever at the end (16 KiB of replies: 9 hours).
#    Now a transfer has one deadline: the relay is lost, the -o copy whole.
cat > "$W/trickle.py" <<'PY'
import socket, struct, sys, threading, time
ctrl, data, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def listen(port):
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", port)); l.listen(1); return l
lc, ld = listen(ctrl), listen(data)
open(ready, "w").close()
def drain(l):
    c, _ = l.accept()
    while c.recv(1 << 16): pass
threading.Thread(target=drain, args=(ld,), daemon=True).start()
c, _ = lc.accept()
def cmd():
    h = b""
    while len(h) < 24:
        d = c.recv(24 - len(h))
        if not d: sys.exit(0)
        h += d
    _, n, op, _ = struct.unpack(">QQII", h); d = b""
    while len(d) < n: d += c.recv(n - len(d))
    return op
ok = struct.pack(">I", 10)
while True:
    op = cmd()
    if op == 5: c.sendall(struct.pack(">II", 2, 8))                  # version
    elif op == 2: c.sendall(struct.pack(">QI", 1, 10))               # session
    elif op == 1: c.sendall(struct.pack(">QI", 7, 10))               # stream
    elif op in (3, 16): c.sendall(ok)                                # start data, streams sent
    elif op == 13:                                                   # index: trickled
        for b in ok: c.sendall(bytes([b])); time.sleep(2)
    elif op in (6, 17): pass                                         # metadata: no reply
    else: c.sendall(ok)
PY
set -- $(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
rm -f "$W/trickle.ready"
python3 "$W/trickle.py" "$1" "$2" "$W/trickle.ready" 2> /dev/null &
TRICKLE=$!
wait_for 10 test -e "$W/trickle.ready"
timeout -k 5 200 "$MT" record -q --relay "net://127.0.0.1:$1:$2" -o "$W/tr" --subbuf-size 4096 \
	--switch-timer 20 -- "$STRESS" 1 20000 > /dev/null 2> "$W/tr.err"
rc=$?
kill $TRICKLE 2>/dev/null; wait $TRICKLE 2>/dev/null
like "$rc $(cat "$W/tr.err")" "^1 .*relayd lost \\(reading relayd's reply: Connection timed out\\)" \
	"a relayd trickling its replies is given up (exit 1, said), not waited for"
# (while the relay stalled the consumer, the rings discarded: counted)
"$MT" stats "$W/tr" > "$W/tr.stats" 2>&1
is "$(awk '/^events:/ { e = $2 } /^lost:/ { l = $2 } END { print e + l }' "$W/tr.stats")" 20000 \
	"the -o copy is readable: its events and the discarded ones make 20000"
done_testing
