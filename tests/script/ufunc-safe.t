#!/bin/sh
# Function probes never kill the traced program: probes on
# every function of libc under ls, sh -c and a program that goes through
# glibc's code that runs with every signal blocked (posix_spawn, system(),
# popen(), raise(), threads, fork: tests/script/ufunc-safe.c); explicit
# probes on close and execve while posix_spawn's child runs them; the
# functions refused (an error) or left out of globs; marktap -x into a
# process whose threads block every signal around a probed function while
# it is being armed; .return probes under threads.
#
# A probe on libc reaches every process of the machine that runs
# libmarktap's agent (marktap looks for them): each marktap runs in a PID
# namespace of its own (unshare) so that it sees only its command.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
LIBMT=$top_builddir/runtime/.libs/libmarktap.so.0
SRC=$top_srcdir/tests/script/ufunc-safe.c
[ -x "$MTBIN" ] || skip_all "build first"
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler"
unshare -pf --mount-proc true 2> /dev/null || skip_all "no PID namespace (unshare -p needs root)"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$CC" -g -O2 -o "$TMP/us" "$SRC" -lpthread || skip_all "cannot build $SRC"
US=$TMP/us
LIBC=$(ldd "$US" | awk '/libc\.so/ { print $3 }')
[ -n "$LIBC" ] || skip_all "no libc in ldd $US"
mt() { timeout 300 unshare -pf --mount-proc "$MTBIN" "$@"; }
ALL="global n probe process(\"$LIBC\").function(\"*\") { n++ } probe end { printf(\"hits %s\\n\", n > 0 ? \"yes\" : \"none\") }"
plan 21

# every function of libc: the program's output and exit status are its own
# (the status through a shell that prints it: the shell is probed too;
# sed, not head, reads all of ls: head would end it with SIGPIPE, and a
# process killed by a signal loses its last results, which is said)
for cmd in "$US all" "ls /usr/lib" "sh -c 'echo a; ls /usr/lib | sed -n 1,2p; /bin/true; exit 3'"; do
	want=$(sh -c "$cmd; echo status \$?" 2>&1)
	out=$(mt -c "sh -c \"$cmd; echo status \\\$?\"" -e "$ALL" 2>&1)
	is "$out" "$want
