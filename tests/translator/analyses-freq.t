#!/bin/sh
# The frequency analyses (irqfreq, schedfreq, syscallfreq, iolatencyfreq)
# and the options lttng-analyses users type for them: --freq-resolution,
# --min/--max with --tid and --begin/--end, --mi.  Over a trace of chosen
# durations in lttng-modules' names (lttng-kernel.py DIR freq: IRQ 19's
# handler runs 10, 20 ... 100 us; TIMER softirq 5 us three times; read
# 100, 200, 300 us, write 50, getpid 7; wake-up latencies 100 and 300 us),
# so every bucket count below is known.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
MARKTAP_SCRIPT_DIR="$top_srcdir/scripts"
export MARKTAP_SCRIPT_DIR
command -v python3 > /dev/null || skip_all "no python3 to write the trace"
python3 "$top_srcdir/tests/translator/lttng-kernel.py" "$TMP/f" freq || bail_out "lttng-kernel.py failed"
plan 32
# the histograms of GROUP in the output: "FROM TO COUNT," each bucket
buckets() { sed -n "/^$1: /,/^[^ ]/{/^ *[0-9]/p}" | awk '{ printf "%s %s %s,", $1, $2, $3 }'; }
json_ok() { python3 -m json.tool > /dev/null; }

# ---- the histograms ------------------------------------------------------
"$MT" --script irqfreq --trace "$TMP/f" --freq-resolution 3 > "$TMP/out"
ok $? "irqfreq --freq-resolution 3 runs"
is "$(grep '^irq 19' "$TMP/out")" "irq 19: 10 durations, min 10.000 us, max 100.000 us, 3 buckets of 30.000 us" \
	"irqfreq: IRQ 19's count, shortest, longest, bucket width"
is "$(buckets 'irq 19' < "$TMP/out")" "10.000 40.000 3,40.000 70.000 3,70.000 100.000 4," \
	"irqfreq: 3 buckets from 10 to 100 us, the last holds the longest"
is "$(buckets 'softirq TIMER' < "$TMP/out")" "5.000 5.001 3,5.001 5.002 0,5.002 5.003 0," \
	"irqfreq: the TIMER softirq's 3 equal durations in the first bucket"
is "$(sed -n '/^irq 19/,/^softirq/p' "$TMP/out" | sed -n 5p)" \
	"        70.000        100.000        4 ########################################" \
	"irqfreq: the fullest bucket's bar is 40 wide"
"$MT" --script irqfreq --trace "$TMP/f" --freq-resolution 10 > "$TMP/out"
is "$(buckets 'irq 19' < "$TMP/out" | tr ',' '\n' | awk '{ printf "%s ", $3 }')" "1 1 1 1 1 1 1 1 1 1 " \
	"irqfreq --freq-resolution 10: one duration a bucket"
is "$("$MT" --script irqfreq --trace "$TMP/f" | grep -c '^ ')" "42" \
	"irqfreq: 20 buckets a group by default (and two header lines)"
"$MT" --script schedfreq --trace "$TMP/f" --freq-resolution 2 > "$TMP/out"
is "$(head -1 "$TMP/out")" "all tasks: 2 durations, min 100.000 us, max 300.000 us, 2 buckets of 100.000 us" \
	"schedfreq: the wake-up to switch-in latencies"
is "$(buckets 'all tasks' < "$TMP/out")" "100.000 200.000 1,200.000 300.000 1," "schedfreq: their buckets"
"$MT" --script syscallfreq --trace "$TMP/f" --freq-resolution 2 > "$TMP/out"
is "$(grep -o '^[a-z]*: [0-9]* durations' "$TMP/out" | tr '\n' ',')" "getpid: 1 durations,read: 3 durations,write: 1 durations," \
	"syscallfreq: a histogram per system call"
is "$(buckets read < "$TMP/out")" "100.000 200.000 1,200.000 300.000 2," "syscallfreq: read's 100, 200 and 300 us in 2 buckets"
is "$("$MT" --script iolatencyfreq --trace "$TMP/f" | grep -o '^[a-z]*: [0-9]* durations' | tr '\n' ',')" \
	"read: 3 durations,write: 1 durations," "iolatencyfreq: the I/O system calls only"

# ---- --min, --max, with --tid and --begin/--end ---------------------------
"$MT" --script irqfreq --trace "$TMP/f" --min 35 --max 75 --freq-resolution 3 > "$TMP/out"
is "$(grep '^irq 19' "$TMP/out")" "irq 19: 4 durations, min 40.000 us, max 70.000 us, 3 buckets of 10.000 us" \
	"--min 35 --max 75: the durations from 35 to 75 us only"
