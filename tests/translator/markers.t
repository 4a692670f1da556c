#!/bin/sh
# -l / -L: kernel markers from markers.tsv, user markers from ELF notes.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
plan 10
is "$("$MT" -l 'kernel.mark("fs_open")')" 'kernel.mark("fs_open")' "-l one kernel marker"
fmt=$(awk -F'\t' '$1 == "fs_open" { print $2 }' "$top_srcdir/tapsets/markers.tsv")
diag "fs_open format: $fmt"
like "$("$MT" -L 'kernel.mark("fs_open")')" '^kernel.mark\("fs_open"\) \$arg1:long \$arg2:string' "-L types from the format"
is "$("$MT" -l 'kernel.mark("fs_*")' | wc -l)" "$(grep -c '^fs_' "$top_srcdir/tapsets/markers.tsv")" "-l with a wildcard"
# where a kernel handler's Lua runs (gen.c's own_state): one that uses no
# global, in the state of the CPU it hit ({own = true}); any global, read
# or written, by the handler, a function it calls (a tapset's too) or its
# point's condition, -t, or a script's own %{ %} block: the shared one
own() { _o=$("$MT" -p3 "$@" 2>&1) || { echo E; return; }; echo "$_o" | grep -c 'own = true'; }
is "$(own -e 'probe kernel.mark("fs_open") { printf("%s %d\n", $filename, tid()) }')" 1 "-p3: a handler of no global runs in its CPU's state"
is "$(own -e 'global n probe kernel.mark("fs_open") { n = $fd }')$(own -e 'global n function f() { return n } probe kernel.mark("fs_open") { println(f()) }')$(own -e 'global on probe kernel.mark("fs_open") if (on) { println($fd) }')" \
	"000" "a global written, read by a function called, or read by the point's condition: the shared state"
is "$(own -e 'probe kernel.mark("fs_open") { println(thread_indent(1)) }')$(own -t -e 'probe kernel.mark("fs_open") { println($fd) }')$(own -g -e '%{ local shared = 0 %} probe kernel.mark("fs_open") { println($fd) }')" \
	"000" "a tapset function of globals (thread_indent), -t, a %{ %} block of the script: the shared state"
# kernel.mark handlers run on marktap.ko's events: without the module, a
# clear error before anything runs (with it: tests/kernel/kmod.t)
if [ -e /dev/marktap ]; then
	ok 0 "# SKIP marktap.ko is loaded here"
else
	out=$("$MT" -u -e 'probe begin { println("began") } probe kernel.mark("fs_open") { }' 2>&1)   # -u: the empty probe stays
	rc=$?
	like "$rc $out" '^1 ERROR: kernel markers: no /dev/marktap: load the kernel module first' "kernel.mark without marktap.ko: exit 1, begin not run"
fi
command -v cc >/dev/null || { skip_all "no C compiler"; }
# A program with two marker notes, laid out as <marktap/marker.h> does.
cat > "$TMP/prog.c" <<'C'
#define NOTE(name, fmt) __asm__(".pushsection .note.marktap,\"?\",\"note\"\n.balign 4\n" \
	".4byte 992f-991f, 994f-993f, 77\n991: .asciz \"marktap\"\n992: .balign 4\n" \
	"993: .asciz \"" name "\"\n.asciz \"" fmt "\"\n994: .balign 4\n.popsection\n")
NOTE("req_start", "id %d url %s");
NOTE("req_end", "id %d status %ld");
int main(void) { return 0; }
C
cc -o "$TMP/prog" "$TMP/prog.c" || { ok 1 "compile"; done_testing; }
is "$("$MT" -l "process(\"$TMP/prog\").mark(\"*\")")" "process(\"$TMP/prog\").mark(\"req_end\")
process(\"$TMP/prog\").mark(\"req_start\")" "-l user markers from the ELF notes"
is "$("$MT" -L "process(\"$TMP/prog\").mark(\"req_start\")")" "process(\"$TMP/prog\").mark(\"req_start\") \$arg1:long \$arg2:string \$id:long \$url:string \$name:string \$format:string" "-L user marker with types and names"
like "$("$MT" -p2 -e "probe process(\"$TMP/prog\").mark(\"req_end\") { printf(\"%d %d\\n\", \$id, \$status) }")" "process\(\"$TMP/prog\"\).mark\(\"req_end\"\)" "-p2 resolves a user marker"
done_testing
