# libmarktap, the shared core, and marktrace.
include_HEADERS =
marktapincludedir = $(includedir)/marktap
marktapinclude_HEADERS = runtime/include/marktap/marker.h

# The core that marktap.ko compiles too (see kmod/Kbuild).
MT_CORE_SOURCES = \
	runtime/core/mt_compat.h \
	runtime/core/mt_fmt.c runtime/core/mt_fmt.h \
	runtime/core/mt_event.c runtime/core/mt_event.h \
	runtime/core/mt_ring.c runtime/core/mt_ring.h \
	runtime/core/mt_session.c runtime/core/mt_session.h

# The core plus what user-space tools share (CTF writer): a convenience library.
noinst_LTLIBRARIES += runtime/libmarktap-core.la
runtime_libmarktap_core_la_SOURCES = $(MT_CORE_SOURCES)
runtime_libmarktap_core_la_CFLAGS = $(AM_CFLAGS) -fPIC

lib_LTLIBRARIES += runtime/libmarktap.la
runtime_libmarktap_la_SOURCES =
runtime_libmarktap_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
runtime_libmarktap_la_LDFLAGS = -version-info 0:0:0
runtime_libmarktap_la_LIBADD = runtime/libmarktap-core.la
pkgconfig_DATA += runtime/marktap.pc

bin_PROGRAMS += runtime/marktrace
runtime_marktrace_SOURCES = \
	runtime/marktrace/main.c runtime/marktrace/marktrace.h \
	runtime/marktrace/cmd_record.c runtime/marktrace/cmd_list.c
runtime_marktrace_LDADD = runtime/libmarktap-core.la $(ELF_LIBS)
runtime_marktrace_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS)
# marktrace view / stats, the CTF reader and the filter: view.mk
include $(srcdir)/runtime/marktrace/view.mk
