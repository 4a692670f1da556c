#!/bin/sh
# kfuzz.sh - the device fuzzer of tests/kernel/kfuzz.t, run long (a soak):
#
#   bench/kfuzz.sh BUILDDIR [OPS] [SEED]
#
# OPS defaults to 100000 (an hour or so under TCG); the guest's time limit
# grows with it.  The console stays in BUILDDIR/tests/kernel/console-kfuzz.log.
set -e
build=$(cd "${1:?usage: bench/kfuzz.sh BUILDDIR [OPS] [SEED]}" && pwd)
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
KFUZZ_OPS=${2:-100000}
[ -n "$3" ] && KFUZZ_SEED=$3 && export KFUZZ_SEED
export KFUZZ_OPS top_srcdir
make -C "$build" -s tests/kernel/kfuzz tests/kernel/kreader runtime/marktrace/marktrace
cd "$build" && top_builddir=$build sh "$top_srcdir/tests/kernel/kfuzz.t"
