#!/bin/sh
# The command line: --help, bad options, -p3, -p4 module files, -l/-L, -D,
# stap's option order and the stap options marktap takes or refuses.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 63
"$MT" --help > "$TMP/help"; is "$?" 0 "--help exits 0"
like "$(cat "$TMP/help")" "-p NUM" "--help lists options"
"$MT" --bogus 2>/dev/null; is "$?" 1 "an unknown option exits 1"
"$MT" -p9 -e 'probe begin {}' 2>/dev/null; is "$?" 1 "a bad pass number exits 1"
like "$("$MT" -p3 -e 'probe begin { println("x") }')" 'rt.probe\("probe_0"' "-p3 prints the generated Lua"
(cd "$TMP" && "$MT" -p4 -m hello_mod -e 'probe begin { println("x") }' >/dev/null)
like "$(head -3 "$TMP/hello_mod.mtm")" "-- name: hello_mod" "-p4 -m writes NAME.mtm with a manifest"
like "$(grep -- '-- probe:' "$TMP/hello_mod.mtm")" "probe_0 begin" "the manifest lists the probes"
is "$("$MT" -l 'begin')" "begin" "-l begin"
# stap -l/-L: nothing matched is exit 1 with nothing said; what matches is
# listed and the rest ignored; a parse error is counted, no pass named
out=$("$MT" -l 'nosuch.point' 2>&1); is "$? [$out]" "1 []" "-l with no match: exit 1, silent"
out=$("$MT" -L 'process("/nonexistent/prog").mark("*")' 2>&1); is "$? [$out]" "1 []" "-L of a missing program: exit 1, silent"
out=$("$MT" -l 'process("/bin/true").function("no_such_fn_xyz")' 2>&1); is "$? [$out]" "1 []" "-l of an unknown function: exit 1, silent"
out=$("$MT" -l 'nosuch.point, end' 2>&1); is "$? [$out]" "0 [end]" "-l lists the points that match"
is "$("$MT" -l 'begin?, end!, timer.s(1) if (x > 1)' 2>&1)" "begin?
end!
timer.s(1) if ((x) > (1))" "-l prints each point with its ?, ! and condition, as stap"
out=$("$MT" -l 'begin(' 2>&1); is "$?" 1 "-l with a parse error exits 1"
like "$out" "^1 parse error\.\$" "-l parse error: counted, no pass line"
out=$("$MT" -p2 "$TMP/no-such-script.stp" 2>&1); like "$? $out" "^1 Input file '.*no-such-script.stp' is missing\." "a missing script file in stap's words"
# stap passes -D macros it does not know on; only a malformed one is an error
is "$("$MT" -D NOSUCH_MACRO=1 -DSTP_NO_OVERLOAD -e 'probe begin { println("d"); exit() }' 2>&1)" "d" "-D of a name marktap does not use is accepted, as stap's"
"$MT" -D 1X=2 -e 'probe begin { exit() }' 2>/dev/null; is "$?" 1 "a malformed -D name exits 1"
like "$("$MT" -v -D NOSUCH_MACRO -e 'probe begin { exit() }' 2>&1)" "-D NOSUCH_MACRO means nothing to marktap" "-v names a -D that marktap does not use"
# options anywhere, as stap's getopt permutes them; -- ends them
printf 'probe begin { printf("%%d [%%s] [%%s]\\n", argc, @1, @2); exit() }\n' > "$TMP/args.stp"
is "$("$MT" "$TMP/args.stp" one -T 5 two 2>&1)" "2 [one] [two]" "options after the script are options (-T), the other words arguments"
is "$("$MT" -T 5 "$TMP/args.stp" -- -T 5 2>&1)" "2 [-T] [5]" "after -- every word is the script's"
is "$("$MT" w1 -e 'probe begin { printf("%d %s %s\n", argc, @1, @2); exit() }' w2 2>&1)" "2 w1 w2" "with -e every word is an argument, before or after it"
"$MT" "$TMP/args.stp" -p 9 >/dev/null 2>&1; is "$?" 1 "an option after the script is checked as one (-p 9)"
# -v: stap's Pass lines
out=$("$MT" -v -e 'probe begin { exit() }' 2>&1)
like "$out" "Pass 1: parsed user script using [0-9]+virt/[0-9]+res kb, in [0-9]+usr/[0-9]+sys/[0-9]+real ms\." "-v: Pass 1 line"
like "$out" "Pass 2: analyzed script and [0-9]+ library scripts: 1 probe, 1 function, 0 globals" "-v: Pass 2 counts"
like "$out" "Pass 3: translated to Lua" "-v: Pass 3 line"
like "$out" "Pass 5: run completed" "-v: Pass 5 line"
# -c with a program that does not exist: an error, exit 1, nothing run
out=$("$MT" -e 'probe begin { println("began") }' -c no_such_cmd_xyz 2>&1); st=$?
is "$st [$out]" "1 [ERROR: cannot run 'no_such_cmd_xyz': no such executable (-c)]" "-c of a missing program: ERROR, exit 1, begin not run"
# -p4 without -m: into marktap's cache, not the current directory; -k keeps a temporary directory
mkdir "$TMP/cwd" "$TMP/cache"
out=$(cd "$TMP/cwd" && XDG_CACHE_HOME="$TMP/cache" "$MT" -p4 -e 'probe begin { exit() }' 2>&1)
like "$out" "^$TMP/cache/marktap/stap_module_[0-9]+\.mtm\$" "-p4 prints the module's path in the cache"
is "$(ls -A "$TMP/cwd")" "" "-p4 without -m writes nothing into the current directory"
is "$(stat -c %a "$TMP/cache/marktap")" 700 "the cache directory is private (0700)"
out=$(cd "$TMP/cwd" && TMPDIR="$TMP" "$MT" -k -e 'probe begin { exit() }' 2>&1)
kdir=$(printf '%s\n' "$out" | sed -n 's/^Keeping temporary directory "\(.*\)"$/\1/p')
ok "$([ -n "$kdir" ] && [ -f "$kdir/stap_module.mtm" ]; echo $?)" "-k keeps a temporary directory with the module and says where"
# the dumps
like "$("$MT" --dump-functions)" "^execname:string \(\)\$" "--dump-functions: name:type (params)"
like "$("$MT" --dump-functions)" "^substr:string \(str:string, start:long, length:long\)\$" "--dump-functions: parameters with types"
like "$("$MT" --dump-probe-aliases)" "^syscall\.open = kernel\.mark\(\"kernel_arch_syscall_entry\"\)\$" "--dump-probe-aliases: alias = points"
bad=
for t in $("$MT" --dump-probe-types | grep -E '^(begin|end|error|never|oneshot|timer|procfs)'); do
	p=$(printf '%s' "$t" | sed 's/(number)/(1)/g; s/(string)/("f")/g')
	"$MT" -p2 -e "probe $p { next }" >/dev/null 2>&1 || bad="$bad $p"
