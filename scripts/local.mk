# The analyses and examples, installed for marktap --script NAME (and
# marktap --list-scripts): $(pkgdatadir)/scripts.
scriptsdir = $(pkgdatadir)/scripts
dist_scripts_DATA = \
	scripts/countdown.stp scripts/cputop.stp scripts/ctxswitch.stp \
	scripts/fsopen-top.stp scripts/hello.stp scripts/iolatencytop.stp \
	scripts/irqstats.stp scripts/latency-hist.stp scripts/memtop.stp \
	scripts/nettop.stp scripts/pagefaults.stp scripts/schedlog.stp \
	scripts/schedtop.stp scripts/sigmon.stp scripts/syscalls-top.stp \
	scripts/syscallstats.stp \
	scripts/irqfreq.stp scripts/schedfreq.stp scripts/syscallfreq.stp \
	scripts/iolatencyfreq.stp scripts/periodstats.stp scripts/periodtop.stp \
	scripts/periodlog.stp scripts/periodfreq.stp

# What the analyses share (tapsets/analysis.stp; the lttng-analyses
# options marktap takes for them are translator/analysis_opts.c's).
dist_tapset_DATA += tapsets/analysis.stp

# The analyses' tests: frequencies and filters over a trace of chosen
# durations (tests/translator/lttng-kernel.py DIR freq), periods over a
# program of known sleeps recorded by marktrace record.
check_PROGRAMS += tests/translator/periods
tests_translator_periods_SOURCES = tests/translator/periods.c
tests_translator_periods_LDADD = runtime/libmarktap.la
# (the program itself, not libtool's wrapper: marktap -c reads its markers)
tests_translator_periods_LDFLAGS = -no-install
# (translator/local.mk puts every tests/translator/*.t of TESTS in the dist)
TESTS += tests/translator/analyses-freq.t tests/translator/analyses-period.t
