#!/bin/sh
# Whether the SystemTap examples marktap elaborates (bench/examples.sh)
# also run: each one that marktap -p2 elaborates on the host, against the
# guest kernel's BTF, is run as root in Debian's kernel under qemu (one
# boot, tests/kernel/guest.sh) with its .meta command line, -T 3 added
# unless it has its own -c command, every run bounded by timeout 60,
# beside a small background load (a read, a write, a fork and an exec
# five times a second).
#
#   bench/examples-run.sh [BUILDDIR] [-v] [PATTERN...]
#
# BUILDDIR defaults to _build (after make).  PATTERNs (shell patterns over
# DIR/NAME.stp, e.g. 'process/*') run only those examples.  -v lists
# every example with its result and the first lines its run printed.
# Each run ends as one of:
#   ran            started, ran to its end, exit 0
#   refused        exited non-zero before any handler failed (its first ERROR)
#   died           a handler's error ended it (its first ERROR)
#   timed out      still running after 60 s
#   needs a target its process(...) program or -c command is not in the guest
#   crashed        the guest died during it (then the rest run in a new boot)
#   hung the guest the guest printed nothing for 150 s (stopped; the rest
#                  run in a new boot)
# and the summary groups the first errors of those that did not run.
# (one block: the shell reads it whole, so that editing the file while a
# run goes on changes nothing in that run)
{
set -e
B=${1:-_build}
[ $# -gt 0 ] && shift
verbose=; [ "$1" = -v ] && { verbose=1; shift; }
. "$(dirname "$0")/examples-lib.sh"
ex_setup "$B" examples-run.sh
top_builddir=$B top_srcdir=$top
export top_builddir top_srcdir
guest_tag=-exrun
. "$top/tests/kernel/guest.sh"
# guest.sh packs kreader (a check program) into every guest
[ -x "$B/tests/kernel/kreader" ] || make -s -C "$B" tests/kernel/kreader >/dev/null ||
	{ echo "examples-run.sh: cannot build tests/kernel/kreader" >&2; exit 1; }
guest_prepare || { echo "examples-run.sh: skipped: $guest_why"; exit 0; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
set +e

# the examples that elaborate (and match the patterns), one a line:
# REL <tab> its directory under EX <tab> its .meta words
: >"$TMP/list"
total=0
pats="$*"
pick() {
	if [ -n "$pats" ]; then
		m=0
		set -f
		for p in $pats; do case $ex_rel in $p) m=1 ;; esac; done
		set +f
		[ $m = 1 ] || return 0
	fi
	total=$((total + 1))
	ex_p2 "$TMP/err" || return 0
	printf '%s\t%s\t%s\n' "$ex_rel" "${ex_dir#"$EX"/}" "$ex_args" >>"$TMP/list"
}
ex_each pick
n=$(wc -l <"$TMP/list")
echo "examples-run.sh: marktap -p2 elaborates $n of $total examples; running them in $KVER under qemu"
tar -czf "$TMP/examples.tgz" -C "$EX" .

cat >"$TMP/body" <<'GUEST'
insmod /marktap.ko
export MARKTAP_DATADIR=/share/marktap
# the map of the kernel's sources (FUNCTION@FILE), when the host has one
for f in /bin/kernel-sources-*; do [ -f "$f" ] && export MARKTAP_KERNEL_SOURCES="$f"; done
/bin/busybox --install -s /bin 2>/dev/null
mkdir -p /ex && tar -xzf /bin/examples.tgz -C /ex
# a machine's life beside the examples: reads, writes, a fork and an exec
# five times a second (an idle guest gives a script of system calls
# nothing to see but marktap, whose own events its handlers skip)
(while :; do dd if=/proc/loadavg of=/dev/null 2>/dev/null; echo x >/tmp/.life; sleep 0.2; done) &
# run_one REL DIR WORDS: the example's line, -p dropped, -T 3 added
# unless it has -c
run_one() {
	cd "/ex/$2" || return
	rel=$1
	eval "set -- $3"
	hasc=0
	for a; do
		shift
		case $a in
		-p[0-9]) ;;
		-gp[0-9]) set -- "$@" -g ;;
		-c) hasc=1; set -- "$@" "$a" ;;
		*) set -- "$@" "$a" ;;
		esac
	done
	[ $hasc = 1 ] || set -- "$@" -T 3
	echo "EXSTART $rel"
	t0=$(cut -d. -f1 /proc/uptime)
	timeout 60 marktap "$@" </dev/null >/tmp/ex.out 2>/tmp/ex.err
	rc=$?
	t1=$(cut -d. -f1 /proc/uptime)
	head -3 /tmp/ex.out | cut -c1-150 | sed 's/^/EXOUT /'
	{ grep -E 'ERROR|error|WARNING' /tmp/ex.err || head -3 /tmp/ex.err; } | head -6 | cut -c1-200 | sed 's/^/EXERR /'
	echo "EXEND $rel $rc $((t1 - t0))"
	cd /
}
while IFS='	' read -r rel dir words; do
	run_one "$rel" "$dir" "$words"