done
is "$bad" "" "every begin/end/error/timer/procfs type --dump-probe-types lists elaborates"
# stap's options that mean nothing here are accepted; the ones that would do nothing are refused
is "$("$MT" -b -s 4 -d /bin/true --ldd --all-modules -P --prologue-searching=never --compatible=4.2 -e 'probe begin { println("ok"); exit() }' 2>&1)" "ok" "-b -s -d --ldd --all-modules -P --prologue-searching --compatible are accepted"
"$MT" -s 0 -e 'probe begin { exit() }' 2>/dev/null; is "$?" 1 "-s 0 exits 1 (1-4095)"
"$MT" --prologue-searching=sometimes -e 'probe begin { exit() }' 2>/dev/null; is "$?" 1 "--prologue-searching takes always, never or auto"
is "$("$MT" --compatible=4.2 -e 'probe begin { %( systemtap_v >= "4.5" %? println("new") %: println("old") %) exit() }' 2>&1)" "old" "--compatible sets systemtap_v"
"$MT" --compatible=x -e 'probe begin { exit() }' 2>/dev/null; is "$?" 1 "--compatible takes a version"
is "$("$MT" --rlimit-nproc=100000 --rlimit-as=100000000000 -e 'probe begin { println("r"); exit() }' 2>&1)" "r" "--rlimit-nproc/--rlimit-as with numbers"
"$MT" --rlimit-cpu=lots -e 'probe begin { exit() }' 2>/dev/null; is "$?" 1 "--rlimit-cpu with no number exits 1"
refused=
for o in -i --monitor; do
	# shellcheck disable=SC2086
	out=$("$MT" $o -e 'probe begin { exit() }' 2>&1) && refused="$refused [$o ran]"
	case $out in *"is not supported: "*) ;; *) refused="$refused [$o: $out]";; esac
done
is "$refused" "" "-i --monitor are refused with the reason, exit 1 (-S: examples.t)"
# -t: stap's probe hit report after the end probes, a line per probe
# that ran, in probe order, on stap's form; the timer's hits as it counted
out=$("$MT" -t -e 'global n probe begin { n = 1 } probe timer.ms(5) { if (n++ >= 4) exit() }
probe never { println("no") } probe end { println("end ", n) }' 2>&1 |
	sed -E 's|cycles: [0-9]+min/[0-9]+avg/[0-9]+max, variance: [0-9]+|cycles: C|')
