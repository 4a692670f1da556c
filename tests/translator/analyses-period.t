#!/bin/sh
# The period analyses (periodstats, periodtop, periodlog, periodfreq):
# periods between two events named with --period-begin/--period-end,
# matched by --period-key.  Over a user program's markers recorded by
# marktrace record (periods: N requests, ids 2i and 2i+1 started
# together, done 10 and 20 ms later), over the same program live, and
# over a kernel trace of chosen durations (lttng-kernel.py DIR freq: IRQ
# 19's handler runs 10, 20 ... 100 us, from 2000 + 200 i us on).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
MARKTAP_SCRIPT_DIR="$top_srcdir/scripts"
export MARKTAP_SCRIPT_DIR
REC=$top_builddir/runtime/marktrace/marktrace
P=$top_builddir/tests/translator/periods
[ -x "$REC" ] && [ -x "$P" ] || skip_all "build first"
command -v python3 > /dev/null || skip_all "no python3"
python3 "$top_srcdir/tests/translator/lttng-kernel.py" "$TMP/k" freq || bail_out "lttng-kernel.py failed"
plan 30
N=5
REQ="--period-begin req_start --period-end req_done"
IRQ="--period-begin irq_handler_entry --period-end irq_handler_exit --period-key irq"
json_ok() { python3 -m json.tool > /dev/null; }

# ---- a user program's markers, recorded --------------------------------
"$REC" record -q -o "$TMP/u" -- "$P" $N > /dev/null
ok $? "marktrace record the program's $N rounds of requests"
"$MT" --script periodlog --trace "$TMP/u" $REQ --period-key id > "$TMP/log"
is "$(awk 'NR > 1' "$TMP/log" | wc -l | tr -d ' ')" "$((2 * N))" "periodlog --period-key id: every request, $((2 * N)) periods"
# the even ids take 10 ms, the odd 20 ms less the few us between the
# two starts, and 2i+1 ends 10 ms after 2i (however late a loaded
# machine wakes the program: no upper bound)
is "$(awk 'NR > 1 { id = $4 + 0; d[id] = $3 + 0; n++ } END {
	for (i = 0; i < n; i += 2) {
		if (d[i] < 10000 || d[i + 1] < 19900 || d[i + 1] - d[i] < 9900)
			print "periods " i ", " i + 1 ": " d[i] ", " d[i + 1] " us" } }' "$TMP/log")" "" \
	"periodlog: ids 2i took 10 ms, ids 2i+1 20 ms (the keys matched begin to end)"
is "$(tail -n +2 "$TMP/log" | while read b e d k; do [ $((e - b)) = "$(echo "$d" | tr -d .)" ] || echo "$b $e $d"; done)" "" \
	"periodlog: END - BEGIN is the duration"
"$MT" --script periodstats --trace "$TMP/u" $REQ --period-key id > "$TMP/out"
is "$(awk 'NR == 2 { print $1, $2 }' "$TMP/out")" "req_start-req_done $((2 * N))" "periodstats: the period's name and count"
is "$(awk 'NR == 2 { print ($3 >= 10000), ($5 >= 19900), ($4 > $3 && $4 < $5) }' "$TMP/out")" "1 1 1" \
	"periodstats: min 10 ms or more, max 20 ms or more, the average between"
is "$(awk 'NR > 1 { s += $3 } END { printf "%.3f", s }' "$TMP/log")" "$(awk 'NR == 2 { print $7 }' "$TMP/out")" \
	"periodstats: the total is the log's sum"
# the 3 longest of the log, longest first
is "$("$MT" --script periodtop --trace "$TMP/u" $REQ --period-key id 3 | awk 'NR > 1 { print $3, $4 }')" \
	"$(awk 'NR > 1 { print $3, $4 }' "$TMP/log" | sort -k1,1nr | head -3)" "periodtop LIMIT: the LIMIT longest, longest first"
"$MT" --script periodfreq --trace "$TMP/u" $REQ --period-key id --freq-resolution 4 > "$TMP/out"
is "$(awk '/^ *[0-9]/ { n++; s += $3 } END { print n, s }' "$TMP/out")" "4 $((2 * N))" \
	"periodfreq --freq-resolution 4: 4 buckets holding the $((2 * N)) periods"
# without a key: the second start restarts the open period, the second
# done finds none open
is "$("$MT" --script periodstats --trace "$TMP/u" $REQ | awk 'NR == 2 { print $2 }')" "$N" \
	"no --period-key: begin and end matched in order, $N periods"
# no --period-end: from one req_start to the next
is "$("$MT" --script periodstats --trace "$TMP/u" --period-begin req_start | awk 'NR == 2 { print $1, $2 }')" \
	"req_start $((2 * N - 1))" "no --period-end: from a begin to the next, $((2 * N - 1)) periods"
# a string key: from one req_done to the next of the same status
"$MT" --script periodlog --trace "$TMP/u" --period-begin req_done --period-key status --mi > "$TMP/out"
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["period"], sorted(set(p["key"] for p in d["periods"])), len(d["periods"]))' < "$TMP/out")" \
	"req_done ['late', 'ok'] $((2 * N - 2))" "--period-key of a string field: the strings, unquoted"
