# Tests of the marker runtime and the recorder.
check_PROGRAMS += tests/runtime/fmt-test tests/runtime/ring-test
TESTS += tests/runtime/fmt-test tests/runtime/ring-test
tests_runtime_fmt_test_SOURCES = tests/runtime/fmt-test.c
tests_runtime_fmt_test_LDADD = runtime/libmarktap-core.la
tests_runtime_ring_test_SOURCES = tests/runtime/ring-test.c
tests_runtime_ring_test_LDADD = runtime/libmarktap-core.la
EXTRA_DIST += tapsets/markers.tsv

# The recorder end to end: stress, loss accounting, overwrite, SIGKILL, -p.
check_PROGRAMS += tests/runtime/stress tests/runtime/badfmt
tests_runtime_stress_SOURCES = tests/runtime/stress.c
tests_runtime_stress_LDADD = runtime/libmarktap.la -lpthread
tests_runtime_badfmt_SOURCES = tests/runtime/badfmt.c
tests_runtime_badfmt_LDADD = runtime/libmarktap.la
TESTS += tests/runtime/record.t
EXTRA_DIST += tests/runtime/record.t
TESTS += tests/runtime/concurrent.t
EXTRA_DIST += tests/runtime/concurrent.t
TESTS += tests/runtime/fmt-fuzz.t tests/runtime/sdt-fuzz.t
EXTRA_DIST += tests/runtime/fmt-fuzz.t tests/fuzz/fmt_fuzz.c tests/runtime/sdt-fuzz.t tests/fuzz/sdt_fuzz.c
TESTS += tests/runtime/status-line.t
EXTRA_DIST += tests/runtime/status-line.t
# -e exclusions whatever their order; what a recording took nothing of
# (patterns, programs without libmarktap, files without markers) is said.
TESTS += tests/runtime/record-patterns.t
EXTRA_DIST += tests/runtime/record-patterns.t
# marktap --trace: a probe point that matches no event of the trace is said
TESTS += tests/runtime/trace-unmatched.t
EXTRA_DIST += tests/runtime/trace-unmatched.t

# The agent of a process that dropped root's credentials (security.md)
check_PROGRAMS += tests/runtime/dropper
tests_runtime_dropper_SOURCES = tests/runtime/dropper.c
tests_runtime_dropper_LDADD = runtime/libmarktap.la -lpthread
tests_runtime_dropper_LDFLAGS = -no-install
TESTS += tests/runtime/agent-creds.t
EXTRA_DIST += tests/runtime/agent-creds.t
# SDT notes of another user's program (names with control bytes)
TESTS += tests/runtime/sdt-names.t
EXTRA_DIST += tests/runtime/sdt-names.t

# What a traced program may write into its session without harming
# marktrace, trace permissions and symlinks, exit status and metadata
# alignment, a full disk, marktrace killed.
check_PROGRAMS += tests/runtime/corrupt
tests_runtime_corrupt_SOURCES = tests/runtime/corrupt.c
tests_runtime_corrupt_LDADD = runtime/libmarktap.la -lpthread
TESTS += tests/runtime/record-corrupt.t tests/runtime/record-files.t \
	tests/runtime/record-exit.t tests/runtime/record-diskfull.t \
	tests/runtime/record-killed.t
EXTRA_DIST += tests/runtime/record-corrupt.t tests/runtime/record-files.t \
	tests/runtime/record-exit.t tests/runtime/record-diskfull.t \
	tests/runtime/record-killed.t

# The consumer's priority: --nice, and the command's niceness; per-CPU
# rings in restartable sequences (--sync).
TESTS += tests/runtime/record-nice.t tests/runtime/record-sync.t
EXTRA_DIST += tests/runtime/record-nice.t tests/runtime/record-sync.t

