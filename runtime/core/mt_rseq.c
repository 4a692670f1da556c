/*
 * mt_rseq.c - this thread's restartable-sequences area, registered on
 * first use when the C library has not registered one (mt_rseq.h's slow
 * path).  User space only: marktap.ko's writers need no rseq.
 */
#include "mt_ring.h"

#ifdef MT_HAVE_RSEQ
#include <sys/syscall.h>
#include <unistd.h>

static __thread struct {
	struct rseq area __attribute__((aligned(32)));
	int state;   /* 0: not tried, 1: registered, -1: refused */
} own_rseq __attribute__((tls_model("initial-exec")));

struct rseq *mt_rseq_area_slow(void)
{
	if (own_rseq.state == 0) {
		own_rseq.area.cpu_id = (u32)RSEQ_CPU_ID_UNINITIALIZED;
		own_rseq.state = syscall(SYS_rseq, &own_rseq.area, (u32)sizeof(own_rseq.area),
					 0, MT_RSEQ_SIG) == 0 ? 1 : -1;
	}
	return own_rseq.state > 0 ? &own_rseq.area : NULL;
}
#endif
