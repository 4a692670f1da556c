# Kernel tests: marktap.ko in Debian's kernel under qemu (tests/kernel/guest.sh).
# kreader runs inside the guest; it is built here with the tools it tests.
check_PROGRAMS += tests/kernel/kreader
tests_kernel_kreader_SOURCES = tests/kernel/kreader.c runtime/tools/kernel.c \
	runtime/tools/kernel.h runtime/proto/mt_ioctl.h
tests_kernel_kreader_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime/tools -I$(top_srcdir)/tests/lib
tests_kernel_kreader_LDADD = runtime/libmarktap-core.la -lpthread
TESTS += tests/kernel/kmod.t
EXTRA_DIST += tests/kernel/kmod.t tests/kernel/guest.sh tests/kernel/body.sh tests/kernel/body-lib.sh
# the subsystem tapsets' aliases and the example scripts in the guest, the
# handlers on recorded events (tapsets.t) and in the kernel (tapsets-klua.t);
# tapsets-act and mt_acts.ko (tapsets-kmod.c, built by the test) act there
check_PROGRAMS += tests/kernel/tapsets-act
tests_kernel_tapsets_act_SOURCES = tests/kernel/tapsets-act.c
TESTS += tests/kernel/tapsets.t tests/kernel/tapsets-klua.t
EXTRA_DIST += tests/kernel/tapsets.t tests/kernel/tapsets-klua.t tests/kernel/tapsets-run.sh \
	tests/kernel/tapsets-body.sh tests/kernel/tapsets-kmod.c tests/kernel/tapsets
CLEANFILES += tests/kernel/initrd-tapsets.gz tests/kernel/console-tapsets.log tests/kernel/kbuild-tapsets.log \
	tests/kernel/initrd-tapsets-klua.gz tests/kernel/console-tapsets-klua.log tests/kernel/kbuild-tapsets-klua.log
# the device and the kernel recorder held to account; ia32.c is built by kaudit.t itself (gcc -m32)
TESTS += tests/kernel/kaudit.t
EXTRA_DIST += tests/kernel/kaudit.t tests/kernel/kaudit-body.sh tests/kernel/ia32.c
CLEANFILES += tests/kernel/ia32 tests/kernel/ia32.log tests/kernel/initrd-kaudit.gz \
	tests/kernel/console-kaudit.log tests/kernel/kbuild-kaudit.log
CLEANFILES += tests/kernel/initrd.gz tests/kernel/console.log tests/kernel/kbuild.log \
	tests/kernel/list.txt tests/kernel/devlist.txt tests/kernel/tsv.txt tests/kernel/listed.txt tests/kernel/results.txt
clean-local: clean-kernel-tests
clean-kernel-tests:
	rm -rf tests/kernel/root tests/kernel/root-* tests/kernel/kbuild-* tests/kernel/cache tests/kernel/klua-gen tests/kernel/klua-fake tests/kernel/ktp-trace \
		tests/kernel/krec-func-trace
.PHONY: clean-kernel-tests
# klua.t: Lua handlers inside marktap.ko; klua loads scripts in the guest
check_PROGRAMS += tests/kernel/klua
tests_kernel_klua_SOURCES = tests/kernel/klua.c runtime/proto/mt_ioctl.h
TESTS += tests/kernel/klua.t
EXTRA_DIST += tests/kernel/klua.t tests/kernel/klua-body.sh tests/kernel/klua-alloc.c tests/kernel/klua-alloc.h
CLEANFILES += tests/kernel/initrd-klua.gz tests/kernel/console-klua.log \
	tests/kernel/kbuild-klua.log tests/kernel/results-klua.txt tests/kernel/klua-gen.tar \
	tests/kernel/klua-alloc tests/kernel/klua-alloc.log tests/kernel/klua-alloc.out tests/kernel/klua-bench
# record --kernel -e SUBSYS:NAME: perf tracepoints in Debian's kernel
TESTS += tests/kernel/ktp.t
EXTRA_DIST += tests/kernel/ktp.t tests/kernel/ktp-body.sh
CLEANFILES += tests/kernel/initrd-ktp.gz tests/kernel/console-ktp.log tests/kernel/kbuild-ktp.log
# record --kernel --relay to an lttng-relayd in the guest
TESTS += tests/kernel/krelay.t
EXTRA_DIST += tests/kernel/krelay.t tests/kernel/krelay-body.sh
CLEANFILES += tests/kernel/initrd-krelay.gz tests/kernel/console-krelay.log tests/kernel/kbuild-krelay.log
# LTTng's analyses as scripts (scripts/cputop.stp...), live in the
# kernel and with --trace over a recording of the same workload
TESTS += tests/kernel/analyses.t
EXTRA_DIST += tests/kernel/analyses.t tests/kernel/analyses-body.sh
CLEANFILES += tests/kernel/initrd-analyses.gz tests/kernel/console-analyses.log tests/kernel/kbuild-analyses.log
# kfuzz.t: the device fuzzed as a member of its group (kfuzz runs in the
# guest); bench/kfuzz.sh runs it long
check_PROGRAMS += tests/kernel/kfuzz
tests_kernel_kfuzz_SOURCES = tests/kernel/kfuzz.c runtime/proto/mt_ioctl.h
tests_kernel_kfuzz_LDADD = runtime/libmarktap-core.la
TESTS += tests/kernel/kfuzz.t
EXTRA_DIST += tests/kernel/kfuzz.t tests/kernel/kfuzz-body.sh bench/kfuzz.sh
CLEANFILES += tests/kernel/initrd-kfuzz.gz tests/kernel/console-kfuzz.log tests/kernel/kbuild-kfuzz.log \
	tests/kernel/kfuzz-run.sh