is "$(grep -c '^softirq' "$TMP/out")" "0" "--min: the softirq's 5 us are out"
is "$("$MT" --script irqfreq --trace "$TMP/f" --min 100 | head -1)" \
	"irq 19: 1 durations, min 100.000 us, max 100.000 us, 20 buckets of 0.001 us" "--min is inclusive"
is "$("$MT" --script syscallfreq --trace "$TMP/f" --max 0.05 | head -1)" "no system call returned" \
	"--max 0.05 (50 ns): nothing so short"
is "$("$MT" --script syscallfreq --trace "$TMP/f" --max 50.000 | grep -o '^[a-z]*: [0-9]* durations' | tr '\n' ',')" \
	"getpid: 1 durations,write: 1 durations," "--max in us with decimals"
# from 6500 to 9000 us: the reads of 200 and 300 us (not the one of 100,
# nor the write at 9000); --min 250 keeps the one of 300
is "$("$MT" --script syscallfreq --trace "$TMP/f" --tid 100 --min 250 --begin +0.0055 --end +0.008 | grep -o '^[a-z]*: .*, max [0-9.]* us')" \
	"read: 1 durations, min 300.000 us, max 300.000 us" "--tid, --begin, --end and --min together"
is "$("$MT" --script syscallfreq --trace "$TMP/f" --tid 200 | head -1)" "no system call returned" "--tid of a thread without calls: none"

# ---- --mi ------------------------------------------------------------------
"$MT" --script irqfreq --trace "$TMP/f" --freq-resolution 3 --mi > "$TMP/out"
json_ok < "$TMP/out"; ok $? "irqfreq --mi: one valid JSON document"
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); h=d["histograms"][0]; print(d["analysis"], h["name"], h["count"], h["min_us"], h["max_us"], [b["count"] for b in h["buckets"]])' < "$TMP/out")" \
	"irqfreq irq 19 10 10.0 100.0 [3, 3, 4]" "irqfreq --mi: the same histogram"
for s in schedfreq syscallfreq iolatencyfreq; do
	"$MT" --script $s --trace "$TMP/f" --json | json_ok; ok $? "$s --json: valid JSON"
done
is "$("$MT" --script syscallfreq --trace "$TMP/f" --max 0.001 --mi)" '{"analysis": "syscallfreq", "histograms": []}' \
	"--mi with nothing kept: an empty list"

# ---- a trace of more durations than a live session holds -----------------
python3 "$top_srcdir/tests/translator/lttng-kernel.py" "$TMP/many" many || bail_out "lttng-kernel.py failed"
is "$("$MT" --script irqfreq --trace "$TMP/many" --freq-resolution 4 | awk '/^irq/ { printf "%s", $3 } /^ *[0-9]/ { printf " %s", $3 }')" \
	"3000 750 750 750 750" "--script over a trace: 3000 distinct durations, no MAXMAPENTRIES to raise"
"$MT" --trace "$TMP/many" "$top_srcdir/scripts/irqfreq.stp" > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^ERROR: Array overflow, check MAXMAPENTRIES" "the script by its path: the live limits, as any script"
"$MT" --script irqfreq --trace "$TMP/many" -DMAXMAPENTRIES=1000 > /dev/null 2> "$TMP/err"
like "$(head -1 "$TMP/err")" "^ERROR: Array overflow, check MAXMAPENTRIES" "--script over a trace: -DMAXMAPENTRIES still bounds it"

# ---- bad input -------------------------------------------------------------
"$MT" --script irqfreq --trace "$TMP/f" --freq-resolution 0 > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --freq-resolution: '0' is not a bucket count (1 to 1000)" \
	"--freq-resolution 0: a usage error"
"$MT" --script irqfreq --trace "$TMP/f" --min 5x > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --min: '5x' is not a duration in microseconds (US[.FRACTION], at most 3 decimals)" \
	"--min 5x: a usage error"
"$MT" --script irqfreq --trace "$TMP/f" --min 10 --max 5 > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: --min is above --max" "--min above --max: a usage error"
"$MT" --script cputop --trace "$TMP/f" --min 5 > /dev/null 2> "$TMP/err"
is "$?:$(head -1 "$TMP/err")" "1:marktap: cputop.stp takes no --min (marktap(1), ANALYSES: the options each takes)" \
	"an option the analysis does not take: an error, not ignored"
done_testing
