# libmarktap, the shared core, and marktrace.
include_HEADERS =
marktapincludedir = $(includedir)/marktap
marktapinclude_HEADERS = runtime/include/marktap/marker.h

# The core that marktap.ko compiles too (see kmod/Kbuild).
MT_CORE_SOURCES = \
	runtime/core/mt_compat.h \
	runtime/core/mt_fmt.c runtime/core/mt_fmt.h \
	runtime/core/mt_event.c runtime/core/mt_event.h \
	runtime/core/mt_ring.c runtime/core/mt_ring.h

lib_LTLIBRARIES += runtime/libmarktap.la
runtime_libmarktap_la_SOURCES = $(MT_CORE_SOURCES)
runtime_libmarktap_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
runtime_libmarktap_la_LDFLAGS = -version-info 0:0:0
runtime_libmarktap_la_LIBADD =
pkgconfig_DATA += runtime/marktap.pc