hits yes" "function(\"*\") on libc: $cmd runs as alone (output, exit status), hits counted"
done
# before: a trap in __errno_location() while the trap handler saved errno
# recursed until the stack overflowed; echo printed nothing
is "$(mt -c '/bin/echo hi' -e "$ALL" 2>&1)" "hi
hits yes" "function(\"*\") on libc: echo prints and its hits count"
out=$(mt -c "$US spawn 20" -e "global n probe process(\"$LIBC\").function(\"*\") { n++ } probe end { println(n > 1000) }" 2>&1)
is "$out" "spawned 20, 0 wrong
1" "function(\"*\") on libc: 20 posix_spawn children, none killed"

# close and execve named in full while posix_spawn's child runs: its
# file actions use __close_nocancel; execve comes after it restores the
# mask (and pthread_sigmask keeps SIGTRAP: redirected by the script host).
# (A hit at execve's entry is not counted: the process sends its last
# results before it calls libc's execve; not checked here.)
out=$(mt -u -c "$US spawn 5" -e "probe process(\"$LIBC\").function(\"close\") { }
	probe process(\"$LIBC\").function(\"execve\") { } probe end { println(\"end\") }" 2>&1)
is "$out" "spawned 5, 0 wrong
end" "close and execve probed while posix_spawn's children run them: none killed"

# refused: an error for a name given in full, left out of a glob
out=$(mt -p2 -e "probe process(\"$LIBC\").function(\"internal_sigdelset\") { }" 2>&1)
[ $? -ne 0 ]; ok $? "internal_sigdelset named in full: an error"
like "$out" 'semantic error: function "internal_sigdelset" of .* runs with every signal blocked: the kernel kills a process that traps with SIGTRAP blocked; not probed' \
	"... that says why"
like "$(mt -p2 -e "probe process(\"$LIBC\").function(\"__spawni_child\") { }" 2>&1)" \
	'function "__spawni_child" .* runs with every signal blocked' "__spawni_child named in full: an error"
out=$(mt -p2 -e "probe process(\"$LIBC\").function(\"__dup2\") { }" 2>&1)
like "$out" "WARNING: function \"__dup2\" of .* may run with every signal blocked \\(posix_spawn's child" \
	"__dup2 named in full: probed, with a warning"
listed=$(mt -l "process(\"$LIBC\").function(\"*\")" 2>&1)
is "$(echo "$listed" | grep -c 'function("\(internal_sig[a-z_]*\|__spawni_child\|start_thread\|__libc_vfork\|__libc_sigaction\|__close_nocancel\|__pthread_sigmask\|report_thread_creation\|advise_stack_range\|__GI__setjmp\|_setjmp\)@')" "0" \
	"a glob over libc leaves out what runs with every signal blocked"
like "$(echo "$listed" | grep -c 'function("')" '^[1-9][0-9][0-9][0-9]' "... and probes thousands of the others"

# marktap -x into a running process: 4 threads call probed_work() with
# every signal blocked (pthread_sigmask), in a loop, while marktap arms
# its entry and return; then the same threads without blocking
for mode in masks spin; do
	cat > "$TMP/x.sh" <<EOF
#!/bin/sh
mkfifo "$TMP/fifo"
LD_PRELOAD=$LIBMT "$US" $mode 4 100 < "$TMP/fifo" > "$TMP/x.out" &
tpid=\$!
exec 9> "$TMP/fifo"
n=0; while ! grep -q ready "$TMP/x.out" 2> /dev/null && [ \$n -lt 200 ]; do sleep 0.05; n=\$((n + 1)); done
"$MTBIN" -x "\$tpid" -T 2 -e "global c, r probe process(\\"$US\\").function(\\"probed_work\\") { c++ }
	probe process(\\"$US\\").function(\\"probed_work\\").return { r += \\\$return == \\\$x * 3 + 1 }
	probe end { printf(\\"%s %s\\\\n\\", c > 100 ? \\"hits\\" : sprint(c), r > 100 && r <= c ? \\"returns\\" : sprint(r)) }"
exec 9>&-
wait "\$tpid"; echo "status \$?"
cat "$TMP/x.out"
rm -f "$TMP/fifo"
EOF
	out=$(timeout 120 unshare -pf --mount-proc sh "$TMP/x.sh" 2>&1)
	is "$out" "hits returns
status 0
ready
masked calls ok 1
pthread_sigmask as before 1" "-x, 4 threads ($mode) calling the probed function while it is armed: hits, right returns, the program unharmed, libc's bytes back after"
done

# entry and .return probes with threads (created after the script host
# joined: SIGTRAP never blocked), their values right: through the jump
# fast path (probed_work starts with a 5-byte lea) and through the trap
for jump in 1 0; do
	out=$(MARKTAP_UFUNC_JUMP=$jump mt -c "$US threads 4 5000" -e "global c, s, e probe process(\"$US\").function(\"probed_work\").return { c++; s += \$return }
		probe process(\"$US\").function(\"probed_work\") { e += \$x }
		probe end { printf(\"%d %d %d\\n\", c, s, e) }" 2>&1)
	is "$out" "threads 4 sum 149990000
20000 149990000 49990000" "MARKTAP_UFUNC_JUMP=$jump: entry and .return under 4 threads: every call, the program's sum"
done
# a backtrace from the jump's stub goes through it (its CFI) as from a trap
cat > "$TMP/bt.c" <<'EOF'
#include <stdio.h>
__attribute__((noinline, noipa)) long leaf(long x) { return x * 3 + 1; }
__attribute__((noinline, noipa)) long mid(long x) { return leaf(x) + 1; }
int main(void) { printf("%ld\n", mid(2)); return 0; }
EOF
"$CC" -g -O2 -o "$TMP/bt" "$TMP/bt.c"
BT="probe process(\"$TMP/bt\").function(\"leaf\") { print_ubacktrace() }"
bt1=$(MARKTAP_UFUNC_JUMP=1 mt -c "$TMP/bt" -e "$BT" 2>&1 | sed 's/^ 0x[0-9a-f]* : //; /^0x/d')
bt0=$(MARKTAP_UFUNC_JUMP=0 mt -c "$TMP/bt" -e "$BT" 2>&1 | sed 's/^ 0x[0-9a-f]* : //; /^0x/d')
like "$(echo "$bt1" | tr '\n' '|')" "^leaf\\+0x0/0x[0-9a-f]+ \\[[^]]*\\]\\|mid\\+0x[0-9a-f]+/0x[0-9a-f]+ \\[[^]]*\\]\\|main\\+" \
	"print_ubacktrace() at a jump site: leaf, mid, main"
is "$bt1" "$bt0" "... the same as at a trap"

# named in full, functions posix_spawn's child runs with every signal
# blocked (a warning says so): where the jump takes them (their first
# instruction, in glibc 2.36), the children live and the hits count
for f in __close_nocancel __libc_sigaction; do
	out=$(mt -c "$US spawn 5" -e "global n probe process(\"$LIBC\").function(\"$f\") { n++ }
		probe end { println(n >= 5) }" 2>&1 | grep -v '^WARNING: function')
	is "$out" "spawned 5, 0 wrong
1" "$f named in full: posix_spawn's children run it with the probe's jump, none killed, hits counted"
done

# a program that blocks every signal (SIGTRAP too, as far as it knows)
# in its threads: it keeps running, the probes fire; libc's bytes are
# back at the end
out=$(mt -c "sh -c 'sleep 1 | $US masks 3 50'" -e "global c probe process(\"$US\").function(\"probed_work\") { c++ }
	probe end { println(c > 100) }" 2>&1)
is "$out" "ready
masked calls ok 1
pthread_sigmask as before 1
1" "-c: threads that block every signal around the probed call run on, hits counted"
