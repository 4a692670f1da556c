/*
 * dwarf.c - user-space functions, from DWARF (libdw) and ELF symbols.
 *
 * process("PATH").function("NAME") and .statement("F@FILE:LINE")
 * resolve here (elab_point.c asks): the functions of the file (DWARF
 * subprograms with code, then ELF symbols that DWARF does not
 * describe), and the probe address of each after the prologue (from the
 * line table, as stap places it).  What a probe there reads, its
 * $variables, dwarf_var.c makes into recipes; PLT entries are
 * dwarf_plt.c's.
 */
#include <fnmatch.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dwarf_int.h"

static struct tr_vec mods;              /* struct dwmod *, one per file */

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The module of path, opened once: NULL with *errmsg if it cannot be. */
struct dwmod *tr_dw_open(const char *path, char **errmsg)
{
	struct dwmod *m;

	for (unsigned i = 0; i < mods.n; i++) {
		m = mods.items[i];
		if (!strcmp(m->path, path))
			return m;
	}
	m = tr_alloc(sizeof(*m));
	m->path = tr_strdup(path);
	/* where debug files are looked for, as stap's SYSTEMTAP_DEBUGINFO_PATH
	 * (libdwfl's syntax; unset: the file's directory, .debug, /usr/lib/debug) */
	debuginfo_path = getenv("MARKTAP_DEBUGINFO_PATH");
	m->dwfl = dwfl_begin(&callbacks);
	if (m->dwfl)
		m->mod = dwfl_report_offline(m->dwfl, "", path, -1);
	if (!m->mod) {
		*errmsg = tr_printf("cannot read %s: %s", path, dwfl_errmsg(-1));
		if (m->dwfl)
			dwfl_end(m->dwfl);
		return NULL;
	}
	dwfl_report_end(m->dwfl, NULL, NULL);
	m->dw = dwfl_module_getdwarf(m->mod, &m->bias);   /* NULL: symbols only */
	tr_vec_push(&mods, m);
	return m;
}

/* ---- functions and their probe addresses ---------------------------------- */

/* The declaration's file as the line table names it (stap's pp() too). */
static const char *die_file(Dwarf_Die *die)
{
	return dwarf_decl_file(die);
}

/* Was the unit compiled with optimisation?  Its producer names the -O
 * option (gcc's -grecord-gcc-switches, the default). */
static bool optimized(Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	const char *p = dwarf_formstring(dwarf_attr(cu, DW_AT_producer, &a));

	for (const char *o = p; o && (o = strstr(o, " -O")); o += 3)
		if (o[3] != '0' && (o[3] == ' ' || o[3] == '\0' || o[3] == 's' || o[3] == 'g' ||
				    (o[3] >= '1' && o[3] <= '9') || o[3] == 'f' || o[3] == 'z'))
			return true;
	return false;
}

/* Where stap places a function probe: in optimised code at the entry,
 * where the parameters are where the ABI puts them; else after the
 * prologue, at the line table's prologue_end mark if there is one, else
 * at the function's second line record (the first statement of its
 * body), else at its first address. */
static uint64_t prologue_end(Dwarf_Die *fn, uint64_t lowpc, uint64_t highpc)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;
	uint64_t best = 0;

	if (!dwarf_diecu(fn, &cu, NULL, NULL) || optimized(&cu) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return lowpc;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool pe = false;
		if (!l || dwarf_lineaddr(l, &a) != 0 || a <= lowpc || a >= highpc)
			continue;
		if (dwarf_lineprologueend(l, &pe) == 0 && pe)
			return a;
		if (!best || a < best)
			best = a;
	}
	return best ? best : lowpc;
}

/* The function's entry and the end of the range it is in: low_pc and
 * high_pc, or for code split in parts (f and f.cold: DW_AT_ranges) the
 * entry pc (else the first range's start) and its part's end.  False: no
 * code. */
static bool code_range(Dwarf_Die *die, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	bool entry;

	if (dwarf_lowpc(die, lo) == 0 && dwarf_highpc(die, hi) == 0)
		return true;
	entry = dwarf_entrypc(die, lo) == 0;   /* else the first range's start, gcc's main part */
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (!entry) {
			*lo = start;
			entry = true;
		}
		if (*lo >= start && *lo < end) {
			*hi = end;
			return true;
		}
	}
	return false;
}

