/*
 * sdt.h - handlers at the <sys/sdt.h> probes of a program that does not use
 * libmarktap (marktap -c preloads libmarktap into it).
 *
 * Each probe site is a one-byte nop; sdt.c replaces the nops of the probes
 * the script wants with int3 and runs the handlers from the SIGTRAP that
 * follows, with the arguments decoded from the note's operands (registers
 * and memory of the interrupted code).  The trap leaves the program counter
 * after the int3, where the nop ended: the program goes on as if nothing
 * happened.  Semaphores (probes guarded by PROVIDER_NAME_ENABLED()) are
 * raised while armed.
 */
#ifndef MT_SCRIPT_SDT_H
#define MT_SCRIPT_SDT_H

#include <sys/types.h>
#include "mt_event.h"
#include "mt_lib.h"
#include "probe.h"

/* Arm the wanted probes of every loaded object not read before (call it
 * again to find the libraries dlopen'ed since, and forget those closed);
 * the number armed by this call. */
int sdt_start(probe_attach_fn attach, probe_hit_fn hit, probe_error_fn error);
/* Put the nops back and lower the semaphores; traps still on their way
 * are recognised and ignored. */
void sdt_stop(void);

#endif
