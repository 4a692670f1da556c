/*
 * ufunc_int.h - what the files of function probes share (ufunc.h says
 * what they do).  Each calls only those listed before it:
 *
 *   ufunc_recipe.c  the wanted functions and the recipes of their values,
 *                   read on a hit's registers; guru mode's writes
 *   ufunc_site.c    the sites: the table the traps search, the code
 *                   written for them (out-of-line copies, jump stubs)
 *   ufunc_return.c  .return: the shadow stacks of hooked calls, and the
 *                   trampolines their returns go through
 *   ufunc_trap.c    the ways in from the program (SIGTRAP, a jump stub,
 *                   a return stub) and the handlers run there
 *   ufunc.c         arming and disarming, as sdt.c asks
 */
#ifndef MT_SCRIPT_UFUNC_INT_H
#define MT_SCRIPT_UFUNC_INT_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>
#include "mt_event.h"
#include "mt_lib.h"
#include "mt_sdt.h"
#include "probe.h"
#include "probe.h"
#include "text.h"
#include "ufunc.h"

/* The host's callbacks, given at arming (ufunc_object), kept in
 * ufunc_recipe.c with the rest the host gives (the wanted functions). */
extern probe_hit_fn ufunc_hit;
extern probe_error_fn ufunc_error;
#define report(...) probe_report(ufunc_error, __VA_ARGS__)

/*
 * System calls of the trap path, made here rather than through libc: a
 * script may probe libc's own functions (process("libc.so.6").function("*")),
 * and a trap inside pwrite() called by the trap handler that steps over
 * pwrite() would never end (mt_syscall6: text.h).
 */
#define SYS3(nr, a, b, c) mt_syscall6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS6(nr, a, b, c, d, e, f) \
	mt_syscall6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* ---- ufunc_recipe.c ---------------------------------------------------- */

#define RECIPE_OPS 24

struct rop {
	char op;                /* r a k + m t, or an operator (translator/dwarf.c) */
	unsigned char size;
	unsigned char is_signed;
	int64_t v;
};

struct recipe {
	unsigned n;
	struct rop op[RECIPE_OPS];
};

/* "Sname=recipe,name=?,name=!{...}": $$parms, formatted here. */
struct parm {
	char name[32];
	char literal[16];       /* "?" or "{...}": printed as it is */
	struct recipe r;
};

struct field {
	char kind;              /* 'l' long, 's' string ($$parms); in a .return probe
				 * read at the return: 'L' long, 'R' string */
	struct recipe r;
	struct parm *parms;
	unsigned nparms;
};

#define SAVED_MAX 8             /* values of a .return probe saved at the call */
#define SAVED_STR 256           /* strings of a .return probe saved at the call */

struct want {
	char *name;             /* "probe_N": the binding's marker name */
	uintptr_t addr;         /* link-time */
	int ret;
	struct recipe cfa;
	int has_cfa;
	dev_t dev;
	ino_t ino;
	unsigned nf;
	struct field f[MT_FIELDS_MAX];
};

/* The manifest's functions (ufunc_want, ufunc_field). */
extern struct want **ufunc_wants;
extern unsigned ufunc_nwants;

/* Memory of the process that may not be mapped: no fault, an error. */
int ufunc_read_mem(uintptr_t addr, void *dst, size_t n);

struct usite;

/* A call hooked by a .return probe (the shadow stack's entries). */
struct ret_frame {
	uintptr_t ret;                  /* where the function returns to: the caller, or
					 * the trampoline of another probe of the call */
	uintptr_t real;                 /* the caller (the end of such a chain) */
	uintptr_t hook;                 /* what the slot holds instead: a trampoline */
	uintptr_t slot;                 /* where its return address was */
	struct usite *s;
	uint64_t saved[SAVED_MAX];      /* its 'l' values, read at the call */
	char strs[SAVED_STR];           /* its 's' values, one after the other */
};

#if defined(__x86_64__)
/* The recipe on the registers of uc: 0 and *out, or -1 with *fault the
 * address that could not be read. */
int recipe_eval(const struct recipe *r, const ucontext_t *uc, uintptr_t bias, uint64_t *out, uint64_t *fault);

enum ufunc_phase { PH_ENTRY, PH_CALL, PH_RETURN };
/* The fields of a hit.  At an entry probe: all ('l' 's').  At the call of
 * a .return probe: the 'l' and 's' ones, into rf.  At its return: those
 * from rf, and the 'L' and 'R' ones read now.  0, or -1 after a report. */
int ufunc_fetch(const struct usite *s, const ucontext_t *uc, enum ufunc_phase ph, struct ret_frame *rf,
		struct mt_args *a, char *strbuf, size_t strcap);

/* The hit whose handler runs on this thread: the registers it resumes
 * with (a trap's context, or a copy that the jump routes put back) and
 * the object's bias, for ufunc_store.  Nests as handlers do. */
