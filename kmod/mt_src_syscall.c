/*
 * mt_src_syscall.c - markers the seed put into system calls, fired from the
 * raw_syscalls tracepoints (sys_enter, sys_exit) by syscall number.
 *
 * The seed's markers sat in sys_open, sys_read, sys_msgget...  On 6.1 the
 * system call entry and exit tracepoints see every call with its pt_regs;
 * the arguments are still in the saved registers at exit (x86_64 does not
 * clobber them), so a marker that needs the result (fs_open's fd,
 * ipc_msg_create's id) fires at exit, the others at entry.
 *
 * User memory (a path, fd_sets) is read without faulting: probes run with
 * preemption disabled.  The memory was just used by the call itself, so it
 * is almost always present; when it is not we record "(fault)".
 *
 * ia32 processes (IA32 emulation) have system calls of their own numbers
 * and argument layouts: ia32_to_native() maps the ones the markers need
 * onto their 64-bit counterparts (a 64-bit offset from two registers, the
 * calls multiplexed by ipc and socketcall), so one switch serves both; the
 * 32-bit fd_set words and timeouts are read as such (struct sysargs).  The
 * 32-bit-only calls of the seed (_llseek, socketcall, ipc) fire their own
 * markers too.  x32 processes (disabled in Debian's kernel unless booted
 * with syscall.x32=y) are not mapped: only kernel_arch_syscall_* fire.
 */
#include <linux/kernel.h>
#include <linux/fdtable.h>
#include <linux/jiffies.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/time64.h>
#include <linux/uaccess.h>
#include <net/sock.h>
#include <asm/syscall.h>
#include <asm/unistd.h>
#include "mt_kmod.h"
#include "mt_kregs.h"

#ifdef CONFIG_IA32_EMULATION
#include <asm/unistd_32_ia32.h>   /* __NR_ia32_*, from syscall_32.tbl */
#endif
#include <linux/ipc.h>            /* the calls ipc(2) multiplexes */
#include <linux/time32.h>
#include <uapi/linux/net.h>       /* SYS_SOCKET */

/* How select's fd_sets and timeout are laid out for the calling ABI. */
enum mt_timeout { MT_TIMEVAL, MT_TIMESPEC, MT_OLD_TIMEVAL32, MT_OLD_TIMESPEC32 };

struct sysargs {
	long nr;             /* the 64-bit number, or -1: nothing to fire */
	unsigned long a[6];  /* arguments as the 64-bit call takes them */
	u8 set_word;         /* bytes of an fd_set word: 8, or 4 for ia32 */
	u8 timeout;          /* enum mt_timeout of select's timeout */
};

#define MT_PATH_MAX 4096
static DEFINE_PER_CPU(char[MT_PATH_MAX], mt_path_buf);

/*
 * A user string into buf without sleeping or faulting: page by page,
 * because a string may end right before an unmapped page.
 */
const char *mt_user_string(const char __user *p, char *buf, size_t len)
{
	size_t done = 0;

	if (!p)
		return "(null)";
	while (done < len - 1) {
		size_t chunk = PAGE_SIZE - (((unsigned long)p + done) & (PAGE_SIZE - 1));
		char *nul;

		if (chunk > len - 1 - done)
			chunk = len - 1 - done;
		if (copy_from_user_nofault(buf + done, p + done, chunk)) {
			if (done == 0)
				return "(fault)";
			break;
		}
		nul = memchr(buf + done, '\0', chunk);
		if (nul)
			return buf;
		done += chunk;
	}
	buf[done] = '\0';
	return buf;
}

