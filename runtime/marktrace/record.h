/*
 * record.h - pieces of marktrace record shared by its user and kernel paths.
 */
#ifndef MT_RECORD_H
#define MT_RECORD_H

#include <sys/types.h>
#include "mt_ctf.h"

struct mt_record_opts {
	const char *output;
	char patterns[MT_PATTERNS_MAX];
	pid_t pid;
	int kernel, overwrite, quiet;
	u32 subbuf_size, num_subbuf;
	u32 switch_ms;          /* close open sub-buffers this often (0: never) */
	char **command;
};

/* cmd_record.c: the consumer loop's steps, for any session mapping. */
int mt_record_consume(struct mt_session *s, struct mt_ctf_trace *t, int *error);
void mt_record_finish(struct mt_session *s, struct mt_ctf_trace *t, int quiet, int *error);

/* Create a user session memfd (its descriptor, or -1), start a command. */
int mt_record_create_session(const struct mt_record_opts *o, struct mt_session **sp, size_t *lenp);
pid_t mt_record_spawn(char **command, int session_fd);
int mt_record_stopped(void);   /* SIGINT, SIGTERM or SIGHUP seen */

/* agent_client.c: hand a session to a running process's agent. */
int mt_agent_attach(pid_t pid, int session_fd, char *err, size_t errlen);
int mt_agent_gone(pid_t pid);
void mt_agent_detach(pid_t pid);

/* record_kernel.c: marktrace record --kernel. */
int mt_record_kernel(struct mt_record_opts *o, const char *dir);

#endif
