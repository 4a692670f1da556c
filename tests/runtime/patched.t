#!/bin/sh
# Patched marker sites (MARKTAP_PATCHED_SITES): "test $rel32, %eax" while the
# marker is off, a jump to its code while marktrace or marktap arm it or an
# outside tool raises its SDT semaphore; every event recorded as with the
# checked sites; outside tools reach them (the poller of sites.c); code
# rewritten under threads that run it.
. "$(dirname "$0")/../lib/record.sh"
P=$B/tests/runtime/patched
[ -x "$P" ] || skip_all "build first"
plan 30

# 1. off: "test"; on under marktrace: jumps
is "$("$P" sites | grep -v '^gate' | sort | tr '\n' ' ')" "patched_ev off patched_tick off " "untraced, both sites are off (test, a9)"
"$MT" record -q -o "$W/s" -- "$P" sites > "$W/sites.out"
is "$(grep -v '^gate' "$W/sites.out" | sort | tr '\n' ' ')" "patched_ev jump patched_tick jump " "recorded, both are jumps (patched before main)"

# 2. every event, in order
"$MT" record -q -o "$W/c" -- "$P" count 100000
"$MT" view "$W/c" > "$W/c.txt"
is "$(grep -c 'patched_ev:' "$W/c.txt")" 100001 "100001 events of one thread through the patched site"
is "$(awk '/patched_ev:/ { for (i = 1; i <= NF; i++) if ($i ~ /^seq=/) s = substr($i, 5) + 0
	if (n++ && s != n - 2) bad++ } END { print bad + 0 }' "$W/c.txt")" 0 "... in order"
is "$(grep -c 'patched_tick' "$W/c.txt")" 1 "the marker without arguments too"

# 3. threads: delivered + lost = emitted
"$MT" record -q --subbuf-size 4M -o "$W/t" -- "$P" threads 4 100000
view_count "$W/t" "$W/t.txt" patched_ev
is "$((delivered + lost))" 400001 "4 threads x 100000: $delivered delivered + $lost lost = every event"
ok $(( lost != 0 )) "... none lost with 4 MiB sub-buffers"

# A running process's patched_ev site, its changes in $1 (watch prints
# "ready PID GATE" first); pid and gate set.
start_watch() {
	"$P" watch "$2" > "$1" &
	watch_pid=$!
	wait_for 30 grep -qs ready "$1"
	gate=$(awk '/^ready/ { print $3 }' "$1")
}
states() { grep -v '^ready' "$1" | tr '\n' ' '; }
# Write the 16-bit semaphore at $2 of process $1 (as SystemTap raises one).
poke() {
	printf "\\$(printf %03o "$3")\\000" | dd of="/proc/$1/mem" bs=1 count=2 seek="$(($2))" \
		oflag=seek_bytes conv=notrunc 2> /dev/null
}

# 4. record -p: a jump while marktrace is there, off again after
start_watch "$W/w1" 4000
timeout -s INT 1 "$MT" record -q -o "$W/p" -p "$watch_pid"
wait_for 3 file_has_lines "$W/w1" 4   # ready, off, jump, off
kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null
is "$(states "$W/w1")" "off jump off " "record -p of a running process: off, jump while recorded, off after"

# 5. an outside tool's semaphore, raised in a running process's memory
if [ "$(id -u)" = 0 ]; then
	start_watch "$W/w2" 3000
	wait_for 3 file_has_lines "$W/w2" 2   # ready, off
	poke "$watch_pid" "$gate" 1; t0=$(date +%s%N)
	for _ in $(seq 100); do grep -q jump "$W/w2" && break; sleep 0.01; done
	t1=$(date +%s%N)
	poke "$watch_pid" "$gate" 0
	wait_for 2 file_has_lines "$W/w2" 4   # ready, off, jump, off
	kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null
	is "$(states "$W/w2")" "off jump off " "a semaphore raised from outside: jump, then off once lowered"
	ok $(( (t1 - t0) / 1000000 >= 1000 )) "... seen within $(( (t1 - t0) / 1000000 )) ms (poll period 100 ms)"
	MARKTAP_SITE_POLL_MS=0 "$P" watch 1500 > "$W/w3" &
	watch_pid=$!
	wait_for 30 grep -qs ready "$W/w3"
	poke "$watch_pid" "$(awk '/^ready/ { print $3 }' "$W/w3")" 1
	wait "$watch_pid"
	is "$(states "$W/w3")" "off " "MARKTAP_SITE_POLL_MS=0: no thread, the site stays off"
	# MARKTAP_SITE_POLL_MS is the caller's in a setuid program: not honoured
	if command -v setpriv > /dev/null; then
		chmod 755 "$W"
		cp "$P" "$W/suid" && chmod 4755 "$W/suid"
		cp "$P" "$W/plain" && chmod 755 "$W/plain"
		for prog in plain suid; do
			setpriv --reuid=65534 --regid=65534 --clear-groups \
				env MARKTAP_SITE_POLL_MS=0 "$W/$prog" watch 1500 > "$W/w-$prog" &
			watch_pid=$!
			wait_for 30 grep -qs ready "$W/w-$prog"
			poke "$(awk '/^ready/ { print $2 }' "$W/w-$prog")" "$(awk '/^ready/ { print $3 }' "$W/w-$prog")" 1
			wait "$watch_pid"
		done
		is "$(states "$W/w-plain")" "off " "control: nobody's own program honours MARKTAP_SITE_POLL_MS=0"
		is "$(states "$W/w-suid")" "off jump " "a setuid-root program ignores the caller's MARKTAP_SITE_POLL_MS=0"
	else
		skip 2 "no setpriv"
	fi
