#!/bin/sh
# intlua.t - the Lua runtime of translated scripts needs no floating point
# marktap.ko runs the same runtime library (mt_rt.lua, the C of
# runtime/lua) and the same generated code on a Lua whose numbers are all
# integers.
#
# 1. Always: the bytecode of mt_rt.lua and of the code generated for every
#    script of the run corpus (tests/translator/run) has no float constant
#    and no '/' or '^' (which an integer-only Lua would still run, giving
#    "3.0"-like values), and names the math library only where the runtime
#    guards it.
# 2. With Debian's lua5.4 source (kmod/lua/fetch-lua.sh, cached; skipped
#    only when it cannot be fetched): Lua built in user space with
#    kmod/lua/luaconf.h (integer-only, no math library), and on it the
#    runtime's unit tests (tests/lua/mtlua-test.c, sync-test.c) and
#    marktap itself running the whole run corpus to its expected outputs.
#    There a float literal fails to load ("malformed number") and math.*
#    is a nil index.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/translator/lib.sh"
run="$top_srcdir/tests/translator/run"
cases=$(cd "$run" && ls *.stp | sed 's/\.stp$//')
ncases=$(echo "$cases" | grep -c .)
plan $((ncases * 2 + 6))

LUAC=$(command -v luac5.4 || command -v luac)
# The float operations in a chunk's listing, one per line; empty if none.
floats() {
	"$LUAC" -l -l -p "$1" 2>&1 | awk '
		/^constants / { k = 1; next }
		/^(locals|upvalues|main|function) / { k = 0 }
		/^\t[0-9]+\t\[[0-9]+\]\t(DIV|DIVK|POW|POWK|LOADF) / { print "line " substr($2, 2, length($2) - 2) ": " $3; next }
		k && /^\t[0-9]+\tF\t/ { print "float constant " $3 }
		/luac.*:/ { print }'
}

if [ -z "$LUAC" ]; then
	echo "ok 1 # SKIP no luac5.4"
	_tap_n=1
else
	is "$(floats "$top_srcdir/runtime/lua/mt_rt.lua")" "" "mt_rt.lua: no float constant, no '/' or '^'"
fi
# math.type only behind "math and": the integer-only Lua has no math library
is "$(grep -n 'math\.' "$top_srcdir/runtime/lua/mt_rt.lua" | grep -v '^[0-9]*: *--' | grep -v 'math and math\.type')" "" \
	"mt_rt.lua uses the math library only where it may be missing"
for c in $cases; do
	opts=$(cat "$run/$c.opts" 2>/dev/null)
	# shellcheck disable=SC2086
	(cd "$run" && "$MT" $opts -p3 "$c.stp") > "$TMP/$c.lua" 2>"$TMP/err"
	got=$( { [ -n "$LUAC" ] && floats "$TMP/$c.lua"; grep -n 'math\.' "$TMP/$c.lua"; } | head -5)
	[ -s "$TMP/$c.lua" ] || got="no code generated: $(head -3 "$TMP/err")"
	is "$got" "" "generated code of $c: integers only, no math library"
done

# ---- on an integer-only Lua ----
skip_rest() {
	while [ "$_tap_n" -lt $((ncases * 2 + 6)) ]; do
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # SKIP $1"
	done
	done_testing
}
cache=${LUA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/marktap-lua}   # as kmod/Makefile
luasrc=$(sh "$top_srcdir/kmod/lua/fetch-lua.sh" "$cache" 2>"$TMP/fetch.err") ||
	skip_rest "no lua5.4 source: $(tail -1 "$TMP/fetch.err")"
B="$top_builddir/tests/lua/intlua"
mkdir -p "$B/obj"
sh "$top_srcdir/kmod/lua/prepare-lua.sh" "$luasrc" "$B/lua" || skip_rest "prepare-lua.sh failed"

CC=${CC:-cc}
S="$top_srcdir"
INC="-I$S/runtime/include -I$S/runtime/core -I$S/runtime/proto -I$S/runtime/lib -I$S/runtime/lua -I$S/runtime/tools -I$top_builddir/runtime/tools
 -I$top_builddir/runtime/lua -I$S/tests/lib -I$B/lua"
DEFS="-DPACKAGE_VERSION=\"intlua\" -DMT_PKGDATADIR=\"$top_builddir\" -DMT_SRCDIR=\"$S\"
 -DMT_PKGLIBDIR=\"$top_builddir\" -DMT_BUILDDIR=\"$top_builddir\" -DMT_LIBDIR=\"$top_builddir\""