struct store_hit {
	ucontext_t *uc;
	uintptr_t bias;
	struct store_hit *outer;
};
void ufunc_store_enter(struct store_hit *h, ucontext_t *uc, uintptr_t bias);
void ufunc_store_leave(struct store_hit *h);
#endif

/* ---- ufunc_site.c ------------------------------------------------------ */

struct usite {
	uintptr_t addr;                 /* the instruction: a jump, or its first byte int3, while armed */
	uintptr_t bias;
	dev_t dev;
	ino_t ino;
	unsigned char orig;             /* the byte int3 replaced */
	int armed;
	int dead;                       /* its object was unloaded */
	unsigned steppers;              /* threads stepping over the instruction */
	uintptr_t xol;                  /* its copy and a jump back, or 0: stepped in place */
	uintptr_t stub;                 /* jump sites: the stub the jump goes to; 0: int3 */
	unsigned char orig5[5];         /* jump sites: the bytes the jump replaced */
	unsigned char jlen;             /* jump sites: 5, or 2 through the padding */
	uintptr_t pad;                  /* that padding's nop (its 5 bytes: a jump) */
	unsigned char orig_pad[5];
	const struct want *w;
	struct mt_marker marker;
	struct mt_marker_rt rt;
};

/* The sites, sorted by address.  A scan (one thread, under sdt.c's lock)
 * publishes a new table with a release store; traps on other threads may
 * still read the old one, which is never freed (a few pointers per scan
 * that arms something). */
struct site_table {
	size_t n;
	struct usite *v[];
};

const struct site_table *usite_table(void);
/* The first site at addr or above in t. */
size_t usite_first_at(const struct site_table *t, uintptr_t addr);
/* A page of its own, read-write (the caller makes it executable), within
 * a jump's reach of addr (1 GiB), or 0. */
uintptr_t usite_page_near(uintptr_t addr);
/* One byte of our own code (an int3, the byte it replaced), with no
 * change of page protection (text.c): one system call, safe in a signal
 * handler. */
int usite_poke(uintptr_t addr, unsigned char byte);
/* A site of w in this object, attached and in the table, not patched
 * yet (ufunc_object patches them all at the end); NULL when not wanted
 * or not armable (reported).  entry: where jump stubs go (ufunc_trap.c's
 * mt_ufunc_entry), 0 for traps only. */
struct usite *usite_new(struct dl_phdr_info *info, const struct stat *st, const struct want *w,
			probe_attach_fn attach, uintptr_t entry);
#if defined(__x86_64__)
/* The jump to s's stub, in place of the instruction: 0 or -1. */
int usite_write_jump(struct usite *s);
#endif

#if defined(__x86_64__)
/* ---- ufunc_return.c ---------------------------------------------------- */

/* The int3 trampoline of threads without return stubs. */
extern const char mt_ufunc_tramp[];

/* Before any .return probe is armed (not in a trap: mmap, dlsym): the
 * pool of return stubs, calling entry (ufunc_trap.c's mt_ufunc_rtramp),
 * or trapping when trap is set. */
void ret_init(uintptr_t entry, int trap);
/* Before any function probe is armed: the key of the threads' shadow
 * stacks (freed at their exit). */
void ret_key_init(void);
/* A .return site's hit: its return address is swapped for a trampoline. */
void ret_hook(struct usite *s, const ucontext_t *uc);
/* The return handlers of f (popped), on the caller's registers in uc. */
void ret_run(struct ret_frame *f, ucontext_t *uc);
/* A return into the int3 trampoline: the return handlers run, and uc
 * goes on at the saved address. */
void ret_on_tramp(ucontext_t *uc);
/* Return stub k, its call's slot at slot: *go_on is where to go on, the
 * caller's address (written before anything else, for unwinders), then
 * the entry's own; 1 with f its entry, popped, whose handlers are to
 * run, or 0 when the entry is not this thread's or gone (counted).
 * Never returns when the slot is not stub k's (a stack switched). */
int ret_take(size_t k, uintptr_t slot, struct ret_frame *f, uint64_t *go_on);
int ret_is_stub(uintptr_t a);
size_t ret_stub_index(uintptr_t a);
/* ufunc_stop: the calls whose return probes did not fire, said once. */
void ret_report_lost(void);

/* ---- ufunc_trap.c ------------------------------------------------------ */

/* The entries of the jump routes: a jump stub's, a return stub's. */
extern const char mt_ufunc_entry[], mt_ufunc_rtramp[];
/* The jump routes can run here (MARKTAP_UFUNC_JUMP is not 0, and the
 * extended state is saveable with xsave). */
int trap_jumps(void);
/* errno's place in the threads' TLS, measured before anything is armed. */
void trap_measure_errno(void);
#endif

#endif
