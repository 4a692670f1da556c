#!/bin/sh
# Per-CPU rings written in restartable sequences (--sync percpu, the
# default where it can be had) against the locked ones: every event kept
# and in order while threads are moved from CPU to CPU mid-event, several
# processes on one CPU's ring, threads whose rseq area is ours (glibc's
# turned off), flushes from marktrace's side, and what stats says.
. "$(dirname "$0")/../lib/record.sh"
plan 23

# 1. the default here, said by stats and the metadata
"$MT" record -q -o "$W/def" -- "$STRESS" 1 1000
ok $? "record with the default --sync"
st=$("$MT" stats "$W/def")
like "$st" "buffers: +per-CPU, written from their own CPU only \\(restartable sequences\\)" \
	"stats: the default is per-CPU rings written in restartable sequences"
grep -q 'buffers = "per-CPU, written from their own CPU only' "$W/def/metadata"
ok $? "the metadata's env says so too"

# 2. 4 threads on the machine's CPUs, moved every 20 us: nothing lost or reordered
"$MT" record -q --sync percpu -o "$W/mig" --subbuf-size 4M --num-subbuf 16 -- "$STRESS" 4 300000 migrate
ok $? "percpu: 4 threads x 300000 events, moved from CPU to CPU"
"$MT" view --relative --no-delta "$W/mig" > "$W/mig.txt"
is "$(check_seqs "$W/mig.txt")" "4 1200000 0 0" "every event, every seq in order, time never goes back"
is "$("$MT" stats "$W/mig" | awk '/^lost:/ { print $2 }')" "0" "nothing lost"

# 3. small buffers with moves and the switch timer's flushes at 1 ms:
# delivered + lost = emitted, exactly, and the trace reads whole
"$MT" record -q --sync percpu --switch-timer 1 -o "$W/small" --subbuf-size 4k --num-subbuf 2 -- \
	"$STRESS" 3 100000 migrate
ok $? "percpu, 2 x 4 KiB sub-buffers, switch timer 1 ms"
view_count "$W/small" "$W/small.txt" stress_ev
diag "delivered $delivered, lost $lost"
is "$((delivered + lost))" "300000" "delivered + lost = 300000 emitted"
read -r _ _ _ back <<EOT
$(check_seqs "$W/small.txt")
EOT
is "$back" "0" "time never goes back"
if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null; then
	n=$("$BABELTRACE2" "$W/small" 2>/dev/null | grep -c 'stress_ev:')
	is "$n" "$delivered" "babeltrace2 reads the same $delivered events"
else
	ok 0 "# SKIP babeltrace2 not installed"
fi

# 4. three processes share each CPU's ring
"$MT" record -q --sync percpu -o "$W/procs" --subbuf-size 4M --num-subbuf 8 -- \
	sh -c '"$0" 2 100000 & "$0" 2 100000 & "$0" 2 100000 migrate; wait' "$STRESS"
ok $? "percpu: 3 processes x 2 threads"
"$MT" view --relative --no-delta "$W/procs" > "$W/procs.txt"
n=$(grep -c 'stress_ev:' "$W/procs.txt")
is "$n" "600000" "all 600000 events of the three"

# 5. glibc registers no rseq area: libmarktap registers one per thread
GLIBC_TUNABLES=glibc.pthread.rseq=0 "$MT" record -q --sync percpu -o "$W/own" \
	--subbuf-size 4M --num-subbuf 8 -- "$STRESS" 3 100000 migrate
ok $? "percpu with glibc's rseq turned off"
"$MT" view --relative --no-delta "$W/own" > "$W/own.txt"
is "$(check_seqs "$W/own.txt")" "3 300000 0 0" "... every event of every thread, in order"

# 6. every kind of field through the recorder's plan (record.c), to the byte
# as the program passed it: marktrace view and babeltrace2
cat > "$W/ty.c" <<'EOF'
#include <marktap/marker.h>
int main(void)
{
	for (int i = 0; i < 2; i++) {
		trace_mark(ints, "c %c hh %hhd hu %hhu h %hd i %d u %u ld %ld lu %lu ll %lld x %x p %p",
			   'A' + i, (signed char)(-100 - i), (unsigned char)(200 + i), (short)(-30000 + i),
			   -2000000000 - i, 4000000000u + (unsigned)i, -9000000000000000000L - i,
			   18000000000000000000UL + (unsigned long)i, -5LL - i, 0xdeadbeefu + (unsigned)i,
			   (void *)(0x1234L + i));
		const char *none = i ? "" : (const char *)0;   /* NULL: "(null)" */
		trace_mark(more, "d %f s %s e %s n %d z %zu", 1.5 + i,
			   "a string longer than sixteen bytes", none, i, 7UL);
	}
	return 0;
}
EOF
if ${CC:-cc} -O2 -I"$top_srcdir/runtime/include" -o "$W/ty" "$W/ty.c" -L"$B/runtime/.libs" -lmarktap \
	-Wl,-rpath,"$B/runtime/.libs" > "$W/cc.log" 2>&1; then
	"$MT" record -q -o "$W/ty.t" -- "$W/ty"
	"$MT" view "$W/ty.t" | sed -n 's/.* \(ints\|more\): /\1: /p' > "$W/ty.txt"
	is "$(cat "$W/ty.txt")" "ints: c='A' hh=-100 hu=200 h=-30000 i=-2000000000 u=4000000000 ld=-9000000000000000000 lu=18000000000000000000 ll=-5 x=0xdeadbeef p=0x1234