struct collect {
	struct dwmod *m;
	const char *glob, *file_glob;
	int line;                       /* "name@file:line": the declaration's, or 0 */
	bool qualified;                 /* the glob names scopes: "ns::Class::f*" */
	bool mangled;                   /* the glob is a linkage name: "_ZN2ns3sumEii" */
	const char *prefix;             /* the namespaces being walked: "ns::" */
	struct tr_vec *out;
};

/* "ns::Shape::" for a function defined out of its class or namespace
 * (DW_AT_specification, through DW_AT_abstract_origin), from the scopes
 * around its declaration; NULL when it has no such declaration. */
static const char *decl_prefix(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die decl = *die, *scopes = NULL;
	struct tr_buf b = {0};
	bool moved = false;
	int n;

	for (int k = 0; k < 4; k++) {
		if (!(dwarf_attr(&decl, DW_AT_abstract_origin, &a) || dwarf_attr(&decl, DW_AT_specification, &a)) ||
		    !dwarf_formref_die(&a, &decl))
			break;
		moved = true;
	}
	if (!moved || (n = dwarf_getscopes_die(&decl, &scopes)) <= 0)
		return NULL;
	tr_buf_puts(&b, "");
	for (int i = n - 1; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name = dwarf_diename(&scopes[i]);
		if (tag == DW_TAG_namespace || is_record(tag))
			tr_buf_printf(&b, "%s::", name ? name : tag == DW_TAG_namespace ? "(anonymous namespace)" : "{...}");
	}
	free(scopes);
	return tr_buf_str(&b);
}

/* Does the qualified name q ("ns::Shape::area") match the glob g of k
 * components as stap matches them: its last k components, each by its
 * own pattern ("*" never spans "::")?  The part matched, or NULL. */
static const char *match_scoped(const char *g, const char *q)
{
	unsigned k = 1, have = 1;
	const char *tail = q, *p;

	for (p = g; (p = strstr(p, "::")); p += 2)
		k++;
	for (p = q; (p = strstr(p, "::")); p += 2)
		have++;
	if (have < k)
		return NULL;
	for (unsigned skip = have - k; skip; skip--)
		tail = strstr(tail, "::") + 2;
	for (const char *gp = g, *qp = tail;;) {
		const char *ge = strstr(gp, "::"), *qe = strstr(qp, "::");
		char *gc = tr_strndup(gp, ge ? (size_t)(ge - gp) : strlen(gp));
		char *qc = tr_strndup(qp, qe ? (size_t)(qe - qp) : strlen(qp));
		if (fnmatch(gc, qc, 0) != 0)
			return NULL;
		if (!ge)
			return tail;
		gp = ge + 2;
		qp = qe + 2;
	}
}

/* The name of a function the collect's glob matches, as pp() shows it
 * (NULL: no match): the DWARF name; for a glob with scopes ("ns::sum"),
 * the name's last scopes matched, as stap; for a linkage name
 * ("_ZN2ns3sumEii"), the DWARF name of the function it names. */
static const char *match_name(struct collect *c, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = die_name(die), *prefix, *l;

	if (!name)
		return NULL;
	if (c->mangled) {
		l = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
		if (!l)
			l = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
		return l && fnmatch(c->glob, l, 0) == 0 ? name : NULL;
	}
	if (!c->qualified)
		return fnmatch(c->glob, name, 0) == 0 ? name : NULL;
	prefix = decl_prefix(die);
	return match_scoped(c->glob, tr_printf("%s%s", prefix ? prefix : c->prefix ? c->prefix : "", name));
}

static bool matches_file(const struct collect *c, Dwarf_Die *die)
{
	const char *file, *base;
	int line = 0;

	if (!c->file_glob)
		return true;
	file = die_file(die);
	base = file && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	if (!file || (fnmatch(c->file_glob, file, 0) && fnmatch(c->file_glob, base, 0)))
		return false;
	return !c->line || (dwarf_decl_line(die, &line) == 0 && line == c->line);
}

struct inline_arg {
	struct collect *c;
	Dwarf_Die *origin;
	const char *name;               /* as pp() shows it */
};

/* One inlined copy of a function: a probe at its entry, its variables
 * from the copy's DIEs, its frame base from the function it is in. */