else
	skip 5 "writing another process's memory needs root here"
fi

# 6. the code rewritten 2 x per round under two threads that run it
out=$(MARKTAP_SITE_POLL_MS=1 "$P" flip 4 3); rc=$?
is "$rc" 0 "4 threads through the sites while they flip: no crash"
like "$out" "late 0 hits many" "... every change seen within 5 s, the threads ran ($out)"
rounds=$(echo "$out" | awk '{ print $2 }')
ok $(( rounds < 20 )) "... $rounds rounds of jump and off in 3 s"

# A daemon that closes every descriptor and opens a file: the number of
# libmarktap's /proc/self/mem is not taken for it (code bytes written
# into the file at the site's address)
printf 'keep me\n' > "$W/victim"
out=$(MARKTAP_SITE_POLL_MS=5 "$P" reuse "$W/victim" | tr '\n' ' ')
is "$out" "jump off fd 3 " "descriptors closed and reused: the site still flips"
is "$(cat "$W/victim"; stat -c %s "$W/victim")" "keep me
8" "... and the file that took the descriptor's number is untouched"

# 7. forked child: its own poller (a forking server's workers)
if [ "$(id -u)" = 0 ]; then
	cat > "$W/fork.c" <<'EOF'
#define MARKTAP_PATCHED_SITES
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <marktap/marker.h>
int main(void)
{
	const struct mt_marker_site *s = __start___mt_sites;
	pid_t c;
	int i;

	trace_mark(fork_ev, "i %d", 1);
	c = fork();
	if (c == 0) {
		printf("ready %d %#lx\n", (int)getpid(), (unsigned long)&s->marker->gate->enabled);
		fflush(stdout);
		for (i = 0; i < 300 && ((unsigned char *)s->site)[0] != 0xe9; i++)
			usleep(10000);
		printf("%s\n", ((unsigned char *)s->site)[0] == 0xe9 ? "jump" : "off");
		return 0;
	}
	waitpid(c, NULL, 0);
	return 0;
}
EOF
	if ${CC:-cc} -I"$top_srcdir/runtime/include" -o "$W/fork" "$W/fork.c" \
		-L"$B/runtime/.libs" -lmarktap -Wl,-rpath,"$B/runtime/.libs" 2> "$W/fork.err"; then
		"$W/fork" > "$W/f.out" &
		wait_for 30 grep -qs ready "$W/f.out"
		poke "$(awk '/^ready/ { print $2 }' "$W/f.out")" "$(awk '/^ready/ { print $3 }' "$W/f.out")" 1
		wait
		is "$(tail -1 "$W/f.out")" jump "a forked child's site follows its semaphore (its own poller)"
	else
		ok 0 "cc: $(head -1 "$W/fork.err")"
	fi
else
	skip 1 "writing another process's memory needs root here"
fi

# 8. builds: -O0, C++, and a site in an inline function used twice
cat > "$W/o0.c" <<'EOF'
#define MARKTAP_PATCHED_SITES
#include <marktap/marker.h>
static inline void hit(int v) { trace_mark(inl_ev, "v %d", v); }
int main(int argc, char **argv) { (void)argv; hit(argc); hit(argc + 1); trace_mark(o0_ev, MARK_NOARGS); return 0; }
EOF
for opt in -O0 -O2; do
	${CC:-cc} $opt -I"$top_srcdir/runtime/include" -o "$W/o0$opt" "$W/o0.c" \
		-L"$B/runtime/.libs" -lmarktap -Wl,-rpath,"$B/runtime/.libs" 2> "$W/o0.err"
	ok $? "$opt: a patched site builds $(head -1 "$W/o0.err")"
	"$MT" record -q -o "$W/o0$opt.tr" -- "$W/o0$opt"
	is "$("$MT" view "$W/o0$opt.tr" | grep -o 'inl_ev: v=[0-9]*\|o0_ev' | tr '\n' ' ')" "inl_ev: v=1 inl_ev: v=2 o0_ev " "$opt: its events recorded"
