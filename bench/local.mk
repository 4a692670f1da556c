# Benchmarks (bench/README.md).  Their programs build with `make check`.
EXTRA_DIST += bench/README.md bench/script/run.sh bench/trace/run.sh bench/script/ufunc.sh bench/script/ufunc-target.c bench/script/plt.sh bench/examples.sh \
	bench/tapset-coverage.sh bench/examples-lib.sh bench/examples-run.sh \
	bench/p2-vs-stap.sh

# bench/ust: marktap vs LTTng-UST, same payload (bench/ust/run.sh); emit-mt is
# also the marker of bench/script/run.sh
check_PROGRAMS += bench/ust/emit-mt
bench_ust_emit_mt_SOURCES = bench/ust/emit.c
bench_ust_emit_mt_LDADD = runtime/libmarktap.la -lpthread
bench_ust_emit_mt_LDFLAGS = -no-install
# the same with patched sites (MARKTAP_PATCHED_SITES): b.'s other row
check_PROGRAMS += bench/ust/emit-mtp
bench_ust_emit_mtp_SOURCES = bench/ust/emit.c
bench_ust_emit_mtp_CPPFLAGS = $(AM_CPPFLAGS) -DMARKTAP_PATCHED_SITES
bench_ust_emit_mtp_LDADD = runtime/libmarktap.la -lpthread
bench_ust_emit_mtp_LDFLAGS = -no-install
if HAVE_LTTNG_UST
check_PROGRAMS += bench/ust/emit-ust
bench_ust_emit_ust_SOURCES = bench/ust/emit.c bench/ust/ust_tp.c bench/ust/ust_tp.h
bench_ust_emit_ust_CPPFLAGS = $(AM_CPPFLAGS) -DUSE_UST -I$(srcdir)/bench/ust
bench_ust_emit_ust_LDADD = $(LTTNG_UST_LIBS) -lpthread -ldl
endif
EXTRA_DIST += bench/ust/run.sh bench/ust/ust_tp.h bench/ust/ust_tp.c
check_PROGRAMS += bench/ust/ring-bench
bench_ust_ring_bench_SOURCES = bench/ust/ring-bench.c
bench_ust_ring_bench_LDADD = runtime/libmarktap-core.la -lpthread

# `make bench-ust`: build what bench/ust/run.sh runs, run it (root, for
# lttng-sessiond), table in bench/ust/results.txt of the build tree.
BENCH_UST_PROGS = bench/ust/emit-mt$(EXEEXT) bench/ust/emit-mtp$(EXEEXT) bench/ust/ring-bench$(EXEEXT) \
	runtime/marktrace/marktrace$(EXEEXT)
if HAVE_LTTNG_UST
BENCH_UST_PROGS += bench/ust/emit-ust$(EXEEXT)
endif
bench-ust: $(BENCH_UST_PROGS)
	$(SHELL) $(srcdir)/bench/ust/run.sh $(abs_top_builddir)
.PHONY: bench-ust
CLEANFILES += bench/ust/results.txt

# `make bench-relay`: events/s through lttng-relayd on loopback vs local disk
# (bench/relay/run.sh; table in bench/relay/results.txt of the build tree).
EXTRA_DIST += bench/relay/run.sh
bench-relay: bench/ust/emit-mt$(EXEEXT) runtime/marktrace/marktrace$(EXEEXT)
	$(SHELL) $(srcdir)/bench/relay/run.sh $(abs_top_builddir)
.PHONY: bench-relay
CLEANFILES += bench/relay/results.txt

# `make bench-tracepoint`: the cost of a kernel tracepoint event recorded
# by marktrace record --kernel -e SUBSYS:NAME (perf), vs perf record
check_PROGRAMS += bench/tracepoint/getppid-loop
bench_tracepoint_getppid_loop_SOURCES = bench/tracepoint/getppid-loop.c
EXTRA_DIST += bench/tracepoint/run.sh
bench-tracepoint: bench/tracepoint/getppid-loop$(EXEEXT) runtime/marktrace/marktrace$(EXEEXT)
	$(SHELL) $(srcdir)/bench/tracepoint/run.sh $(abs_top_builddir)
.PHONY: bench-tracepoint
