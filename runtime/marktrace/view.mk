# marktrace view, stats, CTF reader, filter (see runtime/local.mk)
runtime_marktrace_SOURCES += runtime/marktrace/cmd_view.c runtime/marktrace/cmd_stats.c
