/*
 * ia32.c - a static 32-bit program for the kernel tests (kaudit.t): the
 * system calls behind the fs_*, ipc_*_create and net_socket_create markers
 * made through int $0x80, with ia32 numbers and argument layouts, so that
 * marktap.ko's mapping of them is seen.  No libc: built with
 * gcc -m32 -nostdlib, which needs no 32-bit libraries installed.
 *
 * Expected events (fd is the file's descriptor, 3 when run alone):
 *   fs_open fd filename=/tmp/probe-file.txt   fs_read count 7
 *   fs_lseek offset -2 origin 2               fs_pread64 count 3 pos 4294967298
 *   fs_select fd                              fs_pollfd fd
 *   net_socket_create type 2 (socketcall)     net_socket_create type 1 (socket)
 *   ipc_msg_create flags 896 (msgget)         ipc_msg_create flags 897 (ipc)
 *   ipc_sem_create flags 898 (semget)         ipc_shm_create flags 900 (ipc)
 *   fs_close fd
 */
#define NR_exit 1
#define NR_read 3
#define NR_open 5
#define NR_close 6
#define NR_lseek 19
#define NR_socketcall 102
#define NR_ipc 117
#define NR_newselect 142
#define NR_poll 168
#define NR_pread64 180
#define NR_socket 359
#define NR_semget 393
#define NR_msgget 399

#define IPC_CREAT 01000
#define MSGGET 13
#define SHMGET 23
#define SYS_SOCKET 1

static long sys(long n, long a, long b, long c, long d, long e)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r)
			 : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e) : "memory");
	return r;
}

void _start(void)
{
	static char buf[16];
	static unsigned long readfds[2];
	static long tv[2] = { 5, 0 };
	static struct { int fd; short events, revents; } pfd;
	static unsigned long sockargs[3] = { 2, 2, 0 };   /* AF_INET, SOCK_DGRAM */
	long fd = sys(NR_open, (long)"/tmp/probe-file.txt", 0, 0, 0, 0);

	sys(NR_read, fd, (long)buf, 7, 0, 0);
	sys(NR_lseek, fd, -2, 2, 0, 0);
	sys(NR_pread64, fd, (long)buf, 3, 2, 1);        /* pos 1 << 32 | 2 */
	readfds[fd / 32] = 1ul << (fd % 32);
	sys(NR_newselect, fd + 1, (long)readfds, 0, 0, (long)tv);
	pfd.fd = (int)fd;
	pfd.events = 1;   /* POLLIN */
	sys(NR_poll, (long)&pfd, 1, 0, 0, 0);
	sys(NR_socketcall, SYS_SOCKET, (long)sockargs, 0, 0, 0);
	sys(NR_socket, 2, 1, 0, 0, 0);                  /* AF_INET, SOCK_STREAM */
	sys(NR_msgget, 0, IPC_CREAT | 0600, 0, 0, 0);
	sys(NR_ipc, MSGGET, 0, IPC_CREAT | 0601, 0, 0);
	sys(NR_semget, 0, 1, IPC_CREAT | 0602, 0, 0);
	sys(NR_ipc, SHMGET, 0, 4096, IPC_CREAT | 0604, 0);
	sys(NR_close, fd, 0, 0, 0, 0);
	sys(NR_exit, 0, 0, 0, 0, 0);
	for (;;)
		;
}
