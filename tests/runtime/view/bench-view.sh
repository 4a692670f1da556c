#!/bin/sh
# bench-view.sh - events per second of text: marktrace view vs babeltrace2
# on one generated trace (int, long, short string; 4 CPU streams).
#   bench-view.sh BUILDDIR [EVENTS] [RUNS]
# Prints the best of RUNS wall-clock times and user CPU times for each.
# Not a test: speed belongs in bench/ (the lead may move this there).
B=${1:?usage: bench-view.sh BUILDDIR [EVENTS] [RUNS]}
N=${2:-1000000}
RUNS=${3:-3}
T=$(mktemp -d "${TMPDIR:-/tmp}/mt-bench.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
printf 'trace .\nbulk %s 4\n' "$N" | "$B/tests/runtime/view/gentrace" "$T/trace" || exit 1
echo "trace: $N events, $(du -sh "$T/trace" | cut -f1)"
best() { # best NAME CMD...: min wall and min user time over RUNS
	name=$1; shift
	i=0
	while [ $i -lt "$RUNS" ]; do
		/usr/bin/time -f '%e %U' -a -o "$T/$name.times" "$@" > /dev/null 2>&1
		i=$((i + 1))
	done
	sort -n "$T/$name.times" | head -1 | {
		read wall user
		ucpu=$(sort -k2 -n "$T/$name.times" | head -1 | cut -d' ' -f2)
		echo "$name: best wall $wall s ($(awk -v n="$N" -v t="$wall" 'BEGIN { printf "%.0f", n / t }') events/s), best user $ucpu s"
		echo "$wall" > "$T/$name.best"
	}
}
best marktrace "$B/runtime/marktrace/marktrace" view "$T/trace"
best babeltrace2 babeltrace2 "$T/trace"
awk -v a="$(cat "$T/babeltrace2.best")" -v b="$(cat "$T/marktrace.best")" \
	'BEGIN { printf "ratio: marktrace view is %.1fx babeltrace2 (wall clock)\n", a / b }'
