# TAP tests.  Each component adds its own fragment.
EXTRA_DIST += tests/lib/tap.sh tests/lib/tap.h tests/lib/fuzz.sh tests/lib/record.sh
include $(srcdir)/tests/runtime/local.mk
include $(srcdir)/tests/kernel/local.mk
include $(srcdir)/tests/script/local.mk
