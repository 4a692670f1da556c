# Benchmarks (bench/README.md).  Their programs build with `make check`.
check_PROGRAMS += bench/script/hits
bench_script_hits_SOURCES = bench/script/hits.c
bench_script_hits_LDADD = runtime/libmarktap.la -lpthread
bench_script_hits_LDFLAGS = -no-install
EXTRA_DIST += bench/README.md bench/script/run.sh
