/*
 * klua-alloc.c - marktap.ko's arena allocator (kmod/mt_lua_alloc.c) on the
 * host, under the integer-only Lua the module builds, with AddressSanitizer.
 *
 *   klua-alloc ARENA_KIB CHUNK...   each chunk run in one Lua state whose
 *                                   allocator is the arena; after each,
 *                                   the heap is walked and checked
 *
 * Prints "error: MSG" for a chunk that fails, then "ok used=U peak=P
 * failed=F" and, after lua_close, "closed used=U top=T" (both 0: every
 * block came back and merged into the top).  Any inconsistency aborts.
 * Built by klua.t with the kernel shims of klua-alloc.h in place of the
 * kernel's headers.
 */
#include <assert.h>
#include <stdio.h>
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "mt_klua.h"

struct blk { size_t prev_size, size; };

static void check(const struct mt_arena *a)
{
	size_t off = 0, prev = 0, used = 0;
	int last_free = 0;

	while (off < a->top) {
		const struct blk *b = (const struct blk *)(a->base + off);
		size_t size = b->size & ~1ul;
		int is_free = !(b->size & 1);

		assert(b->prev_size == prev);
		assert(size >= 32 && size % 16 == 0 && off + size <= a->top);
		assert(!(is_free && last_free));   /* free neighbours are merged */
		if (!is_free)
			used += size;
		last_free = is_free;
		prev = size;
		off += size;
	}
	assert(off == a->top && a->last == prev && !last_free && used == a->used);
}

int main(int argc, char **argv)
{
	static struct mt_arena a;
	lua_State *L;

	if (argc < 2 || mt_arena_init(&a, (size_t)atol(argv[1]) << 10))
		return 2;
	L = lua_newstate(mt_arena_lua_alloc, &a);
	if (!L)
		return 2;
	luaL_requiref(L, "_G", luaopen_base, 1);
	luaL_requiref(L, "string", luaopen_string, 1);
	luaL_requiref(L, "table", luaopen_table, 1);
	lua_settop(L, 0);
	check(&a);
	for (int i = 2; i < argc; i++) {
		if (luaL_loadbufferx(L, argv[i], strlen(argv[i]), "=chunk", "t") || lua_pcall(L, 0, 0, 0))
			printf("error: %s\n", lua_tostring(L, -1));
		lua_settop(L, 0);
		check(&a);
	}
	printf("ok used=%zu peak=%zu failed=%llu\n", a.used, a.peak, (unsigned long long)a.failed);
	lua_close(L);
	check(&a);
	printf("closed used=%zu top=%zu\n", a.used, a.top);
	mt_arena_free(&a);
	return 0;
}
