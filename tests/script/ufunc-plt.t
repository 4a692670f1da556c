#!/bin/sh
# process("P").plt("NAME") and .library("L").plt("NAME") (translator/
# dwarf_plt.c finds the entries, runtime/script/ufunc.c arms them), on a
# program built here calling puts, strlen and getpid through its PLT and
# a library calling getppid through its own, in three layouts: lazy .plt,
# -z now, and .plt.sec with endbr64 (-fcf-protection, IBT's PLT) with
# -z now.  Counts by $$name are the calls made; the program's output and
# exit status are its own; globs, .return, pp()/pn()/ppfunc(), -l and -L,
# errors in stap's words; after -x the PLT's bytes are as before; no
# mapping is ever writable and executable while probes are armed and
# disarmed (patches are written through /proc/self/mem: text.c).
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
MTBIN=$top_builddir/translator/marktap
LIBMT=$top_builddir/runtime/.libs/libmarktap.so.0
SRC=$top_srcdir/tests/script/ufunc-plt.c
LSRC=$top_srcdir/tests/script/ufunc-pltlib.c
[ -x "$MTBIN" ] || skip_all "build first"
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler"
command -v readelf > /dev/null || skip_all "no readelf"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mt() { timeout 120 "$MTBIN" "$@"; }
plan 40

# the three layouts: NAME, the compiler's and linker's flags
build() {
	mkdir -p "$TMP/$1"
	"$CC" -g -O2 -fPIC -shared $2 -o "$TMP/$1/libpl.so" "$LSRC" &&
	"$CC" -g -O2 $2 -o "$TMP/$1/up" "$SRC" -L"$TMP/$1" -lpl -Wl,-rpath,"$TMP/$1" -lpthread
}
build lazy "" || skip_all "cannot build $SRC"
build now "-Wl,-z,now"
build ibt "-fcf-protection -Wl,-z,ibtplt -Wl,-z,now"
ok $([ -n "$(readelf -SW "$TMP/ibt/up" | grep ' \.plt\.sec ')" ] && echo 0 || echo 1) \
	"-fcf-protection -z ibtplt: the program has a .plt.sec"

COUNT='global c probe PLT { c[$$name]++ }
	probe end { foreach (k+ in c) if (k == "puts" || k == "strlen" || k == "getpid") printf("%s=%d ", k, c[k]); println("") }'
for L in lazy now ibt; do
	U=$TMP/$L/up
	P="process(\"$U\")"
	want=$("$U" 4; echo "status $?")
	out=$(MARKTAP_UFUNC_STATS=1 mt -c "$U 4" -e "$(echo "$COUNT" | sed "s|PLT|$P.plt|")" 2>"$TMP/err"; echo "status $?")
	is "$out" "$(echo "$want" | sed '$d')