static int each_inline(Dwarf_Die *inst, void *arg)
{
	struct inline_arg *ia = arg;
	Dwarf_Die *scopes = NULL;
	Dwarf_Addr lo, hi;
	struct tr_dwfunc *f;
	int n, line = 0;
	const char *file = die_file(ia->origin);

	if (dwarf_entrypc(inst, &lo) != 0 && !code_range(inst, &lo, &hi))
		return DWARF_CB_OK;
	n = dwarf_getscopes_die(inst, &scopes);
	f = tr_alloc(sizeof(*f));
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			f->fb = scopes[i];
			break;
		}
	free(scopes);
	f->m = ia->c->m;
	f->name = tr_strdup(ia->name);
	f->die = *inst;
	f->has_die = f->inlined = true;
	f->lowpc = f->entry = lo;
	dwarf_decl_line(ia->origin, &line);
	f->pp_name = file ? tr_printf("%s@%s:%d", f->name, file, line) : f->name;
	tr_vec_push(ia->c->out, f);
	return DWARF_CB_OK;
}

static void push_func(struct collect *c, Dwarf_Die *die, const char *name, Dwarf_Addr lo, Dwarf_Addr hi);

static int each_func(Dwarf_Die *die, void *arg)
{
	struct collect *c = arg;
	const char *name = match_name(c, die);
	Dwarf_Addr lo, hi;

	if (!name)
		return DWARF_CB_OK;
	if (dwarf_func_inline(die) == 1 && matches_file(c, die)) {
		/* an abstract instance: its inlined copies are probed where
		 * they start, as stap does */
		struct inline_arg ia = { c, die, name };
		dwarf_func_inline_instances(die, each_inline, &ia);
	}
	if (!code_range(die, &lo, &hi))
		return DWARF_CB_OK;   /* declarations and inline-only functions have no code */
	if (matches_file(c, die))
		push_func(c, die, name, lo, hi);
	return DWARF_CB_OK;
}

/* A subprogram with code at lo..hi, once. */
static void push_func(struct collect *c, Dwarf_Die *die, const char *name, Dwarf_Addr lo, Dwarf_Addr hi)
{
	struct tr_dwfunc *f;

	for (unsigned i = 0; i < c->out->n; i++)
		if (((struct tr_dwfunc *)c->out->items[i])->lowpc == lo)
			return;
	f = tr_alloc(sizeof(*f));
	f->m = c->m;
	f->name = tr_strdup(name);
	f->die = f->fb = *die;
	f->has_die = true;
	f->lowpc = lo;
	f->entry = prologue_end(die, lo, hi);
	{
		const char *file = die_file(die);
		int line = 0;
		dwarf_decl_line(die, &line);
		f->pp_name = file ? tr_printf("%s@%s:%d", name, file, line) : f->name;
	}
	tr_vec_push(c->out, f);
}

/* The functions of a unit, and of the namespaces in it (C++), whose
 * names get the namespaces' as prefix for a qualified glob. */
static void walk_scope(Dwarf_Die *parent, const char *prefix, struct collect *c)
{
	Dwarf_Die d;

	if (dwarf_child(parent, &d) != 0)
		return;
	do {
		int tag = dwarf_tag(&d);
		if (tag == DW_TAG_subprogram) {
			c->prefix = prefix;
			each_func(&d, c);
		} else if (tag == DW_TAG_namespace) {
			const char *n = dwarf_diename(&d);
			walk_scope(&d, tr_printf("%s%s::", prefix, n ? n : "(anonymous namespace)"), c);
		}
	} while (dwarf_siblingof(&d, &d) == 0);
}

/* The DWARF subprogram whose code starts at addr (a dwfl address), into
 * *fn: true, else false. */
static bool func_at(struct dwmod *m, Dwarf_Addr addr, Dwarf_Die *fn, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = m->dw ? dwfl_module_addrdie(m->mod, addr, &bias) : NULL, *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	bool found = false;

	for (int i = 0; i < n && !found; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram && code_range(&scopes[i], lo, hi) &&
		    *lo == addr - bias) {
			*fn = scopes[i];
			found = true;
		}
	free(scopes);
	return found;
}

/*
 * ELF symbols of functions DWARF did not describe under that name.  A
 * symbol at the start of a DWARF function is another name of it (glibc's
 * public names: "free" is DWARF's __libc_free, "pthread_mutex_init"
 * ___pthread_mutex_init): that function, with its variables.  Others
 * (_start, code without -g) are probed at their first instruction,
 * without variables.  A symbol of the default version ("NAME@@VERSION",
 * in .symtab) is NAME; the older versions kept for old programs
 * ("NAME@VERSION") keep their full name.
 */