static void fire_pollfds(unsigned long ufds, unsigned long nfds)
{
	struct pollfd fds[16];
	unsigned long i, n;

	/* the seed fired in do_pollfd for each polled descriptor */
	if (nfds > 1024)
		nfds = 1024;
	for (i = 0; i < nfds; i += n) {
		unsigned long k;

		n = min_t(unsigned long, nfds - i, ARRAY_SIZE(fds));
		if (copy_from_user_nofault(fds, (void __user *)(ufds + i * sizeof(fds[0])),
					   n * sizeof(fds[0])))
			return;
		for (k = 0; k < n; k++)
			if (fds[k].fd >= 0)
				mt_kmarker_fire(&mt_m_fs_pollfd, fds[k].fd);
	}
}

#ifdef CONFIG_IA32_EMULATION
/* Into sa: the 64-bit call an ia32 call id is (nr -1 when none we mark). */
static void ia32_to_native(long id, struct sysargs *sa)
{
	unsigned long *a = sa->a;

	sa->set_word = 4;
	sa->timeout = MT_OLD_TIMESPEC32;
	switch (id) {
	case __NR_ia32_read: sa->nr = __NR_read; break;
	case __NR_ia32_write: sa->nr = __NR_write; break;
	case __NR_ia32_open: sa->nr = __NR_open; break;
	case __NR_ia32_creat: sa->nr = __NR_creat; break;
	case __NR_ia32_openat: sa->nr = __NR_openat; break;
	case __NR_ia32_openat2: sa->nr = __NR_openat2; break;
	case __NR_ia32_close: sa->nr = __NR_close; break;
	case __NR_ia32_ioctl: sa->nr = __NR_ioctl; break;
	case __NR_ia32_readv: sa->nr = __NR_readv; break;
	case __NR_ia32_writev: sa->nr = __NR_writev; break;
	case __NR_ia32_poll: sa->nr = __NR_poll; break;
	case __NR_ia32_ppoll: case __NR_ia32_ppoll_time64: sa->nr = __NR_ppoll; break;
	case __NR_ia32_socket: sa->nr = __NR_socket; break;
	case __NR_ia32_msgget: sa->nr = __NR_msgget; break;
	case __NR_ia32_semget: sa->nr = __NR_semget; break;
	case __NR_ia32_shmget: sa->nr = __NR_shmget; break;
	case __NR_ia32_lseek:
		sa->nr = __NR_lseek;
		a[1] = (unsigned long)(long)(s32)a[1];   /* off_t is 32 bits */
		break;
	case __NR_ia32_pread64:
	case __NR_ia32_pwrite64:
		/* the offset comes in two registers, low half first */
		sa->nr = id == __NR_ia32_pread64 ? __NR_pread64 : __NR_pwrite64;
		a[3] = (u32)a[3] | (unsigned long)(u32)a[4] << 32;
		break;
	case __NR_ia32__newselect:   /* (old select, 82, takes a struct: not mapped) */
		sa->nr = __NR_select;
		sa->timeout = MT_OLD_TIMEVAL32;
		break;
	case __NR_ia32_pselect6:
	case __NR_ia32_pselect6_time64:
		sa->nr = __NR_pselect6;
		if (id == __NR_ia32_pselect6_time64)
			sa->timeout = MT_TIMESPEC;
		break;
	case __NR_ia32_ipc:
		/* ipc(call, first, second, third, ptr, fifth) */
		switch (a[0] & 0xffff) {
		case MSGGET: sa->nr = __NR_msgget; a[1] = a[2]; break;  /* key, msgflg */
		case SEMGET: sa->nr = __NR_semget; a[2] = a[3]; break;  /* key, nsems, semflg */
		case SHMGET: sa->nr = __NR_shmget; a[2] = a[3]; break;  /* key, size, shmflg */
		default: sa->nr = -1;
		}
		break;
	case __NR_ia32_socketcall:
		sa->nr = a[0] == SYS_SOCKET ? __NR_socket : -1;
		break;
	default:
		sa->nr = -1;
	}
}
#else
static void ia32_to_native(long id, struct sysargs *sa)
{
	sa->nr = -1;
}
#endif