done </bin/examples.list
rmmod marktap
GUEST

# boot; a guest that dies in an example says which (crashed), and the
# examples after it run in a new boot
: >"$TMP/results"
cp "$TMP/list" "$TMP/todo"
boots=0
while [ -s "$TMP/todo" ] && [ $boots -lt 5 ]; do
	boots=$((boots + 1))
	cp "$TMP/todo" "$TMP/examples.list"
	# a guest silent for 150 s is stuck in an example: stop it (its qemu,
	# known by this bench's initramfs)
	rm -f "$TMP/stuck"
	(
		raw="$guest_dir/console$guest_tag.log.raw"
		while sleep 10; do
			[ -f "$raw" ] || continue
			[ $(( $(date +%s) - $(stat -c %Y "$raw") )) -gt 150 ] || continue
			q=$(ps -eo pid=,args= | awk -v i="$guest_dir/initrd$guest_tag.gz" '$2 ~ /^qemu-system/ && index($0, i) { print $1 }')
			[ -n "$q" ] && : >"$TMP/stuck" && kill $q
		done
	) &
	watchdog=$!
	guest_boot "$TMP/body" $((300 + 30 * $(wc -l <"$TMP/todo"))) "$TMP/examples.tgz" "$TMP/examples.list" \
		${MARKTAP_KERNEL_SOURCES:+"$MARKTAP_KERNEL_SOURCES"}
	kill $watchdog
	cat "$guest_out" >>"$TMP/console"
	grep -E '^EX(START|OUT|ERR|END) ' "$guest_out" >>"$TMP/results"
	last=$(sed -n 's/^EXSTART //p' "$guest_out" | tail -1)
	if [ -z "$last" ]; then
		echo "examples-run.sh: the guest ran no example ($guest_out)"
		break
	fi
	if ! grep -q "^EXEND $last " "$guest_out"; then
		grep -m3 -E 'BUG|Oops|RIP|panic' "$guest_out" | sed 's/^/EXERR /' >>"$TMP/results"
		if [ -f "$TMP/stuck" ]; then
			echo "EXERR (the guest printed nothing for 150 s)" >>"$TMP/results"
			echo "EXSTUCK $last" >>"$TMP/results"
		else
			echo "EXCRASH $last" >>"$TMP/results"
		fi
	fi
	awk -F '\t' -v l="$last" 'f { print } $1 == l { f = 1 }' "$TMP/todo" >"$TMP/todo.next"
	mv "$TMP/todo.next" "$TMP/todo"
done
[ -n "$verbose" ] && echo "(console of the last boot: $guest_out)"

# the results: one line per example, and the groups
awk -v verbose="$verbose" -v list="$TMP/list" '
function short(s) {
	sub(/^EXERR /, "", s)
	gsub(/ at [^ ]+:[0-9]+:[0-9]+.*/, "", s)
	gsub(/"[^"]*"/, "\"…\"", s)
	return substr(s, 1, 110)
}
function done1(rel, class, why) {
	n[class]++
	if (class != "ran") g[class ": " why]++
	if (verbose != "") {
		printf "%-42s %s%s\n", rel, class, why != "" ? ": " why : ""
		printf "%s", log_
	}
	seen[rel] = 1
}
/^EXSTART / { rel = $2; err = ""; first = ""; died = 0; target = 0; log_ = ""; next }
/^EXOUT / { log_ = log_ "    out: " substr($0, 7) "\n"; next }
/^EXERR / {
	log_ = log_ "    err: " substr($0, 7) "\n"
	if (first == "" && $0 ~ /ERROR|error/) first = short($0)
	if ($0 ~ /Number of errors: [1-9]/) died = 1
	if ($0 ~ /^EXERR ERROR: cannot (run|start) |No such file or directory|no match for the file pattern/) target = 1
	next
}
/^EXCRASH / { done1($2, "crashed", first); next }
/^EXSTUCK / { done1($2, "hung the guest", ""); next }
/^EXEND / {
	rc = $3; secs = $4
	if (first == "" && log_ != "") { split(log_, l, "\n"); first = short(substr(l[1], 10)) }
	if (secs >= 60 || rc == 143 || rc == 124) done1(rel, "timed out", "")
	else if (rc == 0) done1(rel, "ran", "")
	else if (target) done1(rel, "needs a target", first)
	else if (died) done1(rel, "died", first)
	else done1(rel, "refused", first)
	next
}
END {
	while ((getline line < list) > 0) { split(line, f, "\t"); all++; if (!(f[1] in seen)) n["not run"]++ }
	printf "%d elaborate, %d run; refused %d, died %d, timed out %d, needs a target %d, crashed %d, hung %d, not run %d\n",
		all, n["ran"], n["refused"], n["died"], n["timed out"], n["needs a target"], n["crashed"], n["hung the guest"], n["not run"]
	for (k in g) printf "%5d %s\n", g[k], k | "sort -rn"
}' "$TMP/results"
exit
}
