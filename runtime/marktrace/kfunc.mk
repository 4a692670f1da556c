# record --kernel --function and list --kernel --function: kernel
# functions from the kernel's BTF (libbpf), recorded through perf's
# kprobe PMU by record_tp.c
runtime_marktrace_SOURCES += runtime/marktrace/kfunc.c
runtime_marktrace_LDADD += $(BPF_LIBS)
runtime_marktrace_CFLAGS += $(BPF_CFLAGS)