/* The call being made or returning, as its 64-bit counterpart. */
static void get_sysargs(struct pt_regs *regs, long id, struct sysargs *sa)
{
	syscall_get_arguments(current, regs, sa->a);
	sa->nr = id;
	sa->set_word = sizeof(long);
	sa->timeout = MT_TIMEVAL;
	if (id < 0)
		return;
	if (in_ia32_syscall())
		ia32_to_native(id, sa);
	else if (in_compat_syscall())
		sa->nr = -1;   /* x32: not mapped */
	else if (id == __NR_pselect6)
		sa->timeout = MT_TIMESPEC;
}

/* The seed's markers of 32-bit-only calls. */
static void enter_ia32_only(long id, const unsigned long *a)
{
#ifdef CONFIG_IA32_EMULATION
	switch (id) {
	case __NR_ia32__llseek:
		mt_kmarker_fire(&mt_m_fs_llseek, (unsigned)a[0],
				((unsigned long long)(u32)a[1] << 32) | (u32)a[2], (unsigned)a[4]);
		break;
	case __NR_ia32_socketcall: {
		u32 a0 = 0;

		if (copy_from_user_nofault(&a0, (void __user *)a[1], sizeof(a0)))
			a0 = 0;
		mt_kmarker_fire(&mt_m_net_socket_call, (int)a[0], (unsigned long)a0);
		break;
	}
	case __NR_ia32_ipc:
		mt_kmarker_fire(&mt_m_kernel_arch_ipc_call, (unsigned)a[0], (int)a[1]);
		break;
	}
#endif
}

static void enter_markers(struct pt_regs *regs, long id)
{
	struct sysargs sa;
	const unsigned long *a = sa.a;

	mt_kmarker_fire(&mt_m_kernel_arch_syscall_entry, (int)id, (long)instruction_pointer(regs));
	get_sysargs(regs, id, &sa);
	if (in_ia32_syscall()) {
		unsigned long raw[6];   /* sa.a may be remapped (ipc) */

		syscall_get_arguments(current, regs, raw);
		enter_ia32_only(id, raw);
	}
	switch (sa.nr) {
	case __NR_ioctl:
		mt_kmarker_fire(&mt_m_fs_ioctl, (unsigned)a[0], (unsigned)a[1], a[2]);
		break;
	case __NR_close:
		mt_kmarker_fire(&mt_m_fs_close, (unsigned)a[0]);
		break;
	case __NR_lseek:
		mt_kmarker_fire(&mt_m_fs_lseek, (unsigned)a[0], (long)a[1], (unsigned)a[2]);
		break;
	case __NR_read:
		mt_kmarker_fire(&mt_m_fs_read, (unsigned)a[0], (size_t)a[2]);
		break;
	case __NR_write:
		mt_kmarker_fire(&mt_m_fs_write, (unsigned)a[0], (size_t)a[2]);
		break;
	case __NR_pread64:
		mt_kmarker_fire(&mt_m_fs_pread64, (unsigned)a[0], (size_t)a[2],
				(unsigned long long)a[3]);
		break;
	case __NR_pwrite64:
		mt_kmarker_fire(&mt_m_fs_pwrite64, (unsigned)a[0], (size_t)a[2],
				(unsigned long long)a[3]);
		break;
	case __NR_readv:
		mt_kmarker_fire(&mt_m_fs_readv, a[0], a[2]);
		break;
	case __NR_writev:
		mt_kmarker_fire(&mt_m_fs_writev, a[0], a[2]);
		break;
	case __NR_poll:
	case __NR_ppoll:
		if (mt_kmarker_armed(&mt_m_fs_pollfd))
			fire_pollfds(a[0], a[1]);
		break;
	}
}

static void probe_sys_enter(void *data, struct pt_regs *regs, long id)
{
#ifdef MT_LUA
	struct mt_kregs k;

	/* guru mode's handlers may change the arguments here (mt_kregs.c) */
	mt_kregs_enter_syscall(&k, regs);
	enter_markers(regs, id);
	mt_kregs_leave(&k);
#else
	enter_markers(regs, id);
#endif
}

