# The guest's part of clock-guest.t (run by /init): what the guest's kernel
# offers, which clock marktrace chooses from it, and user traces recorded
# with it; the traces go back to the host (TRACE-BEGIN, tar | gzip | base64).
echo "CLOCKSOURCE $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "AVAILABLE $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource)"
echo "FLAGS $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -e '^constant_tsc$' -e '^nonstop_tsc$' | tr '\n' ' ')"
# the kernel's own choice, then kvm-clock named (the TSC if it passes the
# checks), then hpet named (clock_gettime)
echo kvm-clock > /tmp/kvm; echo hpet > /tmp/hpet
marktrace record -q -o /tmp/c-real -- /bin/target clock 100 10 >/tmp/c-real.out 2>&1
echo "RC-real $?"
MARKTAP_CLOCKSOURCE_FILE=/tmp/kvm marktrace record -q -o /tmp/c-kvm -- /bin/target clock 100 10 >/tmp/c-kvm.out 2>&1
echo "RC-kvm $?"
MARKTAP_CLOCKSOURCE_FILE=/tmp/hpet marktrace record -q -o /tmp/c-hpet -- /bin/target clock 20 10 >/tmp/c-hpet.out 2>&1
echo "RC-hpet $?"
for t in real kvm hpet; do echo "CLOCK-$t $(marktrace stats /tmp/c-$t | sed -n 's/^clock: *//p')"; done
echo TRACE-BEGIN; tar -C /tmp -cf - c-real c-kvm c-hpet | gzip | base64; echo TRACE-END
