# libmarktap-script.so: the probe-script host that libmarktap loads into a
# traced process when marktap runs a script there (runtime/lib/script.c).
pkglib_LTLIBRARIES = runtime/script/libmarktap-script.la
runtime_script_libmarktap_script_la_SOURCES = runtime/script/host.c runtime/proto/mt_wire.h \
	runtime/script/hlock.c runtime/script/hlock.h \
	runtime/script/plan.c runtime/script/plan.h runtime/core/mt_plan.c runtime/core/mt_plan.h \
	runtime/script/sdt.c runtime/script/sdt.h runtime/tools/mt_sdt.c runtime/tools/mt_sdt.h \
	runtime/script/ufunc.c runtime/script/ufunc.h runtime/script/ufunc_int.h \
	runtime/script/ufunc_recipe.c runtime/script/ufunc_site.c runtime/script/ufunc_return.c \
	runtime/script/ufunc_trap.c runtime/script/insn.c runtime/script/insn.h \
	runtime/script/probe.c runtime/script/probe.h runtime/lib/text.c runtime/lib/text.h \
	runtime/script/usym.c runtime/script/usym.h
runtime_script_libmarktap_script_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime/lua -I$(top_srcdir)/runtime/lib -I$(top_srcdir)/runtime/tools
runtime_script_libmarktap_script_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) -fvisibility=hidden
runtime_script_libmarktap_script_la_LDFLAGS = -module -avoid-version -shared -no-undefined
runtime_script_libmarktap_script_la_LIBADD = runtime/lua/libmtlua.la $(LUA_LIBS) -lpthread
