/*
 * tapsets-act.c - known actions for tapsets.t, run inside the qemu guest
 * while marktap watches.  Each action writes what it did to FACTS, one
 * "KEY VALUE..." line each, so that the guest can compare what the tapset
 * aliases reported with what happened:
 *
 *   tapsets-act FACTS ipc      msgget/semget/shmget (+ msgsnd, semop, shmat)
 *   tapsets-act FACTS itimer   setitimer(ITIMER_REAL) until it expires
 *   tapsets-act FACTS rw       pwrite, pread, writev, readv on a file
 *   tapsets-act FACTS select   select() on a pipe with data
 *   tapsets-act FACTS trap     a child divides by zero (#DE)
 *   tapsets-act FACTS huge     a MAP_HUGETLB page (needs nr_hugepages >= 1)
 *   tapsets-act FACTS swap     a page paged out and read back (needs swap)
 *   tapsets-act FACTS migrate  move ourselves between CPUs 0 and 1 (then 1 s)
 *   tapsets-act FACTS ptrace   inspect a stopped, traced child (kept 1 s)
 *   tapsets-act FACTS tty      read the console with a 0.1 s timeout
 *   tapsets-act FACTS sigaction  a SIGUSR1 handler (its address), SIGUSR2 ignored
 *
 * Page frame numbers and swap entries come from /proc/self/pagemap (root
 * sees them).  An action that cannot be done says so on stderr and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/ptrace.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static FILE *facts;

static int fail(const char *what)
{
	fprintf(stderr, "tapsets-act: %s: %s\n", what, strerror(errno));
	return 1;
}

/* ---- System V IPC: distinct permission bits tell the three flags apart */

static int act_ipc(void)
{
	struct { long type; char text[8]; } msg = { 7, "marktap" };
	struct sembuf op = { 0, 1, 0 };
	int msgflg = IPC_CREAT | 0640, semflg = IPC_CREAT | 0620, shmflg = IPC_CREAT | 0600;
	int msq, sem, shm;
	void *at;

	if ((msq = msgget(IPC_PRIVATE, msgflg)) < 0)
		return fail("msgget");
	fprintf(facts, "msg %d %d\n", msq, msgflg);
	if (msgsnd(msq, &msg, sizeof(msg.text), 0) < 0 ||
	    msgrcv(msq, &msg, sizeof(msg.text), 7, 0) < 0)
		return fail("msgsnd/msgrcv");
	msgctl(msq, IPC_RMID, NULL);
	if ((sem = semget(IPC_PRIVATE, 1, semflg)) < 0)
		return fail("semget");
	fprintf(facts, "sem %d %d\n", sem, semflg);
	if (semop(sem, &op, 1) < 0)
		return fail("semop");
	semctl(sem, 0, IPC_RMID);
	if ((shm = shmget(IPC_PRIVATE, 4096, shmflg)) < 0)
		return fail("shmget");
	fprintf(facts, "shm %d %d\n", shm, shmflg);
	if ((at = shmat(shm, NULL, 0)) == (void *)-1)
		return fail("shmat");
	memset(at, 1, 4096);
	shmdt(at);
	shmctl(shm, IPC_RMID, NULL);
	return 0;
}

