/*
 * ia32-send.c - a static 32-bit program for kfunc-tapsets.t: send and
 * recv as a 32-bit task makes them, through socketcall (x86_64 has no such
 * calls: syscall.send and syscall.recv are these).  No libc: built with
 * gcc -m32 -nostdlib, as ia32.c.
 *
 * A socket pair (fds 3 and 4 when run with 0-2 open), then
 *   socketcall(SYS_SEND, {3, "hello", 5, MSG_DONTWAIT})   returns 5
 *   socketcall(SYS_RECV, {4, buf, 16, 0})                 returns 5
 */
#define NR_exit 1
#define NR_socketcall 102
#define SYS_SOCKETPAIR 8
#define SYS_SEND 9
#define SYS_RECV 10
#define AF_UNIX 1
#define SOCK_STREAM 1
#define MSG_DONTWAIT 0x40

static long sys(long n, long a, long b)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(n), "b"(a), "c"(b) : "memory");
	return r;
}

void _start(void)
{
	static int sv[2];
	static char buf[16];
	static unsigned long pair[4] = { AF_UNIX, SOCK_STREAM, 0, 0 };
	static unsigned long send[4], recv[4];
	/* the message written here, as a program fills what it sends: its
	 * page is present when the handler reads it (a page of .rodata
	 * nothing touched yet is not, and handlers read without faulting) */
	static char msg[8];

	msg[0] = 'h', msg[1] = 'e', msg[2] = 'l', msg[3] = 'l', msg[4] = 'o';
	pair[3] = (unsigned long)sv;
	sys(NR_socketcall, SYS_SOCKETPAIR, (long)pair);
	send[0] = (unsigned long)sv[0];
	send[1] = (unsigned long)msg;
	send[2] = 5;
	send[3] = MSG_DONTWAIT;
	sys(NR_socketcall, SYS_SEND, (long)send);
	recv[0] = (unsigned long)sv[1];
	recv[1] = (unsigned long)buf;
	recv[2] = sizeof(buf);
	recv[3] = 0;
	sys(NR_socketcall, SYS_RECV, (long)recv);
	sys(NR_exit, 0, 0);
	for (;;)
		;
}
