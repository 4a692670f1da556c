#!/bin/sh
# kmod.t - marktap.ko in Debian's kernel under qemu: the catalogue, known
# actions giving known events, abuse of the device, 100 loads and unloads.
# The guest prints TAP-like lines; we renumber them into our plan.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
diag "kernel $KVER, cache $(guest_cache_dir)"
# kernel.mark handlers, translated here and run by marktap in the guest
MTAP=${MTAP:-$top_builddir/translator/marktap}
rm -f "$guest_dir"/*.mtm
(cd "$guest_dir" && "$MTAP" -p4 -m kfsopen -e 'global n, closes
probe kernel.mark("fs_open") { if (isinstr($filename, "probe-file")) { n++; printf("open %s %s pid=%d tid=%d\n", execname(), $filename, pid(), tid()) } }
probe kernel.mark("fs_close") { if (execname() == "cat") closes++ }
probe end { printf("opens %d closes>0 %d\n", n, closes > 0) }' >/dev/null 2>"$guest_dir/kfsopen.err") ||
	sed 's/^/# /' "$guest_dir/kfsopen.err"
if guest_boot "$top_srcdir/tests/kernel/body.sh" 900; then
	ok 0 "the guest ran its tests to the end (console: $guest_out)"
else
	ok 1 "the guest ran its tests to the end (console: $guest_out)"
	grep -E 'BUG|Oops|RIP|soft lockup|panic|call_timer_fn' "$guest_out" | head -12 | sed 's/^/# /'
fi

# The catalogue: every marker of markers.tsv, exact name and format.
sed -n '/^LIST-BEGIN$/,/^LIST-END$/p' "$guest_out" | sed '1d;$d' >"$guest_dir/list.txt"
awk -F '\t' 'NR > 1 { f = $2; if (f == "MARK_NOARGS") f = " "; else f = substr(f, 2, length(f) - 2); print $1 "\t" f }' \
	"$top_srcdir/tapsets/markers.tsv" | sort >"$guest_dir/tsv.txt"
cut -f1,2 "$guest_dir/list.txt" | sort >"$guest_dir/listed.txt"
missing=$(comm -23 "$guest_dir/tsv.txt" "$guest_dir/listed.txt" | cut -f1 | tr '\n' ' ')
is "$missing" "" "every marker of markers.tsv is listed with its exact format"
unexplained=$(awk -F '\t' '$3 == "no" && $4 !~ /^unavailable: ./ { print $1 }' "$guest_dir/list.txt" | tr '\n' ' ')
is "$unexplained" "" "every unavailable marker says why"
diag "available: $(awk -F '\t' '$3 == "yes"' "$guest_dir/list.txt" | wc -l) of $(wc -l <"$guest_dir/list.txt")"
awk -F '\t' '$3 == "no" { print "  " $1 ": " $4 }' "$guest_dir/list.txt" | while read -r line; do diag "$line"; done

# marktap -L with the module's catalogue: every marker, the unavailable ones say why
MTAP=$top_builddir/translator/marktap
# (kreader's list back into the device's text: name, "format", source or
# "unavailable: why", state)
awk -F '\t' '{ f = $2 == " " ? "MARK_NOARGS" : "\"" $2 "\""; print $1 "\t" f "\t" $4 "\tdisarmed" }' \
	"$guest_dir/list.txt" >"$guest_dir/devlist.txt"
MARKTAP_KERNEL_LIST=$guest_dir/devlist.txt "$MTAP" -L 'kernel.mark("*")' >"$guest_dir/L.txt" 2>&1
is "$(grep -c '^kernel.mark(' "$guest_dir/L.txt")" "$(wc -l <"$guest_dir/tsv.txt" | tr -d ' ')" "marktap -L 'kernel.mark(\"*\")' lists the whole catalogue"
is "$(grep -c '# unavailable: .' "$guest_dir/L.txt")" "$(awk -F '\t' '$3 == "no"' "$guest_dir/list.txt" | wc -l | tr -d ' ')" \
	"and marks the markers the module cannot provide, with the reason"

# The traces recorded in the guest, read on the host.
mkdir -p "$guest_dir/traces"
sed -n '/^TRACE-BEGIN$/,/^TRACE-END$/p' "$guest_out" | sed '1d;$d' | base64 -d 2>/dev/null |
	gzip -dc 2>/dev/null | tar -C "$guest_dir/traces" -xf - 2>/dev/null
KT=$guest_dir/traces/kt
MTR=$top_builddir/runtime/marktrace/marktrace
if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null && [ -d "$KT/kernel" ]; then
	"$BABELTRACE2" "$KT/kernel" >"$guest_dir/kt.bt" 2>&1
	ok $? "babeltrace2 reads the guest's kernel trace"
	open=$(grep 'fs_open:' "$guest_dir/kt.bt" | grep '/tmp/probe-file.txt' | head -1)
	like "$open" 'filename = "/tmp/probe-file.txt"' "fs_open of the file cat opened, with its name"
	fd=$(echo "$open" | sed -nE 's/.*fd = ([0-9-]+).*/\1/p')
	ok $([ -n "$fd" ] && [ "$fd" -ge 0 ] 2>/dev/null; echo $?) "and the returned descriptor ($fd)"
	like "$(grep -c 'kernel_process_fork\|kernel_process_exit' "$guest_dir/kt.bt")" '^[1-9]' "process fork/exit events of the command"