is "$out" "end 5
----- probe hit report: 
begin, (<input>:1:10), hits: 1, cycles: C, from: begin, index: 0
timer.ms(5), (<input>:1:32), hits: 4, cycles: C, from: timer.ms(5), index: 1
end, (<input>:2:31), hits: 1, cycles: C, from: end, index: 3
----- refresh report:" "-t: stap's probe hit report (hits, cycles min/avg/max, variance, derivation, index)"
# -F -o FILE: stap's flight recorder on a file: the session goes on in
# the background, in a session of its own; marktap prints its pid and
# exits 0; kill PID ends it, with its end probes, into the file
pid=$("$MT" -F -o "$TMP/f.out" -e 'global n probe begin { println("begun") }
probe timer.ms(20) { if (!n++) println("tick") } probe end { printf("ended %d\n", n > 0) }' 2>"$TMP/f.err")
rc=$?
case $pid in ''|*[!0-9]*) pid=0 ;; esac
is "$rc $(cat "$TMP/f.err")" "0 " "-F -o: exit 0, nothing on stderr"
wait_for 30 file_has_lines "$TMP/f.out" 2
is "$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ') $(cat "$TMP/f.out")" "$pid begun
tick" "-F: the pid printed runs the session, in a session of its own (off the terminal), its output in the file"
gone() { ! kill -0 "$1" 2>/dev/null; }
[ "$pid" -gt 0 ] && kill "$pid"
wait_for 30 gone "$pid"
is "$(cat "$TMP/f.out")" "begun
tick
ended 1" "-F: kill PID ends the session, end probes into the file"
# with -S: the files switch in the background too, and the session's
# error goes into the file being written then
pid=$("$MT" -F -o "$TMP/fs.out" -S 1,3 -DMAXACTION=100000 -e 'global n probe timer.ms(5) { n++
	for (i = 0; i < 1000; i++) printf("%099d\n", i); if (n == 30) error("late") }' 2>/dev/null)
case $pid in ''|*[!0-9]*) pid=0 ;; esac
[ "$pid" -gt 0 ] && wait_for 30 gone "$pid"
last=$(ls "$TMP"/fs.out.* 2>/dev/null | sort -t. -k3 -n | tail -1)
is "$(ls "$TMP"/fs.out.* 2>/dev/null | wc -l) $(cat "$TMP"/fs.out.* 2>/dev/null | grep -cv '^[0-9]\{99\}$') $(grep -c '^ERROR: late' "$last" 2>/dev/null)" "3 2 1" \
	"-F -S 1,3: 3 MB of output switched, the last 3 files kept, whole lines; the ERROR and the count in the last"
"$MT" -F -o "$TMP/f2.out" -c true -e 'probe begin { exit() }' >/dev/null 2>&1
is "$?" 1 "-F with -c: refused, exit 1"
out=$("$MT" -F -o /nonexistent/dir/f -e 'probe begin { exit() }' 2>&1)
is "$? $out" "1 ERROR: cannot open /nonexistent/dir/f: No such file or directory" \
	"-F: a session that cannot start says why on the terminal, and marktap exits 1"
"$MT" -t -o "$TMP/t.out" -e 'probe begin { exit() }' >/dev/null 2>&1
like "$(cat "$TMP/t.out")" "^----- probe hit report: 
begin, .*hits: 1, " "-t: the report goes where -o sends the output"
is "$("$MT" -t -p3 -e 'global c probe timer.ms(1) { c++ }' | grep -c '^rt.native')" 0 \
	"-t: no native plans (the handlers timed are the Lua ones)"
out=$("$MT" --skip-badvars -e 'probe begin { printf("%d\n", $nosuch + 1); exit() }' 2>"$TMP/skip.err")
like "$(cat "$TMP/skip.err")" "^WARNING: Bad \\\$context variable being substituted with literal 0: identifier '\\\$nosuch' at <input>:1:30" \
	"--skip-badvars: an unresolved \\\$variable is 0, with stap's warning"
is "$out" "1" "... and the handler runs with it"
"$MT" -e 'probe begin { printf("%d\n", $nosuch + 1); exit() }' >/dev/null 2>&1
is "$?" 1 "without it, the same script is a semantic error"
"$MT" --privilege=stapusr -g -e 'probe begin { exit() }' 2>/dev/null; is "$?" 1 "-g with --privilege=stapusr exits 1"
"$MT" --privilege=root -e 'probe begin { exit() }' 2>/dev/null; is "$?" 1 "--privilege takes stapusr, stapsys or stapdev"
like "$("$MT" -q -e 'probe begin { exit() }' 2>&1)" "WARNING: -q: marktap keeps no tapset coverage" "-q says it keeps no coverage"
is "$("$MT" -E 'probe begin { println("E") }' -e 'probe begin { println("e") } probe timer.ms(1) { exit() }' 2>&1 | sort | tr '\n' ' ')" "E e " "-E SCRIPT runs beside the main script"
is "$("$MT" --suppress-time-limits -e 'probe begin { println("s"); exit() }' 2>&1)" "s" "--suppress-time-limits is accepted"
# -x PID for a script without handlers in the process: target() only, as
# stap's (no libmarktap needed in it); a PID that names nothing: an error
sleep 30 & spid=$!
is "$("$MT" -x $spid -e 'probe timer.ms(10) { println(target()); exit() }' 2>&1)" "$spid" \
	"-x PID of a program without libmarktap: a timer probe's target() is PID"
kill $spid 2>/dev/null; wait $spid 2>/dev/null
out=$("$MT" -x $spid -e 'probe timer.ms(10) { exit() }' 2>&1); rc=$?
is "$rc $out" "1 ERROR: -x $spid: no such process" "-x of a process that is gone: an ERROR"
done_testing