static void symbol_funcs(struct collect *c)
{
	int n = dwfl_module_getsymtab(c->m->mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr, lo, hi;
		Dwarf_Die fn;
		const char *name = dwfl_module_getsym_info(c->m->mod, i, &sym, &addr, NULL, NULL, NULL);
		const char *version = name ? strstr(name, "@@") : NULL;
		bool seen = false;
		if (version)
			name = tr_strndup(name, (size_t)(version - name));
		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value || fnmatch(c->glob, name, 0) != 0)
			continue;
		for (unsigned k = 0; k < c->out->n && !seen; k++) {
			struct tr_dwfunc *o = c->out->items[k];
			seen = o->lowpc == sym.st_value || !strcmp(o->name, name);
		}
		if (seen)
			continue;
		if (!c->qualified && !c->mangled && func_at(c->m, addr, &fn, &lo, &hi) && die_name(&fn)) {
			push_func(c, &fn, name, lo, hi);   /* the name written, its variables */
			continue;
		}
		struct tr_dwfunc *f = tr_alloc(sizeof(*f));
		f->m = c->m;
		f->name = f->pp_name = tr_strdup(name);
		f->lowpc = f->entry = sym.st_value;
		tr_vec_push(c->out, f);
	}
}

static int by_name(const void *a, const void *b)
{
	const struct tr_dwfunc *x = *(void *const *)a, *y = *(void *const *)b;

	return strcmp(x->name, y->name);
}

/*
 * Where a trap kills the process.  int3 raises SIGTRAP as a forced
 * signal: when the thread has it blocked, the kernel resets it to its
 * default action and the process dies (with a core).  glibc runs with
 * every signal blocked in a few windows; a probe there is refused:
 *
 * ALWAYS: code that only ever runs inside such a window: glibc's inline
 * signal-mask helpers (internal-sigset.h, internal-signals.h: every
 * inlined copy sits between the blocking system call and the restoring
 * one, in pthread_create, posix_spawn, raise/pthread_kill, timers, aio),
 * the thread and spawn child start code.  A glob leaves them out, a name
 * given in full is an error.
 *
 * SOMETIMES: functions the windows call that also run elsewhere: the
 * system calls posix_spawn's child (system(), popen()) makes before it
 * restores the mask, what a new thread runs before it does, and libc's
 * allocator while it holds its arena lock (the handler allocates: a
 * deadlock, not a kill).  A glob leaves them out; a name given in full is
 * probed (marktap(1) says when a hit there kills).
 *
 * The lists are glibc 2.36's (x86-64); a newer glibc may move code.
 */
static const char *const always_blocked[] = {
	"__spawni_child", "start_thread", "__clone_internal", "__clone_internal_fallback", "__clone3",
	"__clone", "clone", "clone3", "create_thread", "__restore_rt",
};
/* Functions with a window inside (their entry is safe, their inlined
 * copies of other functions may not be). */
static const char *const windowed[] = {
	"__pthread_create_2_1", "__pthread_create_2_0", "pthread_create", "__spawnix", "__spawni",
	"__pthread_kill_implementation", "__pthread_kill_internal", "__timer_start_helper_thread",
	"timer_helper_thread", "__aio_create_helper_thread", "__aio_enqueue_request",
	"helper_thread", "__mq_notify_fork_subprocess", "init_mq_netlink", "__abort", "abort",
	"__libc_system", "do_system", "_IO_new_proc_open", "spawn_process", "__fork", "_Fork",
};
static const char *const sometimes_blocked[] = {
	/* posix_spawn's child, before it restores the caller's mask */
	"__libc_sigaction", "__sigaction", "sigaction", "__sigismember", "__sigaddset", "__sigdelset",
	"sigismember", "__close_nocancel", "__close_nocancel_nostatus", "__open64_nocancel",
	"__open_nocancel", "__dup2", "dup2", "__chdir", "chdir", "__fchdir", "fchdir", "__setsid",
	"setsid", "__setpgid", "setpgid", "__sched_setparam", "__sched_setscheduler",
	"__sched_getparam", "__sched_getscheduler", "__close_range", "close_range",
	"__closefrom_fallback", "__getdents64", "__spawnix", "__spawni", "__getpid",
	"__setresuid", "__setresgid", "__setuid", "__setgid", "__sigprocmask", "sigprocmask",
	"__pthread_sigmask", "pthread_sigmask", "__fcntl64_nocancel_adjusted", "__fcntl64_nocancel",
	/* a new thread before it restores its mask, its parent around clone */
	"__ctype_init", "__pthread_initialize_minimal", "_setjmp", "__sigsetjmp", "__sigjmp_save",
	"__lll_lock_wait_private", "__lll_lock_wake_private", "__lll_lock_wait", "__lll_lock_wake",
	"__nptl_setxid_sighandler", "__pthread_tpp_change_priority", "__sched_setaffinity_new",
	"sched_setaffinity", "__rseq_register_current_thread",
	/* a thread's last steps (start_thread blocks every signal) */
	"__getpagesize", "getpagesize", "__nptl_free_tcb", "__nptl_deallocate_stack",
	"__nptl_free_stacks", "__nptl_stack_list_del", "__nptl_stack_list_add",
	/* called by programs with every signal blocked (dash blocks them
	 * around vfork, and its child runs blocked until it execs) */
	"__libc_vfork", "__vfork", "vfork",
	/* libc's allocator, under its lock */
	"__brk", "__brk_call", "brk", "__sbrk", "sbrk", "__mmap", "mmap", "mmap64", "__munmap",
	"munmap", "__mprotect", "mprotect", "__madvise", "madvise", "__mremap", "mremap",
};

