/*
 * text.c - writing the process's own code without a writable and
 * executable page (text.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "text.h"

#if defined(__x86_64__)
long mt_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
long mt_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(nr, a, b, c, d, e, f);

	return r < 0 ? -errno : r;
}
#endif
#define SYS3(nr, a, b, c) mt_syscall6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS6(nr, a, b, c, d, e, f) \
	mt_syscall6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

static struct {
	uint64_t mem;                   /* pid << 32 | fd of its /proc/self/mem, or 0 */
	uint64_t mem_ino, mem_dev;      /* what fstat said of it */
	int membarrier;                 /* 1 registered, -1 unavailable */
	const char *fallback;           /* why the last write went through mprotect */
	int fallback_told;
} T;

/* Whether fd is still the /proc/self/mem we opened (st_dev, st_ino as
 * seen then): a program that closes every descriptor (a daemon) and opens
 * a file that takes the same number must not have code bytes written into
 * that file. */
static int still_mem(long fd)
{
	struct stat st;

	return SYS3(SYS_fstat, fd, &st, 0) == 0 &&
	       (uint64_t)st.st_ino == __atomic_load_n(&T.mem_ino, __ATOMIC_ACQUIRE) &&
	       (uint64_t)st.st_dev == __atomic_load_n(&T.mem_dev, __ATOMIC_ACQUIRE);
}

/* This process's /proc/self/mem, opened at its first use (traps of
 * several threads may race here after a fork: one descriptor wins, the
 * others are closed; the parent's, inherited, is left alone), and again
 * when the descriptor was closed behind our back; -errno. */
static int mem_fd(void)
{
	uint64_t pid = (uint64_t)SYS3(SYS_getpid, 0, 0, 0), cur = __atomic_load_n(&T.mem, __ATOMIC_ACQUIRE), mine;
	struct stat st;
	long fd;

	if (cur && cur >> 32 == pid && still_mem((int)(uint32_t)cur))
		return (int)(uint32_t)cur;
	fd = SYS6(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDWR | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return (int)fd;
	if (SYS3(SYS_fstat, fd, &st, 0) < 0) {
		SYS3(SYS_close, fd, 0, 0);
		return -EIO;
	}
	mine = pid << 32 | (uint32_t)fd;
	if (__atomic_compare_exchange_n(&T.mem, &cur, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&T.mem_ino, (uint64_t)st.st_ino, __ATOMIC_RELEASE);
		__atomic_store_n(&T.mem_dev, (uint64_t)st.st_dev, __ATOMIC_RELEASE);
		return (int)fd;
	}
	/* another thread opened one meanwhile: ours goes, theirs is taken
	 * once its identity is stored */
	SYS3(SYS_close, fd, 0, 0);
	return mem_fd();
}

/* The old way, for a kernel that refuses the other: the page writable
 * and executable for the copy (a byte, or an aligned word: one store). */
static int write_mprotect(uintptr_t addr, const void *bytes, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = addr & ~(uintptr_t)(page - 1), end = (addr + n + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
	long rc;

	if (SYS3(SYS_mprotect, start, end - start, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -1;
	if (n == 8 && !(addr & 7))
		__atomic_store_n((uint64_t *)addr, *(const uint64_t *)bytes, __ATOMIC_SEQ_CST);
	else if (n == 1)
		__atomic_store_n((unsigned char *)addr, *(const unsigned char *)bytes, __ATOMIC_SEQ_CST);
	else
		memcpy((void *)addr, bytes, n);
	rc = SYS3(SYS_mprotect, start, end - start, PROT_READ | PROT_EXEC);
	__builtin___clear_cache((char *)addr, (char *)addr + n);
	return rc < 0 ? -1 : 0;
}

int mt_text_write(uintptr_t addr, const void *bytes, size_t n)
{
	int fd = mem_fd();
	long rc = fd < 0 ? fd : SYS6(SYS_pwrite64, fd, bytes, n, addr, 0, 0);

	if (rc == (long)n)
		return 0;
	/* EIO/EFAULT: nothing mapped there (an object unloaded), a real
	 * error; no descriptor, or a kernel that forbids forced writes
	 * (EPERM, EACCES): the fallback */
	if (fd >= 0 && rc != -EPERM && rc != -EACCES) {
		errno = rc < 0 ? (int)-rc : EIO;
		return -1;
	}
	if (!T.fallback)
		T.fallback = fd < 0 ? "/proc/self/mem cannot be opened" : "the kernel refuses writes through /proc/self/mem";
	return write_mprotect(addr, bytes, n);
}

void mt_text_sync(void)
{
#ifdef SYS_membarrier
	/* MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, once registered
	 * (REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) */
	int state = __atomic_load_n(&T.membarrier, __ATOMIC_ACQUIRE);
	if (!state) {
		state = SYS3(SYS_membarrier, 1 << 6, 0, 0) == 0 ? 1 : -1;
		__atomic_store_n(&T.membarrier, state, __ATOMIC_RELEASE);
	}
	if (state > 0)
		SYS3(SYS_membarrier, 1 << 5, 0, 0);
#endif
}

int mt_text_patch(uintptr_t addr, const unsigned char *bytes, size_t n)
{
	static const unsigned char int3 = 0xcc;

	if (n == 1)
		return mt_text_write(addr, bytes, 1);
	if (mt_text_write(addr, &int3, 1) < 0)
		return -1;
	mt_text_sync();   /* every thread now sees the int3 or is past the instruction */
	if (mt_text_write(addr + 1, bytes + 1, n - 1) < 0)
		return -1;   /* the int3 stays: the caller's site handles it */
	mt_text_sync();
	if (mt_text_write(addr, bytes, 1) < 0)
		return -1;
	mt_text_sync();
	return 0;
}

const char *mt_text_fallback(void)
{
	if (!T.fallback || __atomic_exchange_n(&T.fallback_told, 1, __ATOMIC_RELAXED))
		return NULL;
	return T.fallback;
}