more: d=1.5 s=\"a string longer than sixteen bytes\" e=\"(null)\" n=0 z=7
ints: c='B' hh=-101 hu=201 h=-29999 i=-2000000001 u=4000000001 ld=-9000000000000000001 lu=18000000000000000001 ll=-6 x=0xdeadbef0 p=0x1235
more: d=2.5 s=\"a string longer than sixteen bytes\" e=\"\" n=1 z=7" "every field type, every value, as passed"
	if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null; then
		bt=$("$BABELTRACE2" "$W/ty.t" 2>&1 | grep -E ' (ints|more):' | sed 's/.*}, { //; s/ }$//')
		is "$(echo "$bt" | head -1)" "c = 65, hh = -100, hu = 200, h = -30000, i = -2000000000, u = 4000000000, ld = -9000000000000000000, lu = 18000000000000000000, ll = -5, x = 0xDEADBEEF, p = 0x1234" \
			"babeltrace2 reads the same integers"
		is "$(echo "$bt" | sed -n 4p)" 'd = 2.5, s = "a string longer than sixteen bytes", e = "", n = 1, z = 7' \
			"... and the double, the strings and the size_t"
	else
		ok 0 "# SKIP babeltrace2 not installed"
		ok 0 "# SKIP babeltrace2 not installed"
	fi
else
	for i in 1 2 3; do ok 0 "# SKIP ${CC:-cc} cannot build: $(head -1 "$W/cc.log")"; done
fi

# 7. the locked rings still work, and say so; a bad mode is refused
# (not moved about: a thread that reserves in the ring of the CPU it just
# left takes its time from another CPU's TSC, which may lag by the skew the
# clock's check allows: marktrace(1), --sync)
"$MT" record -q --sync locked -o "$W/lk" --subbuf-size 4M --num-subbuf 16 -- "$STRESS" 2 100000
"$MT" view --relative --no-delta "$W/lk" > "$W/lk.txt"
is "$(check_seqs "$W/lk.txt")" "2 200000 0 0" "--sync locked: every event, in order"
like "$("$MT" stats "$W/lk")" "buffers: +per-CPU, shared with locked instructions" "stats says locked"
err=$("$MT" record -q --sync spin -o "$W/bad" -- true 2>&1)
rc=$?
ok $(( rc == 0 )) "--sync spin is refused: $err"

# 8. marktrace kept to one CPU by a cpuset (it may not run on the others, so
# it could not flush their rings from there): locked rings, said; --sync
# percpu refused with the reason
CS=/sys/fs/cgroup/cpuset
if [ "$(id -u)" = 0 ] && [ "$(nproc)" -gt 1 ] && [ -w "$CS/cgroup.procs" ] &&
   mkdir "$CS/mt-sync-$$" 2>/dev/null; then
	echo 0 > "$CS/mt-sync-$$/cpuset.cpus"
	cat "$CS/cpuset.mems" > "$CS/mt-sync-$$/cpuset.mems"
	in_cpuset() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CS/mt-sync-$$" "$@"; }
	in_cpuset "$MT" record -q -o "$W/cs" -- "$STRESS" 2 10000
	like "$("$MT" stats "$W/cs")" "buffers: +per-CPU, shared with locked instructions" \
		"in a one-CPU cpuset: locked rings by default"
	is "$("$MT" stats "$W/cs" | awk '/^events:/ { print $2 }')" "20000" "... every event recorded"
	err=$(in_cpuset "$MT" record -q --sync percpu -o "$W/cs2" -- true 2>&1)
	rc=$?
	like "$rc $err" "^[1-9][0-9]* .*--sync percpu: needs .* every online CPU" "--sync percpu there: refused, with why"
	rmdir "$CS/mt-sync-$$" 2>/dev/null
else
	for i in 1 2 3; do ok 0 "# SKIP needs root, 2 CPUs and a writable cgroup v1 cpuset"; done
fi