# --min/--max: the log's periods from 15 ms on, and below
long=$(awk 'NR > 1 && $3 >= 15000' "$TMP/log" | wc -l | tr -d ' ')
is "$("$MT" --script periodstats --trace "$TMP/u" $REQ --period-key id --min 15000 | awk 'NR == 2 { print $2 }')" "$long" \
	"--min 15000: the periods of 15 ms and more ($long)"
is "$("$MT" --script periodstats --trace "$TMP/u" $REQ --period-key id --max 14999.999 | awk 'NR == 2 { print $2 }')" \
	"$((2 * N - long))" "--max 14999.999: the others"
is "$("$MT" --script periodstats --trace "$TMP/u" $REQ --tid 1 | awk 'NR == 2 { print $2 }')" "0" \
	"--tid of another thread: no period"
"$MT" --script periodlog --trace "$TMP/u" $REQ --period-key id --mi > "$TMP/out"
json_ok < "$TMP/out"; ok $? "periodlog --mi: valid JSON"
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["periods"]), sorted(int(p["key"]) for p in d["periods"]) == list(range(2 * '$N')))' < "$TMP/out")" \
	"$((2 * N)) True" "periodlog --mi: each id once"

# ---- live, on the program's markers -------------------------------------
is "$("$MT" --script periodstats -c "$P 3" $REQ --period-key id | awk 'NR == 2 { print $1, $2 }')" "req_start-req_done 6" \
	"live (-c): the same periods on the program's markers"

# ---- a kernel trace: exact durations -------------------------------------
is "$("$MT" --script periodstats --trace "$TMP/k" $IRQ | awk 'NR == 2' | tr -s ' ')" \
	"irq_handler_entry-irq_handler_exit 10 10.000 55.000 100.000 30.276 550.000" \
	"periodstats over lttng-modules' irq_handler_entry/exit, key irq: count, min, avg, max, stdev, total"
is "$("$MT" --script periodfreq --trace "$TMP/k" $IRQ --freq-resolution 3 | awk '/^ *[0-9]/ { printf "%s ", $3 }')" "3 3 4 " \
	"periodfreq: 10-40, 40-70, 70-100 us: 3, 3 and 4 periods"
is "$("$MT" --script periodtop --trace "$TMP/k" $IRQ 2 | tr -s ' ' | tail -2)" \
	"1700000000003800000 1700000000003900000 100.000 19
1700000000003600000 1700000000003690000 90.000 19" "periodtop 2: the two longest, with their times and key"
# from 2500 us: the periods from the fourth (40 us) on; at most 60 us
is "$("$MT" --script periodstats --trace "$TMP/k" $IRQ --begin +0.0015 --max 60 | awk 'NR == 2 { print $2, $3, $5 }')" \
	"3 40.000 60.000" "--begin with --max: the periods of 40, 50 and 60 us"
is "$("$MT" --script periodstats --trace "$TMP/k" $IRQ --mi)" \
	'{"analysis": "periodstats", "period": "irq_handler_entry-irq_handler_exit", "count": 10, "min_us": 10.000, "avg_us": 55.000, "max_us": 100.000, "stdev_us": 30.276, "total_us": 550.000}' \
	"periodstats --mi"

# ---- bad input -------------------------------------------------------------
"$MT" --script periodstats --trace "$TMP/u" > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err" | sed 's/ near .*//')" "1:ERROR: the period analyses need --period-begin EVENT (and --period-end EVENT, --period-key FIELD)" \
	"no --period-begin: an error"
"$MT" --script periodstats --trace "$TMP/u" --period-end req_done > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --period-end goes with --period-begin EVENT" "--period-end alone: a usage error"
"$MT" --script periodstats --trace "$TMP/u" --period-begin 'req"start' > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --period-begin: 'req\"start' is not an event name" "an event name with a quote: a usage error"
"$MT" --script periodstats --trace "$TMP/u" --period-begin req_strat --period-end req_done > "$TMP/out" 2> "$TMP/err"
is "$?:$(awk 'NR == 2 { print $2 }' "$TMP/out"):$(cat "$TMP/err")" "0:0:WARNING: no event named req_strat (--period-begin) came" \
	"a period event that never came: no period, and a warning naming it"
"$MT" --script periodstats --trace "$TMP/u" --period-begin req_start --period-end req_done --period-key status > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err" | sed 's/ near .*//')" "1:ERROR: --period-key status: event req_start has no field status (its fields: id; or tid, pid, cpu, execname)" \
	"--period-key of a field only the end event has: an error"
"$MT" --script periodstats --trace "$TMP/u" --period-begin req_start --mi --freq-resolution 4 > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: periodstats.stp takes no --freq-resolution (marktap(1), ANALYSES: the options each takes)" \
	"periodstats takes no --freq-resolution"
"$MT" --script periodstats --trace "$TMP/u" $REQ --period-key nosuch > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err" | sed 's/ near .*//')" "1:ERROR: --period-key nosuch: event req_start has no field nosuch (its fields: id; or tid, pid, cpu, execname)" \
	"--period-key of a field the events lack: an error naming theirs"
done_testing
