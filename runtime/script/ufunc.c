/*
 * ufunc.c - handlers at a program's functions, by a jump to a stub where
 * the instruction allows, else by int3 and single-step (ufunc.h): arming
 * and disarming, as sdt.c's scans and sdt_stop() ask.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include "insn.h"
#include "probe.h"
#include "text.h"
#include "ufunc_int.h"

/* ---- SIGTRAP unblocked ------------------------------------------------------------- */

#if defined(__x86_64__)
/*
 * SIGTRAP must never be blocked where a probe may trap: the kernel kills
 * a process whose int3 raises it blocked.  Programs block every signal
 * (dash around vfork and in its child until exec; worker threads that
 * leave signals to the main thread).  libc's pthread_sigmask(), which
 * sigprocmask(), sigsetmask() and sigblock() call, is redirected to
 * mt_sigmask() below: the same, except that SIGTRAP stays unblocked.  A jump
 * rather than a trap: posix_spawn's child calls it with every signal
 * blocked.  glibc's inline blocking (thread and process creation) is out
 * of its reach: translator/dwarf.c refuses probes there.  Not covered:
 * a handler installed with SIGTRAP in its sa_mask, sigsuspend(),
 * ppoll()... masks (marktap(1)).
 */
static struct {
	uintptr_t at;                   /* pthread_sigmask, patched; 0: not */
	unsigned char orig[5];
	uintptr_t stub;                 /* "jmp *0(%rip)" to mt_sigmask(), near it */
} R;

#define SIGCANCEL_ 32                   /* glibc's internal signals, never blocked */
#define SIGSETXID_ 33

/* pthread_sigmask() without libc (it runs where every signal is
 * blocked, and libc's functions may be probed): 0 or an errno value. */
static int mt_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	unsigned long m = 0;

	if (set) {
		m = *(const unsigned long *)set;
		m &= ~(1ul << (SIGCANCEL_ - 1) | 1ul << (SIGSETXID_ - 1));
		if (how == SIG_BLOCK || how == SIG_SETMASK)
			m &= ~(1ul << (SIGTRAP - 1));
	}
	long r = SYS6(SYS_rt_sigprocmask, how, set ? &m : NULL, old, 8, 0, 0);
	return r < 0 ? (int)-r : 0;
}

/*
 * The n bytes at `at` in one aligned 8-byte write (the caller checks that
 * they fit one, inside one instruction), never a trap (the threads that
 * call pthread_sigmask() are those that may have SIGTRAP blocked: an int3
 * written first, as mt_text_patch() does, would kill them).  Through
 * /proc/self/mem (text.c), so the page never becomes writable; the kernel
 * may copy the word in pieces, so a thread entering pthread_sigmask() at
 * that instant (once at arming, once at the end) could run a mix: a risk
 * left open, as the one store that closes it needs the page writable and
 * executable (W^X, ufunc-plt.t).
 */
static int write_word(uintptr_t at, const unsigned char *bytes, size_t n)
{
	uintptr_t word = at & ~(uintptr_t)7;
	uint64_t v;

	if (ufunc_read_mem(word, &v, 8) < 0)
		return -1;
	memcpy((unsigned char *)&v + (at - word), bytes, n);
	if (mt_text_write(word, &v, 8) < 0)
		return -1;
	mt_text_sync();   /* other threads drop what they decoded of the old bytes */
	return 0;
}

static void redirect_sigmask(void)
{
	static int done;
	uintptr_t fn = (uintptr_t)dlsym(RTLD_DEFAULT, "pthread_sigmask");
	unsigned char code[16], jump[5], stub[14] = { 0xff, 0x25, 0, 0, 0, 0 };
	uintptr_t target = (uintptr_t)mt_sigmask;
	sigset_t trap;
	int64_t rel;

	Dl_info where;

	if (done)
		return;
	done = 1;
	if (!fn || !dladdr((void *)fn, &where) || !where.dli_fbase)
		return;
	/* a mask inherited with SIGTRAP blocked (exec keeps it) */
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);
	mt_sigmask(SIG_UNBLOCK, &trap, NULL);
	/* the jump must replace one whole instruction: no thread can be
	 * inside the bytes it covers */
	if (ufunc_read_mem(fn, code, sizeof(code)) < 0 || insn_relocatable_len(code, sizeof(code)) < 5 ||
	    (fn & 7) > 3 || !(R.stub = usite_page_near(fn))) {
		report("%s", "pthread_sigmask() of libc not redirected: a program that blocks SIGTRAP "
		       "is killed by its first hit");
		return;
	}
	memcpy(stub + 6, &target, 8);
	memcpy((void *)R.stub, stub, sizeof(stub));
	mprotect((void *)R.stub, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC);
	rel = (int64_t)R.stub - (int64_t)(fn + 5);
	jump[0] = 0xe9;
	memcpy(jump + 1, &(int32_t){ (int32_t)rel }, 4);
	memcpy(R.orig, code, 5);
	__atomic_store_n(&R.at, fn, __ATOMIC_RELEASE);
	if (write_word(R.at, jump, 5) < 0)
		report("%s", "pthread_sigmask() of libc: cannot patch it");
}
#endif

/* A thread of this process with SIGTRAP blocked (from
 * /proc/self/task/N/status), or 0. */
static int blocked_thread(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int who = 0;

	while (d && !who && (e = readdir(d))) {
		char path[300], line[128];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigBlk:", 7)) {
				if (strtoull(line + 7, NULL, 16) & 1ull << (SIGTRAP - 1))
					who = atoi(e->d_name);
				break;
			}
		fclose(f);
	}
	if (d)
		closedir(d);
	return who;
}

