#!/bin/sh
# analyses.t - LTTng's analyses as scripts: scripts/cputop.stp,
# syscallstats, irqstats, schedlog, iolatencytop, memtop and the
# frequency analyses (syscallfreq, irqfreq, schedfreq) run live in
# Debian's kernel under qemu and with marktap --trace over a kernel
# recording of the same workload (analyses-body.sh, in the guest).
guest_tag=-analyses
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"
guest_start
[ -x "$top_builddir/translator/marktap" ] || skip_all "marktap not built"
guest_boot "$top_srcdir/tests/kernel/analyses-body.sh" 600
guest_report $? 60
[ "$guest_nchecks" = 21 ]; ok $? "the guest reported its 21 checks ($guest_nchecks)"
plan $_tap_n
done_testing
