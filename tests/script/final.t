#!/bin/sh
# A traced process's results reach marktap however it ends (_exit, exec,
# abort; a kill is reported), and a marker hit from a signal handler that
# interrupts the script host never deadlocks.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
T=$top_builddir/tests/script/target
[ -x "$MTBIN" ] && [ -x "$T" ] || skip_all "build first (make check builds tests/script/target)"
T=$(own_copy "$T") || bail_out "cannot copy $T"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
P="process(\"$T\")"
mt() { timeout 60 "$MTBIN" "$@"; }
plan 12

COUNT="global f probe $P.mark(\"ev\") { f++ } probe end { println(f) }"
# in Lua (not a native plan): the path that takes the handler lock
LUACOUNT="global f probe $P.mark(\"ev\") { f = f + 1; if (\$n < -5) println(\"never\") } probe end { println(f) }"

# 1. fork children that end with _exit(): 20 x 100 hits
out=$(mt -c "$T forkexit 20 100" -e "$COUNT" 2>&1)
is "$(echo "$out" | tail -1)" "2000" "20 fork children x 100 hits, each ending with _exit(): all counted"
out=$(MARKTAP_NATIVE=0 mt -c "$T forkexit 20 100" -e "$LUACOUNT" 2>&1)
is "$(echo "$out" | tail -1)" "2000" "the same through Lua handlers"

# 2. _exit() in the traced program itself
out=$(mt -c "$T _exit 10" -e "$COUNT" 2>&1)
is "$(echo "$out" | tail -1)" "10" "_exit() after 10 hits: f=10"

# 3. exec into a program without libmarktap
out=$(mt -c "$T execv 10 /bin/true" -e "$COUNT" 2>&1)
is "$(echo "$out" | tail -1)" "10" "exec of /bin/true after 10 hits: the 10 arrive"
echo "$out" | grep -q "ended without"
ok $([ $? != 0 ]; echo $?) "and no loss is reported for it"
# exec of itself: both images count
out=$(mt -c "$T exec 5" -e "$COUNT" 2>&1)
is "$(echo "$out" | tail -1)" "10" "exec of a traced image: 5 before + 5 after"

# 4. abort()
out=$(mt -c "$T abort 7" -e "$COUNT" 2>&1)
is "$(echo "$out" | tail -1)" "7" "abort() after 7 hits: f=7"

# 5. SIGKILL loses what was not exchanged, and marktap says so
# (killed once its first hit ran: the handler's line reached marktap's output)
mt -c "sh -c '$T slow 100 10 & p=\$!; i=0; until grep -qs first $TMP/kill.out || [ \$i -ge 3000 ]; do sleep 0.01; i=\$((i + 1)); done; kill -9 \$p; wait'" \
	-e "global f probe $P.mark(\"ev\") { if (!f++) println(\"first\") } probe end { println(f) }" > "$TMP/kill.out" 2>&1
out=$(cat "$TMP/kill.out")
like "$out" "WARNING: 1 process\\(es\\) ended without handing their last results" \
	"a killed process: the loss is reported"

# 6. a marker hit from a SIGALRM handler every 20 us, with the program
#    hitting it too: no deadlock; every hit is run or counted as skipped
for run in 1 2; do
	out=$(MARKTAP_NATIVE=0 mt -DMAXSKIPPED=100000000 -c "$T sigalrm 200000" -e "$LUACOUNT" 2>&1); rc=$?
	[ $rc = 124 ] && break
done
ok $([ $rc != 124 ]; echo $?) "SIGALRM handler hitting the marker: no deadlock (2 runs of 200000 hits)"
sig=$(echo "$out" | sed -n 's/^signals //p')
f=$(echo "$out" | grep -E '^[0-9]+$' | tail -1)
skipped=$(echo "$out" | sed -n 's/.*skipped probes: \([0-9]*\).*/\1/p')
ok $([ -n "$sig" ] && [ "${sig:-0}" -gt 0 ]; echo $?) "the timer fired during the run ($sig signals)"
is "$(( ${f:-0} + ${skipped:-0} ))" "$(( 200000 + ${sig:-0} ))" \
	"every hit either ran ($f) or was skipped and counted (${skipped:-0})"
# (a process-directed signal taken by one of libmarktap's threads ran the
# program's handler there, and its hit could wait for the handler lock
# past the end and be lost)
is "$(echo "$out" | sed -n 's/^on other threads //p')" "0" \
	"the program's signal handler never runs on libmarktap's threads"
done_testing
