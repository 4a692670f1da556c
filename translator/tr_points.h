/*
 * tr_points.h - resolved probe points, what pass 2 makes of a script's
 * "probe P", and the places they come from: the marker catalogue
 * (markers.c), the kernel's tracepoints (ktrace.c), a stored trace's
 * event classes (trace.c), kernel functions through BTF (btf.c) and
 * user-space functions through DWARF (dwarf.c, dwarf_plt.c, dwarf_var.c).
 */
#ifndef TR_POINTS_H
#define TR_POINTS_H

#include "tr_ast.h"
#include "mt_manifest.h"

/* After P_MARK_KERNEL: points marktap elaborates as stap does but may not
 * run (tr_run_check says why): timer.profile, procfs("F").read/.write, and
 * process.begin/.end (run for -c's and -x's process), kernel.trace("TP"),
 * perf.type(T).config(C)... */
enum tr_pkind {
	P_BEGIN, P_END, P_ERROR, P_NEVER, P_TIMER, P_MARK_USER, P_MARK_KERNEL,
	P_PROFILE, P_PROCFS, P_PROC_BEGIN, P_PROC_END, P_KTRACE, P_PERF,
};

/* ktrace.c: a kernel tracepoint, as the kernel's BTF, its trace headers
 * and tracefs know it. */
struct tr_ktrace {
	const char *system, *name;      /* "sched", "sched_switch"; system NULL: unknown */
	struct tr_vec fields, ctypes;   /* its parameters, their C types (headers) */
	bool in_btf;                    /* BTF has its prototype: it runs (btf.c) */
	/* not in BTF: why it cannot run; for an event that is no tracepoint
	 * (syscalls:sys_enter_open, tracefs only) why it cannot be probed */
	const char *why;
	bool not_tracepoint;
};
/* Every tracepoint known, sorted by system and name: 0, or -1 with
 * *errmsg.  *out is the cache's own vector: read it, never free it. */
int tr_ktrace_points(struct tr_session *s, struct tr_vec *out, char **errmsg);
/* Why kernel.trace(pattern) that matched no tracepoint names no
 * tracepoint (syscalls:*), or NULL */
const char *tr_ktrace_not_tracepoint(const char *pattern);

struct tr_resolved {
	enum tr_pkind kind;
	int64_t priority;               /* begin(N) end(N) error(N) */
	bool oneshot;                   /* "oneshot": a begin probe that also exits */
	const char *pp;                 /* canonical, e.g. process("/bin/x").mark("m") */
	const char *others_unavailable; /* why the variables its alias does not
					   set have no value (elab_bind.c) */
	const char *path;               /* P_MARK_USER */
	const char *marker, *format;    /* P_MARK_* */
	const char *provider;           /* an SDT probe's provider; NULL: a marker */
	int64_t interval_ns, randomize_ns; /* P_TIMER */
	/* P_PROCFS: the file (under stap's /proc/systemtap/MODULE), .write
	 * or .read, .umask, .maxsize; P_PROC_*: .thread, the process's pid
	 * (0: any; path, when set, names its program) */
	const char *procfs_file;
	bool procfs_write, thread;
	int64_t procfs_umask, procfs_maxsize, proc_pid;
	const struct tr_ktrace *ktrace; /* P_KTRACE, netfilter (its parameters) */
	int64_t perf_type, perf_config, perf_sample;   /* P_PERF (path: .process) */
	const char *perf_counter;       /* .counter("C"), read with @perf("C") */
	struct tr_vec fields;           /* const char * names of the marker's fields */
	struct tr_vec field_types;      /* (void *)(intptr_t) enum tr_type */
	unsigned ctx_fields;            /* --trace: the last ctx_fields of fields are
					   the event context's ($ctx_NAME), not $$parms */
	struct tr_expr *cond;           /* probe point "if (cond)" */
	const char *alias_pp;           /* the outermost alias it came through */
	/* process("P").function("F")[.return] (dwarf.c): a P_MARK_USER with
	 * provider TR_FUNC_PROVIDER whose fields are the $variables the
	 * handler reads, each computed in the process by its recipe */
	struct tr_dwfunc *dw;           /* NULL in a -p4 module read back */
	bool dw_func, dw_return;
	uint64_t dw_addr;
	const char *dw_cfa;             /* .return: the call frame address's recipe */
	struct tr_vec dw_recipes;       /* const char *, per field */
	struct tr_vec dw_at_return;     /* (void *)1: evaluated at the return */
	/* process("P").plt("NAME"): a function probe (dw NULL) at the PLT
	 * entry of the function named here ($$name) */
	const char *plt_name;
	/* kernel.function("F"), kprobe.function("F"), module("M").function("F")
	 * (btf.c): a P_MARK_KERNEL whose marker is the module's binding
	 * "kprobe:[M:]F[:return[:N]]", fields arg1..arg6 (and return) */
	const struct tr_kfunc *kfunc;
	bool kfunc_entry;               /* fired at the call too, for @entry(expr) */
	/* netfilter.hook("H").pf("PF")[.priority("N")] (elab_point.c): a
	 * P_MARK_KERNEL bound to "netfilter:HOOK:PF:PRIORITY" (kmod's
	 * mt_netfilter.c), its fields those of ktrace */
	bool netfilter;
	/* kernel.data(A|"S")[.length(N)].write|.rw (kdata.c): a P_MARK_KERNEL
	 * bound to "hwbp:ACCESS:LEN:TARGET" (kmod's mt_hwbp.c), no fields;
	 * listed_pp the point as -l prints it (.length only where written) */
	bool kdata;
	const char *listed_pp;
};