/* ---- itimer: a 30 ms ITIMER_REAL with a 7.5 s interval, stopped at once */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static int act_itimer(void)
{
	struct itimerval set = { { 7, 500000 }, { 0, 30000 } }, off = { { 0, 0 }, { 0, 0 } };
	sigset_t block, old;

	signal(SIGALRM, on_alarm);
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (setitimer(ITIMER_REAL, &set, NULL) < 0)
		return fail("setitimer");
	while (!alarms)
		sigsuspend(&old);
	setitimer(ITIMER_REAL, &off, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	fprintf(facts, "itimer %d 7 500000 0 30000\n", (int)getpid());
	return 0;
}

/* ---- positioned and vectored reads and writes */

static int act_rw(void)
{
	char buf[64] = "0123456789abcdefghij";
	struct iovec wv[3] = { { buf, 2 }, { buf + 2, 3 }, { buf + 5, 4 } };
	struct iovec rv[2] = { { buf + 20, 5 }, { buf + 30, 6 } };
	int fd = open("/tmp/tapsets-act.rw", O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return fail("open /tmp/tapsets-act.rw");
	if (pwrite(fd, buf, 13, 17) != 13 || pread(fd, buf + 40, 11, 19) != 11 ||
	    writev(fd, wv, 3) != 9 || lseek(fd, 0, SEEK_SET) != 0 || readv(fd, rv, 2) != 11)
		return fail("pwrite/pread/writev/readv");
	fprintf(facts, "rw %d pwrite 13 17 pread 11 19 writev 3 readv 2\n", fd);
	close(fd);
	return 0;
}

/* ---- select: the read end of a pipe with data is ready at once */

static int act_select(void)
{
	struct timeval tv = { 2, 500000 };
	fd_set rfds;
	int p[2];

	if (pipe(p) < 0 || write(p[1], "x", 1) != 1)
		return fail("pipe");
	FD_ZERO(&rfds);
	FD_SET(p[0], &rfds);
	if (select(p[0] + 1, &rfds, NULL, NULL, &tv) != 1)
		return fail("select");
	/* Linux leaves the time not slept in tv: the marker reads it after the call */
	fprintf(facts, "select %d %ld\n", p[0], (long)tv.tv_sec * 1000000 + tv.tv_usec);
	close(p[0]);
	close(p[1]);
	return 0;
}

/* ---- trap: idivl by zero at a known address (a fault: ip is the insn) */

extern char tapsets_act_div0[], tapsets_act_div0_insn[];
asm(".text\n"
    ".globl tapsets_act_div0\n.type tapsets_act_div0,@function\n"
    "tapsets_act_div0:\n"
    "\txorl %ecx, %ecx\n"
    "\tmovl $1, %eax\n"
    "\tcltd\n"
    ".globl tapsets_act_div0_insn\n"
    "tapsets_act_div0_insn:\n"
    "\tidivl %ecx\n"
    "\tret\n"
    ".size tapsets_act_div0, .-tapsets_act_div0\n");

static int act_trap(void)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		return fail("fork");
	if (child == 0) {
		((void (*)(void))tapsets_act_div0)();
		_exit(0);
	}
	waitpid(child, &status, 0);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGFPE) {
		fprintf(stderr, "tapsets-act: the child did not die of SIGFPE (status %#x)\n", status);
		return 1;
	}
	fprintf(facts, "trap %d 0 %lu\n", (int)child, (unsigned long)tapsets_act_div0_insn);
	return 0;
}

/* ---- pages: the pagemap entry of an address of ours */

static uint64_t pagemap(void *addr)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &entry, sizeof(entry), (uintptr_t)addr / 4096 * sizeof(entry)) != sizeof(entry))
			entry = 0;
		close(fd);
	}
	return entry;
}

#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PM_PFN(e) ((e) & ((1ULL << 55) - 1))
#define PM_SWAP_OFFSET(e) (PM_PFN(e) >> 5)   /* bits 0-4: swap type */

static int act_huge(void)
{
	size_t size = 2 << 20;
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	uint64_t e;

	if (p == MAP_FAILED)
		return fail("mmap MAP_HUGETLB (nr_hugepages?)");
	p[0] = 1;
	e = pagemap(p);
	if (!(e & PM_PRESENT) || !PM_PFN(e)) {
		fprintf(stderr, "tapsets-act: no pfn for the huge page (%#llx)\n", (unsigned long long)e);
		return 1;
	}
	fprintf(facts, "huge %llu\n", (unsigned long long)PM_PFN(e));
	munmap(p, size);
	return 0;
}

/*
 * swap: MADV_PAGEOUT writes the page to swap now (a synchronous device
 * such as zram also drops it from the swap cache); MADV_WILLNEED reads
 * it back through the swap cache; touching it maps the page read.
 */