getpid=12 puts=4 strlen=8 
status 0" "$L: plt: every call by \$\$name (puts 4, strlen 8, getpid 12); the program's output"
	is "$(grep -v '^WARNING: process [0-9]*: the program: [0-9]* probes: ' "$TMP/err")" "" "$L: nothing else said"
	# the PLT's jumps through the GOT run from a copy, by a jump to a stub
	like "$(cat "$TMP/err")" "probes: [1-9][0-9]* jump, 0 jump through padding, 0 trap out of line, 0 trap in place" \
		"$L: every entry probed by a jump (no trap)"
	out=$(mt -c "$U 4" -e "global c probe $P.library(\"$TMP/$L/libpl.so\").plt(\"getpp*\") { c[\$\$name]++ }
		probe end { foreach (k in c) printf(\"%s=%d\n\", k, c[k]) }" 2>&1)
	is "$out" "$("$U" 4)
getppid=4" "$L: .library(...).plt(\"getpp*\"), the library's own PLT: getppid 4 times"
	out=$(LD_LIBRARY_PATH=$TMP/$L mt -c "$U 4" -e "global c probe $P.library(\"libpl.so\").plt { c[\$\$name]++ }
		probe end { foreach (k in c) printf(\"%s=%d\n\", k, c[k]) }" 2>&1)
	is "$out" "$("$U" 4)
getppid=4" "$L: .library(\"libpl.so\").plt (found in LD_LIBRARY_PATH): every entry of it, none of the program's"
done

U=$TMP/ibt/up
P="process(\"$U\")"
# a glob, and plt alone: every entry
out=$(mt -c "$U 2" -e "global c probe $P.plt(\"st*\") { c[\$\$name]++ } probe end { foreach (k+ in c) printf(\"%s=%d \", k, c[k]) }" 2>&1)
like "$(echo "$out" | tail -1)" "^strlen=4 (strtol=1 )?\$" "plt(\"st*\"): strlen's calls, nothing outside the glob (atol() may call strtol)"
out=$(mt -l "$P.plt")
like "$out" "^process\(\"$U\"\)\.plt\(\"getpid\"\)\$" "-l plt: getpid listed"
is "$(mt -l "$P.plt(\"*\")" | grep -c -e '\.plt("puts")$' -e '\.plt("strlen")$' -e '\.plt("getpid")$')" 3 \
	"-l plt(\"*\"): puts, strlen and getpid, as stap lists them"
is "$(mt -L "$P.plt(\"puts\")")" "process(\"$U\").plt(\"puts\")" "-L: no variables but \$\$name, which stap does not list"
is "$(mt -l "$P.library(\"$TMP/ibt/libpl.so\").plt(\"getppid\")")" \
	"process(\"$U\").library(\"$TMP/ibt/libpl.so\").plt(\"getppid\")" "-l of a library's entry: stap's form"
is "$(mt -l "$P.plt(\"puts\").return")" "process(\"$U\").plt(\"puts\").return" "-l of .return"

# stap's register helpers at a plt entry: the caller's argument registers
# (ltrace.stp's register("rdi")), read by recipes as \$variables are
out=$(mt -c "$U 1" -e "probe $P.plt(\"strlen\") { if (!n++) printf(\"%s|%d|%d\\n\", user_string(register(\"rdi\")), pointer_arg(1) == register(\"rdi\"), int_arg(1) == (register(\"di\") & 0xffffffff ^ 0x80000000) - 0x80000000) } global n" 2>&1 | grep '|')
is "$out" "plt|1|1" "register(\"rdi\"), pointer_arg(1), int_arg(1) (cut to an int) at strlen@plt: its argument"
out=$(mt -c "$U 1" -e "probe $P.plt(\"getpid\").return { if (!n++) printf(\"%d\\n\", returnval() == pid()) } global n" 2>&1 | grep -x '[01]')
is "$out" "1" "returnval() at getpid@plt's return: the pid"
# process.library("*").plt of the -c command: the libraries it loads (ltrace.stp)
out=$(mt -c "$U 2" -e "global c probe process.library(\"libpl*\").plt { c[\$\$name]++ } probe end { foreach (k in c) printf(\"%s=%d\\n\", k, c[k]) }" 2>&1 | grep =)
is "$out" "getppid=2" "process.library(\"libpl*\").plt: the -c program's libraries matching the pattern"
# the agent's own threads (libmarktap's, the script host's) start under
# the armed probes: their calls into ld.so are not the program's
out=$(mt -c /bin/true -e 'global c probe process.library("*").plt { c[$$name]++ }
	probe end { printf("%d %d\n", c["_dl_allocate_tls"], c["pthread_create"]) }' 2>&1 | tail -1)
is "$out" "0 0" "library(\"*\").plt of a program that starts no thread: none of the agent's thread starts seen"
like "$(mt -p2 -c "$U 2" -e 'probe process.library("nosuchlib*").plt { }' 2>&1)" \
	"semantic error: no library $U loads matches nosuchlib\\*" "a pattern no library of the program matches: an error naming both"

# what a handler sees of the point
a=$(objdump -d -j .plt.sec "$U" | awk '/<getpid@plt>:/ { getline; getline; sub(":", "", $1); print $1 }')
out=$(mt -c "$U 1" -e "probe $P.plt(\"getpid\") { if (!n++) printf(\"%s|%s|%s|%s|%s\n\", pp(), pn(), ppfunc(), \$\$name, \$\$parms) } global n" 2>&1 | grep '^process')
is "$out" "process(\"$U\").statement(0x$a)|process(\"$U\").plt(\"getpid\")||getpid|" \
	"pp() the entry's jmp as a statement, pn() the plt point, ppfunc() empty, \$\$parms empty (as stap)"
out=$(mt -c "$U 3" -e "global c probe $P.plt(\"getpid\").return { c[\$\$name]++ } probe end { foreach (k in c) printf(\"%s=%d\n\", k, c[k]) }" 2>&1)
is "$out" "$("$U" 3)
getpid=9" ".return: each call's return"
out=$(mt -c "$U 3" -e "global r probe $P.plt(\"getpid\").return { r = usymname(uaddr()) } probe end { println(r) }" 2>&1 | tail -1)
is "$out" "run" ".return: uaddr() in the caller (run)"

# errors, in stap's words
out=$(mt -p2 -e "probe $P.plt(\"nosuch\") { }" 2>&1); rc=$?
like "$out" "semantic error: while resolving probe point: no match \(similar functions: [a-z_, ]*puts" \
	"a name the PLT does not have: no match, with the similar ones"
is "$rc" 1 "and exit status 1"
out=$(mt -p2 -e "probe $P.plt(\"puts\") { println(\$s) }" 2>&1)
like "$out" "semantic error: unable to find plt variable '\\\$s' \(alternatives: \\\$\\\$name\)" \
	"a variable other than \$\$name: stap's error"
out=$(mt -p2 -e "probe $P.plt(\"puts\").call { }" 2>&1); rc=$?
is "$rc" 1 ".plt(...).call: not a probe point"
out=$(mt -p2 -e "probe $P.plt(\"nosuch\") ? { } probe begin { exit() }" 2>&1); rc=$?
is "$rc" 0 "an optional plt point that matches nothing is no error (\"?\")"

# W^X: no system call of the run makes memory writable and executable
if command -v strace > /dev/null; then
	strace -f -qq -o "$TMP/strace" -e trace=mprotect,mmap,pkey_mprotect \
		timeout 120 "$MTBIN" -c "$U 3" -e "global c probe $P.plt(\"*\") { c++ } probe end { println(c > 0) }" > "$TMP/out" 2>&1
	is "$(tail -1 "$TMP/out")" 1 "under strace: the probes fired"
	is "$(grep -c 'PROT_WRITE|PROT_EXEC\|PROT_EXEC|PROT_WRITE' "$TMP/strace")" 0 \
		"no mprotect or mmap asks for a writable and executable page ($(grep -c 'PROT_EXEC' "$TMP/strace") ask for exec)"
else
	ok 0 "# SKIP no strace"
	ok 0 "# SKIP no strace"
fi

# no /proc/self/mem (a tmpfs over /proc, in a mount namespace of its own):
# the old way, the page writable for each write, and a warning says why
# (the program itself is not found without /proc: a library's entry)
L=$TMP/ibt/libpl.so
if unshare -m true 2> /dev/null; then
	out=$(unshare -m sh -c "mount -t tmpfs none /proc && timeout 120 '$MTBIN' -c '$U 3' -e 'global c
		probe $P.library(\"$L\").plt(\"getppid\") { c++ } probe end { println(\"getppid \", c) }'" 2>&1)
	is "$(echo "$out" | grep -v '^[ps]' | sed 's/process [0-9]*:/process PID:/')" "WARNING: process PID: /proc/self/mem cannot be opened: probes patch code with its page writable and executable for the write
getppid 3" "without /proc/self/mem: probes still fire, the fallback said once, with its reason"
else
	ok 0 "# SKIP cannot unshare the mount namespace"
fi

# -x into the running program: its thread calls through the PLT while
# marktap patches and puts back the entries; meanwhile its maps are
# read; after, the PLT's bytes as before
set -- $(readelf -SW "$U" | awk '$2 == ".plt.sec" { print $4, $6 }')
for round in 1 2; do
	cat > "$TMP/x.sh" <<EOS
#!/bin/sh
mkfifo "$TMP/fifo"
LD_PRELOAD=$LIBMT "$U" wait $1 $2 < "$TMP/fifo" > "$TMP/x.out" &
tpid=\$!
exec 9> "$TMP/fifo"
n=0; while ! grep -q ready "$TMP/x.out" 2> /dev/null && [ \$n -lt 200 ]; do sleep 0.05; n=\$((n + 1)); done
( while [ ! -e "$TMP/stop" ]; do grep ' rwxp ' /proc/\$tpid/maps; done > "$TMP/rwx" ) &
watch=\$!
"$MTBIN" -x "\$tpid" -T 1 -e 'global c probe $P.plt("*") { c++ } probe $P.plt("getpid").return { c++ }
	probe end { println(c > 100 ? "hits" : sprint(c)) }'
touch "$TMP/stop"; wait \$watch; rm -f "$TMP/stop"
exec 9>&-
wait "\$tpid"; echo "status \$?"
cat "$TMP/x.out"
echo "rwx mappings seen: \$(wc -l < "$TMP/rwx")"
rm -f "$TMP/fifo"
EOS
	out=$(sh "$TMP/x.sh" 2>&1)
	is "$out" "hits
status 0
ready
calls made
plt as before
rwx mappings seen: 0" "-x, round $round: hits while a thread calls through the PLT; no rwx mapping meanwhile; after, the PLT as before"
done