# Which clock user sessions stamp events with: the checks on
# made-up inputs, and recordings with the kernel's clocksource and the CPU
# flags replaced (kvm-clock: the TSC, steered; hpet: clock_gettime).
check_PROGRAMS += tests/runtime/uclock-test
TESTS += tests/runtime/uclock-test
tests_runtime_uclock_test_SOURCES = tests/runtime/uclock-test.c runtime/marktrace/uclock.c
tests_runtime_uclock_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime/marktrace -I$(top_srcdir)/runtime/tools
tests_runtime_uclock_test_LDADD = runtime/libmarktap-core.la
TESTS += tests/runtime/clock-source.t
EXTRA_DIST += tests/runtime/clock-source.t

# Events per packet from the rings' commit counts (the status line walks
# no event): racing writers, the 2^36 wrap, overwrite, forgeries.
check_PROGRAMS += tests/runtime/commit-count-test
TESTS += tests/runtime/commit-count-test
tests_runtime_commit_count_test_SOURCES = tests/runtime/commit-count-test.c \
	runtime/marktrace/consumer.c
tests_runtime_commit_count_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime/marktrace -I$(top_srcdir)/runtime/tools
tests_runtime_commit_count_test_LDADD = runtime/libmarktap-core.la -lpthread
# the same in Debian's kernel under qemu (tests/kernel/guest.sh): another
# kernel's clocksource and CPU flags
TESTS += tests/runtime/clock-guest.t
EXTRA_DIST += tests/runtime/clock-guest.t tests/runtime/clock-guest-body.sh
CLEANFILES += tests/kernel/initrd-clock.gz tests/kernel/console-clock.log tests/kernel/kbuild-clock.log

# marktrace record --relay to a real lttng-relayd on loopback
TESTS += tests/runtime/relay.t tests/runtime/relay-live.t
EXTRA_DIST += tests/runtime/relay.t tests/runtime/relay-live.t

# LTTng's own traces: a program with LTTng-UST tracepoints of
# every field kind recorded by lttng-tools, read by marktrace view and stats
# and compared with babeltrace2.
TESTS += tests/runtime/lttng-read.t
# LTTng's other context fields (ip, pthread_id, perf counters), no vpid
TESTS += tests/runtime/lttng-context.t
EXTRA_DIST += tests/runtime/lttng-context.t
EXTRA_DIST += tests/runtime/lttng-read.t tests/runtime/lttng/mtlt.c \
	tests/runtime/lttng/mtlt_tp.h tests/runtime/lttng/canon.py \
	tests/runtime/lttng/gen-compact.py

# Our clock is LTTng-UST's: babeltrace2 merges a marktap trace and an
# LTTng-UST trace of one program's run, their events in time order.
TESTS += tests/runtime/lttng-clock.t
EXTRA_DIST += tests/runtime/lttng-clock.t tests/runtime/lttng/mixed.c

# marktap --trace DIR SCRIPT: scripts over stored traces.
TESTS += tests/runtime/trace-replay.t tests/runtime/trace-hostile.t
EXTRA_DIST += tests/runtime/trace-replay.t tests/runtime/trace-hostile.t

# marktrace timeline and export (pictures): user-space traces
# here; kernel states from a trace recorded in qemu (timeline-guest.t)
check_PROGRAMS += tests/runtime/timeline/hostile
tests_runtime_timeline_hostile_SOURCES = tests/runtime/timeline/hostile.c
tests_runtime_timeline_hostile_LDADD = runtime/libmarktap.la
check_PROGRAMS += tests/runtime/timeline/requests
tests_runtime_timeline_requests_SOURCES = tests/runtime/timeline/requests.c
tests_runtime_timeline_requests_LDADD = runtime/libmarktap.la -lpthread
TESTS += tests/runtime/timeline.t tests/runtime/timeline-states.t tests/runtime/timeline-asan.t tests/runtime/timeline-flood.t
EXTRA_DIST += tests/runtime/timeline.t tests/runtime/timeline/check.py \
	tests/runtime/timeline-states.t tests/runtime/timeline/states.trace \
	tests/runtime/timeline-asan.t tests/runtime/timeline-flood.t tests/runtime/timeline/main-asan.c