else
	for d in "babeltrace2 reads the guest's kernel trace" "fs_open with the name" "and the descriptor" "process events"; do
		ok 1 "$d (no trace came back from the guest, or no babeltrace2)"
	done
fi
KT2=$guest_dir/traces/kt2
if [ -d "$KT2/kernel" ] && [ -d "$KT2/ust" ]; then
	"$MTR" view "$KT2" >"$guest_dir/kt2.txt" 2>&1
	ok $? "marktrace view merges the kernel and user streams of --kernel -- CMD"
	is "$(grep -c ' ev:' "$guest_dir/kt2.txt")" 5 "the program's 5 user events are there"
	like "$(grep -c 'kernel_arch_syscall_entry:' "$guest_dir/kt2.txt")" '^[1-9]' "with kernel syscall events"
	back=$(awk '{ ts = substr($1, 2, length($1) - 2); if (ts < last) n++; last = ts } END { print n + 0 }' "$guest_dir/kt2.txt")
	is "$back" 0 "in time order"
	if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" >/dev/null; then
		"$BABELTRACE2" "$KT2" >"$guest_dir/kt2.bt" 2>&1
		is "$(grep -c ' ev:' "$guest_dir/kt2.bt")" 5 "babeltrace2 merges the same kernel and user streams"
	fi
	first_ev=$(grep -n ' ev:' "$guest_dir/kt2.txt" | head -1 | cut -d: -f1)
	last_ev=$(grep -n ' ev:' "$guest_dir/kt2.txt" | tail -1 | cut -d: -f1)
	between=$(sed -n "${first_ev},${last_ev}p" "$guest_dir/kt2.txt" | grep -c 'kernel_arch_syscall')
	diag "kernel events between the first and the last user event: $between"
else
	for d in "view merges kernel and user streams" "5 user events" "kernel syscall events" "in time order"; do
		ok 1 "$d (no --kernel -- CMD trace came back from the guest)"
	done
fi

KT3=$guest_dir/traces/kt3
if [ -d "$KT3" ]; then
	"$MTR" view "$KT3" >"$guest_dir/kt3.txt" 2>&1
	ok $? "the overwrite-mode kernel trace reads"
	like "$(grep 'fs_open:' "$guest_dir/kt3.txt" | tail -1)" '/tmp/probe-file.txt' "it kept the newest events: the last command's open"
	n=$(grep -c 'kernel_arch_syscall' "$guest_dir/kt3.txt")
	ok $(( n < 100 || n > 4000 )) "and only the newest: $n syscall events kept of the loop's thousands, in 4 x 4 KiB per CPU"
else
	for d in "overwrite trace reads" "newest events kept" "only the newest"; do ok 1 "$d (no overwrite trace came back)"; done
fi

# The guest's own checks.
grep -E '^(not )?ok [0-9]* *- |^(not )?ok - ' "$guest_out" | while IFS= read -r line; do
	case $line in
	"not ok"*) echo "F ${line#not ok }" ;;
	*) echo "P ${line#ok }" ;;
	esac
done >"$guest_dir/results.txt"
grep -E '^#   ' "$guest_out" | head -40
n=$(wc -l <"$guest_dir/results.txt")
[ "$n" -gt 40 ]; ok $? "the guest reported its checks ($n)"
while read -r verdict text; do
	text=$(echo "$text" | sed -E 's/^[0-9]+ *- *//; s/^- *//')
	[ "$verdict" = P ]; ok $? "guest: $text"
done <"$guest_dir/results.txt"
plan $_tap_n
done_testing
