/*
 * kread.c - kernel memory for the handlers marktap runs itself.
 *
 * stap's begin, end and timer probes run in its module and may read the
 * kernel (kernel_string(), kernel_long(), @cast(p, "task_struct")->pid in
 * a report at the end, as periodic.stp does).  marktap runs those probes
 * in its own process; rt.kernel_read and rt.kernel_string there ask
 * marktap.ko (MT_IOC_KREAD), which reads without faulting and only for
 * root: the same functions, errors and rights as in kernel handlers
 * (kmod/mt_lua_lib.c).  The device is opened at the first read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <lauxlib.h>
#include "kernel.h"
#include "mt_ioctl.h"
#include "tr_run.h"

static struct mt_kernel dev = { .fd = -1 };

/* len bytes (string: to the NUL) at addr, or a negative errno */
static long kread(uint64_t addr, void *buf, size_t len, int string)
{
	if (dev.fd < 0 && mt_kernel_open(&dev) < 0) {
		int err = errno;
		dev.fd = -1;
		return -err;
	}
	return mt_kernel_read(&dev, addr, buf, len, string);
}

/* anything but a fault: the reason, in the function's name */
static int kread_error(lua_State *L, const char *what, long err)
{
	if (err == -EPERM)
		lua_pushfstring(L, "%s: reading kernel memory needs CAP_SYS_ADMIN", what);
	else if (err == -ENOTTY)
		lua_pushfstring(L, "%s: the loaded marktap.ko reads no kernel memory for marktap "
				"(an older build)", what);
	else
		lua_pushfstring(L, "%s: kernel memory is read by marktap.ko: %s", what,
				mt_kernel_strerror((int)err));
	return lua_error(L);
}

/* kernel_read(addr, size, signed[, where[, name]]): as mt_lua_lib.c's;
 * name: the script's function, for errors other than a fault */
static int l_kernel_read(lua_State *L)
{
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 1);
	lua_Integer size = luaL_checkinteger(L, 2);
	int sign = lua_toboolean(L, 3);
	union { uint8_t b; uint16_t h; uint32_t w; uint64_t d; } v = {0};
	lua_Integer r;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return luaL_error(L, "kernel_read: size %d (1, 2, 4 or 8)", (int)size);
	long got = kread(addr, &v, (size_t)size, 0);
	if (got == -EFAULT || (got >= 0 && got < size)) {
		char msg[48];
		const char *where = lua_tostring(L, 4);
		snprintf(msg, sizeof(msg), "kernel read fault at 0x%" PRIx64, addr);
		lua_pushfstring(L, "%s%s%s", msg, where ? " near " : "", where ? where : "");
		return lua_error(L);
	}
	if (got < 0)
		return kread_error(L, luaL_optstring(L, 5, "kernel_read"), got);
	switch (size) {
	case 1: r = sign ? (lua_Integer)(int8_t)v.b : (lua_Integer)v.b; break;
	case 2: r = sign ? (lua_Integer)(int16_t)v.h : (lua_Integer)v.h; break;
	case 4: r = sign ? (lua_Integer)(int32_t)v.w : (lua_Integer)v.w; break;
	default: r = (lua_Integer)v.d;
	}
	lua_pushinteger(L, r);
	return 1;
}

/* kernel_string(addr[, n[, name]]): at most n bytes (MAXSTRINGLEN - 1) */
static int l_kernel_string(lua_State *L)
{
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 1);
	lua_Integer max, limit;
	char buf[MT_KREAD_MAX];

	lua_getfield(L, lua_upvalueindex(1), "MAXSTRINGLEN");
	limit = lua_isinteger(L, -1) ? lua_tointeger(L, -1) - 1 : 511;
	lua_pop(L, 1);
	if (limit > MT_KREAD_MAX - 1)
		limit = MT_KREAD_MAX - 1;
	max = luaL_optinteger(L, 2, limit);
	if (max > limit)
		max = limit;
	if (max <= 0) {
		lua_pushliteral(L, "");
		return 1;
	}
	long got = kread(addr, buf, (size_t)max, 1);
	if (got == -EFAULT) {
		char msg[80];
		snprintf(msg, sizeof(msg), "kernel string copy fault at 0x%016" PRIx64 " [man error::fault]", addr);
		lua_pushstring(L, msg);
		return lua_error(L);
	}
	if (got < 0)
		return kread_error(L, luaL_optstring(L, 3, "kernel_string"), got);
	lua_pushlstring(L, buf, got > 0 && !buf[got - 1] ? (size_t)got - 1 : (size_t)got);
	return 1;
}

/* task_addr(task): the task_struct's address of a thread id (an address
 * passes as it is), as mt_lua_lib.c's */
static int l_task_addr(lua_State *L)
{
	lua_Integer task = luaL_checkinteger(L, 1);
	uint64_t addr;
	int rc;

	if (task < 0)
		return 1;
	if (dev.fd < 0 && mt_kernel_open(&dev) < 0) {
		rc = -errno;
		dev.fd = -1;
	} else {
		rc = mt_kernel_task(&dev, (uint64_t)task, &addr);
	}
	if (rc == -ESRCH)
		return luaL_error(L, "@cast(task, \"task_struct\"): no task %d", (int)task);
	if (rc < 0)
		return kread_error(L, "@cast(task, \"task_struct\")", rc);
	lua_pushinteger(L, (lua_Integer)addr);
	return 1;
}

/* Into the runtime's table on the top of L's stack. */
void tr_kread_add(lua_State *L)
{
	lua_pushcfunction(L, l_kernel_read);
	lua_setfield(L, -2, "kernel_read");
	lua_pushcfunction(L, l_task_addr);
	lua_setfield(L, -2, "task_addr");
	lua_pushvalue(L, -1);
	lua_pushcclosure(L, l_kernel_string, 1);
	lua_setfield(L, -2, "kernel_string");
}