TESTS += tests/runtime/export-pairs.t tests/runtime/timeline-markers.t
EXTRA_DIST += tests/runtime/export-pairs.t tests/runtime/timeline-markers.t tests/runtime/timeline/requests.c
TESTS += tests/runtime/timeline-guest.t
EXTRA_DIST += tests/runtime/timeline-guest.t tests/runtime/timeline-guest-body.sh
CLEANFILES += tests/kernel/initrd-timeline.gz tests/kernel/console-timeline.log tests/kernel/kbuild-timeline.log
check_PROGRAMS += tests/runtime/timeline/tlane-test
TESTS += tests/runtime/timeline/tlane-test
tests_runtime_timeline_tlane_test_SOURCES = tests/runtime/timeline/tlane-test.c runtime/marktrace/tlane.c
tests_runtime_timeline_tlane_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime/marktrace -I$(top_srcdir)/runtime/tools -I$(top_srcdir)/tests/lib

# #p addresses in plugins dlopen'ed without markers
TESTS += tests/runtime/view-dlopen.t
EXTRA_DIST += tests/runtime/view-dlopen.t

# The compact event layout of user traces: timestamps past the
# 24-bit field's range, thread renames, ids past 254, babeltrace2's
# reading, damaged extended headers.
check_PROGRAMS += tests/runtime/compact
tests_runtime_compact_SOURCES = tests/runtime/compact.c
tests_runtime_compact_LDADD = runtime/libmarktap.la -lpthread
TESTS += tests/runtime/record-compact.t
EXTRA_DIST += tests/runtime/record-compact.t

# marktrace record --context: LTTng's context fields in every event, read
# by babeltrace2 and marktrace view; the default layout unchanged.
check_PROGRAMS += tests/runtime/ctx4
tests_runtime_ctx4_SOURCES = tests/runtime/ctx4.c
tests_runtime_ctx4_LDADD = runtime/libmarktap.la -lpthread
TESTS += tests/runtime/record-context.t
# record --kernel -e SUBSYS:NAME: kernel tracepoints through perf
check_PROGRAMS += tests/runtime/tp-opener tests/runtime/tp-format-test
tests_runtime_tp_opener_SOURCES = tests/runtime/tp-opener.c
tests_runtime_tp_format_test_SOURCES = tests/runtime/tp-format-test.c \
	runtime/marktrace/tp_format.c
tests_runtime_tp_format_test_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/runtime/marktrace \
	-I$(top_srcdir)/runtime/tools
TESTS += tests/runtime/tp-format-test
TESTS += tests/runtime/record-tp.t
EXTRA_DIST += tests/runtime/record-tp.t
EXTRA_DIST += tests/runtime/record-context.t tests/runtime/ctxwalk.py

# Patched marker sites (MARKTAP_PATCHED_SITES: the disabled site)
check_PROGRAMS += tests/runtime/patched
tests_runtime_patched_SOURCES = tests/runtime/patched.c
tests_runtime_patched_LDADD = runtime/libmarktap.la -lpthread
tests_runtime_patched_LDFLAGS = -no-install
TESTS += tests/runtime/patched.t
EXTRA_DIST += tests/runtime/patched.t

# A trace's maker chooses what its readers open and print: marktrace view
# opens an object a trace names only if it is a regular file, and reads
# no symbol table larger than its file; marktap --trace escapes control
# bytes on a terminal.  The -o copy never waits for a relayd that takes
# no data.
TESTS += tests/runtime/view-objects.t tests/runtime/trace-tty.t tests/runtime/relay-stall.t
EXTRA_DIST += tests/runtime/view-objects.t tests/runtime/trace-tty.t tests/runtime/relay-stall.t
