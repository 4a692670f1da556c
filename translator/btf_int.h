/*
 * btf_int.h - between the files of kernel functions and tracepoints
 * through the kernel's BTF: btf.c (BTF loaded, probe points), btf_var.c
 * (target variables), btf_tp.c (tracepoints).  Nothing else uses these.
 */
#ifndef BTF_INT_H
#define BTF_INT_H

#include <bpf/btf.h>
#include "tr_points.h"

/* Arguments the module reads at a hit (kmod/mt_kprobe.c: registers) */
#define KPROBE_ARGS 6
/* Parameters a tracepoint's handler gets (kmod/mt_tracepoint.h): those
 * in registers after the probe's data; past them, on the caller's stack,
 * only the tracepoint's whole count, up to TRACEPOINT_ARGS */
#define TRACEPOINT_ARGS_IN_REGS 5
#define TRACEPOINT_ARGS 12

struct tr_kfunc {
	const struct btf *btf;
	__u32 proto;                    /* its FUNC_PROTO, 0: not in BTF */
	const char *name, *module;
	bool ret, kprobe;
	bool tracepoint;                /* kernel.trace: proto's first parameter is data */
	__u32 names;                    /* a tracepoint's: the FUNC_PROTO naming proto's
					   parameters (0: none found, "argN") */
};

/* btf.c: the BTF of vmlinux and of modules, loaded once each (NULL, and
 * why in tr_btf_load_error or *why) */
extern char *tr_btf_load_error;
bool tr_btf_running_kernel(struct tr_session *s);
struct btf *tr_btf_vmlinux(struct tr_session *s);
struct btf *tr_btf_module(struct tr_session *s, const char *module, const char **why);
struct btf *tr_btf_header(const char *module, const char **why);   /* "<stdio.h>": cc -gbtf's */
const char *tr_btf_module_dirs(struct tr_session *s);    /* ":"-separated, for nftw */
char *tr_btf_module_name_of(const char *file, size_t len);   /* "x.ko": "x", or NULL */
__u32 tr_btf_proto_of(const struct btf *b, const char *name);   /* a function's FUNC_PROTO, or 0 */
/* the type behind typedefs and qualifiers (its id in *out) */
const struct btf_type *tr_btf_skip_mods(const struct btf *b, __u32 id, __u32 *out);
void tr_btf_type_name(const struct btf *b, __u32 id, struct tr_buf *out);   /* as stap writes it */

/* btf_var.c: a tracepoint's binding and fields for its first n
 * parameters; the parameters the module may pass (registers...) */
void tr_btf_tracepoint_fields(struct tr_resolved *r, unsigned n);
unsigned tr_btf_in_registers(const struct tr_kfunc *kf);

#endif
