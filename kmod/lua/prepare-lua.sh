#!/bin/sh
# prepare-lua.sh LUADIR OUTDIR - Lua's sources configured our way.
#
# LUADIR is what fetch-lua.sh printed (Debian's lua5.4 source, unpacked).
# OUTDIR receives Lua's src/*.[ch] with our patches applied (patches/*.patch,
# each guarded by MT_LUA_INTEGER_ONLY or luai_budget), our luaconf.h in place of Lua's, and
# mt_luanum.c (the integer number operations luaconf.h names).  An OUTDIR
# already prepared from the same inputs is left alone (make stays quiet).
#
# What to compile from OUTDIR, in the kernel and in user space alike:
#   the core  lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject
#             lopcodes lparser lstate lstring ltable ltm lundump lvm lzio
#             mt_luanum
#   the libs  lauxlib lbaselib lstrlib ltablib   (not io, os, package,
#             debug, math: lmathlib is all floats)
# with -I OUTDIR; in the kernel also -I kmod/lua/kinc (its mt_lua_kernel.h
# is the C library subset the core needs).
set -e
luadir=${1:?usage: prepare-lua.sh LUADIR OUTDIR}
out=${2:?usage: prepare-lua.sh LUADIR OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$luadir/src/lvm.c" ] || { echo "prepare-lua.sh: no Lua source in $luadir" >&2; exit 1; }
stamp=$(cat "$here/luaconf.h" "$here/mt_luanum.c" "$here"/patches/*.patch | cksum | cut -d' ' -f1)
stamp="$luadir $stamp"
if [ -f "$out/.prepared" ] && [ "$(cat "$out/.prepared")" = "$stamp" ]; then
	exit 0
fi
mkdir -p "$out"
rm -f "$out/.prepared"
cp "$luadir"/src/*.c "$luadir"/src/*.h "$out/"
chmod u+w "$out"/*
for p in "$here"/patches/*.patch; do
	patch -s -p2 -d "$out" <"$p" || { echo "prepare-lua.sh: $p does not apply" >&2; exit 1; }
done
cp "$here/luaconf.h" "$here/mt_luanum.c" "$out/"
echo "$stamp" >"$out/.prepared"
