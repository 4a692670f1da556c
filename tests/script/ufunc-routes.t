#!/bin/sh
# How function probes run (runtime/script/ufunc*.c), on functions written
# in assembly for it (tests/script/ufunc-routes.c): a 5-byte jump over a
# 7-byte instruction, over a RIP-relative one (its copy's displacement
# moved), over a call and a jc (their copies aim at the same targets, the
# call with the original's return address), a 2-byte jump to a jump in
# the padding before a function whose first instruction is 3 bytes, a
# trap where it is 1 byte, a trap stepped over in place at a jrcxz;
# MARKTAP_UFUNC_STATS=1 says which each took.
# Every call seen at entry and return, the program's results its own,
# and after -x every byte of the code and its padding as before.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
LIBMT=$top_builddir/runtime/.libs/libmarktap.so.0
SRC=$top_srcdir/tests/script/ufunc-routes.c
[ -x "$MTBIN" ] || skip_all "build first"
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$CC" -g -O2 -o "$TMP/rt" "$SRC" -lpthread || skip_all "cannot build $SRC"
R=$TMP/rt
P="process(\"$R\")"
mt() { timeout 120 "$MTBIN" "$@"; }
plan 12

COUNT="global c probe $P.function(\"r_*\") { c[ppfunc()]++ } probe $P.function(\"r_*\").return { c[ppfunc().\"/r\"] += \$return > 0 }
	probe end { foreach (k+ in c) printf(\"%s=%d \", k, c[k]); println(\"\") }"
WANT="r_call=500 r_call/r=500 r_inplace=500 r_inplace/r=500 r_jcc=500 r_jcc/r=500 r_jump=1500 r_jump/r=1500 r_one=500 r_one/r=500 r_pad=500 r_pad/r=500 r_rip=500 r_rip/r=500 "
for jump in 1 0; do
	out=$(MARKTAP_UFUNC_JUMP=$jump MARKTAP_UFUNC_STATS=1 mt -c "$R 500" -e "$COUNT" 2>&1)
	is "$(echo "$out" | grep -v '^WARNING')" "$("$R" 500)
$WANT" "MARKTAP_UFUNC_JUMP=$jump: every call at entry and return, with its value; the program's sum"
	case $jump in
	1) want="8 jump, 2 jump through padding, 2 trap out of line, 2 trap in place" ;;
	0) want="0 jump, 0 jump through padding, 12 trap out of line, 2 trap in place" ;;
	esac
	like "$out" "WARNING: process [0-9]+: the program: 14 probes: $want" \
		"MARKTAP_UFUNC_JUMP=$jump: the ways they run ($want)"
	# the call's copy pushed the original's return address: r_jump
	# returns into r_call (and into run() when called from there or
	# through r_inplace's jump)
	out=$(MARKTAP_UFUNC_JUMP=$jump mt -c "$R 5" -e "global c probe $P.function(\"r_jump\").return { c[usymname(uaddr())]++ }
		probe end { foreach (k+ in c) printf(\"%s=%d \", k, c[k]); println(\"\") }" 2>&1)
	is "$out" "$("$R" 5)
r_call=5 run=10 " "MARKTAP_UFUNC_JUMP=$jump: a call run from its copy returns where the original's would"
done
# RIP-relative: the copy reads what the original reads (r_base = 1000)
out=$(mt -c "$R 3" -e "probe $P.function(\"r_rip\").return { printf(\"%d \", \$return) }" 2>&1)
is "$out" "1000 1001 1002 $("$R" 3)" "a RIP-relative first instruction run from its copy: the same values"

# a step in place, again and again: each step's trap is taken as the
# step's even when the kernel misreports it (ufunc_trap.c, is_step():
# under a nested hypervisor about one step in 20000 came as TRAP_BRKPT,
# and the program died of the SIGTRAP passed on)
out=$(mt -c "$R 200000" -e "global c probe $P.function(\"r_inplace\") { c++ } probe end { println(c) }" 2>&1)
is "$out" "$("$R" 200000)
200000" "200000 steps in place: every hit, the program's own sum"

# -x into the running program (libmarktap preloaded, as its agent): two
# threads call the functions while marktap patches and puts back the code
xround() {
	rm -f "$TMP/fifo" "$TMP/x.out"
	mkfifo "$TMP/fifo"
	LD_PRELOAD=$LIBMT "$R" wait 2 < "$TMP/fifo" > "$TMP/x.out" &
	tpid=$!
	exec 9> "$TMP/fifo"
	wait_for 20 grep -q ready "$TMP/x.out" || echo "not ready"
	mt -x "$tpid" -T 1 -e "global c probe $P.function(\"r_*\") { c++ } probe $P.function(\"r_*\").return { c++ }
		probe end { println(c > 100 ? \"hits\" : sprint(c)) }"
	exec 9>&-
	wait "$tpid"; echo "status $?"
	cat "$TMP/x.out"
}
for round in 1 2 3; do
	out=$(xround 2>&1)
	is "$out" "hits
status 0
ready
calls made
code as before" "-x, round $round: hits while two threads run the code; after, every byte of the functions and their padding as before"
done
# the padding's jump and the 2-byte one are gone after the session; the
# program runs unprobed as it did
out=$(mt -u -c "$R 5" -e "probe $P.function(\"r_pad\") { }" 2>&1)
is "$out" "$("$R" 5)" "-u on r_pad: the program's output is its own"
