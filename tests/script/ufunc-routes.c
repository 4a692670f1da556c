/*
 * ufunc-routes.c - functions whose first bytes choose each way a function
 * probe runs (tests/script/ufunc-routes.t), written in assembly so that
 * the compiler keeps them as they are:
 *   r_jump     lea 0x100(%rdi), %rax: 7 bytes, a 5-byte jump over it
 *   r_rip      mov r_base(%rip), %rax: 7 bytes RIP-relative, moved in its copy
 *   r_pad      mov %rdi, %rax: 3 bytes after a padding nop of 8: a 2-byte
 *              jump to a jump in the padding
 *   r_one      push %rbx: 1 byte, a trap, the copy out of line
 *   r_inplace  jrcxz: a trap, stepped over in place
 *   r_call     call r_jump (rel32): a 5-byte jump; the copy pushes the
 *              original's return address
 *   r_jcc      jc rel32: a 5-byte jump over it; the copy branches alike
 *   ufunc-routes N        calls each N times, prints the sums
 *   ufunc-routes wait [T] T threads (1) call them until stdin closes;
 *                         then whether the code (functions and the
 *                         padding between them) is as it was at the start
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* naked: the body is the assembly alone, and DWARF gives the functions
 * their parameter and return types ($return); one section, in order */
#define ROUTE __attribute__((naked, noinline, section("rt_code")))
long r_base = 1000;
extern const unsigned char __start_rt_code[], __stop_rt_code[];

ROUTE long r_jump(long x __attribute__((unused)))
{
	__asm__("lea 0x100(%rdi), %rax\n\tret");
}

ROUTE long r_pad(long x __attribute__((unused)))
{
	__asm__("mov %rdi, %rax\n\tadd $2, %rax\n\tret");
}

ROUTE long r_rip(long x __attribute__((unused)))
{
	__asm__("mov r_base(%rip), %rax\n\tadd %rdi, %rax\n\tret");
}

ROUTE long r_one(long x __attribute__((unused)))
{
	__asm__("push %rbx\n\tlea 4(%rdi), %rax\n\tpop %rbx\n\tret");
}

ROUTE long r_inplace(long x __attribute__((unused)))
{
	__asm__("jrcxz 1f\n1:\tjmp r_jump");
}

/* call rel32 (5 bytes), redone by its copy with the same return address */
ROUTE long r_call(long x __attribute__((unused)))
{
	__asm__(".byte 0xe8\n\t.long r_jump - . - 4\n\tadd $1, %rax\n\tret");
}

/* jc rel32 to the next instruction (6 bytes): both ways the same */
ROUTE long r_jcc(long x __attribute__((unused)))
{
	__asm__(".byte 0x0f, 0x82\n\t.long 0\n\tlea 8(%rdi), %rax\n\tret");
}

static __attribute__((noinline)) long run(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += r_jump(i) + r_rip(i) + r_pad(i) + r_one(i) + r_inplace(i) + r_call(i) + r_jcc(i);
	return s;
}

static volatile int stop;
static long calls;

static void *loop(void *arg)
{
	(void)arg;
	while (!stop) {
		run(100);
		__atomic_add_fetch(&calls, 100, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "wait")) {
		size_t len = (size_t)(__stop_rt_code - __start_rt_code);
		unsigned char *before = malloc(len);
		int nth = argc > 2 ? atoi(argv[2]) : 1;
		pthread_t th[16];
		if (nth < 1 || nth > 16)
			nth = 1;
		memcpy(before, __start_rt_code, len);
		for (int i = 0; i < nth; i++)
			pthread_create(&th[i], NULL, loop, NULL);
		printf("ready\n");
		fflush(stdout);
		while (getchar() != EOF)   /* until stdin closes: marktap -x meanwhile */
			;
		stop = 1;
		for (int i = 0; i < nth; i++)
			pthread_join(th[i], NULL);
		printf("calls %s\ncode %s\n", calls > 0 ? "made" : "none",
		       memcmp(before, __start_rt_code, len) ? "changed" : "as before");
		return 0;
	}
	printf("sum %ld\n", run(argc > 1 ? atol(argv[1]) : 10));
	return 3;
}
