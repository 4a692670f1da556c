# libmarktap, the shared core, and marktrace.
include_HEADERS =
marktapincludedir = $(includedir)/marktap
marktapinclude_HEADERS = runtime/include/marktap/marker.h

# The core that marktap.ko compiles too (see kmod/Kbuild).
MT_CORE_SOURCES = \
	runtime/core/mt_compat.h \
	runtime/core/mt_fmt.c runtime/core/mt_fmt.h \
	runtime/core/mt_event.c runtime/core/mt_event.h \
	runtime/core/mt_ring.c runtime/core/mt_ring.h runtime/core/mt_rseq.h runtime/core/mt_rseq.c \
	runtime/core/mt_session.c runtime/core/mt_session.h \
	runtime/core/mt_plan.c runtime/core/mt_plan.h runtime/core/mt_manifest.h

# The core plus what user-space tools share (CTF writer): a convenience library.
noinst_LTLIBRARIES += runtime/libmarktap-core.la
runtime_libmarktap_core_la_SOURCES = $(MT_CORE_SOURCES)
runtime_libmarktap_core_la_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden

# libmarktap-tools (runtime/tools/): what marktrace and marktap share:
# the CTF writer and reader, the ELF note and SDT readers, the trace's
# thread state, lttng-relayd's protocol, and /dev/marktap's user side.
noinst_LTLIBRARIES += runtime/libmarktap-tools.la
runtime_libmarktap_tools_la_SOURCES = \
	runtime/tools/mt_ctf.c runtime/tools/mt_ctf.h \
	runtime/tools/mt_notes.c runtime/tools/mt_notes.h \
	runtime/tools/mt_sdt.c runtime/tools/mt_sdt.h \
	runtime/tools/ctf_read.c runtime/tools/ctf_read.h runtime/tools/ctf_int.h runtime/tools/ctf_open.c \
	runtime/tools/ctf_tsdl.c runtime/tools/ctf_tsdl.h runtime/tools/ctf_trace.c runtime/tools/mt_utf8.h \
	runtime/tools/tstate.c runtime/tools/tstate.h \
	runtime/tools/relay_net.c runtime/tools/relay_net.h \
	runtime/tools/relay_live.c runtime/tools/relay_live.h \
	runtime/tools/kernel.c runtime/tools/kernel.h runtime/proto/mt_ioctl.h
runtime_libmarktap_tools_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/runtime/tools
runtime_libmarktap_tools_la_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS)
runtime_libmarktap_tools_la_LIBADD = runtime/libmarktap-core.la $(ELF_LIBS)
# x86_64 system call names for tstate.c, from the table the tapsets are
# generated with (tapsets/syscalls.stp, translator/local.mk: SYSCALL_HEADER)
nodist_runtime_libmarktap_tools_la_SOURCES = runtime/tools/syscall_names.h
CLEANFILES += runtime/tools/syscall_names.h
# (through a variable: a rule naming the object itself would replace
# automake's compile rule for it)
MT_TSTATE_LO = runtime/tools/libmarktap_tools_la-tstate.lo
$(MT_TSTATE_LO): runtime/tools/syscall_names.h
runtime/tools/syscall_names.h: tapsets/syscalls.stp
	$(AM_V_GEN)$(MKDIR_P) runtime/tools && \
	{ echo "/* generated from tapsets/syscalls.stp: do not edit */"; \
	  echo "static const char *const syscall_names[] = {"; \
	  sed -n 's/^[[:space:]]*names\[\([0-9][0-9]*\)\] = "\([a-z0-9_]*\)"$$/	[\1] = "\2",/p' tapsets/syscalls.stp; \
	  echo "};"; } > $@.tmp && \
	test "$$(grep -c '\] = "' $@.tmp)" -ge 300 && mv $@.tmp $@

lib_LTLIBRARIES += runtime/libmarktap.la
runtime_libmarktap_la_SOURCES = \
	runtime/lib/mt_lib.h runtime/lib/markers.c runtime/lib/registry.c runtime/lib/ranges.c \
	runtime/lib/record.c \
	runtime/lib/agent.c runtime/proto/mt_agent.h \
	runtime/lib/script.c runtime/proto/mt_wire.h runtime/lib/final.c \
	runtime/lib/statedump.c runtime/lib/sites.c \
	runtime/lib/text.c runtime/lib/text.h
runtime_libmarktap_la_CPPFLAGS = $(AM_CPPFLAGS) -DMT_PKGLIBDIR='"$(pkglibdir)"'
runtime_libmarktap_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
# -z nodelete: its threads (agent, sites) run its code; a program that
# reaches it only through a plugin must not unmap it at dlclose()
runtime_libmarktap_la_LDFLAGS = -version-info 0:0:0 -Wl,-z,nodelete
runtime_libmarktap_la_LIBADD = runtime/libmarktap-core.la
pkgconfig_DATA += runtime/marktap.pc

# The program lives in runtime/marktrace/ (the folder of its sources);
# fragments add sources to runtime_marktrace_SOURCES.
bin_PROGRAMS += runtime/marktrace/marktrace
runtime_marktrace_marktrace_SOURCES = $(runtime_marktrace_SOURCES)
runtime_marktrace_marktrace_LDADD = $(runtime_marktrace_LDADD)
runtime_marktrace_marktrace_CFLAGS = $(runtime_marktrace_CFLAGS)
runtime_marktrace_SOURCES = \
	runtime/marktrace/main.c runtime/marktrace/marktrace.h \
	runtime/marktrace/cmd_record.c runtime/marktrace/record_say.c runtime/marktrace/record.h \
	runtime/marktrace/consumer.c runtime/marktrace/recorder.c \
	runtime/marktrace/record_kernel.c runtime/marktrace/agent_client.c \
	runtime/marktrace/record_tp.c runtime/marktrace/tp_format.c \
	runtime/marktrace/tp_select.c \
	runtime/marktrace/record_tp.h \
	runtime/marktrace/cmd_list.c \
	runtime/marktrace/uclock.c runtime/marktrace/uclock.h
runtime_marktrace_LDADD = runtime/libmarktap-tools.la
runtime_marktrace_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) -I$(top_srcdir)/runtime/tools

# The instrumented demo program of the quick start.
noinst_PROGRAMS += runtime/demo/marktap-demo
runtime_demo_marktap_demo_SOURCES = runtime/demo/demo.c
runtime_demo_marktap_demo_LDADD = runtime/libmarktap.la -lpthread
# a real executable in the build tree, so that process("PATH") can name it
runtime_demo_marktap_demo_LDFLAGS = -no-install
# marktrace view / stats, the CTF reader and the filter: view.mk
include $(srcdir)/runtime/marktrace/view.mk
# marktrace timeline / export: timeline.mk
include $(srcdir)/runtime/marktrace/timeline.mk
# record --kernel --function: kernel functions (BTF, kprobes): kfunc.mk
include $(srcdir)/runtime/marktrace/kfunc.mk
# the Lua runtime library of translated scripts
include $(srcdir)/runtime/lua/local.mk
# the script host plugin
include $(srcdir)/runtime/script/local.mk

# --relay: the trace to lttng-relayd
runtime_marktrace_SOURCES += runtime/marktrace/relay.c runtime/marktrace/relay.h
