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
 * The 32-bit-only calls of the seed (_llseek, socketcall, ipc) fire for
 * ia32 processes (IA32 emulation), the only place they exist on x86_64.
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

/* ia32 numbers (arch/x86/entry/syscalls/syscall_32.tbl) */
#define MT_IA32_SOCKETCALL 102
#define MT_IA32_IPC        117
#define MT_IA32_LLSEEK     140

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

static void enter_compat(struct pt_regs *regs, long id, const unsigned long *a)
{
	switch (id) {
	case MT_IA32_LLSEEK:
		mt_kmarker_fire(&mt_m_fs_llseek, (unsigned)a[0],
				((unsigned long long)(u32)a[1] << 32) | (u32)a[2], (unsigned)a[4]);
		break;
	case MT_IA32_SOCKETCALL: {
		u32 a0 = 0;

		if (copy_from_user_nofault(&a0, (void __user *)a[1], sizeof(a0)))
			a0 = 0;
		mt_kmarker_fire(&mt_m_net_socket_call, (int)a[0], (unsigned long)a0);
		break;
	}
	case MT_IA32_IPC:
		mt_kmarker_fire(&mt_m_kernel_arch_ipc_call, (unsigned)a[0], (int)a[1]);
		break;
	}
}

static void probe_sys_enter(void *data, struct pt_regs *regs, long id)
{
	unsigned long a[6];

	mt_kmarker_fire(&mt_m_kernel_arch_syscall_entry, (int)id, (long)instruction_pointer(regs));
	syscall_get_arguments(current, regs, a);
	if (in_compat_syscall()) {
		enter_compat(regs, id, a);
		return;
	}
	switch (id) {
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
		if (READ_ONCE(mt_m_fs_pollfd.id) >= 0)
			fire_pollfds(a[0], a[1]);
		break;
	}
}

/* Remaining select timeout, in jiffies as the seed's do_select had it. */
static long select_timeout(unsigned long utime, int is_timespec)
{
	struct timespec64 ts;

	if (!utime)
		return MAX_SCHEDULE_TIMEOUT;
	if (is_timespec) {
		struct __kernel_timespec t;

		if (copy_from_user_nofault(&t, (void __user *)utime, sizeof(t)))
			return 0;
		ts.tv_sec = t.tv_sec;
		ts.tv_nsec = t.tv_nsec;
	} else {
		struct __kernel_old_timeval t;

		if (copy_from_user_nofault(&t, (void __user *)utime, sizeof(t)))
			return 0;
		ts.tv_sec = t.tv_sec;
		ts.tv_nsec = t.tv_usec * NSEC_PER_USEC;
	}
	return (long)timespec64_to_jiffies(&ts);
}

/* The seed fired per ready descriptor in do_select: the result sets say which. */
static void fire_select(const unsigned long *a, long ret, int is_pselect)
{
	unsigned long sets[3][1024 / BITS_PER_LONG];
	unsigned long n = min_t(unsigned long, a[0], 1024), words, fd;
	long timeout;
	int k;

	if (ret <= 0 || n == 0)
		return;
	words = BITS_TO_LONGS(n);
	for (k = 0; k < 3; k++) {
		memset(sets[k], 0, sizeof(sets[k]));
		if (a[1 + k] && copy_from_user_nofault(sets[k], (void __user *)a[1 + k],
						       words * sizeof(long)))
			memset(sets[k], 0, sizeof(sets[k]));
	}
	timeout = select_timeout(a[4], is_pselect);
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
	long id = syscall_get_nr(current, regs);
	unsigned long a[6];
	const char __user *path;

	mt_kmarker_fire(&mt_m_kernel_arch_syscall_exit, ret);
	if (id < 0 || in_compat_syscall())
		return;
	syscall_get_arguments(current, regs, a);
	switch (id) {
	case __NR_open:
	case __NR_creat:
	case __NR_openat:
	case __NR_openat2:
		if (ret < 0 || READ_ONCE(mt_m_fs_open.id) < 0)
			break;
		path = (const char __user *)(id == __NR_openat || id == __NR_openat2 ? a[1] : a[0]);
		mt_kmarker_fire(&mt_m_fs_open, (int)ret,
				mt_user_string(path, *this_cpu_ptr(&mt_path_buf), MT_PATH_MAX));
		break;
	case __NR_select:
	case __NR_pselect6:
		if (READ_ONCE(mt_m_fs_select.id) >= 0)
			fire_select(a, ret, id == __NR_pselect6);
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
		if (READ_ONCE(mt_m_net_socket_create.id) >= 0)
			fire_socket_create(ret);
		break;
	}
}

static MT_TP_HOOK(h_sys_enter, "sys_enter", probe_sys_enter, NULL);
static MT_TP_HOOK(h_sys_exit, "sys_exit", probe_sys_exit, NULL);

#define ENTER "tracepoint raw_syscalls:sys_enter"
#define EXIT "tracepoint raw_syscalls:sys_exit"
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
