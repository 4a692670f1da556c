# Probe scripts run in traced processes: marktap + libmarktap + the script host.
check_PROGRAMS += tests/script/target
tests_script_target_SOURCES = tests/script/target.c
tests_script_target_LDADD = runtime/libmarktap.la -lpthread
# a real executable (no libtool wrapper): scripts name it in process("PATH")
tests_script_target_LDFLAGS = -no-install
TESTS += tests/script/in-process.t tests/script/sdt-bpftrace.t
EXTRA_DIST += tests/script/in-process.t tests/script/sdt-bpftrace.t
# a library with a marker, loaded and unloaded by target's "dlopen" mode
check_LTLIBRARIES += tests/script/libmtlib.la
tests_script_libmtlib_la_SOURCES = tests/script/lib.c
tests_script_libmtlib_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_script_libmtlib_la_LIBADD = runtime/libmarktap.la
TESTS += tests/script/dlopen.t tests/script/clock.t tests/script/native.t
EXTRA_DIST += tests/script/dlopen.t tests/script/clock.t tests/script/native.t
# <sys/sdt.h> probes in a program without libmarktap (tests/script/sdt.t)
check_PROGRAMS += tests/script/sdt-target
tests_script_sdt_target_SOURCES = tests/script/sdt-target.c
tests_script_sdt_target_LDADD = -lpthread -ldl
# memory for tapset-funcs.t's user_string_utf16, user_buffer_quoted, set_user_*
check_PROGRAMS += tests/script/tapset-target
tests_script_tapset_target_SOURCES = tests/script/tapset-target.c
check_LTLIBRARIES += tests/script/libsdtlib.la
tests_script_libsdtlib_la_SOURCES = tests/script/sdtlib.c
tests_script_libsdtlib_la_LDFLAGS = -module -avoid-version -rpath /nowhere
TESTS += tests/script/sdt.t tests/script/tapset-funcs.t
EXTRA_DIST += tests/script/sdt.t tests/script/tapset-funcs.t
# trust boundaries, crossed as another user (setpriv)
TESTS += tests/script/security.t tests/script/final.t
EXTRA_DIST += tests/script/security.t tests/script/final.t tests/script/peer.py
# function probes (translator/dwarf*.c, runtime/script/ufunc*.c): the test
# builds tests/script/func-target.c itself, with -g -O0 and -g -O2
TESTS += tests/script/function.t
EXTRA_DIST += tests/script/function.t tests/script/func-target.c
# function probes never kill the program: libc's code that runs with
# every signal blocked (builds tests/script/ufunc-safe.c itself)
TESTS += tests/script/ufunc-safe.t
EXTRA_DIST += tests/script/ufunc-safe.t tests/script/ufunc-safe.c
# .return probes: C++ exceptions, cancelled threads, return registers
# (builds tests/script/ufunc-return.cc itself)
TESTS += tests/script/ufunc-return.t
EXTRA_DIST += tests/script/ufunc-return.t tests/script/ufunc-return.cc
# the ways a function probe runs, on functions whose first bytes choose
# them (builds tests/script/ufunc-routes.c itself)
TESTS += tests/script/ufunc-routes.t
EXTRA_DIST += tests/script/ufunc-routes.t tests/script/ufunc-routes.c
# C++ names: scopes, linkage names, demangled symbols (builds
# tests/script/ufunc-cxx.cc itself with g++)
TESTS += tests/script/ufunc-cxx.t
EXTRA_DIST += tests/script/ufunc-cxx.t tests/script/ufunc-cxx.cc
# guru mode (-g): function probes write the program's variables (the
# test builds its program itself)
TESTS += tests/script/ufunc-guru.t
EXTRA_DIST += tests/script/ufunc-guru.t
# the decoder of instructions function probes run out of line, against objdump
check_PROGRAMS += tests/script/insn-test
tests_script_insn_test_SOURCES = tests/script/insn-test.c runtime/script/insn.c runtime/script/insn.h
tests_script_insn_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime/script
TESTS += tests/script/insn.t
EXTRA_DIST += tests/script/insn.t
# process("P").plt("NAME"): PLT entries of a program and a library in
# three layouts (builds tests/script/ufunc-plt.c and ufunc-pltlib.c
# itself); patches never make a page writable and executable
TESTS += tests/script/ufunc-plt.t
EXTRA_DIST += tests/script/ufunc-plt.t tests/script/ufunc-plt.c tests/script/ufunc-pltlib.c
# bit fields as target variables, DWARF 2, 4 and 5, -O0 and -O2 (builds
# tests/script/ufunc-bitfield.c itself)
TESTS += tests/script/ufunc-bitfield.t
EXTRA_DIST += tests/script/ufunc-bitfield.t tests/script/ufunc-bitfield.c
# root's marktap on another user's process (-x, the scan): no descriptor
# of marktap's reaches it, -x again after a session ended, refused
# connections to the session socket said once per user and counted
TESTS += tests/script/attach.t
EXTRA_DIST += tests/script/attach.t
