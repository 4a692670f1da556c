# Tests of the marker runtime and the recorder.
check_PROGRAMS += tests/runtime/fmt-test tests/runtime/ring-test
TESTS += tests/runtime/fmt-test tests/runtime/ring-test
tests_runtime_fmt_test_SOURCES = tests/runtime/fmt-test.c
tests_runtime_fmt_test_LDADD = runtime/libmarktap-core.la
tests_runtime_ring_test_SOURCES = tests/runtime/ring-test.c
tests_runtime_ring_test_LDADD = runtime/libmarktap-core.la
EXTRA_DIST += tapsets/markers.tsv