# The newest header a source may include (ours, the generated mt_rt.lua
# one, and Lua's as prepared with our luaconf.h).
newest_h=$(ls -t "$S"/translator/*.h "$S"/runtime/lua/*.h "$S"/runtime/core/*.h "$S"/runtime/lib/*.h \
	"$S"/runtime/include/marktap/*.h "$S"/runtime/tools/*.h "$S"/runtime/proto/*.h "$S"/tests/lib/*.h \
	"$top_builddir/runtime/lua/mt_rt_lua.h" "$B"/lua/*.h 2>/dev/null | head -1)
# obj NAME SOURCE [FLAGS]: compile when the object is older than its source
# or than a header
obj() {
	o="$B/obj/$1.o"
	if [ ! -f "$o" ] || [ "$2" -nt "$o" ] || [ "$newest_h" -nt "$o" ]; then
		# shellcheck disable=SC2086
		$CC -O1 -g $3 -c $INC $DEFS "$2" -o "$o" 2>>"$B/build.log" || return 1
	fi
	echo "$o"
}
: >"$B/build.log"
fail=0
LUAOBJ=
for f in lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser \
	 lstate lstring ltable ltm lundump lvm lzio mt_luanum lauxlib lbaselib lstrlib ltablib lutf8lib; do
	LUAOBJ="$LUAOBJ $(obj "lua_$f" "$B/lua/$f.c")" || fail=1
done
# ours are built as the project builds them: any float left in their use of
# Lua's API is a warning, so an error
W="-Wall -Wextra -Wno-unused-parameter -Werror"
RTOBJ=
for f in mt_lua mt_lua_base mt_lua_fmt mt_lua_str mt_lua_ctx mt_lua_ksym mt_lua_fp; do
	RTOBJ="$RTOBJ $(obj "rt_$f" "$S/runtime/lua/$f.c" "$W")" || fail=1
done
TROBJ=
# marktap's own sources, as translator/local.mk lists them
TRSRC=$(awk '/^translator_marktap_SOURCES/ { on = 1 } on { for (i = 1; i <= NF; i++) if ($i ~ /\.c$/) print $i; if ($NF != "\\") on = 0 }' \
	"$S/translator/local.mk")
[ -n "$TRSRC" ] || fail=1
for f in $TRSRC; do
	TROBJ="$TROBJ $(obj "tr_$(basename "$f" .c)" "$S/$f" "$W")" || fail=1
done
T1=$(obj mtlua-test "$S/tests/lua/mtlua-test.c" "$W") || fail=1
T2=$(obj sync-test "$S/tests/lua/sync-test.c" "$W") || fail=1
LIBS="$top_builddir/runtime/.libs/libmarktap-tools.a $top_builddir/runtime/.libs/libmarktap-core.a $(pkg-config --libs libdw 2>/dev/null || echo -ldw) $(pkg-config --libs libbpf 2>/dev/null || echo -lbpf) -lelf -lpthread -ldl -lm"
# shellcheck disable=SC2086
[ "$fail" = 0 ] &&
	$CC -o "$B/mtlua-test" $T1 $RTOBJ $LUAOBJ -lpthread -ldl -lm 2>>"$B/build.log" &&
	$CC -o "$B/sync-test" $T2 $RTOBJ $LUAOBJ -lpthread -ldl -lm 2>>"$B/build.log" &&
	$CC -o "$B/marktap" $TROBJ $RTOBJ $LUAOBJ $LIBS 2>>"$B/build.log"
ok $? "the runtime, its tests and marktap build on the integer-only Lua"
[ -s "$B/build.log" ] && sed 's/^/# /' "$B/build.log" | head -20

# A C test program's TAP output folded into one result.
suite() {
	"$1" > "$TMP/suite.out" 2>&1
	rc=$?
	if [ $rc = 0 ] && ! grep -q '^not ok' "$TMP/suite.out" && grep -q '^ok' "$TMP/suite.out"; then
		ok 0 "$2 ($(grep -c '^ok' "$TMP/suite.out") passed)"
	else
		ok 1 "$2 (exit $rc)"
		grep -A6 '^not ok' "$TMP/suite.out" | head -30 | sed 's/^/# /'
	fi
}
suite "$B/mtlua-test" "tests/lua/mtlua-test on the integer-only Lua"
suite "$B/sync-test" "tests/lua/sync-test on the integer-only Lua"

"$B/marktap" -g -e 'function f() %{ return 1.5 %} probe begin { println(f()) }' > "$TMP/out" 2>&1
like "$(cat "$TMP/out")" "malformed number near '1\\.5'" "a float literal does not load there"

for c in $cases; do
	opts=$(cat "$run/$c.opts" 2>/dev/null)
	want=$(cat "$run/$c.status" 2>/dev/null || echo 0)
	# shellcheck disable=SC2086
	(cd "$run" && "$B/marktap" $opts "$c.stp") > "$TMP/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ] && cmp -s "$TMP/out" "$run/$c.expected"; then
		ok 0 "run corpus on the integer-only Lua: $c"
	else
		ok 1 "run corpus on the integer-only Lua: $c (exit $rc, expected $want)"
		diff "$run/$c.expected" "$TMP/out" | head -20 | sed 's/^/# /'
	fi
done
done_testing