static int act_swap(void)
{
	volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t before, out = 0, in;
	int try;

	if (p == MAP_FAILED)
		return fail("mmap");
	for (try = 0; try < 20 && !(out & PM_SWAPPED); try++) {
		p[0] = 'a' + try;        /* resident and dirty */
		before = pagemap((void *)p);
		if (madvise((void *)p, 4096, MADV_PAGEOUT) < 0)
			return fail("madvise MADV_PAGEOUT");
		out = pagemap((void *)p);
		if (!(out & PM_SWAPPED))
			usleep(20000);
	}
	if (!(out & PM_SWAPPED)) {
		fprintf(stderr, "tapsets-act: the page was not swapped out (swap on?)\n");
		return 1;
	}
	if (madvise((void *)p, 4096, MADV_WILLNEED) < 0)
		return fail("madvise MADV_WILLNEED");
	(void)p[0];
	in = pagemap((void *)p);
	fprintf(facts, "swap %llu %llu %llu\n", (unsigned long long)PM_PFN(before),
		(unsigned long long)PM_SWAP_OFFSET(out), (unsigned long long)PM_PFN(in));
	return 0;
}

/* ---- migrate: pinning to one CPU, then the other, moves us both times */

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int act_migrate(void)
{
	if (pin(0) < 0 || pin(1) < 0 || pin(0) < 0)
		return fail("sched_setaffinity (2 CPUs?)");
	fprintf(facts, "migrate %d\n", (int)getpid());
	sleep(1);   /* alive while handlers on recorded events read our tgid */
	return 0;
}

/* ---- ptrace: reading a stopped tracee waits for it to be off its CPU */

static int act_ptrace(void)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		return fail("fork");
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(child, &status, 0);
	errno = 0;
	ptrace(PTRACE_PEEKUSER, child, NULL, NULL);
	if (errno)
		return fail("ptrace PTRACE_PEEKUSER");
	sleep(1);   /* alive while handlers on recorded events read its tgid */
	ptrace(PTRACE_CONT, child, NULL, NULL);
	waitpid(child, &status, 0);
	fprintf(facts, "ptrace %d\n", (int)child);
	return 0;
}

/* ---- sigaction: a handler for SIGUSR1 with SA_SIGINFO|SA_RESTART that
 * blocks SIGINT and SIGTERM while it runs; SIGUSR2 ignored */

static void on_usr1(int sig, siginfo_t *info, void *uc)
{
	(void)sig; (void)info; (void)uc;
}

static int act_sigaction(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || signal(SIGUSR2, SIG_IGN) == SIG_ERR)
		return fail("sigaction");
	fprintf(facts, "sigaction %d %lx\n", SIGUSR1, (unsigned long)(uintptr_t)on_usr1);
	return 0;
}

/* ---- tty: a non-canonical read with VMIN 0, VTIME 1 sleeps 0.1 s in
 * schedule_timeout(), whose timer then fires (no input: stdin is null) */

static int act_tty(void)
{
	struct termios saved, raw;
	char c;
	int fd = open("/dev/console", O_RDWR | O_NOCTTY);

	if (fd < 0)
		return fail("open /dev/console");
	if (tcgetattr(fd, &saved) < 0)
		return fail("tcgetattr");
	raw = saved;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 1;
	tcsetattr(fd, TCSANOW, &raw);
	if (read(fd, &c, 1) != 0)
		fprintf(stderr, "tapsets-act: unexpected console input\n");
	tcsetattr(fd, TCSANOW, &saved);
	close(fd);
	fprintf(facts, "tty %d\n", (int)getpid());
	return 0;
}

static const struct {
	const char *name;
	int (*act)(void);
} acts[] = {
	{ "ipc", act_ipc }, { "itimer", act_itimer }, { "rw", act_rw },
	{ "select", act_select }, { "trap", act_trap }, { "huge", act_huge },
	{ "swap", act_swap }, { "migrate", act_migrate }, { "ptrace", act_ptrace },
	{ "tty", act_tty }, { "sigaction", act_sigaction },
};

int main(int argc, char **argv)
{
	size_t i;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: tapsets-act FACTS ACTION\n");
		return 2;
	}
	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		if (strcmp(argv[2], acts[i].name) != 0)
			continue;
		if (!(facts = fopen(argv[1], "a")))
			return fail(argv[1]);
		rc = acts[i].act();
		if (fclose(facts) != 0)
			return fail(argv[1]);
		return rc;
	}
	fprintf(stderr, "tapsets-act: no action %s\n", argv[2]);
	return 2;
}