done
if command -v clang > /dev/null 2>&1; then
	clang -O2 -I"$top_srcdir/runtime/include" -o "$W/clang" "$W/o0.c" \
		-L"$B/runtime/.libs" -lmarktap -Wl,-rpath,"$B/runtime/.libs" 2> "$W/clang.err" &&
		"$MT" record -q -o "$W/clang.tr" -- "$W/clang"
	is "$("$MT" view "$W/clang.tr" 2>&1 | grep -o 'inl_ev: v=[0-9]*\|o0_ev' | tr '\n' ' ')" "inl_ev: v=1 inl_ev: v=2 o0_ev " \
		"clang: a patched site builds and its events are recorded $(head -1 "$W/clang.err")"
else
	skip 1 "no clang"
fi
if command -v ${CXX:-c++} > /dev/null 2>&1; then
	cp "$W/o0.c" "$W/o0.cc"
	${CXX:-c++} -O2 -I"$top_srcdir/runtime/include" -o "$W/cxx" "$W/o0.cc" \
		-L"$B/runtime/.libs" -lmarktap -Wl,-rpath,"$B/runtime/.libs" 2> "$W/cxx.err"
	ok $? "C++: a patched site builds $(head -1 "$W/cxx.err")"
else
	skip 1 "no C++ compiler"
fi

# 11. a plugin with patched sites, dlopen'ed and dlclose'd 200 times by a
# program that reaches libmarktap only through it (its threads must not
# lose their code: libmarktap is never unloaded, -z nodelete)
cat > "$W/plug.c" <<'EOF'
#define MARKTAP_PATCHED_SITES
#include <marktap/marker.h>
void plug_hit(int i) { trace_mark(plug_ev, "i %d", i); }
EOF
cat > "$W/host.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int k, i;

	(void)argc;
	for (k = 0; k < atoi(argv[2]); k++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		void (*f)(int) = h ? (void (*)(int))dlsym(h, "plug_hit") : NULL;
		if (!f)
			return 1;
		for (i = 0; i < 100; i++)
			f(k * 100 + i);
		dlclose(h);
	}
	return 0;
}
EOF
${CC:-cc} -O2 -fPIC -shared -I"$top_srcdir/runtime/include" -o "$W/plug.so" "$W/plug.c" \
	-L"$B/runtime/.libs" -lmarktap -Wl,-rpath,"$B/runtime/.libs" &&
	${CC:-cc} -O2 -o "$W/host" "$W/host.c" -ldl
"$W/host" "$W/plug.so" 200
is "$?" 0 "dlopen/dlclose of a plugin with patched sites x 200, untraced: exit 0"
MARKTAP_SITE_POLL_MS=1 "$MT" record -q -o "$W/dl" -- "$W/host" "$W/plug.so" 200
is "$?/$("$MT" view "$W/dl" | grep -c 'plug_ev:')" "0/20000" "... recorded: exit 0, every one of the 20000 events"

# 10. a probe script (marktap) arms them as marktrace does
out=$("$B/translator/marktap" -e "global n; probe process(\"$P\").mark(\"patched_ev\") { n += \$arg1 } probe end { printf(\"%d\\n\", n) }" \
	-c "$P count 1000" 2>&1)
is "$out" 499500 "marktap: a handler at a patched site sees every hit and its arguments"

# 9. bpftrace: a program started under it, and one it attaches to
if command -v bpftrace > /dev/null 2>&1 && [ "$(id -u)" = 0 ] &&
	{ mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; } &&
	timeout 60 bpftrace -l "usdt:$P:*" > "$W/bl" 2>&1 && grep -q patched_ev "$W/bl"; then
	out=$(timeout 120 bpftrace -q -c "$P count 5000" -e "usdt:$P:marktap:patched_ev { @n = count(); }" 2>&1)
	like "$out" "@n: 5001" "bpftrace -c: every hit of a patched site"
	"$P" loop 6 > "$W/loop.out" &
	lp=$!
	# (bpftrace -p reads the program's image: once it has exec'd)
	wait_for 10 sh -c '[ "$(readlink "/proc/$1/exe")" = "$2" ]' sh "$lp" "$(readlink -f "$P")"
	out=$(timeout 3 bpftrace -q -p "$lp" -e "usdt:$P:marktap:patched_ev { @n = count(); }" 2>&1)
	n=$(echo "$out" | awk '/^@n:/ { print $2 }')
	ok $(( ${n:-0} <= 100 )) "bpftrace -p on a running process reaches its patched site: ${n:-0} hits"
	kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
else
	skip 2 "no bpftrace that can probe here (root, tracefs)"
fi

done_testing
