# marktrace view / stats, the CTF reader and the filter (see runtime/local.mk)
MT_VIEW_SOURCES = \
	runtime/marktrace/cmd_view.c runtime/marktrace/cmd_stats.c \
	runtime/marktrace/filter.c runtime/marktrace/filter.h \
	runtime/marktrace/vbuf.c runtime/marktrace/vbuf.h \
	runtime/marktrace/view_sym.c runtime/marktrace/view_sym.h
runtime_marktrace_SOURCES += $(MT_VIEW_SOURCES)

# Test traces written byte by byte from a script (tests/runtime/view/gentrace.c).
check_PROGRAMS += tests/runtime/view/gentrace
tests_runtime_view_gentrace_SOURCES = tests/runtime/view/gentrace.c
tests_runtime_view_gentrace_LDADD = runtime/libmarktap-core.la

TESTS += \
	tests/runtime/view-basic.t \
	tests/runtime/view-order.t \
	tests/runtime/view-filter.t \
	tests/runtime/view-stats.t \
	tests/runtime/view-corrupt.t \
	tests/runtime/view-babeltrace.t \
	tests/runtime/view-asan.t \
	tests/runtime/view-fuzz.t \
	tests/runtime/view-symbols.t \
	tests/runtime/view-options.t
EXTRA_DIST += \
	tests/runtime/view-basic.t tests/runtime/view-order.t tests/runtime/view-filter.t \
	tests/runtime/view-stats.t tests/runtime/view-corrupt.t tests/runtime/view-babeltrace.t \
	tests/runtime/view-asan.t tests/runtime/view-fuzz.t tests/runtime/view-symbols.t \
	tests/runtime/view-options.t \
	tests/runtime/view/lib.sh tests/runtime/view/normalize.awk tests/runtime/view/view-main.c \
	tests/runtime/view/basic.trace tests/runtime/view/basic.expected \
	tests/runtime/view/filter.trace tests/runtime/view/alltypes.trace \
	tests/runtime/view/bench-view.sh \
	tests/fuzz/ctf_read_fuzz.c
# view-asan.t builds with the configured compiler.
AM_TESTS_ENVIRONMENT += CC='$(CC)'; export CC;

# A longer fuzz run by hand: make fuzz-ctf-read FUZZ_SECONDS=600
FUZZ_SECONDS = 60
fuzz-ctf-read: tests/runtime/view/gentrace$(EXEEXT) runtime/marktrace/marktrace$(EXEEXT)
	$(AM_TESTS_ENVIRONMENT) FUZZ_SECONDS=$(FUZZ_SECONDS) $(SHELL) $(srcdir)/tests/runtime/view-fuzz.t
.PHONY: fuzz-ctf-read