/* ---- where points come from ------------------------------------------- */

/* Marker catalogue (kernel markers.tsv, ELF notes). */
struct tr_marker {
	const char *name, *format, *where; /* where: "kernel" or ELF path */
	const char *provider;           /* an SDT probe's (sys/sdt.h); NULL: ours */
};
int tr_markers_kernel(struct tr_session *s, struct tr_vec *out);
int tr_markers_elf(const char *path, struct tr_vec *out, char **errmsg);
/* The <sys/sdt.h> probes of the file (providers other than marktap), one
 * per (provider, name), format "arg1 %ld arg2 %ld ..." of their operands. */
int tr_markers_sdt(const char *path, struct tr_vec *out, char **errmsg);
/* trace.c: the event classes of the trace of --trace as markers (struct
 * tr_marker *), for trace.event("NAME"). */
int tr_trace_markers(struct tr_session *s, struct tr_vec *out, char **errmsg);
/* trace.c: whether an event context field NAME (beyond pid, tid and
 * procname: ip, pthread_id, perf counters...) is in the trace of --trace,
 * and a string; *names gets "$ctx_NAME" of every one there is. */
bool tr_trace_context_field(struct tr_session *s, const char *name, bool *is_string,
			    struct tr_vec *names);

/* btf.c: kernel functions from the kernel's BTF (libbpf). */
struct tr_kfunc;
/* The points comps names (kernel.function...), pushed to out as struct
 * tr_resolved *: their number, 0 if comps is no function point, -1
 * after a semantic error at tok. */
int tr_btf_resolve(struct tr_session *s, const struct tr_vec *comps, const struct tr_token *tok,
		   struct tr_vec *out);
/* $var... of a kernel function probe, @cast(p, "T")->m anywhere: 0, or -1 after an error */
int tr_btf_target(struct tr_session *s, struct tr_resolved *r, struct tr_expr *e, bool report);
int tr_btf_cast(struct tr_session *s, struct tr_expr *e, bool report);
/* p->m of a local p that holds a typed kernel pointer (stap's autocast):
 * through the struct type of btf, as @cast(p, "T")->m */
int tr_btf_autocast(struct tr_expr *e, const void *btf, unsigned type, bool report);
/* p reads @entry(expr) at its .return points: they fire at the call too */
void tr_btf_entry_points(struct tr_probe *p);
const char *tr_btf_vars(const struct tr_resolved *r);   /* -L: " $file:struct file*" */
/* Guru mode's $param/$return stores: NULL where they may be written (a
 * kernel.function probe's registers), else why not. */
const char *tr_btf_store_refusal(const struct tr_resolved *r);
const char *tr_btf_param_name(const struct tr_resolved *r, unsigned i);   /* NULL past the last */
/* int_arg(N)... returnval() with a literal N in a kernel function's
 * handler: e made the field it reads (true), else false. */
bool tr_btf_register_call(struct tr_resolved *r, struct tr_expr *e);
/* kernel.trace: the tracepoints vmlinux's BTF has a prototype for
 * (btf_trace_NAME), their names pushed to names: 0, or -1 and *why (no
 * BTF).  The modules' tracepoints whose name matches glob, loaded or
 * not (their BTF), each name pushed to names and its module to modules:
 * how many.  The point of tracepoint name (of module, NULL: vmlinux's)
 * as pp (a P_MARK_KERNEL bound to "tracepoint:[MODULE:]NAME:NARGS",
 * fields arg1..), or NULL: not in BTF. */
int tr_btf_tracepoints(struct tr_session *s, struct tr_vec *names, const char **why);
int tr_btf_module_tracepoints(struct tr_session *s, const char *glob, struct tr_vec *names,
			      struct tr_vec *modules);
struct tr_resolved *tr_btf_tracepoint(struct tr_session *s, const char *module, const char *name,
				      const char *pp);

/* ksrc.c: the kernel's functions by source file, from the map of its
 * sources (marktap-ksrc).  Keeps those of names (sorted) defined in a
 * file FILE_GLOB matches (for a glob, not in the init or exit text): 0,
 * or -1 and *why when there is no map. */
int tr_ksrc_filter(const struct tr_session *s, const char *file_glob, bool glob, struct tr_vec *names,
		   const char **why);