# hostile Lua in the module: every run bounded in time, the overload
# guard, sessions that end on -T and signals whatever the handlers do
TESTS += tests/kernel/khostile.t
EXTRA_DIST += tests/kernel/khostile.t tests/kernel/khostile-body.sh
CLEANFILES += tests/kernel/initrd-khostile.gz tests/kernel/console-khostile.log tests/kernel/kbuild-khostile.log
# khandlers.t: kernel handlers as stap's: kernel_string() of an address,
# printf's three-digit widths, try/catch 50 deep, the group's arena limit
TESTS += tests/kernel/khandlers.t
EXTRA_DIST += tests/kernel/khandlers.t tests/kernel/khandlers-body.sh
CLEANFILES += tests/kernel/initrd-khandlers.gz tests/kernel/console-khandlers.log tests/kernel/kbuild-khandlers.log
# kfunc.t: kernel.function and kprobe.function probes from the guest
# kernel's BTF, run as kprobes by marktap.ko
TESTS += tests/kernel/kfunc.t
EXTRA_DIST += tests/kernel/kfunc.t tests/kernel/kfunc-body.sh
CLEANFILES += tests/kernel/initrd-kfunc.gz tests/kernel/console-kfunc.log tests/kernel/kbuild-kfunc.log
# kdata.t: kernel.data hardware watchpoints (kmod/mt_hwbp.c) in the guest
TESTS += tests/kernel/kdata.t
EXTRA_DIST += tests/kernel/kdata.t tests/kernel/kdata-body.sh
CLEANFILES += tests/kernel/initrd-kdata.gz tests/kernel/console-kdata.log tests/kernel/kbuild-kdata.log
# kfunc-tapsets.t: the tapset aliases over kernel functions (vfs.*,
# ioblock.*, tcp.*...) with known values, run by marktap.ko
TESTS += tests/kernel/kfunc-tapsets.t
EXTRA_DIST += tests/kernel/kfunc-tapsets.t tests/kernel/kfunc-tapsets-body.sh tests/kernel/ia32-send.c
CLEANFILES += tests/kernel/initrd-kfunctap.gz tests/kernel/console-kfunctap.log tests/kernel/kbuild-kfunctap.log \
	tests/kernel/ia32-send tests/kernel/ia32-send.log
# knetfilter.t: netfilter probes on the guest's loopback, run by
# marktap.ko's netfilter hooks; knet sends and counts the packets
check_PROGRAMS += tests/kernel/knet
tests_kernel_knet_SOURCES = tests/kernel/knet.c
TESTS += tests/kernel/knetfilter.t
EXTRA_DIST += tests/kernel/knetfilter.t tests/kernel/knetfilter-body.sh
CLEANFILES += tests/kernel/initrd-knetfilter.gz tests/kernel/console-knetfilter.log tests/kernel/kbuild-knetfilter.log
# ktrace.t: kernel.trace probes from the guest kernel's BTF, run as
# tracepoint probes by marktap.ko
TESTS += tests/kernel/ktrace.t
EXTRA_DIST += tests/kernel/ktrace.t tests/kernel/ktrace-body.sh
CLEANFILES += tests/kernel/initrd-ktrace.gz tests/kernel/console-ktrace.log tests/kernel/kbuild-ktrace.log
# ksessions.t: several scripts and recordings at once, as root and the
# group; the group's limits; large arrays; releases at the end of -c
TESTS += tests/kernel/ksessions.t
EXTRA_DIST += tests/kernel/ksessions.t tests/kernel/ksessions-body.sh
CLEANFILES += tests/kernel/initrd-ksessions.gz tests/kernel/console-ksessions.log tests/kernel/kbuild-ksessions.log
# kprocfs.t: SystemTap's procfs files, served by marktap.ko and answered
# by marktap, as root and the group; Debian's prometheus examples
TESTS += tests/kernel/kprocfs.t
EXTRA_DIST += tests/kernel/kprocfs.t tests/kernel/kprocfs-body.sh
CLEANFILES += tests/kernel/initrd-kprocfs.gz tests/kernel/console-kprocfs.log tests/kernel/kbuild-kprocfs.log
# kexamples.t: Debian's examples over stap's socket, tcp, rlimit and
# netdev functions (tcp_connections, tcp_retransmission, rlimit_nofile,
# netdev) and the functions of pfiles and psig, run by marktap.ko
TESTS += tests/kernel/kexamples.t
EXTRA_DIST += tests/kernel/kexamples.t tests/kernel/kexamples-body.sh
CLEANFILES += tests/kernel/initrd-kexamples.gz tests/kernel/console-kexamples.log tests/kernel/kbuild-kexamples.log
# krec-func.t: record --kernel --function (kprobe PMU, BTF parameters)
TESTS += tests/kernel/krec-func.t
EXTRA_DIST += tests/kernel/krec-func.t tests/kernel/krec-func-body.sh
CLEANFILES += tests/kernel/initrd-krec-func.gz tests/kernel/console-krec-func.log \
	tests/kernel/kbuild-krec-func.log
