# The analyses and examples, installed for marktap --script NAME (and
# marktap --list-scripts): $(pkgdatadir)/scripts.
scriptsdir = $(pkgdatadir)/scripts
dist_scripts_DATA = \
	scripts/countdown.stp scripts/cputop.stp scripts/ctxswitch.stp \
	scripts/fsopen-top.stp scripts/hello.stp scripts/iolatencytop.stp \
	scripts/irqstats.stp scripts/latency-hist.stp scripts/memtop.stp \
	scripts/nettop.stp scripts/pagefaults.stp scripts/schedlog.stp \
	scripts/schedtop.stp scripts/sigmon.stp scripts/syscalls-top.stp \
	scripts/syscallstats.stp