const char *tr_ksrc_where(const struct tr_session *s, const char *function);   /* "f.c:N, ...", or NULL */
const char *tr_ksrc_path(const struct tr_session *s);
/* Is the kernel symbol name (of module, or the kernel's) in the symbol
 * table of the kernel probed (/proc/kallsyms, System.map): 1 yes, 0 no,
 * -1 cannot tell. */
int tr_btf_kernel_symbol(struct tr_session *s, const char *module, const char *name);

/* kdata.c: kernel.data(...), stap's hardware watchpoints.  The point comps
 * names, pushed to out: 1, 0 if comps is no kernel.data point, -1 after a
 * semantic error at tok.  tr_kdata_check: after pruning, the watchpoints
 * the script keeps fit the debug registers: 0, or -1 after an error. */
int tr_kdata_resolve(struct tr_session *s, const struct tr_vec *comps, const struct tr_token *tok,
		     struct tr_vec *out);
int tr_kdata_check(struct tr_session *s);

/* libpath.c: which objects marktap probes, and where a name is found. */
/* Why path is no object marktap can probe here (not ELF, another class,
 * byte order or machine: "a 32-bit ELF file"), or NULL. */
const char *tr_libpath_foreign(const char *path);
/* The objects of this machine named by pattern (a file name or glob, no
 * '/'), where ld.so finds them for a shared object's name ("libc.so.*":
 * the first directory holding a name wins), in PATH for a program's
 * plain name; their real paths pushed to found, their number.  Objects
 * passed over are described in left_out ("P is a 32-bit ELF file; ...")
 * when it is not NULL.  tr_libpath_where says where that looks ("where
 * the dynamic linker looks", "in PATH"), NULL for a pattern looked up
 * nowhere (a glob without ".so": "*" would name every library). */
unsigned tr_libpath_find(const char *pattern, struct tr_vec *found, struct tr_buf *left_out);
const char *tr_libpath_where(const char *pattern);
/* A library named without a directory (.library("libc.so.6")): the
 * object ld.so loads for it, or name when it finds none. */
const char *tr_libpath_library(const char *name);
/* The shared objects program exe loads (its DT_NEEDED, and theirs, found
 * as ld.so finds them) whose file names match pattern (no '/'), pushed
 * to found: stap's process.library("PATTERN") of a program; their number. */
unsigned tr_libpath_needed(const char *exe, const char *pattern, struct tr_vec *found);

/* dwarf.c, dwarf_plt.c, dwarf_var.c: functions of user-space ELF files,
 * their PLT entries, their variables (libdw). */
#define TR_FUNC_PROVIDER MT_FUNC_PROVIDER   /* runtime/core/mt_manifest.h */
struct tr_dwfunc;
/* The functions of path matching spec ("glob" or "glob@file"), sorted by
 * name, pushed to out: their number, or -1 with *errmsg. */
int tr_dw_functions(const char *path, const char *spec, struct tr_vec *out, char **errmsg);
const char *tr_dw_similar(const char *path);
/* process("P").plt("GLOB"): P's PLT entries whose function's name matches
 * GLOB, in table order, pushed to out: their number, or -1 with *errmsg
 * (dwarf_plt.c). */
struct tr_pltent {
	const char *name;               /* "puts"; "" for an ifunc's slot, as stap */
	uint64_t addr;                  /* file address of the entry's jmp */
};
int tr_dw_plt(const char *path, const char *glob, struct tr_vec *out, char **errmsg);
const char *tr_dw_plt_similar(const char *path);
/* .statement("FUNC@FILE:LINE"): the line's first address in each function
 * that has it, as functions whose probe address is there. */
int tr_dw_statements(const char *path, const char *spec, struct tr_vec *out, char **errmsg);
const char *tr_dw_name(const struct tr_dwfunc *f);
const char *tr_dw_pp_name(const struct tr_dwfunc *f);   /* "f@file.c:12" */
bool tr_dw_inlined(const struct tr_dwfunc *f);          /* an inlined copy (no .return) */
uint64_t tr_dw_addr(const struct tr_dwfunc *f);         /* after the prologue */
/* dwarf_var.c: what a probe at f reads. */
const char *tr_dw_cfa(const struct tr_dwfunc *f);       /* recipe, or NULL */
/* The ELF entry point, or a function its CFI says has no caller: no .return. */
bool tr_dw_entered_without_call(const struct tr_dwfunc *f);
const char *tr_dw_vars(const struct tr_dwfunc *f);      /* -L: " $a:int $p:struct s*" */
/* The recipe of $var... at f (runtime/script/sdt.c evaluates it), or NULL
 * after a semantic error at e. */
const char *tr_dw_target(const struct tr_dwfunc *f, bool ret, const struct tr_expr *e, bool report,
			 enum tr_type *type, bool *at_return);
/* Guru mode's $var... = v: where to write it (ufunc.c's store spec), or
 * NULL after a semantic error at e. */
const char *tr_dw_store(const struct tr_dwfunc *f, bool ret, const struct tr_expr *e);

#endif