static bool in_list(const char *name, const char *const *list, size_t n)
{
	if (!strncmp(name, "__GI_", 5))   /* glibc's hidden alias, the name a symbol may give */
		name += 5;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

static bool is_libc(const struct dwmod *m)
{
	const char *base = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;

	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}

/* The declaration's file, without its directories. */
static const char *decl_base(const struct tr_dwfunc *f)
{
	const char *file = f->has_die ? die_file((Dwarf_Die *)&f->die) : NULL;

	return file && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
}

/* Why f of libc may never be probed (ALWAYS above), or NULL. */
static const char *always_unsafe(const struct dwmod *m, const struct tr_dwfunc *f)
{
	const char *base;

	if (!is_libc(m))
		return NULL;
	base = decl_base(f);
	if (in_list(f->name, always_blocked, sizeof(always_blocked) / sizeof(always_blocked[0])) ||
	    (base && (!strcmp(base, "internal-sigset.h") || !strcmp(base, "internal-signals.h"))))
		return "runs with every signal blocked";
	if (f->inlined) {
		/* a copy inlined into one of those, or into a function with a
		 * window (advise_stack_range in start_thread, which runs
		 * blocked as the thread exits; report_thread_creation in
		 * pthread_create, between the block and clone) */
		const char *outer = die_name((Dwarf_Die *)&f->fb);
		if (outer && (in_list(outer, always_blocked, sizeof(always_blocked) / sizeof(always_blocked[0])) ||
			      in_list(outer, windowed, sizeof(windowed) / sizeof(windowed[0]))))
			return "is inlined where every signal is blocked";
	}
	return NULL;
}

/* Left out of a glob (SOMETIMES above, and ALWAYS). */
static bool glob_unsafe(const struct dwmod *m, const struct tr_dwfunc *f)
{
	const char *file;

	if (!is_libc(m))
		return false;
	if (always_unsafe(m, f) ||
	    in_list(f->name, sometimes_blocked, sizeof(sometimes_blocked) / sizeof(sometimes_blocked[0])))
		return true;
	/* the allocator's internals (declared in malloc/), not its entries */
	file = f->has_die ? die_file((Dwarf_Die *)&f->die) : NULL;
	return file && strstr(file, "malloc/") && strncmp(f->name, "__libc_", 7) &&
	       strcmp(f->name, "malloc") && strcmp(f->name, "free") && strcmp(f->name, "calloc") &&
	       strcmp(f->name, "realloc");
}

int tr_dw_functions(const char *path, const char *spec, struct tr_vec *out, char **errmsg)
{
	struct dwmod *m = tr_dw_open(path, errmsg);
	struct collect c = { .m = m, .out = out };
	const char *at = strchr(spec, '@');

	if (!m)
		return -1;
	if (at) {   /* "name@file[:line]": the file's basename or full path (glob) */
		const char *colon = strchr(at + 1, ':');
		c.glob = tr_strndup(spec, (size_t)(at - spec));
		c.file_glob = tr_strndup(at + 1, strcspn(at + 1, ":"));
		c.line = colon ? atoi(colon + 1) : 0;
	} else {
		c.glob = spec;
	}
	if (m->dw) {
		Dwarf_Die *cu = NULL;
		Dwarf_Addr bias;
		c.qualified = strstr(c.glob, "::") != NULL;
		c.mangled = !strncmp(c.glob, "_Z", 2);
		while ((cu = dwfl_module_nextcu(m->mod, cu, &bias)))
			walk_scope(cu, "", &c);
	}
	if (!c.file_glob)
		symbol_funcs(&c);
	{
		bool glob = strpbrk(c.glob, "*?[") != NULL;
		const char *why = NULL;
		unsigned k = 0;
		for (unsigned i = 0; i < out->n; i++) {
			struct tr_dwfunc *f = out->items[i];
			const char *w = always_unsafe(m, f);
			if (glob ? glob_unsafe(m, f) : w != NULL) {
				why = why ? why : w;
				continue;
			}
			if (!glob && glob_unsafe(m, f))
				tr_warn(NULL, "function \"%s\" of %s may run with every signal blocked (posix_spawn's "
					"child: system(), popen(); a new or exiting thread; libc's allocator): a hit "
					"there kills that process (or deadlocks in the allocator)", f->name, path);
			out->items[k++] = f;
		}
		out->n = k;
		if (!k && why && !glob) {
			/* a name given in full that only runs where a trap kills */
			*errmsg = tr_printf("function \"%s\" of %s %s: the kernel kills a process that "
					    "traps with SIGTRAP blocked; not probed", spec, path, why);
			return -1;
		}
	}
	qsort(out->items, out->n, sizeof(void *), by_name);
	return (int)out->n;
}

/* The first address of line `line` of a file matching file_glob inside f,
 * from its unit's line table (a statement's start); 0 if none. */
static uint64_t line_addr(const struct tr_dwfunc *f, const char *file_glob, int line)
{
	Dwarf_Die cu, fn = f->die;
	Dwarf_Lines *lines;
	Dwarf_Addr lo, hi;
	size_t n;
	uint64_t best = 0;

	if (!dwarf_diecu(&fn, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n) != 0 ||
	    !code_range(&fn, &lo, &hi))
		return 0;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int ln;
		bool stmt = false;
		const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		const char *base = file && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		if (!file || dwarf_lineno(l, &ln) != 0 || ln != line || dwarf_lineaddr(l, &a) != 0 ||
		    dwarf_haspc(&fn, a) != 1 || (dwarf_linebeginstatement(l, &stmt) == 0 && !stmt) ||
		    (fnmatch(file_glob, file, 0) && fnmatch(file_glob, base, 0)))
			continue;
		if (!best || a < best)
			best = a;
	}
	return best;
}

