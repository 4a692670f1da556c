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

/* Print "marktrace: <message>" on stderr. */
void mt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
