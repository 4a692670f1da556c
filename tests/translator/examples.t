#!/bin/sh
# Families of SystemTap scripts that stap -p2 elaborates (its example
# scripts among them: issue 11, group p2-ok) and marktap must accept too,
# with honest values at run time: each family's variables and functions
# elaborate, and where user space can run them (a recorded kernel trace,
# marktap --trace), they give the values the trace says.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
GEN=$top_builddir/tests/runtime/view/gentrace
[ -f "$top_builddir/tapsets/syscalls.stp" ] || skip_all "tapsets/syscalls.stp not generated"
[ -x "$GEN" ] || skip_all "no gentrace at $GEN (make check builds it)"
gen() { rm -rf "$1" && "$GEN" "$1"; }
plan 7

# 1. syscall_any.return: name and syscall_nr of the call returning, noted
#    at the entry marker as syscall.NAME.return does (stap's variables);
#    a thread whose entry came before the session: -1, "unknown".
printf 'trace kernel domain=kernel\nmarker 0 kernel_arch_syscall_entry syscall_id %%d ip %%ld\nmarker 1 kernel_arch_syscall_exit ret %%ld\nstream 0\npacket\nev 900 kernel_arch_syscall_exit 12 12 c 5\nev 1000 kernel_arch_syscall_entry 10 10 a 110 0\nev 1100 kernel_arch_syscall_entry 11 11 b 0 0\nev 1200 kernel_arch_syscall_exit 10 10 a 9\nev 1300 kernel_arch_syscall_exit 11 11 b -2\n' |
	gen "$TMP/sc"
is "$("$MT" --trace "$TMP/sc" -e 'probe syscall_any.return { printf("%s %d %s %d\n", execname(), syscall_nr, name, retval) }' 2>&1)" \
   "c -1 unknown 5
a 110 getppid 9
b 0 read -2" "syscall_any.return: syscall_nr and name of the call each thread returns from, retval"
"$MT" -p2 -e 'global e probe syscall_any.return { if (retval < 0) e[pid(), retval, name] <<< 1 }' > /dev/null 2>&1
is "$?" 0 "syscall_any.return with name elaborates (errno.stp, syscallbypid-nd.stp)"
is "$("$MT" -L syscall_any.return 2>&1 | cut -d' ' -f1-4 | sort -u)" 'syscall_any.return retval:long syscall_nr:long name:string' "-L lists its variables"

# 2. argv.stp (stap's): argc and argv[1..32], the script's arguments,
#    filled by an init probe (init.stp: before every begin probe); -G
#    sets a slot (argv_N) or argc (ucalls.stp, net_xmit_json.stp)
is "$("$MT" -e 'probe begin(-1000) { printf("%d [%s] [%s] [%s]\n", argc, argv[1], argv[2], argv[3]); exit() }' a 'b c' 2>&1)" \
   "2 [a] [b c] []" "argc, argv[]: the arguments, before a begin probe of any priority"
is "$("$MT" -G argv_2=zz -G argc=5 -e 'probe begin { printf("%d [%s] [%s]\n", argc, argv[1], argv[2]); exit() }' a 'b c' 2>&1)" \
   "5 [a] [zz]" "-G argv_2=... and -G argc=... set them"
is "$("$MT" -e 'probe begin(-9223372036854775807) { print("b ") } probe init { print("i ") } probe begin { exit() }' 2>&1)" \
   "i b " "probe init runs before the first begin probe"
is "$("$MT" -e 'probe begin { n = 0; for (i = 1; i <= argc; i++) n += strlen(argv[i]); println(n); exit() }' $(seq 1 40) 2>&1)" \
   "WARNING: argv holds the first 32 arguments only
55" "past 32 arguments: a warning, argv holds the first 32"
