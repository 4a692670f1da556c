#!/bin/sh
# Native handlers: marker handlers that only add to long globals run in the
# traced process without Lua (translator/native.c, runtime/script/host.c).
# Which handlers get a plan (-p3), and that every script gives the same
# results with the plans (default) and without them (MARKTAP_NATIVE=0),
# the results being the ones stap's semantics give.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
T=$top_builddir/tests/script/target
[ -x "$MTBIN" ] && [ -x "$T" ] || skip_all "build first (make check builds tests/script/target)"
T=$(own_copy "$T") || bail_out "cannot copy $T"
P="process(\"$T\")"
mt() { timeout 60 "$MTBIN" "$@"; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
plan 47

# ---- which handlers get a plan ----
plan_of() { mt -p3 -e "$1" | sed -n 's/^rt.native("probe_[0-9]*", "\([^"]*\)".*/\1/p'; }

is "$(plan_of "global c, n, b probe $P.mark(\"ev\") { c[tid()]++; n += \$l; b[pid(), \$n] -= 2; n-- } probe end { println(n) }")" \
	"1 #1 tid;2 a3;3 #-2 pid a1;2 #-1" "counts, sums, negative amounts, tuple keys from tid pid and arguments"
is "$(plan_of "global c probe $P.mark(\"ev\") { c[cpu(), 3]++; c[cpu(), 4] += -\$n }")" \
	"1 #1 cpu #3;1 -a1 cpu #4" "cpu() and constant keys, a negated argument"
is "$(plan_of "global c probe $P.mark(\"ev\") { c++ } probe $P.mark(\"ev\") { if (c > 3) println(c) }")" "" \
	"a global read by a marker handler: no plan"
is "$(plan_of "global c probe $P.mark(\"ev\") { c[\$n % 4]++ }")" "" "a computed key: no plan"
is "$(plan_of "global c probe $P.mark(\"ev\") if (\$n > 2) { c++ }")" "" "a probe condition: no plan"
is "$(plan_of "global c function f() { return c } probe $P.mark(\"ev\") { c++ } probe end { println(f()) }")" "" \
	"a global a function reads: no plan"
is "$(plan_of "global c, d probe $P.mark(\"ev\") { c++; d = 1 }")" "" "a handler that also assigns: no plan"
is "$(plan_of "global c probe $P.mark(\"ev\") { c++ } probe timer.s(1) { println(c); c = 0 } probe end { println(c) }")" \
	"1 #1" "globals read and reset by begin, timer and end probes (marktap's) keep the plan"

# ---- the same results with and without plans ----
# the run's output without the program's "done", then its stderr
# (the column of an error depends on the length of the target's path)
run() { { mt "$@" 2> "$TMP/err" | grep -v '^done$'; sed 's/<input>:1:[0-9]*/<input>:1:C/' "$TMP/err"; } }
both() { # NAME EXPECTED ARGS...: native then Lua
	name=$1 want=$2
	shift 2
	n=$(run "$@")
	l=$(MARKTAP_NATIVE=0 run "$@")
	is "$n" "$want" "$name (native)"
	is "$l" "$want" "$name (Lua)"
}

both "4 threads: per-thread counts, a sum of a long argument, tuple keys" \
	"4 threads, 12000 hits, sum 17994000000000000, 3000 keys of -8, t 0" \
	-DMAXMAPENTRIES=10000 -DMAXACTION=100000 -c "$T threads 4 3000" -e "global c, n, b, t
	probe $P.mark(\"ev\") { c[tid()]++; n += \$l; b[pid(), \$n] -= 2; t += \$n; t -= \$n }
	probe end { x = 0; foreach (k in c) { x++; s += c[k] }
		y = 0; foreach ([p, k] in b) { y++; if (b[p, k] != -8) bad++ }
		printf(\"%d threads, %d hits, sum %d, %d keys of %d, t %d\\n\", x, s, n, y, bad ? 0 : -8, t) }"

both "insertion order of new keys (one thread)" "7 6 5 4 3 2 1 0 |0 1 2 3 4 5 6 7 " \
	-c "$T count 8" -e "global a probe $P.mark(\"ev\") { a[\$n]++ }
	probe end { foreach (k- in a) printf(\"%d \", k); printf(\"|\"); foreach (k in a) printf(\"%d \", k); println(\"\") }"

both "a fork: the parent's and the child's hits, each counted once" "2 pids, 600 hits" \
	-c "$T fork 300" -e "global a probe $P.mark(\"ev\") { a[pid()]++ }
	probe end { foreach (p in a) { n++; s += a[p] } printf(\"%d pids, %d hits\\n\", n, s) }"

both "a native handler and a Lua handler on one marker" "0 1 2 3 done
4" \
	-c "$T count 4" -e "global c probe $P.mark(\"ev\") { c++ } probe $P.mark(\"ev\") { printf(\"%d \", \$n) }
	probe end { println(c) }"

both "exit() in a Lua handler stops the native ones too" "6" \
	-c "$T count 20" -e "global c probe $P.mark(\"ev\") { c++ } probe $P.mark(\"ev\") { if (\$n == 5) exit() }
	probe end { println(c) }"

both "MAXMAPENTRIES overflow: stap's error, the session stops" \
	"ERROR: Array overflow, check MAXMAPENTRIES near operator '++' at <input>:1:C
WARNING: Number of errors: 1, skipped probes: 0" \
	-DMAXMAPENTRIES=10 -c "$T count 100" -e "global a probe $P.mark(\"ev\") { a[\$n]++ } probe end { println(\"end\") }"

# -t: the hits timed in the traced process come home with its globals
out=$(mt -t -c "$T threads 4 3000" -e "global c probe $P.mark(\"ev\") { c++ } probe end { println(c) }" 2>&1)
is "$(printf '%s\n' "$out" | sed -n 's/^process("[^"]*").mark("ev"), (<input>:1:10), hits: \([0-9]*\), cycles: [0-9]*min.*index: 0$/\1/p')" \
	12000 "-t: a marker handler's 12000 hits in 4 threads of a traced process, in the report"

# a timer resets what the process counts natively: nothing lost, nothing twice
out=$(mt -c "$T slow 40 25" -e "global c, total probe $P.mark(\"ev\") { c++ } probe timer.ms(150) { total += c; c = 0 }
	probe end { println(total + c) }" 2>&1)
is "$(echo "$out" | tail -1)" "40" "a timer's reset of a native counter: every hit counted once"

# many distinct keys in one thread: the thread's table grows, then folds
out=$(mt -DMAXMAPENTRIES=100000 -DMAXACTION=1000000 -c "$T count 40000" -e "global a probe $P.mark(\"ev\") { a[\$n] += 2 }
	probe end { foreach (k in a) { n++; s += a[k] } printf(\"%d %d\\n\", n, s) }" 2>&1)
is "$(echo "$out" | tail -1)" "40000 80000" "40000 keys from one thread: every one folded once"

# the plans are what runs: marktap -v gives each process's handler runs
S="global c probe $P.mark(\"ev\") { c++ } probe $P.mark(\"ev\") { if (\$n < 0) println(\$n) }"
is "$(mt -v -c "$T count 50" -e "$S" 2>&1 | sed -n 's/.*: \([0-9]* hits in native handlers, [0-9]* in Lua\)$/\1/p')" \
	"50 hits in native handlers, 50 in Lua" "-v: the counting handler ran natively, the other in Lua"
is "$(MARKTAP_NATIVE=0 mt -v -c "$T count 50" -e "$S" 2>&1 | sed -n 's/.*: \([0-9]* hits in native handlers, [0-9]* in Lua\)$/\1/p')" \
	"0 hits in native handlers, 100 in Lua" "MARKTAP_NATIVE=0: both in Lua"

# ---- statistics ----
is "$(plan_of "global s, m probe $P.mark(\"ev\") { s <<< \$n; m[tid(), 2] <<< \$l } probe end { println(@avg(s)) }")" \
	"<1 a1;<2 a3 tid #2" "<<< into statistics and arrays of statistics: a plan"
is "$(plan_of "global s probe $P.mark(\"ev\") { s <<< \$n } probe end { print(@hist_log(s)) }")" "" \
	"statistics printed as a histogram: no plan (Lua counts the buckets)"
# (not @variance: stap's integer algorithm combines per-CPU parts, here
# per-exchange parts, so its value depends on when the exchanges happen)
both "statistics: @count @sum @min @max @avg, per thread too" \
	"3000 1498500 0 999 499
3 threads: 1000 0 999000000000 499500000000" \
	-c "$T threads 3 1000" -e "global s, m probe $P.mark(\"ev\") { s <<< \$n; m[tid()] <<< \$l }
	probe end { printf(\"%d %d %d %d %d\\n\", @count(s), @sum(s), @min(s), @max(s), @avg(s))
		foreach (t in m) { n++; if (@count(m[t]) != 1000 || @min(m[t]) != 0 || @max(m[t]) != 999000000000) bad++; a = @avg(m[t]) }
		printf(\"%d threads: %d %d %d %d\\n\", n, bad ? -1 : 1000, 0, 999000000000, a) }"
# values rise with \$n: each period's minimum is above the last one's maximum
# when the statistics a timer deletes start empty in the process too
both "a timer's delete of statistics: every period starts empty" "40 0" \
	-c "$T slow 40 25" -e "global s, last = -1, bad, total probe $P.mark(\"ev\") { s <<< \$n }
	probe timer.ms(200) { if (@count(s)) { if (@min(s) <= last) bad++; last = @max(s); total += @count(s) } delete s }
	probe end { if (@count(s)) { if (@min(s) <= last) bad++; total += @count(s) } printf(\"%d %d\\n\", total, bad) }"
is "$(mt -v -c "$T count 30" -e "global s probe $P.mark(\"ev\") { s <<< \$n } probe end { println(@sum(s)) }" 2>&1 |
	sed -n 's/.*: \([0-9]* hits in native handlers, [0-9]* in Lua\)$/\1/p')" \
	"30 hits in native handlers, 0 in Lua" "-v: the statistics handler ran natively"

# ---- conditions: if/else on comparisons of sources, "if (c) next" ----
is "$(plan_of "global c, d, e probe $P.mark(\"ev\") { if (\$n < 3) next; c++; if (\$n > 10) { d[tid()]++ } else e <<< \$n }")" \
	"?a1]#3 1 #1;?a1]#3 ?a1>#10 2 #1 tid;?a1]#3 ?a1[#10 <3 a1" "guards from if, else and if-next"
is "$(plan_of "global c probe $P.mark(\"ev\") { if (\$s == \"odd\") c++ }")" "" "a string comparison: no plan"
is "$(plan_of "global c probe $P.mark(\"ev\") { c[\$s . \"x\"]++ }")" "" "a computed string key: no plan"
both "conditional counting: the same results" "34 18 16 3 10 2" \
	-c "$T threads 2 20" -e "global c, d, e, f probe $P.mark(\"ev\") { if (\$n < 3) next; c++
		if (\$n > 10) { d[tid()]++ } else e <<< \$n; if (\$n == 7) f++ }
	probe end { foreach (t in d) x += d[t]; printf(\"%d %d %d %d %d %d\\n\", c, x, @count(e), @min(e), @max(e), f) }"

# ---- string keys: a marker's %s argument ----
is "$(plan_of "global c, b probe $P.mark(\"ev\") { c[\$s]++; b[\$s, tid()] += \$n }")" "1 #1 s2;2 a1 s2 tid" \
	"string arguments as keys"
both "string keys: per string, and with tid, over 3 threads" "even=1500 odd=1500 even:748500 odd:750000 " \
	-c "$T threads 3 1000" -e "global c, b, x probe $P.mark(\"ev\") { c[\$s]++; b[\$s, tid()] += \$n }
	probe end { foreach (k in c) printf(\"%s=%d \", k, c[k]); foreach ([s, t] in b) x[s] += b[s, t]
		foreach (s in x) printf(\"%s:%d \", s, x[s]); println(\"\") }"
both "string keys cut at MAXSTRINGLEN - 1 bytes, as Lua cuts them" "ev=2 od=2 " \
	-DMAXSTRINGLEN=3 -c "$T count 4" -e "global c probe $P.mark(\"ev\") { c[\$s]++ }
	probe end { foreach (k in c) printf(\"%s=%d \", k, c[k]); println(\"\") }"

# ---- execname() as a key ----
is "$(plan_of "global c probe $P.mark(\"ev\") { c[execname(), pid()]++ }")" "1 #1 sx pid" "execname() as a key"
both "execname() keys: the same results" "target 200" \
	-c "$T threads 2 100" -e "global c probe $P.mark(\"ev\") { c[execname(), pid()]++ }
	probe end { foreach ([e, p] in c) printf(\"%s %d\\n\", e, c[e, p]) }"

# ---- a plan the host cannot use (a damaged module file): the Lua handler runs ----
(cd "$TMP" && mt -p4 -m bad -e "global c probe $P.mark(\"ev\") { c[tid()]++ } probe end { foreach (t in c) println(c[t]) }" > /dev/null 2>&1)
sed 's/rt.native("probe_0", "1 #1 tid"/rt.native("probe_0", "1 #1 a9 ?<<"/' "$TMP/bad.mtm" > "$TMP/bad2.mtm"
out=$(mt -v -c "$T count 5" "$TMP/bad2.mtm" 2>&1)
like "$out" "0 hits in native handlers, 5 in Lua" "a plan that does not parse or fit the marker: the handler runs in Lua"
is "$(echo "$out" | tail -1)" "5" "with the same result"
