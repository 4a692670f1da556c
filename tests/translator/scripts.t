#!/bin/sh
# Every example of scripts/ translates; those that end by themselves run.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
set -- "$top_srcdir"/scripts/*.stp
plan $(( $# + 3 ))
for f; do "$MT" -p3 "$f" >/dev/null; ok $? "$(basename "$f") translates"; done
is "$("$MT" "$top_srcdir/scripts/hello.stp")" "hello from marktap" "hello.stp"
is "$("$MT" "$top_srcdir/scripts/countdown.stp" 2 | tr '\n' ' ')" "2... 1... liftoff " "countdown.stp 2"
like "$("$MT" "$top_srcdir/scripts/latency-hist.stp" | head -1)" "^n=100 min=0 max=96 avg=46" "latency-hist.stp"
done_testing