/*
 * Before the first int3 of an object: no thread may have SIGTRAP
 * blocked.  Threads that block it through pthread_sigmask() lose it at
 * their next call (redirect_sigmask()): wait for them a little.  A thread
 * that keeps it blocked (marktap -x into a process whose threads block
 * every signal for good) keeps the probes from being armed.  The thread
 * id, or 0.
 */
static int trap_blocker(void)
{
	int who = 0;

	for (int tries = 0; tries < 50 && (who = blocked_thread()); tries++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return who;
}

int ufunc_object(struct dl_phdr_info *info, const struct stat *st, probe_attach_fn attach, probe_hit_fn hit,
		 probe_error_fn error)
{
	int armed = 0;

	ufunc_hit = hit;
	ufunc_error = error;
#if defined(__x86_64__)
	trap_measure_errno();
#endif
	if (ufunc_nwants)
		ret_key_init();
	/*
	 * Two passes: every site is attached first, then patched.  Attaching
	 * runs libc (the host matches names with strcmp): patched as it went,
	 * function("*") on libc trapped in strcmp for each of the 7000 sites
	 * after it, 30 million traps before the program started.
	 */
	struct usite **mine = calloc(ufunc_nwants ? ufunc_nwants : 1, sizeof(*mine));
	unsigned n = 0, route[4] = { 0 };
	uintptr_t entry = 0;   /* of the jump stubs; 0: traps only */
	const char *stats;
	int blocker;

	if (!mine)
		return 0;
#if defined(__x86_64__)
	if (ufunc_nwants) {
		redirect_sigmask();
		entry = trap_jumps() ? (uintptr_t)mt_ufunc_entry : 0;
	}
	for (unsigned i = 0; i < ufunc_nwants; i++)
		if (ufunc_wants[i]->ret) {   /* the return stubs, before a call is hooked */
			ret_init((uintptr_t)mt_ufunc_rtramp, !trap_jumps());
			break;
		}
#endif
	for (unsigned i = 0; i < ufunc_nwants; i++)
		if (ufunc_wants[i]->dev == st->st_dev && ufunc_wants[i]->ino == st->st_ino &&
		    (mine[n] = usite_new(info, st, ufunc_wants[i], attach, entry)))
			n++;
	if (n && (blocker = trap_blocker()) > 0) {
		report("thread %d blocks SIGTRAP: the %u probes of %s are not armed (a trap there "
		       "would make the kernel kill the process)", blocker, n,
		       info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program");
		for (unsigned i = 0; i < n; i++)
			__atomic_store_n(&mine[i]->dead, 1, __ATOMIC_RELEASE);
		n = 0;
	}
	for (unsigned i = 0; i < n; i++) {
		struct usite *s = mine[i];
		__atomic_store_n(&s->armed, 1, __ATOMIC_RELEASE);
#if defined(__x86_64__)
		if (s->stub) {   /* the jump, once per address */
			unsigned char first = 0;
			if (ufunc_read_mem(s->addr, &first, 1) == 0 && first != (s->jlen == 5 ? 0xe9 : 0xeb) &&
			    usite_write_jump(s) < 0) {
				__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
				report("%s of %s: cannot patch its code", s->w->name, info->dlpi_name);
				continue;
			}
			armed++;
			route[s->jlen == 5 ? 0 : 1]++;
			continue;
		}
#endif
		if (usite_poke(s->addr, 0xcc) < 0) {
			__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
			report("%s of %s: cannot patch its code: %s", s->w->name, info->dlpi_name, strerror(errno));
			continue;
		}
		armed++;
		route[s->xol ? 2 : 3]++;
	}
	free(mine);
	probe_text_fallback_told(ufunc_error);
	/* how the probes run: MARKTAP_UFUNC_STATS=1 (marktap(1)) */
	if (armed && (stats = secure_getenv("MARKTAP_UFUNC_STATS")) && !strcmp(stats, "1"))
		report("%s: %d probes: %u jump, %u jump through padding, %u trap out of line, %u trap in place",
		       info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program", armed, route[0],
		       route[1], route[2], route[3]);
	return armed;
}

void ufunc_forget(uintptr_t base, dev_t dev, ino_t ino)
{
	const struct site_table *t = usite_table();

	for (size_t i = 0; i < t->n; i++) {
		struct usite *s = t->v[i];
		if (s->bias == base && s->dev == dev && s->ino == ino && !s->dead) {
			s->dead = 1;
			__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
		}
	}
}

void ufunc_stop(void)
{
	const struct site_table *t = usite_table();

	for (size_t i = 0; i < t->n; i++) {
		struct usite *s = t->v[i];
		if (!__atomic_exchange_n(&s->armed, 0, __ATOMIC_ACQ_REL) || s->dead)
			continue;
		/* the run of one address: every site of it is disarmed first */
		size_t k = i + 1;
		while (k < t->n && t->v[k]->addr == s->addr)
			__atomic_store_n(&t->v[k++]->armed, 0, __ATOMIC_RELEASE);
#if defined(__x86_64__)
		if (s->stub) {   /* a thread in the stub goes on to the copy */
			mt_text_patch(s->addr, s->orig5, s->jlen);
			if (s->pad)   /* a thread past the 2-byte jump finds the nop, or
				       * traps there and goes to the stub (ufunc_trap) */
				mt_text_patch(s->pad, s->orig_pad, 5);
			continue;
		}
#endif
		usite_poke(s->addr, s->orig);
	}
#if defined(__x86_64__)
	/* last: a probe of pthread_sigmask's own put back the jump's first
	 * byte above; the stub and mt_sigmask() stay (a thread may be on
	 * its way) */
	if (R.at)
		write_word(R.at, R.orig, 5);
	ret_report_lost();
#endif
}
