#!/bin/sh
# export-pairs.t - marktrace export --format=chrome makes slices of begin
# and end markers of a thread, as Perfetto shows durations: X_start or
# X_begin with X_end, X_entry with X_exit, and the pairs --pair names
# (req_start:req_done); "B" and "E" on the thread's track, nested as
# Perfetto wants them (a pair crossing another ends and reopens it); an
# end without an open begin, and a begin whose end the trace does not
# declare, stay instants; a --pair name no event has is said.  The JSON
# is read back with python3's json.
. "$(dirname "$0")/../lib/tap.sh"
MT=$top_builddir/runtime/marktrace/marktrace
REQ=$top_builddir/tests/runtime/timeline/requests
PY=/usr/bin/python3
[ -x "$MT" ] && [ -x "$REQ" ] || skip_all "build first"
[ -x "$PY" ] || skip_all "no $PY"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
plan 15

N=10
"$MT" record -q -o "$W/r" -- "$REQ" $N
ok $? "record a main thread and two workers serving requests"

# slices.py FILE.json: per thread name, the slices as Perfetto builds them
# from B/E (a stack per track: each E must close the innermost B of its
# name) "THREAD slice NAME COUNT", the instants "THREAD i NAME COUNT",
# what stays open "THREAD open NAMES", and "errors N" for E events that
# close nothing or another slice
cat > "$W/slices.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"]
         if e["ph"] == "M" and e["name"] == "thread_name"}
stack, count, errors, args = {}, {}, 0, {}
for e in d["traceEvents"]:
    who = names.get((e["pid"], e["tid"]), "?")
    s = stack.setdefault(who, [])
    if e["ph"] == "B":
        s.append((e["name"], e["ts"], e.get("args", {})))
    elif e["ph"] == "E":
        if not s or s[-1][0] != e["name"] or e["ts"] < s[-1][1]:
            errors += 1
            continue
        name, ts, a = s.pop()
        key = (who, "slice", name)
        count[key] = count.get(key, 0) + 1
        if name == "req" and "end" in e.get("args", {}):
            args.setdefault(who, []).append((a.get("id"), a.get("url"), e["args"]["end"].get("id"), e["args"]["end"].get("status")))
    elif e["ph"] == "i":
        key = (who, "i", e["name"])
        count[key] = count.get(key, 0) + 1
for k in sorted(count):
    print("%s %s %s %d" % (k + (count[k],)))
for who in sorted(stack):
    if stack[who]:
        print("%s open %s" % (who, ",".join(n for n, _, _ in stack[who])))
for who in sorted(args):
    ok = all(a[0] == a[2] and a[1] == "/item/%d" % a[0] for a in args[who])
    print("%s req args %s %s" % (who, "begin+end" if ok else "wrong", sorted({a[3] for a in args[who]})))
print("errors %d" % errors)
PY

"$MT" export "$W/r" -o "$W/a.json"
ok $? "export"
"$PY" "$W/slices.py" "$W/a.json" > "$W/a.txt" 2>&1
ok $? "the JSON reads back"
sed 's/^/# /' "$W/a.txt"
is "$(grep '^worker1 slice op ' "$W/a.txt"):$(grep '^worker2 slice op ' "$W/a.txt")" \
	"worker1 slice op $N:worker2 slice op $((N / 2))" "op_start .. op_end: a slice per pair, on its thread"
is "$(grep -c ' i op_end 1$' "$W/a.txt")" 2 "an op_end before any op_start stays an instant (one per worker)"
is "$(grep -c ' slice req ' "$W/a.txt"):$(grep -c ' i req_start ' "$W/a.txt")" "0:2" \
	"req_start without --pair: an instant (the trace has no req_end)"
is "$(grep -c ' i lone_start 1$' "$W/a.txt")" 2 "lone_start (no lone_end declared) stays an instant"
is "$(grep '^worker1 ' "$W/a.txt" | grep -E ' slice (db|tx) ' | tr '\n' ' ')" \
	"worker1 slice db 1 worker1 slice tx 2 " "crossing pairs (db_entry tx_begin db_exit tx_end): db whole, tx ended and reopened"
is "$(grep -c ' open ' "$W/a.txt"):$(grep '^errors' "$W/a.txt")" "0:errors 0" "every B closed by its own E, in order"
is "$(grep -c '^reqmain i main_tick 50$' "$W/a.txt")" 1 "other markers stay instants"

"$MT" export --pair req_start:req_done "$W/r" -o "$W/p.json" 2> "$W/p.err" && "$PY" "$W/slices.py" "$W/p.json" > "$W/p.txt"
is "$?:$(cat "$W/p.err")" "0:" "export --pair req_start:req_done, nothing said"
is "$(grep -E ' slice req |req args' "$W/p.txt" | tr '\n' ' ')" \
	"worker1 slice req $N worker2 slice req $((N / 2)) worker1 req args begin+end [201] worker2 req args begin+end [202] " \
	"a slice req per request: the begin's fields as args, the end's as args.end"
"$MT" export --pair req_start:req_dnoe "$W/r" -o "$W/m.json" 2> "$W/m.err" && "$PY" "$W/slices.py" "$W/m.json" > "$W/m.txt"
is "$?:$(cat "$W/m.err")" "0:marktrace: export: warning: --pair req_start:req_dnoe: no event of the trace is named 'req_dnoe', so it makes no slice ('marktrace stats $W/r' lists the trace's events)" \
	"--pair with a name no event has: said, naming it"
is "$(grep -c ' slice req ' "$W/m.txt")" 0 "... and no slice made of it"
"$MT" export --pair req_start "$W/r" > /dev/null 2> "$W/err"
like "$?:$(cat "$W/err")" "^2:marktrace: export: --pair wants BEGIN:END" "--pair without two names: exit 2, saying what it wants"
done_testing
