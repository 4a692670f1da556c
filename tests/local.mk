# TAP tests.  Each component adds its own fragment.
EXTRA_DIST += tests/lib/tap.sh tests/lib/tap.h tests/lib/fuzz.sh tests/lib/record.sh tests/lib/run-test.sh \
	tests/lib/lttng.sh
# every test under a deadline (tests/lib/run-test.sh), whatever its kind
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/lib/run-test.sh
T_LOG_COMPILER = $(LOG_COMPILER)
SH_LOG_COMPILER = $(LOG_COMPILER)
include $(srcdir)/tests/runtime/local.mk
include $(srcdir)/tests/kernel/local.mk
include $(srcdir)/tests/script/local.mk
# the tests' own copies of the programs they probe (own_copy, tap.sh)
clean-local: clean-own-copies
clean-own-copies:
	rm -rf tests/own
.PHONY: clean-own-copies