int tr_dw_statements(const char *path, const char *spec, struct tr_vec *out, char **errmsg)
{
	const char *at = strchr(spec, '@'), *colon = at ? strchr(at, ':') : NULL;
	struct tr_vec funcs = {0};
	const char *file_glob;
	int line, n;

	if (!at || !colon || (line = atoi(colon + 1)) <= 0) {
		*errmsg = tr_printf("statement \"%s\": FUNCTION@FILE:LINE expected", spec);
		return -1;
	}
	file_glob = tr_strndup(at + 1, (size_t)(colon - at - 1));
	n = tr_dw_functions(path, tr_strndup(spec, (size_t)(colon - spec)), &funcs, errmsg);
	if (n < 0)
		return -1;
	for (unsigned i = 0; i < funcs.n; i++) {
		struct tr_dwfunc *f = funcs.items[i], *st;
		uint64_t a = f->has_die ? line_addr(f, file_glob, line) : 0;
		if (!a)
			continue;
		st = tr_alloc(sizeof(*st));
		*st = *f;
		st->entry = a;
		{
			Dwarf_Die fd = f->die;   /* an inlined copy: its origin's file */
			const char *file = die_file(&fd);
			st->pp_name = tr_printf("%s@%s:%d", f->name, file ? file : "??", line);
		}
		tr_vec_push(out, st);
	}
	free(funcs.items);
	return (int)out->n;
}

const char *tr_dw_similar(const char *path)
{
	struct tr_vec all = {0};
	struct tr_buf b = {0};
	char *err = NULL;

	if (tr_dw_functions(path, "*", &all, &err) <= 0)
		return NULL;
	for (unsigned i = 0; i < all.n && i < 5; i++)
		tr_buf_printf(&b, "%s%s", i ? ", " : "", ((struct tr_dwfunc *)all.items[i])->name);
	return tr_buf_str(&b);
}

const char *tr_dw_pp_name(const struct tr_dwfunc *f) { return f->pp_name; }
bool tr_dw_inlined(const struct tr_dwfunc *f) { return f->inlined; }
const char *tr_dw_name(const struct tr_dwfunc *f) { return f->name; }
uint64_t tr_dw_addr(const struct tr_dwfunc *f) { return f->entry; }
