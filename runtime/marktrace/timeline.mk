# marktrace timeline and export: pictures and Chrome trace-event JSON of a
# trace, over the thread/CPU state module (see runtime/local.mk)
runtime_marktrace_SOURCES += \
	runtime/marktrace/cmd_timeline.c runtime/marktrace/cmd_export.c \
	runtime/marktrace/tlane.c runtime/marktrace/tlane.h \
	runtime/marktrace/tout.c runtime/marktrace/tout.h
# the HTML viewer's script, built in as a C string
nodist_runtime_marktrace_marktrace_SOURCES = runtime/marktrace/timeline_js.h
# (a dependency of its one user rather than BUILT_SOURCES: `make` of any
# other target need not build it)
runtime/marktrace/marktrace-cmd_timeline.$(OBJEXT): runtime/marktrace/timeline_js.h
CLEANFILES += runtime/marktrace/timeline_js.h
EXTRA_DIST += runtime/marktrace/timeline.js
runtime_marktrace_CFLAGS += -I$(top_builddir)/runtime/marktrace
runtime/marktrace/timeline_js.h: $(srcdir)/runtime/marktrace/timeline.js
	$(AM_V_GEN)$(MKDIR_P) runtime/marktrace && \
	$(AWK) 'BEGIN { print "/* generated from timeline.js: do not edit */"; print "static const char timeline_js[] =" } \
		/[\\]/ { print "timeline.js:" NR ": no backslashes (C string)" > "/dev/stderr"; exit 1 } \
		{ gsub(/"/, "\\\""); print "\t\"" $$0 "\\n\"" } END { print ";" }' \
		$(srcdir)/runtime/marktrace/timeline.js > $@.tmp && mv $@.tmp $@
