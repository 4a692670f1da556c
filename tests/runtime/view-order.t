#!/bin/sh
# Time order: events spread at random over 4 streams of 2 traces come out
# in timestamp order, each exactly once.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
plan 5

N=3000
# Event k has timestamp 1000 + 10 k and field seq = k; it goes to a random
# trace and stream, so each stream holds an increasing subsequence.
awk -v n=$N 'BEGIN {
	srand(7);
	for (k = 0; k < n; k++) { t = int(rand() * 2); c = int(rand() * 2); ev[t, c] = ev[t, c] sprintf("ev %d tick 1 1 p %d\n", 1000 + 10 * k, k) }
	for (t = 0; t < 2; t++) {
		printf "trace %s\nmarker 0 tick seq %%d\n", t ? "ust" : "kernel"
		for (c = 0; c < 2; c++) {
			printf "stream %d\npacket\n", c
			# a packet boundary now and then
			m = split(ev[t, c], lines, "\n")
			for (i = 1; i < m; i++) { print lines[i]; if (i % 97 == 0) print "packet" }
		}
	}
}' > "$TMP/order.trace"
gen "$TMP/o" < "$TMP/order.trace"
"$MT" view --no-delta --relative "$TMP/o" > "$TMP/out"
ok $? "view exits 0"
is "$(wc -l < "$TMP/out" | tr -d ' ')" "$N" "every event once"
is "$(sed 's/.*seq=//' "$TMP/out" | awk '$1 != NR - 1 { print "line " NR ": " $0; exit }')" "" \
   "events in timestamp order (seq 0, 1, 2, ...)"
is "$(cut -d' ' -f2 "$TMP/out" | sort | uniq -c | wc -l | tr -d ' ')" "2" "both CPUs present"
is "$(head -1 "$TMP/out" | cut -d' ' -f1)" "[0.000000000]" "starts at the first event"
done_testing
