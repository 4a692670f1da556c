# What every guest body (tests/kernel/*-body.sh) may use, put before the
# body in the guest's /init by guest.sh: TAP-like lines on the console,
# which guest_report renumbers into the test's plan.  A body may define
# its own variant after it.
say() { echo "$1 - $2"; }   # say ok|not ok DESCRIPTION
check() { # check DESCRIPTION COMMAND...: ok when COMMAND succeeds
	d=$1; shift
	if "$@"; then say ok "$d"; else say "not ok" "$d"; fi
}
# The end of a body that loaded marktap.ko: the kernel said nothing bad
# (its lines shown), and the module unloads.
check_clean_unload() {
	dmesg | grep -E 'BUG|WARNING|Oops|RIP|lockup' >dmesg.out
	sed 's/^/# dmesg: /' dmesg.out | head -6
	check "dmesg: no BUG, WARNING, Oops or lockup" test ! -s dmesg.out
	rmmod marktap
	check "marktap.ko unloads" sh -c "! grep -q '^marktap ' /proc/modules"
}
