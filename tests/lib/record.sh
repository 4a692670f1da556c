# The recorder's tests' common start (record.t, record-sync.t, patched.t): TAP, the
# tools, a work folder removed at the end, and a check of stress's events.
. "$(dirname "$0")/../lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
STRESS=$B/tests/runtime/stress
[ -x "$MT" ] && [ -x "$STRESS" ] || skip_all "build first"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# stress's "thread T seq S" events in marktrace view's text FILE: prints
# "threads events bad back" (seqs out of order per thread, times that go
# back)
check_seqs() {
	awk '/stress_ev:/ {
		for (i = 1; i <= NF; i++) { if ($i ~ /^thread=/) t = substr($i, 8); if ($i ~ /^seq=/) s = substr($i, 5) }
		if (!(t in next_seq)) { next_seq[t] = 0; nt++ }
		if (s != next_seq[t]) bad++
		next_seq[t] = s + 1; n++
		ts = substr($1, 2, length($1) - 2) + 0
		if (ts < last) back++
		last = ts
	} END { printf "%d %d %d %d\n", nt, n, bad + 0, back + 0 }' "$1"
}

# The events marktrace view's text FILE says were lost ("lost N events on")
view_lost() {
	awk '/ lost [0-9]+ events? on / { for (i = 1; i <= NF; i++) if ($i == "lost") s += $(i + 1) } END { print s + 0 }' "$1"
}

# Trace DIR as marktrace view's text in FILE (relative times), and how
# many EVENT events it delivered and how many it says were lost: sets
# delivered and lost
view_count() {
	"$MT" view --relative --no-delta "$1" > "$2"
	delivered=$(grep -c "$3:" "$2")
	lost=$(view_lost "$2")
}
