/* mt_lua_ksym.c - kernel symbols for symname(), symdata(), modname().
 *
 * The table is /proc/kallsyms, read once per process on the first
 * question (it holds ~200 000 symbols: a script that never asks pays
 * nothing).  Without the right to see addresses (kptr_restrict, not
 * root) every address reads as 0 and nothing is found: the functions then
 * answer as stap does for an unknown address.  A symbol's size is the
 * distance to the next one, as kallsyms gives no sizes.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_lua_int.h"

struct ksym {
	uint64_t addr;
	char *name, *module;   /* module NULL: the kernel itself */
};

static struct ksym *ksyms;
static size_t nksyms;
static pthread_once_t ksyms_once = PTHREAD_ONCE_INIT;

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols only ("t", "T", weak "w"/"W"): symname() names code. */
static void load_ksyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], module[128], type;
	unsigned long long addr;
	size_t cap = 0;

	while (f && fgets(line, sizeof line, f)) {
		int n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, module);
		if (n < 3 || !addr || !strchr("tTwW", type))
			continue;
		if (nksyms == cap) {
			size_t ncap = cap ? 2 * cap : 4096;
			struct ksym *v = realloc(ksyms, ncap * sizeof(*v));
			if (!v)
				break;
			ksyms = v;
			cap = ncap;
		}
		struct ksym *k = &ksyms[nksyms];
		k->addr = addr;
		k->name = strdup(name);
		k->module = n == 4 ? strdup(module) : NULL;
		if (k->name && (n < 4 || k->module))
			nksyms++;
	}
	if (f)
		fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), cmp_ksym);
}

/* rt.ksym(addr): name, offset, size, module ("kernel"), or nothing. */
int mt_rt_ksym(lua_State *L)
{
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 1);
	size_t lo = 0, hi;

	pthread_once(&ksyms_once, load_ksyms);
	hi = nksyms;
	while (lo < hi) {               /* the last symbol at or below addr */
		size_t mid = lo + (hi - lo) / 2;
		if (ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	const struct ksym *k = &ksyms[lo - 1];
	uint64_t size = lo < nksyms ? ksyms[lo].addr - k->addr : 0;
	if (size && addr - k->addr >= size)
		return 0;
	lua_pushstring(L, k->name);
	lua_pushinteger(L, (lua_Integer)(addr - k->addr));
	lua_pushinteger(L, (lua_Integer)size);
	lua_pushstring(L, k->module ? k->module : "kernel");
	return 4;
}