/* Remaining select timeout, in jiffies as the seed's do_select had it. */
static long select_timeout(unsigned long utime, enum mt_timeout kind)
{
	void __user *u = (void __user *)utime;
	struct timespec64 ts;
	union {
		struct __kernel_timespec ts;
		struct __kernel_old_timeval tv;
		struct old_timespec32 ts32;
		struct old_timeval32 tv32;
	} t;
	static const u8 size[] = {
		[MT_TIMEVAL] = sizeof(t.tv), [MT_TIMESPEC] = sizeof(t.ts),
		[MT_OLD_TIMEVAL32] = sizeof(t.tv32), [MT_OLD_TIMESPEC32] = sizeof(t.ts32),
	};

	if (!utime)
		return MAX_SCHEDULE_TIMEOUT;
	if (copy_from_user_nofault(&t, u, size[kind]))
		return 0;
	switch (kind) {
	case MT_TIMESPEC: ts.tv_sec = t.ts.tv_sec; ts.tv_nsec = t.ts.tv_nsec; break;
	case MT_TIMEVAL: ts.tv_sec = t.tv.tv_sec; ts.tv_nsec = t.tv.tv_usec * NSEC_PER_USEC; break;
	case MT_OLD_TIMESPEC32: ts.tv_sec = t.ts32.tv_sec; ts.tv_nsec = t.ts32.tv_nsec; break;
	default: ts.tv_sec = t.tv32.tv_sec; ts.tv_nsec = t.tv32.tv_usec * NSEC_PER_USEC; break;
	}
	return (long)timespec64_to_jiffies(&ts);
}

/*
 * The seed fired per ready descriptor in do_select: the result sets say
 * which.  An fd_set is an array of words (32 bits for ia32) with fd n at
 * bit n % bits of word n / bits: on a little-endian machine that is bit
 * n % 8 of byte n / 8 whatever the word size, so the sets are read as the
 * bytes the caller's words cover.
 */
static void fire_select(const struct sysargs *sa, long ret)
{
	const unsigned long *a = sa->a;
	unsigned long sets[3][1024 / BITS_PER_LONG];
	unsigned long n = min_t(unsigned long, a[0], 1024), bytes, fd;
	long timeout;
	int k;

	if (ret <= 0 || n == 0)
		return;
	bytes = DIV_ROUND_UP(n, 8 * sa->set_word) * sa->set_word;
	for (k = 0; k < 3; k++) {
		memset(sets[k], 0, sizeof(sets[k]));
		if (a[1 + k] && copy_from_user_nofault(sets[k], (void __user *)a[1 + k], bytes))
			memset(sets[k], 0, sizeof(sets[k]));
	}
	timeout = select_timeout(a[4], sa->timeout);
	for (fd = 0; fd < n; fd++) {
		unsigned long bit = 1ul << (fd % BITS_PER_LONG), w = fd / BITS_PER_LONG;

		if ((sets[0][w] | sets[1][w] | sets[2][w]) & bit)
			mt_kmarker_fire(&mt_m_fs_select, (int)fd, (long long)timeout);
	}
}

static void fire_socket_create(long fd)
{
	struct socket *sock = NULL;
	struct file *file;

	if (fd < 0)
		return;
	rcu_read_lock();
	/* rcu: the file cannot be freed under us; no reference taken */
	file = files_lookup_fd_rcu(current->files, fd);
	if (file)
		sock = sock_from_file(file);
	if (sock && sock->sk)
		mt_kmarker_fire(&mt_m_net_socket_create, sock, sock->sk->sk_family,
				sock->sk->sk_type, sock->sk->sk_protocol, (int)fd);
	rcu_read_unlock();
}

