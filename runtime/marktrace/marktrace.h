/*
 * marktrace.h - the marktrace command: one file per subcommand.
 */
#ifndef MARKTRACE_H
#define MARKTRACE_H

int mt_cmd_record(int argc, char **argv);  /* cmd_record.c */
int mt_cmd_list(int argc, char **argv);    /* cmd_list.c   */
int mt_cmd_view(int argc, char **argv);    /* cmd_view.c   */
int mt_cmd_stats(int argc, char **argv);   /* cmd_stats.c  */
int mt_cmd_timeline(int argc, char **argv); /* cmd_timeline.c */
int mt_cmd_export(int argc, char **argv);  /* cmd_export.c */
int mt_list_kernel(void);                   /* record_kernel.c */
int mt_list_tracepoints(char **globs, int n); /* record_tp.c */
int mt_list_functions(char **globs, int n);   /* kfunc.c */

/* Open the trace DIR for a reading command (cmd_view.c): one recording
 * (ctf_open_recording), or with recursive every trace under it.  0, or -1
 * said, naming cmd ("view", "stats"...). */
struct ctf_set;
int mt_open_traces(struct ctf_set *set, const char *dir, int recursive, const char *cmd);
/* A name of libmarktap's state dump events (marktap_statedump:...),
 * hidden by view and stats unless --statedump. */
int mt_is_statedump(const char *name);

/* Print "marktrace: <message>" on stderr. */
void mt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
