/*
 * mt_rseq.h - per-CPU compare-and-store and add without a locked
 * instruction, through restartable sequences (rseq(2), Linux 4.18).
 *
 * A ring of a "per-CPU" session (mt_session.h, MT_SYNC_RSEQ) has its
 * write_pos and its sub-buffers' commit counts written only from the CPU
 * the ring belongs to, inside a restartable sequence: the kernel sends a
 * thread that is preempted, migrated or signalled inside one to the
 * sequence's abort address instead of letting it finish, so the loads,
 * the compare and the final store of a sequence are atomic with respect
 * to every other thread of every process on that CPU, and no other CPU
 * writes the word.  The locked compare-and-swap and add they replace
 * cost 8.5 and 5 ns on the machines of bench/ust (each drains the store
 * buffer); a sequence costs a store of its descriptor's address.
 *
 * Whoever cannot be on the ring's CPU adds to the sub-buffer's commit_far
 * count with a locked add instead (a writer migrated between its
 * reservation and its commit, the padding a reservation commits for the
 * previous sub-buffer); marktrace flushes a ring after moving itself to
 * its CPU (consumer.c).  User space, x86_64, glibc 2.35 or later (its
 * rseq area; a thread without one registers its own: record.c).
 */
#ifndef MT_RSEQ_H
#define MT_RSEQ_H

#if !defined(__KERNEL__) && defined(__x86_64__) && defined(__GLIBC__)
#if __GLIBC_PREREQ(2, 35)
#include <sys/rseq.h>
#define MT_HAVE_RSEQ 1

/* The signature before every abort address; glibc registers with it. */
#define MT_RSEQ_SIG 0x53053053

/* A writer's place: the CPU it found in its rseq area, and the area. */
struct mt_rseq_ctx {
	struct rseq *rs;
	u32 cpu;
};

/*
 * The sequence's descriptor goes to section __rseq_cs (writable: it holds
 * absolute addresses, relocated when a shared object loads), the abort
 * handler to __rseq_failure, after the signature (as the operand of a
 * ud1, so that a disassembler reading through it stays in step).
 */
#define MT_RSEQ_BEGIN                                                           \
	".pushsection __rseq_cs, \"aw\"\n\t"                                    \
	".balign 32\n\t"                                                        \
	"3: .long 0, 0\n\t"                                                     \
	".quad 1f, 2f - 1f, 4f\n\t"                                             \
	".popsection\n\t"                                                       \
	"leaq 3b(%%rip), %%rax\n\t"                                             \
	"movq %%rax, %[rseq_cs]\n\t"                                            \
	"1: cmpl %[cpu], %[cpu_id]\n\t"                                         \
	"jnz 4f\n\t"
#define MT_RSEQ_ABORT                                                           \
	".pushsection __rseq_failure, \"ax\"\n\t"                               \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                            \
	".long 0x53053053\n\t"                                                  \
	"4: movl $-1, %[rc]\n\t"                                                \
	"jmp 6f\n\t"                                                            \
	".popsection\n\t"

/*
 * The thread's rseq area: glibc's, or, where glibc registers none
 * (GLIBC_TUNABLES=glibc.pthread.rseq=0), one registered for the thread at
 * its first use (mt_rseq.c).  NULL when neither can be had (something
 * else registered an area of its own): such a thread cannot write a
 * per-CPU ring safely, and its events are counted as lost.
 */
struct rseq *mt_rseq_area_slow(void);

/* glibc's area for this thread, or NULL where glibc registered none. */
static inline struct rseq *mt_rseq_glibc_area(void)
{
	if (__builtin_expect(__rseq_size > 0, 1))
		return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	return NULL;
}

static inline struct rseq *mt_rseq_area(void)
{
	struct rseq *rs = mt_rseq_glibc_area();

	return rs ? rs : mt_rseq_area_slow();
}

/*
 * If *p == expect and we run on ctx->cpu, store v: 1.  0 when *p differs
 * (another reservation came first), -1 when we are not on that CPU or
 * were interrupted (the caller looks at its CPU again).  Ordered as the
 * relaxed compare-and-swap it replaces (mt_ring_reserve_core): nothing is
 * published by it; the compare and the store are one step for every
 * thread of this CPU, and no other CPU writes the word.
 */
static inline __attribute__((always_inline)) int
mt_rseq_cas(mt_u64 *p, mt_u64 expect, mt_u64 v, const struct mt_rseq_ctx *ctx)
{
	int rc;

	__asm__ __volatile__(
		MT_RSEQ_BEGIN
		"cmpq %[expect], %[mem]\n\t"
		"jnz 5f\n\t"
		"movq %[v], %[mem]\n\t"
		"2: movl $1, %[rc]\n\t"
		"jmp 6f\n\t"
		"5: movl $0, %[rc]\n\t"
		MT_RSEQ_ABORT
		"6:\n\t"
		: [rc] "=&r"(rc), [mem] "+m"(*p),
		  [rseq_cs] "=m"(ctx->rs->rseq_cs)
		: [cpu_id] "m"(ctx->rs->cpu_id), [cpu] "r"(ctx->cpu),
		  [expect] "r"(expect), [v] "r"(v)
		: "rax", "memory", "cc");
	return rc;
}

/*
 * *p += v if we run on ctx->cpu: 0 and the new value in *out; -1 when we
 * are not on that CPU or were interrupted (nothing added).  A commit: the
 * final store is a release on x86 (stores are not reordered with earlier
 * stores), and the "memory" clobber keeps the compiler from sinking the
 * event's own stores below it; the consumer's acquire load pairs with it
 * (mt_ring_subbuf_committed).
 */
static inline __attribute__((always_inline)) int
mt_rseq_add(mt_u64 *p, mt_u64 v, const struct mt_rseq_ctx *ctx, mt_u64 *out)
{
	mt_u64 tmp;
	int rc;

	__asm__ __volatile__(
		MT_RSEQ_BEGIN
		"movq %[mem], %[tmp]\n\t"
		"addq %[v], %[tmp]\n\t"
		"movq %[tmp], %[mem]\n\t"
		"2: movl $0, %[rc]\n\t"
		MT_RSEQ_ABORT
		"6:\n\t"
		: [rc] "=&r"(rc), [tmp] "=&r"(tmp), [mem] "+m"(*p),
		  [rseq_cs] "=m"(ctx->rs->rseq_cs)
		: [cpu_id] "m"(ctx->rs->cpu_id), [cpu] "r"(ctx->cpu), [v] "r"(v)
		: "rax", "memory", "cc");
	*out = tmp;
	return rc;
}
#endif
#endif

#endif
