# marktap, the SystemTap-compatible translator, and its tapsets.
bin_PROGRAMS += translator/marktap
translator_marktap_SOURCES = \
	translator/tr.h translator/tr_base.h translator/tr_ast.h translator/tr_points.h \
	translator/tr_elab.h translator/tr_gen.h translator/tr_run.h \
	translator/util.c translator/lex.c translator/pp.c \
	translator/parse.c translator/print.c \
	translator/elab_int.h translator/elab.c translator/elab_tapset.c translator/elab_probe.c \
	translator/elab_point.c translator/elab_bind.c translator/elab_type.c translator/elab_prune.c \
	translator/markers.c translator/libpath.c translator/list.c \
	translator/gen_int.h translator/gen.c translator/gen_stmt.c translator/gen_expr.c translator/gen_emit.c \
	translator/lua_text.c translator/stats.c translator/native.c translator/regex.c \
	translator/define.c translator/module.c translator/run_probes.c translator/run.c translator/kread.c translator/procs.c \
	translator/main.c translator/dump.c translator/embed.c translator/kmark.c \
	translator/dwarf_int.h translator/dwarf_plt.c translator/dwarf_var.c \
	translator/dwarf.c translator/btf_int.h translator/btf.c translator/btf_var.c translator/btf_tp.c translator/ksrc.c translator/kdata.c translator/trace.c translator/ktrace.c translator/procev.c translator/perfev.c \
	translator/procfs.c translator/flight.c translator/scripts.c translator/trace_window.c \
	translator/analysis_opts.h translator/analysis_opts.c
translator_marktap_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/runtime/lua -I$(top_srcdir)/runtime/tools \
	-DMT_PKGDATADIR='"$(pkgdatadir)"' -DMT_SRCDIR='"$(abs_top_srcdir)"' \
	-DMT_PKGLIBDIR='"$(pkglibdir)"' -DMT_BUILDDIR='"$(abs_top_builddir)"' \
	-DMT_LIBDIR='"$(libdir)"' -DMT_CACHEDIR='"$(localstatedir)/cache/marktap"'
translator_marktap_CFLAGS = $(AM_CFLAGS) $(ELF_CFLAGS) $(DW_CFLAGS) $(BPF_CFLAGS) $(LUA_CFLAGS)
translator_marktap_LDADD = runtime/lua/libmtlua.la runtime/libmarktap-tools.la \
	$(BPF_LIBS) $(DW_LIBS) $(ELF_LIBS) $(LUA_LIBS)

tapsetdir = $(pkgdatadir)/tapset
dist_tapset_DATA = \
	tapsets/context.stp tapsets/string.stp tapsets/time.stp \
	tapsets/conversions.stp tapsets/logging.stp tapsets/macros.stpm \
	tapsets/task.stp tapsets/scheduler.stp tapsets/kprocess.stp tapsets/signal.stp \
	tapsets/irq.stp tapsets/timer.stp tapsets/kmodule.stp tapsets/printk.stp \
	tapsets/memory.stp tapsets/networking.stp tapsets/socket.stp tapsets/ipc.stp \
	tapsets/semaphore.stp tapsets/locking.stp tapsets/fs.stp tapsets/x86_64.stp tapsets/ucontext.stp \
	tapsets/input.stp tapsets/prometheus.stp tapsets/errno.stp tapsets/stopwatch.stp tapsets/indent.stp tapsets/perf.stp \
	tapsets/init.stp tapsets/argv.stp tapsets/netfilter.stp tapsets/registers.stp \
	tapsets/json.stp tapsets/json.stpm tapsets/switchfile.stp \
	tapsets/uconversions.stp tapsets/dev.stp tapsets/endian.stp tapsets/random.stp tapsets/speculative.stp \
	tapsets/vfs.stp tapsets/dentry.stp tapsets/ioblock.stp tapsets/inet.stp tapsets/tcp.stp tapsets/udp.stp \
	tapsets/floatingpoint.stp tapsets/queue_stats.stp tapsets/lttng.stp \
	tapsets/stap_markers.stp tapsets/mib.stp tapsets/nfsd.stp
# The x86_64 system call table, from the kernel headers at build time
# (SYSCALL_HEADER=path/asm/unistd_64.h to choose one).
nodist_tapset_DATA = tapsets/syscalls.stp
tapsets/syscalls.stp: $(srcdir)/tapsets/gen-syscalls.sh $(srcdir)/tapsets/syscall-names.tsv
	$(AM_V_GEN)$(MKDIR_P) tapsets && \
	$(SHELL) $(srcdir)/tapsets/gen-syscalls.sh $(SYSCALL_HEADER) > $@.tmp && mv $@.tmp $@
CLEANFILES += tapsets/syscalls.stp
EXTRA_DIST += tapsets/gen-syscalls.sh tapsets/syscall-names.tsv
dist_pkgdata_DATA = tapsets/markers.tsv
dist_man_MANS += doc/marktap.1 doc/marktap-tapsets.7 doc/marktap-ksrc.1

EXTRA_DIST += tests/translator/lib.sh tests/translator/stap-norm.pl tests/translator/corpus tests/translator/bad \
	tests/translator/fidelity tests/translator/stap-agree.sh \
	tests/translator/run tests/translator/lttng-kernel.py

TESTS += \
	tests/translator/p1-roundtrip.t \
	tests/translator/p1-stap.t \
	tests/translator/parse-errors.t \
	tests/translator/preprocessor.t \
	tests/translator/elaborate.t \
	tests/translator/run.t \
	tests/translator/markers.t \
	tests/translator/cmdline.t tests/translator/flight.t \
	tests/translator/scripts.t \
	tests/translator/tapsets.t \
	tests/translator/fuzz.t \
	tests/translator/nesting.t \
	tests/translator/foreach.t \
	tests/translator/language.t \
	tests/translator/regex.t \
	tests/translator/points.t \
	tests/translator/ksym.t \
	tests/translator/task.t \
	tests/translator/ksocket.t \
	tests/translator/system.t \
	tests/translator/examples.t \
	tests/translator/btf.t \
	tests/translator/ksrc.t \
	tests/translator/kdata.t \
	tests/translator/kconversions.t \
	tests/translator/process.t \
	tests/translator/lttng-analyses.t
EXTRA_DIST += $(filter tests/translator/%.t,$(TESTS))

# libFuzzer target (clang only): built by tests/translator/fuzz.t itself.
EXTRA_DIST += tests/fuzz/translator_fuzz.c

# marktap-ksrc: the map of a kernel's sources (translator/ksrc.c reads it)
bin_SCRIPTS += translator/marktap-ksrc
translator/marktap-ksrc: $(srcdir)/translator/marktap-ksrc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) translator && \
	sed -e 's|@MT_CACHEDIR@|$(localstatedir)/cache/marktap|g' $(srcdir)/translator/marktap-ksrc.in > $@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += translator/marktap-ksrc
EXTRA_DIST += translator/marktap-ksrc.in
