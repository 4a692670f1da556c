#!/bin/sh
# klua.t - Lua 5.4 inside marktap.ko: kernel.mark handlers run at the probe
# point (kmod/mt_lua_host.c), in Debian's kernel under qemu.  klua (in the
# guest) loads Lua source through /dev/marktap and drains the handlers'
# output; klua-body.sh is the guest's part.  Skipped when the module was
# built without Lua (no lua5.4 source: kmod/Makefile says so).
guest_tag=-klua
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/kernel/guest.sh"

guest_start
guest_need_lua
KLUA=$(guest_real "$guest_dir/klua")

# On the host first: the module's arena allocator under the same Lua
# (the sources the module build prepared), heap checked after each chunk,
# with AddressSanitizer when the compiler has it.
fk=$guest_dir/klua-fake && rm -rf "$fk" && mkdir -p "$fk/linux"
for h in kernel bitops log2 string vmalloc types; do echo '/* klua-alloc.h */' >"$fk/linux/$h.h"; done
L=$guest_kbuild/lua
srcs=$(for f in lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser \
	lstate lstring ltable ltm lundump lvm lzio mt_luanum lauxlib lbaselib lstrlib ltablib; do echo "$L/$f.c"; done)
acc() { ${CC:-cc} -O1 -g "$@" -I"$fk" -include "$top_srcdir/tests/kernel/klua-alloc.h" -I"$L" -I"$top_srcdir/kmod" \
	"$top_srcdir/tests/kernel/klua-alloc.c" "$top_srcdir/kmod/mt_lua_alloc.c" $srcs -o "$guest_dir/klua-alloc" 2>"$guest_dir/klua-alloc.log"; }
acc -fsanitize=address,undefined -fno-sanitize-recover=all || acc
ok $? "the arena allocator builds on the host with the module's Lua"
"$guest_dir/klua-alloc" 4096 \
	'local t = {} for i = 1, 5000 do t[i] = string.rep("x", i % 300) .. i end' \
	'local t = {} for i = 1, 5000 do t["k" .. i] = {i, tostring(i)} end for i = 1, 5000, 2 do t["k" .. i] = nil end collectgarbage()' \
	'local s = "" for i = 1, 2000 do s = s .. "ab" end' \
	'local t = {} while true do t[#t + 1] = string.rep("y", 100) .. #t end' \
	'collectgarbage() local u = {} for i = 1, 1000 do u[i] = ("z"):rep(i) end' >"$guest_dir/klua-alloc.out" 2>&1
rc=$?
sed 's/^/# /' "$guest_dir/klua-alloc.out" | head -8
ok $rc "the arena's heap stays consistent through Lua's allocations and frees (exit $rc)"
like "$(cat "$guest_dir/klua-alloc.out")" 'error: not enough memory' "a full arena is Lua's 'not enough memory', and Lua goes on"
like "$(tail -1 "$guest_dir/klua-alloc.out")" '^closed used=0 top=0$' "after lua_close every block is back and merged"

# The Lua the module must compile: the runtime (mt_rt.lua) and the chunks
# marktap generates for the translator's test scripts and the examples,
# each wrapped in a function so that loading compiles without running.
gen=$guest_dir/klua-gen
rm -rf "$gen" && mkdir -p "$gen"
wrap() { { echo 'local function chunk(...)'; cat; echo 'end'; } >"$gen/$1.lua"; }
wrap mt_rt <"$top_srcdir/runtime/lua/mt_rt.lua"
for f in "$top_srcdir"/tests/translator/corpus/*.stp "$top_srcdir"/tests/translator/run/*.stp \
	"$top_srcdir"/scripts/*.stp; do
	MARKTAP_DATADIR=$top_srcdir/tapsets "$top_builddir/translator/marktap" -p3 "$f" >"$gen/out" 2>/dev/null &&
		wrap "$(basename "$f" .stp)" <"$gen/out"
done
rm -f "$gen/out"
(cd "$gen" && tar -cf ../klua-gen.tar ./*.lua)
diag "$(ls "$gen" | wc -l) Lua chunks to compile in the kernel"
# KLUA_BENCH=1: the guest also times getppid() with and without handlers
bench=
if [ -n "$KLUA_BENCH" ]; then bench=$guest_dir/klua-bench; : >"$bench"; fi
if guest_boot "$top_srcdir/tests/kernel/klua-body.sh" 600 "$KLUA" "$guest_dir/klua-gen.tar" $bench; then
	ok 0 "the guest ran its tests to the end (console: $guest_out)"
else
	ok 1 "the guest ran its tests to the end (console: $guest_out)"
	grep -E 'BUG|Oops|RIP|soft lockup|panic|stack' "$guest_out" | head -12 | sed 's/^/# /'
fi
grep '^KLUA-BENCH' "$guest_out" | sed 's/^/# /'
grep -E '^(not )?ok - ' "$guest_out" >"$guest_dir/results$guest_tag.txt"
grep -E '^# ' "$guest_out" | head -60
n=$(wc -l <"$guest_dir/results$guest_tag.txt")
[ "$n" -gt 30 ]; ok $? "the guest reported its checks ($n)"
while IFS= read -r line; do
	case $line in
	"not ok - "*) ok 1 "guest: ${line#not ok - }" ;;
	*) ok 0 "guest: ${line#ok - }" ;;
	esac
done <"$guest_dir/results$guest_tag.txt"
plan $_tap_n
done_testing
