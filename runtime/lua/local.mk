# The Lua runtime library of translated SystemTap scripts (runtime/lua/API.md).
# Linked by marktap (translator/) and libmarktap (handlers in traced programs).

MT_LUA_SOURCES = \
	runtime/lua/mt_lua.h runtime/lua/mt_lua_int.h \
	runtime/lua/mt_lua.c runtime/lua/mt_lua_base.c runtime/lua/mt_lua_fmt.c \
	runtime/lua/mt_lua_str.c runtime/lua/mt_lua_ctx.c runtime/lua/mt_lua_ksym.c \
	runtime/lua/mt_lua_fp.c
MT_LUA_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/runtime/lua -I$(top_srcdir)/runtime/lua

noinst_LTLIBRARIES += runtime/lua/libmtlua.la
runtime_lua_libmtlua_la_SOURCES = $(MT_LUA_SOURCES)
runtime_lua_libmtlua_la_CPPFLAGS = $(MT_LUA_CPPFLAGS)
runtime_lua_libmtlua_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) -fPIC
runtime_lua_libmtlua_la_LIBADD = $(LUA_LIBS) -lm

# The Lua half of the module (maps, statistics, charts), compiled in as a C string.
runtime/lua/mt_rt_lua.h: $(srcdir)/runtime/lua/mt_rt.lua
	$(AM_V_GEN)$(MKDIR_P) runtime/lua && { \
	  echo '/* Generated from runtime/lua/mt_rt.lua; do not edit. */'; \
	  echo 'static const char mt_rt_lua_source[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' \
	    $(srcdir)/runtime/lua/mt_rt.lua; \
	  echo ';'; } > $@-t && mv $@-t $@
# Objects that include the generated header (named through a variable so
# that automake keeps its own compile rules for them).
MT_LUA_RT_USERS = runtime/lua/libmtlua_la-mt_lua.lo \
	runtime/lua/tests_lua_mtlua_asan_test-mt_lua.$(OBJEXT) \
	runtime/lua/tests_lua_sync_asan_test-mt_lua.$(OBJEXT)
$(MT_LUA_RT_USERS): runtime/lua/mt_rt_lua.h
CLEANFILES += runtime/lua/mt_rt_lua.h
EXTRA_DIST += runtime/lua/mt_rt.lua runtime/lua/API.md

# Tests: the driver runs Lua snippets through the C API and compares their
# output with stap's documented output.  The -asan variant builds the library
# sources again with AddressSanitizer and UBSan.
check_PROGRAMS += tests/lua/mtlua-test tests/lua/mtlua-asan-test
TESTS += tests/lua/mtlua-test tests/lua/mtlua-asan-test
tests_lua_mtlua_test_SOURCES = tests/lua/mtlua-test.c
tests_lua_mtlua_test_CPPFLAGS = $(MT_LUA_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_lua_mtlua_test_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_lua_mtlua_test_LDADD = runtime/lua/libmtlua.la $(LUA_LIBS)
tests_lua_mtlua_asan_test_SOURCES = tests/lua/mtlua-test.c $(MT_LUA_SOURCES)
tests_lua_mtlua_asan_test_CPPFLAGS = $(MT_LUA_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_lua_mtlua_asan_test_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
tests_lua_mtlua_asan_test_LDFLAGS = -fsanitize=address,undefined
tests_lua_mtlua_asan_test_LDADD = $(LUA_LIBS) -lm

# Globals between states (mt_lua_sync_*): runtime/lua/API.md, "Several states".
# The -asan variant feeds the damaged buffers to the library built with
# AddressSanitizer and UBSan.
check_PROGRAMS += tests/lua/sync-test tests/lua/sync-asan-test
TESTS += tests/lua/sync-test tests/lua/sync-asan-test
tests_lua_sync_test_SOURCES = tests/lua/sync-test.c
tests_lua_sync_test_CPPFLAGS = $(MT_LUA_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_lua_sync_test_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_lua_sync_test_LDADD = runtime/lua/libmtlua.la $(LUA_LIBS)
tests_lua_sync_asan_test_SOURCES = tests/lua/sync-test.c $(MT_LUA_SOURCES)
tests_lua_sync_asan_test_CPPFLAGS = $(MT_LUA_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_lua_sync_asan_test_CFLAGS = $(tests_lua_mtlua_asan_test_CFLAGS)
tests_lua_sync_asan_test_LDFLAGS = -fsanitize=address,undefined
tests_lua_sync_asan_test_LDADD = $(LUA_LIBS) -lm

# The runtime, its tests and the run corpus on an integer-only Lua (the
# number model of marktap.ko: kmod/lua/luaconf.h), built by the test.
TESTS += tests/lua/intlua.t
EXTRA_DIST += tests/lua/intlua.t
clean-local: clean-intlua
clean-intlua:
	rm -rf tests/lua/intlua
.PHONY: clean-intlua