static void probe_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	struct sysargs sa;
	const unsigned long *a = sa.a;
	const char __user *path;

	mt_kmarker_fire(&mt_m_kernel_arch_syscall_exit, ret);
	get_sysargs(regs, syscall_get_nr(current, regs), &sa);
	switch (sa.nr) {
	case __NR_open:
	case __NR_creat:
	case __NR_openat:
	case __NR_openat2:
		if (ret < 0 || !mt_kmarker_armed(&mt_m_fs_open))
			break;
		path = (const char __user *)(sa.nr == __NR_openat || sa.nr == __NR_openat2 ? a[1] : a[0]);
		mt_kmarker_fire(&mt_m_fs_open, (int)ret,
				mt_user_string(path, *this_cpu_ptr(&mt_path_buf), MT_PATH_MAX));
		break;
	case __NR_select:
	case __NR_pselect6:
		if (mt_kmarker_armed(&mt_m_fs_select))
			fire_select(&sa, ret);
		break;
	case __NR_msgget:
		mt_kmarker_fire(&mt_m_ipc_msg_create, ret, (int)a[1]);
		break;
	case __NR_semget:
		mt_kmarker_fire(&mt_m_ipc_sem_create, ret, (int)a[2]);
		break;
	case __NR_shmget:
		mt_kmarker_fire(&mt_m_ipc_shm_create, ret, (int)a[2]);
		break;
	case __NR_socket:
		if (mt_kmarker_armed(&mt_m_net_socket_create))
			fire_socket_create(ret);
		break;
	}
}

static MT_TP_HOOK(h_sys_enter, "sys_enter", probe_sys_enter, NULL);
static MT_TP_HOOK(h_sys_exit, "sys_exit", probe_sys_exit, NULL);

#define ENTER "tracepoint raw_syscalls:sys_enter"
#define EXIT "tracepoint raw_syscalls:sys_exit"
/* (every call named below also from ia32 processes) */
MT_KMARKER(fs_ioctl, ENTER " (ioctl)", &h_sys_enter);
MT_KMARKER(fs_open, EXIT " (open, creat, openat, openat2; fd >= 0)", &h_sys_exit);
MT_KMARKER(fs_close, ENTER " (close)", &h_sys_enter);
MT_KMARKER(fs_lseek, ENTER " (lseek)", &h_sys_enter);
MT_KMARKER(fs_llseek, ENTER " (ia32 _llseek)", &h_sys_enter);
MT_KMARKER(fs_read, ENTER " (read)", &h_sys_enter);
MT_KMARKER(fs_write, ENTER " (write)", &h_sys_enter);
MT_KMARKER(fs_pread64, ENTER " (pread64)", &h_sys_enter);
MT_KMARKER(fs_pwrite64, ENTER " (pwrite64)", &h_sys_enter);
MT_KMARKER(fs_readv, ENTER " (readv)", &h_sys_enter);
MT_KMARKER(fs_writev, ENTER " (writev)", &h_sys_enter);
MT_KMARKER(fs_select, EXIT " (select, pselect6: each ready fd)", &h_sys_exit);
MT_KMARKER(fs_pollfd, ENTER " (poll, ppoll: each polled fd)", &h_sys_enter);
MT_KMARKER(ipc_msg_create, EXIT " (msgget)", &h_sys_exit);
MT_KMARKER(ipc_sem_create, EXIT " (semget)", &h_sys_exit);
MT_KMARKER(ipc_shm_create, EXIT " (shmget)", &h_sys_exit);
MT_KMARKER(net_socket_create, EXIT " (socket; fd >= 0)", &h_sys_exit);
MT_KMARKER(net_socket_call, ENTER " (ia32 socketcall)", &h_sys_enter);
MT_KMARKER(kernel_arch_syscall_entry, ENTER, &h_sys_enter);
MT_KMARKER(kernel_arch_syscall_exit, EXIT, &h_sys_exit);
MT_KMARKER(kernel_arch_ipc_call, ENTER " (ia32 ipc)", &h_sys_enter);
