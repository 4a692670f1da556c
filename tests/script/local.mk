# Probe scripts run in traced processes: marktap + libmarktap + the script host.
check_PROGRAMS += tests/script/target
tests_script_target_SOURCES = tests/script/target.c
tests_script_target_LDADD = runtime/libmarktap.la -lpthread
# a real executable (no libtool wrapper): scripts name it in process("PATH")
tests_script_target_LDFLAGS = -no-install
TESTS += tests/script/in-process.t
EXTRA_DIST += tests/script/in-process.t
